"""The differential run: cases -> adapters (in worker subprocesses) -> verdicts -> results.jsonl.

A run directory holds ``run.json`` (what was asked), ``cases.jsonl`` (every case, classified,
written before anything runs) and ``results.jsonl`` (one line per runtime x placement x case,
appended and flushed as each finishes, so a killed run loses nothing and ``resume`` skips what
is done). ``summary.md`` is written at the end by padconf.report.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .adapters import REGISTRY, get_adapter
from .cases import Case
from .errors import CaseError, PadconfError
from .examples import example_cases
from .specs import load_specs
from .strategies import PROFILES, draw_cases
from .verdicts import judge
from .worker import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, Worker

BATCH_SIZE = 256


@dataclass
class RunConfig:
    runtimes: list[str] = field(default_factory=lambda: list(REGISTRY))
    specs: list[str] | None = None
    profile: str = "default"
    max_examples: int | None = None  # generated cases per spec; None: the profile's
    seed: int = 0
    memory_mb: int = DEFAULT_MEMORY_MB
    timeout: float = DEFAULT_TIMEOUT_S
    cases_dir: str | list[str] | None = None  # read the cases from test directories (onnx_testdata's layout)

    def cases_per_spec(self) -> int:
        return self.max_examples if self.max_examples is not None else PROFILES[self.profile]["max_examples"]


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a JSON-lines file. A last line cut short by a killed run is dropped; any other
    malformed line is a CaseError naming file and line."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):  # no newline after it: the write was interrupted
                break
            raise CaseError(f"{path}:{number}: malformed JSON line: {exc.msg}") from None
    return rows


def build_cases(config: RunConfig) -> list[Case]:
    """The spec examples, then generated cases, for every selected spec version; or the cases
    of ``config.cases_dir``, classified by the reference."""
    if config.cases_dir is not None:
        from .onnx_testdata import read_cases
        selected = {s.id for s in load_specs(ids=config.specs)}
        cases = [c for c in read_cases(config.cases_dir, load_specs()) if c.spec in selected]
        if not cases:
            raise CaseError(f"--cases: no case of the selected spec versions ({', '.join(sorted(selected))})")
        return cases
    cases = []
    for spec in load_specs(ids=config.specs):
        cases += example_cases(spec)
        cases += draw_cases(spec, config.cases_per_spec(), seed=config.seed)
    return cases


def result_row(runtime: str, placement: str, case: Case, outcome, status: str) -> dict:
    v = judge(case, outcome, status)
    return {
        "runtime": runtime, "placement": placement, "spec": case.spec, "mode": case.mode,
        "dtype": case.dtype, "shape": list(case.data.shape), "pads": list(case.pads), "axes": case.axes,
        "constant_value": None if case.constant_value is None else repr(case.constant_value.reshape(-1)[0]),
        "kind": case.kind, "reason": case.reason, "verdict": v.verdict, "detail": v.detail,
        "matched": v.matched, "error": outcome.error, "note": outcome.note, "case_id": case.id, "origin": case.origin,
        "tags": case.tags,
    }


class Run:
    """One run directory. ``prepare`` writes or reloads the cases; ``execute`` runs them."""

    def __init__(self, out_dir: Path, config: RunConfig | None = None, resume: bool = False):
        self.dir = Path(out_dir)
        self.results_path = self.dir / "results.jsonl"
        self.cases_path = self.dir / "cases.jsonl"
        self.notes: list[str] = []  # one line per runtime or combination that could not run
        if resume:
            if not (self.dir / "run.json").exists():
                raise PadconfError(f"{self.dir}: nothing to resume (no run.json)")
            try:
                self.config = RunConfig(**json.loads((self.dir / "run.json").read_text()))
            except (json.JSONDecodeError, TypeError) as exc:
                raise CaseError(f"{self.dir / 'run.json'}: malformed: {exc}") from None
        else:
            self.config = config or RunConfig()
        self.resume = resume

    def prepare(self) -> list[Case]:
        if self.resume and self.cases_path.exists():
            return [Case.from_json(row) for row in read_jsonl(self.cases_path)]
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.resume:
            self.results_path.unlink(missing_ok=True)
        (self.dir / "run.json").write_text(json.dumps(asdict(self.config), indent=2))
        cases = build_cases(self.config)
        with self.cases_path.open("w", encoding="utf-8") as f:
            for case in cases:
                f.write(json.dumps(case.to_json()) + "\n")
        return cases

    def plan(self, cases: list[Case]) -> list[tuple[str, str, list[Case]]]:
        """(runtime, placement, [cases]) batches still to run, cases with one model signature
        kept together; what cannot run goes to ``notes``."""
        done = {(r["runtime"], r["placement"], r["case_id"]) for r in read_jsonl(self.results_path)}
        order = sorted(cases, key=lambda c: (c.spec, c.mode, c.dtype, c.data.ndim, c.constant_value is None,
                                             c.axes is None, c.pads_type, c.axes_type))
        batches = []
        for name in self.config.runtimes:
            if name not in REGISTRY and ":" not in name:
                raise PadconfError(f"unknown runtime {name!r}; known: {', '.join(REGISTRY)}")
            adapter = get_adapter(name)
            if adapter.available():
                self.notes.append(f"{name}: skipped: {adapter.available()}")
                continue
            supported, unsupported = [], Counter()
            for case in order:
                why = adapter.supports(case.spec, case.dtype)
                if why:
                    unsupported[why] += 1
                else:
                    supported.append(case)
            self.notes += [f"{name}: {n} cases not run: {why}" for why, n in unsupported.items()]
            for placement in adapter.placements:
                todo = [c for c in supported if (name, placement, c.id) not in done]
                batches += [(name, placement, todo[i:i + BATCH_SIZE]) for i in range(0, len(todo), BATCH_SIZE)]
        return batches

    def execute(self, plan, progress=None) -> None:
        """Run every batch of ``plan``, appending a row to results.jsonl as each case finishes.
        One worker at a time: the plan is grouped by runtime."""
        worker = None
        try:
            with self.results_path.open("a", encoding="utf-8") as out:
                for name, placement, batch in plan:
                    if worker is None or worker.adapter != name:
                        self._retire(worker)
                        worker = Worker(name, self.config.memory_mb, self.config.timeout)
                    for case, (outcome, status) in zip(batch, worker.run(batch, placement)):
                        out.write(json.dumps(result_row(name, placement, case, outcome, status)) + "\n")
                        out.flush()
                        if progress:
                            progress(name)
        finally:
            self._retire(worker)

    def _retire(self, worker: Worker | None) -> None:
        if worker is not None:
            if worker.restarts:
                self.notes.append(f"{worker.adapter}: worker restarted {worker.restarts} times")
            worker.close()
