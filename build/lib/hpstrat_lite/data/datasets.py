"""Stage 1 of the data flow: raw dataset files -> undirected simple graph (a PyG ``Data``).

Every graph of the two papers is loaded the same way:

1. find its raw files under the data root (:func:`data_root`: an explicit ``root``, else the
   ``HPSTRAT_DATA`` environment variable, else ``~/.cache/hpstrat_lite/data``), laid out as PyTorch
   Geometric expects them (``Cora/raw/ind.cora.x``, ``cornell/raw/...``, ``musae/twitch_PTBR/...``);
   if they are absent and we are online, download them from their upstream URL (into the default
   data root when that is the one in use, else into the cache: a root the user names is never written);
2. process them once, with PyG's own dataset class where one exists (``Planetoid``, ``Amazon``,
   ``Coauthor``, ``WebKB``, ``Actor``, ``HeterophilousGraphDataset``) and a small reader of our own
   where not (the yandex-format filtered Chameleon / Squirrel ``.npz``, the raw MUSAE files);
3. normalise: ``edge_index`` of the undirected simple graph (symmetrised, deduplicated, no
   self-loops, sorted by row then column, int64), ``y`` in ``0..C-1``, ``x`` float32, sparse CSR
   when the raw features are a sparse bag of words; shipped fixed splits are dropped (the project
   makes its own folds);
4. cache the result as one file in :func:`cache_root` (``HPSTRAT_CACHE``, else
   ``~/.cache/hpstrat_lite/cache``), written atomically (temporary file + ``os.replace``) under a
   per-dataset file lock, so that parallel processes sharing a read-only data root never write next
   to it and never read a half-written file.

PyG processes in a private working folder under the cache whose ``raw/`` entries are symlinks to the
raw files, so nothing is written next to them.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import shutil
import tempfile
import urllib.request
import warnings
import zipfile
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

from ..core._validate import check_bool, check_path
from ..core.homophily import node_homophily
from .._io import atomic_write, file_lock
from .feature_layout import dense_features
from .normalize import class_ids, feature_tensor, mark_canonical, simple_undirected  # noqa: F401

#: Bump when the processing below changes: cached graphs of an older version are not reused.
PROCESSING_VERSION = 1

_GEOM_GCN = "https://raw.githubusercontent.com/graphdml-uiuc-jlu/geom-gcn/master"
_PLANETOID = "https://github.com/kimiyoung/planetoid/raw/master/data"
_SHCHUR = "https://github.com/shchur/gnn-benchmark/raw/master/data/npz"
_YANDEX = "https://github.com/yandex-research/heterophilous-graphs/raw/main/data"
_SNAP = "https://snap.stanford.edu/data"


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """Where one dataset's raw files live and how to read them.

    Attributes
    ----------
    name : str
        Canonical name (``"Cora"``, ``"Roman-empire"``, ``"Twitch-PTBR"``, ...).
    kind : str
        Reader: ``planetoid``, ``amazon``, ``coauthor``, ``webkb``, ``actor``, ``heterophilous``
        (PyG classes) or ``yandex``, ``musae`` (our readers).
    folder : str
        Folder of the raw files relative to the data root (PyG layout, e.g. ``"cornell/raw"``).
    files : tuple of str
        Raw file names expected in ``folder``.
    urls : tuple of str
        Upstream URL of each file (same order as ``files``). A ``.zip`` URL is an archive holding the
        file (MUSAE graphs are published by SNAP as one archive per graph family).
    pyg_name : str or None
        The ``name`` argument of the PyG class.
    id_column, target_column : str or None
        MUSAE only: the node-id and label columns of ``target.csv``.
    """

    name: str
    kind: str
    folder: str
    files: tuple
    urls: tuple
    pyg_name: str | None = None
    id_column: str | None = None
    target_column: str | None = None

    @property
    def upstream(self) -> tuple:
        """The distinct upstream URLs, in order."""
        return tuple(dict.fromkeys(self.urls))


def _planetoid(name: str) -> DatasetSpec:
    files = tuple(f"ind.{name.lower()}.{s}" for s in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"))
    return DatasetSpec(name, "planetoid", f"{name}/raw", files, tuple(f"{_PLANETOID}/{f}" for f in files), name)


def _shchur(name: str, kind: str, file: str) -> DatasetSpec:
    return DatasetSpec(name, kind, f"{name}/raw", (file,), (f"{_SHCHUR}/{file}",), name)


def _geom_gcn(name: str, kind: str, folder: str, upstream: str) -> DatasetSpec:
    raw = ("out1_node_feature_label.txt", "out1_graph_edges.txt")
    splits = tuple(f"{upstream}_split_0.6_0.2_{i}.npz" for i in range(10))
    urls = tuple(f"{_GEOM_GCN}/new_data/{upstream}/{f}" for f in raw) + tuple(f"{_GEOM_GCN}/splits/{f}" for f in splits)
    return DatasetSpec(name, kind, folder, raw + splits, urls, name)


def _yandex(name: str, kind: str, stem: str) -> DatasetSpec:
    return DatasetSpec(name, kind, f"{stem}/raw", (f"{stem}.npz",), (f"{_YANDEX}/{stem}.npz",), name)


def _musae(name: str, folder: str, prefix: str, archive: str, id_column: str, target: str) -> DatasetSpec:
    files = tuple(f"musae_{prefix}_{s}" for s in ("edges.csv", "features.json", "target.csv"))
    return DatasetSpec(name, "musae", f"musae/{folder}", files, (f"{_SNAP}/{archive}",) * 3,
                       id_column=id_column, target_column=target)


#: The 18 datasets, in the order of the papers' tables: the 15 of HpStrat (Table 1), then the three
#: link-prediction graphs of "Does the graph matter?".
DATASETS: dict[str, DatasetSpec] = {s.name: s for s in (
    _planetoid("Cora"),
    _planetoid("CiteSeer"),
    _planetoid("PubMed"),
    _shchur("Computers", "amazon", "amazon_electronics_computers.npz"),
    _shchur("Photo", "amazon", "amazon_electronics_photo.npz"),
    _shchur("CS", "coauthor", "ms_academic_cs.npz"),
    _shchur("Physics", "coauthor", "ms_academic_phy.npz"),
    _geom_gcn("Cornell", "webkb", "cornell/raw", "cornell"),
    _geom_gcn("Texas", "webkb", "texas/raw", "texas"),
    _geom_gcn("Wisconsin", "webkb", "wisconsin/raw", "wisconsin"),
    _geom_gcn("Actor", "actor", "Actor/raw", "film"),
    _yandex("Chameleon", "yandex", "chameleon_filtered"),
    _yandex("Squirrel", "yandex", "squirrel_filtered"),
    _yandex("Roman-empire", "heterophilous", "roman_empire"),
    _yandex("Amazon-ratings", "heterophilous", "amazon_ratings"),
    _musae("Twitch-PTBR", "twitch_PTBR", "PTBR", "twitch.zip", "new_id", "mature"),
    _musae("Twitch-EN", "twitch_ENGB", "ENGB", "twitch.zip", "new_id", "mature"),
    _musae("Facebook", "facebook", "facebook", "facebook_large.zip", "id", "page_type"),
)}

#: The 15 node-classification datasets of the HpStrat paper (Table 1 order).
HPSTRAT_DATASETS: tuple = tuple(DATASETS)[:15]
#: The three MUSAE graphs of the link-prediction study ("Does the graph matter?", Section 5).
LINK_DATASETS: tuple = tuple(DATASETS)[15:]

_ALIASES = {"film": "Actor", "twitchen": "Twitch-EN", "twitchengb": "Twitch-EN", "twitchptbr": "Twitch-PTBR",
            "chameleonfiltered": "Chameleon", "squirrelfiltered": "Squirrel", "amazoncomputers": "Computers",
            "amazonphoto": "Photo", "coauthorcs": "CS", "coauthorphysics": "Physics", "facebookpagepage": "Facebook"}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


def get_spec(name) -> DatasetSpec:
    """The registry entry of a dataset; the name is matched case-insensitively, ignoring ``-``/``_``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the allowed names.
    """
    if isinstance(name, str):
        k = _key(name)
        for canonical in DATASETS:
            if _key(canonical) == k:
                return DATASETS[canonical]
        if k in _ALIASES:
            return DATASETS[_ALIASES[k]]
    raise ValueError(f"name={name!r} is not a known dataset; allowed names (case-insensitive): "
                     f"{', '.join(DATASETS)}.")


def canonical_name(name) -> str:
    """Canonical spelling of a dataset name (``"cora"`` -> ``"Cora"``); ValueError if unknown."""
    return get_spec(name).name


# ----------------------------------------------------------------------------------------------
# Folders
# ----------------------------------------------------------------------------------------------

def _env_path(var: str) -> Path | None:
    """The folder named by environment variable ``var``, made absolute (a relative value such as
    ``HPSTRAT_DATA=../shared/datasets`` is read against the current folder once, here), or None."""
    value = os.environ.get(var, "").strip()
    return Path(value).expanduser().absolute() if value else None


def data_root(root=None) -> Path:
    """The folder holding raw dataset files: ``root``, else ``$HPSTRAT_DATA``, else ``~/.cache/hpstrat_lite/data``.

    It may be read-only (a shared mirror): nothing is ever written into a root given here or by
    ``HPSTRAT_DATA``; downloads go to the default root, or to the cache when another root is in use.
    """
    if root is not None:
        return check_path(root, "root", "folder path (or None)").absolute()
    return _env_path("HPSTRAT_DATA") or _default_data_root()


def cache_root() -> Path:
    """Writable folder for processed graphs, locks and downloads: ``$HPSTRAT_CACHE``, else
    ``~/.cache/hpstrat_lite/cache`` (created if missing)."""
    path = _env_path("HPSTRAT_CACHE") or Path("~/.cache/hpstrat_lite/cache").expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"HPSTRAT_CACHE={str(path)!r} cannot be created ({err}); point HPSTRAT_CACHE at a "
                         f"writable folder.") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"HPSTRAT_CACHE={str(path)!r} is not writable; point HPSTRAT_CACHE at a writable folder.")
    return path


def _offline() -> bool:
    return os.environ.get("HPSTRAT_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _complete(folder: Path, spec: DatasetSpec) -> bool:
    return all((folder / f).is_file() for f in spec.files)


def _raw_candidates(spec: DatasetSpec, root: Path) -> list[Path]:
    """Places the raw files may be: the data root, then the cache's download folder."""
    return [root / spec.folder, cache_root() / "raw" / spec.folder]


