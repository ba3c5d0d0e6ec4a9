"""The extra runs padconf minimize makes of a minimized failure besides shrinking it, each a run
or two more, whose findings place the bug.

Where the bug is: whether a case folded is refused where at run time it gives an empty tensor
(refused_when_folded), whether a sub-byte dtype's packing is to blame (packing), and whether
it is onnx's (schema_check, Adapter.shape_inference) or the operation the runtime
lowers Pad to (native_check, Adapter.lowered_to).

Triage by experiment: before a minimized failure is put down to a runtime's policy or to a
missing kernel, or judged at a spec version whose document leaves its input undefined, padconf
runs the case that would show otherwise, alone, and records what it did on the failure's row
(``row["experiments"]``), where padconf.judging.triage reads it:

- ``beyond_policy``: a policy fact that names the oldest opset its policy supports
  (``supported_opset``: onnxruntime's "opset version 7 and higher") is set aside when the case,
  stamped with that opset (the Pad version in force there), fails the same way: the kernel
  the runtime runs at the opsets it supports refuses it too (rank-0 data at Pad-2);
- ``explicit_default``: a refusal, or a missing kernel, of a case that omits constant_value is
  a refusal of the documented default when the same case with that default written out works
  (OpenVINO's ONNX frontend on string data: "Unknown type" without, the padded output with ``''``);
- ``defined_at``: a failure at a version whose document leaves the input undefined is judged
  at the next version of the same family that defines it, where the runtime fails it too
  (OpenVINO Pad-1's negative pads, which Pad-12 defines): the bundle is written there;
- ``default_configuration``: a variant's failure (openvino[threads=1]) run by the runtime in its
  default configuration: where that conforms, the failure is the configuration's, and its title
  says so.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from padconf.adapters import adapter_class, split_variant, unknown_runtime
from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.onnx_model import build_model, feeds, ir_version
from padconf.core.dtypes import SUB_BYTE_WIDER, bit_equal, numpy_dtype
from padconf.core.errors import PadconfError, SpecError
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import Worker
from padconf.judging.failure import failure_key
from padconf.judging.records import judged_row
from padconf.judging.triage import PAD_BUGS, Triage, triage
from padconf.judging.verdicts import FAILURES, Verdict, judge
from padconf.minimize.probes.inference import inference_dies
from padconf.minimize.shrink.loop import Attempt, IsolatedRunner, Shrunk, from_nowhere, signature_of
from padconf.spec.loader import get_spec, load_specs, parse_spec_id

CRASH_TRIES = 3  # runs of a crash's counterpart, each in a fresh process
_REFUSALS = (Verdict.WRONGLY_REJECTED, Verdict.NOT_IMPLEMENTED)


def _versions(isolated: IsolatedRunner, domain: str) -> list[int]:
    """The versions of ``domain``'s spec family in the spec folder, oldest first."""
    return sorted(parse_spec_id(s.id)[1] for s in load_specs(isolated.specs_dir) if parse_spec_id(s.id)[0] == domain)


