"""What a run is asked to do (RunConfig), checked whether it comes from the command line or from
a run.json anyone may have written."""
from __future__ import annotations

import functools
import operator
import reprlib
import types
import typing
from dataclasses import MISSING, dataclass, field, fields
from typing import Annotated, Any, Literal

import msgspec

from padconf.adapters import default_runtimes, unknown_runtime
from padconf.cases.profiles import PROFILES
from padconf.cases.selection import CaseFilter
from padconf.core.errors import CaseError, PadconfError
from padconf.execution.worker import (
    DEFAULT_COMPILE_TIMEOUT_S,
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    MAX_MEMORY_MB,
    MAX_TIMEOUT_S,
    MIN_TIMEOUT_S,
    address_space_mb,
)
from padconf.run.compile_budget import ALL, DEFAULT_COMPILE_BUDGET

# Upper bounds of RunConfig's values, which the command line and run.json (a file anyone may have
# written) share, RunConfig checking both: max_examples is cases drawn per spec version (the
# thorough profile's 2,500 four times over; 10**9 in a planted run.json drew for ever on --resume),
# a seed fits in 64 bits.
MAX_EXAMPLES = 10_000
MAX_SEED = (1 << 63) - 1
MAX_NAMES = 1024  # entries of runtimes, specs and cases_dir: each costs a lookup, a worker or a walk
MAX_NAME_CHARS = 4096  # each of those entries, and specs_dir (PATH_MAX)
MAX_COMPILE_BUDGET = 10**6  # compiled models: more than any run draws
MAX_COUNT = 1 << 40  # run.json's counts of cases and results

# run.json's types and bounds, declared once on RunConfig's fields (``run_record`` reads them
# from there): what a run.json anyone may have written holds is held to them before use.
_Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_CHARS)]
_Names = Annotated[list[_Name], msgspec.Meta(max_length=MAX_NAMES)]
_Seconds = Annotated[float, msgspec.Meta(ge=MIN_TIMEOUT_S, le=MAX_TIMEOUT_S)]
_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
Profile = Literal["ci", "default", "thorough"]  # PROFILES' names (a test holds them equal)
# every spec's modes together (a test holds them equal; CaseFilter checks each spec's)
Mode = Literal["constant", "reflect", "edge", "wrap", "symmetric"]



