"""The package's layout: one sub-package per stage of the data flow, small modules, notebooks that only call."""
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hpstrat_lite"


def test_core_imports_without_torch():
    """The paper's method (core) and the top-level API import numpy/scipy/scikit-learn only."""
    probe = ("import sys, hpstrat_lite, hpstrat_lite.core.folds, hpstrat_lite.core.homophily, "
             "hpstrat_lite.core.quality, hpstrat_lite.core.ranking, hpstrat_lite.core.splitters; "
             "print(sorted(m for m in ('torch', 'torch_geometric', 'optuna') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_stages_are_subpackages():
    for stage in ("core", "data", "engine", "experiments", "reports"):
        assert (PACKAGE / stage / "__init__.py").is_file(), stage
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "_host.py", "_io.py", "cli.py", "part2.py"]


def test_no_module_over_800_lines():
    sizes = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > 800} == {}


@pytest.mark.parametrize("path", sorted((REPO / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_code_cells_are_at_most_30_lines(path):
    nb = nbformat.read(path, as_version=4)
    long = [(i, len(c.source.splitlines())) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and len(c.source.splitlines()) > 30]
    assert long == []


def test_part2_alias_runs_hpstrat_tune():
    """``python -m hpstrat_lite.part2 ...`` is ``hpstrat tune ...``."""
    done = subprocess.run([sys.executable, "-m", "hpstrat_lite.part2", "node", "--datasets", "Coraa"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("hpstrat tune node: error: name='Coraa' is not a known dataset")


def test_every_module_imports_first():
    """A user may import any module first (``import hpstrat_lite.reports.baselines``): no import cycle
    depends on which module was imported before."""
    code = ("import importlib, pkgutil, sys, hpstrat_lite\n"
            "names = [m.name for m in pkgutil.walk_packages(hpstrat_lite.__path__, 'hpstrat_lite.')]\n"
            "bad = []\n"
            "for name in names:\n"
            "    for loaded in [k for k in sys.modules if k.startswith('hpstrat_lite')]:\n"
            "        del sys.modules[loaded]\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except ImportError as e:\n"
            "        bad.append(f'{name}: {e}')\n"
            "print(len(names)); print('\\n'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert int(out[0]) > 40 and [line for line in out[1:] if line] == []
