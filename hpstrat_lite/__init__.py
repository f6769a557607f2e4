"""hpstrat_lite: homophily-aware stratified k-fold evaluation of graph neural networks.

Data flow (one module per stage): ``datasets`` (raw files -> undirected simple graph) -> ``homophily``
(node homophily, bins) -> ``folds`` (fold ids, rounds) / ``quality`` (SDD, CDD, CHD, W1) -> ``train``
(batched GNN training) -> ``experiment`` (result rows) -> ``ranking`` / ``analysis`` (tables, tests).
"""
__version__ = "0.1.0"  # first: hpstrat_lite.results reads it when imported

from .folds import (SPLIT_METHODS, fold_masks, fold_rounds, hpstrat_folds, make_folds, random_folds,
                    stratified_folds)
from .homophily import homophily_bins, mean_homophily, node_homophily
from .quality import fold_quality, quality_table
from .ranking import friedman_test, rank_methods, rank_tables
from .splitters import HomophilyStratifiedKFold, HpStratSplit

_LAZY = {"load_dataset": "datasets", "dataset_summary": "datasets", "available_datasets": "datasets",
         "load_graph": "graphs", "as_graph": "graphs"}


def __getattr__(name):  # torch_geometric is imported only when a dataset is asked for
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'hpstrat_lite' has no attribute {name!r}")


__all__ = ["SPLIT_METHODS", "fold_masks", "fold_rounds", "hpstrat_folds", "make_folds", "random_folds",
           "stratified_folds", "homophily_bins", "mean_homophily", "node_homophily", "fold_quality",
           "quality_table", "friedman_test", "rank_methods", "rank_tables", "HomophilyStratifiedKFold",
           "HpStratSplit", *_LAZY]
