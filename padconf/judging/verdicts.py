"""Judge a runtime's outcome on a case against what the case's spec says of it."""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import as_if_allowed
from padconf.cases.context import snap
from padconf.core.dtypes import bit_equal, dtype_name, encode_array, equal_elements, is_float_like
from padconf.core.errors import PadconfError, SpecError
from padconf.core.vocabulary import Placement, Status, Word
from padconf.execution.worker import impossible_output
from padconf.spec.loader import get_spec


class Verdict(Word):
    """What a runtime's outcome on a case is, judged by the case's spec (a row's "verdict")."""

    PASS = "pass"
    MISMATCH = "mismatch"
    WRONGLY_REJECTED = "wrongly-rejected"
    WRONGLY_ACCEPTED = "wrongly-accepted"
    NOT_IMPLEMENTED = "not-implemented"
    CRASH = "crash"
    TIMEOUT = "timeout"
    # an ambiguous case answered with an output, or a refusal, that none of the spec's readings gives
    UNEXPLAINED = "unexplained"
    AMBIGUOUS = "ambiguous"
    SKIPPED = "skipped"  # the adapter cannot express the case (the runtime's API lacks a way to feed it)
    # Nothing can be concluded, for the reason in the detail: a refusal of a must-reject case whose
    # repaired twin the runtime refuses too, a case too large for the reference to check, or an
    # answer that was padconf's own fault (Outcome.fault).
    INCONCLUSIVE = "inconclusive"


class Difference(Word):
    """What a wrong output differs in (a row's "difference"). NAN_PAYLOAD_OR_ZERO_SIGN: every
    element is the expected number, but a NaN's payload or a zero's sign changed: a low-severity
    class. NARROWED: every element is the expected one passed through the 32-bit type of its
    kind (float64 rounded or saturated to float32, int64 wrapped or saturated to int32): computed
    in a narrower type, which a runtime may document as its device's limit (padconf/judging/upstream.yaml)."""

    DTYPE = "dtype"
    SHAPE = "shape"
    VALUES = "values"
    NAN_PAYLOAD_OR_ZERO_SIGN = "nan-payload-or-zero-sign"
    NARROWED = "narrowed-to-32-bit"
    THROUGH_FLOAT32 = "integer-through-float32"
    # an accepted must-reject case answered with what no reading gives, the broken rule set aside
    # (classify.as_if_allowed): not lenient, silent garbage
    NO_READING = "no-reading"


VERDICTS = tuple(Verdict)
OWN_FAULT = "padconf's own fault, not the runtime's answer"  # an inconclusive ruling's words for Outcome.fault
FAILURES = (Verdict.MISMATCH, Verdict.WRONGLY_REJECTED, Verdict.WRONGLY_ACCEPTED, Verdict.NOT_IMPLEMENTED,
            Verdict.CRASH, Verdict.TIMEOUT, Verdict.UNEXPLAINED)
NAN_PAYLOAD_OR_ZERO_SIGN = Difference.NAN_PAYLOAD_OR_ZERO_SIGN


@dataclass
class Ruling:
    """A verdict on one outcome, with what a report shows of why."""

    verdict: Verdict
    detail: str | None = None  # what differs, or which interpretation the runtime matched
    matched: list[str] | None = None  # ambiguous cases: the interpretations the outcome equals
    difference: Difference | None = None  # a mismatch


