"""Environments of their own: a runtime at a release other than the one installed beside padconf
(``onnxruntime@1.24.4``), or one whose pins clash with padconf's, in a virtual environment made
for it, where its workers run (``padconf.execution.env_child``, which imports nothing of padconf).

An environment holds the runtime's package at the version named and its dependencies at the
newest release that existed on that version's release date (uv's ``--exclude-newer``, the end of
the UTC day of the release's first upload on the package index), or at what a constraint file
the user gives allows (``padconf --env-constraints FILE``, ``$PADCONF_ENV_CONSTRAINTS``): nothing
of padconf is installed there, so no pin of padconf's (numpy, onnx) meets the runtime's.

They live under ``$PADCONF_ENV_CACHE`` (default ``$XDG_CACHE_HOME/padconf/envs``, else
``~/.cache/padconf/envs``), one folder each, named by package, version and a key of everything
else it depends on (the interpreter, the date or the constraints), beside uv's own cache of
downloaded wheels (``uv/``, unless ``$UV_CACHE_DIR`` names another), from which uv links the
files into each environment. The folder carries padconf's ``CACHEDIR.TAG``; it is bounded
(``$PADCONF_ENV_CACHE_MB``, default 8192): after making one, the least recently used others go
until the whole folder fits.

What is read back is untrusted (a cache restored from elsewhere): an environment is used only
when its manifest, ``padconf-env.json``, is a regular file within its bound, names the package,
version and key its folder does, carries an HMAC under the compile cache's key file (a secret
kept outside the folder, ``padconf.adapters.compile_cache.load_key``), and its digest of the
environment's files (paths, sizes, contents) is what the folder holds now; any other
is one line, exit 2, and nothing of it runs. ``clear`` deletes only folders padconf made (a
manifest or its being-built mark) in a tagged cache.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from padconf.adapters.compile_cache import load_key
from padconf.core.errors import PadconfError
from padconf.core.untrusted import json_value, read_text, sha256_of
from padconf.execution.package_index import INDEX_ENV, index_url, normalized, release

ENV = "PADCONF_ENV_CACHE"
LIMIT_ENV = "PADCONF_ENV_CACHE_MB"
CONSTRAINTS_ENV = "PADCONF_ENV_CONSTRAINTS"
DEFAULT_LIMIT_MB = 8192  # a runtime's environment is 100 to 300 MB, most of it linked from uv's cache
FORMAT = 2  # 2: the tree's digest holds each file's contents
MANIFEST = "padconf-env.json"
BUILDING = "padconf-building"  # an environment being made (or whose making was killed)
USED = "padconf-used"  # its modification time: when it was last used
MARKER = "CACHEDIR.TAG"
_MARKER_TEXT = (b"Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by "
                b"padconf.\n# padconf environments: padconf envs --clear deletes only the environments it made here\n")
MAX_MANIFEST_BYTES = 1 << 20
INSTALL_TIMEOUT_S = 900.0
_SLUG = re.compile(r"([a-z0-9][a-z0-9._-]{0,99})-([0-9][0-9a-z.]{0,63})-([0-9a-f]{16})")


def cache_root() -> Path:
    """The environments' folder: ``$PADCONF_ENV_CACHE``, else the user's cache folder's."""
    where = os.environ.get(ENV)
    if where:
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "padconf" / "envs"


def limit_bytes() -> int:
    text = os.environ.get(LIMIT_ENV, str(DEFAULT_LIMIT_MB))
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) <= 1 << 24:
        raise PadconfError(f"{LIMIT_ENV}={text!r}: a whole number of megabytes > 0 is needed")
    return int(text) << 20


def constraints_file() -> Path | None:
    where = os.environ.get(CONSTRAINTS_ENV)
    return Path(where).resolve() if where else None


@dataclass(frozen=True)
class Environment:
    """A made environment: its folder, its interpreter and what it holds."""
    package: str
    version: str
    folder: Path
    packages: dict[str, str]  # distribution -> version, as installed

    @property
    def python(self) -> Path:
        return self.folder / "venv" / "bin" / "python"

    @property
    def name(self) -> str:
        return f"{self.package} {self.version}"


