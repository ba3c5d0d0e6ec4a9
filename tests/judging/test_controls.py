"""Controls on the same path: besides Identity, a copy of the input's buffer a compiler may
forward, the case's data and constant value go through data-movement ops of the same dtype that
touch every element (Reshape, Concat with a second operand, Tile) in the same placement; a Pad-1/2
value attribute goes through another op's float attribute (LeakyRelu's alpha); a context's
consumer runs alone on the padded data, no Pad in its graph. A failure is Pad-specific only when
these pass."""
import ml_dtypes
import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.execution.worker import Worker
from padconf.judging.triage import Triage, triage
from padconf.judging.verdicts import Verdict, control_record, judge

WIDE = 2 ** 40  # needs more than 32 bits


def run_with_controls(runtime: str, case: Case, placement: str) -> tuple[str, dict]:
    worker = Worker(runtime)
    try:
        verdict = judge(case, *worker.run_alone(case, placement)).verdict
        return verdict, control_record(case, placement, worker.run_alone, verdict)
    finally:
        worker.close()


def test_the_values_control_is_the_data_and_constant_value_concatenated_and_tiled():
    case = classify(Case(spec="onnx/Pad-18", data=np.array([[1, 2]], np.int64), pads=[0, 1, 0, 0],
                         constant_value=np.int64(7)))
    control = case.movement_control()
    assert control is not None and control.op == "Concat" and control.kind == "defined"
    np.testing.assert_array_equal(control.expected, [1, 2, 7, 1, 2, 7])
    assert [operand for operand, _, _ in case.controls("inputs")] == ["data", "values", "pads values"]
    from padconf.cases.onnx_model import build_model
    assert [n.op_type for n in build_model(control, "inputs").graph.node] == ["Reshape", "Reshape", "Concat", "Tile"]


def test_without_a_constant_value_concat_still_has_a_second_operand_the_data_again():
    from padconf.cases.onnx_model import build_model
    control = classify(Case(spec="onnx/Pad-18", data=np.array([1, 2], np.uint8), pads=[1, 0])).movement_control()
    assert control is not None and control.expected.tolist() == [1, 2, 1, 2, 1, 2, 1, 2]
    concat = next(n for n in build_model(control, "initializers").graph.node if n.op_type == "Concat")
    assert list(concat.input) == ["data_flat", "data_flat"]


def test_a_value_attribute_goes_through_leaky_relus_alpha():
    """Pad-2's value=nan is built by the frontend from a float attribute: its control is the same
    float as LeakyRelu's alpha on -1s, every element -alpha (NaN here)."""
    from padconf.cases.onnx_model import build_model
    case = classify(Case(spec="onnx/Pad-2", data=np.ones(2, np.float32), pads=[1, 1],
                         constant_value=np.float32("nan")))
    control = case.attribute_control()
    assert control is not None and control.op == "LeakyRelu" and np.isnan(control.expected).all()
    node = build_model(control, "inputs").graph.node[0]
    assert node.op_type == "LeakyRelu" and np.isnan(node.attribute[0].f)
    assert [operand for operand, _, _ in case.controls("inputs")] == ["data", "values", "attribute"]
    plain = classify(Case(spec="onnx/Pad-2", data=np.ones(2, np.float32), pads=[1, 1], constant_value=np.float32(2.5)))
    assert plain.attribute_control().expected.tolist() == [-2.5, -2.5]


def test_a_complex_value_written_as_pad_2s_float_attribute_warns_nothing():
    """Pad-2 defines no complex T, yet a drawn complex case is still built (the runtime answers it):
    the value's real part becomes the float attribute, with no numpy ComplexWarning, which would
    reach the runtime's stream from the worker."""
    import warnings

    from padconf.cases.onnx_model import build_model
    case = Case(spec="onnx/Pad-2", data=np.ones(2, np.complex64), pads=[1, 1], constant_value=np.complex64(2 + 3j))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        node = build_model(case, "inputs").graph.node[0]
    assert node.op_type == "Pad" and next(a.f for a in node.attribute if a.name == "value") == 2.0


def test_a_context_cases_consumer_control_has_no_pad_in_its_graph():
    from padconf.cases.context import Consumer, Context
    from padconf.cases.onnx_model import build_model, feeds
    ctx = Context(Consumer.MAX_POOL, {"kernel_shape": [2, 2], "strides": [1, 1], "dilations": [1, 1],
                                      "auto_pad": "NOTSET", "pads": [0, 0, 0, 0], "ceil_mode": 0})
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2),
                         pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="wrap", context=ctx))
    control = case.consumer_control()
    assert control is not None and control.op == "Consumer" and control.data.shape == (1, 1, 4, 4)
    for placement in ("inputs", "initializers", "folded"):
        assert [n.op_type for n in build_model(control, placement).graph.node] == ["MaxPool"]
    assert list(feeds(control, "inputs")) == ["data"]


