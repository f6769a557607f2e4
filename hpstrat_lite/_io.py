"""Atomic file writes: a temporary file in the same folder, then ``os.replace``; a reader never sees a half-written file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
