"""Input checks shared by the statistics: one-line ``ValueError`` naming the argument, the value and what is
allowed."""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd


def check_alpha(alpha, name: str = "alpha") -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"{name} must be a number in (0, 1); got {alpha!r}.")
    return float(alpha)


def check_count(value, name: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def check_choice(value, name: str, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}; got {value!r}.")
    return value


def as_vector(values, name: str) -> np.ndarray:
    """A 1-d float array (NaN allowed); strings or nested shapes raise."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-d array of numbers; got {type(values).__name__}.") from None
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-d; got shape {v.shape}.")
    return v


def paired(a, b, names=("a", "b")) -> np.ndarray:
    """``a - b`` of two equally long vectors, pairs with a NaN dropped; with ``b=None``, ``a`` itself (the
    differences already)."""
    a = as_vector(a, names[0])
    if b is None:
        d = a
    else:
        b = as_vector(b, names[1])
        if a.shape != b.shape:
            raise ValueError(f"{names[0]} and {names[1]} must have the same length; got {a.size} and {b.size}.")
        d = a - b
    return d[~np.isnan(d)]


def check_table(table, name: str = "table", *, min_columns: int = 2) -> pd.DataFrame:
    """A DataFrame of numbers with at least ``min_columns`` columns; rows holding a NaN are dropped."""
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame (rows: units, columns: methods); "
                         f"got {type(table).__name__}.")
    if table.shape[1] < min_columns:
        raise ValueError(f"{name} must have at least {min_columns} columns (methods); got {list(table.columns)}.")
    try:
        return table.astype(float).dropna()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers only; got dtypes {sorted(set(map(str, table.dtypes)))}.") from None


def unit_name(unit) -> str:
    """``("dataset", "seed")`` -> ``"(dataset, seed)"``; a string stays as it is."""
    if isinstance(unit, str):
        return unit
    unit = tuple(unit)
    return unit[0] if len(unit) == 1 else "(" + ", ".join(map(str, unit)) + ")"
