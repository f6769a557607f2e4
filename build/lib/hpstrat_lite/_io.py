"""Atomic file writes (a temporary file in the same folder, then ``os.replace``; a reader never sees a
half-written file) and the file lock that serialises writers across processes."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from filelock import FileLock


def atomic_write(path, write) -> None:
    """``write(tmp)`` into a temporary file next to ``path``, then ``os.replace`` it into place, so a
    reader never sees a half-written file (also when the writer is killed)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private (0600); results are for everyone to read
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextlib.contextmanager
def file_lock(lock_path):
    """Hold an exclusive lock on ``lock_path`` (created with its folder if missing) for the ``with`` block:
    processes writing the same results file, cache entry or study database take turns.

    The lock is the ``filelock`` package's ``FileLock`` (``flock`` on POSIX, ``msvcrt`` on Windows); it is
    released when the block ends or the holder dies, so a killed writer never leaves a stale lock."""
    lock_path = Path(lock_path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(lock_path):
        yield
