"""Judge a runtime's outcome on a case against what the case's spec says of it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cases import AMBIGUOUS, DEFINED, MUST_REJECT, Case
from .dtypes import bit_equal, dtype_name, equal_elements, is_float_like
from .outcome import Outcome

PASS, MISMATCH = "pass", "mismatch"
WRONGLY_REJECTED, WRONGLY_ACCEPTED = "wrongly-rejected", "wrongly-accepted"
NOT_IMPLEMENTED, CRASH, TIMEOUT, AMBIGUOUS_VERDICT = "not-implemented", "crash", "timeout", "ambiguous"
# an ambiguous case answered with an output, or a refusal, that none of the spec's readings gives
UNEXPLAINED = "unexplained"
SKIPPED = "skipped"  # the adapter cannot express the case (the runtime's API lacks a way to feed it)
VERDICTS = (PASS, MISMATCH, WRONGLY_REJECTED, WRONGLY_ACCEPTED, NOT_IMPLEMENTED, CRASH, TIMEOUT, UNEXPLAINED,
            AMBIGUOUS_VERDICT, SKIPPED)
FAILURES = (MISMATCH, WRONGLY_REJECTED, WRONGLY_ACCEPTED, NOT_IMPLEMENTED, CRASH, TIMEOUT, UNEXPLAINED)


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
    return (f"values differ first at {where} ({_wrong_kind(flat_e, flat_g, differ)}): "
            f"{flat_g[i]!r} instead of {flat_e[i]!r}").replace("np.", "")


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
    return "the expected values misplaced" if _elements(g) <= _elements(expected) else "values the expected output lacks"


def _elements(a: np.ndarray) -> set:
    if a.dtype == object:
        return set(a.tolist())
    return set(map(bytes, np.ascontiguousarray(a).view(np.uint8).reshape(a.size, -1)))


def judge(case: Case, outcome: Outcome, status: str = "ok") -> Verdict:
    """``status`` is the worker's: "ok", "crash" or "timeout"."""
    if status in (CRASH, TIMEOUT):
        return Verdict(status, outcome.error)
    if outcome.skipped:
        return Verdict(SKIPPED, outcome.skipped)
    rejected = outcome.output is None
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
    if matched:
        return Verdict(AMBIGUOUS_VERDICT, f"{case.reason}: matched {' | '.join(matched)}", matched)
    other = "rejected it, which no reading does" if rejected else "returned an output no reading gives"
    readings = "; ".join(f"{name} {'rejects it' if out is None else 'gives ' + _shown(out)}"
                         + ("" if rejected or out is None else f" ({_difference(out, outcome.output)})")
                         for name, out in case.interpretations.items())
    return Verdict(UNEXPLAINED, f"{case.reason}: {other}: {readings}", [])


def _shown(out: np.ndarray) -> str:
    """A reading's output, briefly: its shape, and its values while they are few."""
    values = out.reshape(-1)[:8].tolist()
    return f"shape {list(out.shape)} {values}{' ...' if out.size > 8 else ''}"
