"""Whole-file writes that never leave a torn file: a reader sees the old file or the new one, never part.

Every file a study, a dataset export or a rollout collection writes goes through :func:`write_atomic`
(a temporary file beside the target, written, fsync'ed, then renamed over it). A failed write (a full
disk, a file-size limit) raises and leaves the target as it was and no temporary file behind, so a
caller can record the failure instead of a file that looks finished.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

TMP_SUFFIX = ".tmp"


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8) in one step; raises ``OSError`` on a failed write."""
    path = Path(path)
    payload = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
    # Unique per writer, so two processes (or threads) writing one target never share a temporary file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        while payload:
            payload = payload[os.write(fd, payload) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
