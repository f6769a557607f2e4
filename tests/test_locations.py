"""Where files go: the default results folder lies outside the package, and the book runner is found only
in a source checkout."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from hpstrat_lite.cli import book_runner, main
from hpstrat_lite.rows import RESULTS_DIR, checkpoint_dir, default_results_dir


def test_results_folder_is_the_variable_else_the_checkout_else_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HPSTRAT_RESULTS", str(tmp_path / "mine"))
    assert default_results_dir() == tmp_path / "mine"
    monkeypatch.delenv("HPSTRAT_RESULTS")
    checkout = tmp_path / "checkout"
    (checkout / "hpstrat_lite").mkdir(parents=True)
    (checkout / "results").mkdir()
    (checkout / "pyproject.toml").write_text("")
    assert default_results_dir(checkout / "hpstrat_lite") == checkout / "results"
    site = tmp_path / "site-packages"
    (site / "hpstrat_lite").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert default_results_dir(site / "hpstrat_lite") == tmp_path / "results"
    (checkout / "results").rmdir()  # a checkout without results/ is not where results go
    assert default_results_dir(checkout / "hpstrat_lite") == tmp_path / "results"


def test_this_checkout_writes_into_its_results_folder():
    if os.environ.get("HPSTRAT_RESULTS"):
        assert RESULTS_DIR == Path(os.environ["HPSTRAT_RESULTS"]).expanduser().resolve()
    else:
        assert RESULTS_DIR == REPO / "results"


def test_an_installed_package_writes_to_the_working_directory_and_has_no_book_runner(tmp_path):
    """A copy of the package outside a checkout (as a wheel installs it): results go to ./results of the
    working directory, and ``hpstrat book`` says in one line that it needs a source checkout."""
    site, work = tmp_path / "site", tmp_path / "work"
    shutil.copytree(REPO / "hpstrat_lite", site / "hpstrat_lite", ignore=shutil.ignore_patterns("__pycache__"))
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("HPSTRAT_RESULTS", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    probe = "from hpstrat_lite.rows import RESULTS_DIR; print(RESULTS_DIR)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=work, env=env, capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()) == work / "results"
    done = subprocess.run([sys.executable, "-m", "hpstrat_lite.cli", "book"], cwd=work, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "needs a source checkout" in done.stderr
    assert not (site / "hpstrat_lite" / "book.py").exists() and not (work / "results").exists()


def test_the_book_runner_of_a_checkout_is_found_and_runs_as_a_script(tmp_path, capsys, monkeypatch):
    runner = book_runner()
    assert Path(runner.__file__) == REPO / "tools" / "book.py" and runner.REPO == REPO
    assert book_runner() is runner and callable(runner.build_book)
    assert book_runner(tmp_path / "hpstrat_lite") is None
    monkeypatch.setattr("hpstrat_lite.cli.book_runner", lambda: None)
    assert main(["book", "--no-build"]) == 2
    assert "needs a source checkout" in capsys.readouterr().err
    done = subprocess.run([sys.executable, str(REPO / "tools" / "book.py"), "--help"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0 and "--profile" in done.stdout


def test_a_results_file_keeps_its_checkpoints_in_a_hidden_folder_beside_it(tmp_path):
    assert checkpoint_dir(tmp_path / "controls_k4.csv") == tmp_path / ".controls_k4.checkpoints"
    assert checkpoint_dir("results/rows.csv") == Path("results/.rows.checkpoints")
    assert checkpoint_dir(None) is None
