"""`padconf minimize`: shrink a failing case to its smallest form while the same failure
persists, and write a bundle ready to file upstream (padconf.minimize.repro writes it).

"The same failure": the same verdict and failure class (padconf.judging.signature.failure_class: the
error text with its numbers masked, or for a mismatch the kind of difference), the reference
still classifies the case alike (its kind, and the rule or ambiguity with numbers masked), and
the same distinct failure of the run (padconf.judging.signature.failure_signature: with its triage class,
which the candidate's own control decides), never another one of the run's: a runtime with two
bugs (OpenVINO garbles rank-0 data, through Pad and Identity alike) must not have one bug's case
shrink into the other's.
Shrinking is a small deterministic greedy pass in the manner of delta debugging: every
simplification below is tried in turn and kept when the failure persists, round after round
until none helps or the time limit is reached. Each attempt runs alone in a fresh worker process
(Worker.run_alone), so a runtime that corrupted its heap on one attempt cannot confuse the next.
"""
from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from padconf.adapters import unknown_runtime
from padconf.adapters.openvino_tensors import OV_TYPES
from padconf.cases.case import MAX_CASES_BYTES, Case, CaseKind
from padconf.cases.classify import classify, reading_label, repaired_twin
from padconf.cases.onnx_model import build_model
from padconf.core.dtypes import ALL_DTYPES, SUB_BYTE_WIDER, ArrayBudget, bit_equal, numpy_dtype
from padconf.core.errors import CaseError, PadconfError, SpecError
from padconf.core.untrusted import json_value, read_text
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import DEFAULT_TIMEOUT_S, Worker
from padconf.judging.outcome import Outcome
from padconf.judging.signature import failure_class, failure_signature
from padconf.judging.triage import PAD_BUGS, Triage, triage
from padconf.judging.verdicts import FAILURES, Verdict, control_record, element_bits
from padconf.minimize.bundle_title import NEGATIVE_SIZE, RANK_0, feature, generic, title
from padconf.minimize.repro import index_markdown, write_bundle
from padconf.minimize.simplify import PASSES, rank_one
from padconf.report.report import PLACEMENT_DEPENDENT, failures, load_run, placement_dependent
from padconf.run.results import MAX_JSONL_BYTES, ResultRow, result_row
from padconf.spec.loader import get_spec, load_specs

DEFAULT_TIME_LIMIT_S = 60.0
UNJUDGED = (Verdict.NOT_IMPLEMENTED, Verdict.CRASH, Verdict.TIMEOUT)  # not compared with the spec's answer


def failure_key(row: Mapping[str, Any]) -> tuple:
    """What must stay the same while shrinking."""
    reason = row.get("reason")
    masked = None if reason is None else failure_class({"verdict": "", "error": reason})
    return row["verdict"], failure_class(row), row["kind"], masked


@dataclass
class Attempt:
    case: Case  # classified
    row: ResultRow
    outcome: Outcome
    control: dict | None = None  # IsolatedRunner.control's, once run


@dataclass
class Shrunk:
    original: Attempt
    final: Attempt
    tries: int
    seconds: float
    out_of_time: bool
    # the minimal case through the operation the runtime lowers Pad to (native_check), or onnx's
    # shape inference (schema_check), where it fails there too: {"runtime", "spec", "verdict",
    # "detail", "why"}
    native: dict | None = None
    # the runtime's refusal of the minimal case folded, where at run time it gave an empty
    # tensor (refused_when_folded)
    refused_when_folded: str | None = None
    # the byte-wide dtype whose twin of the minimal case passes, where its data is sub-byte (packing)
    packing: str | None = None


@dataclass
class Job:
    """One failure to minimize: a case, the placement it failed in (None: find one), and what
    the run recorded of it."""
    case: Case
    placement: str | None = None
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


# ---------------------------------------------------------------- running one attempt


