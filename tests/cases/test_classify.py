"""Classification of hand-picked cases, each traced to what the spec documents say."""
import numpy as np

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.core.dtypes import as_array, scalar
from padconf.spec.loader import Spec, load_specs
from padconf.spec.reference import INTERPRETATIONS, pad

SPECS = {s.id: s for s in load_specs()}

X32 = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], np.float32)
X34 = np.arange(1, 13, dtype=np.int32).reshape(3, 4)


def case(spec, data=X32, pads=(0, 2, 0, 0), mode="constant", **kw):
    return classify(Case(spec=spec, data=data, pads=list(pads), mode=mode, **kw))


def test_every_ambiguity_of_every_spec_is_a_reference_interpretation():
    """classify only asks the reference: each ambiguity a spec lists must be a keyword of
    reference.pad with exactly the interpretations the spec names, each of them accepted."""
    listed = {a.name: a for spec in SPECS.values() for a in spec.ambiguities.values()}
    assert listed
    for name, ambiguity in listed.items():
        assert name in INTERPRETATIONS, name
        assert ambiguity.interpretations == INTERPRETATIONS[name], name
        for interpretation in ambiguity.interpretations:
            assert pad(X34, [0, 0, 0, 0], **{name: interpretation}).shape == (3, 4)


class TestMustReject:
    def test_pads_int32_before_tind(self):  # pads is tensor(int64) in every ONNX version
        assert case("onnx/Pad-18", pads_type="int32").kind == CaseKind.MUST_REJECT

    def test_string_not_in_pad_11(self):  # Pad-11: "Constrain input and output to only numeric types"
        data = as_array([["a"]], "string")
        assert case("onnx/Pad-11", data, [0, 1, 0, 0]).kind == CaseKind.MUST_REJECT
        assert case("onnx/Pad-13", data, [0, 1, 0, 0]).kind == CaseKind.DEFINED

    def test_wrap_before_19(self):
        assert case("onnx/Pad-18", mode="wrap").kind == CaseKind.MUST_REJECT
        assert case("onnx/Pad-19", X32, [2, 1, 1, 1], mode="wrap").kind == CaseKind.DEFINED

    def test_axes_before_18(self):
        assert case("onnx/Pad-13", pads=[0, 2], axes=[1]).kind == CaseKind.MUST_REJECT
        assert case("onnx/Pad-18", pads=[0, 2], axes=[1]).kind == CaseKind.DEFINED

    def test_axis_out_of_range(self):  # "Accepted range is [-r, r-1]"
        got = case("onnx/Pad-18", pads=[0, 2], axes=[2])
        assert got.kind == CaseKind.MUST_REJECT and "outside" in got.reason

    def test_pads_wrong_length(self):
        assert case("onnx/Pad-13", pads=[0, 2, 0]).kind == CaseKind.MUST_REJECT

    def test_float8_only_from_21(self):
        data = X32.astype(np.dtype("float16"))
        assert case("onnx/Pad-11", data).kind == CaseKind.DEFINED
        import ml_dtypes
        f8 = X32.astype(ml_dtypes.float8_e4m3fn)
        assert case("onnx/Pad-19", f8).kind == CaseKind.MUST_REJECT and case("onnx/Pad-21", f8).kind == CaseKind.DEFINED

    def test_openvino_reflect_bound(self):  # "must be not greater than data.shape[D] - 1"
        assert case("openvino/Pad-12", X34, [0, 3, 0, 0], "reflect").kind == CaseKind.DEFINED
        assert case("openvino/Pad-12", X34, [0, 4, 0, 0], "reflect").kind == CaseKind.MUST_REJECT
        assert case("openvino/Pad-12", X34, [0, 4, 0, 0], "symmetric").kind == CaseKind.DEFINED
        assert case("openvino/Pad-12", X34, [0, 5, 0, 0], "symmetric").kind == CaseKind.MUST_REJECT

    def test_forbidden_negative_pads_are_must_reject(self):  # the format's `negative_pads: forbidden`
        spec = SPECS["openvino/Pad-1"]
        doc = {**spec.doc, "rules": {**spec.doc["rules"], "negative_pads": {"value": "forbidden", "text": "x"}}}
        got = classify(Case(spec=spec.id, data=X34, pads=[-1, 0, 0, 0]), Spec(spec.id, spec.path, doc))
        assert got.kind == CaseKind.MUST_REJECT and "negative" in got.reason


