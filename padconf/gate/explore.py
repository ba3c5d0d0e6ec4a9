"""The gate's explorations kept between runs: a Hypothesis example database holding, per spec
version, the explored cases that failed in a new way, replayed by the next ``padconf gate
--explore`` until they no longer fail."""
from __future__ import annotations

import importlib
import itertools
import json
import os
import re

from padconf.cases.case import Case, InputBudget
from padconf.cases.classify import classify
from padconf.cases.edge_classes import edge_classes
from padconf.core.dtypes import OverBudget
from padconf.core.errors import CaseError, PadconfError
from padconf.core.untrusted import inside, read_bytes
from padconf.core.writing import make_folder
from padconf.judging.records import ResultRow
from padconf.spec.loader import Spec

EXPLORE_KEY = b"padconf-explore:"  # + spec id: the example database's key for that version's finds
DEFAULT_DATABASE = ".padconf/examples"
MAX_VALUE_BYTES = 64 << 20  # one kept case's inputs as JSON: a drawn case's are a few MB at most
MAX_VALUES = 10_000  # kept cases of one spec version: each is a new failure an exploration found

REPLAYED = "explore:replayed"  # the origin of a case the example database gave back


def folder_database(where: str):
    """Hypothesis's DirectoryBasedExampleDatabase over ``where``, read as a folder from others
    (a CI job downloads it, a pull request can change it): a value is read only from a regular
    file inside the folder, and refused past MAX_VALUE_BYTES before it is read; a key's folder
    of more than MAX_VALUES values is refused before any is read, and one that leads outside
    the folder (a symbolic link) is neither read nor written. One line, CaseError."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    class FolderDatabase(DirectoryBasedExampleDatabase):
        def _key_folder(self, key: bytes):
            folder = self._key_path(key)
            return inside(folder, self.path) if os.path.lexists(folder) else folder

        def fetch(self, key: bytes):
            folder = self._key_folder(key)
            if not folder.is_dir():
                return
            with os.scandir(folder) as entries:
                names = [entry.name for entry in itertools.islice(entries, MAX_VALUES + 1)]
            if len(names) > MAX_VALUES:
                raise CaseError(f"{folder}: more than {MAX_VALUES} values")
            for name in sorted(names):
                yield read_bytes(inside(folder / name, self.path), MAX_VALUE_BYTES, name=str(folder / name))

        def save(self, key: bytes, value: bytes) -> None:
            self._key_folder(key)
            super().save(key, value)

        def delete(self, key: bytes, value: bytes) -> None:
            self._key_folder(key)
            super().delete(key, value)

    make_folder(where)  # written by Hypothesis below it: no link on the way (a committed .padconf/examples)
    return FolderDatabase(where)


def example_database(where: str | None):
    """A Hypothesis example database: a folder (DirectoryBasedExampleDatabase), or
    ``FILE.py:attribute`` (a Python file the user names, such as their repository's ci_db.py,
    run from its path: padconf imports nothing from the working directory by itself) or
    ``module:attribute`` (an installed module) naming any ExampleDatabase
    (GitHubArtifactDatabase, MultiplexedDatabase ...), or None for ``none``."""
    from hypothesis.database import ExampleDatabase
    where = where or DEFAULT_DATABASE
    if where == "none":
        return None
    named_file = re.fullmatch(r"(.+\.py):(\w+)", where)
    if named_file or re.fullmatch(r"[\w.]+:\w+", where):
        module, name = (named_file[1], named_file[2]) if named_file else where.split(":")
        try:
            db = getattr(_load_file(module) if named_file else importlib.import_module(module), name)
        except Exception as exc:
            raise PadconfError(f"--example-db {where}: cannot load it: {type(exc).__name__}: {exc}") from None
        if not isinstance(db, ExampleDatabase):
            raise PadconfError(f"--example-db {where}: not a hypothesis ExampleDatabase but {type(db).__name__}")
        return db
    return folder_database(where)


def _load_file(path: str):
    """The Python file ``path`` as a module of its own (not put on sys.path, nor named after
    anything a later import could find)."""
    import importlib.util
    import sys

    if not os.path.isfile(path):
        raise FileNotFoundError(f"no file {path}")
    name = f"padconf_example_db_{abs(hash(os.path.abspath(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a .py file's
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # what the file's own dataclasses and pickles look up
    spec.loader.exec_module(module)
    return module


def _db_value(case: Case) -> bytes:
    return json.dumps(case.inputs_json(), sort_keys=True).encode()


def replayed(db, spec: Spec) -> list[Case]:
    """The cases earlier explorations found failing for ``spec``, classified afresh (the
    database keeps inputs only, as JSON: the spec files may have changed since)."""
    cases, key = [], EXPLORE_KEY + spec.id.encode()
    budget = InputBudget(f"the example database's cases of {spec.id}")
    for value in sorted(db.fetch(key)):
        try:
            case = classify(Case.from_json(json.loads(value), budget), spec)
        except OverBudget as exc:
            if exc.budget is budget:  # the values together, not this one: none is to blame
                raise CaseError(str(exc)) from None
            db.delete(key, value)  # this one's arrays alone are past a case's bound
            continue
        except (ValueError, RecursionError, CaseError, PadconfError):
            db.delete(key, value)  # written by another padconf, or broken (or nested past the recursion limit)
            continue
        if value != _db_value(case):  # one spelling per case, so that forgetting it forgets it
            db.delete(key, value)
            db.save(key, _db_value(case))
        case.tags = edge_classes(case, spec)
        case.origin = REPLAYED
        cases.append(case)
    return cases


def remember(db, rows: list[ResultRow], cases: list[Case], new: list[ResultRow]) -> None:
    """Keep the explored cases that failed in a new way; forget replayed ones that no longer do."""
    by_id = {c.id: c for c in cases}
    new_ids = {r["case_id"] for r in new}
    for case_id in {r["case_id"] for r in rows}:
        case = by_id.get(case_id)
        if case is None or not case.origin.startswith("explore"):
            continue
        key, value = EXPLORE_KEY + case.spec.encode(), _db_value(case)
        if case_id in new_ids:
            db.save(key, value)
        elif case.origin == REPLAYED:
            db.delete(key, value)