class IsolatedRunner:
    """Runs cases on one runtime, each alone in a fresh worker process (the spec's verdict on
    each comes from padconf.judging.verdicts, by way of result_row)."""

    def __init__(self, worker: Worker, runtime: str, specs_dir: str | None = None, fixed: dict | None = None):
        self.worker, self.runtime, self.specs_dir = worker, runtime, specs_dir
        self.fixed = fixed or {}  # ambiguity -> the reading a worked example of the document prints
        self.base_timeout = worker.timeout
        self.tries = 0

    def attempt(self, case: Case, placement: str, deadline: float | None = None, shorten: bool = False) -> Attempt:
        case = classify(case, get_spec(case.spec, Path(self.specs_dir) if self.specs_dir else None))
        names = (case.reason or "").split(",")
        if case.kind == CaseKind.AMBIGUOUS and self.fixed and all(n in self.fixed for n in names):
            case = case.with_(kind=CaseKind.DEFINED, reason=None, interpretations={},
                              expected=case.interpretations[reading_label({n: self.fixed[n] for n in names})])
        outcome, status = self._run_alone(case, placement, deadline if shorten else None)
        return Attempt(case, result_row(self.runtime, placement, case, outcome, status), outcome)

    def _run_alone(self, case: Case, placement: str, deadline: float | None) -> tuple[Outcome, Status]:
        """``case`` alone in a fresh worker, counted in ``tries``; with a ``deadline``, a hang
        does not outlast it (the worker waits 0.5 s at least)."""
        if deadline is not None:
            self.worker.timeout = max(0.5, min(self.base_timeout, deadline - time.monotonic()))
        self.tries += 1
        try:
            return self.worker.run_alone(case, placement)
        finally:
            self.worker.timeout = self.base_timeout

    def attempt_if_it_can(self, case: Case, placement: str, deadline: float | None = None,
                          shorten: bool = False) -> Attempt | None:
        """``attempt``, or None for a case the reference cannot take (a twin, a candidate)."""
        try:
            return self.attempt(case, placement, deadline, shorten)
        except (PadconfError, ValueError, TypeError, OverflowError):
            return None

    def control(self, attempt: Attempt, placement: str, deadline: float | None = None) -> dict | None:
        """The attempt's control (verdicts.control_record: its data through an Identity model,
        alone, and its empty baked pads or axes), as padconf.run.runner runs one for each distinct
        failure of a run; None for a hang (its control would wait as long)."""
        if attempt.row["verdict"] == Verdict.TIMEOUT:
            return None
        return control_record(attempt.case, placement,
                              lambda control, where: self._run_alone(control, where, deadline), attempt.row["verdict"])

    def twin_fails(self, attempt: Attempt, placement: str, deadline: float | None = None) -> bool:
        """An accepted must-reject case's repaired twin (classify.repaired_twin: the one broken
        rule undone) fails too: another failure answers there (OpenVINO's garbage for rank-0
        data "accepts" any pads), so the acceptance says nothing of the rule."""
        spec = get_spec(attempt.case.spec, Path(self.specs_dir) if self.specs_dir else None)
        twin = repaired_twin(attempt.case, spec)
        if isinstance(twin, str):
            return False
        got = self.attempt_if_it_can(twin, placement, deadline, shorten=deadline is not None)
        return got is not None and got.row["verdict"] in FAILURES


def size_text(case: Case) -> str:
    return f"shape {list(case.data.shape)} ({case.data.size} elements), pads {case.pads}" \
           + (f", axes {case.axes}" if case.axes is not None else "")


def signature_of(attempt: Attempt) -> tuple:
    return failure_signature({**attempt.row, "control": attempt.control})