def _mismatch(expected, got) -> Ruling | None:
    """The mismatch between ``expected`` and ``got`` (a defined case's output), None if none:
    bit for bit, NaN payloads included, so that a changed payload or zero sign is reported, as
    a class of its own, not taken for a wrong value."""
    if got.dtype != expected.dtype:
        return Ruling(Verdict.MISMATCH, f"dtype {got.dtype} instead of {expected.dtype}", difference=Difference.DTYPE)
    if got.shape != expected.shape:
        return Ruling(Verdict.MISMATCH, f"shape {list(got.shape)} instead of {list(expected.shape)}",
                      difference=Difference.SHAPE)
    differ = ~equal_elements(expected, got, "exact")
    if not differ.any():
        return None
    wrong = differ & ~equal_elements(expected, got, "numbers")
    i = int(np.flatnonzero(wrong if wrong.any() else differ)[0])
    where = [int(j) for j in np.unravel_index(i, expected.shape)]
    shown = [repr(a.reshape(-1)[i]) if not _is_nan(a.reshape(-1)[i]) else _nan_bits(a.reshape(-1)[i])
             for a in (got, expected)]
    if not wrong.any():
        return Ruling(Verdict.MISMATCH, f"only NaN payloads or signs of zero differ first at {where}: {shown[0]} "
                                        f"instead of {shown[1]}".replace("np.", ""),
                      difference=Difference.NAN_PAYLOAD_OR_ZERO_SIGN)
    kind = _wrong_kind(expected.reshape(-1), got.reshape(-1), wrong.reshape(-1))
    narrowed = _narrowed(expected, got)
    floated = narrowed is None and _through_float32(expected, got)
    how = (", every value as computed in " + narrowed if narrowed else
           ", every value as passed through float32" if floated else "")
    return Ruling(Verdict.MISMATCH, f"values differ first at {where} ({kind}{how}): "
                                    f"{shown[0]} instead of {shown[1]}".replace("np.", ""),
                  difference=Difference.NARROWED if narrowed else
                  Difference.THROUGH_FLOAT32 if floated else Difference.VALUES)


def _through_float32(expected: np.ndarray, got: np.ndarray) -> bool:
    """Whether the integer output ``got`` is ``expected`` passed through float32 element for
    element: rounded to float32, then wrapped to the dtype's bits or to 32 bits, or saturated to
    32 bits (a 64-bit integer computed as int32 on the way)."""
    if expected.dtype != got.dtype or expected.dtype.kind not in "iu" or expected.dtype.itemsize < 4:
        return False  # float32 holds every 8- and 16-bit integer exactly
    wide = expected.astype(np.float32).astype(np.float64)
    signed = expected.dtype.kind == "i"
    info = np.iinfo(np.int32 if signed else np.uint32)
    whole = np.where(wide >= 2.0 ** 63, wide - 2.0 ** 64, wide).astype(np.int64)  # its low 64 bits
    # wrapped to 32 bits, or to the dtype's own; or saturated to 32 bits
    candidates: list[np.ndarray] = [whole.astype(np.int32 if signed else np.uint32), whole,
                                    np.clip(wide, info.min, info.max).astype(np.int64)]
    return any((c.astype(expected.dtype) == got).all() for c in candidates)


def _narrowed(expected: np.ndarray, got: np.ndarray) -> str | None:
    """The narrower type (float32 for float64, int32 for int64) whose conversion of ``expected``
    ``got`` equals element for element, or None: rounded, or saturated (infinities and values
    beyond float32's range to its largest value, as OpenVINO's CPU plugin converts every f64
    tensor: through Relu or Neg alike), for int64 its high bits dropped or saturated."""
    if expected.shape != got.shape:
        return None
    if expected.dtype == np.float64 and got.dtype == np.float64:
        biggest = float(np.finfo(np.float32).max)
        with np.errstate(over="ignore", invalid="ignore"):
            rounded = expected.astype(np.float32).astype(np.float64)
            saturated = np.clip(expected, -biggest, biggest).astype(np.float32).astype(np.float64)
        return "float32" if any(equal_elements(narrow, got, "numbers").all() for narrow in (rounded, saturated)) \
            else None
    if expected.dtype == np.int64 and got.dtype == np.int64:  # the high bits dropped, or saturated
        info = np.iinfo(np.int32)
        wrapped, saturated = expected.astype(np.int32).astype(np.int64), np.clip(expected, info.min, info.max)
        return "int32" if (wrapped == got).all() or (saturated == got).all() else None
    return None


def _difference(expected: np.ndarray, got: np.ndarray) -> str:
    """How ``got`` differs from ``expected``, in words."""
    mismatch = _mismatch(expected, got)
    return mismatch.detail or "" if mismatch else "equal"


