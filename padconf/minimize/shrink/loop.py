"""Shrinking one failing case (padconf.minimize.minimize's job): each attempt alone in a fresh
worker process, kept while the same failure holds (padconf.judging.failure.failure_key and
failure_signature), round after round of padconf.minimize.shrink.simplify's passes."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify, reading_label, repaired_twin
from padconf.cases.context import Consumer
from padconf.core.dtypes import SUB_BYTE_WIDER, bit_equal
from padconf.core.errors import PadconfError
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import Worker
from padconf.judging.failure import failure_key, failure_signature
from padconf.judging.records import ResultRow, judged_row
from padconf.judging.verdicts import FAILURES, Difference, Verdict, control_record, element_bits
from padconf.minimize.bundle.title import cause_feature, feature
from padconf.minimize.probes.inference import controls_seen
from padconf.minimize.shrink.context import consumer_changed, passes, same_across_consumers
from padconf.minimize.shrink.simplify import rank_one
from padconf.spec.loader import get_spec

UNJUDGED = (Verdict.NOT_IMPLEMENTED, Verdict.CRASH, Verdict.TIMEOUT)  # not compared with the spec's answer


@dataclass
class Attempt:
    case: Case  # classified
    row: ResultRow
    outcome: Outcome
    control: dict | None = None  # IsolatedRunner.control's, once run

    @property
    def pads_ignored(self) -> bool:
        """Whether the runtime answered the case's data itself, bit for bit, where the case pads
        or crops it: the Pad dropped, whatever shape or values that makes wrong."""
        out, data = self.outcome.output, self.case.data
        return self.row["verdict"] == Verdict.MISMATCH and out is not None and any(self.case.pads) \
            and out.dtype == data.dtype and out.shape == data.shape and bit_equal(out, data)

    @property
    def nonzero_from_nowhere(self) -> bool:
        """Whether its output holds a nonzero value (zero bytes aside: a deterministic zero fill,
        IREE's reflect past the dimension, reads no memory; float8e8m0's zero bytes are 2**-127)
        that neither the input nor any reading's output holds (from_nowhere)."""
        output = self.outcome.output
        if output is None:
            return False
        nonzero = output if output.dtype == object else output[np.asarray(output != 0) & _nonzero_bytes(output)]
        return bool(nonzero.size) and from_nowhere(self.case, nonzero)

    @property
    def unwritten(self) -> bool:
        """Whether its output shows memory the runtime never wrote, the same bits run to run or
        not: Pad computes nothing, so a nonzero value from nowhere that no conversion explains
        (the difference plain values, the dtype not packed into bits) came from no input (audit V:
        OpenVINO's edge crop past the axis answered 4.5e-44 every time, where in constant mode
        the same crop crashed)."""
        return self.nonzero_from_nowhere and self.row.get("difference") == Difference.VALUES \
            and self.case.dtype not in SUB_BYTE_WIDER


def from_nowhere(case: Case, output) -> bool:
    """``output`` holds a value (bit pattern) that neither the case's data, its constant value
    nor any output the document's readings give holds."""
    if output.dtype != case.data.dtype:
        return False
    known = [case.data, *([case.constant_value] if case.constant_value is not None else []),
             *(a for a in (case.expected, *case.interpretations.values()) if a is not None)]
    return bool(element_bits(output) - set().union(*(element_bits(np.asarray(a)) for a in known)))


def _nonzero_bytes(a: np.ndarray) -> np.ndarray:
    """Which elements of ``a`` have a byte that is not zero, in ``a``'s shape."""
    raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)
    return raw.any(axis=1).reshape(a.shape)


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
    # the byte-wide dtype whose copy of the minimal case passes, where its data is sub-byte (packing)
    packing: str | None = None
    # whether the minimal case passes in another placement (placement_needed): a title names its
    # placement only then; None: not tried (the run's original case decides)
    placement_needed: bool | None = None
    # whether the failure needs the minimal case's positive pads beside its negative ones
    # (positive_pads_needed): a title names them only then
    positive_pads_needed: bool | None = None
    # whether the opset and the dtype a title names are needed (experiments.features_needed: the
    # same case at another opset, or of another dtype, does not fail alike); named where untried
    features: dict[str, bool] | None = None
    # how the minimal case's output showed memory the runtime never wrote, its bits other when run
    # again (evidence.memory_unsafe); None: it did not (a deterministic wrong value), or no output
    memory_unsafe: str | None = None

    @property
    def corrupts_memory(self) -> bool:
        """The minimal case kills the runtime, or its output shows memory never written: one
        symptom, whatever its face (evidence.how_it_shows, root_cause.mechanism_key)."""
        return self.final.row["verdict"] == Verdict.CRASH or self.memory_unsafe is not None


