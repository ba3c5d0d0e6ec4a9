"""Drawing with Hypothesis apart from the user's Hypothesis: its storage in a private folder of
padconf's own for as long as padconf draws (``isolated_drawing``), and its literals drawn from
Hypothesis's own constants alone, so that a seed draws the same cases whatever else is imported."""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import stat
import tempfile
import threading
import warnings

import hypothesis
import hypothesis.configuration
import hypothesis.internal.conjecture.providers

from padconf.core.errors import PadconfError

_STORAGE_LOCK = threading.RLock()
_storage: str | None = None  # this process's own Hypothesis storage folder, made on first use


def own_storage_dir() -> str:
    """A private folder for Hypothesis's storage (its Unicode charmap cache, its default example
    database), one per process: made by mkdtemp (mode 0700, a new name, so nothing planted in
    it and no symbolic link in its place), removed at exit."""
    global _storage
    with _STORAGE_LOCK:
        if _storage is None or not os.path.isdir(_storage):  # a fork's parent may have removed it
            _storage = tempfile.mkdtemp(prefix="padconf-hypothesis-")
            atexit.register(shutil.rmtree, _storage, ignore_errors=True)
        info = os.lstat(_storage)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise PadconfError(f"{_storage}: padconf's Hypothesis folder was replaced")
        return _storage


@contextlib.contextmanager
def _own_storage():
    """Hypothesis keeps its storage in ``./.hypothesis`` unless told otherwise: a folder of the
    user's working directory, which anyone may have filled (a FIFO at
    ``unicode_data/<version>/charmap.json.gz`` hung the first draw of text for ever). padconf's
    draws use ``own_storage_dir()`` instead, for as long as they draw (the Hypothesis home of
    a pytest session padconf draws in is the user's again afterwards; draws need no database:
    ``draw_cases`` passes none)."""
    configuration = hypothesis.configuration
    name = "__hypothesis_home_directory"  # its private global: set_hypothesis_home_dir has no getter
    with _STORAGE_LOCK:
        before = getattr(configuration, name, None)
        configuration.set_hypothesis_home_dir(own_storage_dir())
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(before)


@contextlib.contextmanager
def _only_hypothesis_constants():
    """Hypothesis also draws literals it finds in the source of local modules already imported,
    so the same seed would draw other cases after an edit to any padconf module, or after one
    more import (``padconf run`` and pytest drew different cases). Drawing from Hypothesis's
    own constants alone keeps a seed's cases fixed. This patches Hypothesis's internals, only in
    the releases known to hold them (LOCAL_CONSTANTS_RELEASES); elsewhere it warns, once, that a
    seed may draw other cases, and patches nothing."""
    providers = hypothesis.internal.conjecture.providers
    if not local_constants_patchable(hypothesis.__version_info__, providers):
        yield
        return
    original = providers._get_local_constants
    providers._get_local_constants = providers.Constants
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


# The Hypothesis releases whose internals _only_hypothesis_constants patches: local constants came
# in 6.131.1; the next major release may move them.
LOCAL_CONSTANTS_RELEASES = ((6, 131, 1), (7, 0, 0))


@functools.cache
def _warn_unpatched(version: tuple) -> None:
    warnings.warn(f"Hypothesis {'.'.join(map(str, version))} is not a release padconf knows the internals of "
                  f"(from {'.'.join(map(str, LOCAL_CONSTANTS_RELEASES[0]))} to before "
                  f"{'.'.join(map(str, LOCAL_CONSTANTS_RELEASES[1]))}): a seed may draw other cases than with the "
                  "pinned Hypothesis (constraints.txt)", stacklevel=2)


def local_constants_patchable(version: tuple, providers) -> bool:
    """Whether Hypothesis ``version`` (its __version_info__) draws literals from local modules
    in the way _only_hypothesis_constants turns off. Before 6.131.1 it draws none (nothing to
    turn off); past the known releases, or without the expected internals, it warns."""
    first, past = LOCAL_CONSTANTS_RELEASES
    if tuple(version) < first:
        return False
    known = all(hasattr(providers, name) for name in ("_get_local_constants", "Constants", "CONSTANTS_CACHE"))
    if tuple(version) >= past or not known:
        _warn_unpatched(tuple(version))
        return False
    return True


@contextlib.contextmanager
def isolated_drawing():
    """While padconf draws: Hypothesis's storage in padconf's own folder, its constants alone."""
    with _own_storage(), _only_hypothesis_constants():
        yield
