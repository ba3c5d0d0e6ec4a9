"""A persistent cache of compiled models, for the adapters of ahead-of-time compilers (IREE, TVM).

An entry is keyed by everything its bytes depend on: the converted graph (the compiler's own IR
of the Pad model, as text), the compiler's version, its target and its flags. It lives in one
folder, ``$PADCONF_COMPILE_CACHE`` (default ``$XDG_CACHE_HOME/padconf/compile`` or
``~/.cache/padconf/compile``; ``none`` turns the cache off), so a second identical run, a gate
or a minimize on the same machine compiles nothing it compiled before. Converting the model
into that IR takes milliseconds a case, most of a warm run: a second kind of entry links the
model's own bytes (and the versions the conversion depends on) to the converted graph's key.

What a compile ends in is kept, not only its output: a compiler's refusal (``CompileFailed``)
is as deterministic as its output, a compiler that died of a signal (``CompileCrashed``) is kept
as that crash, and a compile that ran out of its time limit (``CompileTimedOut``) is kept with
that limit, so a later run with the same or a shorter limit does not wait for it again (a
longer limit compiles again; ``padconf compile-cache --clear`` forgets everything).

Lanes and runs share the folder: an entry is written to a temporary file beside it and renamed
into place, so a reader sees a whole entry or none. Each entry carries the SHA-256 of its bytes;
one that does not match (a torn write from another tool, a disk error, a hand edit) is deleted
and rebuilt, never used. The cache holds compiled code (TVM's entries are shared libraries that
are loaded): point it only at a folder no one else writes.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

ENV = "PADCONF_COMPILE_CACHE"
# 2: a compiler killed by a signal is kept as a crash (1 kept it as a refusal), a time-out keeps
# what was said, TVM's keys hold constants: entries of 1 are rebuilt, as corrupt ones are.
MAGIC = b"padconf-compile-cache 2\n"
MAX_ENTRY_BYTES = 256 << 20  # a Pad model compiles to kilobytes; a larger file is not ours
_MODULE, _FAILED, _TIMED_OUT, _CRASHED = b"M", b"E", b"T", b"C"  # an entry's first byte: what the compile ended in
_LINK = b"L"  # ... or the key of the entry that holds it (CompileCache.converted_key)
_KEY = re.compile(r"[0-9a-f]{64}")


class CompileFailed(Exception):
    """The compiler refused the model; the message is its diagnostics, one line."""


_EARLIER = " (an earlier attempt's, kept in the compile cache)"


class CompileDied(Exception):
    """The compiler came to no answer: not an adapter's refusal of the model, but a verdict of
    its own that the worker reports (a timeout or a crash), as it would the runtime's."""


class CompileTimedOut(CompileDied):
    """The compile ran past its time limit of ``seconds``; ``said``: what the compiler had
    written by then (iree-compile's "double free or corruption" before its crash handler hung)."""

    def __init__(self, seconds: float, cached: bool = False, said: str = ""):
        self.said = said
        super().__init__(f"the compile did not finish within {seconds:g} s (the compile time limit)"
                         + (f"; it had said: {said}" if said else "") + (_EARLIER if cached else ""))


class CompileCrashed(CompileDied):
    """The compiler, a subprocess, was killed by a signal (a segfault, glibc's abort on a
    corrupt heap): ``why`` says which, and its last words."""

    def __init__(self, why: str, cached: bool = False):
        super().__init__(why + (_EARLIER if cached else ""))


def default_root() -> Path | None:
    """The cache folder ``$PADCONF_COMPILE_CACHE`` names, else the user's cache folder; None
    when the variable is ``none``."""
    where = os.environ.get(ENV)
    if where:
        return None if where == "none" else Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "padconf" / "compile"