class IsolatedRunner:
    """Runs cases on one runtime, each alone in a fresh worker process (the spec's verdict on
    each comes from padconf.judging.verdicts, by way of result_row)."""

    def __init__(self, worker: Worker, runtime: str, specs_dir: str | None = None, fixed: dict | None = None,
                 answers: dict | None = None):
        self.worker, self.runtime, self.specs_dir = worker, runtime, specs_dir
        self.fixed = fixed or {}  # ambiguity -> the reading a worked example of the document prints
        self.base_timeout = worker.timeout
        self.tries = 0  # runs made, each in a fresh process
        self.reused = 0  # runs asked for again and answered from ``_answers``
        # (case id, placement) -> what a run with the full timeout gave: the experiments after
        # shrinking ask the same cases again (the minimal case folded, its controls, its twins), and a
        # compiler's run costs a compile; a rerun meant as one (fails_again) asks ``fresh``. The
        # runners of one worker may share it (``answers``): what the runtime gave, not how it is judged
        self._answers: dict[tuple[str, str], tuple[Outcome, Status]] = {} if answers is None else answers

    def attempt(self, case: Case, placement: Placement, deadline: float | None = None,
                shorten: bool = False, fresh: bool = False) -> Attempt:
        case = classify(case, get_spec(case.spec, Path(self.specs_dir) if self.specs_dir else None))
        names = (case.reason or "").split(",")
        if case.kind == CaseKind.AMBIGUOUS and self.fixed and all(n in self.fixed for n in names):
            case = case.with_(kind=CaseKind.DEFINED, reason=None, interpretations={},
                              expected=case.interpretations[reading_label({n: self.fixed[n] for n in names})])
        outcome, status = self._run_alone(case, placement, deadline if shorten else None, fresh)
        return Attempt(case, judged_row(self.runtime, placement, case, outcome, status), outcome)

    def _run_alone(self, case: Case, placement: Placement, deadline: float | None,
                   fresh: bool = False) -> tuple[Outcome, Status]:
        """``case`` alone in a fresh worker, counted in ``tries``; with a ``deadline``, a hang
        does not outlast it (the worker waits 0.5 s at least). Without one, what an earlier run of
        the same case and placement gave, unless ``fresh`` (a run cut short is never reused)."""
        key = (case.id, str(placement))
        if deadline is None and not fresh and key in self._answers:
            self.reused += 1
            return self._answers[key]
        if deadline is not None:
            self.worker.timeout = max(0.5, min(self.base_timeout, deadline - time.monotonic()))
        self.tries += 1
        try:
            got = self.worker.run_alone(case, placement)
        finally:
            self.worker.timeout = self.base_timeout
        if deadline is None:
            self._answers[key] = got
        return got

    def run_alone(self, case: Case, placement: Placement) -> tuple[Outcome, Status]:
        """``case`` (a control, run as it is, not classified) alone with the full timeout, or what
        that run gave before."""
        return self._run_alone(case, placement, None)

    def attempt_if_it_can(self, case: Case, placement: Placement, deadline: float | None = None,
                          shorten: bool = False, fresh: bool = False) -> Attempt | None:
        """``attempt``, or None for a case the reference cannot take (a repaired twin, a candidate)."""
        try:
            return self.attempt(case, placement, deadline, shorten, fresh)
        except (PadconfError, ValueError, TypeError, OverflowError):
            return None

    def control(self, attempt: Attempt, placement: Placement, deadline: float | None = None) -> dict | None:
        """The attempt's control (verdicts.control_record: its data through an Identity model,
        alone, and its empty baked pads or axes), as padconf.run.runner runs one for each distinct
        failure of a run, and its consumer as the runtime's shape inference shows it the Pad's
        output (inference.controls_seen); None for a hang (its control would wait as long)."""
        if attempt.row["verdict"] == Verdict.TIMEOUT:
            return None
        return control_record(attempt.case, placement,
                              lambda control, where: self._run_alone(control, where, deadline), attempt.row["verdict"],
                              controls_seen(attempt.case, self.runtime, placement))

    def twin_fails(self, attempt: Attempt, placement: Placement, deadline: float | None = None) -> bool:
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