@dataclass
class RunConfig:
    runtimes: Annotated[_Names, msgspec.Meta(min_length=1)] = field(default_factory=default_runtimes)
    specs: _Names | None = None
    specs_dir: _Name | None = None  # None: the spec files shipped with padconf
    profile: Profile | str = "default"
    # generated cases per spec; None: the profile's
    max_examples: Annotated[int, msgspec.Meta(ge=0, le=MAX_EXAMPLES)] | None = None
    seed: Annotated[int, msgspec.Meta(ge=-MAX_SEED - 1, le=MAX_SEED)] = 0
    memory_mb: Annotated[int, msgspec.Meta(ge=64, le=MAX_MEMORY_MB)] = DEFAULT_MEMORY_MB
    timeout: _Seconds = DEFAULT_TIMEOUT_S
    compile_timeout: _Seconds = DEFAULT_COMPILE_TIMEOUT_S  # an ahead-of-time compiler's build of one model
    # models an ahead-of-time compiler builds in the run (padconf.run.compile_budget), or "all"
    compile_budget: Annotated[int, msgspec.Meta(ge=0, le=MAX_COMPILE_BUDGET)] | Literal["all"] | str = \
        DEFAULT_COMPILE_BUDGET
    cases_dir: _Names | None = None  # read the cases from test directories (padconf.suite.folders' layout)
    # which of the cases drawn or read it runs (padconf.cases.selection.CaseFilter: --mode, --dtype, -k)
    modes: Annotated[list[Mode | str], msgspec.Meta(max_length=MAX_NAMES)] | None = None
    dtypes: _Names | None = None
    pattern: Annotated[str, msgspec.Meta(max_length=MAX_NAME_CHARS)] | None = None

    def __post_init__(self):
        for name in ("runtimes", "specs", "cases_dir"):  # first: the checks below take each entry in turn
            value = getattr(self, name)
            if isinstance(value, list) and (len(value) > MAX_NAMES or any(
                    isinstance(v, str) and len(v) > MAX_NAME_CHARS for v in value)):
                raise PadconfError(f"{name} must have at most {MAX_NAMES} entries of at most {MAX_NAME_CHARS} "
                                   f"characters, got {reprlib.repr(value)}")
        problems = []
        if not self.runtimes or not all(isinstance(r, str) and r for r in self.runtimes):
            problems.append(f"runtimes must name at least one runtime, got {reprlib.repr(self.runtimes)}")
        else:
            problems += [unknown_runtime(r) for r in self.runtimes if unknown_runtime(r)]
        if self.profile not in PROFILES:
            problems.append(f"profile {reprlib.repr(self.profile)} is not one of {', '.join(PROFILES)}")
        if isinstance(self.runtimes, list) and len(set(map(repr, self.runtimes))) < len(self.runtimes):
            problems.append(f"runtimes must not name one twice, got {reprlib.repr(self.runtimes)}")
        if self.max_examples is not None and (type(self.max_examples) is not int
                                              or not 0 <= self.max_examples <= MAX_EXAMPLES):
            problems.append(f"max_examples must be a whole number >= 0 and <= {MAX_EXAMPLES}, "
                            f"got {reprlib.repr(self.max_examples)}")
        for name in ("timeout", "compile_timeout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not MIN_TIMEOUT_S <= value <= MAX_TIMEOUT_S:
                problems.append(f"{name} must be a number of seconds >= {MIN_TIMEOUT_S:g} and <= {MAX_TIMEOUT_S:g}, "
                                f"got {reprlib.repr(value)}")
        if self.compile_budget != ALL and (type(self.compile_budget) is not int
                                           or not 0 <= self.compile_budget <= MAX_COMPILE_BUDGET):
            problems.append(f"compile_budget must be a whole number >= 0 and <= {MAX_COMPILE_BUDGET} or "
                            f"{ALL!r}, got {reprlib.repr(self.compile_budget)}")
        for name in ("specs", "cases_dir", "modes", "dtypes"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                problems.append(f"{name} must be a list of text or null, got {reprlib.repr(value)}")
        if self.specs_dir is not None and not (isinstance(self.specs_dir, str)
                                               and len(self.specs_dir) <= MAX_NAME_CHARS):
            problems.append(f"specs_dir must be text of at most {MAX_NAME_CHARS} characters or null, "
                            f"got {reprlib.repr(self.specs_dir)}")
        if type(self.seed) is not int or not -MAX_SEED - 1 <= self.seed <= MAX_SEED:
            problems.append(f"seed must be a whole number of 64 bits (-2**63 to 2**63 - 1), "
                            f"got {reprlib.repr(self.seed)}")
        if type(self.memory_mb) is not int or not 64 <= self.memory_mb <= MAX_MEMORY_MB:
            problems.append(f"memory_mb must be a whole number >= 64 and <= {MAX_MEMORY_MB}, "
                            f"got {reprlib.repr(self.memory_mb)}")
        elif self.memory_mb > address_space_mb():  # a worker could not set its cap, and would not start
            problems.append(f"memory_mb {self.memory_mb} is above this process's address-space limit "
                            f"(ulimit -v: {address_space_mb()} MB)")
        if self.pattern is not None and not isinstance(self.pattern, str):
            problems.append(f"pattern must be text or null, got {reprlib.repr(self.pattern)}")
        if problems:
            raise PadconfError(problems[0])
        self.case_filter()  # an unknown mode or dtype, a pattern that does not parse: said now

    def case_filter(self) -> CaseFilter:
        return CaseFilter(tuple(self.modes) if self.modes else None, tuple(self.dtypes) if self.dtypes else None,
                          self.pattern)

    def cases_per_spec(self) -> int:
        return self.max_examples if self.max_examples is not None else PROFILES[self.profile]["max_examples"]


# what a run writes into run.json besides its RunConfig (padconf.run.runner)
CASE_COUNT = "case_count"  # the cases drawn, written with cases.jsonl
RESULTS_WRITTEN = "results"  # results.jsonl's rows of each runtime, written once every case has its rows


def _strict(kind: Any) -> Any:
    """A field's declared type as run.json holds it: a ``Literal | str`` (which lets the command
    line's checks say what is wrong in their words) is the Literal alone, wherever it is nested."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        kept = [_strict(a) for a in args if a is not str or len(args) == 1]
        return functools.reduce(operator.or_, kept)
    if origin is Annotated:
        params = (_strict(args[0]), *kind.__metadata__)
        return Annotated[params]  # type: ignore[valid-type]
    if origin is list:
        return list[_strict(args[0])]  # type: ignore[misc]
    return kind


@functools.cache
def run_record() -> type[msgspec.Struct]:
    """run.json's strict record: RunConfig's fields with the types and bounds declared there
    (``runtimes`` required), the counts a run adds, any other key refused."""
    hints = typing.get_type_hints(RunConfig, include_extras=True)
    declared: list = []
    for f in fields(RunConfig):
        kind = _strict(hints[f.name])
        if f.name == "runtimes":
            declared.insert(0, (f.name, kind))
        else:
            declared.append((f.name, kind, None if f.default is MISSING else f.default))
    # RESULTS_WRITTEN: each runtime's count, or (an older padconf's run.json) one count in all
    declared += [(CASE_COUNT, _Count | None, None), (RESULTS_WRITTEN, dict[str, _Count] | _Count | None, None)]
    return msgspec.defstruct("RunRecord", declared, forbid_unknown_fields=True)


def checked_run_json(doc: Any, where: str) -> dict[str, Any]:
    """``doc``, a run.json's JSON value, held to ``run_record``: an error naming ``where`` otherwise."""
    try:
        msgspec.convert(doc, run_record(), strict=True)
    except msgspec.ValidationError as exc:
        raise CaseError(f"{where}: malformed: {exc}") from None
    return doc
