"""Fold quality of the split methods on whole datasets (HpStrat Table 2 / Appendix D): loads each graph, splits it
with every method and seed, and measures the folds with :func:`hpstrat_lite.core.quality.fold_quality`'s metrics."""
from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..core._validate import check_choice, check_k, check_n_bins, check_seeds
from ..core.covariates import node_degree
from ..core.folds import ALL_METHODS, SPLIT_METHODS, folds_of_method, warn_if_all_isolated
from ..core.homophily import node_homophily
from ..core.quality import quality_of_folds
from .graphs import as_graph, is_single_graph


def quality_table(datasets, *, k: int = 4, seeds=range(10), n_bins: int = 10, methods=None, root=None,
                  progress: bool = False):
    """Fold quality of every split method on every dataset and seed (HpStrat Table 2 / Appendix D input).

    ``methods``: any of :data:`hpstrat_lite.core.folds.ALL_METHODS` (default the paper's three).

    Returns a long ``pandas.DataFrame`` with one row per (dataset, method, seed): ``sdd``, ``cdd``, ``chd``,
    ``w1`` plus ``k``, ``n_bins``. ``datasets`` (or one of them) are names for :func:`load_dataset`,
    paths of graph files or ``Data`` objects: a user's graph is made undirected and simple first
    (:func:`hpstrat_lite.data.graphs.as_graph`) and named by its ``name``.
    """
    methods = SPLIT_METHODS if methods is None else tuple(check_choice(m, "methods", ALL_METHODS) for m in methods)
    k = check_k(k, None)
    n_bins = check_n_bins(n_bins)
    seeds = check_seeds(seeds)
    rows = []
    datasets = [datasets] if is_single_graph(datasets) else list(datasets)
    for ds in tqdm(datasets, desc="datasets", disable=not progress):
        data = as_graph(ds, root=root, sparse_features=True)  # labels checked, simple undirected; x unused
        y = data.y.numpy().astype(np.int64, copy=False)
        check_k(k, y.shape[0])
        h = node_homophily(data.edge_index, y, data.num_nodes, assume_simple=True)
        if "hpstrat" in methods:
            warn_if_all_isolated(h, stacklevel=3)
        degree = node_degree(data.edge_index, data.num_nodes, assume_simple=True)
        for method in methods:
            for seed in seeds:
                folds = folds_of_method(method, h, y, k, seed, n_bins, degree=degree)
                rows.append({"dataset": data.name, "method": method, "seed": seed, "k": k, "n_bins": n_bins,
                             **quality_of_folds(folds, y, h, k)})
    return pd.DataFrame(rows)