def _kindless(found: tuple, at: int) -> tuple:
    """A failure_key (its class ``at`` 1) or failure_signature (at 2) without a mismatch's kind of
    wrong value: memory a runtime reads wrongly holds now a value the output lacks, now one
    misplaced, as the data shrinks (IREE's negative begin pad fed at run time, shrunk one row at
    a time from 112 rows and left at 57, its smaller forms read as another of the run's failures)."""
    if Verdict.MISMATCH not in found[:at]:
        return found
    return (*found[:at], str(found[at]).split(" (")[0], *found[at + 1:])


def _apart(others: frozenset, signature: tuple) -> frozenset:
    """The run's other failures but those ``signature`` is, whatever the kind of wrong value."""
    return frozenset(o for o in others if _kindless(o, 2) != _kindless(signature, 2))


def constants_as_initializers(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement, placements: list[str],
                              time_limit: float, progress=None,
                              others: frozenset = frozenset()) -> tuple[Shrunk, Placement]:
    """``shrunk``, whose minimal case's only neighbours produce its pads as Constant nodes, shrunk
    on from the plain Pad with those constants as initializers, in that placement, where that
    fails as its minimal case does (the same failure_key and failure_signature, whatever the kind
    of wrong value), in what is left of ``time_limit``; else ``shrunk`` in ``placement``. A shrink
    keeps its placement, where the Pad alone takes its pads fed at run time, another case: TVM's
    reflect read past the input was filed twice, once "with pads from Constant nodes", which
    played no part (audit VI)."""
    final = shrunk.final
    ctx = final.case.context
    if ctx is None or not ctx.producer.is_constant or ctx.consumer != Consumer.NONE \
            or Placement.INITIALIZERS not in placements or placement == Placement.INITIALIZERS:
        return shrunk, placement
    got = isolated.attempt_if_it_can(final.case.with_(context=None), Placement.INITIALIZERS)
    if got is None or _kindless(failure_key(got.row), 1) != _kindless(failure_key(final.row), 1):
        return shrunk, placement
    got.control = isolated.control(got, Placement.INITIALIZERS)
    if _kindless(signature_of(got), 2) != _kindless(signature_of(final), 2):
        return shrunk, placement
    again = shrink(isolated, got, Placement.INITIALIZERS, max(time_limit - shrunk.seconds, 0.0), progress, others)
    return Shrunk(shrunk.original, again.final, shrunk.tries + again.tries + 1, shrunk.seconds + again.seconds,
                  again.out_of_time), Placement.INITIALIZERS


def unwritten_feature(case: Case) -> str:
    """The feature memory never written is one bug of, in any mode: the case's in constant mode
    (root_cause.mechanism_key's for memory corrupted)."""
    return cause_feature(feature(case.with_(mode="constant")))