def test_a_pad_feeding_two_consumers_has_a_control_of_two_consumers_that_passes():
    """Its expected output is the two consumers' sum: the control is the same two consumers on
    the padded data, so that a runtime that computes it passes the control (and the case)."""
    from padconf.cases.context import Consumer, Context
    from padconf.cases.onnx_model import build_model
    ctx = Context(Consumer.CONV, {"kernel_shape": [2], "strides": [1], "pads": [0, 0]},
                  weights=np.ones((1, 1, 2), np.float32), fanout=True)
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(4, dtype=np.float32).reshape(1, 1, 4),
                         pads=[0, 0, 0, 0, 0, 1], constant_value=np.array(0, np.float32), context=ctx))
    control = case.consumer_control()
    assert control is not None
    assert [n.op_type for n in build_model(control, "inputs").graph.node] == ["Conv", "Conv", "Add"]
    worker = Worker("onnxruntime")
    try:
        assert judge(control, *worker.run_alone(control, "inputs")).verdict == Verdict.PASS
        assert judge(case, *worker.run_alone(case, "inputs")).verdict == Verdict.PASS
    finally:
        worker.close()


@pytest.mark.parametrize("case", [
    # Concat-11 and Reshape-5 list no bfloat16: no such model is valid
    Case(spec="onnx/Pad-11", data=np.ones(2, ml_dtypes.bfloat16), pads=[1, 1]),
])
def test_no_values_control_where_concat_lacks_the_dtype(case):
    assert case.movement_control() is None


def test_a_pad_2_values_control_moves_the_data_alone_at_the_first_opset_with_the_ops():
    """Pad-1/2's value is an attribute (attribute_control's); its data still goes through
    Reshape, Concat and Tile, at opset 7: opset 2 has not their input forms."""
    from padconf.cases.onnx_model import build_model
    control = Case(spec="onnx/Pad-2", data=np.ones(2, np.float32), pads=[1, 1],
                   constant_value=np.float32(3)).movement_control()
    assert control is not None and control.constant_value is None and control.expected.tolist() == [1.0] * 8
    assert build_model(control, "inputs").opset_import[0].version == 7


def test_openvinos_64_bit_narrowing_is_no_pad_bug():
    """OpenVINO's CPU plugin runs 64-bit integers as 32-bit ones: Pad returns 2**40 as 0, and so
    do Reshape and Concat, while Identity hands back the input's own buffer and passes."""
    pytest.importorskip("openvino")
    case = classify(Case(spec="openvino/Pad-12", data=np.array([WIDE, 3], np.uint64), pads=[1, 0]))
    verdict, control = run_with_controls("openvino", case, "inputs")
    assert verdict == Verdict.MISMATCH
    assert control["operand"] == "values" and control["fails_too"]
    assert triage({"verdict": verdict, "control": control, "runtime": "openvino"})[0] == Triage.NOT_PAD_SPECIFIC


def test_a_wide_constant_value_narrowed_is_no_pad_bug():
    pytest.importorskip("openvino")
    case = classify(Case(spec="onnx/Pad-18", data=np.array([1, 3], np.int64), pads=[1, 0],
                         constant_value=np.int64(WIDE)))
    verdict, control = run_with_controls("openvino-onnx", case, "initializers")
    assert verdict == Verdict.MISMATCH and control["operand"] == "values" and control["fails_too"]


def test_a_pad_bug_stays_pad_specific_where_the_values_pass():
    """Rank-0 data: OpenVINO's ONNX frontend refuses the Pad, yet moves the same value through
    Reshape and Concat: the refusal is Pad's."""
    pytest.importorskip("openvino")
    case = classify(Case(spec="onnx/Pad-18", data=np.array(1.5, np.float32), pads=[]))
    verdict, control = run_with_controls("openvino-onnx", case, "inputs")
    assert verdict == Verdict.WRONGLY_REJECTED
    assert not control["fails_too"] and control["verdict"] == Verdict.PASS


def test_a_values_control_failing_otherwise_does_not_excuse_the_pad():
    """The values' control counts only when it fails as the Pad did: a runtime may lack a Concat
    kernel for a dtype its Pad has, which says nothing of a wrong value from Pad."""
    case = classify(Case(spec="onnx/Pad-18", data=np.array([1, 2], np.int64), pads=[1, 0]))

    def run(control, placement):  # planted: Identity passes, the Concat model is refused
        if control.op == "Concat":
            return Outcome(error="no Concat kernel"), "ok"
        return Outcome(output=control.expected), "ok"

    assert not control_record(case, "inputs", run, Verdict.MISMATCH)["fails_too"]
    assert control_record(case, "inputs", run, Verdict.WRONGLY_REJECTED)["fails_too"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["constant", "edge"])
