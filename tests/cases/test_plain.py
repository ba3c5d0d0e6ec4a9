"""Every draw holds, for each spec version and each of its rules, a must-reject case that breaks
that rule alone on a plain base, and pads beyond 32 bits that cancel to a small output. The
rules each version has are derived here from the spec documents, not from
padconf.cases.plain."""
import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify, repaired_twin
from padconf.cases.plain import fixed_cases, plain, plain_base, plain_violations, wide_pads
from padconf.cases.strategies import PROFILES, draw_cases
from padconf.core.dtypes import ALL_DTYPES
from padconf.judging.verdicts import Verdict, judge
from padconf.spec.loader import load_specs
from padconf.spec.reference import MODES

SPECS = {s.id: s for s in load_specs()}
DATA = np.array([1.0, 2.0, 3.0], np.float32)


def rules_to_break(spec) -> list[tuple[str, str | None]]:
    """(rule, the mode it takes) for every way to break one rule of ``spec``'s document."""
    doc = spec.doc
    out = [("modes", m) for m in MODES if m not in doc["modes"]]
    if {d for d in ALL_DTYPES if not d.startswith("complex") and d != "string"} - set(doc["dtypes"]):
        out.append(("dtypes", None))
    if doc["operands"]["pads"]["via"] == "input" and "int32" not in doc["operands"]["pads"]["index_types"]:
        out.append(("pads_index_types", None))
    out.append(("pads_length", None))
    if "constant_value" in doc["rules"]:
        out.append(("constant_value", None))
    out.append(("axes_range", None) if "axes" in doc["operands"] else ("axes_input", None))
    if doc["rules"]["mirror_beyond_dim"]["value"] != "unstated":  # or a framework's pad_bound, checked first
        bound = doc["rules"].get("pad_bound", {}).get("value", {})
        out += [("pad_bound" if m in bound else "mirror_beyond_dim", m) for m in ("reflect", "symmetric")
                if m in doc["modes"]]
    return out


