"""The package's entry points: the Part II alias, and every module importable first."""
import subprocess
import sys


def test_part2_alias_runs_hpstrat_tune():
    """``python -m hpstrat_lite.part2 ...`` is ``hpstrat tune ...``."""
    done = subprocess.run([sys.executable, "-m", "hpstrat_lite.part2", "node", "--datasets", "Coraa"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("hpstrat tune node: error: name='Coraa' is not a known dataset")


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
    assert int(out[0]) > 40 and [line for line in out[1:] if line] == []
