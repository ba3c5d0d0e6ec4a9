"""Which releases of a runtime a case's verdict changed in.

The case runs in one placement on the releases of the runtime's package between two versions
(padconf.execution.environments lists them and makes an environment for each it tests), each in
a fresh worker process. Bisection tests the two ends, then the middle of every span whose ends
disagree, until each change lies between two neighbouring releases: as few releases as that
needs (a span whose ends agree is taken to have no change inside, as git bisect takes it). Each
boundary is then confirmed by running both its sides again, in fresh processes: a runtime whose
answer differs from run to run (heap corruption) is said to be unstable there, not bisected.

What a release did is its verdict and failure class (padconf.judging.failure.failure_class, the
class a baseline entry and a run's distinct failures use): two wrong outputs of the same kind
are the same behaviour, garbage values and all.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from padconf.adapters import adapter_class, split_release
from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.core.vocabulary import Placement
from padconf.execution import package_index
from padconf.execution.env_worker import ensure_for
from padconf.execution.worker import DEFAULT_TIMEOUT_S, Worker
from padconf.judging.failure import failure_class
from padconf.judging.records import ResultRow, judged_row
from padconf.judging.verdicts import FAILURES, Verdict


@dataclass(frozen=True)
class Seen:
    """What one release did with the case."""
    version: str
    verdict: str
    failure: str  # its failure class; where the verdict is no failure, "refused" or the readings it matched
    said: str  # one line: the runtime's error, or what differs

    @property
    def behaviour(self) -> tuple[str, str]:
        return self.verdict, self.failure

    @property
    def fails(self) -> bool:
        return self.verdict in FAILURES

    def short(self) -> str:
        """The verdict, and how a conforming answer conformed (refused, or the readings it gave)."""
        return self.verdict + ("" if self.fails or self.failure in ("", "answered") else f" ({self.failure})")

    def line(self) -> str:
        return self.short() + (f": {self.said}" if self.said else "")


@dataclass(frozen=True)
class Boundary:
    """Neighbouring releases whose verdicts differ; ``confirmed``: both sides gave the same again."""
    before: Seen
    after: Seen
    confirmed: bool


@dataclass
class Bisection:
    runtime: str  # the runtime's name without a release
    package: str
    case: Case
    placement: Placement
    versions: list[str]  # the releases between the two ends, oldest first
    tested: dict[str, Seen] = field(default_factory=dict)
    boundaries: list[Boundary] = field(default_factory=list)

    def seen(self, version: str) -> Seen:
        """What ``version`` did: tested, or taken from the nearest tested release before it (the
        span it lies in has no change)."""
        if version in self.tested:
            return self.tested[version]
        at = self.versions.index(version)
        return next(self.tested[v] for v in reversed(self.versions[:at]) if v in self.tested)

    def spans(self) -> list[tuple[str, str, Seen]]:
        """(first release, last release, what they did) for each run of releases that behaved alike."""
        out: list[tuple[str, str, Seen]] = []
        for version in self.versions:
            seen = self.seen(version)
            if out and out[-1][2].behaviour == seen.behaviour:
                out[-1] = (out[-1][0], version, out[-1][2])
            else:
                out.append((version, version, seen))
        return out

    def history(self, behaviour: tuple[str, str] | None = None) -> dict[str, str | None]:
        """A failure's "first seen in", "last seen in" and "fixed in" over these releases: the
        first and last release showing ``behaviour`` (default: the newest failure other than a
        missing kernel), and the release after the last one that shows it (None while the newest
        still does)."""
        if behaviour is None:  # the newest failure, one a missing kernel (a release before the opset's) is not
            failing = [seen for _, _, seen in self.spans() if seen.fails]
            wrong = [seen for seen in failing if seen.verdict != Verdict.NOT_IMPLEMENTED] or failing
            behaviour = (wrong[-1] if wrong else self.seen(self.versions[-1])).behaviour
        showing = [v for v in self.versions if self.seen(v).behaviour == behaviour]
        if not showing:
            return {"first seen in": None, "last seen in": None, "fixed in": None}
        after = self.versions.index(showing[-1]) + 1
        return {"first seen in": showing[0], "last seen in": showing[-1],
                "fixed in": self.versions[after] if after < len(self.versions) else None}

    def history_words(self) -> dict[str, str]:
        """``history()`` in words: a failure the oldest release tested already shows may be older
        ("or earlier"), and one the newest still shows is not fixed yet."""
        history = self.history()
        out = {}
        for key, version in history.items():
            if version is None:
                out[key] = ("not yet (the newest release tested still fails)" if key == "fixed in"
                            and history["last seen in"] else "in none of these releases")
            else:
                out[key] = f"{self.runtime} {version}" + (" or earlier (the oldest release tested)" if
                                                         key == "first seen in" and version == self.versions[0] else "")
        return out

    def to_json(self) -> dict:
        return {"runtime": self.runtime, "package": self.package, "case_id": self.case.id, "placement": self.placement,
                "releases": [self.versions[0], self.versions[-1]], "count": len(self.versions),
                "tested": {v: {"verdict": s.verdict, "failure": s.failure, "said": s.said}
                           for v, s in sorted(self.tested.items(), key=lambda kv: self.versions.index(kv[0]))},
                "changes": [{"before": b.before.version, "after": b.after.version, "was": b.before.line(),
                             "became": b.after.line(), "confirmed": b.confirmed} for b in self.boundaries],
                **self.history()}


class Releases:
    """Workers of one runtime at each release asked for, kept while bisecting several cases."""

    def __init__(self, runtime: str, timeout: float = DEFAULT_TIMEOUT_S, say: Callable[[str], None] | None = None):
        if split_release(runtime)[1]:
            raise PadconfError(f"--runtime {runtime}: name the runtime without a release; --from and --to pick them")
        self.runtime = runtime
        self.package = adapter_class(runtime).package
        if not self.package:
            raise PadconfError(f"runtime {runtime}: its adapter names no package whose releases padconf could install")
        self.timeout, self.say = timeout, say
        self.workers: dict[str, Worker] = {}

    def versions(self, start: str | None = None, end: str | None = None) -> list[str]:
        return [r.version for r in package_index.between(self.package, start, end)]

    def row(self, case: Case, placement: Placement, version: str) -> ResultRow:
        """``case``'s result row at ``version``, run alone in a fresh worker process."""
        name = f"{self.runtime}@{version}"
        if version not in self.workers:
            ensure_for(name, self.say)
            self.workers[version] = Worker(name, timeout=self.timeout)
        outcome, status = self.workers[version].run_alone(case, placement)
        return judged_row(name, placement, case, outcome, status)

    def run(self, case: Case, placement: Placement, version: str) -> Seen:
        """What ``version`` does with ``case``, alone in a fresh worker process."""
        row = self.row(case, placement, version)
        outcome_rejected = row.get("output") is None and row.get("error") is not None
        said = row.get("error") or row.get("detail") or ""
        # a conforming answer is told apart by how it conforms: a refusal, or the readings its output gives
        how = failure_class(row) if row["verdict"] in FAILURES else "refused" if outcome_rejected else \
            "answered " + " | ".join(row.get("matched") or [])
        return Seen(version, row["verdict"], how.strip(), " ".join(str(said).split())[:200])

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
        self.workers.clear()


