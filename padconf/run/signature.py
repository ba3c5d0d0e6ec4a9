"""A run directory's signature (``run.sig``): an HMAC, under the user's key (core.user_key), of
the files padconf reads back from it. Every row of a run can be checked against its case except
the runtime's own answer: a failure relabelled a pass, with the digest of its expected output
(which anyone can compute from cases.jsonl), reads as a pass. Only a key the forger lacks tells
the two apart. The jobs of one CI workflow share one key file (docs/ci.md).
"""
from __future__ import annotations

import enum
import errno
import json
import os
import stat
from pathlib import Path

import msgspec

from padconf.core import user_key
from padconf.core.errors import PadconfError
from padconf.core.untrusted import read_bytes, sha256_of
from padconf.core.writing import write_atomically

SIGNATURE = "run.sig"
MAX_SIGNATURE_BYTES = 1 << 12
_PURPOSE = b"run directory"


class Signature(enum.Enum):
    """What a run directory's ``run.sig`` says of it, under this user's key."""
    SIGNED = "signed by padconf under your key"  # and nothing it covers changed since
    UNSIGNED = f"not signed (no {SIGNATURE})"  # a run killed before its end, or a folder from elsewhere
    OTHER_KEY = "signed under another key than yours"  # another user's or machine's run, or a forged run.sig
    CHANGED = "changed since padconf signed it"  # under your key: a file it covers changed since


class _Record(msgspec.Struct, forbid_unknown_fields=True):
    files: dict[str, str | None]
    mac: str


def _digest(path: Path) -> str | None:
    """The SHA-256 of ``path``'s bytes; None where there is no such regular file (a link is none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP):
            return None
        raise PadconfError(f"{path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        return sha256_of(f) if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else None


def _payload(files: dict[str, str | None]) -> bytes:
    return json.dumps(files, sort_keys=True).encode()


def _files(run_dir: Path, names: tuple[str, ...]) -> dict[str, str | None]:
    return {name: _digest(run_dir / name) for name in names}


def sign(run_dir: Path, names: tuple[str, ...]) -> str | None:
    """Sign the files ``names`` of ``run_dir`` (a missing one as missing) in its run.sig; None,
    or why not (no usable key), a note for the run's end."""
    files = _files(run_dir, names)
    mac = user_key.signature(_PURPOSE, _payload(files))
    if mac is None:
        return f"{SIGNATURE} not written: {user_key.load_key()[1]}; gate --results refuses an unsigned shard"
    write_atomically(run_dir / SIGNATURE, json.dumps({"files": files, "mac": mac}) + "\n")
    return None


def signature_of(run_dir: Path, names: tuple[str, ...]) -> Signature:
    """What ``run_dir``'s run.sig says of its files ``names`` (sign's), under this user's key."""
    path = run_dir / SIGNATURE
    if not path.exists() and not path.is_symlink():
        return Signature.UNSIGNED
    try:
        record = msgspec.json.decode(read_bytes(path, MAX_SIGNATURE_BYTES, PadconfError, follow=False), type=_Record)
    except msgspec.ValidationError as exc:
        raise PadconfError(f"{path}: malformed: {exc}") from None
    except msgspec.DecodeError:
        raise PadconfError(f"{path}: malformed: not JSON") from None
    if not user_key.signed(_PURPOSE, _payload(record.files), record.mac):
        return Signature.OTHER_KEY
    return Signature.SIGNED if _files(run_dir, names) == record.files else Signature.CHANGED