def _find_raw(spec: DatasetSpec, root: Path) -> Path | None:
    for folder in _raw_candidates(spec, root):
        if _complete(folder, spec):
            return folder
    return None


def available_datasets(root=None) -> list[str]:
    """Names (in :data:`DATASETS` order) whose raw files are all present, in the data root or already
    downloaded into the cache; these load without a network."""
    root = data_root(root)
    return [name for name, spec in DATASETS.items() if _find_raw(spec, root) is not None]


def _missing_message(spec: DatasetSpec, root: Path, reason: str) -> str:
    folder = root / spec.folder
    missing = [f for f in spec.files if not (folder / f).is_file()]
    return (f"dataset {spec.name!r}: raw files missing under {str(folder)!r} ({reason}). Expected files: "
            f"{', '.join(missing)}. Download from: {' '.join(spec.upstream)} and place them in that folder, "
            f"or set HPSTRAT_DATA (or root=) to a data root that holds them "
            f"(online, with HPSTRAT_OFFLINE unset, they are downloaded automatically).")


def _locked(spec: DatasetSpec):
    """Exclusive per-dataset lock in the cache (``locks/<name>.lock``)."""
    return file_lock(cache_root() / "locks" / f"{_key(spec.name)}.lock")


# ----------------------------------------------------------------------------------------------
# Download
# ----------------------------------------------------------------------------------------------

