"""Writing padconf's own files: whole files replaced atomically, JSON-lines files appended to, and
never through a link planted where the file goes."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hmac
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from padconf.core import inputs
from padconf.core.errors import CaseError, PadconfError
from padconf.core.escape import Html, Markdown, PySource, Xml
from padconf.core.user_key import signature

MARK = ".padconf-wrote"  # in a folder padconf claimed: its path signed with the user's key
_MARK_PURPOSE = b"padconf wrote this folder"
_MAX_MARK_BYTES = 256


def _link_refused(where: Path) -> CaseError:
    return CaseError(f"{where}: a symbolic link, which padconf does not write through "
                     "(name the folder it leads to, where that is meant)")


def open_folder(folder: Path | str, create: bool = False) -> int:
    """A descriptor of ``folder``, opened one name at a time without following a link: every
    name below the working directory (a folder inside it), else the folder named itself and
    every one padconf makes down to it (one outside: its existing parents are the user's
    choice). A link anywhere there (``.padconf -> ~/elsewhere``, ``reports -> ~/.ssh``) is
    refused in one line, never written through; where ``create``, each missing name is made,
    as a folder, through the descriptor above it. The one check of every folder padconf writes."""
    absolute = Path(os.path.abspath(folder))  # ".." taken lexically: what is checked is what is opened
    cwd = Path(os.path.abspath(os.getcwd()))
    if absolute == cwd or cwd in absolute.parents:
        start, names = cwd, absolute.relative_to(cwd).parts
    elif not absolute.name:  # the root itself
        start, names = absolute, ()
    else:
        start, missing = absolute.parent, [absolute.name]
        while create and not os.path.isdir(start) and start != start.parent:  # made link-free, below
            start, missing = start.parent, [*missing, start.name]
        names = tuple(reversed(missing))
    try:
        fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise CaseError(f"{start}: no such folder") from None
    where = start
    try:
        for name in names:
            where = where / name
            for attempt in (0, 1):
                try:
                    below = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                    break
                except FileNotFoundError:
                    if not create or attempt:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(where):
                        raise _link_refused(where) from None
                    if exc.errno == errno.ENOTDIR:
                        raise CaseError(f"{where}: not a folder") from None
                    raise
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_folder(folder: Path | str) -> Path:
    """``folder`` and the folders above it made where missing, as ``open_folder`` checks them."""
    os.close(open_folder(folder, create=True))
    return Path(folder)


# what a folder's mark says padconf made it for: a run directory's (a run's or a gate's) is a kind of
# its own, since --resume signs what such a folder holds; any other command's is the plain one. An
# export with --force marked a folder holding a forged run, which --resume then signed (attack round VII)
MARK_KINDS = ("", "run")


def _mark_text(folder: Path, kind: str = "") -> str | None:
    found = signature(_MARK_PURPOSE + kind.encode(), os.fsencode(os.path.realpath(folder)))
    return None if found is None else \
        f"padconf wrote this {kind + ' ' if kind else ''}folder; its signature, under this user's key:\n{found}\n"


def _marked(folder: Path, fd: int, kinds: tuple[str, ...] = MARK_KINDS) -> bool:
    try:
        mark = os.open(MARK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return False
    with os.fdopen(mark, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False
        text = f.read(_MAX_MARK_BYTES).decode("ascii", "replace")
    expected = [_mark_text(folder, kind) for kind in kinds]
    return any(e is not None and hmac.compare_digest(e, text) for e in expected)


def claimed(folder: Path | str, kind: str = "") -> bool | None:
    """Whether padconf claimed ``folder`` here for ``kind`` (claim_folder: its mark, its path
    signed with the user's key, is valid); None where this user has no key to tell by."""
    folder = Path(folder)
    if _mark_text(folder) is None:
        return None
    fd = open_folder(folder)
    try:
        return _marked(folder, fd, (kind,))
    finally:
        os.close(fd)


def claim_folder(folder: Path | str, force: bool = False, replace: str = "--force to replace it",
                 kind: str = "") -> Path:
    """``folder`` made (as ``open_folder`` checks it) and taken as padconf's own, for a command
    that writes several files into it (a run directory, a gate's work folder, exported tests): it
    must be absent, empty, or one padconf claimed before, which its mark proves (the folder's
    path signed with the user's key: a mark committed in a checkout, or copied from elsewhere,
    is not valid). A folder holding anything else is refused in one line unless ``force``
    (``replace`` tells the user how). The mark of ``kind`` (MARK_KINDS) is then written, so the
    next command knows it."""
    folder = Path(folder)
    fd = open_folder(folder, create=True)
    try:
        names = sorted(os.listdir(fd))
        if names and not force and not _marked(folder, fd):
            shown = next((n for n in names if n != MARK), names[0])
            raise PadconfError(f"{folder}: holds {shown!r}, which padconf cannot prove it wrote (the folder has "
                               f"no valid mark of this user's padconf): name an empty or new folder, or {replace}")
    finally:
        os.close(fd)
    text = _mark_text(folder, kind)
    if text is not None:
        write_atomically(folder / MARK, text)
    return folder


_SYSTEM = ("/dev", "/proc", "/sys")  # devices and streams (/dev/stdout): never a file padconf writes


def _in_system_folder(path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in _SYSTEM)


def _folder(path: Path) -> int:
    """A descriptor of ``path``'s folder (``open_folder``: no link on the way), which is none of
    the system's folders of devices and streams."""
    if _in_system_folder(os.path.realpath(path.parent)):
        raise CaseError(f"{path}: in a folder of devices and streams, where padconf writes no file: name a file "
                        "to write")
    return open_folder(path.parent)


def _not_an_input(folder: int, path: Path) -> None:
    """Refuse, in one line, to replace or append to a file the command running has read (its
    run's results.jsonl, its baseline, a spec: ``padconf/core/inputs.py``), whatever name
    ``path`` gives it, unless its folder is one this process holds exclusively (its own run
    directory, bundle folder or export, or a folder below it: what it reads there it writes there)."""
    try:
        info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)  # a link is replaced, its target kept
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):  # /dev/full, a FIFO: never a file
        raise CaseError(f"{path}: is not a regular file (a device, a pipe, a socket or a folder), which padconf "
                        "does not replace: name a file to write")
    if stat.S_ISLNK(info.st_mode):  # /dev/stdout, a link to a stream: replaced, the system's link was lost
        target = os.path.join(os.path.dirname(os.path.abspath(path)), os.readlink(path.name, dir_fd=folder))
        with contextlib.suppress(OSError):  # a dangling link is replaced
            if _in_system_folder(os.path.normpath(target)) \
                    or not stat.S_ISREG(os.stat(path.name, dir_fd=folder).st_mode):
                raise CaseError(f"{path}: is a link to a device, a stream, a pipe, a socket or a folder, which "
                                "padconf neither writes through nor replaces: name a file to write")
    if FolderLock.held_exclusively(folder):
        return
    read = inputs.read_as(info) if stat.S_ISREG(info.st_mode) else None
    if read is not None:
        same = "" if os.path.abspath(read) == os.path.abspath(path) else f" (the file {read})"
        raise CaseError(f"{path}: is one of this command's inputs{same}, which padconf does not write over: "
                        "name another file to write")
    whole = _folder_read(folder)
    if whole is not None:
        raise CaseError(f"{path}: is a file of {whole}, a folder this command reads, which padconf does not "
                        "write over: name another file to write")


