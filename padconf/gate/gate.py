"""The CI gate: run one runtime on the fixed suite (the spec documents' worked examples and
the generated suite, the same cases for a padconf version and seed), optionally on freshly
drawn cases too, and judge the results against a baseline. Exit 1 on a failure no entry
forgives (new) and on an entry that no longer fails (fixed: remove it); 0 otherwise.

A case-id entry is judged in the shard holding its case (padconf.gate.selection); a signature
entry can span shards, so it is judged only on the whole suite: one unsharded gate, or
``padconf gate --results DIR ...`` over every shard's run (judge_results).
"""
from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec

from padconf.cases.case import Case, InputBudget
from padconf.cases.selection import CaseFilter
from padconf.core.errors import CaseError, PadconfError
from padconf.core.user_key import KEY_ENV
from padconf.core.writing import FolderLock, claim_folder, make_folder, write_atomically
from padconf.execution.worker import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, Worker
from padconf.gate.baseline import BaselineEntry
from padconf.gate.compare import Judgement, confirm, judge_rows
from padconf.gate.explore import REPLAYED, example_database, remember
from padconf.gate.selection import MAX_SHARDS, gate_cases, in_shard
from padconf.judging.records import ResultRow, judged_row, rederive_rows
from padconf.judging.verdicts import OWN_FAULT, Verdict
from padconf.run.rundir import (
    CASES,
    GATE_JSON,
    RESULTS,
    RUN_JSON,
    SIGNED,
    RunDirLock,
    attach_controls,
    check_rows_of_run,
    read_json,
    read_results,
    read_run_cases,
    read_run_json,
    unfinished,
)
from padconf.run.signature import Signature, signature_of
from padconf.spec.loader import load_specs, parse_spec_id

MAX_EXPLORE = 1_000_000  # --explore's cases per version a gate.json may name (each one is drawn again to judge it)
RUN_ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
# where a CI names the run its jobs share (GitHub Actions, GitLab, Azure Pipelines, Buildkite, CircleCI)
RUN_ID_ENV = ("PADCONF_GATE_RUN_ID", "GITHUB_RUN_ID", "CI_PIPELINE_ID", "BUILD_BUILDID", "BUILDKITE_BUILD_ID",
              "CIRCLE_WORKFLOW_ID")


def gate_run_id(named: str | None, environ) -> str | None:
    """The id of the gate run a shard belongs to: ``named`` (--run-id), else the CI's own run id
    from ``environ`` (RUN_ID_ENV, first set), else none. Shards of two runs under one key once
    joined as one gate: yesterday's clean shard beside today's failing one passed (attack round IV)."""
    found = named or next((environ[name] for name in RUN_ID_ENV if environ.get(name)), None)
    if found is not None and not re.fullmatch(RUN_ID_PATTERN, found):
        raise PadconfError(f"gate run id {found[:80]!r}: letters, digits and ._:- expected, at most 128")
    return found


@dataclass
class GateConfig:
    runtime: str
    specs: list[str] | None = None
    specs_dir: str | None = None
    seed: int = 0
    explore: int = 0
    shard: tuple[int, int] | None = None
    example_db: str | None = None
    timeout: float | None = None
    memory_mb: int | None = None
    # the cases taken (padconf.cases.selection.CaseFilter: --mode, --dtype, -k)
    modes: list[str] | None = None
    dtypes: list[str] | None = None
    pattern: str | None = None
    # what every shard of one gate run shares (gate_run_id): a shard's run joins only its own
    run_id: str | None = None

    def case_filter(self) -> CaseFilter:
        return CaseFilter(tuple(self.modes) if self.modes else None, tuple(self.dtypes) if self.dtypes else None,
                          self.pattern)


def gate(config: GateConfig, entries: list[BaselineEntry], out_dir: Path, jobs: int | None = None,
         progress=None) -> Judgement:
    """Run the gate's cases and judge them against ``entries``; explored cases that fail in a
    new way go to the example database, replayed ones that no longer do leave it."""
    with work_folder(config, out_dir):
        return _gate(config, entries, out_dir, jobs, progress)


@contextlib.contextmanager
def work_folder(config: GateConfig, out_dir: Path) -> Iterator[None]:
    """The gate's or baseline's work folder, made and held (``FolderLock``) from its first file
    to its last (gate.json, the run, the reruns), so that no other process writes or judges it
    meanwhile; a mistaken spec or filter is said before it is made."""
    load_specs(config.specs_dir, config.specs)
    config.case_filter()
    make_folder(out_dir)
    with FolderLock(Path(out_dir), exclusive=True, what="gate's work folder"):
        yield