def _default_data_root() -> Path:
    return Path("~/.cache/hpstrat_lite/data").expanduser()


def _download_target(spec: DatasetSpec, root: Path) -> Path:
    """Where downloads go: the default data root (ours) itself, else the cache's ``raw/`` folder.

    A data root the user named (``root=`` or ``HPSTRAT_DATA``) is never written to: it may be a
    shared mirror, and permission bits do not stop a process running as root.
    """
    base = root if root == _default_data_root() else cache_root() / "raw"
    folder = base / spec.folder
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _fetch(url: str, path: Path) -> None:
    def write(tmp):
        with urllib.request.urlopen(url, timeout=60) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    atomic_write(path, write)


def _archive_member(names: list[str], file: str) -> str:
    """The archive member holding ``file``: same base name; SNAP's Twitch archive names the features
    ``musae_<C>.json`` instead of ``musae_<C>_features.json``."""
    wanted = {file, file.replace("_features.json", ".json")}
    for member in names:
        if member.rsplit("/", 1)[-1] in wanted:
            return member
    raise FileNotFoundError(f"{file} is not in the archive")


def _download(spec: DatasetSpec, folder: Path) -> None:
    """Fetch every missing raw file of ``spec`` into ``folder`` (each written atomically)."""
    missing = [(f, u) for f, u in zip(spec.files, spec.urls) if not (folder / f).is_file()]
    archives: dict[str, list[str]] = {}
    for file, url in missing:
        if url.endswith(".zip"):
            archives.setdefault(url, []).append(file)
        else:
            _fetch(url, folder / file)
    for url, files in archives.items():
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".archive.", suffix=".zip")
        os.close(fd)
        try:
            _fetch(url, Path(tmp))
            with zipfile.ZipFile(tmp) as zf:
                names = zf.namelist()
                for file in files:
                    member = _archive_member(names, file)

                    def write(out, member=member):
                        with zf.open(member) as src, open(out, "wb") as dst:
                            shutil.copyfileobj(src, dst, 1 << 20)
                    atomic_write(folder / file, write)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


