"""hpstrat_lite: homophily-aware stratified k-fold evaluation of graph neural networks.

The package follows the data flow, one sub-package per stage; imports run one way, from each layer to
the ones below it (import-linter holds the contract, ``[tool.importlinter]`` in pyproject.toml)::

    audit, cli    facades: one graph's audit (``from hpstrat_lite import audit``), the ``hpstrat`` command
      |
    stats         the evaluation statistics, each written once (cross-fold spread, Friedman, pairwise
      |           post-hoc tests, paired tests, Spearman, Holm), typed results; numpy / scipy only
    experiments/  runners that write result rows where they are told: the HpStrat sweep (sweep), the cheap
      |           graph-need estimates (probes: ``necessity()``) and their rows (graph_need), HpStrat's
      |           controls on synthetic graphs of set homophily and size (ladder)
    engine/       batched GNN training: sparse operators, per-run randomness, models, kernels, the training loop
    data/         raw dataset files -> undirected simple graph (PyG ``Data``, normalize); synthetic
      |           Watts-Strogatz graphs; fold quality on whole datasets (quality_table)
    core/         node homophily, covariate bins -> folds (random, stratified, HpStrat, controls) -> rounds;
      |           fold quality (SDD, CDD, CHD, W1); ranking.  numpy only.
    stats/        the evaluation statistics (Friedman, post-hoc, paired tests, Spearman, units).  scipy only.
    rows, helpers the row store (reading rows loads no torch), model names, files, optional extras

The book's side (its tables, claims, scorecard, plot style, the book runner, and Part II's reproduction
runners) is the ``hpstrat_book`` package in ``book/`` of the source checkout, not part of this package.
``cli`` is the ``hpstrat`` command. The paper's method (``core``) imports without torch; the names
below are its public API, with the training protocol (``Protocol``, its paper instance ``PAPER_PROTOCOL``) and
how a call runs (``Execution``) that :func:`audit` and the runners take. The evaluation statistics are
:mod:`hpstrat_lite.stats`. ``from hpstrat_lite import *`` needs no torch; the loaders and the PyG transform
(``load_dataset``, ``load_graph``, ``HpStratSplit``, ...) need the ``[pyg]`` extra and are imported by name.
"""
from ._version import __version__

from .core.covariates import covariate_folds, degree_folds, placebo_folds
from .core.folds import (SPLIT_METHODS, fold_masks, fold_rounds, hpstrat_folds, make_folds, random_folds,
                         stratified_folds)
from .core.graph_measures import homophily
from .core.homophily import homophily_bins, mean_homophily, node_homophily
from .core.quality import fold_quality
from .core.ranking import friedman_test, rank_methods, rank_tables
from .protocol import PAPER_PROTOCOL, Execution, Protocol

_LAZY = {"HomophilyStratifiedKFold": "core.splitters", "CovariateStratifiedKFold": "core.splitters",
         "load_dataset": "data.datasets", "dataset_summary": "data.graphs", "available_datasets": "data.datasets",
         "load_graph": "data.graphs", "as_graph": "data.graphs", "HpStratSplit": "data.transforms",
         "quality_table": "data.quality", "audit": "auditing", "load_audit": "auditing",
         "format_audit": "audit_report",
         "necessity": "experiments.probes"}
#: Lazy names whose modules import torch / torch_geometric (the ``[pyg]`` extra): importable by name, listed by
#: ``dir()``, but not in ``__all__``, so that ``from hpstrat_lite import *`` works on the base install.
_NEEDS_PYG = ("load_dataset", "dataset_summary", "available_datasets", "load_graph", "as_graph", "HpStratSplit",
              "quality_table")


def __getattr__(name):  # scikit-learn and torch_geometric load only when a splitter, a dataset, the transform or necessity is used
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'hpstrat_lite' has no attribute {name!r}")


def __dir__():
    """The module's attributes and the lazily loaded names (tab completion sees ``audit``, ``load_graph``, ...)."""
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["SPLIT_METHODS", "fold_masks", "fold_rounds", "hpstrat_folds", "make_folds", "random_folds",
           "stratified_folds", "covariate_folds", "degree_folds", "placebo_folds", "homophily_bins", "mean_homophily",
           "node_homophily", "homophily", "fold_quality",
           "friedman_test", "rank_methods", "rank_tables", "Protocol", "PAPER_PROTOCOL", "Execution",
           *(name for name in _LAZY if name not in _NEEDS_PYG)]