class TestDefined:
    def test_openvino_crop_beyond_dim_is_empty(self):  # max(pads_begin + dim + pads_end, 0)
        got = case("openvino/Pad-12", X34, [-2, 0, -2, 0])
        assert got.kind == CaseKind.DEFINED and got.expected.shape == (0, 4)

    def test_openvino_mixed_sign_reflect_is_original_coordinates(self):
        got = case("openvino/Pad-12", X34, [2, -1, -1, 3], "reflect")
        assert got.kind == CaseKind.DEFINED and got.expected[0].tolist() == [10, 11, 12, 11, 10, 9]

    def test_string_default_is_empty_string(self):
        got = case("onnx/Pad-13", as_array([["a", "b"]], "string"), [0, 1, 0, 0])
        assert got.expected.tolist() == [["", "a", "b"]]

    def test_pad_2_value_is_a_float_attribute(self):  # "value: One float" (32-bit) whatever T is
        got = case("onnx/Pad-2", np.array([1.0]), [1, 0], constant_value=scalar(0.1, "double"))
        assert got.expected[0] == np.float64(np.float32(0.1)) != 0.1

    def test_constant_value_ignored_outside_constant_mode(self):
        got = case("onnx/Pad-18", X32, [0, 1, 0, 0], "edge", constant_value=scalar(9, "float"))
        assert got.kind == CaseKind.DEFINED and got.expected[0, 0] == np.float32(1.0)


class TestAmbiguous:
    def test_reflect_pad_equal_to_dim_is_example_2(self):
        got = case("onnx/Pad-18", X32, [0, 2, 0, 0], "reflect")
        assert got.kind == CaseKind.AMBIGUOUS and got.reason == "mirror_beyond_dim"
        assert got.interpretations["mirror_beyond_dim=reject"] is None
        assert np.array_equal(got.interpretations["mirror_beyond_dim=iterate"][:, :2], X32)

    def test_mixed_sign_reflect_onnx(self):
        got = case("onnx/Pad-18", X34, [2, -1, -1, 3], "reflect")
        assert got.kind == CaseKind.AMBIGUOUS and "mixed_sign_pads" in got.reason
        outs = [v for v in got.interpretations.values() if v is not None]
        assert len({o.tobytes() for o in outs}) == 2

    def test_mixed_sign_constant_is_not_ambiguous(self):
        assert case("onnx/Pad-18", X34, [2, -1, -1, 3], "constant").kind == CaseKind.DEFINED

    def test_repeated_axes(self):  # "Behavior is undefined if an axis is repeated."
        got = case("onnx/Pad-18", X32, [1, 2, 0, 0], axes=[0, 0])
        assert got.kind == CaseKind.AMBIGUOUS and got.reason == "repeated_axes"
        assert set(got.interpretations) == {"repeated_axes=reject", "repeated_axes=last_wins",
                                            "repeated_axes=accumulate"}

    def test_repeated_axes_with_same_pads_still_differs_from_reject(self):
        got = case("onnx/Pad-18", X32, [0, 0, 0, 0], axes=[1, 1])
        assert got.kind == CaseKind.AMBIGUOUS

    def test_edge_on_empty_axis(self):
        got = case("onnx/Pad-18", np.zeros((0, 2), np.float32), [1, 0, 0, 0], "edge")
        assert got.kind == CaseKind.AMBIGUOUS and got.reason == "empty_axis_nonconstant"

    def test_crop_beyond_dim_onnx(self):
        got = case("onnx/Pad-13", X32, [-2, 0, -2, 0])
        assert got.kind == CaseKind.AMBIGUOUS and got.reason == "crop_beyond_dim"

    def test_pad_1_negative_pads(self):
        got = case("onnx/Pad-1", X32, [0, -1, 0, 0])
        assert got.kind == CaseKind.AMBIGUOUS and "negative_pads" in got.reason

    def test_openvino_pad_1_negative_pads(self):
        # "T_INT: any non-negative integer type." may constrain the pads' type, not their values;
        # OpenVINO's reference tests (op_reference/pad.cpp) expect Pad-1 to crop as Pad-12 does,
        # so a negative pad is an undefined point of Pad-1, not a must-reject case.
        got = case("openvino/Pad-1", X34, [-1, 0, 0, 0])
        assert got.kind == CaseKind.AMBIGUOUS and got.reason == "negative_pads"
        assert got.interpretations["negative_pads=reject"] is None
        assert got.interpretations["negative_pads=crop"].tolist() == X34[1:].tolist()
        assert case("openvino/Pad-12", X34, [-1, 0, 0, 0]).kind == CaseKind.DEFINED

    def test_openvino_pad_value_with_edge(self):
        got = case("openvino/Pad-12", X34, [0, 1, 0, 0], "edge", constant_value=scalar(5, "int32"))
        assert got.kind == CaseKind.AMBIGUOUS and got.reason == "pad_value_in_non_constant_mode"