def _raw_folder(spec: DatasetSpec, root: Path, download: bool) -> Path:
    """Folder holding all raw files of ``spec``: found, else downloaded, else FileNotFoundError.

    Call with the dataset's lock held (downloads are serialised)."""
    found = _find_raw(spec, root)
    if found is not None:
        return found
    if _offline() or not download:
        why = "HPSTRAT_OFFLINE is set" if _offline() else "download=False"
        raise FileNotFoundError(_missing_message(spec, root, why))
    try:
        target = _download_target(spec, root)
        _download(spec, target)
    except (OSError, zipfile.BadZipFile, ValueError) as err:  # URLError and HTTPError are OSErrors
        raise FileNotFoundError(_missing_message(spec, root, f"download failed: {err}")) from None
    return target


# ----------------------------------------------------------------------------------------------
# Normalisation
# ----------------------------------------------------------------------------------------------

def _simplify(data: Data) -> Data:
    """Keep only ``x``, ``edge_index``, ``y`` (shipped split masks are dropped) on the simple graph."""
    n = int(data.y.numel())
    return Data(x=feature_tensor(data.x), edge_index=simple_undirected(data.edge_index, n), y=data.y.long())


# ----------------------------------------------------------------------------------------------
# Readers
# ----------------------------------------------------------------------------------------------

def _pyg_class(spec: DatasetSpec, work: Path):
    from torch_geometric import datasets as D

    kw = {"pre_transform": _simplify}
    if spec.kind == "planetoid":
        return D.Planetoid(str(work), spec.pyg_name, **kw)
    if spec.kind == "amazon":
        return D.Amazon(str(work), spec.pyg_name, **kw)
    if spec.kind == "coauthor":
        return D.Coauthor(str(work), spec.pyg_name, **kw)
    if spec.kind == "webkb":
        return D.WebKB(str(work), spec.pyg_name, **kw)
    if spec.kind == "actor":
        return D.Actor(str(work / "Actor"), **kw)
    if spec.kind == "heterophilous":
        return D.HeterophilousGraphDataset(str(work), spec.pyg_name, **kw)
    raise ValueError(f"spec.kind={spec.kind!r} has no PyG class")  # pragma: no cover


def _read_pyg(spec: DatasetSpec, raw: Path) -> Data:
    """Process with PyG's class in a private working root whose ``raw/`` links to the raw files."""
    work_parent = cache_root() / "work"
    work_parent.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{_key(spec.name)}-", dir=work_parent))
    try:
        link_dir = work / spec.folder
        link_dir.mkdir(parents=True)
        for f in spec.files:
            try:
                os.symlink((raw / f).resolve(), link_dir / f)
            except OSError:
                shutil.copy2(raw / f, link_dir / f)
        # PyG prints "Processing... Done!" to stderr (not every class takes log=False); notebooks and
        # the book build treat stderr output as an error, so keep it quiet
        with contextlib.redirect_stderr(io.StringIO()):
            return _pyg_class(spec, work)[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def read_yandex_npz(path) -> Data:
    """Read a yandex-format ``.npz`` (keys ``node_features``, ``node_labels``, ``edges`` as ``(m, 2)``
    pairs); the shipped ``train/val/test_masks`` are ignored."""
    with np.load(path) as z:
        x, y, edges = z["node_features"], z["node_labels"], z["edges"]
    return Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(edges.T.astype(np.int64)),
                y=torch.from_numpy(y.astype(np.int64)))