def shrink(isolated: IsolatedRunner, start: Attempt, placement: str, time_limit: float, progress=None,
           others: frozenset = frozenset()) -> Shrunk:
    """The smallest case found within ``time_limit`` seconds that fails as ``start`` does: the
    same failure_key, and the same failure_signature (``start.control`` run already), which is
    none of ``others``, the run's other distinct failures on this runtime; for a lenient failure,
    where the runtime gets the repaired twin right (IsolatedRunner.twin_fails)."""
    began = time.monotonic()
    deadline, key = began + time_limit, failure_key(start.row)
    shorten = start.row["verdict"] != Verdict.TIMEOUT  # only a hang is allowed the full timeout
    signature = signature_of(start)
    others = others - {signature}
    # a lenient failure counts where the runtime is right on the valid twin, as it is on start's
    twin_guard = key[0] == Verdict.WRONGLY_ACCEPTED and not isolated.twin_fails(start, placement, deadline)
    best, tried, tries = start, {start.case.id}, isolated.tries

    def same_failure(candidate: Case) -> Attempt | None:
        if candidate.id in tried or time.monotonic() >= deadline:
            return None
        tried.add(candidate.id)
        got = isolated.attempt_if_it_can(candidate, placement, deadline, shorten)
        if got is None:
            return None
        found = failure_key(got.row)
        # A failure that does not depend on what the spec says of the input (no kernel, a crash, a
        # hang) may move from an undefined or invalid input to a defined one: a stronger report.
        if not (found == key or (found[:2] == key[:2] and key[0] in UNJUDGED and got.case.kind == CaseKind.DEFINED)):
            return None
        if twin_guard and isolated.twin_fails(got, placement, deadline):
            return None
        got.control = isolated.control(got, placement, deadline)
        found_signature = signature_of(got)
        return got if found_signature == signature and found_signature not in others else None

    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for simplify in PASSES:
            while time.monotonic() < deadline:
                found = next((a for a in map(same_failure, simplify(best.case)) if a), None)
                if found is None:
                    break
                best, improved = found, True
                if progress:
                    progress(f"{time.monotonic() - began:4.1f} s, {isolated.tries - tries} tries: "
                             f"{size_text(best.case)}")
    # Rank 0 is where shrinking heads whatever the bug; a failure that shows alike at rank 1 is not
    # about rank 0, and is reported there, away from runtimes' own rank-0 bugs (OpenVINO's frontend
    # refuses Pad-1's value of inf at any rank, and would be titled and merged as its rank-0 bug).
    twin = rank_one(best.case)
    ranked = same_failure(twin) if twin is not None else None
    best = ranked or best
    seconds = time.monotonic() - began
    return Shrunk(start, best, isolated.tries - tries, seconds, seconds >= time_limit)


# ---------------------------------------------------------------- targets


def _case_from_file(path: Path) -> Case:
    lines = [ln for ln in read_text(path, MAX_JSONL_BYTES).splitlines() if ln.strip()]
    if not lines:
        raise CaseError(f"{path}: empty; expected one line of a run's cases.jsonl")
    doc = json_value(lines[0], str(path))
    if not isinstance(doc, dict):
        raise CaseError(f"{path}: not a cases.jsonl line (a JSON object)")
    try:
        return Case.from_json(doc)
    except CaseError as exc:
        raise CaseError(f"{path}: {exc}") from None


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
        budget = ArrayBudget(MAX_CASES_BYTES, f"{path}'s cases' arrays")
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
        return "case", [Job(_case_from_file(path))]
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
    # model target only, not to minimize recorded rows (tests/test_layers.py)
    from padconf.minimize.model_cut import REFERENCE, UserModel

    model = UserModel(where)
    whole = model.whole_run(worker)
    _say(progress, f"minimize {where}: the whole model on {worker.adapter}: {whole}", end=True)
    helpers = [] if worker.adapter == REFERENCE else [Worker(REFERENCE, timeout=worker.timeout)]
    try:
        found = model.pad_cases([worker, *helpers], load_specs())
    finally:
        for helper in helpers:
            helper.close()
    return [Job(pad.case, preferred="inputs" if pad.placement == "attributes" else pad.placement, found_in=[
        f"- the model: `{where / 'model.onnx'}` (opset {model.opset}, {len(model.model.graph.node)} nodes), "
        f"fed `test_data_set_0`; on {worker.adapter} the whole model: {whole}",
        f"- its Pad node `{pad.node.name or '(unnamed)'}` "
        f"(#{list(model.model.graph.node).index(pad.node)} in the graph), "
        f"run alone on the arrays that reach it (computed by {pad.inputs_from})"]) for pad in found]


def reproduce(isolated: IsolatedRunner, job: Job, placements: list[str]) -> tuple[Attempt, str]:
    """The job's case run alone (in its recorded placement, or in the placement of the user's
    model it came from, or else in the first that fails); CaseError when it does not fail."""
    tried = []
    chosen = job.placement or job.preferred
    if chosen and (job.placement or chosen in placements):  # a failure in another placement is another bug
        placements = [chosen]
    for placement in placements:
        got = isolated.attempt(job.case, placement)
        if got.row["verdict"] in FAILURES:
            got.control = isolated.control(got, placement)
            return got, placement
        tried.append(f"{got.row['verdict']} [{placement}]")
    raise CaseError(f"case {job.case.id} does not fail on {isolated.runtime} when run alone ({', '.join(tried)})")


