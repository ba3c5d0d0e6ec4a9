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
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from padconf.cases.case import MAX_CASES_BYTES, Case
from padconf.core.dtypes import ArrayBudget
from padconf.core.errors import CaseError, PadconfError
from padconf.core.untrusted import json_value, read_text
from padconf.execution.worker import Worker
from padconf.gate.baseline import BaselineEntry, Cell, compiled, forgiving, pruned, read_baseline
from padconf.gate.explore import example_database, remember, replayed
from padconf.judging.failure import failure_class, result_outcome
from padconf.judging.triage import triage
from padconf.judging.verdicts import FAILURES, Verdict
from padconf.run.results import (
    MAX_RUN_JSON_BYTES,
    RESULTS,
    ResultRow,
    RunDirLock,
    jsonl_line,
    read_jsonl,
    read_results,
    result_row,
    unfinished,
    write_atomically,
)
from padconf.spec.loader import Spec, load_specs

# reruns of a new failure, each alone in a fresh worker, until one shows it: a failure half of
# the time goes unseen by all five with odds 1 in 32 (and then a replay after its history)
CONFIRMATIONS = 5
BASELINE_RERUNS = 2  # reruns alone of each suspicious result of a baseline's runs
BASELINE_RUNS = 5  # at most; a baseline runs the suite again until a run shows no failure the earlier ones did not
MAX_RECHECKS = 40  # cells of a fixed-looking entry rerun to see whether its failure comes back
RECHECKS_PER_CELL = 8  # results of such a cell rerun, once each


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


def gate_suite(specs: list[Spec]) -> list[tuple[str, Case]]:
    """The fixed part of the gate's cases, each once, with its name in the suite
    (test_pad19_reflect_float_crop_mixed_3): what padconf.pytest_plugin parametrises over. The
    same for a padconf version and its spec files, whatever ``--seed`` explores."""
    # Hypothesis: imported to draw cases, not to judge rows (tests/test_layers.py)
    from padconf.generate.fixed_suite import suite_cases
    unique: dict[str, tuple[str, Case]] = {}
    for entry in suite_cases(specs):
        unique.setdefault(entry.case.id, (entry.name, entry.case))
    return list(unique.values())


def gate_cases(specs: list[Spec], seed: int = 0, explore: int = 0, db=None) -> list[Case]:
    """The suite, then ``explore`` cases per version drawn with ``seed``, then the database's
    replays; each case once."""
    from padconf.cases.strategies import draw_cases  # as in gate_suite
    cases = [case for _, case in gate_suite(specs)]
    for spec in specs:
        if explore:
            cases += [c.with_(origin="explore") for c in draw_cases(spec, explore, seed)]
        if db is not None:
            cases += replayed(db, spec)
    unique: dict[str, Case] = {}
    for case in cases:
        unique.setdefault(case.id, case)
    return list(unique.values())


# ---------------------------------------------------------------- judging


@dataclass
class Fixed:
    """Cells of an entry where it forgives nothing any more."""
    entry: BaselineEntry
    cells: list[Cell]  # its cells whose results all pass now
    stale: list[Cell] = field(default_factory=list)  # its cells that hold no case of the suite
    gave: str = ""  # what the results of those cells were

    def line(self) -> str:
        e, shown = self.entry, ", ".join(map(str, self.cells[:6])) + (" ..." if len(self.cells) > 6 else "")
        said = [f"{len(self.cells)} cells now pass: {shown} (they gave {self.gave})" if self.cells else "",
                f"{len(self.stale)} cells hold no case of the suite" if self.stale else ""]
        what = "; ".join(filter(None, said))
        return f"fixed: {e.where}: {what} ({e.verdict}: {e.why[:80]}); remove them from the baseline " \
               "(padconf baseline --prune FILE)"


