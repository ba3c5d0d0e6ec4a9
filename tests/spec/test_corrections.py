"""Readings an audit of padconf's bug reports overturned, each traced to the document's words
(and to the upstream correction where there is one): padconf follows the correction."""
import ml_dtypes
import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.examples import check_example, example_cases
from padconf.judging.verdicts import Verdict, judge
from padconf.spec.loader import load_specs

SPECS = {s.id: s for s in load_specs()}
X32 = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], np.float32)
EXAMPLE_2_PRINT = [[1.0, 1.2, 1.0, 1.2], [2.3, 3.4, 2.3, 3.4], [4.5, 5.7, 4.5, 5.7]]


def example(spec_id, name):
    spec = SPECS[spec_id]
    return spec, next(ex for ex in spec.examples if ex["name"] == name)


def the_case(spec_id, origin_name):
    return next(c for c in example_cases(SPECS[spec_id]) if c.origin == f"example:{origin_name}")


@pytest.mark.parametrize("spec_id", [s for s in SPECS
                                     if s.startswith("onnx/") and s not in ("onnx/Pad-1", "onnx/Pad-2")])
def test_reflect_example_2_is_withdrawn_upstream_and_settles_nothing(spec_id):
    """onnx/onnx PR #7700 (fixing onnx/onnx#7467): "This violates the constraint that reflect
    padding must be strictly less than the input dimension size (`pad_size < dim_size`). The
    documented output was also incorrect." The erratum is data in the spec file; the example's
    case is the undefined point it is, where refusing conforms."""
    spec, ex = example(spec_id, "example_2_reflect")
    correction = ex["correction"]
    assert correction["kind"] == "withdrawn" and correction["no_longer_settles"] == ["mirror_beyond_dim"]
    assert {u["url"] for u in correction["upstream"]} >= {"https://github.com/onnx/onnx/issues/7467",
                                                          "https://github.com/onnx/onnx/pull/7700"}
    assert "strictly less than the input dimension size" in correction["quote"]
    case = the_case(spec_id, "example_2_reflect")
    assert case.kind == CaseKind.AMBIGUOUS and case.reason == "mirror_beyond_dim"
    assert case.interpretations["mirror_beyond_dim=iterate"].tolist() == np.float32(EXAMPLE_2_PRINT).tolist()
    refused = judge(case, Outcome(error="Pad reflect: pre-pad 2 exceeds maximum allowed 1"))
    assert refused.verdict == Verdict.AMBIGUOUS and refused.matched == ["mirror_beyond_dim=reject"]
    assert check_example(spec, ex).ok  # the reference still reproduces what was printed


def test_pad_1_example_follows_pad_2s_correction_so_the_text_is_the_rule():
    """Pad-1: "`paddings` format should be as follow [x1_begin, x2_begin...x1_end, x2_end,...]",
    yet its example prints paddings = [0, 0, 2, 0] with two zeros at the beginning of axis 1; Pad-2's
    document keeps the sentence and prints pads = [0, 2, 0, 0] for the same output."""
    spec, ex = example("onnx/Pad-1", "example_constant")
    assert "[x1_begin, x2_begin...x1_end, x2_end,...]" in spec.doc["rules"]["pads_layout"]["text"]
    assert (ex["pads"] == [0, 0, 2, 0] and ex["correction"]["kind"] == "corrected"
            and ex["correction"]["pads"] == [0, 2, 0, 0])
    assert "paddings_layout" not in spec.ambiguities
    case = the_case("onnx/Pad-1", "example_constant")
    assert case.pads == [0, 2, 0, 0] and case.kind == CaseKind.DEFINED and case.expected.shape == (3, 4)
    # a runtime that follows the text with the paddings as printed gives 2 rows at the end of axis 0
    as_printed = classify(Case(spec="onnx/Pad-1", data=X32, pads=[0, 0, 2, 0]))
    assert as_printed.kind == CaseKind.DEFINED and as_printed.expected.shape == (5, 2)
    assert check_example(spec, ex).ok


@pytest.mark.parametrize("spec_id", ["onnx/Pad-18", "onnx/Pad-19", "onnx/Pad-25"])
def test_a_repeated_axis_is_undefined_behaviour_where_any_answer_but_a_crash_conforms(spec_id):
    """Pad-18 on: "Behavior is undefined if an axis is repeated." """
    assert SPECS[spec_id].ambiguities["repeated_axes"].text == "Behavior is undefined if an axis is repeated."
    case = classify(Case(spec=spec_id, data=X32, pads=[1, 2, 0, 0], axes=[1, 1]))
    assert case.kind == CaseKind.AMBIGUOUS and case.reason == "repeated_axes" and case.any_answer_conforms
    odd = judge(case, Outcome(np.zeros((7, 7), np.float32)))  # no named reading gives it
    assert odd.verdict == Verdict.AMBIGUOUS and not odd.matched and "conforms" in odd.detail
    assert judge(case, Outcome(error="killed by SIGSEGV"), "crash").verdict == Verdict.CRASH