def read_musae(folder, prefix: str, id_column: str, target_column: str) -> Data:
    """Read a raw MUSAE graph: ``musae_<prefix>_edges.csv`` (two id columns, one row per edge),
    ``musae_<prefix>_features.json`` (node id -> list of active feature ids, a sparse binary bag over
    ``max id + 1`` features) and ``musae_<prefix>_target.csv`` (node ids in ``id_column``, the label in
    ``target_column``; labels become class ids in sorted order of the raw values, so Twitch ``mature``
    False/True -> 0/1 and Facebook ``page_type`` -> company, government, politician, tvshow)."""
    import itertools

    import pandas as pd
    import scipy.sparse as sp

    folder = Path(folder)
    target = pd.read_csv(folder / f"musae_{prefix}_target.csv")
    for col in (id_column, target_column):
        if col not in target.columns:
            raise ValueError(f"musae_{prefix}_target.csv has no column {col!r}; columns: {list(target.columns)}.")
    ids = target[id_column].to_numpy(np.int64)
    n = ids.size
    if not np.array_equal(np.sort(ids), np.arange(n)):
        raise ValueError(f"musae_{prefix}_target.csv: column {id_column!r} must hold the node ids 0..{n - 1}.")
    order = np.argsort(ids)
    y, _ = class_ids(target[target_column].to_numpy()[order])

    edges = pd.read_csv(folder / f"musae_{prefix}_edges.csv").to_numpy(np.int64)[:, :2]

    with open(folder / f"musae_{prefix}_features.json") as fh:
        feats = json.load(fh)
    rows = np.fromiter(map(int, feats.keys()), np.int64, len(feats))
    lengths = np.fromiter(map(len, feats.values()), np.int64, len(feats))
    cols = np.fromiter(itertools.chain.from_iterable(feats.values()), np.int64, int(lengths.sum()))
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"musae_{prefix}_features.json has node ids outside 0..{n - 1}.")
    d = int(cols.max()) + 1 if cols.size else 0
    bag = sp.csr_matrix((np.ones(cols.size, np.float32), (np.repeat(rows, lengths), cols)), shape=(n, d))
    bag.sum_duplicates()
    bag.data[:] = 1.0  # a feature listed twice is still one active feature
    return Data(x=bag, edge_index=torch.from_numpy(edges.T.copy()), y=y)


def _read(spec: DatasetSpec, raw: Path) -> Data:
    if spec.kind == "yandex":
        return _simplify(read_yandex_npz(raw / spec.files[0]))
    if spec.kind == "musae":
        prefix = spec.files[0][len("musae_"):-len("_edges.csv")]
        return _simplify(read_musae(raw, prefix, spec.id_column, spec.target_column))
    return _read_pyg(spec, raw)


# ----------------------------------------------------------------------------------------------
# Processed-graph cache
# ----------------------------------------------------------------------------------------------

def _cache_file(spec: DatasetSpec, raw: Path) -> Path:
    """One processed file per (dataset, raw folder, raw files' size and mtime, processing version)."""
    h = hashlib.sha1(f"{PROCESSING_VERSION}|{spec.name}|{raw.resolve()}".encode())
    for f in spec.files:
        st = (raw / f).stat()
        h.update(f"|{f}:{st.st_size}:{st.st_mtime_ns}".encode())
    folder = cache_root() / "processed"
    folder.mkdir(exist_ok=True)
    return folder / f"{_key(spec.name)}-{h.hexdigest()[:16]}.pt"


def _to_record(data: Data, name: str) -> dict:
    y, num_classes = class_ids(data.y.numpy())
    rec = {"version": PROCESSING_VERSION, "name": name, "num_classes": num_classes,
           "edge_index": data.edge_index.contiguous(), "y": y}
    x = data.x
    if x.layout == torch.sparse_csr:
        rec.update(x_crow=x.crow_indices(), x_col=x.col_indices(), x_val=x.values(),
                   x_shape=torch.tensor(tuple(x.shape)))
    else:
        rec["x"] = x.contiguous()
    return rec