def short_name(case: Case) -> str:
    domain, version = case.spec.split("/Pad-")
    return f"{'ov-' if domain == 'openvino' else ''}pad{version}-{case.mode}-{case.dtype}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def minimize(target: str, runtime: str, out: Path | str, time_limit: float = DEFAULT_TIME_LIMIT_S,
             progress=None, timeout: float = DEFAULT_TIMEOUT_S, specs_dir: str | None = None) -> list[dict]:
    """Minimize what TARGET names on ``runtime`` into ``out``; one summary dict per failure
    ({"dir", "title", "shrunk" | "error"}). A case target's bundle is ``out`` itself."""
    if unknown_runtime(runtime):
        raise PadconfError(unknown_runtime(runtime))
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PadconfError(f"--out {out}: exists and is not an empty directory")
    out.mkdir(parents=True, exist_ok=True)
    kind, jobs = resolve(target, runtime, specs_dir)
    for job in jobs:  # a case of a version the spec folder lacks: one line, before any worker sees it
        try:
            get_spec(job.case.spec, Path(job.specs_dir) if job.specs_dir else None)
        except SpecError as exc:
            raise CaseError(f"case {job.case.id}: {exc}") from None
    worker = Worker(runtime, timeout=timeout)
    # the runtime Pad lowers to (native_check): one worker for every bundle, started on first use
    lowered_to = Worker(LOWERED_TO[runtime][0], timeout=timeout) if runtime in LOWERED_TO else None
    summaries: list[dict[str, Any]] = []
    roots: dict[tuple, dict] = {}  # root_cause(shrunk) -> the summary of the bundle written for it
    others = frozenset(failure_signature(r) for j in jobs[:1] for r in j.run_rows
                       if r["runtime"] == runtime and r["verdict"] in FAILURES)  # the run's distinct failures
    try:
        if kind == "model":
            jobs = model_jobs(Path(target), worker, progress)
        about = worker.describe(sorted({(j.case.spec, j.case.dtype) for j in jobs}))
        if about["unavailable"]:
            raise PadconfError(f"runtime {runtime} unavailable: {about['unavailable']}")
        for n, job in enumerate(jobs, 1):
            example = job.example
            isolated = IsolatedRunner(worker, runtime, job.specs_dir, example and example["interpretation"])
            label = job.case.id if kind == "case" else f"{n}/{len(jobs)}"
            try:
                start, placement = reproduce(isolated, job, about["placements"])
                def say(text: str, label: str = label, verdict: str = start.row["verdict"]) -> None:
                    _say(progress, f"minimize {label} {verdict}: {text}")

                say(f"start: {size_text(start.case)}")
                shrunk = shrink(isolated, start, placement, time_limit, say, others)
                shrunk.native = native_check(shrunk, runtime, placement, lowered_to) \
                    or schema_check(shrunk, runtime, placement)
                shrunk.refused_when_folded = refused_when_folded(isolated, shrunk.final, placement,
                                                                     about["placements"])
                shrunk.packing = packing(isolated, shrunk.final, placement)
                cause = root_cause(shrunk, placement)
                root = roots.get(cause)
                if root is not None and kind != "case":  # the same root cause: a variant, not a bundle
                    root["variants"].append(variant_text(shrunk, placement))
                    summaries.append({"n": n, "dir": None, "recorded": job.recorded, "merged_into": root,
                                      "error": f"the same root cause as bundle {root['n']} ({root['dir'].name})",
                                      "shape": list(job.case.data.shape)})
                    _say(progress, f"minimize {label}: the same root cause as bundle {root['n']}", end=True)
                    continue
                where = out if kind == "case" else out / (f"{n:02d}-{_safe(runtime)}-{start.row['verdict']}-"
                                                          f"{short_name(shrunk.final.case)}")
                title = write_bundle(where, shrunk, placement, runtime, about.get("version"), job)
            except Exception as exc:  # noqa: BLE001 -- one failure that cannot be minimized must not lose the rest
                if kind == "case":
                    raise
                why = str(exc) if isinstance(exc, CaseError) else f"{type(exc).__name__}: {exc}"
                summaries.append({"n": n, "dir": None, "recorded": job.recorded, "error": why,
                                  "shape": list(job.case.data.shape)})
                _say(progress, f"minimize {label}: skipped: {why}", end=True)
                continue
            _say(progress, f"minimize {label}: {title} ({size_text(shrunk.final.case)}; {shrunk.seconds:.1f} s, "
                           f"{shrunk.tries} tries) -> {where}", end=True)
            summaries.append({"n": n, "dir": where, "title": title, "shrunk": shrunk, "recorded": job.recorded,
                              "variants": [variant_text(shrunk, placement)]})
            roots[cause] = summaries[-1]
    finally:
        worker.close()
        if lowered_to is not None:
            lowered_to.close()
    if kind == "model" and not any(s["dir"] for s in summaries):
        raise CaseError(f"{target}: no Pad node of the model fails alone on {runtime}: "
                        + "; ".join(s["error"] for s in summaries))
    if kind != "case":
        for s in summaries:  # a bundle that stands for several failures of the run lists them
            if len(s.get("variants", ())) > 1:
                with (s["dir"] / "REPORT.md").open("a", encoding="utf-8") as report:
                    report.write("\n## Variants\n\nThe same root cause, found for each of these failures of the "
                                 "run (one bundle for them all):\n\n" + "".join(f"- {v}\n" for v in s["variants"]))
        (out / "INDEX.md").write_text(index_markdown(target, runtime, summaries), encoding="utf-8")
    return summaries