def _interpreter() -> str:
    """The interpreter environments are made with: padconf's own (its native modules' ABI)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _uv() -> str:
    try:
        from uv import find_uv_bin  # the uv package padconf[releases] installs
        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise PadconfError("making an environment of its own for a runtime needs uv: pip install 'padconf[releases]' "
                       "(or uv on PATH)")


def _key(package: str, version: str, constraints: bytes | None, cutoff: dt.datetime | None) -> str:
    digest = hashlib.sha256()
    for part in (f"padconf-env {FORMAT}", normalized(package), version, _interpreter(), sys.version,
                 sys.platform, cutoff.isoformat() if cutoff else "", hashlib.sha256(constraints).hexdigest()
                 if constraints is not None else ""):
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:16]


def _tree_digest(venv: Path) -> str:
    """What the environment's files are: every path with its kind, size and contents (a link's
    target), walked without following links. Contents, not modification times: a .pyc swapped
    for another of its size, its time set back, is other code (attack round II)."""
    digest = hashlib.sha256()
    for top, dirs, files in os.walk(venv):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                extra = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    extra = sha256_of(f)
            else:
                extra = ""
            digest.update(f"{os.path.relpath(path, venv)}\0{st.st_mode:o}\0{st.st_size}\0{extra}\n"
                          .encode(errors="surrogateescape"))
    return digest.hexdigest()


def _mac(secret: bytes, body: dict) -> str:
    return hmac.new(secret, json.dumps(body, sort_keys=True).encode(), hashlib.sha256).hexdigest()


def _secret() -> bytes:
    secret, why = load_key()
    if secret is None:
        raise PadconfError(f"environments need the compile cache's key file to sign what they hold: {why}")
    return secret


def _mark(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    if (root / MARKER).is_file():
        return
    with os.scandir(root) as found:
        if any(e.name not in (MARKER, "uv") and not _SLUG.fullmatch(e.name) and not e.name.startswith(".lock-")
               for e in found):
            return  # a folder holding other things is used, not tagged: --clear then refuses it
    tmp = root / f".tmp-{os.getpid()}-{threading.get_ident()}"
    tmp.write_bytes(_MARKER_TEXT)
    os.replace(tmp, root / MARKER)


def is_marked(root: Path) -> bool:
    try:
        return (root / MARKER).read_bytes().startswith(_MARKER_TEXT.split(b"\n")[0]) \
            and b"padconf environments" in (root / MARKER).read_bytes()
    except OSError:
        return False


def _read_manifest(folder: Path) -> dict:
    """The manifest of the environment in ``folder``, checked; PadconfError (one line) if it is
    not one padconf wrote for that folder under the user's key."""
    where = folder / MANIFEST
    if folder.is_symlink() or (where.exists() and where.is_symlink()):
        raise PadconfError(f"environment {folder} is broken: a symbolic link where padconf keeps a folder and a file; "
                           "remove it, or `padconf envs --clear`")
    text = read_text(where, MAX_MANIFEST_BYTES, PadconfError)
    doc = json_value(text, str(where), PadconfError)
    want: dict[str, type | tuple[type, ...]] = {
        "format": int, "package": str, "version": str, "key": str, "interpreter": str, "cutoff": (str, type(None)),
        "constraints": (str, type(None)), "packages": dict, "tree": str, "made": str, "mac": str}
    if not isinstance(doc, dict) or set(doc) != set(want) or not all(isinstance(doc[k], t) for k, t in want.items()):
        raise PadconfError(f"environment {folder} is broken: {where} is not a manifest padconf writes; remove it, or "
                           "`padconf envs --clear`")
    body = {k: v for k, v in doc.items() if k != "mac"}
    if not hmac.compare_digest(doc["mac"], _mac(_secret(), body)):
        raise PadconfError(f"environment {folder} is broken: its manifest is not signed with this user's key "
                           "(made elsewhere, or changed); remove it, or `padconf envs --clear`")
    return doc


def _check(folder: Path, doc: dict) -> Environment:
    found = _SLUG.fullmatch(folder.name)
    if not found or (found[1], found[2], found[3]) != (normalized(doc["package"]), doc["version"], doc["key"]):
        raise PadconfError(f"environment {folder} is broken: its manifest is another environment's")
    python = folder / "venv" / "bin" / "python"
    if os.path.realpath(python) != doc["interpreter"] or doc["interpreter"] != _interpreter():
        raise PadconfError(f"environment {folder} is broken: its interpreter is not {_interpreter()}")
    if _tree_digest(folder / "venv") != doc["tree"]:
        raise PadconfError(f"environment {folder} is broken: its files changed since padconf made it; remove it, or "
                           "`padconf envs --clear`")
    return Environment(doc["package"], doc["version"], folder, dict(doc["packages"]))


