"""What padconf minimize asks of a minimized failure besides its size, each a run or two more:
the root cause two bundles share (root_cause), whether a case folded is refused where at run
time it gives an empty tensor, whether a sub-byte dtype's packing is to blame, and whether the
bug is onnx's schema's or the operation the runtime lowers Pad to (Adapter.schema_checked,
Adapter.lowered_to)."""
from __future__ import annotations

import numpy as np
import onnx

from padconf.adapters import adapter_class, split_variant, unknown_runtime
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.onnx_model import build_model
from padconf.core.dtypes import SUB_BYTE_WIDER, bit_equal, numpy_dtype
from padconf.core.errors import PadconfError
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import Worker
from padconf.judging.failure import bug_class, failure_class
from padconf.judging.outcome import Outcome
from padconf.judging.triage import PAD_BUGS, Triage, triage
from padconf.judging.verdicts import FAILURES, Difference, Verdict, element_bits
from padconf.minimize.bundle_title import NEGATIVE_SIZE, RANK_0, feature, generic
from padconf.minimize.shrink import Attempt, IsolatedRunner, Shrunk, signature_of
from padconf.run.results import result_row

_MODE_RULES = ("modes", "mirror_beyond_dim")  # the rules whose check depends on the mode
CRASH_TRIES = 3  # runs of a crash's counterpart, each in a fresh process


def root_cause(shrunk: Shrunk, placement: Placement) -> tuple:
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
    its byte-wide copy does not show (packing), computed the same way (folded, or run):
    OpenVINO's CPU kernel packs uint2 and float4e2m1 wrong, whatever the pads. A failure that is
    not Pad-specific (its control fails too) is one with every other whose control fails alike
    (the same operand, verdict, kind of difference and error class, folded or not, and dtype but
    for a 64-bit type computed in 32 bits; for a check the control misses too, the rule, not the
    dtype): the bug is on the path Pad shares with the control."""
    case, row = shrunk.final.case, shrunk.final.row
    verdict = row["verdict"]
    kind: str | None = row["kind"]
    error_class, reason = bug_class(row, adapter_class(row["runtime"]).type_names)
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
    control = shrunk.final.control or {}
    if found == Triage.NOT_PAD_SPECIFIC and control.get("fails_too"):  # the path Pad shares with its control:
        # one bug however the Pad case shows it (OpenVINO's frontend folds an empty constant to a scalar)
        # a check missing there too is about its rule, whatever the dtype (onnx's evaluator checks
        # no type list, Identity's neither); narrowed to 32 bits is one bug whatever the 64-bit type
        unchecked = control["verdict"] == Verdict.WRONGLY_ACCEPTED
        narrowed = control.get("difference") == Difference.NARROWED
        return ("not Pad-specific", control.get("operand"), control["verdict"], control.get("difference"),
                bug_class({**control, "kind": None}, adapter_class(row["runtime"]).type_names),
                placement == Placement.FOLDED, None if narrowed or unchecked else case.dtype,
                case.rule if unchecked else None)
    if found in PAD_BUGS and shrunk.refused_when_folded and what != NEGATIVE_SIZE:  # a check the run-time
        return "a Pad bug", "an empty tensor where folded is refused"  # path skips, whatever it checks
    if found in PAD_BUGS and shrunk.packing:  # right on the same values a byte wide: its packing, whatever
        return "a Pad bug", "sub-byte data", placement == Placement.FOLDED  # the sub-byte type and input
    if found in PAD_BUGS and what is not None and not generic(what):  # one bug, whatever it shows as
        # rank 0 says it all but for a refusal, whose error text tells another cause ("int32 axes")
        return "a Pad bug", RANK_0 if case.data.ndim == 0 and verdict != Verdict.WRONGLY_REJECTED else what
    return (verdict, error_class, row.get("difference"), kind, reason, found, mode,
            what, placement == Placement.FOLDED, case.dtype if verdict == Verdict.NOT_IMPLEMENTED else None)


def refused_when_folded(isolated: IsolatedRunner, attempt: Attempt, placement: Placement,
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


def packing(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> str | None:
    """Where ``attempt`` fails on data of a sub-byte dtype, and its copy holding the same values
    in the byte-wide dtype (dtypes.SUB_BYTE_WIDER), a case the spec accepts, passes on the same
    runtime and placement: that dtype (the failure is about how the runtime packs the narrow
    one). Else None."""
    case = attempt.case
    wider = SUB_BYTE_WIDER.get(case.dtype)
    if wider is None or attempt.row["verdict"] not in FAILURES:
        return None
    dtype = numpy_dtype(wider)
    constant = None if case.constant_value is None else np.asarray(case.constant_value).astype(dtype)
    copy = isolated.attempt_if_it_can(case.with_(data=case.data.astype(dtype), constant_value=constant), placement)
    passes = copy is not None and copy.case.kind != CaseKind.MUST_REJECT and copy.row["verdict"] not in FAILURES
    return wider if passes else None


def schema_check(shrunk: Shrunk, runtime: str, placement: Placement) -> dict | None:
    """Where ``runtime`` (Adapter.schema_checked: it runs onnx's shape inference on every model it
    loads) refuses the minimal case with the error onnx's own shape inference gives on the same
    model (onnx.shape_inference.infer_shapes, strict): the refusal is onnx's Pad schema's, to be
    filed once, against onnx; else None. Shaped as native_check's."""
    row, error = shrunk.final.row, shrunk.final.row.get("error")
    if not adapter_class(runtime).schema_checked or row["verdict"] != Verdict.WRONGLY_REJECTED or not error:
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