def test_openvinos_frontend_refusing_a_nan_value_attribute_refuses_leaky_relus_nan_alpha_too(mode):
    """OpenVINO's ONNX frontend refuses Pad-2's value=nan while building the float attribute's
    constant, and refuses LeakyRelu's alpha=nan alike: not Pad-specific, in a mode that never
    reads the value too (the model still carries it: audit IV's openvino-onnx 65, edge)."""
    pytest.importorskip("openvino")
    case = classify(Case(spec="onnx/Pad-2", data=np.ones(2, np.float32), pads=[1, 1], mode=mode,
                         constant_value=np.float32("nan")))
    verdict, control = run_with_controls("openvino-onnx", case, "inputs")
    assert verdict == Verdict.WRONGLY_REJECTED
    assert control["operand"] == "attribute" and control["fails_too"]
    assert triage({"verdict": verdict, "control": control, "runtime": "openvino-onnx"})[0] == Triage.NOT_PAD_SPECIFIC


@pytest.mark.slow
def test_irees_signed_type_for_unsigned_data_shows_through_concat_and_tile_though_identity_passes():
    pytest.importorskip("iree.runtime")
    case = classify(Case(spec="onnx/Pad-18", data=np.array([1, 2], np.uint8), pads=[1, 0]))
    verdict, control = run_with_controls("iree", case, "initializers")
    assert verdict == Verdict.MISMATCH and control["operand"] == "values" and control["fails_too"]


def test_a_control_the_runtime_does_not_implement_is_no_control_never_a_failing_one():
    """A control op the runtime refuses as unsupported (onnxruntime has no LeakyRelu below opset
    6), or one the adapter cannot express, ran nothing: it proves nothing, and never makes the
    Pad's failure "not Pad-specific", whatever op it was, Identity included."""
    case = classify(Case(spec="onnx/Pad-2", data=np.array([1, 2], np.float32), pads=[1, 0],
                         constant_value=np.float32(0)))
    for refused in ("Identity", "LeakyRelu", "Concat"):
        def run(control, placement, refused=refused):  # planted: one op has no kernel, or cannot be given
            if control.op == refused:
                return Outcome(error="Could not find an implementation", not_implemented=True), "ok"
            return Outcome(output=control.expected), "ok"

        for verdict in (Verdict.WRONGLY_REJECTED, Verdict.NOT_IMPLEMENTED, Verdict.MISMATCH):
            assert not control_record(case, "inputs", run, verdict)["fails_too"], (refused, verdict)


def test_onnxruntimes_refused_leaky_relu_1_does_not_hide_its_pad_2_failure():
    """Real onnxruntime: Pad-2 at opset 2 whose LeakyRelu control it cannot run (no kernel below
    opset 6): the control is no control, and the failure of the Pad is judged as its own. Its
    data's values still get a computing control, at the first opset with Reshape, Concat and Tile."""
    case = classify(Case(spec="onnx/Pad-2", data=np.array([[1, 2, 3]], np.float32), pads=[0, 0, 0, -3],
                         mode="edge", constant_value=np.float32(0)))
    # edge reads no value, but the model carries it, and the frontend builds its constant
    assert [operand for operand, _, _ in case.controls("inputs")] == ["data", "values", "attribute"]
    constant = classify(case.with_(mode="constant", pads=[0, 1, 0, 0]))
    worker = Worker("onnxruntime")
    try:
        leaky = constant.attribute_control()
        assert leaky is not None
        assert judge(leaky, *worker.run_alone(leaky, "inputs")).verdict == Verdict.NOT_IMPLEMENTED
        assert not control_record(constant, "inputs", worker.run_alone, Verdict.MISMATCH)["fails_too"]
        verdict = judge(case, *worker.run_alone(case, "inputs")).verdict
        control = control_record(case, "inputs", worker.run_alone, verdict)
    finally:
        worker.close()
    assert verdict == Verdict.WRONGLY_REJECTED and not control["fails_too"]