def _wrong_kind(expected: np.ndarray, got: np.ndarray, differ: np.ndarray) -> str:
    """What kind of wrong the differing values are, part of a failure's class (padconf.judging.failure):
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
    return ("the expected values misplaced" if element_bits(g) <= element_bits(expected)
            else "values the expected output lacks")


def element_bits(a: np.ndarray) -> set:
    """The distinct elements of ``a``, each as its bytes (strings as themselves)."""
    if a.dtype == object:
        return set(a.reshape(-1).tolist())
    if not a.size:
        return set()
    # unique first: a drawn array holds at most a few dozen values however large it is
    return set(map(bytes, np.unique(np.ascontiguousarray(a).reshape(-1).view(np.dtype((np.void, a.itemsize))))))


def _is_nan(x) -> bool:
    try:
        with np.errstate(invalid="ignore"):  # casting a signalling NaN (bfloat16 0x7f81) warns
            return bool(np.isnan(np.complex128(x)))
    except (TypeError, ValueError):
        return False


def _nan_bits(x) -> str:
    x = np.asarray(x)
    return f"nan (0x{x.view(np.dtype(f'u{x.itemsize}')).item():x})" if x.dtype.kind != "c" else repr(x.item())


def judge(case: Case, outcome: Outcome, status: str = Status.OK) -> Ruling:
    """``status`` is the worker's (vocabulary.Status). An outcome that is padconf's own fault
    (Outcome.fault: padconf's adapter code failed, or the worker's imports broke) says nothing
    of the runtime: inconclusive, whatever the case, so that nothing triages it."""
    if outcome.fault:
        return Ruling(Verdict.INCONCLUSIVE, f"{OWN_FAULT}: {outcome.fault}")
    if status in (Verdict.CRASH, Verdict.TIMEOUT):  # the worker's word for it is the verdict's
        return Ruling(Verdict(status), outcome.error)
    if outcome.skipped:
        return Ruling(Verdict.SKIPPED, outcome.skipped)
    rejected = outcome.output is None
    if case.kind == CaseKind.TOO_LARGE:
        return Ruling(Verdict.INCONCLUSIVE, case.reason)
    if case.kind == CaseKind.MUST_REJECT:
        if rejected:
            return Ruling(Verdict.PASS)
        found = _acceptance(case, np.asarray(outcome.output))
        said = {Difference.NO_READING: "; and returned an output no reading gives, with the rule set aside",
                Difference.NARROWED: "; and returned a reading's output as computed in a 32-bit type"}
        return Ruling(Verdict.WRONGLY_ACCEPTED, f"accepted although: {case.reason}{said[found] if found else ''}", None,
                      found)
    if outcome.not_implemented:
        return Ruling(Verdict.NOT_IMPLEMENTED, outcome.error)
    if case.kind == CaseKind.DEFINED:
        if rejected:
            return Ruling(Verdict.WRONGLY_REJECTED, outcome.error)
        expected = case.expected
        assert expected is not None  # a defined case's
        return _mismatch(expected, snap(case.context, expected, np.asarray(outcome.output))) or Ruling(Verdict.PASS)
    assert case.kind == CaseKind.AMBIGUOUS
    output = outcome.output
    matched = [name for name, out in case.interpretations.items()
               if (out is None and rejected) or (out is not None and output is not None
                   and bit_equal(out, snap(case.context, out, np.asarray(output))))]
    if matched:
        return Ruling(Verdict.AMBIGUOUS, f"{case.reason}: matched {' | '.join(matched)}", matched)
    other = "rejected it, which no reading does" if rejected else "returned an output no reading gives"
    narrowed = None if output is None else next(
        (n for out in case.interpretations.values() if out is not None and (n := _narrowed(out, output))), None)
    if narrowed:
        other += f" (a reading's output as computed in {narrowed})"
    if case.any_answer_conforms:  # the document: "Behavior is undefined"
        return Ruling(Verdict.AMBIGUOUS, f"{case.reason}: {other}, which conforms: the document leaves the "
                                         "behaviour undefined", [])
    # what the output differs in from every reading's output alike (only a zero's sign, its shape ...)
    kinds = set() if output is None else {m.difference for out in case.interpretations.values() if out is not None
                                          and (m := _mismatch(out, np.asarray(output))) is not None}
    readings = "; ".join(f"{name} {'rejects it' if out is None else 'gives ' + _shown(out)}"
                         + ("" if output is None or out is None else f" ({_difference(out, output)})")
                         for name, out in case.interpretations.items())
    return Ruling(Verdict.UNEXPLAINED, f"{case.reason}: {other}: {readings}", [],
                  Difference.NARROWED if narrowed else kinds.pop() if len(kinds) == 1 else None)


def judged(case: Case, outcome: Outcome, status: Status = Status.OK) -> tuple[Ruling, bool]:
    """``judge``'s ruling, and whether the output is one no reading of the spec gives (the worker
    that returned it is retired: execution.worker.impossible_output), told from the ruling where
    it settles it, so that a conforming output is compared once: a defined one-node case that
    passed equals its expected output bit for bit, an ambiguous one that matched equals that
    reading's output. Any other output (a failure, a context's tolerance) is asked of
    impossible_output itself."""
    ruling = judge(case, outcome, status)
    if status != Status.OK or outcome.output is None:
        return ruling, False
    if case.context is None and (ruling.verdict == Verdict.PASS and case.kind == CaseKind.DEFINED
                                 or ruling.verdict == Verdict.AMBIGUOUS and ruling.matched):
        return ruling, False
    return ruling, impossible_output(case, outcome.output)


_ALLOWED: dict[str, list[np.ndarray] | None] = {}  # case id -> as_if_allowed, for the cases judged last


def _acceptance(case: Case, output: np.ndarray) -> Difference | None:
    """What ``output``, an accepted must-reject case's, is against classify.as_if_allowed's: None
    where it is one of them, or there is none to compare with (a rule on the model's structure,
    a spec that cannot be read here): a lenience; NARROWED where it is one computed in a 32-bit
    type; else NO_READING."""
    if case.id not in _ALLOWED:
        if len(_ALLOWED) >= 256:
            _ALLOWED.clear()
        try:
            _ALLOWED[case.id] = as_if_allowed(case, get_spec(case.spec))
        except (SpecError, PadconfError, ValueError, TypeError, OverflowError):
            _ALLOWED[case.id] = None
    allowed = _ALLOWED[case.id]
    if not allowed or any(bit_equal(out, output) for out in allowed):
        return None
    return Difference.NARROWED if any(_narrowed(out, output) for out in allowed) else Difference.NO_READING


def _shown(out: np.ndarray) -> str:
    """A reading's output, briefly: its shape, and its values while they are few."""
    values = out.reshape(-1)[:8].tolist()
    return f"shape {list(out.shape)} {values}{' ...' if out.size > 8 else ''}"


