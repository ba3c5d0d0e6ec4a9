"""The CI gate: run one runtime on the fixed suite (the spec documents' worked examples and
the generated suite, the same cases for a padconf version and seed), optionally on freshly
drawn cases too, and judge the results against a baseline. Exit 1 on a failure no entry
forgives (new) and on an entry that no longer fails (fixed: remove it); 0 otherwise.

Sharding splits the cases by a hash of their id, so the N shards are disjoint, their union is
the whole, and a case stays in its shard whatever else is drawn. A case-id entry is judged in
the shard holding its case; a signature entry can span shards, so it is judged only on the
whole suite: one unsharded gate, or ``padconf gate --results DIR ...`` over every shard's run.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from .baseline import Entry, compiled
from .cases import Case
from .classify import classify
from .errors import CaseError, PadconfError
from .onnx_testdata import suite_entries
from .runner import MAX_RUN_JSON_BYTES, RESULT_KEYS, Run, RunConfig, read_jsonl, result_row
from .specs import Spec, load_specs
from .strategies import draw_cases, edge_classes
from .untrusted import json_value, read_text
from .verdicts import AMBIGUOUS_VERDICT, FAILURES, SKIPPED
from .worker import Worker

CONFIRMATIONS = 2  # reruns, each alone in a fresh worker, before a result may fail the gate
MAX_RECHECKS = 40  # results of a fixed-looking entry rerun to see whether its failure comes back
EXPLORE_KEY = b"padconf-explore:"  # + spec id: the example database's key for that version's finds
DEFAULT_DATABASE = ".padconf/examples"


# ---------------------------------------------------------------- the cases


def parse_shard(text: str) -> tuple[int, int]:
    """"I/N" (1 <= I <= N) as (I, N)."""
    m = re.fullmatch(r"(\d+)/(\d+)", text or "")
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise PadconfError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/4")
    return int(m[1]), int(m[2])


def in_shard(case_id: str, shard: tuple[int, int] | None) -> bool:
    if shard is None:
        return True
    index, count = shard
    return int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % count == index - 1


def example_database(where: str | None):
    """A Hypothesis example database: a folder (DirectoryBasedExampleDatabase), or
    ``module:attribute`` naming any ExampleDatabase (GitHubArtifactDatabase,
    MultiplexedDatabase ...), or None for ``none``."""
    from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
    where = where or DEFAULT_DATABASE
    if where == "none":
        return None
    if re.fullmatch(r"[\w.]+:\w+", where):
        module, name = where.split(":")
        try:
            db = getattr(importlib.import_module(module), name)
        except Exception as exc:
            raise PadconfError(f"--example-db {where}: cannot load it: {type(exc).__name__}: {exc}") from None
        if not isinstance(db, ExampleDatabase):
            raise PadconfError(f"--example-db {where}: not a hypothesis ExampleDatabase but {type(db).__name__}")
        return db
    return DirectoryBasedExampleDatabase(where)


def _db_value(case: Case) -> bytes:
    return json.dumps(case.inputs_json(), sort_keys=True).encode()


def replayed(db, spec: Spec) -> list[Case]:
    """The cases earlier explorations found failing for ``spec``, classified afresh (the
    database keeps inputs only, as JSON: the spec files may have changed since)."""
    cases, key = [], EXPLORE_KEY + spec.id.encode()
    for value in sorted(db.fetch(key)):
        try:
            case = classify(Case.from_json(json.loads(value)), spec)
        except (ValueError, RecursionError, CaseError, PadconfError):
            db.delete(key, value)  # written by another padconf, or broken (or nested past the recursion limit)
            continue
        if value != _db_value(case):  # one spelling per case, so that forgetting it forgets it
            db.delete(key, value)
            db.save(key, _db_value(case))
        case.tags = edge_classes(case, spec)
        case.origin = "explore:replayed"
        cases.append(case)
    return cases


def gate_suite(specs: list[Spec], seed: int = 0) -> list[tuple[str, Case]]:
    """The fixed part of the gate's cases, each once, with its name in the suite
    (test_pad19_reflect_float_crop_mixed_3): what padconf.pytest_plugin parametrises over."""
    unique = {}
    for entry in suite_entries(specs, seed):
        unique.setdefault(entry.case.id, (entry.name, entry.case))
    return list(unique.values())


def gate_cases(specs: list[Spec], seed: int = 0, explore: int = 0, db=None) -> list[Case]:
    """The suite, then ``explore`` drawn cases per version, then the database's replays; each
    case once."""
    cases = [case for _, case in gate_suite(specs, seed)]
    for spec in specs:
        if explore:
            cases += [c.with_(origin="explore") for c in draw_cases(spec, explore, seed)]
        if db is not None:
            cases += replayed(db, spec)
    unique = {}
    for case in cases:
        unique.setdefault(case.id, case)
    return list(unique.values())


def remember(db, rows: list[dict], cases: list[Case], new: list[dict]) -> None:
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
        elif case.origin == "explore:replayed":
            db.delete(key, value)


# ---------------------------------------------------------------- judging


@dataclass
class Judgement:
    runtime: str
    rows: list[dict]
    new: list[dict] = field(default_factory=list)  # failures no entry forgives
    known: list[tuple[dict, Entry]] = field(default_factory=list)
    fixed: list[tuple[Entry, str]] = field(default_factory=list)  # entry, why it counts as fixed
    flaky: list[str] = field(default_factory=list)  # what the confirming reruns did not reproduce
    unjudged: list[Entry] = field(default_factory=list)  # entries this selection cannot judge

    @property
    def counts(self) -> Counter:
        return Counter(r["verdict"] for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 1 if self.new or self.fixed else 0


def judge_rows(rows: list[dict], entries: list[Entry], runtime: str, covered: set[str],
               spec_ids: set[str]) -> Judgement:
    """Rows of one runtime against a baseline. ``covered``: the spec versions whose whole suite
    the rows hold (none for one shard). A signature entry that forgives nothing counts as fixed
    only when every version of ``spec_ids`` it can speak of is covered; else it waits for a
    run that is (``unjudged``)."""
    if not rows:
        raise PadconfError(f"no result of {runtime} to judge: a gate never passes on nothing")
    judgement = Judgement(runtime, rows)
    used: set[Entry] = set()
    for row in rows:
        if row["verdict"] not in FAILURES:
            continue
        matching = [e for e in entries if e.matches(row)]  # all of them still fail, not just the first
        if matching:
            judgement.known.append((row, matching[0]))
            used.update(matching)
        else:
            judgement.new.append(row)
    for entry in entries:
        if entry in used or not compiled(entry.runtime).fullmatch(runtime):
            continue
        scope = [r for r in rows if entry.in_scope(r)]
        if entry.case is not None and scope:
            judgement.fixed.append((entry, f"{entry.case} ran and gave {_verdicts(scope)}"))
        elif entry.case is None and {s for s in spec_ids if entry.speaks_of(s)} <= covered:
            judgement.fixed.append((entry, f"none of the {len(scope)} results it covers fails so ({_verdicts(scope)})"
                                    if scope else "stale: it covers no case of the suite"))
        else:
            judgement.unjudged.append(entry)
    return judgement


def confirm(judgement: Judgement, entries: list[Entry], cases: list[Case], worker: Worker) -> None:
    """Rerun what would fail the gate, each case alone in a fresh worker process, CONFIRMATIONS
    times. A new failure that does not recur every time, or a fixed-looking entry whose failure
    comes back, is moved to ``flaky``: reported, not failing the gate. (OpenVINO corrupts its
    heap on some cases and then answers the same case differently from run to run.)"""
    by_id = {c.id: c for c in cases}

    def again(row):
        case = by_id[row["case_id"]]
        return [result_row(judgement.runtime, row["placement"], case, *worker.run_alone(case, row["placement"]))
                for _ in range(CONFIRMATIONS)]

    for row in list(judgement.new):
        reruns = again(row)
        if not all(r["verdict"] in FAILURES and not any(e.matches(r) for e in entries) for r in reruns):
            judgement.new.remove(row)
            judgement.flaky.append(f"{row['case_id']} [{row['placement']}]: {row['verdict']} in the run, "
                                   f"{', '.join(r['verdict'] for r in reruns)} alone")
    for entry, why in list(judgement.fixed):
        for row in [r for r in judgement.rows if entry.in_scope(r)][:MAX_RECHECKS]:
            back = next((r for r in again(row) if entry.matches(r)), None)
            if back:
                judgement.fixed.remove((entry, why))
                judgement.flaky.append(f"{entry.where} still fails: {row['case_id']} [{row['placement']}] gave "
                                       f"{row['verdict']} in the run, {back['verdict']} alone")
                break


def suspicious(row: dict) -> bool:
    """A failure, or an answer to an undefined point that no interpretation gives: what a
    runtime with a corrupted heap may do differently when the case runs alone."""
    return row["verdict"] in FAILURES or (row["verdict"] == AMBIGUOUS_VERDICT and not row.get("matched")
                                          and row.get("error") is None)


def baseline_rows(config: GateConfig, out_dir: Path, jobs: int | None = None, progress=None) -> tuple[list[dict], int]:
    """The rows a baseline is written from: the gate's run, plus CONFIRMATIONS reruns alone of
    every suspicious row, so that a failure the case shows alone (a crash where the run saw
    garbage) is known too; and the number of cases."""
    run, cases = gate_run(config, out_dir, None, jobs, progress)
    rows = read_jsonl(run.results_path)
    by_id = {c.id: c for c in cases}
    worker = Worker(config.runtime, **_worker_limits(config))
    reruns = []
    try:
        for row in filter(suspicious, rows):
            case = by_id[row["case_id"]]
            reruns += [result_row(config.runtime, row["placement"], case, *worker.run_alone(case, row["placement"]))
                       for _ in range(CONFIRMATIONS)]
    finally:
        worker.close()
    return rows + [r for r in reruns if r["verdict"] in FAILURES], len(cases)


def _verdicts(rows) -> str:
    return ", ".join(f"{n} {v}" for v, n in Counter(r["verdict"] for r in rows).most_common())


def problem_lines(judgement: Judgement) -> list[str]:
    """One line per new failure and per fixed entry: what the gate fails on."""
    lines = [f"new: {r['case_id']} [{r['placement']}]: {r['verdict']}: {_reason(r)}" for r in judgement.new]
    lines += [f"fixed: {e.where} ({e.verdict}: {e.why[:80]}): {why}; remove it from the baseline"
              for e, why in judgement.fixed]
    return lines


def _reason(row: dict) -> str:
    text = row.get("error") or row.get("detail") or row.get("reason") or ""
    where = f"{row['mode']} {row['dtype']} shape={row['shape']} pads={row['pads']}"
    return f"{where}: {text.splitlines()[0][:200] if text else '(no text)'}"


def junit_xml(judgement: Judgement) -> str:
    """JUnit XML: a testcase per result (new failures fail, forgiven ones and skips are
    skipped with their reason), and one per fixed entry, failing."""
    known = {id(row): entry for row, entry in judgement.known}
    new = {id(row) for row in judgement.new}
    suite = ElementTree.Element("testsuite", name=f"padconf gate {judgement.runtime}")
    for row in judgement.rows:
        case = ElementTree.SubElement(suite, "testcase", classname=f"{row['spec']}.{row['mode']}",
                                      name=f"{row['case_id']}[{row['placement']}]", time=str(row.get("seconds") or 0))
        if id(row) in new:
            ElementTree.SubElement(case, "failure", message=f"{row['verdict']}: {_reason(row)}")
        elif id(row) in known:
            ElementTree.SubElement(case, "skipped", message=f"known {row['verdict']} ({known[id(row)].where}): "
                                                            f"{known[id(row)].why}")
        elif row["verdict"] == SKIPPED:
            ElementTree.SubElement(case, "skipped", message=f"skipped: {row.get('detail')}")
    for entry, why in judgement.fixed:
        case = ElementTree.SubElement(suite, "testcase", classname="baseline", name=entry.where)
        ElementTree.SubElement(case, "failure", message=f"fixed: {why}; remove it from the baseline")
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


# ---------------------------------------------------------------- running


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


def gate(config: GateConfig, entries: list[Entry], out_dir: Path, jobs: int | None = None,
         progress=None) -> Judgement:
    """Run the gate's cases and judge them against ``entries``; explored cases that fail in a
    new way go to the example database, replayed ones that no longer do leave it."""
    db = example_database(config.example_db) if config.explore else None
    run, cases = gate_run(config, out_dir, db, jobs, progress)
    rows = read_jsonl(run.results_path)
    every = {s.id for s in load_specs(config.specs_dir)}
    covered = set() if config.shard else {s.id for s in load_specs(config.specs_dir, config.specs)}
    judgement = judge_rows(rows, entries, config.runtime, covered, every)
    if judgement.new or judgement.fixed:
        worker = Worker(config.runtime, **_worker_limits(config))
        try:
            confirm(judgement, entries, cases, worker)
        finally:
            worker.close()
    if db is not None:
        remember(db, rows, cases, judgement.new)
    return judgement


def _worker_limits(config: GateConfig) -> dict:
    return {k: v for k, v in (("timeout", config.timeout), ("memory_mb", config.memory_mb)) if v}


def gate_run(config: GateConfig, out_dir: Path, db=None, jobs: int | None = None, progress=None) -> tuple[Run, list[Case]]:
    """Run ``config.runtime`` on the gate's cases (this shard's) in ``out_dir``, a run
    directory like ``padconf run``'s plus gate.json; returns the run and its cases."""
    out_dir = Path(out_dir)
    if (out_dir / "run.json").exists() and not (out_dir / "gate.json").exists():
        raise PadconfError(f"{out_dir} holds a padconf run; the gate writes only into its own directories")
    run_config = RunConfig(runtimes=[config.runtime], specs=config.specs, specs_dir=config.specs_dir,
                           seed=config.seed, max_examples=config.explore, **_worker_limits(config))
    specs = load_specs(config.specs_dir, config.specs)
    cases = [c for c in gate_cases(specs, config.seed, config.explore, db) if in_shard(c.id, config.shard)]
    if not cases:
        raise PadconfError(f"shard {config.shard[0]}/{config.shard[1]} holds no case: use fewer shards")
    run = Run(out_dir, run_config, force=True, jobs=jobs)
    run.prepare(cases)
    (out_dir / "gate.json").write_text(json.dumps({"runtime": config.runtime, "spec_ids": [s.id for s in specs],
                                                   "shard": config.shard, "seed": config.seed,
                                                   "explore": config.explore}))
    run.execute(run.plan(cases), progress=progress)
    return run, cases


