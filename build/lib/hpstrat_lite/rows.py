"""Result files under ``results/``: rows written only by the library's runners.

Every row carries the code version (package version + git commit) and the run's parameters, so a
reader can trace and regenerate it. New rows are appended under a file lock (several processes may
append to one file); a file is created, or rewritten when new rows bring new columns, atomically
(temporary file in the same folder, then ``os.replace``). A runner killed while appending can leave at most
a partial last line: readers skip it and the next append cuts it off, so no earlier row is ever lost and a
restarted runner resumes.
"""
from __future__ import annotations

import csv
import functools
import io
import os
import subprocess
from pathlib import Path

import pandas as pd

from ._io import atomic_write, file_lock
from ._names import model_name
from ._version import __version__
from .protocol import PAPER_PROTOCOL


def results_dir(folder=None) -> Path:
    """Where a runner writes: ``folder`` when given, else ``results/`` in the current working directory, taken
    at the call (never the installed package's folder nor a source checkout's tree).

    >>> results_dir("/tmp/mine")
    PosixPath('/tmp/mine')
    """
    return Path(folder) if folder is not None else Path.cwd() / "results"


@functools.lru_cache(maxsize=None)
def code_version() -> str:
    """``<package version>+<git short commit>[.dirty]`` of the library, or the version alone outside git.

    A copy of a checkout sent elsewhere (the tree sent to a GPU machine, say, which may carry no ``.git``
    or an older one) names its commit in ``$HPSTRAT_COMMIT``; when that is set it wins, and rows read
    ``<version>+<commit>.copy``.

    Taken once per process, when a runner first asks (runners ask before training anything), and cached:
    a long run stamps its rows with the commit of the code it started with, even if the checkout moves on
    while it runs. Importing the library runs no ``git``."""
    copied = os.environ.get("HPSTRAT_COMMIT", "").strip()
    if copied:
        return f"{__version__}+{copied}.copy"
    here = Path(__file__).resolve().parent  # the package folder
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here, capture_output=True,
                               text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return __version__
    if not commit:
        return __version__
    return f"{__version__}+{commit}{'.dirty' if dirty else ''}"



def with_model_names(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its ``model`` column in :func:`model_name`'s spelling (rows written with ``"gcn"`` read as
    ``"GCN"``); ``df`` itself when there is nothing to change."""
    if df is None or "model" not in getattr(df, "columns", ()) or df.empty:
        return df
    names = {m: model_name(m) for m in df["model"].dropna().unique()}
    if all(k == v for k, v in names.items()):
        return df
    df = df.copy()
    df["model"] = df["model"].map(lambda m: names.get(m, m))
    return df


def checkpoint_dir(results):
    """``.<name>.checkpoints/`` beside a results file (None without one): where the runners that write it
    keep their batches' training checkpoints (:func:`hpstrat_lite.engine.train.train_runs`), so a killed
    run continues from its last checkpoint."""
    if results is None:
        return None
    results = Path(results)
    return results.parent / f".{results.stem}.checkpoints"


def read_rows(path) -> pd.DataFrame:
    """Rows of a results CSV, or an empty frame when the file does not exist yet. Model names read in
    :func:`model_name`'s spelling (``"GCN"`` in both parts, whichever spelling a row was written with).

    ``path`` may also be a list of files (say the seed-0 sweep and the seeds 1-5 sweep of one
    protocol): their rows, concatenated in order; missing files add none. A relative path is read from the
    working directory. A last line without its
    newline (a writer killed mid-append, or one still writing) is not a row yet and is skipped."""
    if isinstance(path, (list, tuple)):
        frames = [f for f in (read_rows(p) for p in path) if not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    path = Path(path)
    if not path.exists():
        return pd.DataFrame()
    data = path.read_bytes()
    complete = data[:data.rfind(b"\n") + 1]
    if not complete.strip():
        return pd.DataFrame()
    return with_model_names(pd.read_csv(io.BytesIO(complete)))


#: The scores of a node-classification run row, by name, and the suffix of their columns (``val_<suffix>``,
#: ``test_<suffix>``). Sweep and audit rows record all four; rows written before that hold accuracy only.
METRICS = {"accuracy": "acc", "balanced_accuracy": "balanced_acc", "macro_f1": "macro_f1", "roc_auc": "roc_auc"}


def score_column(rows: pd.DataFrame, metric: str) -> str:
    """The column of ``rows`` holding the test score ``metric`` (a key of :data:`METRICS`):
    ``"balanced_accuracy"`` -> ``"test_balanced_acc"``.

    Raises ``ValueError`` for an unknown metric, and for rows that lack the column or a value in it (rows
    written before runs recorded that metric), naming the metrics every row of ``rows`` does hold.

    >>> score_column(pd.DataFrame({"test_acc": [0.8], "test_roc_auc": [0.9]}), "roc_auc")
    'test_roc_auc'
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}; got {metric!r}.")
    column = f"test_{METRICS[metric]}"
    if column not in rows.columns or rows[column].isna().any():
        held = [m for m, suffix in METRICS.items()
                if f"test_{suffix}" in rows.columns and rows[f"test_{suffix}"].notna().all()]
        missing = len(rows) if column not in rows.columns else int(rows[column].isna().sum())
        raise ValueError(f"metric={metric!r}: {missing} of the {len(rows)} rows have no {column!r} (rows written "
                         f"before runs recorded it); every row holds the metrics {held}: pass one of them, or "
                         "rerun the sweep.")
    return column