# dtype names in error texts (OpenVINO's "type: f8e5m2", C++ template arguments), masked in root_cause
_DTYPE_WORDS = re.compile(r"\b(" + "|".join(sorted({*ALL_DTYPES, *OV_TYPES.values()}, key=len, reverse=True))
                          + r"|(unsigned |signed )?(char|short|int|long|long long|float|double))\b")

_GROUP = re.compile(r"[\[({][^\[\](){}]*[\])}]")
_MODE_RULES = ("modes", "mirror_beyond_dim")  # the rules whose check depends on the mode


def root_cause(shrunk: Shrunk, placement: str) -> tuple:
    """What makes two minimized failures one bug to file: the same failure (verdict; error class
    with numbers and C++ template arguments masked; a mismatch's difference but not its kind of
    wrong value, which garbage changes from run to run; the rule a lenient case breaks; dtype
    names; for an answer no reading gives, not which undefined points the version names) and
    triage class, in the same mode, on minimal inputs with the same distinguishing feature
    (bundle_title.feature: a crop beyond the dimension, rank 0, ...), computed the same way
    (folded at compile time, or run): whatever the dtype, spec version, placement or exact shape
    (onnxruntime's refusal of rank-0 data, found once per dtype). A refusal is one whatever the
    mode, a crash or hang whether the spec defines the output or not. A missing kernel is one
    per dtype. A Pad bug whose minimal input has a telling feature (bundle_title.generic: not
    just its rank) is one with every other Pad bug of that feature, however it shows: OpenVINO's
    rank-0 data is refused with static shapes, and answered with garbage or a crash when fed. So
    is every Pad bug answered at run time with an empty tensor where the same case folded is
    refused (refused_when_folded): one check the run-time path skips (OpenVINO's
    edge on an empty axis, reflect past its bound), but for pads that remove more than an axis
    holds, whose negative size is a bug of its own. So is every Pad bug on sub-byte data that
    its byte-wide twin does not show (packing), computed the same way (folded, or run):
    OpenVINO's CPU kernel packs uint2 and float4e2m1 wrong, whatever the pads."""
    case, row = shrunk.final.case, shrunk.final.row
    verdict, error_class, kind, reason = failure_key(row)
    if verdict == Verdict.MISMATCH:
        error_class = error_class.split(" (")[0]
    if verdict == Verdict.UNEXPLAINED:  # which undefined points apply is the version's wording, not the bug
        error_class, reason = error_class.rsplit(":", 1)[-1], None
    error_class = _DTYPE_WORDS.sub("<dtype>", re.sub(r"\[with .*", "[with ..]", error_class))
    error_class = re.sub(r"'[^']*'", "<..>", error_class)  # Python's "Issues with types [<class ...>, ...]"
    while (unbracketed := _GROUP.sub("<..>", error_class)) != error_class:
        error_class = unbracketed
    mode: str | None = case.mode
    what: str | None = feature(case)
    if verdict in (Verdict.CRASH, Verdict.TIMEOUT):  # whether the spec defines the output or not
        kind, reason = None, None
    if verdict == Verdict.WRONGLY_REJECTED:  # one check, whichever mode reaches it
        mode = None
    if kind == CaseKind.MUST_REJECT:  # "dtype int8 is not in this version's type list": the rule, not the dtype
        reason = case.rule
        if verdict == Verdict.WRONGLY_ACCEPTED:  # a check missing: its error class is that reason, and the
            error_class, what = "", None  # data, or the mode but where the rule is about the mode, no part of it
            mode = mode if case.rule in _MODE_RULES else None
    found = signature_of(shrunk.final)[3]
    if found in PAD_BUGS and shrunk.refused_when_folded and what != NEGATIVE_SIZE:  # a check the run-time
        return "a Pad bug", "an empty tensor where folded is refused"  # path skips, whatever it checks
    if found in PAD_BUGS and shrunk.packing:  # right on the same values a byte wide: its packing, whatever
        return "a Pad bug", "sub-byte data", placement == Placement.FOLDED  # the sub-byte type and input
    if found in PAD_BUGS and what is not None and not generic(what):  # one bug, whatever it shows as
        # rank 0 says it all but for a refusal, whose error text tells another cause ("int32 axes")
        return "a Pad bug", RANK_0 if case.data.ndim == 0 and verdict != Verdict.WRONGLY_REJECTED else what
    return (verdict, error_class, row.get("difference"), kind, reason, found, mode,
            what, placement == Placement.FOLDED, case.dtype if verdict == Verdict.NOT_IMPLEMENTED else None)


