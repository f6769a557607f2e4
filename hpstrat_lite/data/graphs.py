"""Stage 1 for a user's graph: a file or a PyG ``Data`` -> the same undirected simple graph as the loaders.

Every evaluation of the library (:func:`hpstrat_lite.quality_table`,
:func:`hpstrat_lite.experiments.sweep.run_experiment`, :func:`hpstrat_lite.dataset_summary`,
:func:`hpstrat_lite.audit`, the ``hpstrat`` command line) takes a dataset as

* a name of the built-in registry (:data:`hpstrat_lite.data.datasets.DATASETS`, via
  :func:`hpstrat_lite.load_dataset`),
* a path of a graph file (:func:`load_graph`: a PyG ``Data`` saved with ``torch.save``, or an ``.npz``),
* or a ``torch_geometric.data.Data``;

:func:`as_graph` turns each into the canonical graph of the data flow (HpStrat Section 3): ``edge_index``
symmetrised, deduplicated, without self-loops, sorted by row then column (int64), exactly as
:func:`hpstrat_lite.data.normalize.simple_undirected` does for the built-in datasets; ``y`` mapped to class ids
``0..C-1`` in sorted order of the raw labels; ``x`` dense ``float32`` (the engine keeps bag-of-words
features sparse inside, :mod:`hpstrat_lite.data.feature_layout`); ``num_nodes``, ``name`` and
``num_classes``. A graph that is already canonical (returned by one of these functions and unchanged
since) is returned as it is, without re-normalising.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from ..core._validate import check_bool, check_labels, check_path
from .datasets import DATASETS, DatasetSpec, data_root, get_spec, graph_summary, load_dataset
from .feature_layout import dense_features
from .normalize import class_ids, feature_tensor, is_canonical, mark_canonical, simple_undirected

#: File types :func:`load_graph` reads.
GRAPH_SUFFIXES = (".pt", ".pth", ".npz")
#: A graph without node features gets identity features (one-hot node ids, dense ``[N, N]`` float32) up to
#: this many nodes (20,000: 1.6 GB); above it :func:`as_graph` refuses it.
IDENTITY_MAX_NODES = 20_000

def is_dataset_name(obj) -> bool:
    """True for a string naming a built-in dataset (case-insensitive, see
    :func:`hpstrat_lite.data.datasets.get_spec`)."""
    if not isinstance(obj, str):
        return False
    try:
        get_spec(obj)
    except ValueError:
        return False
    return True


def is_single_graph(obj) -> bool:
    """True for one dataset (a name, a path or a ``Data``), False for a sequence of them."""
    return isinstance(obj, (str, os.PathLike, Data))


def _looks_like_path(text: str) -> bool:
    return Path(text).suffix.lower() in GRAPH_SUFFIXES or os.sep in text or "/" in text


def as_graph(dataset, root=None, *, name: str | None = None, sparse_features: bool = False) -> Data:
    """The canonical undirected simple graph of a dataset name, a graph file or a ``Data``.

    Parameters
    ----------
    dataset : str, os.PathLike or torch_geometric.data.Data
        A built-in dataset name (:func:`hpstrat_lite.load_dataset`), a path of a ``.pt`` / ``.npz``
        graph file (:func:`load_graph`), or a ``Data`` with ``edge_index`` and ``y`` (``x`` optional).
    root : path, optional
        Data root of the built-in datasets.
    name : str, optional
        Name of a user's graph in result rows. Default: ``data.name`` when it is a string, the file's
        stem for a file, else ``graph-<hash>`` (a hash of ``edge_index`` and ``y``, so rows written for
        one graph are never taken for another's when a run resumes).
    sparse_features : bool
        Keep bag-of-words features as a sparse CSR tensor (see :func:`hpstrat_lite.load_dataset`).

    Returns
    -------
    torch_geometric.data.Data
        ``x`` (float32), ``edge_index`` (the undirected simple graph, int64, sorted), ``y`` (int64 in
        ``0..C-1``), ``num_nodes``, ``name``, ``num_classes``. Directed edges are symmetrised,
        duplicate edges counted once and self-loops dropped, as for the built-in datasets; string labels
        are encoded as scikit-learn's ``LabelEncoder`` encodes them (sorted unique values -> ``0..C-1``).
        What changed is counted in :func:`graph_changes`. A ``Data`` without ``x`` gets identity features
        (one-hot node ids, ``[N, N]``) with a ``UserWarning``, up to :data:`IDENTITY_MAX_NODES` nodes.

    Raises
    ------
    ValueError
        An unknown dataset name; a ``Data`` without ``y`` or ``edge_index``, with non-integer or
        negative labels, without ``x`` and more than :data:`IDENTITY_MAX_NODES` nodes, with node ids outside ``0..N-1`` or features of the wrong shape (the message
        names which).
    FileNotFoundError
        A path that does not exist.
    """
    if isinstance(dataset, Data):
        if is_canonical(dataset) and (name is None or name == getattr(dataset, "name", None)):
            return dataset
        return canonical_graph(dataset, name=name, sparse_features=sparse_features)
    if isinstance(dataset, str) and is_dataset_name(dataset):
        return load_dataset(dataset, root=root, sparse_features=sparse_features)
    if isinstance(dataset, os.PathLike) or (isinstance(dataset, str) and (_looks_like_path(dataset)
                                                                          or Path(dataset).is_file())):
        return load_graph(dataset, name=name, sparse_features=sparse_features)
    if isinstance(dataset, str):
        raise ValueError(f"dataset={dataset!r} is not a known dataset and not a graph file; allowed: a name "
                         f"(case-insensitive: {', '.join(DATASETS)}), a path of a {' / '.join(GRAPH_SUFFIXES)} "
                         f"file, or a torch_geometric.data.Data.")
    raise ValueError(f"dataset={dataset!r} is not a known dataset, a graph file or a Data; allowed: a name "
                     f"(case-insensitive: {', '.join(DATASETS)}), a path (str or os.PathLike) of a "
                     f"{' / '.join(GRAPH_SUFFIXES)} file, or a torch_geometric.data.Data; got a "
                     f"{type(dataset).__name__}.")


def load_graph(path, *, name: str | None = None, sparse_features: bool = False) -> Data:
    """A user's graph from a file, as the same undirected simple graph :func:`hpstrat_lite.load_dataset`
    returns.

    Two formats:

    * ``.pt`` / ``.pth``: a ``torch_geometric.data.Data`` saved with ``torch.save`` (or a dict with
      the keys below). The file is unpickled: load only files you trust.
    * ``.npz`` (``numpy.savez``): ``edges`` (``[E, 2]`` node pairs) or ``edge_index`` (``[2, E]``);
      ``node_labels`` or ``y`` (one integer label per node); optionally ``node_features`` or ``x``
      (``[N, F]``). This is the layout of the filtered Chameleon / Squirrel and Roman-empire files.

    Edges may be directed or repeated: the graph is made undirected and simple (:func:`as_graph`).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    name : str, optional
        Name of the graph in result rows (default: the file name without its suffix).
    sparse_features : bool
        Keep bag-of-words features sparse (see :func:`hpstrat_lite.load_dataset`).

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        An unsupported suffix, an unreadable file, a missing key (the message names the file, the key
        and the keys present), or bad contents (see :func:`as_graph`).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "toy.npz")
    >>> np.savez(f, edges=np.array([[0, 1], [1, 2], [1, 0]]), node_labels=np.array([0, 0, 1]))
    >>> g = load_graph(f)
    >>> g.name, g.edge_index.tolist(), g.num_classes
    ('toy', [[0, 1, 1, 2], [1, 0, 2, 1]], 2)
    """
    path = check_path(path, "path", "file path")
    suffix = path.suffix.lower()
    if not path.is_file():
        raise FileNotFoundError(f"graph file {str(path)!r} does not exist"
                                + (" (it is a folder)" if path.is_dir() else "")
                                + f"; expected a {' / '.join(GRAPH_SUFFIXES)} file.")
    if suffix not in GRAPH_SUFFIXES:
        raise ValueError(f"graph file {str(path)!r} has suffix {suffix!r}; allowed: {', '.join(GRAPH_SUFFIXES)} "
                         f"(a torch.save'd Data, or an .npz with edges / edge_index and node_labels / y).")
    name = path.stem if name is None else name
    if suffix == ".npz":
        with open(path, "rb") as fh:
            head = fh.read(4)
        if head not in (b"PK\x03\x04", b"PK\x05\x06"):  # numpy.savez writes a zip archive
            raise ValueError(f"graph file {str(path)!r} is not an .npz archive (numpy.savez writes a zip file; this "
                             f"one starts with {head!r}); save the arrays with numpy.savez(path, edges=..., "
                             f"node_labels=..., node_features=...).")
        try:
            with np.load(path, allow_pickle=False) as z:
                fields = {k: z[k] for k in z.files}
        except Exception as err:  # zipfile.BadZipFile, OSError, ValueError: not an npz
            raise ValueError(f"graph file {str(path)!r} cannot be read as .npz: {type(err).__name__}: {err}") from None
        return canonical_graph(_data_from_fields(fields, str(path)), name=name, sparse_features=sparse_features)
    try:
        obj = torch.load(path, weights_only=False, map_location="cpu")
    except Exception as err:  # pickle errors, RuntimeError for a non-torch file
        raise ValueError(f"graph file {str(path)!r} cannot be read with torch.load: {type(err).__name__}: "
                         f"{err}") from None
    if isinstance(obj, dict):
        obj = _data_from_fields(obj, str(path))
    if not isinstance(obj, Data):
        raise ValueError(f"graph file {str(path)!r} holds a {type(obj).__name__}; expected a "
                         f"torch_geometric.data.Data (torch.save(data, path)) or a dict of its tensors.")
    return canonical_graph(obj, name=name, sparse_features=sparse_features)


def _data_from_fields(fields: dict, where: str) -> Data:
    """A ``Data`` from the arrays of an ``.npz`` (or a saved dict): see :func:`load_graph`."""
    def pick(*keys, required=True):
        for key in keys:
            if key in fields and fields[key] is not None:
                return key, fields[key]
        if required:
            raise ValueError(f"graph file {where!r} has no key {' or '.join(map(repr, keys))}; it has "
                             f"{sorted(fields)}.")
        return None, None

    key, edges = pick("edge_index", "edges")
    edges = torch.as_tensor(np.asarray(edges) if not torch.is_tensor(edges) else edges)
    if key == "edges":
        if edges.dim() != 2 or edges.shape[1] != 2:
            raise ValueError(f"graph file {where!r}: edges must have shape [E, 2] (one node pair per row); got "
                             f"{tuple(edges.shape)}.")
        edges = edges.t()
    elif edges.dim() != 2 or edges.shape[0] != 2:
        raise ValueError(f"graph file {where!r}: edge_index must have shape [2, E]; got {tuple(edges.shape)}.")
    _, y = pick("y", "node_labels")
    _, x = pick("x", "node_features", required=False)
    y = y if torch.is_tensor(y) else np.asarray(y)
    if isinstance(y, np.ndarray) and y.dtype.kind not in "USO":  # string labels are encoded by canonical_graph
        y = torch.as_tensor(y)
    data = Data(edge_index=edges, y=y, num_nodes=int(y.shape[0]) if len(y.shape) else None)
    if x is not None:
        data.x = x if torch.is_tensor(x) else torch.as_tensor(np.asarray(x))
    return data


def _graph_hash(edge_index: torch.Tensor, y: torch.Tensor) -> str:
    digest = hashlib.sha1(edge_index.contiguous().numpy().tobytes())
    digest.update(y.contiguous().numpy().tobytes())
    return digest.hexdigest()[:8]


def graph_changes(graph: Data) -> dict:
    """What :func:`as_graph` changed in a user's graph to make it canonical: ``self_loops`` and
    ``duplicate_edges`` dropped, ``reverse_edges`` added (directed edges made undirected), ``labels``
    (``None``, or the raw labels in the order of their new ids ``0..C-1`` when they were relabelled or
    encoded) and ``identity_features`` (no ``x`` was given). Empty for a built-in dataset.

    Examples
    --------
    >>> d = Data(edge_index=torch.tensor([[0, 0, 1, 1], [0, 1, 2, 2]]), y=torch.tensor([0, 2, 5]),
    ...          x=torch.ones(3, 1))
    >>> c = graph_changes(as_graph(d))
    >>> c["self_loops"], c["duplicate_edges"], c["reverse_edges"], c["labels"]
    (1, 1, 2, [0, 2, 5])
    """
    return dict(graph.__dict__.get("_changes", {}))


def _encode_labels(y):
    """String (or object) labels encoded as scikit-learn's ``LabelEncoder`` does: sorted unique values ->
    ``0..C-1``; returns ``(codes, classes)``, or ``(y, None)`` for labels that are not strings."""
    if isinstance(y, (list, tuple)):
        y = np.asarray(y)
    if not isinstance(y, np.ndarray) or y.dtype.kind not in "USO":
        return y, None
    if y.dtype.kind == "O":
        strings = [isinstance(v, str) for v in y.ravel()]
        if not any(strings):
            return np.asarray(y.tolist()), None
        if not all(strings):
            kinds = sorted({type(v).__name__ for v in y.ravel()})
            raise ValueError(f"data.y mixes label types {kinds}; give one class label per node, all strings or all "
                             f"integers.")
    classes, codes = np.unique(y.astype(str), return_inverse=True)
    return torch.from_numpy(codes.reshape(y.shape).astype(np.int64)), classes.tolist()


def _edge_changes(ei: torch.Tensor, simple: torch.Tensor, n: int) -> dict:
    """Self-loops and repeated edges of ``ei`` dropped, and reverse edges added, to give ``simple``."""
    if ei is simple:
        return {"self_loops": 0, "duplicate_edges": 0, "reverse_edges": 0}
    ei = ei.numpy()
    loop = ei[0] == ei[1]
    unique = np.unique(ei[0, ~loop].astype(np.int64) * n + ei[1, ~loop]).size
    return {"self_loops": int(loop.sum()), "duplicate_edges": int((~loop).sum() - unique),
            "reverse_edges": int(simple.shape[1] - unique)}


def _identity_features(n: int, name) -> torch.Tensor:
    """Identity features for a graph without ``x``: a warning, or a refusal above :data:`IDENTITY_MAX_NODES`."""
    gigabytes = 4 * n * n / 1e9
    if n > IDENTITY_MAX_NODES:
        raise ValueError(f"graph {name!r} has no node features (data.x is missing) and {n} nodes: identity features "
                         f"would take {gigabytes:.1f} GB ([N, N] float32); allowed up to {IDENTITY_MAX_NODES} nodes. "
                         f"Give data.x (e.g. degree or structural features).")
    warnings.warn(f"graph {name!r} has no node features (data.x is missing): identity features (one-hot node ids, "
                  f"[{n}, {n}], {gigabytes:.2g} GB) stand in; a model then learns node ids, not node features.",
                  UserWarning, stacklevel=4)
    return torch.eye(n)


def canonical_graph(data: Data, *, name: str | None = None, sparse_features: bool = False) -> Data:
    """A user's ``Data`` as the canonical undirected simple graph (see :func:`as_graph`); a new ``Data``
    whose ``edge_index`` and ``y`` are the input's own tensors when they were canonical already."""
    if not isinstance(data, Data):
        raise ValueError(f"data must be a torch_geometric.data.Data; got {type(data).__name__}.")
    check_bool(sparse_features, "sparse_features")
    y = getattr(data, "y", None)
    if y is None:
        raise ValueError("data has no node labels: data.y is missing; set data.y to one integer class label per "
                         "node (a LongTensor of shape [num_nodes]).")
    y, encoded = _encode_labels(y)
    y = torch.as_tensor(y) if not isinstance(y, np.ndarray) else torch.from_numpy(y)
    if y.dim() == 2 and y.shape[1] == 1:
        y = y.view(-1)
    if y.dim() != 1:
        raise ValueError(f"data.y must hold one class label per node (shape [num_nodes]); got shape "
                         f"{tuple(y.shape)} (multi-label or one-hot targets are not supported: pass class ids).")
    n = int(data.num_nodes) if "num_nodes" in data else int(y.numel())  # else one node per label
    labels = check_labels(y.cpu(), n, name="data.y")  # integer-valued, no NaN, non-negative, one per node
    y_new, num_classes = class_ids(labels)
    relabelled = None if int(labels.max()) + 1 == num_classes else np.unique(labels).tolist()
    y_new = y.cpu() if y.dtype == torch.int64 and torch.equal(y_new, y.cpu()) else y_new  # keep the caller's

    ei = getattr(data, "edge_index", None)
    if ei is None:
        raise ValueError("data has no edges: data.edge_index is missing; set it to a [2, E] tensor of node ids.")
    ei = torch.as_tensor(ei) if not isinstance(ei, np.ndarray) else torch.from_numpy(ei)
    if ei.dim() != 2 or ei.shape[0] != 2:
        raise ValueError(f"data.edge_index must have shape [2, E]; got shape {tuple(ei.shape)}.")
    if ei.is_floating_point() or ei.dtype == torch.bool or ei.is_complex():
        raise ValueError(f"data.edge_index must hold integer node ids; got dtype {ei.dtype}.")
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        raise ValueError(f"data.edge_index holds node ids in [{int(ei.min())}, {int(ei.max())}] but the graph has "
                         f"{n} nodes (len(data.y)); ids must lie in 0..{n - 1}.")
    ei = ei.cpu()
    simple = simple_undirected(ei, n)
    if ei.dtype == torch.int64 and torch.equal(simple, ei):
        simple = ei  # already the undirected simple graph: keep the caller's tensor

    if name is None:
        name = data.name if isinstance(getattr(data, "name", None), str) else f"graph-{_graph_hash(simple, y_new)}"
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string; got {name!r}.")
    x = getattr(data, "x", None)
    if x is None:
        x = _identity_features(n, name)
    else:
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(x)
        if not (torch.is_tensor(x) or hasattr(x, "tocsr")):
            raise ValueError(f"data.x must be a tensor (or array) of node features; got {type(x).__name__}.")
        if len(x.shape) != 2 or x.shape[0] != n:
            raise ValueError(f"data.x must have shape [num_nodes, num_features] = [{n}, F]; got {tuple(x.shape)}.")
        if torch.is_tensor(x) and (x.dtype == torch.bool or x.is_complex()):
            x = x.to(torch.float32) if x.dtype == torch.bool else x
            if x.is_complex():
                raise ValueError(f"data.x must hold real numbers; got dtype {x.dtype}.")
        if torch.is_tensor(x) and x.layout == torch.strided and not bool(torch.isfinite(x.float()).all()):
            raise ValueError("data.x holds NaN or infinite values; every feature must be a finite number.")
        if torch.is_tensor(x):
            x = x.detach().cpu()
    x = feature_tensor(x)  # float32; CSR when a sparse bag of words, as for the built-in datasets
    if not sparse_features:
        x = dense_features(x)
    out = Data(x=x, edge_index=simple, y=y_new, num_nodes=n)
    out.name = name
    out.num_classes = num_classes
    out.__dict__["_changes"] = {**_edge_changes(ei, simple, n), "labels": encoded or relabelled,
                    "identity_features": getattr(data, "x", None) is None}
    return mark_canonical(out)