def shrink(isolated: IsolatedRunner, start: Attempt, placement: Placement, time_limit: float, progress=None,
           others: frozenset = frozenset()) -> Shrunk:
    """The smallest case found within ``time_limit`` seconds that fails as ``start`` does: the
    same failure_key, and the same failure_signature (``start.control`` run already), which is
    none of ``others``, the run's other distinct failures on this runtime; for a lenient failure,
    where the runtime gets the repaired twin right (IsolatedRunner.twin_fails).

    An answer no reading gives (unexplained) may move to a wrong value on a defined input, of
    the same triage class, differing from the document's answer as the unexplained answer differs
    from every reading's (only in a zero's sign, in values, in shape: Ruling.difference): the
    document's own answer is then what the runtime misses, a report that rests on no undefined
    point (OpenVINO pads with +0.0 for a constant of -0.0, found on Pad-1's undefined negative
    pads and shown with positive ones); or to the same on an input with fewer undefined points
    (a pad value in reflect mode dropped, on the way to a defined input). From there on, that
    failure is the one kept."""
    began = time.monotonic()
    deadline, key = began + time_limit, failure_key(start.row)
    shorten = start.row["verdict"] != Verdict.TIMEOUT  # only a hang is allowed the full timeout
    signature = signature_of(start)
    others = _apart(others, signature)
    # a lenient failure counts where the runtime is right on the valid twin, as it is on start's
    # The time limit bounds how many candidates are tried, never what one experiment concludes: a
    # candidate's twin and control run with the full timeout (one the limit cut short would read as
    # "fails too", and the label would depend on the machine's speed and the cache's warmth)
    twin_guard = key[0] == Verdict.WRONGLY_ACCEPTED and not isolated.twin_fails(start, placement)
    best, tried, tries = start, {start.case.id}, isolated.tries
    unwritten, unwritten_what = start.unwritten, unwritten_feature(start.case)

    def same_failure(candidate: Case, final: bool = False) -> Attempt | None:
        if candidate.id in tried or (not final and time.monotonic() >= deadline):
            return None
        tried.add(candidate.id)
        got = isolated.attempt_if_it_can(candidate, placement, None if final else deadline, shorten)
        if got is None:
            return None
        nonlocal key, signature, others
        found = failure_key(got.row)
        defined = got.case.kind == CaseKind.DEFINED
        # context_shrink dropped the consumer: the same verdict, compared further below
        across = consumer_changed(start.case, candidate) and found[0] == key[0]
        # an answer no reading gives, wrong alike on a defined input (slips) or on fewer undefined points
        alike = key[0] == Verdict.UNEXPLAINED and got.row["difference"] is not None \
            and got.row["difference"] == start.row["difference"]
        slips = alike and found[0] == Verdict.MISMATCH and defined
        narrows = alike and found[0] == Verdict.UNEXPLAINED \
            and set((found[3] or "").split(",")) < set((key[3] or "").split(","))
        # A failure that does not depend on what the spec says of the input (no kernel, a crash, a
        # hang), or a refusal with the same error class, may move from an undefined or invalid input
        # to a defined one, or to one with fewer undefined points: a stronger report (a missing
        # wrap kernel found on repeated axes that crop an empty axis is shown on a plain input)
        fewer = got.case.kind == CaseKind.AMBIGUOUS and key[2] in (CaseKind.AMBIGUOUS, CaseKind.MUST_REJECT) \
            and (key[2] == CaseKind.MUST_REJECT or set((found[3] or "").split(",")) < set((key[3] or "").split(",")))
        unjudged = found[:2] == key[:2] and key[0] in (*UNJUDGED, Verdict.WRONGLY_REJECTED) and (defined or fewer)
        # an invalid input answered with an output no reading gives, shed of its invalid parts
        # (simplify.valid_parts) and still answered wrong: the wrong value on a valid input is the report
        repaired = key[0] == Verdict.WRONGLY_ACCEPTED and best.row.get("difference") == Difference.NO_READING \
            and defined and found[0] == Verdict.MISMATCH
        # memory never written answered as values, that kills the runtime on a smaller input of the
        # same feature: one symptom (Shrunk.corrupts_memory), shown by the crash (OpenVINO's crop past
        # the axis answered 1.8e-43 at rank 4 and crashed at rank 1, and stayed at rank 4, audit VI)
        crashes = unwritten and found[0] == Verdict.CRASH and unwritten_feature(got.case) == unwritten_what
        if not (_kindless(found, 1) == _kindless(key, 1) or slips or narrows or across or unjudged or repaired
                or crashes):
            return None
        if twin_guard and isolated.twin_fails(got, placement):
            return None
        got.control = isolated.control(got, placement)
        found_signature = signature_of(got)
        if across:
            return got if same_across_consumers(start.row, got.row, signature, found_signature) else None
        if crashes or ((slips or narrows or repaired or (unjudged and found != key))
                       and found_signature[3] == signature[3]):  # another of the run's, maybe
            key, signature, others = found, found_signature, _apart(others, found_signature)
            return got
        return got if _kindless(found_signature, 2) == _kindless(signature, 2) and found_signature not in others \
            else None

    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for simplify in passes(best.case):  # a context case's own first (context_shrink)
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
    rank_one_form = rank_one(best.case)
    # tried whether or not the limit has run out: the form a bundle is reported in is no matter of time
    ranked = same_failure(rank_one_form, final=True) if rank_one_form is not None else None
    best = ranked or best
    seconds = time.monotonic() - began
    return Shrunk(start, best, isolated.tries - tries, seconds, seconds >= time_limit)


