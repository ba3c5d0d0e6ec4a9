"""The user's secret key: random bytes in a private file outside every folder padconf writes,
which sign what padconf must later know for its own (a compile cache's entries, an
environment's manifest, the mark of a folder padconf wrote). A file committed in a checkout
cannot carry a valid signature: whoever wrote it never saw the key."""
from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

KEY_ENV = "PADCONF_COMPILE_CACHE_KEY"  # the key file's path (named when the compile cache was its only user)
KEY_BYTES, MAX_KEY_BYTES = 32, 4096
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO is opened, not waited on


def key_path() -> Path:
    """The file holding the secret: ``$PADCONF_COMPILE_CACHE_KEY``, else the user's config
    folder's ``padconf/compile-cache.key``. Never inside a folder padconf writes: whoever can
    write that folder could then sign what they put there."""
    where = os.environ.get(KEY_ENV)
    if where:
        return Path(where)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "padconf" / "compile-cache.key"


class _Refused(Exception):
    """A key file padconf will not trust; the message says what is wrong with it."""


def _read_key(path: Path) -> bytes:
    try:
        fd = os.open(path, _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symbolic link
            raise _Refused("is a symbolic link") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # checked before fdopen, which refuses a folder itself
        os.close(fd)
        raise _Refused("is not a regular file")
    with os.fdopen(fd, "rb") as f:
        if st.st_uid != os.geteuid():
            raise _Refused(f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})")
        if st.st_mode & 0o077:
            raise _Refused(f"is open to group or others (mode {stat.S_IMODE(st.st_mode):04o}; chmod 600 it)")
        secret = f.read(MAX_KEY_BYTES + 1)
    if not KEY_BYTES <= len(secret) <= MAX_KEY_BYTES:
        raise _Refused(f"holds {len(secret)} bytes, not {KEY_BYTES} to {MAX_KEY_BYTES}")
    return secret


def _create_key(path: Path) -> None:
    """A new random key at ``path``, whole or not at all: written to a private file beside it and
    linked into place, so a process that made one meanwhile keeps its own (link never replaces)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}-{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)


KEYS: dict[str, tuple[bytes | None, str | None]] = {}  # key file -> (secret, why not): one read a process


def load_key(cache: dict[str, tuple[bytes | None, str | None]] | None = None) -> tuple[bytes | None, str | None]:
    """``(secret, None)`` from the key file (made if there is none), or ``(None, why)``: one line
    saying what is wrong with the key file. Read once a process (``cache``, KEYS by default);
    forks inherit what was read."""
    cache = KEYS if cache is None else cache
    path = key_path()
    if str(path) not in cache:
        try:
            try:
                found: tuple[bytes | None, str | None] = (_read_key(path), None)
            except FileNotFoundError:
                _create_key(path)
                found = (_read_key(path), None)
        except _Refused as exc:
            found = (None, f"its key file {path} {exc}")
        except OSError as exc:
            found = (None, f"its key file {path} cannot be read or made: {exc.strerror or exc}")
        cache[str(path)] = found
    return cache[str(path)]


def signature(purpose: bytes, payload: bytes) -> str | None:
    """The hex HMAC-SHA256 of ``payload`` for ``purpose`` under the user's key, or None where
    there is no usable key (then nothing can be proven padconf's)."""
    secret, _ = load_key()
    if secret is None:
        return None
    return hmac.new(secret, purpose + b"\n" + payload, hashlib.sha256).hexdigest()


def signed(purpose: bytes, payload: bytes, found: str) -> bool:
    """Whether ``found`` is ``payload``'s signature for ``purpose`` under the user's key."""
    expected = signature(purpose, payload)
    return expected is not None and hmac.compare_digest(expected, found.strip())
