"""Writing padconf's own files: whole files replaced atomically, JSON-lines files appended to, and
never through a link planted where the file goes."""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import IO

from padconf.core.errors import CaseError


def write_atomically(path: Path, text: str) -> None:
    """``text`` as the whole of ``path``, which a reader sees before or after, never half written
    nor empty (a full disk, a kill): a new file of its own in the same folder, synced, renamed
    over ``path``. A link planted at ``path`` is replaced, never written through."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)  # the rename itself survives a power loss
    finally:
        os.close(folder)


def open_to_append(path: Path, mode: str = "a") -> IO:
    """``path`` opened for appending (``mode`` "a" text, "ab" bytes), created if need be; a link
    planted there, or anything but a regular file, is refused (CaseError), never written through."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CaseError(f"{path}: a symbolic link, which padconf does not write through") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CaseError(f"{path}: not a regular file")
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


