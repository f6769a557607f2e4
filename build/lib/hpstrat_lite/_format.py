"""Numbers rounded to the precision that carries meaning: the one rule set the audit's text and the book's
pages share (the book's :mod:`hpstrat_book.display` documents the table of kinds)."""
from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

#: The kinds of value and how many decimals (``"d"``) or significant digits (``"s"``) each keeps.
KINDS = {"homophily": ("d", 2), "fold homophily": ("d", 3), "accuracy": ("d", 1), "p": ("s", 2), "metric": ("s", 3),
         "rank": ("d", 2), "integer": ("d", 0), "share": ("%", 0), "text": None, "code": None}
NA = "n/a"


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
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple, set)):
        return ", ".join(format_number(v, kind=kind) for v in value) if value else "—"
    if isinstance(value, dict):
        return ", ".join(f"{str(k).replace('_', ' ')} {format_number(v, kind=kind)}" for k, v in value.items()) or "—"
    if kind in ("text", "code") or isinstance(value, str):
        return str(value)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT:
        return NA
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
    elif mode == "%":
        text = f"{x:.{n}%}"
    else:
        text = f"{x:.{n}f}"
    if text.startswith("-") and float(text.rstrip("%")) == 0:  # -0.00 -> 0.00
        text = text[1:]
    return text


def findings_box(bullets, *, source: str = "this page's rows", closing: str | None = None) -> str:
    """A "Key findings" box as Markdown: the heading says what the bullets are computed from (``source``), one
    bullet per finding (an empty list says there is none yet), then an optional ``closing`` line."""
    bullets = [str(b) for b in bullets]
    if not bullets:
        return f"**Key findings.** Nothing is computed from {source} yet."
    lines = [f"**Key findings** (computed from {source}):", "", *(f"- {b}" for b in bullets)]
    closing = closing or None
    return "\n".join(lines + (["", closing] if closing else []))