def _gate(config: GateConfig, entries: list[BaselineEntry], out_dir: Path, jobs: int | None, progress) -> Judgement:
    db = example_database(config.example_db) if config.explore else None
    rows, cases = gate_run(config, out_dir, db, jobs, progress)
    # a shard, or a filter, holds no version's whole suite: its signature entries wait for one that does
    covered = set() if config.shard or config.case_filter().active else \
        {s.id for s in load_specs(config.specs_dir, config.specs)}
    judgement = judge_rows(rows, entries, config.runtime, covered)
    if judgement.new or judgement.fixed:
        worker = Worker(config.runtime, **worker_limits(config))
        try:
            confirm(judgement, entries, cases, worker)
        finally:
            worker.close()
    if db is not None:
        remember(db, rows, cases, judgement.new)
    return judgement


def framework_domains(runtime: str) -> set[str]:
    """The frameworks' documents ``runtime`` runs (an exporter: torch-export, torch's; tf-export,
    TensorFlow's): its gate's suite holds their cases, which ONNX's and OpenVINO's runtimes never
    see, and no other framework's. A ``module:Class`` plugin's facts are known in its worker only:
    its gate names the document with --spec."""
    from padconf.adapters import adapter_class
    from padconf.suite.fixed import FRAMEWORK_DIRS
    try:
        return {domain for domain in adapter_class(runtime).domains if domain in FRAMEWORK_DIRS}
    except Exception:  # an unknown runtime: said by the run, in its own words
        return set()


def reads_framework(runtime: str) -> bool:
    """Whether ``runtime`` runs a framework's document (``framework_domains``)."""
    return bool(framework_domains(runtime))


def worker_limits(config: GateConfig) -> dict:
    return {k: v for k, v in (("timeout", config.timeout), ("memory_mb", config.memory_mb)) if v}


def gate_run(config: GateConfig, out_dir: Path, db=None, jobs: int | None = None,
             progress=None) -> tuple[list[ResultRow], list[Case]]:
    """Run ``config.runtime`` on the gate's cases (this shard's) in ``out_dir``, a run
    directory like ``padconf run``'s plus gate.json; returns its result rows and its cases."""
    from padconf.run.compile_budget import ALL
    from padconf.run.runner import Run, RunConfig  # the runner draws with Hypothesis: not imported to judge rows
    from padconf.run.session import run_cases
    out_dir = Path(out_dir)
    # a run's files but no gate.json: someone's run (or a run stopped before its run.json), as
    # padconf run tells one; the gate replaces only its own
    held = [name for name in (RUN_JSON, RESULTS) if (out_dir / name).exists()]
    if held and not (out_dir / GATE_JSON).exists():
        raise PadconfError(f"{out_dir} holds a run that is not a gate's ({', '.join(held)}, no {GATE_JSON}); "
                           "the gate writes only into its own directories: name another with --work")
    # a gate compiles every model of its suite: what it compares with the baseline is the whole suite
    run_config = RunConfig(runtimes=[config.runtime], specs=config.specs, specs_dir=config.specs_dir,
                           seed=config.seed, max_examples=config.explore, compile_budget=ALL, **worker_limits(config))
    specs = load_specs(config.specs_dir, config.specs)
    chosen = config.case_filter()  # an unknown mode or a bad pattern: said before anything is drawn
    claim_folder(out_dir, replace="remove it, or name another --work")  # its run replaces what it holds
    # a framework's document (torch/Pad-2) is in the suite of an exporter's gate, and wherever --spec names it
    frameworks = bool(config.specs) or reads_framework(config.runtime)
    if not config.specs:  # another framework's document is none of this runtime's: its calls are not put to it
        from padconf.suite.fixed import FRAMEWORK_DIRS
        own = framework_domains(config.runtime)
        specs = [s for s in specs if s.domain not in FRAMEWORK_DIRS or s.domain in own]
    if config.shard and config.run_id is None:
        raise PadconfError("--shard: name the gate run its shards share with --run-id ID (a CI's run id, which "
                           f"padconf takes from {RUN_ID_ENV[1]} and the like where set), so that --results "
                           "never joins shards of two runs")
    cases = chosen.apply([c for c in gate_cases(specs, config.seed, config.explore, db, frameworks)
                          if in_shard(c.id, config.shard)])
    if not cases:  # only a shard can hold none: the suite is never empty
        shard = config.shard or (1, 1)
        raise PadconfError(f"shard {shard[0]}/{shard[1]} holds no case: use fewer shards")
    run = Run(out_dir, run_config, force=True, jobs=jobs)
    try:
        # the run's controls decide the triage the gate's lines show, as in the run's own reports
        return run_cases(run, cases, _GateStages(out_dir, config, specs, progress)).rows, cases
    finally:
        run.release()


