"""The repaired twin: a must-reject case breaks exactly one rule, and a runtime's refusal of it
counts only if the same runtime, in the same placement, accepts the case with that rule undone."""
import json

import ml_dtypes
import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import breaks_one_rule, classify, repaired_twin
from padconf.cases.strategies import draw_cases
from padconf.core.dtypes import as_array
from padconf.judging.verdicts import Ruling, Verdict, confirm_refusal
from padconf.run.runner import Run, RunConfig
from padconf.spec.loader import get_spec

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def must_reject(spec_id, **kw):
    case = classify(Case(**{"spec": spec_id, "data": X, "pads": [0, 1, 0, 1], **kw}))
    assert case.kind == CaseKind.MUST_REJECT, case.reason
    return case


@pytest.mark.parametrize("spec_id, kw, rule", [
    ("onnx/Pad-18", dict(mode="wrap"), "modes"),
    ("onnx/Pad-11", dict(data=as_array([["a", "b"]], "string")), "dtypes"),
    ("onnx/Pad-19", dict(pads_type="int32"), "pads_index_types"),
    ("onnx/Pad-13", dict(axes=[1], pads=[1, 1]), "axes_input"),
    ("onnx/Pad-19", dict(axes=[0, 5], pads=[1, 2, 3, 4]), "axes_range"),
    ("onnx/Pad-19", dict(pads=[0, 1, 0]), "pads_length"),
    ("openvino/Pad-12", dict(mode="reflect", pads=[0, 3, 0, 0]), "mirror_beyond_dim"),
    ("openvino/Pad-12", dict(mode="reflect", data=np.zeros((0, 2), np.float32), pads=[0, 0, 0, 0]),
     "mirror_beyond_dim"),
])
def test_each_rule_has_a_twin_that_undoes_it_alone(spec_id, kw, rule):
    case = must_reject(spec_id, **kw)
    assert case.rule == rule
    twin = repaired_twin(case, get_spec(spec_id))
    assert isinstance(twin, Case) and twin.kind in (CaseKind.DEFINED, CaseKind.AMBIGUOUS), twin
    changed = {k for k, v in case.inputs_json().items() if twin.inputs_json()[k] != v}
    assert changed and changed <= {"data", "mode", "pads", "pads_type", "axes", "constant_value"}


def test_a_case_breaking_two_rules_has_no_twin():
    case = must_reject("onnx/Pad-18", mode="wrap", pads_type="int32")  # mode and pads' type
    assert "more than one rule" in repaired_twin(case, get_spec("onnx/Pad-18"))


@pytest.mark.parametrize("spec_id", ["onnx/Pad-13", "onnx/Pad-19", "openvino/Pad-1"])
def test_every_drawn_must_reject_case_breaks_exactly_one_rule(spec_id):
    spec = get_spec(spec_id)
    cases = [c for c in draw_cases(spec, 60, seed=3) if c.kind == CaseKind.MUST_REJECT]
    assert cases
    assert all(breaks_one_rule(c, spec) for c in cases)


def test_a_refusal_counts_only_when_the_twin_is_accepted():
    case = must_reject("onnx/Pad-18", mode="wrap")
    twin = repaired_twin(case, get_spec("onnx/Pad-18"))
    refused = Ruling(Verdict.PASS)
    assert confirm_refusal(refused, twin, Outcome(output=X), "ok").verdict == Verdict.PASS
    for outcome, status in ((Outcome(error="no kernel", not_implemented=True), "ok"),
                            (Outcome(error="bad"), "ok"), (Outcome(error="SIGSEGV"), "crash")):
        got = confirm_refusal(refused, twin, outcome, status)
        assert got.verdict == Verdict.INCONCLUSIVE and twin.id in got.detail
    assert confirm_refusal(refused, "no repair").verdict == Verdict.INCONCLUSIVE


def test_the_twin_finds_onnxruntimes_wrap_lenience_before_opset_19(tmp_path):
    """Pad-11, 13 and 18 allow "constant(default), reflect, edge": onnxruntime pads with mode wrap
    anyway. A wrap case on bfloat16 (no kernel) is refused, but so is its twin: inconclusive."""
    cases = [classify(Case(spec=f"onnx/Pad-{v}", data=X, pads=[0, 1, 0, 1], mode="wrap")) for v in (11, 13, 18)]
    cases.append(classify(Case(spec="onnx/Pad-18", data=X.astype(ml_dtypes.bfloat16), pads=[0, 1, 0, 1], mode="wrap")))
    run = Run(tmp_path / "run", RunConfig(runtimes=["onnxruntime"]), jobs=1)
    run.execute(run.plan(run.prepare(cases)))
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    verdicts = {(r["spec"], r["dtype"], r["placement"]): r["verdict"] for r in rows}
    for placement in ("inputs", "initializers", "folded"):
        for v in (11, 13, 18):
            assert verdicts[f"onnx/Pad-{v}", "float", placement] == "wrongly-accepted"
        assert verdicts["onnx/Pad-18", "bfloat16", placement] == Verdict.INCONCLUSIVE
    assert all("repaired twin" in r["detail"] for r in rows if r["verdict"] == Verdict.INCONCLUSIVE)
