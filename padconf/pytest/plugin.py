"""The gate as a pytest plugin (registered through the ``pytest11`` entry point)::

    pytest -c /dev/null --noconftest -p no:cacheprovider --pyargs padconf.pytest --padconf-runtime onnxruntime \
        [--padconf-baseline=FILE]

(the form that runs no code of the working directory, docs/ci.md; ``python -m pytest`` trusts it)

runs the gate's cases (padconf.gate.selection.gate_suite: the same cases for a padconf version)
as ``test_pad[onnx/Pad-19-reflect-float-crop_mixed-3-inputs]``, one test per case and placement
of the runtime, every runtime call through a padconf Worker (a crash or a hang is a verdict).

Each test's row is judged as the gate judges it (padconf.gate.compare.judge_rows, then confirm: only a
failure that recurs when its case runs alone in a fresh worker fails; the rest is flaky). A
failure no baseline entry forgives fails, naming case, verdict and reason; a forgiven one is an
xfail. A case-id entry marks its tests ``xfail(strict=True, raises=KnownFailure)``: the case
passing is XPASS(strict), a failure; a different failure is not KnownFailure, so it fails too.
A signature entry is known only once the rows are in: at the session's end, when every test of
the versions it speaks of ran, an entry that forgave nothing is fixed and fails the session.
Under pytest-xdist each process sends its rows to the controller, which judges the whole.

Inert unless ``--padconf-runtime`` is given, and cheap to load: it is loaded in every pytest
session of the environment, so padconf's heavier modules are imported only when it is used.
"""
from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

import pytest

# pytest imports this plugin (entry point pytest11) in every session of an environment padconf is
# installed in: padconf's heavier modules are imported inside the hooks that need them.
from padconf.core.errors import PadconfError
from padconf.core.escape import plain
from padconf.core.streams import ClosableStream, open_missing_streams
from padconf.core.vocabulary import Placement, Status

if TYPE_CHECKING:
    from padconf.judging.records import ResultRow

SHARE = pytest.StashKey["Share"]()
FIXED = pytest.StashKey[list]()  # an item's "fixed: ..." lines, for its XPASS(strict) report
NOT_OPEN = pytest.StashKey[list]()  # the standard streams not open at all when the session began
PARAM = "padconf_case"  # the parameter padconf.pytest's test takes
NEEDS_RUNTIME = "padconf.pytest needs --padconf-runtime NAME (a runtime `padconf runtimes` lists, or module:Class)"
SLIM = ("output", "printed")  # row fields too big to send between xdist processes, and not judged
SHARED = ("rows", "problems", "flaky")  # what an xdist worker hands the controller, besides its plan's counts


class KnownFailure(pytest.xfail.Exception):  # type: ignore[name-defined]  # pytest's XFailed, a function attribute
    """A failure a baseline entry forgives: an xfail, marked (case-id entries) or not (signatures)."""

    def __init__(self, msg: str):
        super().__init__(msg, pytrace=False)  # the message is the report: no traceback to format


class Param:
    """One test: a case in one placement, and why the runtime cannot run it (None: it can)."""

    def __init__(self, case, placement: Placement, why_not: str | None):
        self.case, self.placement, self.why_not = case, placement, why_not

    def __repr__(self) -> str:
        return f"{self.case.id} [{self.placement}]"


def readable_id(name: str, case) -> str:
    """test_pad19_reflect_float_crop_mixed_3 -> onnx/Pad-19-reflect-float-crop_mixed-3."""
    head = re.sub(r"[^A-Za-z0-9_]+", "_", f"_{case.mode}_{case.dtype}_")  # as fixed_suite spells it
    _, found, tail = name.partition(head)
    label, _, n = tail.rpartition("_")
    return f"{case.spec}-{case.mode}-{case.dtype}-{label}-{n}" if found and label else f"{case.spec}-{name}"