class _GateStages:
    """The gate's run: gate.json written once the cases are, the gate's own progress line."""

    def __init__(self, out_dir: Path, config: GateConfig, specs, progress):
        self.out_dir, self.config, self.specs, self.progress = out_dir, config, specs, progress

    @contextlib.contextmanager
    def drawing(self):
        yield
        write_atomically(self.out_dir / GATE_JSON, json.dumps({
            "runtime": self.config.runtime, "spec_ids": [s.id for s in self.specs],
            "shard": self.config.shard or (1, 1), "seed": self.config.seed, "explore": self.config.explore,
            "run_id": self.config.run_id,
            "filter": self.config.case_filter().words() or None,
            # the filter as data, so that ``--results`` computes what each shard must hold
            "case_filter": {"modes": self.config.modes, "dtypes": self.config.dtypes,
                            "pattern": self.config.pattern}}))

    def running(self, planned):
        return contextlib.nullcontext(self.progress)


SHARD_NOT_SIGNED = {  # a shard's rows can be checked against its cases, but a runtime's answer cannot
    Signature.UNSIGNED: "a shard's run signs its folder as it ends, and an unsigned one may hold failures "
                        "relabelled passes",
    Signature.OTHER_KEY: f"give every job of the workflow one key file, named by {KEY_ENV} (docs/ci.md)",
    Signature.CHANGED: "not that shard's run",
}


