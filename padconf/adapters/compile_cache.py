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
into place, so a reader sees a whole entry or none.

The cache runs only what padconf compiled. Its entries are code (TVM's are shared libraries
that are loaded, IREE's modules carry native code), and the folder may hold what others wrote
(a CI cache restored from another branch). Each entry therefore carries an HMAC-SHA256 of its
key and bytes, under a secret kept outside the folder: ``$PADCONF_COMPILE_CACHE_KEY`` names
its file, default ``$XDG_CONFIG_HOME/padconf/compile-cache.key`` (``~/.config/...``), made on
first use (32 random bytes, mode 0600). Whoever holds that file can write entries padconf
runs: sharing it shares trust. An entry whose MAC does not verify (another key's, a planted
library with a recomputed checksum, a torn write, a disk error) is deleted and rebuilt, never
used; an entry is read without following a symbolic link and only up to its size bound. A key
file that is a symbolic link, not a regular file, another user's or open to group or others
turns the cache off (``CompileCache.why_off()`` says why; ``padconf compile-cache`` prints it).
The key is read once a process: an adapter reads it in its zygote, whose forks share it.

``--clear`` deletes only what padconf can tell it wrote: in a folder that carries padconf's
``CACHEDIR.TAG`` (written when padconf first uses a folder that is new, empty or holds only its
own layout), the regular files named and headed as its entries, never following a link. A
folder without the tag is refused, with nothing deleted.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from padconf.core import user_key
from padconf.core.errors import PadconfError
from padconf.core.user_key import KEY_BYTES, KEY_ENV, MAX_KEY_BYTES  # noqa: F401 (their old names)

T = TypeVar("T")

ENV = "PADCONF_COMPILE_CACHE"
# 3: an entry carries an HMAC under the user's key (2 a SHA-256 anyone could recompute): entries
# of 2 and before are misses, rebuilt.
MAGIC = b"padconf-compile-cache 3\n"
_ANY_MAGIC = re.compile(rb"padconf-compile-cache [0-9]{1,4}\n")  # padconf's header, of any version (--clear)
MAX_ENTRY_BYTES = 256 << 20  # a Pad model compiles to kilobytes; a larger file is not ours
_MAX_FILE = len(MAGIC) + 65 + MAX_ENTRY_BYTES
_MODULE, _FAILED, _TIMED_OUT, _CRASHED = b"M", b"E", b"T", b"C"  # an entry's first byte: what the compile ended in
_LINK = b"L"  # ... or the key of the entry that holds it (CompileCache.converted_key)
_KEY = re.compile(r"[0-9a-f]{64}")
_SUB = re.compile(r"[0-9a-f]{2}")  # an entry's folder: its key's first two digits
_ENTRY = re.compile(r"[0-9a-f]{64}\.bin")
_TMP = re.compile(r"\.tmp-[0-9a-f]{16}")  # an entry being written
MARKER = "CACHEDIR.TAG"  # https://bford.info/cachedir/
_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
_PADCONF_LINE = b"# padconf compile cache: padconf compile-cache --clear deletes only its entries here"
_MARKER_TEXT = (_SIGNATURE + b"\n# This file is a cache directory tag created by padconf.\n"
                + _PADCONF_LINE + b"\n")
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO is opened, not waited on


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


def key_path() -> Path:
    """The file holding the secret that signs entries (``padconf.core.user_key.key_path``)."""
    return user_key.key_path()


_KEYS = user_key.KEYS  # key file -> (secret, why not): one read a process


def load_key() -> tuple[bytes | None, str | None]:
    """``(secret, None)`` from the user's key file (made if there is none), or ``(None, why)``:
    one line saying why the compile cache is off. Read once a process; forks inherit what was read."""
    secret, why = user_key.load_key(_KEYS)
    return secret, (None if why is None else f"the compile cache is off: {why}")


def _mac(secret: bytes, key: str, payload: bytes) -> bytes:
    mac = hmac.new(secret, MAGIC + key.encode() + b"\n", hashlib.sha256)  # the key: an entry moved is not valid
    mac.update(payload)
    return mac.hexdigest().encode()


def is_marked(root: Path) -> bool:
    """Whether ``root`` carries padconf's cache directory tag (a regular file, not a link)."""
    try:
        fd = os.open(root / MARKER, _NOFOLLOW)
    except OSError:
        return False
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return False
    with os.fdopen(fd, "rb") as f:
        text = f.read(1024)
    return text.startswith(_SIGNATURE) and _PADCONF_LINE in text.splitlines()


def _own_size(dir_fd: int, name: str) -> int | None:
    """The size of entry file ``name`` in ``dir_fd`` if it is a regular file headed as padconf's
    entries are (any version), else None."""
    try:
        fd = os.open(name, _NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        return st.st_size if _ANY_MAGIC.match(f.read(32)) else None


class CompileCache:
    """Compiled models on disk, by key. ``root=None`` is a cache that keeps nothing, and so is
    one whose key file is refused (``why_off``)."""

    def __init__(self, root: Path | None):
        self.root = root
        self.hits = self.misses = self.rebuilt = 0  # this process's figures
        self._marked = False

    def why_off(self) -> str | None:
        """None when the cache is used, else one line saying why not. Reads the key: an adapter
        asks in its zygote, so that its workers inherit the key rather than read it each."""
        if self.root is None:
            return f"the compile cache is off ({ENV}=none)"
        return load_key()[1]

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.bin"

    def get(self, key: str) -> bytes | None:
        """The entry's bytes, or None when there is none, the cache is off, or the entry is not
        one padconf wrote under this key and secret (then it is deleted)."""
        secret = load_key()[0] if self.root is not None and _KEY.fullmatch(key) else None
        if secret is None:
            return None
        path = self._path(key)
        try:
            fd = os.open(path, _NOFOLLOW)
        except FileNotFoundError:
            self.misses += 1
            return None
        except OSError:  # a link (ELOOP), or unreadable: not an entry to use
            fd = -1
        blob = b""
        if fd >= 0:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_size <= _MAX_FILE:  # bounded before a byte is read
                with os.fdopen(fd, "rb") as f:  # its size, not the bound: read(n) reserves n bytes first
                    blob = f.read(st.st_size + 1)
            else:
                os.close(fd)
        head, newline, payload = blob[len(MAGIC):].partition(b"\n")
        if not (blob.startswith(MAGIC) and newline and hmac.compare_digest(head, _mac(secret, key, payload))):
            self.rebuilt += 1
            try:
                path.unlink(missing_ok=True)  # a link goes, not what it leads to
            except OSError:
                pass
            return None
        self.hits += 1
        return payload

    def _mark(self) -> None:
        """Tag the folder as padconf's cache (once an instance) when it is new, empty or holds
        only padconf's layout: a folder holding other things (``$HOME``) is used, not tagged."""
        if self._marked or self.root is None:
            return
        self._marked = True
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if is_marked(self.root):
                return
            with os.scandir(self.root) as found:
                if any(e.name != MARKER and not (_SUB.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
                       for e in found):
                    return
            tmp = self.root / f".tmp-{secrets.token_hex(8)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(_MARKER_TEXT)
                os.replace(tmp, self.root / MARKER)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError:
            pass  # an unwritable folder: puts below skip it too

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key`` atomically, with its MAC; a cache that is off or cannot
        be written is skipped (the run goes on compiling)."""
        secret = load_key()[0] if self.root is not None and _KEY.fullmatch(key) else None
        if secret is None or len(payload) > MAX_ENTRY_BYTES:
            return
        self._mark()
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        tmp = f".tmp-{secrets.token_hex(8)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=folder)
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + _mac(secret, key, payload) + b"\n" + payload)
            os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except OSError:
            try:
                os.unlink(tmp, dir_fd=folder)
            except OSError:
                pass
        finally:
            os.close(folder)

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

    def _walk(self, delete: bool) -> tuple[int, int]:
        """(entries, bytes) of padconf's own entries in the folder, deleted when ``delete``: the
        regular files named ``<key>.bin`` in the folder of their key's first two digits and
        headed as padconf's entries are, found without following a link."""
        count = total = 0
        if self.root is None or not self.root.is_dir():
            return 0, 0
        root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with os.scandir(root) as subs:
                names = [s.name for s in subs if _SUB.fullmatch(s.name) and s.is_dir(follow_symlinks=False)]
            for name in names:
                try:
                    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root)
                except OSError:
                    continue
                try:
                    with os.scandir(sub) as found:
                        files = [e.name for e in found if (_ENTRY.fullmatch(e.name) and e.name[:2] == name)
                                 or (delete and _TMP.fullmatch(e.name))]
                    for file in files:
                        size = _own_size(sub, file)
                        if size is None:
                            continue
                        if delete:
                            try:
                                os.unlink(file, dir_fd=sub)
                            except OSError:
                                continue
                        if file.endswith(".bin"):
                            count, total = count + 1, total + size
                finally:
                    os.close(sub)
                if delete:
                    try:
                        os.rmdir(name, dir_fd=root)  # only when nothing else is left in it
                    except OSError:
                        pass
        finally:
            os.close(root)
        return count, total

    def size(self) -> tuple[int, int]:
        """(entries, bytes) of padconf's entries in the folder; nothing else there is counted."""
        return self._walk(delete=False)

    def clear(self) -> int:
        """Delete padconf's entries; the number deleted. A folder without padconf's tag is refused
        (PadconfError), nothing deleted: it may be a folder of other data named by mistake."""
        if self.root is None or not os.path.lexists(self.root):
            return 0
        if not is_marked(self.root):
            raise PadconfError(f"{self.root} is not a compile cache padconf made (it holds no padconf {MARKER}): "
                               "nothing deleted")
        return self._walk(delete=True)[0]
