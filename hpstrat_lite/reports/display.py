"""Numbers as the book shows them: each kind of value rounded to the precision that carries meaning.

==============  ===================================================  ===========================
kind            rule                                                 example
==============  ===================================================  ===========================
``homophily``   2 decimals                                           0.825158 -> ``0.83``
``accuracy``    1 decimal (percentage points, also their std)        81.2743 -> ``81.3``
``p``           2 significant digits                                 0.000123456 -> ``0.00012``
``metric``      3 significant digits (SDD, CDD, CHD, W1, ratios)     12.2825 -> ``12.3``
``rank``        2 decimals                                           1.6667 -> ``1.67``
``integer``     no decimals                                          8.0 -> ``8``
``text``        as it is                                             ``"GCN"``
an int ``d``    ``d`` decimals
==============  ===================================================  ===========================

A ``metric`` below 0.001 is written as ``1.23e-04``, so that no number shows more than 4 decimals. A
value that rounds to zero is shown without a sign (``-0.0004`` -> ``0.00``, never ``-0.00``); a
missing value (None, NaN) is ``n/a``. :func:`format_table` applies the rules to a table's columns,
guessing a column's kind from its name and values where it is not given.
"""
from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

#: The kinds of value and how many decimals (``"d"``) or significant digits (``"s"``) each keeps.
KINDS = {"homophily": ("d", 2), "accuracy": ("d", 1), "p": ("s", 2), "metric": ("s", 3), "rank": ("d", 2),
         "integer": ("d", 0), "text": None}
NA = "n/a"
_METRIC_NAMES = ("sdd", "cdd", "chd", "w1")


def _check_kind(kind):
    if isinstance(kind, bool) or not (kind in KINDS or (isinstance(kind, numbers.Integral) and 0 <= kind <= 12)):
        raise ValueError(f"kind={kind!r} is not a kind of value; use one of {sorted(KINDS)} or a number of "
                         "decimals from 0 to 12.")
    return kind


def format_number(value, *, kind="metric") -> str:
    """``value`` as a string by the rule of ``kind`` (see the module docstring).

    Examples
    --------
    >>> [format_number(v, kind="homophily") for v in (0.825158, -0.0004, float("nan"))]
    ['0.83', '0.00', 'n/a']
    >>> format_number(0.000123456, kind="p"), format_number(12.2825, kind="metric"), format_number(8.0, kind="integer")
    ('0.00012', '12.3', '8')
    """
    _check_kind(kind)
    if kind == "text" or isinstance(value, str):
        return str(value)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT:
        return NA
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return NA
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    mode, n = ("d", kind) if not isinstance(kind, str) else KINDS[kind]
    if mode == "s":
        if x == 0:
            return "0"
        if kind == "p":
            text = f"{x:.{n}g}"
        elif abs(x) < 1e-3:  # never more than 4 decimals: 0.000123 -> 1.23e-04
            text = f"{x:.{n - 1}e}"
        else:  # fixed point with n significant digits, at least 0 decimals
            decimals = max(0, n - 1 - math.floor(math.log10(abs(x))))
            text = f"{x:.{decimals}f}"
    else:
        text = f"{x:.{n}f}"
    if text.startswith("-") and float(text) == 0:  # -0.00 -> 0.00
        text = text[1:]
    return text


def format_mean_std(mean, std, *, kind="metric") -> str:
    """``mean ± std`` with ``mean`` by the rule of ``kind`` and ``std`` to the same decimal place (or in the
    same exponent notation); ``n/a`` when the mean is missing, the mean alone when the std is.

    Examples
    --------
    >>> format_mean_std(12.28250, 0.41875), format_mean_std(0.0123456, 0.00211), format_mean_std(81.27, 1.234, kind="accuracy")
    ('12.3 ± 0.4', '0.0123 ± 0.0021', '81.3 ± 1.2')
    """
    m = format_number(mean, kind=kind)
    sd = format_number(std, kind="metric")
    if m == NA or sd == NA:
        return m
    if "e" in m:
        digits = len(m.split("e")[0].split(".")[1]) if "." in m else 0
        sd = f"{abs(float(std)):.{digits}e}"
    else:
        digits = len(m.split(".")[1]) if "." in m else 0
        sd = f"{abs(float(std)):.{digits}f}"
    return f"{m} ± {sd}"