def bisect(releases: Releases, case: Case, placement: Placement, versions: list[str],
           progress: Callable[[str], None] | None = None) -> Bisection:
    """The releases among ``versions`` (oldest first) where ``case``'s verdict changed."""
    if len(versions) < 2:
        raise PadconfError(f"bisecting needs two releases or more; {releases.package} has {len(versions)} here")
    found = Bisection(releases.runtime, releases.package, case, placement, versions)

    def test(i: int) -> Seen:
        version = versions[i]
        if version not in found.tested:
            if progress:
                progress(f"{releases.runtime} {version} ({len(found.tested) + 1} tested)")
            found.tested[version] = releases.run(case, placement, version)
        return found.tested[version]

    todo = [(0, len(versions) - 1)]
    pairs = []
    while todo:
        lo, hi = todo.pop()
        if test(lo).behaviour == test(hi).behaviour:
            continue
        if hi == lo + 1:
            pairs.append((lo, hi))
            continue
        mid = (lo + hi) // 2
        test(mid)
        todo += [(mid, hi), (lo, mid)]
    for lo, hi in sorted(pairs):
        before, after = found.tested[versions[lo]], found.tested[versions[hi]]
        again = [releases.run(case, placement, versions[i]) for i in (lo, hi)]  # both sides, in fresh processes
        confirmed = again[0].behaviour == before.behaviour and again[1].behaviour == after.behaviour
        found.boundaries.append(Boundary(before, after, confirmed))
    return found


def report_lines(found: Bisection) -> list[str]:
    """What ``padconf bisect`` prints: the spans and the changes between them."""
    case = found.case
    head = (f"{found.runtime}: {case.spec} {case.mode} {case.dtype} shape {list(case.data.shape)} pads {case.pads} "
            f"({found.placement}; case {case.id}) over {len(found.versions)} releases, {found.versions[0]} to "
            f"{found.versions[-1]}; {len(found.tested)} tested")
    lines = [head]
    for first, last, seen in found.spans():
        where = first if first == last else f"{first} to {last}"
        lines.append(f"  {where}: {seen.line()}")
    for b in found.boundaries:
        lines.append(f"  changed between {b.before.version} and {b.after.version}: {b.before.short()} -> "
                     f"{b.after.short()}" + ("" if b.confirmed else
                                             " (not confirmed: a rerun of one side answered otherwise; unstable)"))
    if not found.boundaries:
        lines.append(f"  no change: every release tested gave {found.tested[found.versions[0]].verdict}")
    history = found.history()
    earliest = history["first seen in"]
    if earliest and found.seen(earliest).fails and found.seen(earliest).verdict != Verdict.NOT_IMPLEMENTED:
        lines.append("  " + "; ".join(f"{k} {v}" for k, v in found.history_words().items()))
    return lines
