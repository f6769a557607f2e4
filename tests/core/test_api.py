"""The public API: data arguments by position, options by keyword only."""
import inspect

import numpy as np
import pytest

import hpstrat_lite
from hpstrat_lite import fold_quality, fold_rounds, hpstrat_folds, make_folds, node_homophily

#: Positional parameters each public callable takes: its data (arrays, tables, a graph, a name) and
#: nothing else. Every other parameter must be keyword-only.
DATA_ARGUMENTS = {
    "fold_masks": ["folds"], "fold_rounds": ["folds"], "hpstrat_folds": ["homophily", "y"],
    "make_folds": ["method", "homophily", "y"], "random_folds": ["y"], "stratified_folds": ["y"],
    "covariate_folds": ["covariate", "y"], "degree_folds": ["degree", "y"], "placebo_folds": ["y"],
    "homophily_bins": ["homophily"], "mean_homophily": ["homophily"],
    "node_homophily": ["edge_index", "y", "num_nodes"], "homophily": ["edge_index", "y", "num_nodes"],
    "fold_quality": ["folds", "y", "homophily"],
    "quality_table": ["datasets"], "friedman_test": ["df", "value"], "rank_methods": ["df", "value"],
    "rank_tables": ["ranked"], "HomophilyStratifiedKFold": ["n_splits"],
    "CovariateStratifiedKFold": ["n_splits"], "load_dataset": ["name", "root"],
    "dataset_summary": ["names", "root"], "available_datasets": ["root"], "load_graph": ["path"],
    "as_graph": ["dataset", "root"], "HpStratSplit": [], "audit": ["data", "models"], "necessity": ["data"],
    "load_audit": ["out"], "format_audit": ["result"],
    "Protocol": [], "Execution": [],
}


def _positional(obj):
    sig = inspect.signature(obj)
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def test_every_public_callable_takes_its_options_by_keyword():
    names = set(hpstrat_lite.__all__) | set(hpstrat_lite._LAZY)
    public = {name: getattr(hpstrat_lite, name) for name in names}
    callables = {name: obj for name, obj in public.items() if callable(obj)}
    assert set(callables) == set(DATA_ARGUMENTS), "a new public callable: say which of its arguments are data"
    wrong = {name: _positional(obj) for name, obj in callables.items() if _positional(obj) != DATA_ARGUMENTS[name]}
    assert wrong == {}


def test_options_passed_by_position_raise_type_error():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 60)
    h = rng.random(60)
    from hpstrat_lite import CovariateStratifiedKFold, HomophilyStratifiedKFold, HpStratSplit

    for call in (lambda: hpstrat_folds(h, y, 4, 5, 3), lambda: fold_quality(y, y, h, 4),
                 lambda: fold_rounds(y, 4), lambda: make_folds("stratified", h, y, 4, 1),
                 lambda: node_homophily([[0, 1], [1, 0]], [0, 0, 1], 3, False),
                 lambda: HomophilyStratifiedKFold(3, 5), lambda: CovariateStratifiedKFold(3, 5),
                 lambda: HpStratSplit(4)):
        with pytest.raises(TypeError, match="positional argument"):
            call()
    assert np.array_equal(hpstrat_folds(h, y, k=4, n_bins=5, seed=3), hpstrat_folds(h, y, k=4, n_bins=5, seed=3))


def test_defaults_agree_between_function_splitter_and_transform():
    from hpstrat_lite import CovariateStratifiedKFold, HomophilyStratifiedKFold, HpStratSplit

    k_function = inspect.signature(hpstrat_folds).parameters["k"].default
    assert k_function == HomophilyStratifiedKFold().n_splits == CovariateStratifiedKFold().n_splits \
        == HpStratSplit().k == 4
    assert inspect.signature(hpstrat_folds).parameters["n_bins"].default == HomophilyStratifiedKFold().n_bins \
        == CovariateStratifiedKFold().n_bins == HpStratSplit().n_bins == 10