def test_a_case_reaching_two_undefined_points_is_classified_over_their_combinations():
    """ONNX Pad-1 speaks only of counts ("List of integers indicate the padding element count"), so
    a negative padding is undefined; only if it crops can the crop go beyond the dimension, a
    second undefined point. Asked one point at a time, each reading alone rejects the case."""
    case = classify(Case(spec="onnx/Pad-1", data=X32, pads=[-4, 0, 0, 0]))
    assert case.kind == CaseKind.AMBIGUOUS and case.reason == "negative_pads,crop_beyond_dim"
    crop_and_clamp = case.interpretations["negative_pads=crop,crop_beyond_dim=clamp_to_zero"]
    assert crop_and_clamp.shape == (0, 2)
    got = judge(case, Outcome(np.zeros((0, 2), np.float32)))
    assert got.matched == ["negative_pads=crop,crop_beyond_dim=clamp_to_zero"]


def test_the_references_allocation_bound_is_padconfs_limit_never_a_rule():
    """No document bounds the output's size: past padconf's reference bound a case is too large
    to check, whatever the runtime does with it."""
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(4, dtype=np.uint8), pads=[2**26, 2**26]))
    assert case.kind == CaseKind.TOO_LARGE and case.rule is None
    assert judge(case, Outcome(error="out of memory")).verdict == Verdict.INCONCLUSIVE
    assert judge(case, Outcome(np.zeros(4, np.uint8))).verdict == Verdict.INCONCLUSIVE


@pytest.mark.parametrize("spec_id", ["openvino/Pad-1", "openvino/Pad-12"])
def test_openvino_any_numeric_type_is_every_number_type_not_a_list_of_twelve(spec_id):
    """OpenVINO Pad-12 (seed 003): "T: any numeric type." A float8 or int4 tensor is numeric;
    a boolean is not a number."""
    spec = SPECS[spec_id]
    assert {"float8e4m3fn", "float8e5m2", "int4", "uint4"} <= set(spec.dtypes)
    int4 = classify(Case(spec=spec_id, data=np.arange(3).astype(ml_dtypes.int4), pads=[1, 0], mode="edge"))
    assert int4.kind == CaseKind.DEFINED
    boolean = classify(Case(spec=spec_id, data=np.array([True]), pads=[1, 0]))
    assert boolean.kind == CaseKind.MUST_REJECT and boolean.rule == "dtypes"


def test_openvino_mirror_bounds_hold_on_an_axis_of_size_zero_as_written():
    """OpenVINO Pad-12: "pads_begin[D] and pads_end[D] must be not greater than data.shape[D] – 1
    for any valid D" (reflect) and "... not greater than data.shape[D] for any valid D"
    (symmetric): on an axis of size 0, any reflect pad and any symmetric pad > 0 break the bound."""
    empty = np.zeros((0, 2), np.float32)
    reflect = classify(Case(spec="openvino/Pad-12", data=empty, pads=[0, 1, 0, 1], mode="reflect"))
    assert reflect.kind == CaseKind.MUST_REJECT and reflect.rule == "mirror_beyond_dim"
    symmetric = classify(Case(spec="openvino/Pad-12", data=empty, pads=[1, 0, 0, 0], mode="symmetric"))
    assert symmetric.kind == CaseKind.MUST_REJECT and symmetric.rule == "mirror_beyond_dim"
    inside = classify(Case(spec="openvino/Pad-12", data=empty, pads=[0, 1, 0, 1], mode="symmetric"))
    assert inside.kind == CaseKind.DEFINED
    edge = classify(Case(spec="openvino/Pad-12", data=empty, pads=[1, 0, 0, 0], mode="edge"))
    assert edge.kind == CaseKind.AMBIGUOUS and edge.reason == "empty_axis_nonconstant"


def test_cropping_first_a_crop_larger_than_the_axis_reaches_crop_beyond_dim_so_a_refusal_conforms():
    """ONNX Pad-25 says pads "add or remove (if negative)" and never in which order for edge when
    one side adds and the other removes (mixed_sign_pads), nor what removing more than the axis
    holds means (crop_beyond_dim). Edge [1..5] with pads [5, -10]: padding first, 10 elements
    lose 10 (an empty output); cropping first, 10 are removed from 5: the second point. So
    onnxruntime's refusal ("invalid mode: 2 with zero effective input extent") is a reading, not
    a wrongly rejected defined case, as an audit of its bundle found."""
    case = classify(Case(spec="onnx/Pad-25", data=np.arange(1, 6, dtype=np.float32), pads=[5, -10], mode="edge"))
    # cropped first to nothing, the axis also gets a pad of 5 from no elements (the test below)
    assert case.kind == CaseKind.AMBIGUOUS and case.reason == "mixed_sign_pads,crop_beyond_dim,empty_axis_nonconstant"
    refused = judge(case, Outcome(error="Pad: invalid mode: 2 with zero effective input extent"))
    assert refused.verdict == Verdict.AMBIGUOUS
    assert all(m.startswith("mixed_sign_pads=crop_first,") for m in refused.matched)
    assert "mixed_sign_pads=crop_first,crop_beyond_dim=reject,empty_axis_nonconstant=constant_fill" in refused.matched
    # an empty output is every other reading's answer; and with the crop within the axis, both
    # orders give one defined output as before
    assert judge(case, Outcome(np.zeros(0, np.float32))).verdict == Verdict.AMBIGUOUS
    within = classify(Case(spec="onnx/Pad-25", data=np.arange(1, 6, dtype=np.float32), pads=[2, -3], mode="edge"))
    assert within.kind == CaseKind.DEFINED and within.expected.tolist() == [1, 1, 1, 2]
    # OpenVINO Pad-12 states its coordinates and its clamp: defined there
    ov = classify(Case(spec="openvino/Pad-12", data=np.arange(1, 6, dtype=np.float32), pads=[5, -10], mode="edge"))
    assert ov.kind == CaseKind.DEFINED and ov.expected.shape == (0,)


