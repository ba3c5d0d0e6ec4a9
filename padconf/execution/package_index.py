"""The package index, asked which releases of a runtime's package exist and when each was first
uploaded (its JSON simple API, ``$PADCONF_INDEX_URL``, default PyPI's): what an environment of
its own (padconf.execution.environments) installs, and what ``padconf bisect`` walks. Its pages
are read bounded; no network is one line."""
from __future__ import annotations

import datetime as dt
import os
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass

from padconf.core.errors import PadconfError
from padconf.core.untrusted import json_value

INDEX_ENV = "PADCONF_INDEX_URL"
DEFAULT_INDEX = "https://pypi.org/simple/"
MAX_INDEX_BYTES = 64 << 20  # a project's page on the index: onnxruntime's is 2 MB
INDEX_TIMEOUT_S = 30.0
_FINAL = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:\.post[0-9]+)?")


def normalized(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package).lower()


@dataclass(frozen=True)
class Release:
    """One final release of a package that has a file this interpreter can install."""
    version: str
    uploaded: dt.datetime  # its first file's upload time on the index

    @property
    def cutoff(self) -> dt.datetime:
        """The end of its release date (UTC): its dependencies are the newest that existed then."""
        day = self.uploaded.astimezone(dt.timezone.utc).date() + dt.timedelta(days=1)
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)


def version_key(version: str) -> tuple:
    """Orders final releases: "1.9.0" < "1.10.0" < "1.10.0.post1"."""
    main, _, post = version.partition(".post")
    return tuple(int(p) for p in main.split(".")), int(post or -1)


def index_url() -> str:
    url = os.environ.get(INDEX_ENV, DEFAULT_INDEX)
    return url if url.endswith("/") else url + "/"


def _installable(filename: str, package: str) -> str | None:
    """The version of a distribution file this interpreter can install (a compatible wheel, or
    an sdist), or None."""
    from packaging.tags import sys_tags
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_wheel_filename

    try:
        if filename.endswith(".whl"):
            name, version, _, tags = parse_wheel_filename(filename)
            if not tags & _TAGS.setdefault("tags", frozenset(sys_tags())):
                return None
        elif filename.endswith((".tar.gz", ".zip")):
            return None  # an sdist builds native code padconf would have to trust the build of: wheels only
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    if normalized(str(name)) != normalized(package):
        return None
    text = str(version)
    return text if _FINAL.fullmatch(text) else None


_TAGS: dict[str, frozenset] = {}
_RELEASES: dict[str, list[Release]] = {}


def releases(package: str) -> list[Release]:
    """Every final release of ``package`` on the index that has a wheel for this interpreter,
    oldest first (PEP 691's JSON form of the simple index: each file's upload time). No network
    is one line."""
    if package in _RELEASES:
        return _RELEASES[package]
    url = f"{index_url()}{normalized(package)}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=INDEX_TIMEOUT_S) as reply:
            body = reply.read(MAX_INDEX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise PadconfError(f"the package index ({index_url()}) has no package {package}") from None
        raise PadconfError(f"the package index ({index_url()}) answered {exc.code} for {package}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PadconfError(f"no network: cannot reach the package index ({index_url()}) to list {package}'s "
                           f"releases ({reason})") from None
    if len(body) > MAX_INDEX_BYTES:
        raise PadconfError(f"the package index's page for {package} is larger than {MAX_INDEX_BYTES} bytes")
    page = json_value(body.decode("utf-8", errors="replace"), url, PadconfError)
    files = page.get("files") if isinstance(page, dict) else None
    if not isinstance(files, list):
        raise PadconfError(f"{url}: not a PEP 691 project page (no list of files)")
    first: dict[str, dt.datetime] = {}
    installable: set[str] = set()
    for entry in files:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str) or entry.get("yanked"):
            continue
        version = _installable(entry["filename"], package)
        uploaded = _parse_time(entry.get("upload-time"))
        if version is None or uploaded is None:
            continue
        installable.add(version)
        first[version] = min(first.get(version, uploaded), uploaded)
    found = sorted((Release(v, first[v]) for v in installable), key=lambda r: version_key(r.version))
    _RELEASES[package] = found
    return found


def _parse_time(text) -> dt.datetime | None:
    if not isinstance(text, str) or len(text) > 40:
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def release(package: str, version: str) -> Release:
    """``version`` of ``package`` as the index has it; one line naming the nearest ones if not."""
    found = releases(package)
    for candidate in found:
        if candidate.version == version:
            return candidate
    near = ", ".join(r.version for r in found[-12:]) or "none"
    raise PadconfError(f"{package} {version} is not a final release on the package index with a wheel for this "
                       f"Python ({sys.implementation.name} {sys.version.split()[0]}); the latest that are: {near}")


def between(package: str, start: str | None, end: str | None) -> list[Release]:
    """The releases from ``start`` to ``end`` (each named or None: the first, the last), oldest first."""
    found = releases(package)
    versions = [r.version for r in found]
    for named in (start, end):
        if named is not None and named not in versions:
            release(package, named)  # says which exist
    lo = versions.index(start) if start else 0
    hi = versions.index(end) if end else len(found) - 1
    if lo > hi:
        raise PadconfError(f"--from {start} is later than --to {end}")
    return found[lo:hi + 1]
