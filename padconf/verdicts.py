"""Judge a runtime's outcome on a case against what the case's spec says of it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cases import AMBIGUOUS, DEFINED, MUST_REJECT, TOO_LARGE, Case
from .dtypes import bit_equal, equal_elements
from .outcome import Outcome

PASS, MISMATCH = "pass", "mismatch"
WRONGLY_REJECTED, WRONGLY_ACCEPTED = "wrongly-rejected", "wrongly-accepted"
NOT_IMPLEMENTED, CRASH, TIMEOUT, AMBIGUOUS_VERDICT = "not-implemented", "crash", "timeout", "ambiguous"
SKIPPED = "skipped"  # the adapter cannot express the case (the runtime's API lacks a way to feed it)
# Nothing can be concluded, for the reason in the detail: a refusal of a must-reject case whose
# repaired twin the runtime refuses too, or a case too large for the reference to check.
INCONCLUSIVE = "inconclusive"
VERDICTS = (PASS, MISMATCH, WRONGLY_REJECTED, WRONGLY_ACCEPTED, NOT_IMPLEMENTED, CRASH, TIMEOUT, AMBIGUOUS_VERDICT,
            SKIPPED, INCONCLUSIVE)
FAILURES = (MISMATCH, WRONGLY_REJECTED, WRONGLY_ACCEPTED, NOT_IMPLEMENTED, CRASH, TIMEOUT)


@dataclass
class Verdict:
    verdict: str
    detail: str | None = None  # what differs, or which interpretation the runtime matched
    matched: list[str] | None = None  # ambiguous cases: the interpretations the outcome equals


def _difference(expected, got) -> str:
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} instead of {expected.dtype}"
    if got.shape != expected.shape:
        return f"shape {list(got.shape)} instead of {list(expected.shape)}"
    differ = np.flatnonzero(~equal_elements(expected, got))
    if not differ.size:
        return "values differ"
    i = int(differ[0])
    where = [int(j) for j in np.unravel_index(i, expected.shape)]
    flat_e, flat_g = expected.reshape(-1), got.reshape(-1)
    return f"values differ first at {where}: {flat_g[i]!r} instead of {flat_e[i]!r}".replace("np.", "")


def judge(case: Case, outcome: Outcome, status: str = "ok") -> Verdict:
    """``status`` is the worker's: "ok", "crash" or "timeout"."""
    if status in (CRASH, TIMEOUT):
        return Verdict(status, outcome.error)
    if outcome.skipped:
        return Verdict(SKIPPED, outcome.skipped)
    rejected = outcome.output is None
    if case.kind == TOO_LARGE:
        return Verdict(INCONCLUSIVE, case.reason)
    if case.kind == MUST_REJECT:
        return Verdict(PASS) if rejected else Verdict(WRONGLY_ACCEPTED, f"accepted although: {case.reason}")
    if outcome.not_implemented:
        return Verdict(NOT_IMPLEMENTED, outcome.error)
    if case.kind == DEFINED:
        if rejected:
            return Verdict(WRONGLY_REJECTED, outcome.error)
        if bit_equal(case.expected, outcome.output):
            return Verdict(PASS)
        return Verdict(MISMATCH, _difference(case.expected, outcome.output))
    assert case.kind == AMBIGUOUS
    matched = [name for name, out in case.interpretations.items()
               if (out is None and rejected) or (out is not None and not rejected and bit_equal(out, outcome.output))]
    other = "rejected it, which no interpretation does" if rejected else "returned an output no interpretation gives"
    if case.any_answer_conforms and not matched:  # the document: "Behavior is undefined"
        other += ", which conforms: the document leaves the behaviour undefined"
    detail = f"{case.reason}: " + (f"matched {' | '.join(matched)}" if matched else other)
    return Verdict(AMBIGUOUS_VERDICT, detail, matched)


def accepted(outcome: Outcome, status: str = "ok") -> bool:
    """The runtime ran the case and returned an output."""
    return status == "ok" and not outcome.skipped and not outcome.not_implemented and outcome.output is not None


def confirm_refusal(verdict: Verdict, twin, twin_outcome: Outcome | None = None, twin_status: str = "ok") -> Verdict:
    """A refusal of a must-reject case (``verdict`` pass) counts only if the runtime, in the same
    placement, accepts its repaired twin (padconf.classify.repaired_twin: the case or why there
    is none); else the verdict is inconclusive, saying why."""
    if verdict.verdict != PASS:
        return verdict
    if isinstance(twin, str):
        return Verdict(INCONCLUSIVE, f"refused, and no repaired twin to confirm why: {twin}")
    if accepted(twin_outcome, twin_status):
        return verdict
    why = twin_status if twin_status != "ok" else twin_outcome.skipped or twin_outcome.error or "no output"
    return Verdict(INCONCLUSIVE, f"refused, but it refuses the repaired twin {twin.id} too ({why}): "
                                 f"the refusal may have another cause")