@dataclass
class Judgement:
    runtime: str
    rows: list[ResultRow]
    new: list[ResultRow] = field(default_factory=list)  # failures no entry forgives
    known: list[tuple[ResultRow, BaselineEntry]] = field(default_factory=list)
    fixed: list[Fixed] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)  # what the confirming reruns did not reproduce
    unjudged: list[BaselineEntry] = field(default_factory=list)  # entries with cells this selection cannot judge

    @property
    def counts(self) -> Counter:
        return Counter(r["verdict"] for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 1 if self.new or self.fixed else 0


def judge_rows(rows: list[ResultRow], entries: list[BaselineEntry], runtime: str, covered: set[str]) -> Judgement:
    """Rows of one runtime against a baseline. ``covered``: the spec versions whose whole suite
    the rows hold (none for one shard). An entry's cell where it forgives nothing is fixed when
    its results are in: where its case ran (a case-id entry), or where the cell's version is
    covered; else it waits for a run that is (``unjudged``)."""
    if not rows:
        raise PadconfError(f"no result of {runtime} to judge: a gate never passes on nothing")
    judgement = Judgement(runtime, rows)
    for row in rows:
        if row["verdict"] in FAILURES:
            entry = forgiving(entries, row)
            if entry is not None:
                judgement.known.append((row, entry))
            else:
                judgement.new.append(row)
    by_cell = defaultdict(list)
    for row in rows:
        by_cell[Cell.of(row)].append(row)
    placements = {r["placement"] for r in rows}
    for entry in entries:
        if not compiled(entry.runtime).fullmatch(runtime) or entry.unstable:
            continue  # an unstable failure may not show in one run: its absence fixes nothing
        scope = {c: [r for r in by_cell.get(c, ()) if entry.in_scope(r)] for c in entry.cells}
        # fixed where nothing fails any more: a case that fails otherwise now (OpenVINO answers one
        # case with garbage or a crash from run to run) may still fail this entry's way
        open_cells = sorted((c for c, rs in scope.items() if not any(r["verdict"] in FAILURES for r in rs)),
                            key=Cell.sort_key)
        fixed = Fixed(entry, [], [])
        for cell in open_cells:
            if cell.placement not in placements:
                continue  # a cell of another runtime the entry speaks of
            if scope[cell] and (entry.case is not None or cell.spec in covered):
                fixed.cells.append(cell)
            elif not scope[cell] and cell.spec in covered:
                fixed.stale.append(cell)
            else:
                judgement.unjudged.append(entry)
        if fixed.cells or fixed.stale:
            fixed.gave = _verdicts(r for c in fixed.cells for r in scope[c])
            judgement.fixed.append(fixed)
    judgement.unjudged = list(dict.fromkeys(judgement.unjudged))
    return judgement


def confirm(judgement: Judgement, entries: list[BaselineEntry], cases: list[Case], worker: Worker,
            history: list[ResultRow] | None = None) -> None:
    """Rerun what would fail the gate. A new failure stays new when it recurs alone in a fresh
    worker process (any of CONFIRMATIONS tries; or when another new failure of its cell and
    class did: a broad regression costs one rerun a cell), or when it recurs after the cases its
    worker ran before it (``history``, default the judged rows): then the case that makes it recur,
    the poisoner, is found by bisecting them and kept in the row as ``after``, and a baseline
    entry may list that pair. A failure that recurs neither way is moved to ``flaky``: reported,
    not failing the gate (a hang on a loaded machine); so is one whose case fails alone as an
    entry forgives (OpenVINO crashes on a case alone and answers it after other cases). A fixed
    cell whose failure comes back alone is not fixed (OpenVINO corrupts its heap on some cases
    and then answers the same case differently from run to run)."""
    by_id = {c.id: c for c in cases}
    history = judgement.rows if history is None else history

    def unforgiven(row) -> bool:
        return row["verdict"] in FAILURES and forgiving(entries, row) is None

    def alone(row):
        """Up to CONFIRMATIONS reruns of ``row``'s case alone, until one fails."""
        case, reruns = by_id[row["case_id"]], []
        while len(reruns) < CONFIRMATIONS and not (reruns and reruns[-1]["verdict"] in FAILURES):
            reruns.append(result_row(judgement.runtime, row["placement"], case,
                                     *worker.run_alone(case, row["placement"])))
        return reruns

    recurred = set()  # (cell, verdict, class) of failures that recurred alone: their like need no rerun
    for row in list(judgement.new):
        kind = (Cell.of(row), row["verdict"], failure_class(row))
        if kind in recurred:
            continue
        reruns = alone(row)
        if unforgiven(reruns[-1]):
            recurred.add(kind)
            continue
        known = forgiving(entries, reruns[-1])
        if known is not None:  # the case fails alone as the baseline knows; its answer after others is its state's
            judgement.new.remove(row)
            judgement.flaky.append(f"{row['case_id']} [{row['placement']}]: {row['verdict']} in the run; alone it "
                                   f"fails as {known.where} forgives ({', '.join(r['verdict'] for r in reruns)}): "
                                   "a known failing case, whose answer depends on what its worker ran before")
            continue
        poisoners = _poisoners(row, history, by_id, worker, judgement.runtime, unforgiven)
        if poisoners:
            row["after"] = " ".join(poisoners)
            entry = forgiving(entries, row)
            if entry is not None:  # a known pair
                judgement.new.remove(row)
                judgement.known.append((row, entry))
            continue
        judgement.new.remove(row)
        judgement.flaky.append(f"{row['case_id']} [{row['placement']}]: {row['verdict']} in the run, "
                               f"{', '.join(r['verdict'] for r in reruns)} alone, and not after the "
                               "cases its worker ran before it")
    for fixed in list(judgement.fixed):
        for cell in fixed.cells[:MAX_RECHECKS]:
            scope = [r for r in judgement.rows if Cell.of(r) == cell and fixed.entry.in_scope(r)]
            for row in scope[:RECHECKS_PER_CELL]:  # once each: which of them failed before is not known
                case = by_id[row["case_id"]]
                back = result_row(judgement.runtime, row["placement"], case, *worker.run_alone(case, row["placement"]))
                if fixed.entry.matches(back):
                    fixed.cells.remove(cell)
                    judgement.flaky.append(f"{fixed.entry.where} still fails in {cell}: {row['case_id']} gave "
                                           f"{row['verdict']} in the run, {back['verdict']} alone")
                    break
        if not fixed.cells and not fixed.stale:
            judgement.fixed.remove(fixed)


def _poisoners(row: ResultRow, history: list[ResultRow], by_id: dict, worker: Worker, runtime: str,
               recurs) -> list[str]:
    """The earlier cases of ``row``'s worker process after which its failure recurs, narrowed
    by bisection (one case, unless it takes cases of both halves); [] if it does not recur
    after all of them."""
    earlier = sorted((r for r in history if r.get("process") and r.get("process") == row.get("process")
                      and (r["position"] or 0) < (row["position"] or 0) and r["case_id"] in by_id),
                     key=lambda r: r["position"] or 0)  # a row with a process has its position
    case = by_id[row["case_id"]]

    def after(rows) -> bool:
        return recurs(result_row(runtime, row["placement"], case,
                                 *worker.replay([(by_id[r["case_id"]], r["placement"]) for r in rows], case,
                                                row["placement"])))

    if not earlier or not after(earlier):
        return []
    while len(earlier) > 1:
        half = len(earlier) // 2
        if after(earlier[half:]):
            earlier = earlier[half:]
        elif after(earlier[:half]):
            earlier = earlier[:half]
        else:
            break
    return [r["case_id"] for r in earlier]


def suspicious(row: ResultRow) -> bool:
    """A failure a runtime with a corrupted heap may answer differently when its case runs
    alone: a wrong output, a crash, a hang (a refusal is the runtime's own check)."""
    return row["verdict"] in FAILURES and (row.get("output") is not None
                                           or row["verdict"] in (Verdict.CRASH, Verdict.TIMEOUT))


def baseline_rows(config: GateConfig, out_dir: Path, jobs: int | None = None,
                  progress=None) -> tuple[list[ResultRow], int, set[tuple[str, str]]]:
    """The rows a baseline is written from, the number of cases, and the unstable results.

    The gate's run, run again (in ``out_dir``/repeats) until a run shows no failure the earlier
    runs had not shown, at least twice and at most BASELINE_RUNS times, plus BASELINE_RERUNS reruns
    alone of every suspicious result: the failures of every run and rerun. A result (a case in
    one placement) is unstable when the runs and reruns answered it differently: a runtime that
    reads memory it never wrote, or whose heap an earlier case corrupted, answers the same case
    now right, now with another wrong value, now with a crash. A baseline made of one run
    would miss what the next run shows, and every gate would fail on it."""
    runs: list[list[ResultRow]] = []
    outcomes: defaultdict[tuple[str, str], set] = defaultdict(set)  # result -> what the runs and reruns answered
    seen: set[tuple] = set()
    cases: list[Case] = []
    for k in range(BASELINE_RUNS):
        rows, cases = gate_run(config, out_dir if k == 0 else Path(out_dir) / "repeats" / str(k + 1), None, jobs,
                               progress)
        runs.append(rows)
        shown = set()
        for r in rows:
            outcome = result_outcome(r)
            outcomes[(r["case_id"], r["placement"])].add(outcome)
            if r["verdict"] in FAILURES:
                shown.add((r["case_id"], r["placement"], outcome[:2]))
        if k and shown <= seen:
            break
        seen |= shown
    by_id = {c.id: c for c in cases}
    worker = Worker(config.runtime, **_worker_limits(config))
    reruns = []
    try:
        for case_id, placement in dict.fromkeys((r["case_id"], r["placement"]) for rows in runs
                                                for r in rows if suspicious(r)):
            reruns += [result_row(config.runtime, placement, by_id[case_id],
                                  *worker.run_alone(by_id[case_id], placement)) for _ in range(BASELINE_RERUNS)]
    finally:
        worker.close()
    for row in reruns:
        outcomes[(row["case_id"], row["placement"])].add(result_outcome(row))
    unstable = {result for result, seen_there in outcomes.items() if len(seen_there) > 1}
    failing = [r for rows in runs[1:] for r in rows if r["verdict"] in FAILURES]
    failing += [r for r in reruns if r["verdict"] in FAILURES]
    write_atomically(Path(out_dir) / "reruns.jsonl", "".join(map(jsonl_line, failing)))
    return runs[0] + failing, len(cases), unstable


def _verdicts(rows) -> str:
    return ", ".join(f"{n} {v}" for v, n in Counter(r["verdict"] for r in rows).most_common())


def problem_lines(judgement: Judgement) -> list[str]:
    """One line per new failure and per fixed entry: what the gate fails on."""
    lines = [f"new: {r['case_id']} [{r['placement']}]: {r['verdict']}: {_reason(r)}; triage: {triage(r)[0].label}"
             + _after(r) for r in judgement.new]
    return lines + [f.line() for f in judgement.fixed]


def _after(row: ResultRow) -> str:
    if not row.get("after"):
        return ""
    return (f"; it recurs only after {row['after']} ran in the same worker process (a known pair: "
            f"an entry with `after: {row['after']}`)")


def _reason(row: ResultRow) -> str:
    text = row.get("error") or row.get("detail") or row.get("reason") or ""
    where = f"{row['mode']} {row['dtype']} shape={row['shape']} pads={row['pads']}"
    return f"{where}: {text.splitlines()[0][:200] if text else '(no text)'}"


# What XML 1.0 forbids in a document (C0 controls but tab and newlines, lone surrogates, U+FFFE,
# U+FFFF): ElementTree writes them as they are, and the file no longer parses.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` (a baseline's why, a runtime's error, a case's id: none written by padconf) with
    each character XML 1.0 forbids shown as ``\\xNN`` / ``\\uNNNN``, so that the file parses."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


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
            ElementTree.SubElement(case, "failure", message=f"{row['verdict']}: {_reason(row)}; "
                                                            f"triage: {triage(row)[0].label}")
        elif id(row) in known:
            ElementTree.SubElement(case, "skipped", message=f"known {row['verdict']} ({known[id(row)].where}): "
                                                            f"{known[id(row)].why}")
        elif row["verdict"] == Verdict.SKIPPED:
            ElementTree.SubElement(case, "skipped", message=f"skipped: {row.get('detail')}")
    for fixed in judgement.fixed:
        case = ElementTree.SubElement(suite, "testcase", classname="baseline", name=fixed.entry.where)
        ElementTree.SubElement(case, "failure", message=fixed.line())
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
    for element in suite.iter():  # every attribute, whatever text it was built from
        element.attrib.update({k: xml_text(v) for k, v in element.attrib.items()})
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


def gate(config: GateConfig, entries: list[BaselineEntry], out_dir: Path, jobs: int | None = None,
         progress=None) -> Judgement:
    """Run the gate's cases and judge them against ``entries``; explored cases that fail in a
    new way go to the example database, replayed ones that no longer do leave it."""
    db = example_database(config.example_db) if config.explore else None
    rows, cases = gate_run(config, out_dir, db, jobs, progress)
    covered = set() if config.shard else {s.id for s in load_specs(config.specs_dir, config.specs)}
    judgement = judge_rows(rows, entries, config.runtime, covered)
    if judgement.new or judgement.fixed:
        worker = Worker(config.runtime, **_worker_limits(config))
        try:
            confirm(judgement, entries, cases, worker)
        finally:
            worker.close()
    if db is not None:
        remember(db, rows, cases, judgement.new)
    return judgement


def prune(config: GateConfig, path: Path, out_dir: Path, jobs: int | None = None, progress=None) -> tuple[str, str]:
    """The baseline at ``path`` as it is, and without the cells where the gate, run now, finds
    its entries fixed (confirmed as the gate confirms)."""
    text, entries = read_baseline(path)
    judgement = gate(config, entries, out_dir, jobs, progress)
    return text, pruned(text, {f.entry: set(f.cells + f.stale) for f in judgement.fixed})


def _worker_limits(config: GateConfig) -> dict:
    return {k: v for k, v in (("timeout", config.timeout), ("memory_mb", config.memory_mb)) if v}


def gate_run(config: GateConfig, out_dir: Path, db=None, jobs: int | None = None,
             progress=None) -> tuple[list[ResultRow], list[Case]]:
    """Run ``config.runtime`` on the gate's cases (this shard's) in ``out_dir``, a run
    directory like ``padconf run``'s plus gate.json; returns its result rows and its cases."""
    from padconf.run.runner import Run, RunConfig  # the runner draws with Hypothesis: see gate_suite
    out_dir = Path(out_dir)
    if (out_dir / "run.json").exists() and not (out_dir / "gate.json").exists():
        raise PadconfError(f"{out_dir} holds a padconf run; the gate writes only into its own directories")
    run_config = RunConfig(runtimes=[config.runtime], specs=config.specs, specs_dir=config.specs_dir,
                           seed=config.seed, max_examples=config.explore, **_worker_limits(config))
    specs = load_specs(config.specs_dir, config.specs)
    cases = [c for c in gate_cases(specs, config.seed, config.explore, db) if in_shard(c.id, config.shard)]
    if not cases:  # only a shard can hold none: the suite is never empty
        shard = config.shard or (1, 1)
        raise PadconfError(f"shard {shard[0]}/{shard[1]} holds no case: use fewer shards")
    run = Run(out_dir, run_config, force=True, jobs=jobs)
    run.prepare(cases)
    write_atomically(out_dir / "gate.json", json.dumps({"runtime": config.runtime, "spec_ids": [s.id for s in specs],
                                                        "shard": config.shard or (1, 1), "seed": config.seed,
                                                        "explore": config.explore}))
    run.execute(run.plan(cases), progress=progress)
    return read_results(run.results_path), cases


def judge_results(dirs: list[Path], entries: list[BaselineEntry], runtime: str) -> Judgement:
    """Judge the gate run directories of every shard of one gate as that gate unsharded would,
    confirming reruns included; an incomplete or mixed set of shards is a PadconfError."""
    rows: list[ResultRow] = []
    cases: dict[str, dict] = {}
    spec_ids: set[str] = set()
    config: tuple | None = None
    shards: list[int] = []
    first_run_doc: Any = None  # the first shard's run.json: its limits are the reruns'
    for k, d in enumerate(map(Path, dirs)):
        if not (d / "gate.json").is_file():
            raise PadconfError(f"{d}: not a gate run directory (no gate.json)")
        about = json_value(read_text(d / "gate.json", MAX_RUN_JSON_BYTES, PadconfError, follow=False),
                           f"{d / 'gate.json'}")
        try:
            shard = tuple(about.get("shard") or (1, 1))
            if not (len(shard) == 2 and all(type(n) is int and n >= 1 for n in shard)):
                raise ValueError(f"shard {about['shard']!r}: [i, n] expected")
            mine = (about["runtime"], tuple(about["spec_ids"]), about["seed"], about["explore"], shard[1])
            if not (isinstance(mine[0], str) and all(isinstance(i, str) for i in mine[1])):
                raise ValueError("runtime and spec_ids of text expected")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CaseError(f"{d / 'gate.json'}: malformed: {exc}") from None
        if mine[0] != runtime:
            raise PadconfError(f"{d}: a gate of {mine[0]}, not of {runtime}")
        if config is not None and mine != config:
            raise PadconfError(f"{d}: not a shard of the same gate as {dirs[0]} (runtime, specs, seed, explore, "
                               "shard count differ)")
        config = mine
        shards.append(shard[0])
        with RunDirLock(d, exclusive=False):  # not a shard a run still writes
            shard_rows = read_results(d / RESULTS)
            run_doc = json_value(read_text(d / "run.json", MAX_RUN_JSON_BYTES, PadconfError, follow=False),
                                 str(d / "run.json"))
            first_run_doc = first_run_doc or run_doc
            why = unfinished(run_doc, len(shard_rows), d / "run.json")
            if why:  # the failures it lacks would pass
                raise PadconfError(f"{d}: {why}: run that shard again")
            for row in shard_rows:
                if row["runtime"] == runtime:  # process names are a machine's: one shard's alone
                    rows.append({**row, "process": row.get("process") and f"{k}:{row['process']}"})
            cases.update((c["id"], c) for c in read_jsonl(d / "cases.jsonl", ("id",)))
        spec_ids.update(about["spec_ids"])
    if config is None:
        raise PadconfError("--results: no gate run directory given")
    count = config[4]
    missing = sorted(set(range(1, count + 1)) - set(shards))
    if missing or len(shards) != count:
        raise PadconfError(f"--results: shards {', '.join(map(str, missing)) or 'repeated'} of {count} missing"
                           if missing else f"--results: {len(shards)} directories for {count} shards: one is repeated")
    judgement = judge_rows(rows, entries, runtime, spec_ids)
    if judgement.new or judgement.fixed:
        from padconf.run.runner import RunConfig  # as in run_gate
        try:  # checked as a run's are
            limits = RunConfig(runtimes=[runtime], memory_mb=first_run_doc["memory_mb"],
                               timeout=first_run_doc["timeout"])
        except (KeyError, TypeError) as exc:
            raise CaseError(f"{Path(dirs[0]) / 'run.json'}: malformed: {exc}") from None
        worker = Worker(runtime, limits.memory_mb, limits.timeout)
        try:
            budget = ArrayBudget(MAX_CASES_BYTES, "the shards' cases' arrays")
            confirm(judgement, entries, [Case.from_json(c, budget) for c in cases.values()], worker)
        finally:
            worker.close()
    return judgement