#: Parameter names that are data (a table of rows, a path, a folder, a graph size) even where they have a
#: default (the rows default to the committed results file, the root to the data folder).
DATA_NAMES = {"rows", "link_rows", "baseline_rows", "node_rows", "feature_rows", "part1_rows", "protocol_rows",
              "hgcn_rows", "root", "names", "path", "repo", "argv", "html_dir", "out_dir", "config", "num_nodes",
              "n_splits", "node_results", "link_results", "feature_results",
              "b"}  # the second sample of a paired test (scipy.stats.wilcoxon(x, y=None))


def _library_functions():
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(hpstrat_lite.__path__, "hpstrat_lite."):
        if info.name.rsplit(".", 1)[-1].startswith("_") or info.name.endswith(".cli"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == module.__name__:
                yield f"{info.name}.{name}", obj


def test_every_library_function_takes_its_options_by_keyword():
    """Beyond ``__all__``: in every module, a parameter with a default is keyword-only unless it is the
    function's first (its subject: ``make_ws1000(gamma)``) or data (:data:`DATA_NAMES`)."""
    functions = dict(_library_functions())
    assert len(functions) > 150
    wrong = {}
    for name, fn in functions.items():
        params = list(inspect.signature(fn).parameters.values())
        bad = [p.name for i, p in enumerate(params) if i and p.kind is p.POSITIONAL_OR_KEYWORD
               and p.default is not p.empty and p.name not in DATA_NAMES]
        if bad:
            wrong[name] = bad
    assert wrong == {}


#: Most parameters a public function or method may take: more options than this travel in one value
#: (:class:`hpstrat_lite.protocol.Protocol`, :class:`hpstrat_lite.protocol.Execution`).
MAX_PARAMETERS = 10


def _library_callables():
    """Every public function of every module, and the public methods of its public classes (a dataclass's
    generated ``__init__`` is its list of fields, not a function of the library's)."""
    import dataclasses

    for name, fn in _library_functions():
        yield name, fn
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(hpstrat_lite.__path__, "hpstrat_lite."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        for cname, cls in vars(module).items():
            if cname.startswith("_") or not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            for mname, fn in vars(cls).items():
                if mname == "__init__" and dataclasses.is_dataclass(cls):
                    continue
                if inspect.isfunction(fn) and (mname == "__init__" or not mname.startswith("_")):
                    yield f"{info.name}.{cname}.{mname}", fn


def test_no_public_function_takes_more_than_ten_parameters():
    counts = {name: len([p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")
                         and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)])
              for name, fn in _library_callables()}
    assert counts["hpstrat_lite.experiments.sweep.run_experiment"] <= MAX_PARAMETERS
    assert {name: n for name, n in counts.items() if n > MAX_PARAMETERS} == {}


def test_one_name_per_model_across_both_parts(tmp_path):
    """Part I's spelling ("GCN") in rows and tables of both parts; "gcn" accepted as input, and rows written
    with it read back as "GCN"."""
    import pandas as pd

    from hpstrat_lite.engine.models import MODELS
    from hpstrat_book.part2.necessity import _check_models
    from hpstrat_lite.rows import model_name, read_rows

    assert [model_name(m.lower()) for m in MODELS] == list(MODELS)
    assert model_name("gcn-dot") == "GCN-dot" and model_name("random") == "random" and model_name("MyNet") == "MyNet"
    assert _check_models(["gcn", "MLP"], ("MLP", "GCN")) == ("GCN", "MLP")
    pd.DataFrame({"model": ["mlp", "gcn-fd", "random"], "test": [0.1, 0.2, 0.3]}).to_csv(tmp_path / "r.csv",
                                                                                       index=False)
    assert read_rows(tmp_path / "r.csv")["model"].tolist() == ["MLP", "GCN-fd", "random"]


def test_dir_lists_the_lazy_names():
    listed = dir(hpstrat_lite)
    assert {"audit", "necessity", "load_graph", "load_dataset", "HomophilyStratifiedKFold"} <= set(listed)
    assert set(hpstrat_lite.__all__) <= set(listed)


_NO_TORCH = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("torch", "torch_geometric"):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Block())
from hpstrat_lite import *
import hpstrat_lite
missing = [n for n in hpstrat_lite.__all__ if n not in globals()]
assert not missing, missing
assert "torch" not in sys.modules
"""


def test_star_import_works_without_torch():
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", _NO_TORCH], check=True)