#: The :class:`hpstrat_lite.protocol.Protocol` fields a run row records besides ``k``, ``n_bins``,
#: ``max_epochs`` and ``patience``. Rows written before they were recorded hold none of them and were all
#: trained with :data:`hpstrat_lite.protocol.PAPER_PROTOCOL`: :func:`with_training_columns` reads them so.
TRAINING_COLUMNS = ("lr", "weight_decay", "hidden", "num_layers", "dropout", "feature_norm")


def training_values(protocol) -> dict:
    """The :data:`TRAINING_COLUMNS` values of ``protocol`` as a row writes them: ``feature_norm`` ``None``
    as ``"none"``, so that it reads back unambiguously.

    >>> training_values(PAPER_PROTOCOL)["lr"], training_values(PAPER_PROTOCOL)["feature_norm"]
    (0.01, 'none')
    """
    values = {c: getattr(protocol, c) for c in TRAINING_COLUMNS}
    values["feature_norm"] = "none" if values["feature_norm"] is None else values["feature_norm"]
    return values


def with_training_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with every :data:`TRAINING_COLUMNS` column, a missing column or value read as the paper
    protocol's (rows written before these fields were recorded were all trained with it); ``rows`` itself
    when nothing is missing."""
    if rows is None or rows.empty:
        return rows
    paper = training_values(PAPER_PROTOCOL)
    if all(c in rows and rows[c].notna().all() for c in TRAINING_COLUMNS):
        return rows
    rows = rows.copy()
    for c, value in paper.items():
        if c not in rows:
            rows[c] = value
        elif rows[c].isna().any():  # a column of empty cells reads as float: feature_norm's "none" needs object
            rows[c] = (rows[c].astype(object) if isinstance(value, str) else rows[c]).fillna(value)
    return rows


def key_value(value):
    """A run-key value as the two sides of a comparison should see it: a missing value (``patience`` ``None``
    read back from a CSV as NaN) is ``None``, a number is a Python number, floats to 12 significant
    digits (what a CSV round trip keeps)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        return float(f"{value:.12g}")
    return value


def check_protocol(path, **protocol) -> None:
    """Refuse to mix protocols in one results file: when ``path`` already holds rows and none of them has
    the given protocol values (e.g. ``max_epochs=20, patience=20`` or ``lr=0.005``), raise ``ValueError``
    naming the file, its protocol and the requested one, so that a quick try never adds rows to a committed
    sweep. Rows without a :data:`TRAINING_COLUMNS` column or value hold the paper protocol's
    (:func:`with_training_columns`)."""
    rows = read_rows(path)
    if rows.empty:
        return
    if any(c in TRAINING_COLUMNS for c in protocol):
        rows = with_training_columns(rows)
    cols = [c for c in protocol if c in rows]
    if not cols:
        return
    have = [{c: key_value(v) for c, v in r.items()} for r in rows[cols].drop_duplicates().to_dict("records")]
    want = {c: key_value(protocol[c]) for c in cols}
    if not any(all(r[c] == want[c] for c in cols) for r in have):
        raise ValueError(f"out={str(path)!r} holds rows of another protocol ({', '.join(map(str, have))}); this run "
                         f"has {want}. Name another file with out= (--out), or leave it out: the default file "
                         "is named by the protocol.")


def write_rows_atomic(df: pd.DataFrame, path) -> None:
    """Write ``df`` to ``path`` as CSV atomically (see :func:`atomic_write`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp):
        with open(tmp, "w") as fh:
            df.to_csv(fh, index=False)
            fh.flush()
            os.fsync(fh.fileno())

    atomic_write(path, write)


def _locked(path: Path):
    """The lock of the results file at ``path`` (``.<name>.lock`` beside it), so that runners in several
    processes appending to the same file never lose each other's rows."""
    return file_lock(path.parent / f".{path.name}.lock")


def _header(path: Path) -> list[str] | None:
    """The column names of the CSV at ``path``: its first complete line; ``None`` for a missing file or one
    without a complete first line."""
    if not path.exists():
        return None
    with open(path, newline="") as fh:
        first = fh.readline()
    return next(csv.reader([first]), None) if first.endswith("\n") else None


def _cut_partial_last_line(path: Path) -> None:
    """Truncate ``path`` after its last newline: the partial row a killed append left (none: no change)."""
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        keep, step = size, 1 << 16
        while keep > 0:  # read backwards until the last newline
            start = max(0, keep - step)
            fh.seek(start)
            at = fh.read(keep - start).rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                break
            keep = start
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())


def append_rows(path, rows: list[dict]) -> None:
    """Append ``rows`` to the results CSV at ``path`` without rewriting the file.

    Under the file's lock (several processes may append to one file): a missing file is written with its
    header, atomically; else a partial last line (a killed append) is cut off and the rows are appended in
    the file's column order (a column they lack stays empty) and synced to disk. Rows that bring a column
    the file lacks make one atomic rewrite with the union of the columns. A writer killed mid-append
    loses at most its own partial row: every earlier row stays, and :func:`read_rows` skips the partial
    line until the next append removes it."""
    path = Path(path)
    new = pd.DataFrame(rows)
    if new.empty and not len(new.columns):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        header = _header(path)
        if header is None:
            write_rows_atomic(new, path)
            return
        _cut_partial_last_line(path)
        if not set(new.columns) <= set(header):
            write_rows_atomic(pd.concat([read_rows(path), new], ignore_index=True), path)
            return
        text = new.reindex(columns=header).to_csv(index=False, header=False)
        with open(path, "a", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