_NATIVE_MODES = ("constant", "edge", "reflect", "symmetric")


def lowered_runtime(runtime: str) -> tuple[str, str] | None:
    """(runtime, spec id) of the operation ``runtime`` lowers Pad to (Adapter.lowered_to), set up
    as ``runtime`` is: a variant's settings carried over, None where that runtime takes none of them."""
    lowered = adapter_class(runtime).lowered_to
    if lowered is None:
        return None
    other, spec = lowered
    settings = split_variant(runtime)[1]
    if settings:
        other = f"{other}[{','.join(f'{k}={v}' for k, v in settings.items())}]"
    return None if unknown_runtime(other) else (other, spec)


def native_check(shrunk: Shrunk, runtime: str, placement: Placement, lowered_to: Worker | None) -> dict | None:
    """The minimal case through the operation ``runtime`` lowers Pad to (lowered_runtime), alone
    in a fresh process of ``lowered_to`` (that runtime's worker) and the same placement: what it did,
    where it fails there too and alike (_alike: the same output, error or death), as a Pad bug or
    by accepting what that operation's own document forbids (OpenVINO's Pad-12 on a reflect pad
    past its bound): the bug is then that operation's, to be filed once, against it. Else None,
    and None where the case has no such counterpart (axes, wrap) or the bug is no Pad bug."""
    case, row = shrunk.final.case, shrunk.final.row
    if lowered_to is None or case.axes is not None or case.mode not in _NATIVE_MODES \
            or row["verdict"] not in FAILURES or signature_of(shrunk.final)[3] not in PAD_BUGS:
        return None
    lowered = lowered_runtime(runtime)
    if lowered is None:
        return None
    spec, other = lowered[1], lowered_to.adapter  # the lowered runtime set up as the variant was
    # a corrupted heap does not kill every process it is corrupted in: a crash is tried a few times
    tries = CRASH_TRIES if row["verdict"] == Verdict.CRASH else 1
    try:
        native = classify(Case(spec=spec, data=case.data, pads=list(case.pads), mode=case.mode,
                               constant_value=case.constant_value, pads_type=case.pads_type))
        for _ in range(tries):
            outcome, status = lowered_to.run_alone(native, placement)
            if status != Status.OK:
                break
    except (PadconfError, ValueError, TypeError, OverflowError):  # no such counterpart, or that runtime is not here
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


