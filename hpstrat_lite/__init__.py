"""hpstrat_lite: homophily-aware stratified k-fold evaluation of graph neural networks.

The package follows the data flow, one sub-package per stage::

    data/         raw dataset files -> undirected simple graph (PyG ``Data``); synthetic Watts-Strogatz graphs
      |
    core/         node homophily -> bins -> folds (random, stratified, HpStrat) -> rounds;
      |           fold quality (SDD, CDD, CHD, W1); ranking and the Friedman test.  numpy only.
    engine/       batched GNN training: sparse operators, per-run randomness, models, kernels,
      |           the training loop, link prediction
    experiments/  runners that write result rows under results/: the HpStrat sweep (sweep),
      |           Optuna tuning (tuning), Part II's studies (necessity), the cheap graph-need estimates
      |           (probes: ``necessity()``) and their rows (graph_need), the results store
    reports/      rows -> tables, tests, claims and figures: Part I (hpstrat), Part II (necessity, graph_need),
                  study progress, the reproduction scorecard, plots

``cli`` is the ``hpstrat`` command; the book runner (papermill + Jupyter Book) is ``tools/book.py`` of the
source checkout, not part of the package. The paper's method (``core``) imports without torch; the names
below are its public API.
"""
__version__ = "0.1.0"  # first: hpstrat_lite.experiments.results reads it when imported

from .core.folds import (SPLIT_METHODS, fold_masks, fold_rounds, hpstrat_folds, make_folds, random_folds,
                         stratified_folds)
from .core.homophily import homophily_bins, mean_homophily, node_homophily
from .core.quality import fold_quality, quality_table
from .core.ranking import friedman_test, rank_methods, rank_tables

_LAZY = {"HomophilyStratifiedKFold": "core.splitters", "CovariateStratifiedKFold": "core.splitters",
         "load_dataset": "data.datasets", "dataset_summary": "data.datasets", "available_datasets": "data.datasets",
         "load_graph": "data.graphs", "as_graph": "data.graphs", "HpStratSplit": "data.transforms",
         "necessity": "experiments.probes"}


def __getattr__(name):  # scikit-learn and torch_geometric load only when a splitter, a dataset, the transform or necessity is used
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'hpstrat_lite' has no attribute {name!r}")


__all__ = ["SPLIT_METHODS", "fold_masks", "fold_rounds", "hpstrat_folds", "make_folds", "random_folds",
           "stratified_folds", "homophily_bins", "mean_homophily", "node_homophily", "fold_quality",
           "quality_table", "friedman_test", "rank_methods", "rank_tables",
           *_LAZY]