def gathered_rows(dirs: list[Path], runtime: str) -> tuple[list[dict], set[str]]:
    """The rows of ``runtime`` in gate run directories (one per shard), and the spec versions
    whose whole suite they hold: all selected ones when every shard 1..N of one N is there."""
    rows, shards, selections = [], set(), set()
    for d in map(Path, dirs):
        if not (d / "gate.json").is_file():
            raise PadconfError(f"{d}: not a gate run directory (no gate.json)")
        about = json_value(read_text(d / "gate.json", MAX_RUN_JSON_BYTES, PadconfError), f"{d / 'gate.json'}")
        shard, spec_ids = (about.get("shard"), about.get("spec_ids")) if isinstance(about, dict) else (0, 0)
        if not (shard is None or (isinstance(shard, list) and len(shard) == 2 and all(type(n) is int for n in shard))) \
                or not (spec_ids is None or (isinstance(spec_ids, list) and all(isinstance(i, str) for i in spec_ids))):
            raise CaseError(f"{d / 'gate.json'}: malformed: expected {{\"shard\": [i, n] or null, \"spec_ids\": [...]}}")
        rows += [r for r in read_jsonl(d / "results.jsonl", RESULT_KEYS) if r["runtime"] == runtime]
        shards.add(tuple(shard) if shard else (1, 1))
        selections.add(tuple(spec_ids or ()))
    counts = {n for _, n in shards}
    complete = len(counts) == 1 and {i for i, _ in shards} == set(range(1, counts.pop() + 1)) and len(selections) == 1
    return rows, set(selections.pop()) if complete else set()
