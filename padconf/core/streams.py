"""A standard stream that padconf keeps writing, to nothing, once writing it fails."""
from __future__ import annotations

import os
import sys


class ClosableStream:
    """sys.stdout or sys.stderr while a command runs: once writing it fails, for any reason (the
    reader closed it, ``| head -1``; a full device, ``>/dev/full``; EIO of a terminal gone),
    what is written is dropped, and the stream's descriptor points at /dev/null so that nothing
    else writing it (rich's console, the interpreter's last flush) fails either. The command
    runs to its end and exits with its own code: rich's own handling raised SystemExit(1), the
    code for "a difference found", with no result written; a failed write uncaught stopped a
    run before its results (exit 2), and a failed line on stderr turned exit 2 into 1."""

    def __init__(self, stream) -> None:
        self._stream, self.closed_by_reader = stream, False
        self.why: str | None = None  # why writing it failed
        self.product: tuple[str, str] | None = None  # (what, where else) when the command's output is this stream

    def _closed(self, exc: Exception | None = None) -> None:
        self.closed_by_reader = True
        self.why = self.why or (getattr(exc, "strerror", None) or "closed")
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text) -> int:
        if not self.closed_by_reader:
            try:
                return self._stream.write(text)
            except (OSError, ValueError) as exc:  # ValueError: the stream itself was closed
                self._closed(exc)
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self._stream.flush()
            except (OSError, ValueError) as exc:
                self._closed(exc)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def open_missing_streams() -> list[str]:
    """stdin, stdout and stderr that are not open at all (``1>&-``) get /dev/null in their
    place, before a file padconf opens takes their descriptor and a runtime's prints land in it,
    and before a library that writes them fails (pytest's faulthandler plugin exited 1 with
    stderr closed); the names of those it replaced."""
    replaced = []
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        mode = "r" if fd == 0 else "w"
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(devnull := os.open(os.devnull, os.O_RDWR), fd)
            if devnull != fd:
                os.close(devnull)
            setattr(sys, name, open(fd, mode, closefd=False))
            replaced.append(name)
            continue
        if getattr(sys, name) is None:  # closed at start, its descriptor since taken by a file opened
            setattr(sys, name, open(os.devnull, mode))
            replaced.append(name)
    return replaced