def refused_when_folded(isolated: IsolatedRunner, attempt: Attempt, placement: str,
                        placements: list[str]) -> str | None:
    """Where ``attempt`` (inputs fed at run time) is a wrong answer that is an empty tensor, and
    the same case folded at compile time (every input a constant) is refused, rightly (a reading
    of the document, or a rule it breaks): the refusal's error. The runtime checks the pads
    where it knows the shapes while building the model, and its run-time path skips the check,
    answering nothing instead. Else None."""
    output = attempt.outcome.output
    if placement == Placement.FOLDED or Placement.FOLDED not in placements or output is None \
            or output.size or attempt.row["verdict"] not in (Verdict.MISMATCH, Verdict.UNEXPLAINED):
        return None
    folded = isolated.attempt_if_it_can(attempt.case, Placement.FOLDED)
    if folded is None or folded.row["verdict"] in FAILURES:
        return None
    return folded.outcome.error  # None where folded gave an output


def packing(isolated: IsolatedRunner, attempt: Attempt, placement: str) -> str | None:
    """Where ``attempt`` fails on data of a sub-byte dtype, and its twin holding the same values
    in the byte-wide dtype (dtypes.SUB_BYTE_WIDER), a case the spec accepts, passes on the same
    runtime and placement: that dtype (the failure is about how the runtime packs the narrow
    one). Else None."""
    case = attempt.case
    wider = SUB_BYTE_WIDER.get(case.dtype)
    if wider is None or attempt.row["verdict"] not in FAILURES:
        return None
    dtype = numpy_dtype(wider)
    constant = None if case.constant_value is None else np.asarray(case.constant_value).astype(dtype)
    twin = isolated.attempt_if_it_can(case.with_(data=case.data.astype(dtype), constant_value=constant), placement)
    passes = twin is not None and twin.case.kind != CaseKind.MUST_REJECT and twin.row["verdict"] not in FAILURES
    return wider if passes else None


# runtimes that run onnx's own shape inference (the operator schemas') on every model they load
SCHEMA_CHECKED = ("onnxruntime",)


def schema_check(shrunk: Shrunk, runtime: str, placement: str) -> dict | None:
    """Where ``runtime`` (SCHEMA_CHECKED) refuses the minimal case with the error onnx's own shape
    inference gives on the same model (onnx.shape_inference.infer_shapes, strict): the refusal
    is onnx's Pad schema's, to be filed once, against onnx; else None. Shaped as native_check's."""
    row, error = shrunk.final.row, shrunk.final.row.get("error")
    if runtime not in SCHEMA_CHECKED or row["verdict"] != Verdict.WRONGLY_REJECTED or not error:
        return None
    try:
        onnx.shape_inference.infer_shapes(build_model(shrunk.final.case, placement), check_type=True,
                                          strict_mode=True, data_prop=True)
        return None
    except onnx.shape_inference.InferenceError as exc:
        said = str(exc).strip().rsplit("] ", 1)[-1]  # past onnx's "[ShapeInferenceError] ..." prefixes
    except (onnx.checker.ValidationError, PadconfError, ValueError, TypeError, OverflowError):  # no model to infer
        return None
    if said not in error:
        return None
    return {"runtime": "onnx", "spec": "onnx's shape inference", "verdict": row["verdict"], "detail": said,
            "why": f"{runtime} runs onnx's shape inference on every model it loads: the refusal is onnx's Pad "
                   "schema's, to be filed once, against onnx."}


