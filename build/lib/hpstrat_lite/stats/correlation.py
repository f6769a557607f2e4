"""Rank correlations over independent units: Spearman's rho with a bootstrap interval and a permutation p,
and the partial Spearman correlation holding a third variable fixed."""
from __future__ import annotations

import dataclasses

import numpy as np

from ._checks import as_vector, check_alpha, check_count


@dataclasses.dataclass(frozen=True)
class SpearmanResult:
    """Result of :func:`spearman` over ``n`` units named ``unit`` (pairs with a NaN left out).

    ``rho``; ``pvalue``: two-sided permutation p (NaN with ``n_perm=0``, fewer than 3 pairs or a constant
    side); ``pvalue_t``: scipy's two-sided p from the t approximation
    :math:`t = \\rho \\sqrt{(n - 2) / (1 - \\rho^2)}`; ``low``, ``high``: the percentile bootstrap interval at
    ``level`` (NaN with ``n_boot=0``)."""

    rho: float
    pvalue: float
    pvalue_t: float
    low: float
    high: float
    n: int
    unit: str
    level: float = 0.95
    n_boot: int = 2000
    n_perm: int = 9999


def _finite_pairs(x, y, names=("x", "y")):
    x, y = as_vector(x, names[0]), as_vector(y, names[1])
    if x.shape != y.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same length; got {x.size} and {y.size}.")
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def _bootstrap(x, y, n_boot, seed, level):
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    rx = rankdata(x[idx], axis=1)
    ry = rankdata(y[idx], axis=1)
    rx -= rx.mean(1, keepdims=True)
    ry -= ry.mean(1, keepdims=True)
    den = np.sqrt((rx ** 2).sum(1) * (ry ** 2).sum(1))
    boot = (rx * ry).sum(1)[den > 0] / den[den > 0]  # resamples with a constant side are skipped
    if not boot.size:
        return float("nan"), float("nan")
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _permutation_p(x, y, n_perm, seed):
    from scipy.stats import permutation_test, rankdata

    rx = rankdata(x) - (x.size + 1) / 2

    def rho(ry, axis=-1):
        ry = ry - ry.mean(axis=axis, keepdims=True)
        return (ry * rx).sum(axis) / np.sqrt((ry ** 2).sum(axis) * (rx ** 2).sum())

    res = permutation_test((rankdata(y),), rho, permutation_type="pairings", n_resamples=n_perm, vectorized=True,
                           rng=np.random.default_rng(seed))
    return float(res.pvalue)


def spearman(x, y, *, unit: str = "unit", n_boot: int = 2000, n_perm: int = 9999, seed: int = 0,
             level: float = 0.95) -> SpearmanResult:
    """Spearman's rank correlation of ``x`` and ``y`` over independent units, with two kinds of evidence.

    .. math:: \\rho = \\frac{\\sum_i (r_i - \\bar r)(s_i - \\bar s)}{\\sqrt{\\sum_i (r_i - \\bar r)^2
              \\sum_i (s_i - \\bar s)^2}}

    on the average ranks :math:`r, s` of ``x`` and ``y``. The permutation p re-pairs ``y``'s ranks with
    ``x``'s: over every pairing when there are at most ``n_perm`` of them (exact), else over ``n_perm`` random
    ones (:func:`scipy.stats.permutation_test`, p = (1 + count) / (1 + n_perm)); two-sided. The bootstrap
    interval resamples the pairs ``n_boot`` times (percentile interval; resamples with a constant side
    skipped). ``n_boot=0`` / ``n_perm=0`` skip either (NaN). ``seed`` fixes both. NaN throughout under
    3 pairs.

    References: C. Spearman, Am. J. Psychol. 15 (1904); B. Efron and R. Tibshirani, *An Introduction to the
    Bootstrap* (1993), Chapter 13.

    >>> r = spearman([1, 2, 3, 4, 5, 6], [1, 4, 9, 16, 25, 36], unit="graph", n_boot=200)
    >>> r.rho, round(r.pvalue, 4), r.n, r.unit  # one pairing of 6! on each side is as extreme
    (1.0, 0.0028, 6, 'graph')
    """
    from scipy.stats import spearmanr

    n_boot, n_perm = check_count(n_boot, "n_boot"), check_count(n_perm, "n_perm")
    level = check_alpha(level, "level")
    x, y = _finite_pairs(x, y)
    nan = float("nan")
    if x.size < 3:
        return SpearmanResult(nan, nan, nan, nan, nan, int(x.size), str(unit), level, n_boot, n_perm)
    constant = np.ptp(x) == 0 or np.ptp(y) == 0
    if constant:
        rho = p_t = nan
    else:
        res = spearmanr(x, y)
        rho, p_t = float(res.statistic), float(res.pvalue)
    lo, hi = _bootstrap(x, y, n_boot, seed, level) if n_boot else (nan, nan)
    p = _permutation_p(x, y, n_perm, seed) if n_perm and not constant else nan
    return SpearmanResult(rho, p, p_t, lo, hi, int(x.size), str(unit), level, n_boot, n_perm)


@dataclasses.dataclass(frozen=True)
class PartialSpearmanResult:
    """Result of :func:`partial_spearman`: ``rho`` of x and y holding z fixed over ``n`` units named ``unit``,
    and its two-sided ``pvalue`` (t with n - 3 degrees of freedom)."""

    rho: float
    pvalue: float
    n: int
    unit: str


def partial_spearman(x, y, z, *, unit: str = "unit") -> PartialSpearmanResult:
    """Spearman's partial correlation of ``x`` and ``y`` holding ``z`` fixed, and its two-sided p-value.

    The three are ranked; the ranks of x and y are each regressed on the ranks of z by least squares and the
    residuals correlated (Pearson), :math:`\\rho_{xy \\cdot z}`; the test statistic
    :math:`t = \\rho \\sqrt{(n - 3) / (1 - \\rho^2)}` has n - 3 degrees of freedom (one for the variable held
    fixed). NaN with fewer than 5 units or a residual that is constant; units with a NaN are left out.

    Reference: M. G. Kendall, *Rank Correlation Methods* (1948), Chapter 8; W. J. Conover, *Practical
    Nonparametric Statistics* (1999), Section 5.4.

    Both rise with z, but within each level of z, y falls as x rises:

    >>> r = partial_spearman([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], [1, 1, 2, 2, 3, 3])
    >>> round(r.rho, 2), r.pvalue < 0.05, r.n
    (-1.0, True, 6)
    """
    from scipy.stats import rankdata, t as student_t

    x, y, z = as_vector(x, "x"), as_vector(y, "y"), as_vector(z, "z")
    if not x.shape == y.shape == z.shape:
        raise ValueError(f"x, y and z must have the same length; got {x.size}, {y.size} and {z.size}.")
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    x, y, z = (rankdata(v[ok]) for v in (x, y, z))
    n = int(x.size)
    nan = float("nan")
    if n < 5:
        return PartialSpearmanResult(nan, nan, n, str(unit))
    design = np.column_stack([np.ones(n), z])
    rx = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    ry = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    denom = np.sqrt((rx @ rx) * (ry @ ry))
    if denom == 0:
        return PartialSpearmanResult(nan, nan, n, str(unit))
    rho = float(np.clip(rx @ ry / denom, -1.0, 1.0))
    if abs(rho) == 1.0:
        return PartialSpearmanResult(rho, 0.0, n, str(unit))
    t = rho * np.sqrt((n - 3) / (1 - rho ** 2))
    return PartialSpearmanResult(rho, float(2 * student_t.sf(abs(t), n - 3)), n, str(unit))
