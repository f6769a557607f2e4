"""Kernels forked from a server that has imported the third-party libraries: each page still gets a fresh process
in its own directory and environment, with torch loaded and the book's own packages not, and figures inline."""
import os
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from hpstrat_book.warm_kernels import NAME, kernel_server

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kernels are forked on Linux only")

PROBE = ("import os, sys\n"
         "print('|'.join([os.getcwd(), os.environ.get('WARM_PROBE', ''), str('torch' in sys.modules),\n"
         "                str('hpstrat_lite' in sys.modules), str(os.getpid())]))")


def test_preloaded_kernels_are_fresh_processes_in_the_callers_directory_and_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("WARM_PROBE", "set by the caller")
    monkeypatch.delenv("JUPYTER_PATH", raising=False)
    cells = [PROBE, "x = 1\nx += 1\nx", "import matplotlib.pyplot as plt\n_ = plt.plot([0, 1])"]
    notebooks = [nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]) for _ in range(2)]
    with kernel_server(log=pytest.fail) as name:
        assert name == NAME and os.environ["JUPYTER_PATH"]
        for nb in notebooks:
            NotebookClient(nb, kernel_name=name, resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert "JUPYTER_PATH" not in os.environ  # the kernel spec is gone with the server
    probes = [nb.cells[0].outputs[0]["text"].strip().split("|") for nb in notebooks]
    for cwd, probe, torch_loaded, library_loaded, _ in probes:
        assert (cwd, probe, torch_loaded, library_loaded) == (str(tmp_path), "set by the caller", "True", "False")
    assert probes[0][4] != probes[1][4]  # one process per notebook
    assert [nb.cells[1].outputs[0]["data"]["text/plain"] for nb in notebooks] == ["2", "2"]
    for nb in notebooks:  # the inline backend shows a figure at the end of its cell, as in a plain kernel
        assert [o["output_type"] for o in nb.cells[2].outputs] == ["display_data"]
        assert "image/png" in nb.cells[2].outputs[0]["data"]


def test_elsewhere_the_plain_kernel_runs_the_pages(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")  # forking a process with system frameworks loaded is unsafe there
    with kernel_server(log=pytest.fail) as name:
        assert name == "python3"