def _folder_read(folder: int) -> str | None:
    """The name of the folder this command reads whole (inputs.note_read) that ``folder``, or
    one above it, is; None."""
    return next(filter(None, (inputs.read_as(info, folder=True) for info in _up(folder))), None)


def _up(folder: int) -> Iterator[os.stat_result]:
    """The ``stat`` of the folder open as ``folder``, then of each folder above it to the root
    (one that cannot be stat'ed ends it)."""
    where = os.readlink(f"/proc/self/fd/{folder}")
    while True:
        try:
            yield os.stat(where)
        except OSError:
            return
        if where == os.path.dirname(where):
            return
        where = os.path.dirname(where)


def refuse_an_input(path: Path | str | None) -> None:
    """``_not_an_input`` before a command's work, for a file it writes at its end (``gate
    --junit``, ``baseline --out``): refused at once, not after the run."""
    if path is None or str(path) == "-" or not os.path.isdir(Path(path).parent):
        return
    folder = _folder(Path(path))
    try:
        _not_an_input(folder, Path(path))
    finally:
        os.close(folder)


def write_atomically(path: Path | str, data: str | bytes, replaces_input: bool = False) -> None:
    """``data`` (text, as UTF-8, or bytes) as the whole of ``path``, which a reader sees before
    or after, never half written nor empty (a full disk, a kill): a new file of its own in the
    same folder, synced, renamed over ``path``. Every file padconf writes goes through here or
    ``open_to_append``: a link planted at ``path`` is replaced, never written through, and its
    folder is opened once, not through a link, and written only through that descriptor. A file
    the command read is never replaced (``_not_an_input``) unless ``replaces_input`` (a baseline
    pruned in place)."""
    path = Path(path)
    body = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data  # a lone surrogate as \\udNNN
    folder = _folder(path)
    try:
        if not replaces_input:
            _not_an_input(folder, path)
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


# One writer per medium, taking only its escaper's type (padconf/core/escape.py): a str from
# outside handed to one of these without its escaper is a mypy error here.

def write_markdown(path: Path | str, text: Markdown) -> None:
    write_atomically(path, text)


def write_html(path: Path | str, page: Html) -> None:
    write_atomically(path, page)


def write_xml(path: Path | str, document: Xml) -> None:
    write_atomically(path, document)


def write_python(path: Path | str, source: PySource) -> None:
    write_atomically(path, source)


def open_to_append(path: Path, mode: str = "a") -> IO:
    """``path`` opened for appending (``mode`` "a" text, "ab" bytes), created if need be; a link
    planted there (a hard link too: a file of another name, outside the folder perhaps), or
    anything but a regular file, is refused (CaseError), never written through."""
    folder = _folder(path)
    try:
        _not_an_input(folder, path)
        fd = os.open(path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644,
                     dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_refused(path) from None
        raise
    finally:
        os.close(folder)
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode):
        os.close(fd)
        raise CaseError(f"{path}: not a regular file")
    if found.st_nlink > 1:  # attack round F: run --resume appended its rows to a user's file linked here
        os.close(fd)
        raise CaseError(f"{path}: a hard link to another file ({found.st_nlink} names), which padconf does not "
                        "write through")
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
            if not exclusive:  # read whole by this command: none of its files is written over
                inputs.note_read(info, str(run_dir), folder=True)

    @staticmethod
    def held_exclusively(folder: int) -> bool:
        """Whether this process holds the folder open as ``folder``, or one above it, exclusively."""
        with FolderLock._guard:
            exclusive = {key for key, held in FolderLock._held.items() if held[1] > 0 and held[2]}
        return bool(exclusive) and any((info.st_dev, info.st_ino) in exclusive for info in _up(folder))

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
