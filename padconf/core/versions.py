"""Installed package versions, read from the packages' metadata without importing them."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version(package: str) -> str | None:
    """The installed version of ``package``, or None."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def versions_line(packages) -> str:
    """padconf's version and that of each of ``packages`` installed (those of every runtime
    padconf can run: padconf.cli.parser.runtime_packages)."""
    found = [f"{p} {package_version(p)}" for p in packages if package_version(p)]
    return f"padconf {package_version('padconf') or '(not installed)'}; " + (", ".join(found) or "no runtime found")
