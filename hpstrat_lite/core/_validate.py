"""Input checks shared by every stage.

Each check raises ``ValueError`` whose message names the argument, the offending value and what is
allowed, so that a user never sees an ``assert`` or a traceback from deep inside numpy or torch.
"""
from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np


def to_numpy(a) -> np.ndarray:
    """Return a numpy view of a numpy array, torch tensor or sequence (torch sparse is not accepted)."""
    if hasattr(a, "detach") and hasattr(a, "cpu"):  # torch.Tensor without importing torch here
        return a.detach().cpu().numpy()
    return np.asarray(a)


def edge_array(edge_index) -> np.ndarray:
    """``edge_index`` as a numpy array of shape (2, m) holding integers (a view where it can be)."""
    ei = to_numpy(edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, m); got shape {ei.shape}.")
    if ei.shape[1] and not np.issubdtype(ei.dtype, np.integer):
        raise ValueError(f"edge_index must hold integer node ids; got dtype {ei.dtype}.")
    return ei


def check_node_ids(ei: np.ndarray, n: int) -> None:
    """Raise when an edge of ``ei`` names a node id outside ``0..n-1``."""
    lo, hi = ei.min(), ei.max()
    if lo < 0 or hi >= n:
        raise ValueError(f"edge_index holds node ids in [{lo}, {hi}] but num_nodes={n}; "
                         f"ids must lie in 0..{n - 1}.")


def check_edge_index(edge_index, n: int) -> np.ndarray:
    """``edge_index`` checked (shape (2, m), integer ids in ``0..n-1``) as an int64 numpy array."""
    ei = edge_array(edge_index)
    if ei.shape[1]:
        check_node_ids(ei, n)
    return ei.astype(np.int64, copy=False)


def check_labels(y, n: int | None = None, name: str = "y") -> np.ndarray:
    """Validate class labels: 1-D, integer-valued, non-negative, no NaN, optionally of length ``n``.

    Returns the labels as an ``int64`` numpy array.
    """
    arr = to_numpy(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of class labels; got shape {arr.shape}.")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but the graph has {n} nodes; "
                         f"{name} needs one label per node.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: the graph has no nodes; at least one node is needed.")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integer class labels 0..C-1; got dtype {arr.dtype}.")
    if np.issubdtype(arr.dtype, np.floating):
        nan = np.isnan(arr)
        if nan.any():
            raise ValueError(f"{name} contains NaN at {int(nan.sum())} node(s) (first index "
                             f"{int(np.flatnonzero(nan)[0])}); every node needs an integer class label 0..C-1.")
        if not np.all(arr == np.round(arr)):
            bad = arr[arr != np.round(arr)][0]
            raise ValueError(f"{name} must hold integer class labels 0..C-1; got non-integer value {bad}.")
    arr = arr.astype(np.int64, copy=False)
    if arr.min() < 0:
        raise ValueError(f"{name} must hold non-negative class labels 0..C-1; got {int(arr.min())}.")
    return arr


def check_k(k, n: int | None, name: str = "k") -> int:
    """Validate the number of folds: an integer with 3 <= k <= n (a round needs train, val and test);
    ``n=None`` (the graph not loaded yet) checks the lower bound only."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= 3; got {k!r}.")
    k = int(k)
    if k < 3:
        raise ValueError(f"{name}={k} is too small: a round needs a train, a validation and a test fold, "
                         f"so {name} must be >= 3.")
    if n is not None and k > n:
        raise ValueError(f"{name}={k} is larger than the number of nodes n={n}; {name} must be in 3..{n}.")
    return k


def check_int(value, name: str, low: int = 1, high: int | None = None, allow_none: bool = False,
              hint: str = "") -> int | None:
    """Validate an integer count or size: a Python/numpy integer (``bool`` is refused) with
    ``low <= value`` (and ``value <= high`` when ``high`` is given). ``None`` passes through when
    ``allow_none``; ``hint`` is appended to the allowed range in the message.

    Returns the value as ``int`` (or None). The one integer check behind every stage's arguments
    (epochs, trials, seeds per batch, threads, graph sizes), so they all read alike:
    ``"n_eval must be an integer >= 1; got 0."``
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low or (
            high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} must be {'None or ' if allow_none else ''}an integer {allowed}{hint}; "
                         f"got {value!r}.")
    return int(value)


def check_n_bins(n_bins, name: str = "n_bins") -> int:
    """Validate the number of homophily bins: an integer >= 1."""
    return check_int(n_bins, name, 1)


def check_homophily(homophily, n: int | None, name: str = "homophily") -> np.ndarray:
    """Validate node homophily: 1-D floats of length ``n`` (any length when ``None``) in [0, 1] or NaN
    (isolated nodes)."""
    h = to_numpy(homophily).astype(np.float64, copy=False)
    if h.ndim != 1 or (n is not None and h.shape[0] != n):
        length = "" if n is None else f" (length {n})"
        raise ValueError(f"{name} must be a 1-D array with one value per node{length}; got shape {h.shape}.")
    lo, hi = np.fmin.reduce(h, initial=np.inf), np.fmax.reduce(h, initial=-np.inf)  # NaN left out, no copy
    if lo < 0 or hi > 1:
        raise ValueError(f"{name} values must lie in [0, 1] (NaN for isolated nodes); got range [{lo}, {hi}].")
    return h


