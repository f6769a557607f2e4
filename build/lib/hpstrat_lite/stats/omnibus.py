"""Several methods over the same units: Friedman's omnibus test with Kendall's W and the smallest p the design
can reach, and the pairwise post-hoc test that alone may name a winner."""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd

from ._checks import check_alpha, check_count, check_table
from .paired import MIN_PAIRS, holm, wilcoxon_test


@dataclasses.dataclass(frozen=True)
class FriedmanResult:
    """Result of :func:`friedman`: ``n_blocks`` independent units named ``unit`` (rows), ``n_methods``
    treatments (``methods``, columns) with their ``mean_ranks`` (1 = lowest value).

    ``statistic`` :math:`\\chi^2_F` (tie-corrected) and ``pvalue``; ``kendall_w``
    :math:`W = \\chi^2_F / (n (m - 1))` (0: no agreement between blocks, 1: every block ranks the methods
    alike); ``min_pvalue``: the smallest p ``n_blocks`` blocks can give (W = 1); ``blocks_needed``: the fewest
    blocks with which W = 1 reaches p < ``alpha``; ``blocks_needed_observed``: the fewest with which the
    observed W would (``None`` when W = 0 or unknown). NaN statistic and p with fewer than 2 blocks."""

    statistic: float
    pvalue: float
    kendall_w: float
    n_blocks: int
    n_methods: int
    unit: str
    methods: tuple
    mean_ranks: tuple
    min_pvalue: float
    blocks_needed: int | None
    blocks_needed_observed: int | None
    alpha: float = 0.05

    def ranks(self) -> pd.Series:
        """The mean rank of each method, best (lowest) first."""
        return pd.Series(dict(zip(self.methods, self.mean_ranks)), name="mean rank").sort_values()


def _blocks_needed(w: float, m: int, alpha: float, *, limit: int = 100_000) -> int | None:
    """The fewest blocks n with :math:`P(\\chi^2_{m-1} \\geq W n (m - 1)) < \\alpha` (None if W = 0)."""
    from scipy.stats import chi2

    if m < 2 or not w > 0:
        return None
    n = max(1, math.ceil(chi2.isf(alpha, m - 1) / (w * (m - 1))))
    while chi2.sf(w * n * (m - 1), m - 1) >= alpha and n < limit:  # strict inequality at the boundary
        n += 1
    return n if n < limit else None


def friedman(table: pd.DataFrame, *, unit: str = "block", alpha: float = 0.05) -> FriedmanResult:
    """Friedman's test of the columns (methods) of ``table`` over its rows (blocks, one per independent unit).

    Within each block the methods are ranked (ties share the average rank); with rank sums :math:`R_j`,

    .. math:: \\chi^2_F = \\frac{\\frac{12}{n m (m + 1)} \\sum_j R_j^2 - 3 n (m + 1)}
                                {1 - \\sum (t^3 - t) / (n m (m^2 - 1))}, \\qquad
              p = P(\\chi^2_{m-1} \\geq \\chi^2_F),

    the denominator correcting for ties (``scipy.stats.friedmanchisquare``, used for m >= 3; for m = 2 the
    statistic is :math:`(n_+ - n_-)^2 / (n_+ + n_-)`, the sign test's chi-square, to which the formula
    reduces). Rows with a NaN are dropped; every block a complete tie gives statistic 0, p = 1. The test says
    *whether* the methods differ, not which: name a winner with :func:`posthoc` only.

    References: M. Friedman, JASA 32 (1937); J. Demsar, "Statistical comparisons of classifiers over multiple
    data sets", JMLR 7 (2006), Section 3.2.2.

    >>> t = pd.DataFrame({"a": [1.0] * 6, "b": [2.0] * 6, "c": [3.0] * 6})
    >>> r = friedman(t, unit="graph")
    >>> round(r.statistic, 3), round(r.pvalue, 4), r.kendall_w, round(r.min_pvalue, 4), r.blocks_needed, r.unit
    (12.0, 0.0025, 1.0, 0.0025, 3, 'graph')
    """
    from scipy.stats import chi2, friedmanchisquare, rankdata

    alpha = check_alpha(alpha)
    wide = check_table(table)
    n, m = wide.shape
    values = wide.to_numpy()
    ranks = rankdata(values, axis=1) if n else np.empty((0, m))
    mean_ranks = tuple(float(v) for v in (ranks.mean(0) if n else np.full(m, np.nan)))
    base = dict(n_blocks=int(n), n_methods=int(m), unit=str(unit), methods=tuple(wide.columns),
                mean_ranks=mean_ranks, min_pvalue=float(chi2.sf(n * (m - 1), m - 1)) if n else float("nan"),
                blocks_needed=_blocks_needed(1.0, m, alpha), alpha=alpha)
    if n < 2:
        return FriedmanResult(float("nan"), float("nan"), float("nan"), blocks_needed_observed=None, **base)
    if np.all(values == values[:, :1]):  # every block a complete tie
        return FriedmanResult(0.0, 1.0, 0.0, blocks_needed_observed=None, **base)
    if m == 2:
        plus, minus = int(np.sum(values[:, 0] < values[:, 1])), int(np.sum(values[:, 0] > values[:, 1]))
        stat = (plus - minus) ** 2 / (plus + minus)
    else:
        stat = float(friedmanchisquare(*values.T).statistic)
    stat = max(float(stat), 0.0)
    w = stat / (n * (m - 1))
    return FriedmanResult(stat, float(chi2.sf(stat, m - 1)), float(w),
                          blocks_needed_observed=_blocks_needed(w, m, alpha), **base)