@pytest.mark.parametrize("spec_id", sorted(SPECS))
def test_every_rule_has_a_plain_violation_in_every_draw(spec_id):
    spec = SPECS[spec_id]
    for seed in range(5):
        for budget in (2, PROFILES["ci"]["max_examples"] // 8):  # the fixed cases do not depend on it
            drawn = [c for c in draw_cases(spec, budget, seed) if "plain-violation" in c.tags]
            for rule, mode in rules_to_break(spec):
                hits = [c for c in drawn if c.kind == CaseKind.MUST_REJECT and c.rule == rule
                        and (mode is None or c.mode == mode)]
                assert hits, f"{spec_id} seed {seed}: no plain violation of {rule} {mode or ''}"
                for case in hits:
                    twin = repaired_twin(case, spec)
                    assert isinstance(twin, Case) and twin.kind == CaseKind.DEFINED, (case.id, twin)
                    assert plain(twin) and twin.data.dtype != np.complex64 and 0 not in twin.data.shape


@pytest.mark.parametrize("spec_id", ["onnx/Pad-11", "onnx/Pad-13", "onnx/Pad-18"])
def test_wrap_before_pad_19_on_the_worked_example(spec_id):
    """onnxruntime accepts wrap in Pad-11/13/18 models; the draw must hold a wrap case that
    breaks nothing else, so that accepting it is a finding at every seed."""
    spec = SPECS[spec_id]
    wrap = [c for c in plain_violations(spec) if c.mode == "wrap"]
    assert len(wrap) == 1 and wrap[0].rule == "modes" and wrap[0].data.shape == (3, 2)
    assert wrap[0].pads == [0, 2, 0, 0] and wrap[0].axes is None  # Example 1's input
    twin = repaired_twin(wrap[0], spec)
    assert twin.kind == CaseKind.DEFINED  # Example 1's print:
    assert twin.expected.tolist() == np.float32([[0, 0, 1.0, 1.2], [0, 0, 2.3, 3.4], [0, 0, 4.5, 5.7]]).tolist()
    assert judge(wrap[0], Outcome(output=twin.expected)).verdict == Verdict.WRONGLY_ACCEPTED


def test_openvino_has_no_worked_float_example_so_the_base_is_a_small_float32_case():
    base = plain_base(SPECS["openvino/Pad-12"])
    assert base.origin == "plain:float32" and base.dtype == "float" and plain(base)
    assert classify(base, SPECS["openvino/Pad-12"]).kind == CaseKind.DEFINED


def wide(spec_id, pads, mode="constant", data=DATA):
    return next(c for c in wide_pads(SPECS[spec_id]) if c.pads == pads and c.mode == mode
                and c.data.shape == data.shape)


class TestPadsBeyond32Bits:
    """OpenVINO Pad-12: "Padded output tensor of type T with dimensions max(pads_begin[D] +
    data.shape[D] + pads_end[D], 0)"; a pad "Specifies the number of padding elements to add at
    the beginning of each axis", and "Negative value means cropping". pads_begin 2**32 + 1 adds
    2**32 + 1 constants before [1, 2, 3] and pads_end -2**32 crops 2**32 elements from the end:
    4 elements remain, all of them padding (the data sits at 2**32 + 1 .. 2**32 + 3)."""

    def test_begin_2_pow_32_plus_1_end_minus_2_pow_32_gives_four_constants(self):
        case = wide("openvino/Pad-12", [2**32 + 1, -(2**32)])
        assert case.kind == CaseKind.DEFINED and case.expected.tolist() == [0, 0, 0, 0]
        assert {"pads-beyond-int32", "wide-pads"} <= set(next(
            c for c in draw_cases(SPECS["openvino/Pad-12"], 1, 0) if c.id == case.id).tags)
        # pads cut to 32 bits (begin 1, end 0) give [0, 1, 2, 3]: a wrong value, found
        assert judge(case, Outcome(output=np.float32([0, 1, 2, 3]))).verdict == Verdict.MISMATCH

    def test_end_2_pow_32_plus_1_pads_by_one_only_when_cut_to_32_bits(self):
        case = wide("openvino/Pad-12", [-(2**32), 2**32 + 1])
        assert case.expected.tolist() == [0, 0, 0, 0]
        assert judge(case, Outcome(output=np.float32([1, 2, 3, 0]))).verdict == Verdict.MISMATCH

    def test_edge_mode_takes_the_first_element_for_every_position(self):
        # original coordinates (Pad-12's mixed pads examples): every output position lies before the data
        assert wide("openvino/Pad-12", [2**32 + 1, -(2**32)], "edge").expected.tolist() == [1, 1, 1, 1]

    def test_pad_of_2_pow_31_is_not_a_negative_int32(self):
        assert wide("openvino/Pad-12", [2**31, -(2**31)]).expected.tolist() == [0, 0, 0]

    def test_onnx_reads_the_same_pads_two_ways_and_neither_is_the_32_bit_answer(self):
        # ONNX's "add or remove (if negative)" never says whether the removal counts in the padded
        # axis or the original one (mixed_sign_pads; crop_beyond_dim under crop_first)
        case = wide("onnx/Pad-18", [2**32 + 1, -(2**32)])
        assert case.kind == CaseKind.AMBIGUOUS
        outputs = {tuple(v.tolist()) if v is not None else None for v in case.interpretations.values()}
        assert outputs == {(0, 0, 0, 0), None}
        assert judge(case, Outcome(output=np.float32([0, 1, 2, 3]))).verdict == Verdict.UNEXPLAINED


class TestPadsWhoseSumOverflowsInt64:
    def test_running_sum_overflows_yet_the_total_fits(self):
        # no document bounds the arithmetic of pads_begin + data.shape + pads_end: the total is 3
        case = wide("openvino/Pad-12", [2**63 - 1, -(2**63 - 1)])
        assert case.kind == CaseKind.DEFINED and case.expected.tolist() == [0, 0, 0]
        assert "pads-sum-overflows-int64" in classify_tags(case)

    def test_total_beyond_int64_on_an_empty_tensor_is_too_large_to_check(self):
        # a dimension of 2**63 + 3 fits no tensor and no document says what happens: padconf
        # cannot say the output; a crash or a hang is still a failure, any other answer inconclusive
        case = wide("openvino/Pad-12", [0, 2**62, 0, 2**62], data=np.zeros((0, 3), np.float32))
        assert case.kind == CaseKind.TOO_LARGE
        assert judge(case, Outcome(output=np.zeros((0, 3), np.float32))).verdict == Verdict.INCONCLUSIVE


def classify_tags(case):
    from padconf.cases.edge_classes import edge_classes
    return edge_classes(case, SPECS[case.spec])


@pytest.mark.parametrize("spec_id", sorted(SPECS))
def test_fixed_cases_are_in_every_draw_and_kind_filter(spec_id):
    spec = SPECS[spec_id]
    fixed = {c.id for c in fixed_cases(spec)}
    assert fixed <= {c.id for c in draw_cases(spec, 1, seed=3)}
    rejects = draw_cases(spec, 1, seed=3, kind=CaseKind.MUST_REJECT)
    assert {c.id for c in plain_violations(spec)} <= {c.id for c in rejects}
    assert all(c.kind == CaseKind.MUST_REJECT for c in rejects)
