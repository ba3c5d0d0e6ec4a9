"""Writing padconf's own files: whole files replaced atomically, JSON-lines files appended to, and
never through a link planted where the file goes."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import IO

from padconf.core.errors import CaseError, PadconfError


def _folder(path: Path) -> int:
    """A descriptor of ``path``'s folder, opened without following a link there: a link committed
    in a checkout where padconf writes (``reports -> ~/.ssh``) is refused, never written into."""
    try:
        return os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and path.parent.is_symlink():
            raise CaseError(f"{path.parent}: a symbolic link, which padconf does not write through") from None
        raise


def write_atomically(path: Path | str, data: str | bytes) -> None:
    """``data`` (text, as UTF-8, or bytes) as the whole of ``path``, which a reader sees before
    or after, never half written nor empty (a full disk, a kill): a new file of its own in the
    same folder, synced, renamed over ``path``. Every file padconf writes goes through here or
    ``open_to_append``: a link planted at ``path`` is replaced, never written through, and its
    folder is opened once, not through a link, and written only through that descriptor."""
    path = Path(path)
    body = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data  # a lone surrogate as \\udNNN
    folder = _folder(path)
    try:
        while True:
            tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
                break
            except FileExistsError:
                continue
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
        os.fsync(folder)  # the rename itself survives a power loss
    finally:
        os.close(folder)


def open_to_append(path: Path, mode: str = "a") -> IO:
    """``path`` opened for appending (``mode`` "a" text, "ab" bytes), created if need be; a link
    planted there, or anything but a regular file, is refused (CaseError), never written through."""
    folder = _folder(path)
    try:
        fd = os.open(path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644,
                     dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CaseError(f"{path}: a symbolic link, which padconf does not write through") from None
        raise
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CaseError(f"{path}: not a regular file")
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


class FolderLock:
    """An advisory lock on a folder padconf writes (flock on the folder itself): exclusive for what
    writes it (run, minimize, generate, export-onnx-tests), shared for what reads it (``report``,
    ``gate --results``), so that no two processes write one folder at once and nothing reads it
    half written. The kernel drops it when the process ends, kill -9 included: it is never
    stale, and nothing is written into the folder for it. A conflict is one line, never a wait.
    Within one process the locks of a folder are one (a library user's objects may outlive
    their use): held until the last is released."""

    _held: dict[tuple[int, int], list] = {}  # (device, inode) -> [fd, holders, exclusive]
    _guard = threading.Lock()

    def __init__(self, run_dir: Path, exclusive: bool, what: str = "folder"):
        self.key: tuple[int, int] | None = None
        with FolderLock._guard:
            info = os.stat(run_dir)
            key = (info.st_dev, info.st_ino)
            held = FolderLock._held.get(key)
            if held is None:
                held = [os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY), 0, False]
            if held[1] == 0 or (exclusive and not held[2]):
                try:
                    fcntl.flock(held[0], (fcntl.LOCK_EX if exclusive or held[2] else fcntl.LOCK_SH) | fcntl.LOCK_NB)
                except BlockingIOError:
                    if held[1] == 0:
                        os.close(held[0])
                    raise PadconfError(f"{run_dir}: another padconf process is "
                                       f"{'using' if exclusive else 'writing'} this {what}; "
                                       "run again once it has finished") from None
                held[2] = held[2] or exclusive
            held[1] += 1
            FolderLock._held[key] = held
            self.key = key

    def release(self) -> None:
        with FolderLock._guard:
            if self.key is None:
                return
            held = FolderLock._held[self.key]
            held[1] -= 1
            if held[1] == 0:
                os.close(held[0])
                del FolderLock._held[self.key]
            self.key = None

    def __del__(self) -> None:
        self.release()

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
