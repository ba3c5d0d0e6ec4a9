"""The files one command has read, so that the one writer never replaces one of them: a
report, a JUnit file or a baseline written over the run, the baseline or a spec it was made
from (``report --md RUN/results.jsonl``, ``gate --junit baseline.yaml``), whatever name the
target goes by (a hard link, ``./`` or ``..`` in it). Files are known by device and inode, as
``padconf/core/untrusted.py::read_bytes``, the one reader, opened them. So are the folders a
command reads whole (a run directory, a gate's shards: each one a shared FolderLock takes),
none of whose files the writer replaces (``gate --results s1 s2 --junit s1/stats.json``)."""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_read: dict[tuple[int, int], str] | None = None  # (device, inode) -> the name it was read by; None outside a command
_folders: dict[tuple[int, int], str] = {}  # a folder read whole: (device, inode) -> its name, in the command running


@contextlib.contextmanager
def command() -> Iterator[None]:
    """One command's reads are recorded from here to its end (the command line opens it around
    each command, so that one command's inputs never refuse the next one's outputs)."""
    global _read, _folders
    with _lock:
        outer, _read = _read, {}
        outer_folders, _folders = _folders, {}
    try:
        yield
    finally:
        with _lock:
            _read, _folders = outer, outer_folders


def note_read(info: os.stat_result, name: str, folder: bool = False) -> None:
    """``name``, whose ``stat`` is ``info``, was read by the command running (a ``folder``:
    read whole)."""
    with _lock:
        if _read is not None:
            (_folders if folder else _read).setdefault((info.st_dev, info.st_ino), name)


def read_as(info: os.stat_result, folder: bool = False) -> str | None:
    """The name the command running read the file (``folder``: the folder read whole) ``info``
    describes by, or None."""
    with _lock:
        return None if _read is None else (_folders if folder else _read).get((info.st_dev, info.st_ino))