def check_covariate(covariate, n: int | None, name: str = "covariate") -> np.ndarray:
    """A node covariate: 1-D real numbers, one per node (length ``n`` when given), NaN allowed, no inf."""
    c = to_numpy(covariate)
    if c.dtype == bool or not (np.issubdtype(c.dtype, np.integer) or np.issubdtype(c.dtype, np.floating)):
        raise ValueError(f"{name} must hold real numbers, one per node; got dtype {c.dtype}.")
    c = c.astype(np.float64, copy=False)
    if c.ndim != 1 or (n is not None and c.shape[0] != n):
        length = "" if n is None else f" (length {n})"
        raise ValueError(f"{name} must be a 1-D array with one value per node{length}; got shape {c.shape}.")
    if np.isinf(c).any():
        raise ValueError(f"{name} contains an infinite value at node {int(np.flatnonzero(np.isinf(c))[0])}; "
                         f"use NaN for a node without a value.")
    return c


def check_folds(folds, k: int, n: int | None = None, name: str = "folds") -> np.ndarray:
    """Validate a fold-id array: 1-D integers in 0..k-1 (of length ``n`` when given)."""
    f = to_numpy(folds)
    if f.ndim != 1 or (n is not None and f.shape[0] != n):
        raise ValueError(f"{name} must be a 1-D array of fold ids with one entry per node"
                         f"{'' if n is None else f' (length {n})'}; got shape {f.shape}.")
    if not np.issubdtype(f.dtype, np.integer):
        raise ValueError(f"{name} must hold integer fold ids 0..{k - 1}; got dtype {f.dtype}.")
    if f.size and (f.min() < 0 or f.max() >= k):
        raise ValueError(f"{name} must hold fold ids in 0..{k - 1} (k={k}); got range [{f.min()}, {f.max()}].")
    return f.astype(np.int64, copy=False)


def check_seeds(seeds, name: str = "seeds") -> list[int]:
    """Validate a non-empty sequence of split seeds (one int is one seed): integers >= 0, as a list."""
    seeds = [seeds] if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool) else list(seeds)
    if not seeds:
        raise ValueError(f"{name} must name at least one split seed; got none.")
    return [check_int(s, name, 0) for s in seeds]


def check_seed(seed, name: str = "seed") -> np.random.Generator:
    """Turn an int seed or a ``numpy.random.Generator`` into a Generator (no global RNG state)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative integer or a numpy.random.Generator; got {seed!r}.")
    return np.random.default_rng(int(seed))


def check_choice(value, name: str, allowed):
    """``value`` if it is one of ``allowed``, else a ``ValueError`` naming the argument and the choices."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}; got {value!r}.")
    return value


def check_real(value, name: str, low: float, high: float, high_open: bool = False,
               low_open: bool = False, allow_none: bool = False) -> float | None:
    """``value`` as a float if it is a finite real number in ``[low, high]`` (``high_open`` / ``low_open``
    exclude an end: ``low=0, high=inf, low_open=True`` is "positive"), else a ``ValueError`` naming the
    argument and the range: ``"dropout must be a number in [0, 1); got 1.0."``, ``"lr must be a number > 0;
    got 0."``. ``None`` passes through when ``allow_none``."""
    import math

    if value is None and allow_none:
        return None
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (low < value if low_open else low <= value) and (value < high if high_open else value <= high)
    if not ok:
        if math.isinf(high):
            allowed = f"{'>' if low_open else '>='} {low:g}"
        else:
            allowed = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be {'None or ' if allow_none else ''}a number {allowed}; got {value!r}.")
    return float(value)


def check_bool(value, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy's bool too), else a ``ValueError`` naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def check_path(value, name: str, what: str = "path") -> Path:
    """``value`` as an expanded ``pathlib.Path`` if it is a ``str`` or ``os.PathLike`` (not empty), else a
    ``ValueError`` naming the argument; ``what`` says which kind of path ("file path", "folder path")."""
    import os

    if not isinstance(value, (str, os.PathLike)) or not str(value):
        shown = value if isinstance(value, (str, type(None), numbers.Number)) else type(value).__name__
        raise ValueError(f"{name} must be a {what} (str or os.PathLike); got {shown!r}.")
    return Path(value).expanduser()


def check_training_fields(protocol, *, feature_norms=(None, "row", "standard")) -> dict:
    """The training fields of a :class:`hpstrat_lite.protocol.Protocol` after checking them (``hidden``,
    ``num_layers``, ``dropout`` in [0, 1), ``lr`` > 0, ``weight_decay`` >= 0, ``max_epochs``, ``patience``
    (``None`` allowed), ``feature_norm`` one of ``feature_norms``); returns the first seven by name. Numpy-only,
    so a sweep checks a protocol before torch is loaded, with the messages :func:`train_runs
    <hpstrat_lite.engine.train.train_runs>` gives."""
    fields = {"hidden": check_int(protocol.hidden, "hidden", 1),
              "num_layers": check_int(protocol.num_layers, "num_layers", 1),
              "dropout": check_real(protocol.dropout, "dropout", 0.0, 1.0, high_open=True),
              "lr": check_real(protocol.lr, "lr", 0.0, float("inf"), low_open=True),
              "weight_decay": check_real(protocol.weight_decay, "weight_decay", 0.0, float("inf")),
              "max_epochs": check_int(protocol.max_epochs, "max_epochs", 1),
              "patience": check_int(protocol.patience, "patience", 1, allow_none=True)}
    check_choice(protocol.feature_norm, "feature_norm", feature_norms)
    return fields
