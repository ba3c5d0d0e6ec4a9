"""Installed package versions, read from the packages' metadata without importing them."""
from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

RUNTIME_PACKAGES = ("onnxruntime", "openvino", "tract", "onnx", "numpy")  # named by `padconf --version`


def package_version(package: str) -> str | None:
    """The installed version of ``package``, or None."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def versions_line() -> str:
    """padconf's version and that of every runtime package padconf found."""
    found = [f"{p} {package_version(p)}" for p in RUNTIME_PACKAGES if package_version(p)]
    return f"padconf {package_version('padconf') or '(not installed)'}; " + (", ".join(found) or "no runtime found")