@dataclasses.dataclass(frozen=True)
class PosthocResult:
    """Result of :func:`posthoc`: every pair of ``methods`` compared over ``n_blocks`` units named ``unit``.

    ``pairs``: one row per pair (``a``, ``b``, ``n``, ``median_diff`` a - b, ``rank_biserial_r``,
    ``statistic``, ``pvalue``, ``p_holm`` over all pairs, ``better``: the method with the better values in
    that pair when ``p_holm < alpha``, else missing); ``mean_ranks`` per method (1 = best); ``leader``: the best
    mean rank; ``winner``: the leader when it is better than every other method after the correction, else
    None ("no method beats all the others")."""

    methods: tuple
    mean_ranks: tuple
    pairs: pd.DataFrame
    leader: str | None
    winner: str | None
    n_blocks: int
    unit: str
    alpha: float
    lower_is_better: bool
    test: str = "Wilcoxon signed-rank, Holm-adjusted over all pairs"

    def ranks(self) -> pd.Series:
        """The mean rank of each method, best first."""
        return pd.Series(dict(zip(self.methods, self.mean_ranks)), name="mean rank").sort_values()


def posthoc(table: pd.DataFrame, *, lower_is_better: bool = True, unit: str = "block", alpha: float = 0.05,
            min_pairs: int = MIN_PAIRS) -> PosthocResult:
    """Pairwise post-hoc comparison of the columns (methods) of ``table`` over its rows (independent units):
    a two-sided Wilcoxon signed-rank test for each of the :math:`m (m - 1) / 2` pairs
    (:func:`hpstrat_lite.stats.wilcoxon_test`), the p-values Holm-adjusted as one family
    (:func:`hpstrat_lite.stats.holm`).

    The *leader* has the best mean rank (lowest values when ``lower_is_better``). It is named ``winner`` only
    when, for every other method, the adjusted p is below ``alpha`` and the leader's values are the better
    ones (rank-biserial r of the right sign): an omnibus test (:func:`friedman`) alone never names a winner.
    Rows with a NaN are dropped.

    References: Benavoli, Corani and Mangili, "Should we really use post-hoc tests based on mean-ranks?",
    JMLR 17 (2016) (pairwise Wilcoxon rather than mean-rank tests); Demsar (2006), Section 3.2.

    >>> t = pd.DataFrame({"hp": [1.0, 1.1, 0.9, 1.2, 1.0, 0.8, 1.1, 0.9],
    ...                   "strat": [2.0, 2.2, 1.9, 2.1, 2.4, 1.8, 2.0, 2.3],
    ...                   "random": [3.1, 2.9, 3.4, 3.0, 3.3, 2.8, 3.2, 3.5]})
    >>> r = posthoc(t, unit="graph")
    >>> r.winner, r.pairs["p_holm"].round(4).tolist()
    ('hp', [0.0234, 0.0234, 0.0234])
    """
    alpha = check_alpha(alpha)
    check_count(min_pairs, "min_pairs", 1)
    wide = check_table(table)
    methods = tuple(wide.columns)
    signed = wide if lower_is_better else -wide
    mean_ranks = signed.rank(axis=1).mean() if len(wide) else pd.Series(np.nan, index=wide.columns)
    rows = []
    for a, b in itertools.combinations(methods, 2):
        t = wilcoxon_test(wide[a], wide[b], unit=unit, min_pairs=min_pairs)
        rows.append({"a": a, "b": b, "n": t.n, "median_diff": t.median_diff, "rank_biserial_r": t.rank_biserial_r,
                     "statistic": t.statistic, "pvalue": t.pvalue})
    pairs = pd.DataFrame(rows, columns=["a", "b", "n", "median_diff", "rank_biserial_r", "statistic", "pvalue"])
    pairs["p_holm"] = holm(pairs["pvalue"].to_numpy(float)) if len(pairs) else []
    a_better = (pairs["rank_biserial_r"] < 0) == lower_is_better
    pairs["better"] = [(a if ab else b) if p < alpha else None
                       for a, b, ab, p in zip(pairs["a"], pairs["b"], a_better, pairs["p_holm"])]
    leader = str(mean_ranks.idxmin()) if mean_ranks.notna().any() else None
    winner = None
    if leader is not None:
        mine = pairs[(pairs["a"] == leader) | (pairs["b"] == leader)]
        if len(mine) and (mine["better"] == leader).all():
            winner = leader
    return PosthocResult(methods=methods, mean_ranks=tuple(float(v) for v in mean_ranks.reindex(list(methods))),
                         pairs=pairs, leader=leader, winner=winner, n_blocks=int(len(wide)), unit=str(unit),
                         alpha=alpha, lower_is_better=bool(lower_is_better))
