"""The unit of analysis: observations that share folds are not independent, so they are aggregated to the unit
that is (e.g. the eight models of one (graph, split seed) share its folds: one unit, not eight) before a test,
and the unit's name and count travel with every result. Also the cross-fold standard deviation, the score
of a split protocol, computed once here."""
from __future__ import annotations

import pandas as pd

from ._checks import unit_name
from .omnibus import FriedmanResult, PosthocResult, friedman, posthoc
from .paired import PairedTest, wilcoxon_test


def _columns(rows, needed, name="rows"):
    if not isinstance(rows, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame; got {type(rows).__name__}.")
    missing = [c for c in needed if c not in rows.columns]
    if missing:
        raise ValueError(f"{name} lacks the column(s) {missing}; it has {list(rows.columns)}.")


def cross_fold_std(rows: pd.DataFrame, value: str, *, by, scale: float = 100.0) -> pd.DataFrame:
    """The standard deviation over folds of ``scale * rows[value]`` in each group ``by`` (one group: one split
    of the data into k folds, e.g. (dataset, model, method, split seed)), with the mean and the fold count.

    .. math:: s = \\sqrt{\\frac{1}{k - 1} \\sum_{i=1}^{k} (a_i - \\bar a)^2}

    the sample standard deviation (ddof = 1; NaN for a group of one fold) of the k test scores :math:`a_i`
    (HpStrat Section 5.2: the lower, the more alike the folds). ``scale=100`` gives accuracy points.
    Returns one row per group: the ``by`` columns, ``std``, ``mean``, ``folds``.

    >>> rows = pd.DataFrame({"method": ["a"] * 4 + ["b"] * 4, "test_acc": [.80, .82, .84, .86, .8, .9, .7, .8]})
    >>> cross_fold_std(rows, "test_acc", by=["method"]).round(3).to_dict("list")
    {'method': ['a', 'b'], 'std': [2.582, 8.165], 'mean': [83.0, 80.0], 'folds': [4, 4]}
    """
    by = [by] if isinstance(by, str) else list(by)
    _columns(rows, by + [value])
    if rows.empty:
        raise ValueError("rows is empty: there are no results to analyse.")
    scaled = rows.assign(_v=scale * rows[value])
    out = scaled.groupby(by)["_v"].agg(["std", "mean", "size"]).reset_index()
    return out.rename(columns={"size": "folds"})


def unit_means(rows: pd.DataFrame, value: str, *, unit, columns: str = "method") -> pd.DataFrame:
    """Aggregate a long frame to its independent units: the mean of ``value`` per ``unit`` (a column or a
    tuple of them) and ``columns`` (the methods compared), one row per unit and one column per method.

    Everything else in ``rows`` (models, folds, ...) is averaged over; the result's ``attrs["unit"]`` names
    the unit for the tests (:func:`paired_test_at_unit`, :func:`friedman_at_unit`).

    >>> rows = pd.DataFrame({"dataset": ["D"] * 4, "seed": [0, 0, 1, 1], "model": ["GCN", "GAT"] * 2,
    ...                      "method": ["hp"] * 4, "std": [1.0, 3.0, 2.0, 2.0]})
    >>> wide = unit_means(rows, "std", unit=("dataset", "seed"))
    >>> wide["hp"].to_dict(), wide.attrs["unit"]
    ({('D', 0): 2.0, ('D', 1): 2.0}, '(dataset, seed)')
    """
    unit = [unit] if isinstance(unit, str) else list(unit)
    _columns(rows, unit + [columns, value])
    wide = rows.groupby(unit + [columns])[value].mean().unstack(columns)
    wide.attrs["unit"] = unit_name(unit)
    return wide


def paired_test_at_unit(rows: pd.DataFrame, value: str, a: str, b: str, *, unit=("dataset", "seed"),
                        columns: str = "method", **kwargs) -> PairedTest:
    """:func:`hpstrat_lite.stats.wilcoxon_test` of method ``a`` against ``b`` on the means of ``value`` per
    ``unit`` (:func:`unit_means`): the result's ``n`` counts units and ``unit`` names them.

    >>> rows = pd.DataFrame({"dataset": [g for g in "ABCDEF" for _ in range(4)], "seed": 0,
    ...                      "model": ["GCN", "GAT"] * 12, "method": (["hp"] * 2 + ["st"] * 2) * 6,
    ...                      "std": [1.0, 1.2, 2.0, 2.1] * 6})
    >>> t = paired_test_at_unit(rows, "std", "hp", "st")
    >>> t.n, t.unit, round(t.pvalue, 4)
    (6, '(dataset, seed)', 0.0312)
    """
    wide = unit_means(rows, value, unit=unit, columns=columns)
    for m in (a, b):
        if m not in wide.columns:
            raise ValueError(f"{columns} {m!r} is not in rows; it has {list(wide.columns)}.")
    return wilcoxon_test(wide[a], wide[b], unit=wide.attrs["unit"], **kwargs)


def friedman_at_unit(rows: pd.DataFrame, value: str, *, unit=("dataset", "seed"), columns: str = "method",
                     methods=None, **kwargs) -> FriedmanResult:
    """:func:`hpstrat_lite.stats.friedman` of the ``methods`` (default: all) on the means of ``value`` per
    ``unit`` (:func:`unit_means`)."""
    wide = unit_means(rows, value, unit=unit, columns=columns)
    return friedman(wide if methods is None else wide[list(methods)], unit=wide.attrs["unit"], **kwargs)


def posthoc_at_unit(rows: pd.DataFrame, value: str, *, unit=("dataset", "seed"), columns: str = "method",
                    methods=None, **kwargs) -> PosthocResult:
    """:func:`hpstrat_lite.stats.posthoc` of the ``methods`` (default: all) on the means of ``value`` per
    ``unit`` (:func:`unit_means`)."""
    wide = unit_means(rows, value, unit=unit, columns=columns)
    return posthoc(wide if methods is None else wide[list(methods)], unit=wide.attrs["unit"], **kwargs)