class Share:
    """One pytest process's share: the options, the parameters, its Worker, what it ran."""

    def __init__(self, config: pytest.Config):
        from padconf.execution.worker import DEFAULT_TIMEOUT_S
        from padconf.gate.baseline import load_baseline
        from padconf.run.config import RunConfig
        from padconf.spec.loader import load_specs, spec_id_hint

        option = config.getoption
        self.runtime = option("padconf_runtime")
        self.specs_dir = option("padconf_specs_dir")
        self.timeout = option("padconf_timeout") or DEFAULT_TIMEOUT_S
        self.baseline = option("padconf_baseline")
        try:
            RunConfig(runtimes=[self.runtime], timeout=self.timeout)  # a run's own checks of name and timeout
            every = load_specs(self.specs_dir)  # parsed once; the selection is a part of it
            ids = option("padconf_spec")
            unknown = [i for i in ids or () if i not in {s.id for s in every}]
            if unknown:
                known = [s.id for s in every]
                raise PadconfError(f"--padconf-spec {unknown[0]!r}: unknown{spec_id_hint(unknown[0], known)}; "
                                   f"known: {', '.join(known)}")
            self.specs = [s for s in every if ids is None or s.id in ids]
            self.entries = load_baseline(self.baseline) if self.baseline else []
            from padconf.cases.selection import CaseFilter
            modes, dtypes = option("padconf_mode"), option("padconf_dtype")
            self.chosen = CaseFilter(tuple(modes) if modes else None, tuple(dtypes) if dtypes else None,
                                     option("padconf_k"))  # padconf gate's --mode, --dtype, -k
        except PadconfError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.params: list = []  # pytest.param per test, once planned
        self.named: list | None = None  # (name in the suite, case)
        self.cases: list = []  # the gate's cases, once planned
        self.planned: Counter = Counter()  # spec id -> tests collected, before any deselection
        self.rows: list[ResultRow] = []  # one per test that ran, as the gate's results.jsonl has them
        self.problems: list[str] = []  # "new: ..." and "fixed: ..." lines, confirmed
        self.flaky: list[str] = []  # what the confirming reruns did not reproduce
        self.judgement: Any = None  # padconf.gate.compare.Judgement of the session, at its end
        self.failed: str | None = None  # why the session fails though no test did
        self._workers: dict[str, Any] = {}  # padconf.execution.worker.Worker, imported when first started
        self._twins: dict[str, Any] = {}  # case id -> its repaired twin, or why it has none
        self._controls: dict[tuple, Any] = {}  # a distinct failure -> its control row (None: it could not run)

    def worker(self, use: str = "tests"):
        """The Worker the tests run in, or (``use="confirm"``) the one confirming reruns run in:
        another, so that the tests' worker process sees the same cases as without them."""
        from padconf.execution.worker import DEFAULT_MEMORY_MB, Worker

        if use not in self._workers:  # started lazily, one each per pytest process
            self._workers[use] = Worker(self.runtime, DEFAULT_MEMORY_MB, self.timeout)
        return self._workers[use]

    def close(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()

    def describe(self, pairs) -> dict:
        about = self.worker().describe(pairs)
        if about["unavailable"]:
            raise PadconfError(f"nothing to run: runtime {self.runtime} unavailable: {about['unavailable']}")
        if not any(s.domain in about["domains"] for s in self.specs):
            raise PadconfError(f"nothing to run: {self.runtime} runs {', '.join(about['domains'])} spec versions, "
                               f"none of {', '.join(s.id for s in self.specs)}")
        return about

    def plan(self, shipped: str | None = None) -> None:
        """The parameters: the gate's cases of the runtime's spec families, in each placement it
        has; as Run.plan decides, a case whose (spec, dtype) it does not support is skipped.
        ``shipped``: the suite as the xdist controller drew it (JSON), instead of drawing it."""
        from padconf.cases.case import Case
        from padconf.gate.selection import gate_suite
        from padconf.run.runner import runtime_scope

        if self.params:
            return
        self.describe([])  # an unusable runtime is said before the seconds of drawing the suite
        if shipped is None:  # the gate's cases, as its --mode, --dtype and -k take them
            suite = gate_suite(self.specs)
            taken = {id(c) for c in self.chosen.apply([case for _, case in suite])}
            self.named = [(name, case) for name, case in suite if id(case) in taken]
        else:
            self.named = [(name, Case.from_json(doc)) for name, doc in json.loads(shipped)]
        self.cases = [case for _, case in self.named]
        pairs = sorted({(c.spec, c.dtype) for c in self.cases})
        about = self.describe(pairs)
        names = [readable_id(name, case) for name, case in self.named]
        twice = {i for i, n in Counter(names).items() if n > 1}  # a name in two of the suite's kind directories
        ids = {id(case): f"{i}-{case.kind}" if i in twice else i for i, case in zip(names, self.cases)}
        several = len(about["placements"]) > 1
        scope = runtime_scope(self.cases, pairs, about)
        self.params = []
        for case, why_not in scope:
            for placement in about["placements"]:
                self.params.append(pytest.param(Param(case, placement, why_not), marks=self.marks(case, placement),
                                                id=ids[id(case)] + (f"-{placement}" if several else "")))
                self.planned[case.spec] += 1
        if all(p.values[0].why_not for p in self.params):  # as the gate: never pass on nothing
            whys = sorted({why for _, why in scope if why})
            raise PadconfError(f"nothing to run: {self.runtime} can run none of the {len(self.params)} selected tests"
                               + (f" ({whys[0]})" if whys else ""))

    def marks(self, case, placement: Placement) -> list:
        """Strict xfail for the case-id entries that speak of this test: it must fail so."""
        row = {"runtime": self.runtime, "case_id": case.id, "placement": placement,
               **{k: getattr(case, k) for k in ("spec", "mode", "dtype", "origin")}}
        listed = [e for e in self.entries if e.case is not None and e.in_scope(row)]
        if not listed:
            return []
        reason = plain("; ".join(f"known {e.verdict} ({e.where}): {e.why}" for e in listed))  # the baseline's words
        return [pytest.mark.xfail(strict=True, raises=KnownFailure, reason=reason)]

    def twin(self, case):
        """classify.repaired_twin of ``case``, worked out once for its placements."""
        from padconf.cases.classify import repaired_twin
        from padconf.spec.loader import get_spec

        if case.id not in self._twins:
            self._twins[case.id] = repaired_twin(case, get_spec(case.spec, self.specs_dir))
        return self._twins[case.id]

    def control(self, row, case):
        """The control of the failure ``row``, run once per distinct failure (at its first row),
        as a gate's run runs it: the triage of the lines a failure gives is the gate's."""
        from padconf.judging.failure import distinct_failure
        from padconf.judging.judged import control_row

        key = distinct_failure(row)
        if key not in self._controls:
            try:
                self._controls[key] = control_row(row, case, self.worker("confirm"))
            except PadconfError:  # the runtime could not be started again: no control, as in a run
                self._controls[key] = None
        return self._controls[key]

    def check(self, param: Param, item: pytest.Item) -> None:
        """Run the case, keep its row, and judge it as the gate does: the same rows
        (judging.judged.judged_batch, its failures' controls), the same judgement (gate.compare)."""
        from padconf.adapters.outcome import Outcome
        from padconf.gate.compare import confirm, judge_rows
        from padconf.gate.junit import problem_lines
        from padconf.judging.judged import judged_batch, test_outcome
        from padconf.judging.records import judged_row
        from padconf.judging.verdicts import FAILURES

        case, placement = param.case, param.placement
        if param.why_not:  # the gate's row for a case the adapter cannot express
            row = judged_row(self.runtime, placement, case, Outcome(skipped=param.why_not), Status.OK)
        else:
            row, = list(judged_batch(self.runtime, placement, [case], self.worker(), self.twin))
            if row["verdict"] in FAILURES:
                control = self.control(row, case)
                if control is not None:
                    row["control"] = control
        self.rows.append(cast("ResultRow", {k: v for k, v in row.items() if k not in SLIM}))
        # the entries that speak of this test; covered=set(): one row never judges a signature
        # entry (each of these speaks of this row's version), the session's end does
        entries = [e for e in self.entries if e.in_scope(row)]
        judgement = judge_rows([row], entries, self.runtime, set())
        if judgement.new or judgement.fixed:  # the rows this process ran before: its worker's history
            confirm(judgement, self.entries, self.cases, self.worker("confirm"), history=self.rows)
        self.flaky += judgement.flaky
        lines = problem_lines(judgement)
        self.problems += lines
        passed = row["verdict"] not in FAILURES and test_outcome(row) is None
        if judgement.fixed and not judgement.new and passed and item.get_closest_marker("xfail"):
            item.stash[FIXED] = lines  # XPASS(strict) fails it, in these words
            return
        if lines:
            pytest.fail(plain("; ".join(lines)), pytrace=False)
        if judgement.known:
            _, entry = judgement.known[0]
            raise KnownFailure(plain(f"known {row['verdict']} ({entry.where}): {entry.why}"))
        if judgement.flaky:  # not failing the gate; nor, under a case-id entry, an XPASS(strict)
            raise KnownFailure(plain("flaky (not failing the gate): " + "; ".join(judgement.flaky)))
        unjudged = test_outcome(row)  # skipped or inconclusive: no pass to count
        if unjudged:
            pytest.skip(unjudged)

    def judge_session(self) -> None:
        """The gate's judgement of every row, for the signature entries: a version counts as
        covered only when each of its tests ran (no -k, no deselection, no early stop); an entry
        that forgave nothing there is fixed unless its failure recurs alone (confirm)."""
        from padconf.gate.compare import Judgement, confirm, judge_rows
        from padconf.gate.junit import problem_lines
        from padconf.gate.selection import gate_suite

        ran = Counter(r["spec"] for r in {(r["case_id"], r["placement"]): r for r in self.rows}.values())
        covered = set() if self.chosen.active else {s.id for s in self.specs if ran[s.id] == self.planned[s.id]}
        try:
            self.judgement = judge_rows(self.rows, self.entries, self.runtime, covered)
        except PadconfError as exc:  # no row at all
            self.failed = str(exc)
            return
        fixed = [f for f in self.judgement.fixed if f.entry.case is None]  # case-id ones failed their tests
        if not fixed:
            return
        recheck = Judgement(self.runtime, self.rows, fixed=fixed)
        # the xdist controller collected nothing: it draws the suite again, only for this
        cases = [c for _, c in gate_suite(self.specs)] if self.cases is None else self.cases
        confirm(recheck, self.entries, cases, self.worker("confirm"))
        self.flaky += recheck.flaky
        self.problems += problem_lines(recheck)
        if recheck.fixed:
            self.failed = (f"{len(recheck.fixed)} fixed baseline signature entries: "
                           + ", ".join(f.entry.where for f in recheck.fixed))


# ---------------------------------------------------------------- hooks


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("padconf", "padconf: the Pad gate as tests (pytest --pyargs padconf.pytest)")
    group.addoption("--padconf-runtime", metavar="NAME", help="the runtime to test: one `padconf runtimes` lists, "
                    "or module:Class; required by padconf.pytest, inert without it")
    group.addoption("--padconf-baseline", metavar="FILE", help="known failures (padconf baseline's YAML), as "
                    "xfails; an entry that no longer fails fails the run as fixed. For a FILE outside the current "
                    "directory write --padconf-baseline=FILE: pytest reads a separate FILE as a test path when it "
                    "picks its rootdir")
    group.addoption("--padconf-spec", metavar="ID", action="append", help="a spec version, e.g. onnx/Pad-19 "
                    "(repeatable; default: all)")
    group.addoption("--padconf-specs-dir", metavar="DIR", help="spec files other than padconf's own")
    group.addoption("--padconf-mode", metavar="MODE", action="append", help="only cases of this Pad mode "
                    "(repeatable), as padconf gate --mode")
    group.addoption("--padconf-dtype", metavar="DTYPE", action="append", help="only cases of this dtype "
                    "(repeatable), as padconf gate --dtype")
    group.addoption("--padconf-k", metavar="PATTERN", help="only cases whose id or title PATTERN matches, as padconf "
                    "gate -k (pytest's own -k matches the test names)")
    group.addoption("--padconf-timeout", metavar="S", type=float, help="seconds a case may take before it is a "
                    "timeout (default: padconf gate's)")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser, args: list[str]):
    """Before pytest's capture takes the standard streams (and gives them back at the end) and
    its faulthandler writes one: a stream not open at all gets /dev/null in its place, for a
    padconf session (its options are not parsed yet). With stdout closed (``>&-``) pytest's last
    flush raised, and with stderr closed its faulthandler did: exit 1, "tests failed"."""
    if any(str(arg).startswith("--padconf-runtime") for arg in args):
        early_config.stash[NOT_OPEN] = open_missing_streams()
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("padconf_runtime", None):
        _isolate_xdist_workers(config)
        config.stash[SHARE] = Share(config)


