"""What a run is asked to do (RunConfig), checked whether it comes from the command line or from
a run.json anyone may have written."""
from __future__ import annotations

import reprlib
from dataclasses import dataclass, field

from padconf.adapters import default_runtimes, unknown_runtime
from padconf.cases.profiles import PROFILES
from padconf.cases.selection import CaseFilter
from padconf.core.errors import PadconfError
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



@dataclass
class RunConfig:
    runtimes: list[str] = field(default_factory=default_runtimes)
    specs: list[str] | None = None
    specs_dir: str | None = None  # None: the spec files shipped with padconf
    profile: str = "default"
    max_examples: int | None = None  # generated cases per spec; None: the profile's
    seed: int = 0
    memory_mb: int = DEFAULT_MEMORY_MB
    timeout: float = DEFAULT_TIMEOUT_S
    compile_timeout: float = DEFAULT_COMPILE_TIMEOUT_S  # an ahead-of-time compiler's build of one model
    # models an ahead-of-time compiler builds in the run (padconf.run.compile_budget), or "all"
    compile_budget: int | str = DEFAULT_COMPILE_BUDGET
    cases_dir: list[str] | None = None  # read the cases from test directories (padconf.suite.folders' layout)
    # which of the cases drawn or read it runs (padconf.cases.selection.CaseFilter: --mode, --dtype, -k)
    modes: list[str] | None = None
    dtypes: list[str] | None = None
    pattern: str | None = None

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