def judge_results(dirs: list[Path], entries: list[BaselineEntry], runtime: str,
                  specs_dir: str | None = None, asked: GateConfig | None = None) -> Judgement:
    """Judge the gate run directories of every shard of one gate as that gate unsharded would,
    confirming reruns included; an incomplete or mixed set of shards is a PadconfError. Each
    shard is proved whole against the suite itself (``shard_must_hold``), never against its
    own counts, which a directory emptied of its failures can keep consistent. The gate is the
    one the command line describes (``asked``: its --spec, --mode, --dtype, -k, --seed and
    --explore), never gate.json's word for it (``check_gate_asked``)."""
    rows: list[ResultRow] = []
    cases: dict[str, dict] = {}
    spec_ids: set[str] = set()
    config: tuple | None = None
    shards: list[int] = []
    held: list[tuple[Path, tuple[int, int], list[ResultRow]]] = []
    first_run_doc: Any = None  # the first shard's run.json: its limits are the reruns'
    chosen: CaseFilter | None = None
    for k, d in enumerate(map(Path, dirs)):
        if not (d / GATE_JSON).is_file():
            raise PadconfError(f"{d}: not a gate run directory (no {GATE_JSON})")
        about = read_gate_json(d / GATE_JSON)
        shard = about.shard or (1, 1)
        mine = (about.runtime, tuple(about.spec_ids), about.seed, about.explore, shard[1], about.filter,
                json.dumps(msgspec.to_builtins(about.case_filter), sort_keys=True), about.run_id)
        if shard[1] > 1 and about.run_id is None:
            raise PadconfError(f"{d}: a shard that names no gate run (an older padconf wrote it): run the shards "
                               "again, each with one --run-id")
        if asked is not None and asked.run_id is not None and about.run_id != asked.run_id:
            raise PadconfError(f"{d}: a shard of gate run {about.run_id!r}, not of {asked.run_id!r} (--run-id, "
                               "or the CI's run id)")
        if chosen is None:
            chosen = about.chosen(d / GATE_JSON)
            if asked is not None:
                check_gate_asked(about, chosen, asked, d / GATE_JSON)
        if mine[0] != runtime:
            raise PadconfError(f"{d}: a gate of {mine[0]}, not of {runtime}")
        if config is not None and mine != config:
            raise PadconfError(f"{d}: not a shard of the same gate as {dirs[0]} (runtime, specs, seed, explore, "
                               "shard count, filter or gate run id differ)")
        config = mine
        shards.append(shard[0])
        with RunDirLock(d, exclusive=False):  # not a shard a run still writes
            if (signature := signature_of(d, SIGNED)) != Signature.SIGNED:
                raise PadconfError(f"{d}: {signature.value}: {SHARD_NOT_SIGNED[signature]}")
            read = read_results(d / RESULTS)
            if read.duplicates:
                raise PadconfError(f"{d}: {read.duplicates} results of a (runtime, placement, case) held "
                                   "twice: not a shard's run as padconf wrote it")
            shard_cases, decoded = read_run_cases(d / CASES, specs_dir)
            shard_rows = attach_controls(read, d, shard_cases)
            run_doc = read_run_json(d / RUN_JSON, PadconfError)
            check_rows_of_run(shard_rows, run_doc, d / RESULTS, decoded)
            first_run_doc = first_run_doc or run_doc
            why = unfinished(run_doc, shard_rows, d / RUN_JSON)
            if why:  # the failures it lacks would pass
                raise PadconfError(f"{d}: {why}: run that shard again")
            for row in shard_rows:
                # a row of a case another shard holds: shards overlapping, so that a shard's own
                # cases may be missing and their failures pass
                if not in_shard(row["case_id"], shard):
                    raise PadconfError(f"{d}: holds case {row['case_id']!r}, which is not in shard "
                                       f"{shard[0]}/{shard[1]}: not that shard's run")
                if row["runtime"] != runtime:
                    raise PadconfError(f"{d}: holds a result of runtime {row['runtime']!r}, in a gate of {runtime}: "
                                       "not that shard's run")
                rows.append({**row, "process": row.get("process") and f"{k}:{row['process']}"})
            held.append((d, shard, shard_rows))
            cases.update(shard_cases)
        spec_ids.update(about.spec_ids)
    if config is None or chosen is None:
        raise PadconfError("--results: no gate run directory given")
    count = config[4]
    missing = sorted(set(range(1, count + 1)) - set(shards))
    if missing or len(shards) != count:
        raise PadconfError(f"--results: shards {', '.join(map(str, missing)) or 'repeated'} of {count} missing"
                           if missing else f"--results: {len(shards)} directories for {count} shards: one is repeated")
    rederive_rows(rows, cases, "--results")
    suite = shard_must_hold(load_specs(specs_dir, list(config[1])), config[2], config[3], chosen)
    placements = {str(row["placement"]) for row in rows}
    families = {parse_spec_id(row["spec"])[0] for row in rows}
    for d, shard, shard_rows in held:
        check_shard_whole(d, shard, shard_rows, suite, placements, families)
    def shards_worker() -> Worker:
        from padconf.run.config import RunConfig  # Hypothesis's profiles: as in gate_run
        try:  # checked as a run's are (run.json's record holds their types and bounds)
            limits = RunConfig(runtimes=[runtime], memory_mb=first_run_doc.get("memory_mb", DEFAULT_MEMORY_MB),
                               timeout=first_run_doc.get("timeout", DEFAULT_TIMEOUT_S))
        except PadconfError as exc:
            raise CaseError(f"{Path(dirs[0]) / RUN_JSON}: malformed: {exc}") from None
        return Worker(runtime, limits.memory_mb, limits.timeout)

    # padconf's own faults are never verdicts, and a row's word for one derives nothing: each is
    # run again here (a shard whose failures were relabelled so passed the gate on nothing judged)
    own = [k for k, row in enumerate(rows) if row["verdict"] == Verdict.INCONCLUSIVE
           and (row.get("detail") or "").startswith(OWN_FAULT)]
    if own:
        worker = shards_worker()
        try:
            for k in own:
                case = Case.from_json(cases[rows[k]["case_id"]])
                rows[k] = judged_row(runtime, rows[k]["placement"], case, *worker.run_alone(case, rows[k]["placement"]))
        finally:
            worker.close()
    # filtered shards hold no version's whole suite: signature entries are not judged
    judgement = judge_rows(rows, entries, runtime, set() if chosen.active else spec_ids)
    if judgement.new or judgement.fixed:
        worker = shards_worker()
        try:
            budget = InputBudget("the shards")
            confirm(judgement, entries, [Case.from_json(c, budget) for c in cases.values()], worker)
        finally:
            worker.close()
    return judgement


class _RecordedFilter(msgspec.Struct, forbid_unknown_fields=True):
    """A gate's --mode, --dtype and -k as gate.json records them."""
    modes: list[str] | None = None
    dtypes: list[str] | None = None
    pattern: str | None = None


