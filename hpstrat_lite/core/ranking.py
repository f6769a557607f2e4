"""Stage 6: result rows -> ranks of split methods (HpStrat Section 5.2, Tables 2-4).

For each block (a (dataset, model) pair for the GNN tables; a dataset for the fold-metric table) the
split methods are ranked on a score where lower is better (cross-fold std of test accuracy, CHD, ...):
rank 1 = best, ties share the average rank. Table 3 averages ranks over datasets per model, Table 4 over
models per dataset, and the global mean rank averages every block. A Friedman test (methods as
treatments, blocks as subjects) says whether the rank differences are larger than chance.
"""
from __future__ import annotations

import numpy as np
import pandas as pd



def _check_columns(df: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"df lacks column(s) {missing}; it has {list(df.columns)}.")


def rank_methods(df: pd.DataFrame, value: str, *, blocks=("dataset", "model"), method: str = "method",
                 lower_is_better: bool = True) -> pd.DataFrame:
    """Rank the split methods within each block on ``value``.

    ``df`` holds one row per (block, method) (aggregate first, e.g. the std over folds). Returns a copy
    with a ``rank`` column: 1 = best, ties share the average rank (``pandas.Series.rank(method="average")``).

    Examples
    --------
    >>> df = pd.DataFrame({"dataset": ["a"] * 3, "method": ["r", "s", "h"], "std": [2.0, 1.0, 1.0]})
    >>> rank_methods(df, "std", blocks=("dataset",))["rank"].tolist()
    [3.0, 1.5, 1.5]
    """
    blocks = list(blocks)
    _check_columns(df, blocks + [method, value])
    dup = df.duplicated(blocks + [method])
    if dup.any():
        raise ValueError(f"df has several rows for one ({', '.join(blocks)}, {method}); aggregate first "
                         f"(first duplicate: {df.loc[dup, blocks + [method]].iloc[0].tolist()}).")
    out = df.copy()
    out["rank"] = out.groupby(blocks)[value].rank(method="average", ascending=lower_is_better)
    return out


def rank_tables(ranked: pd.DataFrame, *, method: str = "method", row: str = "model", col_block: str = "dataset"):
    """Mean rank tables from :func:`rank_methods` output on (dataset, model) blocks.

    Returns ``(per_row, per_col_block, global_mean)``: ``per_row`` is Table 3 (mean over datasets for each
    model, one column per method), ``per_col_block`` is Table 4 (mean over models for each dataset), and
    ``global_mean`` the mean rank of each method over all blocks.
    """
    _check_columns(ranked, [method, row, col_block, "rank"])
    per_row = ranked.pivot_table(index=row, columns=method, values="rank", aggfunc="mean")
    per_col = ranked.pivot_table(index=col_block, columns=method, values="rank", aggfunc="mean")
    global_mean = ranked.groupby(method)["rank"].mean()
    return per_row, per_col, global_mean


def friedman_test(df: pd.DataFrame, value: str, *, blocks=("dataset", "model"), method: str = "method"):
    """Friedman test of the split methods over complete blocks (``scipy.stats.friedmanchisquare``).

    Returns ``(statistic, p_value, n_blocks)``; NaN statistic and p-value with fewer than 2 complete blocks
    or fewer than 3 methods (the test needs both).
    """
    from scipy.stats import friedmanchisquare

    blocks = list(blocks)
    _check_columns(df, blocks + [method, value])
    wide = df.pivot_table(index=blocks, columns=method, values=value, aggfunc="mean").dropna()
    if wide.shape[1] < 3 or wide.shape[0] < 2:
        return float("nan"), float("nan"), int(wide.shape[0])
    if np.all(wide.to_numpy() == wide.to_numpy()[:, :1]):
        return 0.0, 1.0, int(wide.shape[0])
    stat, p = friedmanchisquare(*[wide[c].to_numpy() for c in wide.columns])
    return float(stat), float(p), int(wide.shape[0])