def _from_record(rec: dict, sparse_features: bool = False) -> Data:
    if "x" in rec:
        x = rec["x"]
    else:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
            x = torch.sparse_csr_tensor(rec["x_crow"], rec["x_col"], rec["x_val"], size=tuple(rec["x_shape"].tolist()),
                                        check_invariants=True)
        if not sparse_features:  # dense for the user; the engine still multiplies the CSR form
            x = dense_features(x)
    data = Data(x=x, edge_index=rec["edge_index"], y=rec["y"], num_nodes=int(rec["y"].numel()))
    data.name = rec["name"]
    data.num_classes = int(rec["num_classes"])
    return mark_canonical(data)


def load_dataset(name, root=None, *, download: bool = True, sparse_features: bool = False) -> Data:
    """Load one of the 18 datasets as an undirected simple graph.

    Parameters
    ----------
    name : str
        A name from :data:`DATASETS` (case-insensitive): Cora, CiteSeer, PubMed, Computers, Photo, CS,
        Physics, Cornell, Texas, Wisconsin, Actor, Chameleon, Squirrel (filtered versions),
        Roman-empire, Amazon-ratings, Twitch-PTBR, Twitch-EN, Facebook.
    root : str or os.PathLike, optional
        Data root with the raw files in PyG layout (see :func:`data_root`); may be read-only.
    download : bool
        Download missing raw files from upstream (never when ``HPSTRAT_OFFLINE=1``).
    sparse_features : bool
        Return bag-of-words features as a sparse CSR tensor (:func:`feature_tensor`) instead of a
        dense one. Default False: ``x`` is dense, as PyG's own loaders return it; the training engine
        still multiplies the sparse form (:mod:`hpstrat_lite.data.feature_layout`), so both give the same
        numbers. The sparse form saves memory on the large bag-of-words graphs (Coauthor-Physics:
        about 1.1 GB dense).

    Returns
    -------
    torch_geometric.data.Data
        ``edge_index`` (int64, both directions of each undirected edge once, no self-loops, sorted by
        row then column), ``y`` (int64 in ``0..C-1``), ``x`` (float32, dense and strided; sparse CSR
        for bag-of-words features with ``sparse_features=True``, see :func:`feature_tensor`),
        ``num_nodes``, ``name`` (canonical) and ``num_classes``.

    Raises
    ------
    ValueError
        Unknown name (the message lists the allowed names).
    FileNotFoundError
        Raw files missing and not downloadable; names the dataset, the expected files and the URL.
    """
    spec = get_spec(name)
    check_bool(sparse_features, "sparse_features")
    root = data_root(root)
    raw = _find_raw(spec, root)
    if raw is not None:  # fast path: a finished cache file is complete (it was moved into place whole)
        path = _cache_file(spec, raw)
        if path.is_file():
            return _from_record(torch.load(path, weights_only=True), sparse_features)
    with _locked(spec):
        raw = _raw_folder(spec, root, download)
        path = _cache_file(spec, raw)
        if not path.is_file():  # another process may have finished it while we waited for the lock
            rec = _to_record(_read(spec, raw), spec.name)
            atomic_write(path, lambda tmp: torch.save(rec, tmp))
    return _from_record(torch.load(path, weights_only=True), sparse_features)


def graph_summary(data: Data) -> dict:
    """The HpStrat Table 1 statistics of a loaded graph.

    ``edges`` counts each undirected edge once; ``homophily`` is the mean node homophily
    :math:`\\frac{1}{|V'|}\\sum_{v \\in V'} h(v)` over the non-isolated nodes :math:`V'`; ``isolated``
    is the number of nodes without neighbours (their homophily is undefined).
    """
    n = int(data.num_nodes)
    h = node_homophily(data.edge_index, data.y, num_nodes=n, assume_simple=True)
    isolated = int(np.isnan(h).sum())
    return {"dataset": getattr(data, "name", None), "nodes": n, "edges": int(data.edge_index.size(1)) // 2,
            "features": int(data.x.shape[1]), "classes": int(data.num_classes),
            "homophily": float(np.nanmean(h)) if isolated < n else float("nan"), "isolated": isolated}