# a control with one of these verdicts did not compute: the runtime lacks the control's op or
# kernel (onnxruntime has no LeakyRelu at opset 1), the adapter cannot express it, or padconf
# could not conclude; it proves nothing either way ("no control"), never "the control fails too"
NO_CONTROL = (Verdict.NOT_IMPLEMENTED, Verdict.SKIPPED, Verdict.INCONCLUSIVE)


ALIKE_ONLY = ("Concat", "LeakyRelu")  # the controls through other ops than the Pad's own data path
INDEX_VALUES = ("pads values", "axes values")  # Case.index_controls' operands


# a control's verdicts about its output, which it records to be judged again when read
CONTROL_OUTPUT_VERDICTS = (Verdict.MISMATCH, Verdict.WRONGLY_ACCEPTED, Verdict.UNEXPLAINED)
MAX_CONTROL_EVIDENCE = 1 << 20  # characters of a control's encoded output; a larger one is left out


def control_evidence(verdict: str, output) -> dict | None:
    """A control's output where its verdict is about it, encoded (None where it is too large:
    a control that cannot be judged again is not attached when its run is read back)."""
    if output is None or verdict not in CONTROL_OUTPUT_VERDICTS:
        return None
    try:
        encoded = encode_array(output, dtype_name(np.asarray(output).dtype))
    except PadconfError:
        return None
    return encoded if len(json.dumps(encoded)) <= MAX_CONTROL_EVIDENCE else None


def control_ran(control_verdict: str) -> bool:
    """The control ran and computed (its verdict is none of NO_CONTROL)."""
    return control_verdict not in NO_CONTROL


