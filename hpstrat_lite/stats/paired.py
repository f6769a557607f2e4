"""Paired comparisons of two methods over the same units: Wilcoxon's signed-rank test with its effect sizes,
the sign test, and Holm's adjustment of a family of p-values."""
from __future__ import annotations

import dataclasses

import numpy as np

from ._checks import as_vector, check_alpha, check_choice, check_count, paired

#: Fewest non-zero paired differences the Wilcoxon test is run on (with 5, the smallest two-sided p is 0.0625).
MIN_PAIRS = 6
ALTERNATIVES = ("two-sided", "less", "greater")
#: Most differences for the exact Hodges-Lehmann interval (beyond: the normal approximation).
EXACT_MAX = 200
#: Most differences for the Hodges-Lehmann shift (n (n + 1) / 2 Walsh averages are sorted).
WALSH_MAX = 4000


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (Holm 1979); NaN stays NaN and is not counted.

    With the :math:`m` finite p-values sorted, :math:`p_{(1)} \\le \\dots \\le p_{(m)}`,

    .. math:: \\tilde p_{(i)} = \\min\\Bigl(1, \\max_{j \\le i} (m - j + 1)\\, p_{(j)}\\Bigr),

    so that rejecting every :math:`\\tilde p < \\alpha` keeps the family-wise error at :math:`\\alpha`.

    Reference: S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6 (1979).

    >>> holm([0.01, 0.04, 0.03, float("nan")])
    array([0.03, 0.06, 0.06,  nan])
    """
    p = as_vector(p_values, "p_values")
    finite = np.flatnonzero(~np.isnan(p))
    if np.any((p[finite] < 0) | (p[finite] > 1)):
        raise ValueError(f"p_values must lie in [0, 1]; got {p[finite].min():g} to {p[finite].max():g}.")
    out = np.full(p.shape, np.nan)
    order = finite[np.argsort(p[finite], kind="stable")]
    m = order.size
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled) if m else scaled
    return out


@dataclasses.dataclass(frozen=True)
class PairedTest:
    """Result of :func:`wilcoxon_test`: ``a - b`` over ``n`` units named ``unit``.

    ``n``: pairs without a NaN; ``n_nonzero``: those whose difference is not zero (the test's sample);
    ``median_diff``: median of ``a - b`` over the ``n`` pairs; ``share_a_smaller``: share of the ``n`` pairs
    with ``a < b``; ``statistic``: Wilcoxon's W (scipy's, the smaller rank sum in the two-sided test);
    ``pvalue``; ``rank_biserial_r`` in [-1, 1] (negative: ``a`` smaller); ``hl_shift``, ``hl_low``,
    ``hl_high``: the Hodges-Lehmann shift of ``a - b`` and its ``level`` interval. NaN where there are too few
    pairs (``pvalue``: fewer than ``min_pairs`` non-zero differences; the others: none)."""

    n: int
    n_nonzero: int
    unit: str
    median_diff: float
    share_a_smaller: float
    statistic: float
    pvalue: float
    rank_biserial_r: float
    hl_shift: float
    hl_low: float
    hl_high: float
    level: float = 0.95
    alternative: str = "two-sided"

    def significant(self, alpha: float = 0.05) -> bool:
        """``pvalue < alpha`` (False for a NaN p: no test)."""
        return bool(self.pvalue < check_alpha(alpha))


def _signed_rank_null(n: int) -> np.ndarray:
    """Exact null distribution of :math:`W^+` for ``n`` untied non-zero differences: ``P(W+ = w)``,
    ``w = 0..n(n+1)/2`` (each rank enters the sum with probability 1/2)."""
    prob = np.zeros(n * (n + 1) // 2 + 1)
    prob[0] = 1.0
    top = 0
    for r in range(1, n + 1):  # halve at each step: no overflow of 2 ** n
        prob[r:top + r + 1] += prob[:top + 1].copy()
        prob[:top + r + 1] *= 0.5
        top += r
    return prob


def hodges_lehmann(d, *, level: float = 0.95) -> tuple[float, float, float]:
    """Hodges-Lehmann shift of the differences ``d`` and its ``level`` confidence interval.

    The shift is the median of the Walsh averages :math:`(d_i + d_j) / 2,\\ i \\le j`; the interval runs
    from the :math:`q`-th smallest to the :math:`q`-th largest Walsh average, :math:`q` the smallest
    :math:`w` with :math:`P(W^+ \\le w) \\ge (1 - \\text{level}) / 2` under the exact null of the signed-rank
    statistic (at least 1), as R's ``wilcox.test(conf.int = TRUE)`` does for untied data; above
    :data:`EXACT_MAX` differences the normal approximation
    :math:`q = \\lfloor n (n + 1) / 4 - z_{(1 + \\text{level}) / 2} \\sqrt{n (n + 1) (2 n + 1) / 24} \\rfloor`
    (Hollander and Wolfe 1999, Section 3.2). Above :data:`WALSH_MAX` differences (n (n + 1) / 2 Walsh averages) all
    three are NaN.

    Reference: J. L. Hodges and E. L. Lehmann, "Estimates of location based on rank tests", Ann. Math.
    Statist. 34 (1963); M. Hollander and D. A. Wolfe, *Nonparametric Statistical Methods* (1999), Section 3.2.

    >>> hodges_lehmann([1.0, 2, 3, 4, 5, 6])  # n = 6: at 95 % the interval is [min, max] of the Walsh averages
    (3.5, 1.0, 6.0)
    """
    from scipy.stats import norm

    level = check_alpha(level, "level")
    d = np.sort(np.asarray(d, dtype=float))
    n = d.size
    if n == 0 or n > WALSH_MAX:
        return float("nan"), float("nan"), float("nan")
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    if n <= EXACT_MAX:
        q = int(np.searchsorted(np.cumsum(_signed_rank_null(n)), (1 - level) / 2 - 1e-12))
    else:
        q = int(np.floor(n * (n + 1) / 4 - norm.isf((1 - level) / 2) * np.sqrt(n * (n + 1) * (2 * n + 1) / 24)))
    q = max(1, q)
    return float(np.median(walsh)), float(walsh[q - 1]), float(walsh[walsh.size - q])


def wilcoxon_test(a, b=None, *, unit: str = "pair", alternative: str = "two-sided", min_pairs: int = MIN_PAIRS,
                  level: float = 0.95) -> PairedTest:
    """Wilcoxon's signed-rank test of the paired values ``a`` and ``b`` (or of the differences ``a`` alone),
    with the matched-pairs rank-biserial correlation and the Hodges-Lehmann shift.

    Pairs with a NaN are left out; zero differences are dropped before ranking (Wilcoxon's rule, scipy's
    ``zero_method="wilcox"``). With :math:`W^\\pm` the rank sums of the positive and negative non-zero
    differences :math:`d = a - b`,

    .. math:: r = \\frac{W^+ - W^-}{W^+ + W^-}

    is -1 when ``a`` is smaller in every pair and +1 when it is larger (Kerby 2014). The p-value is scipy's
    ``wilcoxon`` (exact for small samples without ties, else the normal approximation); fewer than
    ``min_pairs`` non-zero differences give no test (NaN statistic and p). Each pair must be an independent
    unit: values that share folds are aggregated to the unit first (:func:`hpstrat_lite.stats.unit_means`),
    and ``unit`` names it in the result.

    References: F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bull. 1 (1945);
    D. S. Kerby, "The simple difference formula", Compr. Psychol. 3 (2014); J. Demsar, "Statistical
    comparisons of classifiers over multiple data sets", JMLR 7 (2006).

    >>> t = wilcoxon_test([1.0, 2, 3, 4, 5, 6], [2.0, 4, 6, 8, 10, 12], unit="graph")
    >>> t.rank_biserial_r, round(t.pvalue, 4), t.hl_shift, t.n, t.unit
    (-1.0, 0.0312, -3.5, 6, 'graph')
    """
    from scipy.stats import rankdata, wilcoxon

    check_choice(alternative, "alternative", ALTERNATIVES)
    check_count(min_pairs, "min_pairs", 1)
    d = paired(a, b)
    nz = d[d != 0]
    ranks = rankdata(np.abs(nz))
    w_plus, w_minus = float(ranks[nz > 0].sum()), float(ranks[nz < 0].sum())
    r = (w_plus - w_minus) / (w_plus + w_minus) if nz.size else float("nan")
    if nz.size >= min_pairs:
        res = wilcoxon(nz, alternative=alternative)
        stat, p = float(res.statistic), float(res.pvalue)
    else:
        stat, p = float("nan"), float("nan")
    hl, lo, hi = hodges_lehmann(nz, level=level)
    return PairedTest(n=int(d.size), n_nonzero=int(nz.size), unit=str(unit),
                      median_diff=float(np.median(d)) if d.size else float("nan"),
                      share_a_smaller=float(np.mean(d < 0)) if d.size else float("nan"), statistic=stat, pvalue=p,
                      rank_biserial_r=float(r), hl_shift=hl, hl_low=lo, hl_high=hi, level=float(level),
                      alternative=alternative)


@dataclasses.dataclass(frozen=True)
class SignTest:
    """Result of :func:`sign_test`: over ``n`` units named ``unit`` (ties included), ``n_less`` have
    ``a < b``, ``n_greater`` ``a > b``, ``n_ties`` equal; ``pvalue`` of the binomial test on the untied ones."""

    n: int
    n_less: int
    n_greater: int
    n_ties: int
    pvalue: float
    unit: str
    alternative: str = "two-sided"

    @property
    def share_less(self) -> float:
        """``n_less / n`` (ties count in the denominator); NaN without units."""
        return self.n_less / self.n if self.n else float("nan")


def sign_test(a, b=None, *, unit: str = "pair", alternative: str = "two-sided") -> SignTest:
    """The sign test of ``a - b`` (or of the differences ``a``): under the null each untied difference is
    negative with probability 1/2, so :math:`N_- \\sim \\mathrm{Bin}(N_- + N_+, 1/2)`. ``alternative="less"``:
    ``a`` tends to be below ``b`` (``P(N_- \\ge n_-)``); ``"greater"``: above. Ties are dropped; pairs with a
    NaN left out; NaN p without untied pairs.

    Reference: W. J. Conover, *Practical Nonparametric Statistics* (3rd ed., 1999), Section 3.4.

    >>> t = sign_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 5], alternative="less")
    >>> t.n_less, t.n_ties, t.pvalue
    (4, 1, 0.0625)
    """
    from scipy.stats import binomtest

    check_choice(alternative, "alternative", ALTERNATIVES)
    d = paired(a, b)
    less, greater = int(np.sum(d < 0)), int(np.sum(d > 0))
    if less + greater == 0:
        p = float("nan")
    else:
        flipped = {"two-sided": "two-sided", "less": "greater", "greater": "less"}[alternative]
        p = float(binomtest(less, less + greater, 0.5, alternative=flipped).pvalue)
    return SignTest(n=int(d.size), n_less=less, n_greater=greater, n_ties=int(d.size - less - greater), pvalue=p,
                    unit=str(unit), alternative=alternative)
