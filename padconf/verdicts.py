"""Judge a runtime's outcome on a case against what the case's spec says of it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cases import AMBIGUOUS, DEFINED, MUST_REJECT, TOO_LARGE, Case
from .dtypes import bit_equal, dtype_name, equal_elements, is_float_like
from .outcome import Outcome

PASS, MISMATCH = "pass", "mismatch"
WRONGLY_REJECTED, WRONGLY_ACCEPTED = "wrongly-rejected", "wrongly-accepted"
NOT_IMPLEMENTED, CRASH, TIMEOUT, AMBIGUOUS_VERDICT = "not-implemented", "crash", "timeout", "ambiguous"
# an ambiguous case answered with an output, or a refusal, that none of the spec's readings gives
UNEXPLAINED = "unexplained"
SKIPPED = "skipped"  # the adapter cannot express the case (the runtime's API lacks a way to feed it)
# Nothing can be concluded, for the reason in the detail: a refusal of a must-reject case whose
# repaired twin the runtime refuses too, or a case too large for the reference to check.
INCONCLUSIVE = "inconclusive"
VERDICTS = (PASS, MISMATCH, WRONGLY_REJECTED, WRONGLY_ACCEPTED, NOT_IMPLEMENTED, CRASH, TIMEOUT, UNEXPLAINED,
            AMBIGUOUS_VERDICT, SKIPPED, INCONCLUSIVE)
FAILURES = (MISMATCH, WRONGLY_REJECTED, WRONGLY_ACCEPTED, NOT_IMPLEMENTED, CRASH, TIMEOUT, UNEXPLAINED)
# What a mismatch differs in (a row's "difference"). NAN_PAYLOAD_OR_ZERO_SIGN: every element is
# the expected number, but a NaN's payload or a zero's sign changed: a low-severity class.
NAN_PAYLOAD_OR_ZERO_SIGN = "nan-payload-or-zero-sign"
DIFFERENCES = ("dtype", "shape", "values", NAN_PAYLOAD_OR_ZERO_SIGN)


@dataclass
class Verdict:
    verdict: str
    detail: str | None = None  # what differs, or which interpretation the runtime matched
    matched: list[str] | None = None  # ambiguous cases: the interpretations the outcome equals
    difference: str | None = None  # a mismatch: one of DIFFERENCES


def _mismatch(expected, got) -> Verdict | None:
    """The mismatch between ``expected`` and ``got`` (a defined case's output), None if none:
    bit for bit, NaN payloads included, so that a changed payload or zero sign is reported, as
    a class of its own, not taken for a wrong value."""
    if got.dtype != expected.dtype:
        return Verdict(MISMATCH, f"dtype {got.dtype} instead of {expected.dtype}", difference="dtype")
    if got.shape != expected.shape:
        return Verdict(MISMATCH, f"shape {list(got.shape)} instead of {list(expected.shape)}", difference="shape")
    differ = ~equal_elements(expected, got, "exact")
    if not differ.any():
        return None
    wrong = differ & ~equal_elements(expected, got, "numbers")
    i = int(np.flatnonzero(wrong if wrong.any() else differ)[0])
    where = [int(j) for j in np.unravel_index(i, expected.shape)]
    shown = [repr(a.reshape(-1)[i]) if not _is_nan(a.reshape(-1)[i]) else _nan_bits(a.reshape(-1)[i])
             for a in (got, expected)]
    if not wrong.any():
        return Verdict(MISMATCH, f"only NaN payloads or signs of zero differ first at {where}: {shown[0]} instead of "
                                 f"{shown[1]}".replace("np.", ""), difference=NAN_PAYLOAD_OR_ZERO_SIGN)
    kind = _wrong_kind(expected.reshape(-1), got.reshape(-1), wrong.reshape(-1))
    return Verdict(MISMATCH, f"values differ first at {where} ({kind}): {shown[0]} instead of {shown[1]}"
                   .replace("np.", ""), difference="values")


def _difference(expected: np.ndarray, got: np.ndarray) -> str:
    """How ``got`` differs from ``expected``, in words."""
    mismatch = _mismatch(expected, got)
    return mismatch.detail or "" if mismatch else "equal"


def _wrong_kind(expected: np.ndarray, got: np.ndarray, differ: np.ndarray) -> str:
    """What kind of wrong the differing values are, part of a failure's class (padconf.signature):
    NaN for numbers or the reverse, the right values in the wrong places, or values the
    expected output does not hold at all (garbage, or arithmetic gone wrong)."""
    e, g = expected[differ], got[differ]
    if is_float_like(dtype_name(expected.dtype)) and expected.dtype.kind != "c":
        with np.errstate(invalid="ignore"):
            e_nan, g_nan = np.isnan(e.astype(np.float64)), np.isnan(g.astype(np.float64))
        if g_nan.any() and not e_nan.any():
            return "NaN where numbers belong"
        if e_nan.any() and not g_nan.any():
            return "numbers where NaN belongs"
    return ("the expected values misplaced" if _elements(g) <= _elements(expected)
            else "values the expected output lacks")


def _elements(a: np.ndarray) -> set:
    if a.dtype == object:
        return set(a.tolist())
    return set(map(bytes, np.ascontiguousarray(a).view(np.uint8).reshape(a.size, -1)))


def _is_nan(x) -> bool:
    try:
        return bool(np.isnan(np.complex128(x)))
    except (TypeError, ValueError):
        return False


def _nan_bits(x) -> str:
    x = np.asarray(x)
    return f"nan (0x{x.view(np.dtype(f'u{x.itemsize}')).item():x})" if x.dtype.kind != "c" else repr(x.item())


def judge(case: Case, outcome: Outcome, status: str = "ok") -> Verdict:
    """``status`` is the worker's: "ok", "crash" or "timeout"."""
    if status in (CRASH, TIMEOUT):  # the verdict's word, not the worker's Status member (rows go to YAML too)
        return Verdict(CRASH if status == CRASH else TIMEOUT, outcome.error)
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
        return _mismatch(case.expected, np.asarray(outcome.output)) or Verdict(PASS)
    assert case.kind == AMBIGUOUS
    output = outcome.output
    matched = [name for name, out in case.interpretations.items()
               if (out is None and rejected) or (out is not None and output is not None and bit_equal(out, output))]
    if matched:
        return Verdict(AMBIGUOUS_VERDICT, f"{case.reason}: matched {' | '.join(matched)}", matched)
    other = "rejected it, which no reading does" if rejected else "returned an output no reading gives"
    if case.any_answer_conforms:  # the document: "Behavior is undefined"
        return Verdict(AMBIGUOUS_VERDICT, f"{case.reason}: {other}, which conforms: the document leaves the "
                                          "behaviour undefined", [])
    readings = "; ".join(f"{name} {'rejects it' if out is None else 'gives ' + _shown(out)}"
                         + ("" if output is None or out is None else f" ({_difference(out, output)})")
                         for name, out in case.interpretations.items())
    return Verdict(UNEXPLAINED, f"{case.reason}: {other}: {readings}", [])


def _shown(out: np.ndarray) -> str:
    """A reading's output, briefly: its shape, and its values while they are few."""
    values = out.reshape(-1)[:8].tolist()
    return f"shape {list(out.shape)} {values}{' ...' if out.size > 8 else ''}"


# A failure and its control (the same data through Identity, padconf.cases.Case.control) fail
# the same way when the control's verdict is in the failure's verdict's set here.
_SAME_WAY = {MISMATCH: {MISMATCH}, WRONGLY_REJECTED: {WRONGLY_REJECTED, NOT_IMPLEMENTED},
             NOT_IMPLEMENTED: {WRONGLY_REJECTED, NOT_IMPLEMENTED}, CRASH: {CRASH}, TIMEOUT: {TIMEOUT}}


def control_fails_alike(verdict: str, control_verdict: str) -> bool:
    """The failure is not Pad-specific: its control fails the same way."""
    return control_verdict in _SAME_WAY.get(verdict, ())


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
    assert twin_outcome is not None  # a twin that ran has its outcome
    if accepted(twin_outcome, twin_status):
        return verdict
    why = twin_status if twin_status != "ok" else twin_outcome.skipped or twin_outcome.error or "no output"
    return Verdict(INCONCLUSIVE, f"refused, but it refuses the repaired twin {twin.id} too ({why}): "
                                 f"the refusal may have another cause")