_LOCK = threading.Lock()  # the lanes of one process ask at once; other processes take the file lock
_MADE: dict[tuple[str, str, str, str], Environment] = {}  # this process's, checked


def ensure(package: str, version: str, say=None, imports: tuple[str, ...] = (),
           blocked: tuple[str, ...] = ()) -> Environment:
    """The environment of ``package`` ``version``, made if need be (``say(text)`` is told so).
    ``imports``: the runtime's modules, imported once as it is made (``blocked`` ones kept out),
    so that what the runtime imports is compiled to bytecode there and then, and nothing else."""
    constraints = constraints_file()
    made_key = (str(cache_root()), package, version, str(constraints))
    with _LOCK:
        if made_key in _MADE:
            return _MADE[made_key]
        pins = read_text(constraints, 1 << 20, PadconfError).encode() if constraints else None
        cutoff = None if constraints else release(package, version).cutoff
        key = _key(package, version, pins, cutoff)
        root = cache_root()
        folder = root / f"{normalized(package)}-{version}-{key}"
        _mark(root)
        with open(root / f".lock-{folder.name}", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if folder.exists() and (folder / BUILDING).exists() and not (folder / MANIFEST).exists():
                shutil.rmtree(folder)  # padconf's own half-made one (killed while making it)
            if not folder.exists():
                if say:
                    say(f"making an environment for {package} {version} ("
                        + (f"its dependencies as {constraints} allows" if constraints else
                           f"its dependencies as of {cutoff:%Y-%m-%d}") + ")")
                _make(folder, package, version, key, cutoff, constraints, imports, blocked)
                made = True
            else:
                made = False
            env = _check(folder, _read_manifest(folder))
        with contextlib.suppress(OSError):
            (folder / USED).touch()
        _MADE[made_key] = env
    if made:
        evict(keep={folder.name})
    return env


def _run_uv(args: list[str], doing: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "CONDA"))}
    environ.setdefault("UV_CACHE_DIR", str(cache_root() / "uv"))
    environ["UV_NO_CONFIG"] = "1"  # no uv.toml or pyproject.toml of the working directory
    environ["UV_PYTHON_DOWNLOADS"] = "never"
    index = os.environ.get(INDEX_ENV)
    if index:
        environ["UV_DEFAULT_INDEX"] = index
    try:
        done = subprocess.run([_uv(), *args], capture_output=True, text=True, cwd=cache_root(), env=environ,
                              timeout=INSTALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise PadconfError(f"{doing}: uv took more than {INSTALL_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        said = " ".join(lines)
        if re.search(r"dns error|failed to fetch|connect|network|timed out|offline", said, re.I):
            raise PadconfError(f"no network: {doing} needs the package index ({index_url()}): "
                               f"{(lines or ['uv failed'])[-1][:300]}")
        cause = next((ln for ln in lines if ln.startswith(("error:", "×", "╰─▶", "Because"))),
                     lines[-1] if lines else "")
        raise PadconfError(f"{doing}: uv could not install it: {' '.join(cause.split())[:400]}")
    return done.stdout


def _make(folder: Path, package: str, version: str, key: str, cutoff: dt.datetime | None,
          constraints: Path | None, imports: tuple[str, ...], blocked: tuple[str, ...]) -> None:
    doing = f"making an environment for {package} {version}"
    folder.mkdir()
    (folder / BUILDING).touch()
    venv = folder / "venv"
    try:
        _run_uv(["venv", "--quiet", "--no-project", "--python", _interpreter(), str(venv)], doing)
        python = str(venv / "bin" / "python")
        pinned = (["--constraints", str(constraints)] if constraints else
                  ["--exclude-newer", f"{cutoff:%Y-%m-%dT%H:%M:%SZ}",  # the runtime: the version named, whenever
                   "--exclude-newer-package", f"{package}={dt.datetime.now(dt.timezone.utc):%Y-%m-%dT%H:%M:%SZ}"])
        _run_uv(["pip", "install", "--quiet", "--python", python, "--only-binary", ":all:", *pinned,
                 f"{package}=={version}"], doing)
        # the runtime imported once: what it imports is compiled to bytecode now, inside what the
        # manifest's digest covers (its workers run with -B, writing none), and nothing else is
        warm = "import sys\nfor m in sys.argv[1].split(','):\n    sys.modules.setdefault(m, None)\n" \
               "import importlib\nfor m in sys.argv[2].split(','):\n    importlib.import_module(m)\n"
        subprocess.run([python, "-I", "-c", warm, ",".join(blocked), ",".join(("numpy", *imports))], cwd=folder,
                       capture_output=True, timeout=INSTALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        frozen = _run_uv(["pip", "freeze", "--python", python], doing)
        packages = dict(line.split("==", 1) for line in frozen.splitlines() if "==" in line)
        body = {"format": FORMAT, "package": package, "version": version, "key": key, "interpreter": _interpreter(),
                "cutoff": cutoff.isoformat() if cutoff else None,
                "constraints": str(constraints) if constraints else None, "packages": packages,
                "tree": _tree_digest(venv), "made": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        tmp = folder / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps({**body, "mac": _mac(_secret(), body)}, indent=1), encoding="utf-8")
        os.replace(tmp, folder / MANIFEST)
        (folder / BUILDING).unlink()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


@dataclass
class Listed:
    folder: Path
    package: str | None  # None: not an environment padconf can read (broken, or being made)
    version: str | None
    size: int
    used: float
    problem: str | None = None
    packages: int = 0


def _size(path: Path, seen: set) -> int:
    """Bytes of the regular files under ``path``, each file (inode) counted once across calls
    sharing ``seen``: uv links an environment's files to its cache."""
    total = 0
    for top, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512 if st.st_blocks else st.st_size
    return total


def listing(check: bool = True) -> tuple[list[Listed], int, int]:
    """Every environment in the cache (least recently used first), uv's cache's size, and the
    whole folder's size, each file counted once; ``check``: each environment's files too."""
    root = cache_root()
    found: list[Listed] = []
    seen: set = set()
    uv_size = _size(root / "uv", seen) if (root / "uv").is_dir() and not (root / "uv").is_symlink() else 0
    if root.is_dir():
        for entry in sorted(root.iterdir()):
            if not _SLUG.fullmatch(entry.name) or entry.is_symlink() or not entry.is_dir():
                continue
            used = max((p.stat().st_mtime for p in (entry / USED, entry / MANIFEST) if p.is_file()), default=0.0)
            try:
                doc = _read_manifest(entry)
                if check:
                    _check(entry, doc)
                found.append(Listed(entry, doc["package"], doc["version"], 0, used, packages=len(doc["packages"])))
            except PadconfError as exc:
                found.append(Listed(entry, None, None, 0, used,
                                    "being made" if (entry / BUILDING).exists() else str(exc)))
    found.sort(key=lambda e: e.used)
    for env in reversed(found):  # the most recently used first own the files they share
        env.size = _size(env.folder, seen)
    return found, uv_size, uv_size + sum(e.size for e in found)


def evict(keep: set[str]) -> list[str]:
    """Remove least recently used environments until the cache fits its bound; never one named
    in ``keep`` or being made. What went, by name."""
    limit = limit_bytes()
    found, _, total = listing(check=False)
    gone = []
    for env in found:
        if total <= limit:
            break
        if env.folder.name in keep or env.package is None:
            continue
        shutil.rmtree(env.folder, ignore_errors=True)
        total -= env.size
        gone.append(env.folder.name)
        for key in [k for k, v in _MADE.items() if v.folder == env.folder]:
            del _MADE[key]
    if total > limit and (cache_root() / "uv").is_dir():
        with contextlib.suppress(PadconfError):
            _run_uv(["cache", "prune", "--quiet"], "pruning uv's cache")
    return gone


def clear() -> int:
    """Delete every environment padconf made and uv's cache beside them; how many went. A folder
    without padconf's tag is refused, nothing deleted."""
    root = cache_root()
    if not root.is_dir():
        return 0
    if not is_marked(root):
        raise PadconfError(f"{root} is not an environment cache padconf made (it holds no padconf {MARKER}): "
                           "nothing deleted")
    count = 0
    for entry in sorted(root.iterdir()):
        if _SLUG.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink() \
                and ((entry / MANIFEST).is_file() or (entry / BUILDING).is_file()):
            shutil.rmtree(entry)
            count += 1
        elif entry.name.startswith(".lock-") and entry.is_file() and not entry.is_symlink():
            entry.unlink()
    if (root / "uv").is_dir() and not (root / "uv").is_symlink() and not os.environ.get("UV_CACHE_DIR"):
        _run_uv(["cache", "clean", "--quiet"], "clearing uv's cache")
    _MADE.clear()
    return count


def age(seconds: float) -> str:
    """How long ago, in words."""
    ago = max(0.0, time.time() - seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if ago >= size:
            return f"{ago / size:.0f} {unit} ago"
    return "just now"
