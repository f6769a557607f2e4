"""The package's entry points: the Part II alias, and every module importable first."""
import subprocess
import sys


def test_part2_runs_from_a_shell_with_a_one_line_error():
    """``python -m hpstrat_book.part2 tune ...`` refuses an unknown dataset in one line."""
    done = subprocess.run([sys.executable, "-m", "hpstrat_book.part2", "tune", "node", "--datasets", "Coraa"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("python -m hpstrat_book.part2 tune node: error: name='Coraa' is not a known dataset")


def test_every_module_imports_first():
    """A user may import any module first (``import hpstrat_book.baselines``): no import cycle
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
    assert int(out[0]) > 30 and [line for line in out[1:] if line] == []