# runtimes whose Pad lowers to another runtime's own operation: OpenVINO's ONNX frontend converts
# ONNX Pad to OpenVINO's Pad-12, which the native adapter builds directly
LOWERED_TO = {"openvino-onnx": ("openvino", "openvino/Pad-12")}
_NATIVE_MODES = ("constant", "edge", "reflect", "symmetric")


def native_check(shrunk: Shrunk, runtime: str, placement: str, lowered_to: Worker | None) -> dict | None:
    """The minimal case through the operation ``runtime`` lowers Pad to (LOWERED_TO), alone in a
    fresh process of ``lowered_to`` (that runtime's worker) and the same placement: what it did,
    where it fails there too and alike (_alike: the same output, error or death), as a Pad bug or
    by accepting what that operation's own document forbids (OpenVINO's Pad-12 on a reflect pad
    past its bound): the bug is then that operation's, to be filed once, against it. Else None,
    and None where the case has no such twin (axes, wrap) or the bug is no Pad bug."""
    case, row = shrunk.final.case, shrunk.final.row
    if lowered_to is None or case.axes is not None or case.mode not in _NATIVE_MODES \
            or row["verdict"] not in FAILURES or signature_of(shrunk.final)[3] not in PAD_BUGS:
        return None
    other, spec = LOWERED_TO[runtime]
    try:
        native = classify(Case(spec=spec, data=case.data, pads=list(case.pads), mode=case.mode,
                               constant_value=case.constant_value, pads_type=case.pads_type))
        outcome, status = lowered_to.run_alone(native, placement)
    except (PadconfError, ValueError, TypeError, OverflowError):  # no such twin, or that runtime is not here
        return None
    got = result_row(other, placement, native, outcome, status)
    if got["verdict"] not in FAILURES or triage(got)[0] not in (*PAD_BUGS, Triage.LENIENT) \
            or not _alike(shrunk.final, native, outcome, status):
        return None
    return {"runtime": other, "spec": spec, "verdict": got["verdict"], "detail": got.get("detail") or got.get("error"),
            "why": f"{runtime} lowers Pad to that operation: this is its bug, to be filed once, against it."}


def _alike(attempt: Attempt, native: Case, outcome: Outcome, status: str) -> bool:
    """The other runtime failed on ``native`` as ``attempt`` did: both died (or hung), both
    returned the same output, or outputs of one shape that both hold values found nowhere in
    the input nor in any reading's output (memory never written, whose contents differ from
    process to process), or both refused with the same error (the frontend's text wraps the
    operation's)."""
    if status != Status.OK or attempt.row["verdict"] in (Verdict.CRASH, Verdict.TIMEOUT):
        return status == attempt.row["verdict"]
    mine, theirs = attempt.outcome.output, outcome.output
    if mine is not None or theirs is not None:
        return mine is not None and theirs is not None and mine.shape == theirs.shape \
            and mine.dtype == theirs.dtype and (bit_equal(mine, theirs) or bool(
                _from_nowhere(attempt.case, mine) and _from_nowhere(native, theirs)))
    return failure_class({"verdict": Verdict.WRONGLY_REJECTED, "error": outcome.error}) in failure_class(attempt.row)


def _from_nowhere(case: Case, output) -> bool:
    """``output`` holds a value (bit pattern) that neither the case's data, its constant value
    nor any output the document's readings give holds."""
    if output.dtype != case.data.dtype:
        return False
    known = [case.data, *([case.constant_value] if case.constant_value is not None else []),
             *(a for a in (case.expected, *case.interpretations.values()) if a is not None)]
    return bool(element_bits(output) - set().union(*(element_bits(np.asarray(a)) for a in known)))


def variant_text(shrunk: Shrunk, placement: str) -> str:
    case = shrunk.final.case
    heading = title(shrunk.final.row, case, refused_when_folded=bool(shrunk.refused_when_folded))
    return f"{heading} [{placement}] (from case {shrunk.original.case.id})"


def _say(progress, text: str, end: bool = False) -> None:
    if progress:
        progress(text, end)
