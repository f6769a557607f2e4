"""Where files go: runners write where they are told, else into results/ of the working directory; the book's
runner and paths live on the book's side, outside the library's package."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from hpstrat_lite.rows import checkpoint_dir, results_dir


def test_results_folder_is_the_argument_else_the_working_directory_at_the_call(tmp_path, monkeypatch):
    assert results_dir(tmp_path / "mine") == tmp_path / "mine"
    monkeypatch.chdir(tmp_path)
    assert results_dir() == tmp_path / "results"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert results_dir() == tmp_path / "elsewhere" / "results"  # taken at the call, not at import


def test_an_installed_package_writes_to_the_working_directory_and_carries_no_book(tmp_path):
    """A copy of the package outside a checkout (as a wheel installs it): results go to ./results of the
    working directory, ``hpstrat book`` is not a command of the library, and the package has no book modules."""
    site, work = tmp_path / "site", tmp_path / "work"
    shutil.copytree(REPO / "hpstrat_lite", site / "hpstrat_lite", ignore=shutil.ignore_patterns("__pycache__"))
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("HPSTRAT_RESULTS", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    probe = "from hpstrat_lite.rows import results_dir; print(results_dir())"
    out = subprocess.run([sys.executable, "-c", probe], cwd=work, env=env, capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()) == work / "results"
    done = subprocess.run([sys.executable, "-m", "hpstrat_lite.cli", "book"], cwd=work, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "invalid choice: 'book'" in done.stderr
    assert not (site / "hpstrat_lite" / "reports").exists() and not (work / "results").exists()


def test_the_book_runner_lives_in_the_book_package_and_runs_as_a_module(tmp_path):
    import hpstrat_book.build as runner
    assert Path(runner.__file__) == REPO / "book" / "hpstrat_book" / "build.py" and runner.REPO == REPO
    done = subprocess.run([sys.executable, "-m", "hpstrat_book.build", "--help"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0 and "--profile" in done.stdout


def test_a_results_file_keeps_its_checkpoints_in_a_hidden_folder_beside_it(tmp_path):
    assert checkpoint_dir(tmp_path / "controls_k4.csv") == tmp_path / ".controls_k4.checkpoints"
    assert checkpoint_dir("results/rows.csv") == Path("results/.rows.checkpoints")
    assert checkpoint_dir(None) is None
