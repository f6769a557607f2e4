"""Heavy parts are extras: the splitter and homophily path load no torch or ray, a missing extra is named in
one line, and pyproject.toml / constraints.txt / environment.yml / the Makefile agree."""
import json
import re
import subprocess
import sys
import tomllib

import pytest

from conftest import REPO

HEAVY = ("torch", "torch_geometric", "ray", "optuna", "matplotlib", "statsmodels")

CORE_PATH = """
import numpy as np
import hpstrat_lite
from hpstrat_lite import (CovariateStratifiedKFold, HomophilyStratifiedKFold, fold_quality, fold_rounds,
                          hpstrat_folds, make_folds, node_homophily)
rng = np.random.default_rng(0)
edges = rng.integers(0, 200, (2, 800))
y = rng.integers(0, 3, 200)
h = node_homophily(edges, y, 200)
folds = hpstrat_folds(h, y, k=4, seed=0)
assert make_folds("placebo", h, y, k=4, seed=0).shape == (200,)
assert set(fold_quality(folds, y, h, k=4)) >= {"sdd", "cdd", "chd"} and len(fold_rounds(folds, k=4)) == 4
X = np.zeros((200, 1))
assert len(list(HomophilyStratifiedKFold(shuffle=True, random_state=0).split(X, y, h))) == 4
assert len(list(CovariateStratifiedKFold(binning="quantile").split(X, y, np.bincount(edges[0], minlength=200)))) == 4
"""

BLOCK = """
import sys
BLOCKED = set(sys.argv[1].split(","))
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
"""


def _python(code, *args):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO)


def test_the_splitter_and_homophily_path_loads_neither_torch_nor_ray():
    done = _python("import sys\n" + CORE_PATH + f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_core_runs_without_any_extra_installed():
    done = _python(BLOCK + CORE_PATH + "print('ok')", ",".join(HEAVY))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


MISSING_EXTRA = """
import importlib, json
from hpstrat_lite import fold_masks
from hpstrat_lite.experiments.executors import ray_runtime
import pandas as pd
calls = {
    "load_dataset": lambda: importlib.import_module("hpstrat_lite").load_dataset,
    "HpStratSplit": lambda: importlib.import_module("hpstrat_lite").HpStratSplit,
    "engine": lambda: importlib.import_module("hpstrat_lite.engine.models"),
    "fold_masks": lambda: fold_masks([0, 1, 2], k=3),
    "ray": lambda: ray_runtime().__enter__(),
    "studies": lambda: importlib.import_module("hpstrat_lite.experiments.studies"),
    "regression": lambda: importlib.import_module("hpstrat_lite.reports.hpstrat").homophily_regression(
        pd.DataFrame({"test_homophily": [0.1, 0.5, 0.9], "test_acc": [0.2, 0.5, 0.8]})),
}
out = {}
for name, call in calls.items():
    try:
        call()
        out[name] = "no error"
    except ModuleNotFoundError as err:
        out[name] = str(err)
print(json.dumps(out))
"""


def test_a_missing_extra_is_named_in_one_line():
    done = _python(BLOCK + MISSING_EXTRA, ",".join(HEAVY))
    assert done.returncode == 0, done.stderr
    messages = json.loads(done.stdout)
    extras = {"load_dataset": "pyg", "HpStratSplit": "pyg", "engine": "pyg", "fold_masks": "pyg", "ray": "ray",
              "studies": "studies", "regression": "reports"}
    for name, extra in extras.items():
        assert f"[{extra}] extra (pip install 'hpstrat_lite[{extra}]')" in messages[name], (name, messages[name])
        assert "\n" not in messages[name]


def test_require_re_raises_what_an_optional_package_itself_lacks(tmp_path):
    from hpstrat_lite._extras import require

    (tmp_path / "broken_optional.py").write_text("import a_module_nobody_has\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ModuleNotFoundError, match="No module named 'a_module_nobody_has'"):
            require("broken_optional", extra="pyg")
    finally:
        sys.path.remove(str(tmp_path))
    assert require("numpy.linalg").__name__ == "numpy.linalg"


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _project():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_pip_install_without_extras_pulls_only_the_core():
    core = {_name(d) for d in _project()["dependencies"]}
    assert core == {"numpy", "scipy", "numba", "scikit-learn", "pandas", "tqdm", "filelock"}
    every = _project()["dependencies"] + sum(_project()["optional-dependencies"].values(), [])
    assert [d for d in every if "==" in d] == []  # pins live in constraints.txt


def test_constraints_environment_and_makefile_agree():
    import yaml

    pins = {_name(line): line.strip() for line in (REPO / "constraints.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")}
    assert pins["torch"] == "torch==2.13.0"  # the CPU wheel; an unpinned torch pulls a CUDA build
    assert re.search(r"^TORCH\s*:=\s*torch==2\.13\.0$", (REPO / "Makefile").read_text(), flags=re.M)
    project = _project()
    wanted = {_name(d): d for d in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(d): d for d in extra if _name(d) != "hpstrat-lite"}
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    listed = [d for d in next(d["pip"] for d in env["dependencies"] if isinstance(d, dict)) if not d.startswith("-e")]
    expected = {name: pins.get(name, spec).replace(" ", "") for name, spec in wanted.items()}
    assert {_name(d): d.replace(" ", "") for d in listed} == expected