def cache_key(*parts: str | bytes) -> str:
    """One hex key for an entry: the parts (graph text, compiler version, target, flags) in order."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little") + data)  # lengths: ("ab", "c") != ("a", "bc")
    return digest.hexdigest()


class CompileCache:
    """Compiled models on disk, by key. ``root=None`` is a cache that keeps nothing."""

    def __init__(self, root: Path | None):
        self.root = root
        self.hits = self.misses = self.rebuilt = 0  # this process's figures

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.bin"

    def get(self, key: str) -> bytes | None:
        """The entry's bytes, or None when there is none or it is corrupt (then it is deleted)."""
        if self.root is None:
            return None
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                blob = f.read(MAX_ENTRY_BYTES + len(MAGIC) + 65)
        except OSError:
            self.misses += 1
            return None
        head, _, payload = blob[len(MAGIC):].partition(b"\n")
        if not blob.startswith(MAGIC) or head != hashlib.sha256(payload).hexdigest().encode():
            self.rebuilt += 1
            path.unlink(missing_ok=True)
            return None
        self.hits += 1
        return payload

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key`` atomically; a cache that cannot be written is skipped
        (the run goes on compiling)."""
        if self.root is None or len(payload) > MAX_ENTRY_BYTES:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)

    def converted_key(self, source_key: str, convert: Callable[[], tuple[str, T]]) -> tuple[str, T | None]:
        """``(key, converted)`` for a compiler input that must be converted to be keyed (an ONNX
        model, imported into the compiler's IR): ``convert()`` gives the converted graph and its
        entry's key, and the cache links ``source_key`` (the input's own bytes and every version
        the conversion depends on) to that key, so that a later run looks the key up instead
        (``converted`` is then None; convert again only to compile). Only for a conversion as
        deterministic as a compile."""
        entry = self.get(source_key)
        linked = entry[1:].decode(errors="replace") if entry is not None and entry[:1] == _LINK else ""
        if _KEY.fullmatch(linked):
            return linked, None
        key, converted = convert()
        self.put(source_key, _LINK + key.encode())
        return key, converted

    def fetch(self, key: str, build, limit: float) -> bytes:
        """The compiled bytes for ``key``, from the cache or from ``build()``, which returns them
        or raises CompileFailed / CompileCrashed / CompileTimedOut; each end is kept and raised
        again by later fetches (a time-out only for a ``limit`` no longer than the one it ran out
        of)."""
        entry = self.get(key)
        if entry is not None:
            tag, body = entry[:1], entry[1:]
            if tag == _MODULE:
                return body
            if tag == _FAILED:
                raise CompileFailed(body.decode(errors="replace"))
            if tag == _TIMED_OUT:  # its limit, and what the compiler had said by then
                seconds, _, said = body.partition(b"\n")
                if float(seconds) >= limit:
                    raise CompileTimedOut(float(seconds), cached=True, said=said.decode(errors="replace"))
            if tag == _CRASHED:
                raise CompileCrashed(body.decode(errors="replace"), cached=True)
        try:
            payload = build()
        except CompileFailed as exc:
            self.put(key, _FAILED + str(exc).encode())
            raise
        except CompileCrashed as exc:
            self.put(key, _CRASHED + str(exc).encode())
            raise
        except CompileTimedOut as exc:
            self.put(key, _TIMED_OUT + repr(float(limit)).encode() + b"\n" + exc.said.encode())
            raise
        self.put(key, _MODULE + payload)
        return payload

    def size(self) -> tuple[int, int]:
        """(entries, bytes) in the folder."""
        if self.root is None or not self.root.is_dir():
            return 0, 0
        files = [p for p in self.root.glob("*/*.bin") if p.is_file()]
        return len(files), sum(p.stat().st_size for p in files)

    def clear(self) -> int:
        """Delete every entry; the number deleted. Only padconf's own layout is touched."""
        count, _ = self.size()
        if self.root is not None and self.root.is_dir():
            for sub in self.root.iterdir():
                if sub.is_dir() and len(sub.name) == 2 and all(p.suffix in (".bin", "") for p in sub.iterdir()):
                    shutil.rmtree(sub)
        return count