def column_kind(name, values) -> str:
    """The kind of a column guessed from its name (the last level of a tuple) and values: p-values
    (``p``, ``p-value``, ``friedman_p``, ``... p``), ``homophily``, accuracies (``acc``), the fold metrics
    (``sdd``, ``cdd``, ``chd``, ``w1``), ranks; otherwise ``integer`` when every value is a whole number,
    ``text`` for a column that is not numeric, else ``metric``."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    label = str(name[-1] if isinstance(name, tuple) else name).strip().lower()
    values = pd.Series(values)
    if is_bool_dtype(values) or not is_numeric_dtype(values):
        return "text"
    words = label.replace("_", " ").replace("-", " ").split()
    if label in ("p", "p-value", "p_value", "pvalue") or (words and (words[0] == "p" or words[-1] in ("p", "pvalue"))) \
            or "p-value" in label or "p value" in label.replace("_", " "):
        return "p"
    if "homophily" in label:
        return "homophily"
    if "acc" in label or "roc auc" in label or "auc" in words:
        return "accuracy"
    if words and words[0] in _METRIC_NAMES:
        return "metric"
    if "rank" in label:
        return "rank"
    finite = values.astype(float)
    finite = finite[np.isfinite(finite)]
    if len(finite) and np.all(finite == np.round(finite)):
        return "integer"
    return "metric"


def format_frame(df: pd.DataFrame, *, kinds: dict | None = None) -> pd.DataFrame:
    """``df`` with every cell formatted as a string (:func:`format_number`), each column by its kind in
    ``kinds`` (column name -> kind) or, for the others, by :func:`column_kind`; the index too."""
    kinds = _check_kinds(df, kinds)
    out = pd.DataFrame({col: [format_number(v, kind=kinds[col]) for v in df[col]] for col in df.columns},
                       index=df.index, columns=df.columns)
    return out.rename(index=_index_label)


def format_table(df: pd.DataFrame, *, kinds: dict | None = None, caption: str | None = None,
                 hide_index: bool = False):
    """A table as the book displays it: a pandas ``Styler`` of ``df`` (the frame is unchanged) whose numbers
    follow the rules of the module docstring.

    Parameters
    ----------
    df : pandas.DataFrame
    kinds : dict, optional
        Column name -> kind (``"homophily"``, ``"accuracy"``, ``"p"``, ``"metric"``, ``"rank"``,
        ``"integer"``, ``"text"`` or a number of decimals). Columns not named are guessed by
        :func:`column_kind`.
    caption : str, optional
        The table's caption.
    hide_index : bool, default False

    Examples
    --------
    >>> df = pd.DataFrame({"mean homophily": [0.825158], "p": [0.0123456], "nodes": [2708.0]})
    >>> format_table(df).to_html().count("0.83"), format_frame(df).iloc[0].tolist()
    (1, ['0.83', '0.012', '2708'])
    """
    kinds = _check_kinds(df, kinds)
    styler = df.style.format({col: (lambda v, k=kinds[col]: format_number(v, kind=k)) for col in df.columns})
    styler = styler.format_index(_index_label)
    if caption:
        styler = styler.set_caption(caption)
    return styler.hide(axis="index") if hide_index else styler


def _index_label(v):
    """An index label: a whole float as an integer (``2.0`` -> ``2``), other floats with 3 significant digits."""
    if isinstance(v, (float, np.floating)):
        return format_number(v, kind="integer" if float(v).is_integer() else "metric")
    return v


def _check_kinds(df, kinds) -> dict:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame; got {type(df).__name__}.")
    kinds = dict(kinds or {})
    unknown = [c for c in kinds if c not in df.columns]
    if unknown:
        raise ValueError(f"kinds names column(s) {unknown} that df does not have; its columns are {list(df.columns)}.")
    for kind in kinds.values():
        _check_kind(kind)
    if df.columns.has_duplicates:
        raise ValueError(f"df has duplicate column names {sorted(set(df.columns[df.columns.duplicated()]))}; "
                         "rename them first.")
    return {col: kinds.get(col, column_kind(col, df[col])) for col in df.columns}