class GateAbout(msgspec.Struct, forbid_unknown_fields=True):
    """gate.json: which gate a run directory is a shard of. A strict record: an unknown or
    mistyped key is refused, and the bounds are declared here, once."""
    runtime: str
    spec_ids: list[str]
    seed: Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
    explore: Annotated[int, msgspec.Meta(ge=0, le=MAX_EXPLORE)]
    # null or absent: the whole suite, one shard
    shard: tuple[Annotated[int, msgspec.Meta(ge=1, le=MAX_SHARDS)], Annotated[int, msgspec.Meta(ge=1, le=MAX_SHARDS)]] \
        | None = None
    filter: str | None = None
    case_filter: _RecordedFilter | None = None
    run_id: Annotated[str, msgspec.Meta(pattern=RUN_ID_PATTERN)] | None = None

    def chosen(self, where: Path) -> CaseFilter:
        """The gate's case filter, as data; a filtered gate whose gate.json records it only as
        words (an older padconf) cannot be proved whole."""
        if self.case_filter is None:
            if self.filter:
                raise CaseError(f"{where}: its filter is recorded only as words (an older padconf wrote it): "
                                "run the shards again")
            return CaseFilter()
        f = self.case_filter
        try:
            return CaseFilter(tuple(f.modes) if f.modes else None, tuple(f.dtypes) if f.dtypes else None, f.pattern)
        except PadconfError as exc:
            raise CaseError(f"{where}: malformed: {exc}") from None


def check_gate_asked(about: GateAbout, chosen: CaseFilter, asked: GateConfig, where: Path) -> None:
    """Refuse shards whose gate.json records a gate other than the one the command line asks to
    judge: which cases count (the spec versions, the filter, the explored cases) is what the
    command says, and gate.json, a file in a folder anyone may have written, only agrees with
    it. A forged filter or spec list made cases the gate ran drop out of the judgement."""
    specs = [s.id for s in load_specs(asked.specs_dir, asked.specs)]
    said = {"--spec": (sorted(specs), sorted(about.spec_ids)),
            "--mode, --dtype, -k": (asked.case_filter(), chosen),
            "--seed": (asked.seed, about.seed) if about.explore or asked.explore else (0, 0),
            "--explore": (asked.explore, about.explore)}
    differ = [name for name, (want, got) in said.items() if want != got]
    if differ:
        name = differ[0]
        want, got = said[name]
        shown = (lambda f: f.words() or "none") if name.startswith("--mode") else (lambda v: v)
        raise PadconfError(f"{where}: a gate of {name} {str(shown(got))[:200]}, not the {str(shown(want))[:200]} "
                           "this command names: name the options the shards ran with")


def read_gate_json(path: Path) -> GateAbout:
    """gate.json, read bounded (untrusted.json through rundir.read_json), then held to GateAbout."""
    try:
        about = msgspec.convert(read_json(path, PadconfError), GateAbout, strict=True)
    except msgspec.ValidationError as exc:
        raise CaseError(f"{path}: malformed: {exc}") from None
    if about.shard is not None and about.shard[0] > about.shard[1]:
        raise CaseError(f"{path}: malformed: shard {list(about.shard)}: [i, n] with 1 <= i <= n <= {MAX_SHARDS} "
                        "expected")
    return about


def shard_must_hold(specs, seed: int, explore: int, chosen: CaseFilter) -> dict[str, str]:
    """What the gate's shards must hold together, computed as the gate computed it (the suite
    depends on the spec files and padconf's version, the explored cases on ``seed``): each case
    id with its spec id. The example database's replays are the one part no one can compute
    again; they may be added to a shard (a row of origin ``explore:replayed``), and a case
    added can only fail, never hide a failure."""
    return {c.id: c.spec for c in chosen.apply(gate_cases(specs, seed, explore))}


def check_shard_whole(d: Path, shard: tuple[int, int], shard_rows: list[ResultRow], suite: dict[str, str],
                      placements: set[str], families: set[str]) -> None:
    """``shard_rows`` are shard ``shard``'s whole part of ``suite``: every case of the shard (of
    the spec families the runtime ran, ``families``) in every placement the runtime ran
    (``placements``: the gate compiles every model, so each case of a family it runs has a row in
    each, a skipped one too), and no case the suite does not hold; else one line naming one."""
    held: dict[str, set[str]] = {}
    for row in shard_rows:
        if row["case_id"] not in suite and row.get("origin") != REPLAYED:
            raise PadconfError(f"{d}: holds case {row['case_id']!r}, which the gate's suite does not: "
                               "not that shard's run")
        held.setdefault(row["case_id"], set()).add(row["placement"])
    must = sorted(i for i, spec in suite.items() if in_shard(i, shard) and parse_spec_id(spec)[0] in families)
    lacking = [i for i in must if held.get(i, set()) != placements]
    if lacking:
        first = lacking[0]
        gone = sorted(placements - held.get(first, set()))
        raise PadconfError(f"{d}: shard {shard[0]}/{shard[1]} lacks {len(lacking)} of its {len(must)} cases' results "
                           f"(case {first!r}{' in ' + ', '.join(gone) if gone else ''}): not that shard's whole run; "
                           "run it again")
