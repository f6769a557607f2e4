"""Where the book finds its inputs: the committed ``results/`` of the checkout this package lives in.

The library reads and writes only the paths it is given; the book's pages, run from ``notebooks/`` in
JupyterLab or from the repository root by the book runner, read the committed rows through these helpers.
"""
from __future__ import annotations

from pathlib import Path

from hpstrat_lite.rows import read_rows as _read_rows

REPO = Path(__file__).resolve().parents[2]
"""The source checkout the book belongs to (``book/hpstrat_book/`` lies two folders below it)."""
RESULTS = REPO / "results"
"""The committed result rows the book reads."""


def resolve_path(path) -> Path:
    """``path`` as given when it exists or is absolute, else relative to the repository root: a notebook
    started from ``notebooks/`` (JupyterLab's folder) reads ``results/...`` as the book runner does."""
    path = Path(path)
    if path.is_absolute() or path.exists() or not (REPO / path).exists():
        return path
    return REPO / path


def read_rows(path):
    """:func:`hpstrat_lite.rows.read_rows` of ``path`` (or a list of paths) found by :func:`resolve_path`."""
    if isinstance(path, (list, tuple)):
        return _read_rows([resolve_path(p) for p in path])
    return _read_rows(resolve_path(path))