def beyond_policy(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> dict | None:
    """Where ``attempt``'s triage is a policy whose fact names the oldest opset it supports, the
    case re-expressed at that opset (the newest spec version of its family not after it, in a
    model stamped with the opset), run alone in a fresh worker: what it did, where it fails
    there with the same verdict ({"opset", "spec", "verdict", "detail"}); else None."""
    found, fact = triage(attempt.row)
    if found != Triage.POLICY or fact is None or fact.supported_opset is None:
        return None
    domain, _ = parse_spec_id(attempt.case.spec)
    if domain != "onnx":
        return None
    in_force = max((v for v in _versions(isolated, domain) if v <= fact.supported_opset), default=None)
    if in_force is None:
        return None
    spec = f"{domain}/Pad-{in_force}"
    try:
        case = classify(attempt.case.with_(spec=spec), get_spec(spec, isolated.specs_dir))
        model = build_model(case, placement)
    except (PadconfError, SpecError, ValueError, TypeError, OverflowError):  # no such model at that version
        return None
    model.opset_import[0].version = fact.supported_opset
    model.ir_version = ir_version(fact.supported_opset, case.dtype)
    outputs, error, status = isolated.worker.run_model(model.SerializeToString(), feeds(case, placement))
    ruling = judge(case, Outcome(output=None if outputs is None else np.asarray(outputs[0]), error=error), status)
    if ruling.verdict != attempt.row["verdict"]:
        return None
    return {"opset": fact.supported_opset, "spec": spec, "verdict": ruling.verdict,
            "detail": ruling.detail or error}


def documented_default(case: Case) -> np.ndarray | None:
    """The constant value an omitted constant_value stands for ("defaults to 0, empty string,
    or False"), where the case omits it and its spec takes it as an input; else None."""
    domain, version = parse_spec_id(case.spec)
    if case.constant_value is not None or case.mode != "constant" or (domain == "onnx" and version <= 2):
        return None
    if case.dtype == "string":
        return np.array("", dtype=object)
    return np.zeros((), dtype=numpy_dtype(case.dtype))


def explicit_default(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> dict | None:
    """Where ``attempt`` is a refusal (or a missing kernel) of a case that omits constant_value,
    the same case with the documented default written out, run alone: {"constant_value",
    "verdict"} where the runtime then answers as the spec says (the default is what it refuses);
    else None."""
    value = documented_default(attempt.case)
    if value is None or attempt.row["verdict"] not in _REFUSALS:
        return None
    try:
        spelled = isolated.attempt(attempt.case.with_(constant_value=value), placement)
    except (PadconfError, SpecError, ValueError, TypeError):
        return None
    if spelled.row["verdict"] in FAILURES or spelled.outcome.output is None:
        return None
    return {"constant_value": value.tolist(), "verdict": spelled.row["verdict"]}


def defined_at(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> Attempt | None:
    """Where ``attempt``'s case is ambiguous at its spec version (its document leaves the input
    undefined), the same inputs at the next version of the family whose document defines them,
    run alone, where the runtime fails there too: that attempt (its bundle is written at the
    version that defines the input). Else None."""
    case = attempt.case
    if case.kind != CaseKind.AMBIGUOUS or attempt.row["verdict"] not in FAILURES:
        return None
    domain, version = parse_spec_id(case.spec)
    for newer in (v for v in _versions(isolated, domain) if v > version):
        spec = f"{domain}/Pad-{newer}"
        try:
            there = classify(case.with_(spec=spec), get_spec(spec, isolated.specs_dir))
        except (PadconfError, SpecError, ValueError, TypeError, OverflowError):
            continue
        if there.kind != CaseKind.DEFINED:
            continue
        got = isolated.attempt(there, placement)
        return got if got.row["verdict"] in FAILURES and got.row["verdict"] != Verdict.NOT_IMPLEMENTED else None
    return None


def default_configuration(default: Worker | None, attempt: Attempt, placement: Placement,
                          configuration: dict[str, object]) -> dict | None:
    """Where ``attempt`` is a failure of a variant set up as ``configuration`` (the runtime's own
    terms), the minimal case alone on ``default`` (the same runtime in its default
    configuration): {"runtime", "verdict", "detail", "configuration"} where it does not fail
    there; else None."""
    if default is None or attempt.row["verdict"] not in FAILURES:
        return None
    try:
        outcome, status = default.run_alone(attempt.case, placement)
    except PadconfError:  # that runtime could not be started
        return None
    ruling = judge(attempt.case, outcome, status)
    if ruling.verdict in FAILURES:
        return None
    return {"runtime": default.adapter, "verdict": ruling.verdict, "detail": outcome.error or ruling.detail,
            "configuration": configuration}


def known_hang(attempt: Attempt) -> bool:
    """Whether ``attempt`` is a hang that a known upstream issue covers by the case's features
    (IREE's wrap-mode compile hang, iree-org/iree#24585): its bundle is labelled known upstream
    whatever shrinking finds, and each candidate would wait the whole compile limit, so it is not
    shrunk."""
    return attempt.row["verdict"] == Verdict.TIMEOUT \
        and triage({**attempt.row, "control": attempt.control})[0] == Triage.KNOWN_UPSTREAM


def record(attempt: Attempt, found: dict[str, Any]) -> None:
    """Put the experiments' findings on the attempt's row, where triage reads them."""
    kept = {k: v for k, v in found.items() if v is not None}
    if kept:
        attempt.row["experiments"] = {**(attempt.row.get("experiments") or {}), **kept}



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


def placement_needed(isolated: IsolatedRunner, attempt: Attempt, placement: Placement,
                     placements: list[str]) -> bool | None:
    """Whether the minimal case passes in another placement the runtime has (a removal
    experiment for a title's "with pads fed at run time"): the failure needs its placement. None
    for a hang: it is not waited for again in each other placement (a compiler's hang costs its
    whole compile limit each time; the title names the placement, as where untried)."""
    if attempt.row["verdict"] == Verdict.TIMEOUT:
        return None
    for other in placements:
        if other == placement:
            continue
        got = isolated.attempt_if_it_can(attempt.case, Placement(other))
        if got is not None and got.row["verdict"] not in (*FAILURES, Verdict.SKIPPED, Verdict.INCONCLUSIVE):
            return True
    return False


def positive_pads_needed(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> bool | None:
    """Where the minimal case crops (negative pads) and pads (positive ones) too: whether the
    failure needs the positive pads, a removal experiment for a title that names only the
    negative one ("a negative end pad", which may need the begin pad beside it): the same case
    with its positive pads made 0 does not fail alike (failure_key). None where the case has no
    such mix, or the runtime gives no answer to judge (a hang is not waited for again)."""
    pads = [int(p) for p in attempt.case.pads]
    if not any(p < 0 for p in pads) or not any(p > 0 for p in pads) or attempt.row["verdict"] == Verdict.TIMEOUT:
        return None
    got = isolated.attempt_if_it_can(attempt.case.with_(pads=[min(p, 0) for p in pads]), placement)
    return got is None or failure_key(got.row) != failure_key(attempt.row)


def _fails_alike(isolated: IsolatedRunner, attempt: Attempt, twin: Case, placement: Placement) -> bool | None:
    """Whether ``twin`` (the minimal case with one feature changed) fails with ``attempt``'s
    verdict: True, False where it is answered right, None where it could not be built or judged
    alike (another kind of input, not run)."""
    try:
        twin = classify(twin, get_spec(twin.spec, isolated.specs_dir))
    except (PadconfError, SpecError, ValueError, TypeError, OverflowError):
        return None
    if twin.kind != attempt.case.kind:  # undefined or invalid there: it says nothing of the feature
        return None
    got = isolated.attempt_if_it_can(twin, placement)
    if got is None or got.row["verdict"] in (Verdict.SKIPPED, Verdict.INCONCLUSIVE, Verdict.AMBIGUOUS):
        return None
    if failure_key(got.row)[:2] == failure_key(attempt.row)[:2]:  # the verdict and the error's class
        return True
    return False if got.row["verdict"] not in FAILURES else None


def features_needed(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> dict[str, Any]:
    """Removal experiments for what a title names besides the trigger: the opset (the same case
    at the family's versions next to its own, and the newest) and the dtype (the same values as
    float, or as int32 for float data) and the mode (``modes``: the modes failing alike where
    another is answered right, [] where every mode fails alike, None where only its own does or
    no other could be judged alike; ``modes_right``: those answered right; ``pads_ignored``: the
    runtime answered the input unchanged, Attempt.pads_ignored, which the title says).
    A feature is needed (named) unless a twin fails alike
    (the same verdict and error class) and none is answered right; a hang is not waited for
    again (each is named)."""
    case = attempt.case
    if attempt.row["verdict"] == Verdict.TIMEOUT:
        return {"opset": True, "dtype": True, "modes": None}
    domain, version = parse_spec_id(case.spec)
    versions = _versions(isolated, domain)
    older, newer = [v for v in versions if v < version], [v for v in versions if v > version]
    tried = dict.fromkeys([*older[-1:], *newer[:1], *newer[-1:]])  # its neighbours, and the newest
    opsets = [_fails_alike(isolated, attempt, case.with_(spec=f"{domain}/Pad-{v}"), placement) for v in tried]
    other = "int32" if case.dtype == "float" else "float"
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            values = np.asarray(case.data).astype(np.float64)
        retyped = case.with_(data=values.astype(numpy_dtype(other)), constant_value=None if case.constant_value is None
                             else np.asarray(case.constant_value).astype(np.float64).astype(numpy_dtype(other)))
        dtypes = [_fails_alike(isolated, attempt, retyped, placement)]
    except (TypeError, ValueError, OverflowError):  # strings, complex: no such twin
        dtypes = [None]
    # the mode: the same case in the version's other modes (a refusal of every non-constant mode
    # is no wrap bug); the modes failing alike are named, none where every mode fails alike
    modes = {m: _fails_alike(isolated, attempt, case.with_(mode=m), placement)
             for m in get_spec(case.spec, isolated.specs_dir).modes if m != case.mode} \
        if attempt.case.kind != CaseKind.MUST_REJECT else {}
    alike = [case.mode, *(m for m, r in modes.items() if r)]
    return {"opset": not (True in opsets and False not in opsets),
            "dtype": not (True in dtypes and False not in dtypes),
            "modes": (alike if False in modes.values() else []) if len(alike) > 1 else None,
            "modes_right": [m for m, r in modes.items() if r is False], "pads_ignored": attempt.pads_ignored}


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
    """Where ``runtime`` runs onnx's own shape inference on every model it loads, before anything
    of its own (Adapter.shape_inference, with its options), and that inference, run here on the
    minimal case's model, refuses it as the runtime does, or dies on it (alone, in a fresh
    process) as the runtime's process died: the failure is onnx's (its Pad schema's, its shape
    inference's), to be filed once, against onnx; else None. The experiment decides, not the two
    texts (a runtime may word onnx's error its own way). Shaped as native_check's."""
    row, options = shrunk.final.row, adapter_class(runtime).shape_inference
    if options is None or row["verdict"] not in (Verdict.WRONGLY_REJECTED, Verdict.CRASH):
        return None
    try:
        model = build_model(shrunk.final.case, placement)
    except (PadconfError, ValueError, TypeError, OverflowError):  # no model to infer
        return None
    call = f"onnx.shape_inference.infer_shapes(model, {', '.join(f'{k}={v}' for k, v in options.items())})"
    if row["verdict"] == Verdict.CRASH:
        died = inference_dies(model, options)
        return None if died is None else {
            "runtime": "onnx", "spec": "onnx's shape inference", "verdict": row["verdict"],
            "detail": f"{call}, alone in a fresh process, is killed by {died}",
            "why": f"{runtime} runs onnx's shape inference on every model it loads: the crash is onnx's, to be "
                   "filed once, against onnx."}
    try:
        onnx.shape_inference.infer_shapes(model, **options)
        return None
    except onnx.shape_inference.InferenceError as exc:
        said = str(exc).strip().rsplit("] ", 1)[-1]  # past onnx's "[ShapeInferenceError] ..." prefixes
    except (onnx.checker.ValidationError, ValueError, TypeError, OverflowError):  # no model to infer
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
        native = native_case(case, spec)
        for _ in range(tries):
            outcome, status = lowered_to.run_alone(native, placement)
            if status != Status.OK:
                break
    except (PadconfError, ValueError, TypeError, OverflowError):  # no such counterpart, or that runtime is not here
        return None
    got = judged_row(other, placement, native, outcome, status)
    if got["verdict"] not in FAILURES or triage(got)[0] not in (*PAD_BUGS, Triage.LENIENT) \
            or not _alike(shrunk.final, native, outcome, status):
        return None
    return {"runtime": other, "spec": spec, "verdict": got["verdict"], "detail": got.get("detail") or got.get("error"),
            "why": f"{runtime} lowers Pad to that operation: this is its bug, to be filed once, against it."}


def native_case(case: Case, spec: str) -> Case:
    """``case`` as the operation of ``spec`` a runtime lowers Pad to takes it (native_check)."""
    return classify(Case(spec=spec, data=case.data, pads=list(case.pads), mode=case.mode,
                         constant_value=case.constant_value, pads_type=case.pads_type))


def _alike(attempt: Attempt, native: Case, outcome: Outcome, status: str) -> bool:
    """The other runtime failed on ``native`` as ``attempt`` did: both died (or hung), both
    returned the same output, or outputs of one shape that both hold values found nowhere in
    the input nor in any reading's output (memory never written, whose contents differ from
    process to process), or both refused (the operation refuses the same values and pads, so
    the path that lowers to it refuses them through it; whatever either's error says), or one
    died where the other's output holds such values: one memory corrupted, two faces (audit V:
    OpenVINO's frontend answered garbage where its CPU Pad-12 crashed on the same values)."""
    mine, theirs = attempt.outcome.output, outcome.output
    mine_died, theirs_died = attempt.row["verdict"] == Verdict.CRASH, status == Status.CRASH
    if mine_died != theirs_died and (mine_died or (mine is not None and from_nowhere(attempt.case, mine))) \
            and (theirs_died or (theirs is not None and from_nowhere(native, theirs))):
        return True
    if status != Status.OK or attempt.row["verdict"] in (Verdict.CRASH, Verdict.TIMEOUT):
        return status == attempt.row["verdict"]
    if mine is not None or theirs is not None:
        return mine is not None and theirs is not None and mine.shape == theirs.shape \
            and mine.dtype == theirs.dtype and (bit_equal(mine, theirs) or bool(
                from_nowhere(attempt.case, mine) and from_nowhere(native, theirs)))
    return True  # neither answered: both refused


SLICES = 3  # copies of the minimal case's data stacked on a new leading axis, each of values of its own


def stacked(case: Case) -> Case | None:
    """The minimal case with its data stacked SLICES times on a new leading axis that is not
    padded, slice i holding values no other slice holds (nonzero: a zero fill stays told apart):
    a runtime that reads past a row's end (or before its start) gives one slice's output another
    slice's values, which a minimal case of one row hides as zeros read past the buffer (IREE's
    reflect pad as large as a dynamic dimension). None where the dtype has not the values, or
    the pads or axes are malformed."""
    data = np.asarray(case.data)
    n, size = data.ndim, max(data.size, 1)
    if data.dtype.kind not in "iuf" or len(case.pads) != 2 * (n if case.axes is None else len(case.axes)):
        return None
    try:
        values = [np.arange(1 + i * size, 1 + (i + 1) * size).reshape(data.shape) for i in range(SLICES)]
        stack = np.stack([np.asarray(v).astype(data.dtype) for v in values])
    except (TypeError, ValueError, OverflowError):
        return None
    if not np.array_equal(stack.astype(np.float64), np.stack(values).astype(np.float64)):  # the dtype cannot hold them
        return None
    k = len(case.pads) // 2
    if case.axes is None:
        pads = [0, *case.pads[:k], 0, *case.pads[k:]]
        return case.with_(data=stack, pads=pads)
    axes = [a + 1 if a >= 0 else a for a in case.axes]
    return case.with_(data=stack, axes=axes)


def reads_across_slices(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> str | None:
    """Where the stacked case (``stacked``) is answered in the expected shape and one slice's
    output holds a nonzero value of another slice's data that its own data does not hold: what
    shows it (a read outside the row). Else None."""
    twin = stacked(attempt.case)
    if twin is None:
        return None
    got = isolated.attempt_if_it_can(twin, placement)
    output = None if got is None else got.outcome.output
    if output is None or output.dtype != twin.data.dtype or output.ndim != twin.data.ndim \
            or output.shape[0] != SLICES:
        return None
    for i in range(SLICES):
        own = set(np.asarray(twin.data[i]).reshape(-1).tolist())
        others = set(np.asarray(np.delete(twin.data, i, axis=0)).reshape(-1).tolist()) - own
        foreign = [v for v in np.asarray(output[i]).reshape(-1).tolist() if v in others and v != 0]
        if foreign:
            return (f"the same input stacked {SLICES} times on a new unpadded axis, each copy of values of its own: "
                    f"copy {i}'s output holds {foreign[:4]} of another copy's data (a read outside its row)")
    return None


def operand_twin(isolated: IsolatedRunner, attempt: Attempt, placement: Placement, other: Attempt,
                 other_placement: Placement) -> dict | None:
    """One bug whose symptom the operands' form chooses: their index type (OpenVINO's Pad on
    rank-0 data, empty pads fed at run time: int64 pads refused with "ptr is Null", int32 pads a
    segfault, audit II) and whether they are fed or constant (the same rank-0 data refused with
    constant pads, "incorrect number of input/output dimensions", audit VII): ``attempt``'s
    minimal case with its pads' and axes' index types made ``other``'s, in ``other``'s placement,
    fails as ``other`` does (failure_key's verdict and error class). The record of that twin,
    None where the forms are alike or the twin fails otherwise (or passes)."""
    case, theirs = attempt.case, other.case
    changes = {}
    if case.pads_type != theirs.pads_type:
        changes["pads_type"] = theirs.pads_type
    if case.axes is not None and theirs.axes is not None and case.axes_type != theirs.axes_type:
        changes["axes_type"] = theirs.axes_type
    if not changes and placement == other_placement:
        return None
    try:
        twin = classify(case.with_(**changes), get_spec(case.spec, isolated.specs_dir))
    except (PadconfError, SpecError, ValueError, TypeError, OverflowError):
        return None
    got = isolated.attempt_if_it_can(twin, other_placement)
    if got is None or got.row["verdict"] not in FAILURES or failure_key(got.row)[:2] != failure_key(other.row)[:2]:
        return None
    if other_placement != placement:
        changes["placement"] = other_placement
    return {"case_id": twin.id, **changes, "verdict": got.row["verdict"], "error": got.row.get("error")}