def test_an_attribute_control_failing_otherwise_does_not_excuse_the_pad():
    """LeakyRelu(alpha=nan) answered with another NaN sign (a mismatch) beside a refused Pad-1
    (audit C, seed 45212, onnx-reference 24): another op's own flaw, not the Pad's path; it
    excuses the Pad only failing as the Pad did (OpenVINO's frontend refuses both alike)."""
    case = classify(Case(spec="onnx/Pad-2", data=np.array([1, 2], np.float32), pads=[1, 0],
                         constant_value=np.float32("nan")))

    def run(control, placement):  # planted: LeakyRelu's NaN comes back with its sign flipped
        if control.op == "LeakyRelu":
            return Outcome(output=-control.expected), "ok"
        return Outcome(output=control.expected), "ok"

    assert not control_record(case, "inputs", run, Verdict.WRONGLY_REJECTED)["fails_too"]
    assert control_record(case, "inputs", run, Verdict.MISMATCH)["fails_too"]


class _Narrowing:
    """A planted bug (padconf's own test): a runtime that computes every int64 tensor in 32 bits,
    as OpenVINO's CPU plugin does (openvinotoolkit/openvino#35823): its Pad reads the pads narrowed,
    and any other op on int64 values wraps them alike."""

    def run(self, case: Case, placement: str) -> Outcome:
        from tests.fake_adapters import CorrectAdapter
        if case.op == "Pad":
            narrowed = [int(np.int64(p).astype(np.int32)) for p in case.pads]
            return CorrectAdapter().run(case.with_(pads=narrowed), placement)
        out = CorrectAdapter().run(case, placement)
        if out.output is not None and out.output.dtype == np.int64:
            return Outcome(out.output.astype(np.int32).astype(np.int64))
        return out


def test_the_pads_own_values_have_a_control_that_carries_them_in_their_own_type():
    """A failure on pads beyond 2^31 that the runtime's int64 arithmetic explains shows on the
    pads' values alone: the pads, as an int64 tensor, through Reshape, Concat and Tile fail too,
    so the Pad's failure is not Pad-specific, though the data's controls (float) pass."""
    from padconf.core.vocabulary import Status
    case = classify(Case(spec="onnx/Pad-19", data=np.ones(3, np.float32), pads=[2 ** 32, -(2 ** 32)]))
    for placement in ("inputs", "initializers", "folded"):
        found = {operand: control for operand, control, _ in case.controls(placement)}
        assert found["pads values"].data.dtype == np.int64
        assert found["pads values"].data.tolist() == [2 ** 32, -(2 ** 32)]
    runtime = _Narrowing()
    verdict = judge(case, runtime.run(case, "inputs"), Status.OK).verdict
    assert verdict in (Verdict.MISMATCH, Verdict.UNEXPLAINED)  # pads read as [0, 0]: the data back
    record = control_record(case, "inputs", lambda c, where: (runtime.run(c, where), Status.OK), verdict)
    # a control of the values the Pad reads fails too however the Pad's failure shows (here an
    # answer no reading gives, there a mismatch of narrowed values)
    assert record["fails_too"] and record["operand"] == "pads values" and record["verdict"] == Verdict.MISMATCH
    assert triage({"verdict": verdict, "control": record})[0] == Triage.NOT_PAD_SPECIFIC
    # a crash on such pads (OpenVINO's SIGSEGV on constant pads >= 2^31) is no wrong value the pads'
    # narrowing explains: memory-unsafe, it keeps a bundle of its own
    dies = control_record(case, "inputs", lambda c, where: (runtime.run(c, where), Status.OK), Verdict.CRASH)
    assert not dies["fails_too"]
    # axes too, where the case has them; Pad-1/2's pads are an attribute: no tensor to carry
    with_axes = Case(spec="onnx/Pad-19", data=np.ones((2, 3), np.float32), pads=[1, 0], axes=[-1])
    assert [c.data.tolist() for o, c, _ in with_axes.controls("inputs") if o == "axes values"] == [[-1]]
    assert not Case(spec="onnx/Pad-2", data=np.ones(3, np.float32), pads=[1, 0]).index_controls()


def test_empty_data_moves_as_many_zeros_as_its_pad_writes():
    """Empty data has no values to move: its control moved nothing and passed, while OpenVINO's
    folded Pad on an empty axis of float4e2m1 crashed as its folded Tile of as many values does
    (audit IV's openvino 32, a bug to file where its int4 twin was not Pad-specific)."""
    import ml_dtypes
    case = classify(Case(spec="openvino/Pad-12", data=np.zeros((0, 5), ml_dtypes.float4_e2m1fn), pads=[0, 0, 3, 4]))
    control = case.movement_control()
    assert control is not None and control.data.shape == (27,) and control.expected.shape == (108,)
    pytest.importorskip("openvino")
    verdict, record = run_with_controls("openvino", case, "folded")
    assert verdict == Verdict.CRASH and record["operand"] == "values" and record["fails_too"], record
