"""The files one command has read, so that the one writer never replaces one of them: a
report, a JUnit file or a baseline written over the run, the baseline or a spec it was made
from (``report --md RUN/results.jsonl``, ``gate --junit baseline.yaml``), whatever name the
target goes by (a hard link, ``./`` or ``..`` in it). Files are known by device and inode, as
``padconf/core/untrusted.py::read_bytes``, the one reader, opened them."""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_read: dict[tuple[int, int], str] | None = None  # (device, inode) -> the name it was read by; None outside a command


@contextlib.contextmanager
def command() -> Iterator[None]:
    """One command's reads are recorded from here to its end (the command line opens it around
    each command, so that one command's inputs never refuse the next one's outputs)."""
    global _read
    with _lock:
        outer, _read = _read, {}
    try:
        yield
    finally:
        with _lock:
            _read = outer


def note_read(info: os.stat_result, name: str) -> None:
    """``name``, whose ``fstat`` is ``info``, was read by the command running."""
    with _lock:
        if _read is not None:
            _read.setdefault((info.st_dev, info.st_ino), name)


def read_as(info: os.stat_result) -> str | None:
    """The name the command running read the file ``info`` describes by, or None."""
    with _lock:
        return None if _read is None else _read.get((info.st_dev, info.st_ino))
