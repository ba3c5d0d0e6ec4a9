"""What ``padconf minimize TARGET`` names, as jobs: a case file, a run directory (each distinct
failure of the runtime, from its best starting case), ``RUN_DIR:<case id>``, or a user's model
directory (each of its Pad nodes, model_jobs)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from padconf.adapters import adapter_class, reference_runtime
from padconf.cases.case import Case, CaseKind, InputBudget
from padconf.core import escape
from padconf.core.errors import CaseError, PadconfError
from padconf.core.vocabulary import Placement
from padconf.execution.worker import Worker
from padconf.judging.failure import failure_signature
from padconf.judging.records import ResultRow
from padconf.judging.verdicts import FAILURES
from padconf.report.report import PLACEMENT_DEPENDENT, failures, placement_dependent
from padconf.run.rundir import load_run, read_case_file
from padconf.spec.loader import get_spec, load_specs


@dataclass
class Job:
    """One failure to minimize: a case, the placement it failed in (None: find one), and what
    the run recorded of it."""
    case: Case
    placement: Placement | None = None
    recorded: ResultRow | None = None
    run_rows: list[ResultRow] = field(default_factory=list)  # every runtime's rows of the run, for context
    specs_dir: str | None = None
    preferred: str | None = None  # a user's model's own placement: the only one tried where the runtime has it
    found_in: list[str] = field(default_factory=list)  # markdown lines: where the case came from

    @property
    def example(self) -> dict | None:
        """The spec document's worked example the case is, when its print fixes a reading of
        an undefined point (``interpretation``): shrunk cases are judged by that reading too."""
        name = self.case.origin.removeprefix("example:")
        if self.case.kind != CaseKind.DEFINED or name == self.case.origin:
            return None
        spec = get_spec(self.case.spec, Path(self.specs_dir) if self.specs_dir else None)
        return next((ex for ex in spec.examples if ex["name"] == name and ex.get("interpretation")), None)




def _split_run_case(target: str) -> tuple[Path, str] | None:
    """``RUN_DIR:<case id>`` (case ids hold colons too): the longest prefix that is a directory."""
    for m in reversed(list(re.finditer(":", target))):
        if Path(target[:m.start()]).is_dir():
            return Path(target[:m.start()]), target[m.end():]
    return None


def _starting_rows(rows: list[ResultRow]) -> dict[tuple, ResultRow]:
    """Per distinct failure (failure_signature), the case shrinking starts from: a spec
    document's worked example, else the first case of rank 1 or more. From rank 0 shrinking can
    only stay there, where a runtime's rank-0 bug of its own (OpenVINO's garbage) may fail the
    same way whatever the failure is about."""
    starts: dict[tuple, ResultRow] = {}
    for row in rows:
        if row["verdict"] in FAILURES:
            key, held = failure_signature(row), starts.get(failure_signature(row))
            if held is None or _start_rank(row) > _start_rank(held):
                starts[key] = row
    return starts


def _start_rank(row: ResultRow) -> tuple[bool, bool]:
    return row["origin"].startswith("example:"), bool(row["shape"])


def _failing_first(rows: list[ResultRow]) -> ResultRow | None:
    return next((r for r in rows if r["verdict"] in FAILURES), rows[0] if rows else None)


def resolve(target: str, runtime: str, specs_dir: str | None = None) -> tuple[str, list[Job]]:
    """("case" | "run", jobs): what TARGET names, as jobs for ``runtime`` (``specs_dir``: the spec
    folder the user named, which a run directory's must be)."""
    path = Path(target)
    if path.is_dir() and (path / "results.jsonl").exists():
        run = load_run(path, specs_dir)
        mine = [r for r in run.rows if r["runtime"] == runtime]
        if not mine:
            raise PadconfError(f"{path}: no result of runtime {runtime} "
                               f"(it has {', '.join(sorted({r['runtime'] for r in run.rows}))})")
        found = failures(mine)
        # a case one placement fails and another passes is a finding of its own too
        seen = {g["example"]["case_id"] for g in found}
        found += [g for g in placement_dependent(mine)
                  if g["example"]["verdict"] in FAILURES and g["example"]["case_id"] not in seen]
        if not found:
            raise PadconfError(f"{path}: {runtime} has no failure in this run: nothing to minimize")
        jobs = []
        budget = InputBudget(str(path))
        starts = _starting_rows(mine)
        for group in found:
            row = group["example"]
            if group["verdict"] != PLACEMENT_DEPENDENT:
                row = starts.get(failure_signature(row), row)
            doc = run.cases.get(row["case_id"])
            if doc is None:
                raise CaseError(f"{path}: case {row['case_id']} is in results.jsonl but not in cases.jsonl")
            jobs.append(Job(Case.from_json(doc, budget), row["placement"], row, run.rows, run.specs_dir))
        return "run", jobs
    if path.is_dir():
        if (path / "model.onnx").is_file():
            return "model", []  # its jobs need the runtime: model_jobs
        raise PadconfError(f"{path}: neither a run directory (results.jsonl), a model directory (model.onnx) "
                           "nor a case file")
    if path.is_file():
        return "case", [Job(read_case_file(path))]
    split = _split_run_case(target)
    if split is None:
        raise PadconfError(f"{target}: no such file or run directory "
                           "(TARGET: a case file, RUN_DIR, or RUN_DIR:<case id>)")
    run_dir, case_id = split
    run = load_run(run_dir, specs_dir)
    doc = run.cases.get(case_id)
    if doc is None:
        raise CaseError(f"{run_dir}: no case {case_id!r} in cases.jsonl")
    recorded = _failing_first([r for r in run.rows if r["case_id"] == case_id and r["runtime"] == runtime])
    placement = recorded["placement"] if recorded else None
    return "case", [Job(Case.from_json(doc), placement, recorded, run.rows, run.specs_dir)]


def model_jobs(where: Path, worker: Worker, progress=None) -> list[Job]:
    """One job per Pad node of the user's model in ``where``: its case, with the arrays that
    really reach it (run on the runtime; else on onnx's reference evaluator)."""
    # model_cut reads test data, classified with strategies' edge classes: Hypothesis, imported for a
    # model target only, not to minimize recorded rows (tests/docs/test_layers.py)
    from padconf.minimize.model_cut import UserModel

    model = UserModel(where)
    whole = model.whole_run(worker)
    if progress:
        progress(f"minimize {where}: the whole model on {worker.adapter}: {whole}", True)
    # the arrays reaching each Pad, from onnx's evaluator too where the runtime's are not to be trusted
    reference = reference_runtime()
    helpers = ([] if adapter_class(worker.adapter).evaluates_reference or reference is None
               else [Worker(reference, worker.memory_mb, timeout=worker.timeout)])
    try:
        found = model.pad_cases([worker, *helpers], load_specs())
    finally:
        for helper in helpers:
            helper.close()
    return [Job(pad.case, preferred="inputs" if pad.placement == "attributes" else pad.placement, found_in=[
        f"- the model: {escape.markdown_code(where / 'model.onnx')} (opset {model.opset}, "
        f"{len(model.model.graph.node)} nodes), fed `test_data_set_0`; on {escape.markdown(worker.adapter)} the "
        f"whole model: {escape.markdown(whole)}",
        f"- its Pad node {escape.markdown_code(pad.node.name or '(unnamed)')} "
        f"(#{list(model.model.graph.node).index(pad.node)} in the graph), "
        f"run alone on the arrays that reach it (computed by {escape.markdown(pad.inputs_from)})"]) for pad in found]