def test_edge_padding_an_empty_axis_is_undefined_even_where_another_axis_empties_the_output():
    """ONNX Pad-1: "edge - pads with the edge values of array". An axis of size 0 has no edge
    values, whatever the other axes hold: shape [0, 0] padded [0, 0, 1, 0] (axis 0's end) asks
    axis 0 for values it lacks, though the output [1, 0] holds no element. numpy.pad refuses
    that ("can't extend empty axis 0"), and so does onnx's reference: a reading, as an audit of
    its bundle found, not a wrongly rejected defined case."""
    case = classify(Case(spec="onnx/Pad-1", data=np.zeros((0, 0), np.float32), pads=[0, 0, 1, 0], mode="edge"))
    assert case.kind == CaseKind.AMBIGUOUS and case.reason == "empty_axis_nonconstant"
    refused = judge(case, Outcome(error="ValueError: can't extend empty axis 0 using modes other than 'constant'"))
    assert refused.verdict == Verdict.AMBIGUOUS and refused.matched == ["empty_axis_nonconstant=reject"]
    assert judge(case, Outcome(np.zeros((1, 0), np.float32))).verdict == Verdict.AMBIGUOUS
    # constant mode takes nothing from the data: defined
    constant = classify(Case(spec="onnx/Pad-1", data=np.zeros((0, 0), np.float32), pads=[0, 0, 1, 0]))
    assert constant.kind == CaseKind.DEFINED and constant.expected.shape == (1, 0)


def test_float8e8m0_pads_with_the_value_onnx_converts_zero_to_since_it_has_no_zero():
    """Pad-24: constant_value "defaults to 0"; float8e8m0 holds no 0. onnx's own conversion
    (numpy_helper.to_float8e8m0, Cast's default round_mode "up") turns 0 into 2**-127, bits
    0x00, which OpenVINO pads with too; ml_dtypes' cast gives NaN, which padconf once expected,
    calling OpenVINO wrong (found auditing that bundle)."""
    import ml_dtypes
    from onnx.numpy_helper import to_float8e8m0
    case = classify(Case(spec="onnx/Pad-24", data=np.ones(1, ml_dtypes.float8_e8m0fnu), pads=[1, 0]))
    assert case.kind == CaseKind.DEFINED
    pad_bits = case.expected.view(np.uint8)[0]
    assert pad_bits == to_float8e8m0(np.array([0.0], np.float32)).view(np.uint8)[0] == 0


def test_edge_padding_an_empty_axis_is_undefined_even_where_a_crop_leaves_it_no_room():
    """OpenVINO Pad-12's open point, in padconf's words: "The text never says what edge produces
    on an axis with no elements (data.shape[D] = 0, or cropped to 0) that gets a pad > 0". Shape
    [0] padded [-1, 1] is such an axis with such a pad, though max(-1 + 0 + 1, 0) = 0 leaves the
    output no element: OpenVINO refuses it while folding ("pad_mode != op::PadMode::EDGE ||
    dim_lb >= 1"), a reading, as an audit of its bundle found, not a wrongly rejected defined case."""
    case = classify(Case(spec="openvino/Pad-12", data=np.zeros(0, np.int8), pads=[-1, 1], mode="edge"))
    assert case.kind == CaseKind.AMBIGUOUS and case.reason == "empty_axis_nonconstant"
    refused = judge(case, Outcome(error="Check 'pad_mode != op::PadMode::EDGE || dim_lb >= 1' failed"))
    assert refused.verdict == Verdict.AMBIGUOUS and refused.matched == ["empty_axis_nonconstant=reject"]
    assert judge(case, Outcome(np.zeros(0, np.int8))).verdict == Verdict.AMBIGUOUS
    # no pad > 0: nothing to take, defined
    cropped = classify(Case(spec="openvino/Pad-12", data=np.zeros(0, np.int8), pads=[-1, 0], mode="edge"))
    assert cropped.kind == CaseKind.DEFINED and cropped.expected.shape == (0,)
