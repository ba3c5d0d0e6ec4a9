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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from padconf.cases.case import MAX_CASES_BYTES, Case
from padconf.cases.selection import CaseFilter
from padconf.core.dtypes import ArrayBudget
from padconf.core.errors import CaseError, PadconfError
from padconf.core.writing import write_atomically
from padconf.execution.worker import Worker
from padconf.gate.baseline import BaselineEntry
from padconf.gate.compare import Judgement, confirm, judge_rows
from padconf.gate.explore import example_database, remember
from padconf.gate.selection import MAX_SHARDS, gate_cases, in_shard
from padconf.judging.records import ResultRow
from padconf.run.rundir import (
    CASES,
    GATE_JSON,
    RESULTS,
    RUN_JSON,
    RunDirLock,
    attach_controls,
    read_json,
    read_jsonl,
    read_results,
    unfinished,
)
from padconf.spec.loader import load_specs


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

    def case_filter(self) -> CaseFilter:
        return CaseFilter(tuple(self.modes) if self.modes else None, tuple(self.dtypes) if self.dtypes else None,
                          self.pattern)


def gate(config: GateConfig, entries: list[BaselineEntry], out_dir: Path, jobs: int | None = None,
         progress=None) -> Judgement:
    """Run the gate's cases and judge them against ``entries``; explored cases that fail in a
    new way go to the example database, replayed ones that no longer do leave it."""
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


def reads_framework(runtime: str) -> bool:
    """Whether ``runtime`` runs a framework's document (an exporter: torch-export): its gate's suite
    holds that document's cases, which ONNX's and OpenVINO's runtimes never see. A ``module:Class``
    plugin's facts are known in its worker only: its gate names the document with --spec."""
    from padconf.adapters import adapter_class
    from padconf.suite.fixed import FRAMEWORK_DIRS
    try:
        return any(domain in FRAMEWORK_DIRS for domain in adapter_class(runtime).domains)
    except Exception:  # an unknown runtime: said by the run, in its own words
        return False


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
    if (out_dir / RUN_JSON).exists() and not (out_dir / GATE_JSON).exists():
        raise PadconfError(f"{out_dir} holds a padconf run; the gate writes only into its own directories")
    # a gate compiles every model of its suite: what it compares with the baseline is the whole suite
    run_config = RunConfig(runtimes=[config.runtime], specs=config.specs, specs_dir=config.specs_dir,
                           seed=config.seed, max_examples=config.explore, compile_budget=ALL, **worker_limits(config))
    specs = load_specs(config.specs_dir, config.specs)
    chosen = config.case_filter()  # an unknown mode or a bad pattern: said before anything is drawn
    # a framework's document (torch/Pad-2) is in the suite of an exporter's gate, and wherever --spec names it
    frameworks = bool(config.specs) or reads_framework(config.runtime)
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
            "filter": self.config.case_filter().words() or None}))

    def running(self, planned):
        return contextlib.nullcontext(self.progress)


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
        if not (d / GATE_JSON).is_file():
            raise PadconfError(f"{d}: not a gate run directory (no {GATE_JSON})")
        about = read_json(d / GATE_JSON, PadconfError)
        try:
            shard = tuple(about.get("shard") or (1, 1))
            if not (len(shard) == 2 and all(type(n) is int for n in shard) and 1 <= shard[0] <= shard[1] <= MAX_SHARDS):
                raise ValueError(f"shard {about.get('shard')!r}: [i, n] with 1 <= i <= n <= {MAX_SHARDS} expected")
            mine = (about["runtime"], tuple(about["spec_ids"]), about["seed"], about["explore"], shard[1],
                    about.get("filter"))
            if not (isinstance(mine[0], str) and all(isinstance(i, str) for i in mine[1])
                    and isinstance(mine[5], (str, type(None)))):
                raise ValueError("runtime, spec_ids and filter of text expected")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CaseError(f"{d / GATE_JSON}: malformed: {exc}") from None
        if mine[0] != runtime:
            raise PadconfError(f"{d}: a gate of {mine[0]}, not of {runtime}")
        if config is not None and mine != config:
            raise PadconfError(f"{d}: not a shard of the same gate as {dirs[0]} (runtime, specs, seed, explore, "
                               "shard count or filter differ)")
        config = mine
        shards.append(shard[0])
        with RunDirLock(d, exclusive=False):  # not a shard a run still writes
            shard_rows = attach_controls(read_results(d / RESULTS), d)
            run_doc = read_json(d / RUN_JSON, PadconfError)
            first_run_doc = first_run_doc or run_doc
            why = unfinished(run_doc, len(shard_rows), d / RUN_JSON)
            if why:  # the failures it lacks would pass
                raise PadconfError(f"{d}: {why}: run that shard again")
            for row in shard_rows:
                # a row of a case another shard holds: shards overlapping, so that a shard's own
                # cases may be missing and their failures pass
                if not in_shard(row["case_id"], shard):
                    raise PadconfError(f"{d}: holds case {row['case_id']!r}, which is not in shard "
                                       f"{shard[0]}/{shard[1]}: not that shard's run")
                if row["runtime"] == runtime:  # process names are a machine's: one shard's alone
                    rows.append({**row, "process": row.get("process") and f"{k}:{row['process']}"})
            cases.update((c["id"], c) for c in read_jsonl(d / CASES, ("id",)))
        spec_ids.update(about["spec_ids"])
    if config is None:
        raise PadconfError("--results: no gate run directory given")
    count = config[4]
    missing = sorted(set(range(1, count + 1)) - set(shards))
    if missing or len(shards) != count:
        raise PadconfError(f"--results: shards {', '.join(map(str, missing)) or 'repeated'} of {count} missing"
                           if missing else f"--results: {len(shards)} directories for {count} shards: one is repeated")
    # filtered shards hold no version's whole suite: signature entries are not judged
    judgement = judge_rows(rows, entries, runtime, set() if config[5] else spec_ids)
    if judgement.new or judgement.fixed:
        from padconf.run.config import RunConfig  # Hypothesis's profiles: as in gate_run
        try:  # checked as a run's are
            limits = RunConfig(runtimes=[runtime], memory_mb=first_run_doc["memory_mb"],
                               timeout=first_run_doc["timeout"])
        except (KeyError, TypeError) as exc:
            raise CaseError(f"{Path(dirs[0]) / RUN_JSON}: malformed: {exc}") from None
        worker = Worker(runtime, limits.memory_mb, limits.timeout)
        try:
            budget = ArrayBudget(MAX_CASES_BYTES, "the shards' cases' arrays")
            confirm(judgement, entries, [Case.from_json(c, budget) for c in cases.values()], worker)
        finally:
            worker.close()
    return judgement
