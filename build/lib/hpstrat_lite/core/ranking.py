"""Stage 6: result rows -> ranks of split methods (HpStrat Section 5.2, Tables 2-4).

For each block (a (dataset, model) pair for the GNN tables; a dataset for the fold-metric table) the
split methods are ranked on a score where lower is better (cross-fold std of test accuracy, CHD, ...):
rank 1 = best, ties share the average rank. Table 3 averages ranks over datasets per model, Table 4 over
models per dataset, and the global mean rank averages every block. A Friedman test (methods as
treatments, blocks as subjects) says whether the rank differences are larger than chance; which method is
best only the pairwise post-hoc test can say (:func:`hpstrat_lite.stats.posthoc`).
"""
from __future__ import annotations

import pandas as pd

from ..stats import FriedmanResult, friedman, unit_name


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


def friedman_test(df: pd.DataFrame, value: str, *, blocks=("dataset", "model"), method: str = "method",
                  alpha: float = 0.05) -> FriedmanResult:
    """Friedman test of the split methods over complete blocks, from a long frame: one row per (block, method),
    pivoted to blocks x methods (mean of duplicates), rows missing a method dropped, then
    :func:`hpstrat_lite.stats.friedman` (Kendall's W, the smallest p the design can reach; the unit is named
    after ``blocks``). NaN statistic and p-value with fewer than 2 complete blocks.

    >>> df = pd.DataFrame({"dataset": [d for d in "abc" for _ in range(3)], "method": ["r", "s", "h"] * 3,
    ...                    "std": [3.0, 2.0, 1.0] * 3})
    >>> r = friedman_test(df, "std", blocks=("dataset",))
    >>> round(r.pvalue, 4), r.n_blocks, r.unit
    (0.0498, 3, 'dataset')
    """
    blocks = list(blocks)
    _check_columns(df, blocks + [method, value])
    wide = df.pivot_table(index=blocks, columns=method, values=value, aggfunc="mean").dropna()
    return friedman(wide, unit=unit_name(blocks), alpha=alpha)