def control_fails(control_verdict: str) -> bool:
    """The failure is not Pad-specific: its control (the same data through Identity,
    padconf.cases.case.Case.control) ran and fails too, in whatever way: where Identity already mishandles the
    data (OpenVINO's ONNX frontend reads an empty initializer as a scalar: a wrong shape through
    Identity, a refusal through Pad), nothing is left to blame on Pad. A control the runtime did
    not run (NO_CONTROL) fails nothing."""
    return control_verdict in FAILURES and control_ran(control_verdict)


def accepted(outcome: Outcome, status: str = Status.OK) -> bool:
    """The runtime ran the case and returned an output."""
    return status == Status.OK and not outcome.skipped and not outcome.not_implemented and outcome.output is not None


def confirm_refusal(ruling: Ruling, twin, twin_outcome: Outcome | None = None, twin_status: str = Status.OK) -> Ruling:
    """A refusal of a must-reject case (``ruling`` a pass) counts only if the runtime, in the same
    placement, accepts its repaired twin (padconf.cases.classify.repaired_twin: the case or why there
    is none); else the verdict is inconclusive, saying why."""
    if ruling.verdict != Verdict.PASS:
        return ruling
    if isinstance(twin, str):
        return Ruling(Verdict.INCONCLUSIVE, f"refused, and no repaired twin to confirm why: {twin}")
    assert twin_outcome is not None  # a twin that ran has its outcome
    if twin_outcome.fault:
        return Ruling(Verdict.INCONCLUSIVE, f"refused, and its repaired twin {twin.id} could not be run: "
                                            f"{OWN_FAULT}: {twin_outcome.fault}")
    if accepted(twin_outcome, twin_status):
        return ruling
    why = twin_status if twin_status != Status.OK else twin_outcome.skipped or twin_outcome.error or "no output"
    return Ruling(Verdict.INCONCLUSIVE, f"refused, but it refuses the repaired twin {twin.id} too ({why}): "
                                        f"the refusal may have another cause")


def control_fails_too(op: str, operand: str, control_verdict: str, verdict: str | None) -> bool:
    """Whether a control of ``op`` on ``operand`` answering ``control_verdict`` fails too beside
    a failure of ``verdict`` (None: not given), making that failure not Pad-specific; the one
    rule, which control_record writes and rederive_control holds controls.jsonl to."""
    # a control through other ops (the values' Concat, the attribute's LeakyRelu) fails too only
    # as the Pad did: another op's own flaw (a NaN's sign through LeakyRelu beside a refused Pad) excuses nothing
    # but the pads' or axes' own values given back wrong change what the Pad answers, however that
    # shows (a refusal of their Concat is still that op's own: it fails too only as the Pad did);
    # a crash or hang on them is memory-unsafe, a bug of its own that no wrong value excuses
    return control_fails(control_verdict) and (
        op not in ALIKE_ONLY or verdict in (None, control_verdict)
        or (operand in INDEX_VALUES and control_verdict == Verdict.MISMATCH
            and verdict not in (Verdict.CRASH, Verdict.TIMEOUT)))


def control_record(case: Case, placement: Placement, run, verdict: str | None = None,
                   controls: list[tuple[str, Case, Placement]] | None = None) -> dict:
    """The control experiments of ``case``, failing in ``placement`` (Case.controls), each run by
    ``run(control, placement) -> (outcome, status)`` until one fails: the record of the one that
    fails, else the data's. A failure whose control fails too is not Pad-specific. The values'
    and the attribute's controls (other ops, with flaws of their own) fail too only with the
    failure's own ``verdict``, where that is given. ``controls``: those to run instead of
    Case.controls' (minimize's, padconf.minimize.probes.inference.controls_seen)."""
    records = []
    for operand, control, where in case.controls(placement) if controls is None else controls:
        outcome, status = run(control, where)
        v = judge(control, outcome, status)
        fails_too = control_fails_too(control.op, operand, v.verdict, verdict)
        records.append({"verdict": v.verdict, "fails_too": fails_too, "difference": v.difference,
                        "detail": v.detail if v.detail != outcome.error else None, "error": outcome.error,
                        "case_id": case.id, "placement": where, "operand": operand,
                        "output": control_evidence(v.verdict, outcome.output)})
        if records[-1]["fails_too"]:
            return records[-1]
    return records[0]