def _report_stream(config: pytest.Config) -> ClosableStream | None:
    """pytest's terminal report, to stdout, as a stream written to nothing once writing it fails
    (``| head -1``, a full device): pytest's own writer raised there, and pytest exited 1, "tests
    failed", whatever the gate's verdict; the session now runs to its end with its own code. The
    writer's file is private to pytest (TerminalWriter offers no way to set it)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    writer = getattr(reporter, "_tw", None)
    if writer is None or not hasattr(writer, "_file"):
        return None
    if not isinstance(writer._file, ClosableStream):
        writer._file = ClosableStream(writer._file)
    return writer._file


def _isolate_xdist_workers(config: pytest.Config) -> None:
    """pytest-xdist's local workers (``-n N``: ``popen`` gateways) start as ``python -u -c``, the
    working directory first on their path until xdist hands them the controller's: a json.py
    there ran in every worker. Each starts as ``python -I`` instead, which adds no working
    directory, PYTHONPATH or user site (xdist then gives it the controller's sys.path). execnet
    splits ``python=`` as a shell would, so the path is quoted (one holding a space was skipped,
    and its workers ran unisolated)."""
    import shlex
    import sys

    specs = getattr(config.option, "tx", None)
    if not specs:
        return
    if "//" in sys.executable:
        raise pytest.UsageError(f"padconf: the Python path {sys.executable!r} holds '//', which pytest-xdist "
                                "reads as a separator, so its workers cannot start isolated")
    python = f"{shlex.quote(sys.executable)} -I"
    config.option.tx = [spec if "python=" in spec or not spec.split("//")[0].split("*")[-1] == "popen"
                        else f"{spec}//python={python}" for spec in specs]


def _share(config: pytest.Config) -> Share | None:
    return config.stash.get(SHARE, None)


def _controller(config: pytest.Config) -> bool:
    """The xdist controller: it collects nothing, its workers run the tests."""
    return config.pluginmanager.has_plugin("dsession")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The xdist controller plans before its workers start: a worker's usage error would be the
    controller's INTERNALERROR, and each worker drawing the suite again would cost its time."""
    share = _share(session.config)
    if share is not None:
        _report_stream(session.config)
    if share is not None and _controller(session.config):
        try:
            share.plan()
        except PadconfError as exc:
            raise pytest.UsageError(str(exc)) from None
        finally:
            share.close()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: hand each worker the suite it drew."""
    share = _share(node.config)
    if share is not None and share.named is not None:
        node.workerinput["padconf_suite"] = json.dumps([(name, case.to_json()) for name, case in share.named])


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    share = _share(session.config)
    if share is not None and not _controller(session.config):
        try:  # here, not in pytest_generate_tests, where an error would be a collection error's traceback
            share.plan(getattr(session.config, "workerinput", {}).get("padconf_suite"))
        except PadconfError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if PARAM not in metafunc.fixturenames:
        return
    share = _share(metafunc.config)
    if share is None:  # parametrised all the same, so that collection gets to saying why it cannot run
        metafunc.parametrize(PARAM, [None], ids=["no-runtime"])
        return
    share.plan()
    metafunc.parametrize(PARAM, share.params)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # in an xdist worker a usage error is the controller's INTERNALERROR: there the test fails instead
    if _share(config) is None and not hasattr(config, "workerinput") \
            and any(PARAM in getattr(item, "fixturenames", ()) for item in items):
        raise pytest.UsageError(NEEDS_RUNTIME)


@pytest.fixture
def padconf_check(request: pytest.FixtureRequest):
    """Runs and judges one parameter of padconf_case, in the session's Share."""
    share = _share(request.config)
    if share is None:
        pytest.fail(NEEDS_RUNTIME, pytrace=False)
    return functools.partial(share.check, item=request.node)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield  # outside the skipping plugin's wrapper: it has made the XPASS(strict) failure
    lines = item.stash.get(FIXED, None)
    if lines and report.failed and str(report.longrepr).startswith("[XPASS(strict)]"):
        report.longrepr = "[XPASS(strict)] " + "; ".join(lines)
    return report


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist controller: gather what a worker ran and judged."""
    share = _share(node.config)
    sent = getattr(node, "workeroutput", {}).get("padconf")
    out = json.loads(sent) if sent else None
    if share is not None and out:
        for key in SHARED:
            getattr(share, key).extend(out[key])
        share.planned = Counter(out["planned"])  # every worker collects the same tests


def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    config, share = session.config, _share(session.config)
    if share is None:
        return
    if hasattr(config, "workerinput"):  # an xdist worker: the controller judges the whole
        share.close()
        output = {"planned": dict(share.planned), **{k: getattr(share, k) for k in SHARED}}
        # as JSON text: execnet sends only plain types (a row's verdict is a Verdict) and packs
        # an int in 32 bits (a row's pads may be wider: 2**32 + 1)
        config.workeroutput["padconf"] = json.dumps(output)  # type: ignore[attr-defined]  # xdist sets it on its workers
        return
    try:
        if config.option.collectonly or exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return  # a usage error, an interrupt, nothing collected: nothing to judge
        share.judge_session()
    finally:
        share.close()
    if share.failed and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    elif share.judgement is not None and share.judgement.judged_nothing and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.USAGE_ERROR  # never pass on nothing: as the gate's exit 2


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    """What ``padconf gate`` prints: counts, one line per new failure and fixed entry, the flaky."""
    share = _share(config)
    if share is None or (share.judgement is None and share.failed is None):
        return
    write = terminalreporter.write_line
    terminalreporter.section(f"padconf gate {share.runtime}")
    j = share.judgement
    if j is not None:
        counts = ", ".join(f"{n} {v}" for v, n in j.counts.most_common())
        write(f"{len(j.rows)} results ({counts}); {len(j.known)} known failures forgiven"
              + (f" by {share.baseline}" if share.baseline else ""))
        from padconf.gate.baseline import unnamed_runtime
        unnamed = unnamed_runtime(share.entries, share.runtime) if share.baseline else None
        if unnamed:
            write(unnamed)
    for line in share.problems:
        write(line)
    for line in share.flaky:
        write(f"flaky (not failing the gate): {line}")
    if j is not None and j.unjudged:
        write(f"{len(j.unjudged)} baseline signature entries not judged: not every test of the versions they "
              "speak of ran (-k, deselection, --padconf-spec, or a stop)")
    if share.failed:
        write(f"FAILED: {share.failed}", red=True, bold=True)
    elif j is not None and j.judged_nothing:
        write(f"padconf: {j.judged_nothing}", red=True, bold=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    share = _share(config)
    if share is not None:
        share.close()
        report = _report_stream(config)
        why = "not open" if "stdout" in config.stash.get(NOT_OPEN, []) else report.why if report else None
        if why:
            import sys
            print(f"padconf: stdout failed ({why}): pytest's report did not reach it whole; the exit "
                  "code is the tests' (--junitxml=FILE keeps each result)", file=sys.stderr)