def dataset_summary(names=None, root=None, *, download: bool = False):
    """HpStrat Table 1 for several datasets, one row each (default: all 18).

    ``names`` holds dataset names, paths of graph files (:func:`load_graph`) or
    ``Data`` objects (:func:`as_graph`), or is one of them. Columns: ``dataset``, ``nodes``, ``edges`` (undirected, each counted once), ``features``,
    ``classes``, ``homophily`` (mean node homophily, isolated nodes excluded), ``isolated`` and
    ``status`` (``"ok"``, or ``"missing: ..."`` for a dataset whose raw files are absent; such a row
    has empty statistics instead of an error). Nothing is downloaded unless ``download=True``.
    """
    names = list(DATASETS) if names is None else [names] if is_single_graph(names) else list(names)
    # unknown names fail before any loading; a user's graph (path or Data) is read and checked here
    specs = [get_spec(n) if is_dataset_name(n) else as_graph(n) for n in names]
    rows = []
    for spec in specs:
        if not isinstance(spec, DatasetSpec):
            rows.append({**graph_summary(spec), "status": "ok"})
            continue
        try:
            # the summary reads the features' shape only: the sparse form skips densifying a bag of words
            row = {**graph_summary(load_dataset(spec.name, root, download=download, sparse_features=True)),
                   "status": "ok"}
        except FileNotFoundError:
            folder = data_root(root) / spec.folder
            row = {"dataset": spec.name, "status": f"missing: {len(spec.files)} raw file(s) under {folder} "
                                                   f"(from {spec.upstream[0]})"}
        rows.append(row)
    df = pd.DataFrame(rows, columns=["dataset", "nodes", "edges", "features", "classes", "homophily",
                                     "isolated", "status"])
    for col in ("nodes", "edges", "features", "classes", "isolated"):
        df[col] = df[col].astype("Int64")
    df["homophily"] = df["homophily"].astype(float)
    return df