class TestPadsThatAddNothing:
    """A reflect pad of 0 adds nothing, and an axis that `axes` leaves out is not padded at all:
    ONNX's erratum (onnx/onnx PR #7700: "reflect padding must be strictly less than the input
    dimension size") bounds padding that adds elements, and "xi_begin is the number of pad values
    added at the beginning of axis `axes[i]`" pads only the listed axes."""

    def test_reflect_dim_with_zero_input(self):  # onnxruntime's Pad_Reflect_DimWithZeroInput
        got = case("onnx/Pad-18", np.zeros((2, 0), np.float32), [1, 0, 1, 0], "reflect")
        assert got.kind == CaseKind.DEFINED and got.expected.shape == (4, 0)

    def test_reflect_identity_with_empty_axes_on_zero_size_dims(self):
        got = case("onnx/Pad-18", np.zeros((0, 0, 2, 1), np.float32), [], "reflect", axes=[])
        assert got.kind == CaseKind.DEFINED and got.expected.shape == (0, 0, 2, 1)

    def test_reflect_axes_leave_out_the_zero_size_axis(self):
        got = case("onnx/Pad-19", np.zeros((2, 0), np.float32), [1, 1], "reflect", axes=[0])
        assert got.kind == CaseKind.DEFINED and got.expected.shape == (4, 0)

    def test_reflect_pad_of_one_on_zero_size_axis_still_reaches_the_bound(self):
        got = case("onnx/Pad-18", np.zeros((2, 0), np.float32), [0, 1, 0, 0], "reflect")
        assert got.kind == CaseKind.AMBIGUOUS and "mirror_beyond_dim" in got.reason

    def test_openvino_reflect_pad_zero_on_zero_size_axis_breaks_the_bound_as_written(self):
        # "pads_begin[D] and pads_end[D] must be not greater than data.shape[D] – 1 for any valid D"
        got = case("openvino/Pad-12", np.zeros((2, 0), np.float32), [1, 0, 1, 0], "reflect")
        assert got.kind == CaseKind.MUST_REJECT and got.rule == "mirror_beyond_dim"
        assert SPECS["openvino/Pad-12"].rule("mirror_bound_scope") == "every_pad"


class TestPadOneSideCropPastTheAxisOnTheOther:
    """[inf], pads [3, -2]: "add or remove (if negative) at the beginning and end of each axis"
    never says whether the 2 removed count in the padded axis (leaving 2 constants) or in the
    original one, which holds 1 element (crop_beyond_dim). The same pads reach the same points
    in constant and edge mode."""

    def test_constant_mode_is_ambiguous_like_edge(self):
        inf = np.float32([np.inf])
        const, edge = case("onnx/Pad-18", inf, [3, -2]), case("onnx/Pad-18", inf, [3, -2], "edge")
        assert const.kind == edge.kind == CaseKind.AMBIGUOUS
        assert {"mixed_sign_pads", "crop_beyond_dim"} <= set(const.reason.split(",")) & set(edge.reason.split(","))
        assert const.interpretations["mixed_sign_pads=original_coordinates,crop_beyond_dim=reject"].tolist() == [0, 0]
        assert const.interpretations["mixed_sign_pads=crop_first,crop_beyond_dim=reject"] is None

    def test_constant_mode_crop_within_the_axis_stays_defined(self):  # both orders agree
        got = case("onnx/Pad-18", np.float32([1, 2, 3]), [2, -1])
        assert got.kind == CaseKind.DEFINED and got.expected.tolist() == [0, 0, 1, 2]

    def test_openvino_pad_12_defines_it(self):
        # mixed pads examples (original coordinates) and max(pads_begin + dim + pads_end, 0)
        got = case("openvino/Pad-12", np.float32([np.inf]), [3, -2])
        assert got.kind == CaseKind.DEFINED and got.expected.tolist() == [0, 0]
