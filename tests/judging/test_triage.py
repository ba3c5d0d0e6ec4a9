"""Triage classes: every distinct failure says whether it is a Pad bug to file, and of what kind,
or coverage, a runtime's documented policy, or known upstream."""
import ml_dtypes
import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.examples import example_cases
from padconf.execution.worker import Worker
from padconf.judging.records import judged_row
from padconf.judging.triage import PAD_BUGS, Triage, triage, upstream_facts
from padconf.judging.verdicts import control_fails, judge
from padconf.minimize.minimize import minimize
from padconf.report.report import failures, markdown
from padconf.run.rundir import attach_controls, read_jsonl
from padconf.run.runner import Run, RunConfig
from padconf.spec.loader import get_spec

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def row(verdict_case, outcome, status="ok", runtime="onnxruntime"):
    return judged_row(runtime, "inputs", verdict_case, outcome, status)


def test_every_upstream_fact_was_read_by_hand_and_quotes_its_source():
    facts = upstream_facts()
    assert facts
    for fact in facts:
        assert fact.link.startswith("https://") and "read by hand" in fact.checked and fact.quote


def test_onnxruntime_below_opset_7_is_its_documented_policy_with_the_real_runtime():
    """ONNX Runtime's compatibility page: "All versions of ONNX Runtime support ONNX opsets from
    ONNX v1.2.1+ (opset version 7 and higher)." Its Pad-1 refusal is that policy, not a bug."""
    case = next(c for c in example_cases(get_spec("onnx/Pad-1")) if c.origin == "example:example_constant")
    worker = Worker("onnxruntime")
    try:
        (outcome, status), = worker.run([case], "initializers")
    finally:
        worker.close()
    got = row(case, outcome, status)
    assert got["verdict"] == "not-implemented"
    found, fact = triage(got)
    assert found == Triage.POLICY and "opset version 7 and higher" in fact.quote
    # the same refusal at Pad-13 for bfloat16 is coverage
    bf16 = classify(Case(spec="onnx/Pad-13", data=X.astype("float16"), pads=[0, 1, 0, 1]))
    assert triage(row(bf16, Outcome(error="no kernel", not_implemented=True)))[0] == Triage.NOT_IMPLEMENTED


def test_each_failure_verdict_has_its_class():
    defined = classify(Case(spec="onnx/Pad-19", data=X, pads=[0, 1, 0, 1]))
    must_reject = classify(Case(spec="onnx/Pad-18", data=X, pads=[0, 1, 0, 1], mode="wrap"))
    wrong = defined.expected.copy()
    wrong[0, 0] = 7
    zero_sign = classify(Case(spec="onnx/Pad-19", data=X, pads=[0, 1, 0, 1], constant_value=np.float32(-0.0)))
    planted = {
        Triage.WRONG_VALUE: row(defined, Outcome(wrong)),
        Triage.NAN_PAYLOAD_OR_ZERO_SIGN: row(zero_sign, Outcome(np.abs(zero_sign.expected))),
        Triage.CRASH: row(defined, Outcome(error="SIGSEGV"), "crash"),
        Triage.HANG: row(defined, Outcome(error="no answer"), "timeout"),
        Triage.WRONGLY_REJECTED: row(defined, Outcome(error="bad pads")),
        # accepted with what the mode it lacks gives (Pad-19's wrap): a reading, so lenient
        Triage.LENIENT: row(must_reject, Outcome(classify(must_reject.with_(spec="onnx/Pad-19")).expected)),
        Triage.NOT_IMPLEMENTED: row(defined, Outcome(error="no kernel", not_implemented=True)),
    }
    for expected, got in planted.items():
        assert triage(got)[0] == expected, (expected, got["verdict"], got["detail"])
    assert set(PAD_BUGS) == set(planted) - {Triage.NOT_IMPLEMENTED, Triage.LENIENT}
    summary = markdown(list(planted.values()), [], [])
    assert "5 of them not yet triaged (padconf minimize tells which are Pad bugs to file)" in summary
    assert "| onnxruntime | onnx/Pad-19 | float |" in summary  # the support matrix: coverage, not bugs
    assert {g["triage"] for g in failures(list(planted.values()))} == set(planted)


@pytest.mark.slow
def test_a_failure_whose_identity_control_fails_too_is_not_pad_specific(tmp_path):
    """OpenVINO's ONNX frontend returns int64 2**40 + 5 as 5 through Pad and through Identity
    alike: a limit of the runtime, not a Pad bug. onnxruntime's refusal of a reflect crop to zero
    has a control that passes: it stays a Pad bug."""
    big = classify(Case(spec="onnx/Pad-19", data=np.array([2**40 + 5, 3], np.int64), pads=[0, 1]))
    crop = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[-3, 0], mode="reflect"))
    run = Run(tmp_path / "run", RunConfig(runtimes=["openvino-onnx", "onnxruntime"]), jobs=1)
    run.execute(run.plan(run.prepare([big, crop])))
    cases = {c["id"]: c for c in read_jsonl(tmp_path / "run" / "cases.jsonl")}
    rows = attach_controls(read_jsonl(tmp_path / "run" / "results.jsonl"), tmp_path / "run", cases)
    assert not any("control" in r for r in read_jsonl(tmp_path / "run" / "results.jsonl"))  # rows stay as written
    ov = next(r for r in rows
              if r["runtime"] == "openvino-onnx" and r["case_id"] == big.id and r["placement"] == "inputs")
    assert ov["verdict"] == "mismatch" and ov["control"]["verdict"] == "mismatch" and ov["control"]["fails_too"]
    assert triage(ov)[0] == Triage.NOT_PAD_SPECIFIC
    ort = [r for r in rows if r["runtime"] == "onnxruntime" and r["case_id"] == crop.id]
    assert ort and all(r["verdict"] == "wrongly-rejected" and r["control"]["verdict"] == "pass" for r in ort)
    assert triage(ort[0])[0] == Triage.WRONGLY_REJECTED
    # the bundle of the OpenVINO failure says so too, from the run's control of the original case
    summaries = minimize(str(tmp_path / "run"), "openvino-onnx", tmp_path / "bundles", time_limit=2)
    reports = [(s["dir"] / "REPORT.md").read_text() for s in summaries if s["dir"]]
    assert any("Triage: **not Pad-specific**" in r and "int64" in r.splitlines()[0] for r in reports)


def _on(runtime, case, placement="inputs"):
    worker = Worker(runtime)
    try:
        (outcome, status), = worker.run([case], placement)
    finally:
        worker.close()
    return row(case, outcome, status, runtime)


def test_openvino_computing_float64_and_int64_in_32_bits_is_its_cpu_devices_documented_policy():
    """OpenVINO's CPU device page lists f32, bf16, f16 and i32 as its inference precisions, no f64
    and no i64: a float64 Pad comes back rounded to float32, an int64 one saturated to int32.
    Such a mismatch is marked narrowed-to-32-bit, and that is policy, not a Pad bug."""
    double = classify(Case(spec="onnx/Pad-19", data=np.array([[73.85, 0.1]]), pads=[0, 1, 0, 0]))
    got = _on("openvino-onnx", double)
    assert got["verdict"] == "mismatch" and got["difference"] == "narrowed-to-32-bit"
    assert "every value as computed in float32" in got["detail"]
    found, fact = triage(got)
    assert found == Triage.POLICY and "Integer data types: i32" in fact.quote
    big = classify(Case(spec="onnx/Pad-19", data=np.array([2**40, -5], dtype=np.int64), pads=[1, 0]))
    got = _on("openvino-onnx", big)
    assert got["difference"] == "narrowed-to-32-bit" and triage(got)[0] == Triage.POLICY


def test_values_that_are_not_the_32_bit_conversion_stay_a_wrong_value():
    """OpenVINO converts float64 to float32 saturating: infinity comes back as float32's largest
    value through Relu and Neg alike, so that is narrowing too. Garbage in one element, or a value
    no conversion gives, stays a Pad bug, though the dtype is float64 on OpenVINO."""
    case = classify(Case(spec="onnx/Pad-19", data=np.array([np.inf, 0.5]), pads=[0, 1]))
    saturated = row(case, Outcome(np.array([3.4028234663852886e38, 0.5, 0.0])), runtime="openvino-onnx")
    assert saturated["difference"] == "narrowed-to-32-bit" and triage(saturated)[0] == Triage.POLICY
    for wrong in ([np.inf, 0.5, 1e-310], [np.inf, 0.25, 0.0]):
        got = row(case, Outcome(np.array(wrong)), runtime="openvino-onnx")
        assert got["difference"] == "values" and triage(got)[0] == Triage.WRONG_VALUE


@pytest.mark.parametrize("dtype, value, got", [
    (np.int32, 16777217, 16777216), (np.int32, 2147483647, -2147483648), (np.int64, 2147483647, -2147483648),
    (np.uint32, 4294967295, 0), (np.int64, 2**40 + 1, 2**40)])
def test_an_integer_passed_through_float32_is_a_wrong_value_no_integer_limit_explains(dtype, value, got):
    """OpenVINO's CPU Pad passes an integer pad value through float32 (audits IV and V): on int32,
    which no 64-bit policy covers, and on int64 values that fit in int32. The difference says so,
    and it stays a Pad bug: no conversion to a narrower integer type gives it."""
    case = classify(Case(spec="onnx/Pad-19", data=np.array([1], dtype), pads=[0, 1],
                         constant_value=np.array(value, dtype)))
    wrong = row(case, Outcome(np.array([1, got], dtype)), runtime="openvino-onnx")
    assert wrong["difference"] == "integer-through-float32" and "passed through float32" in wrong["detail"]
    assert triage(wrong)[0] == Triage.WRONG_VALUE
    other = row(case, Outcome(np.array([1, 7], dtype)), runtime="openvino-onnx")
    assert other["difference"] == "values"


def test_onnx_references_refusal_of_negative_pads_is_known_upstream_with_the_real_evaluator():
    """onnx/onnx PR #8199: "The reference passed pads straight to ``numpy.pad``, which rejects
    negative widths." Not in the onnx release padconf runs, and not a new bug to file."""
    crop = classify(Case(spec="onnx/Pad-19", data=X, pads=[0, -1, 0, 0]))
    got = _on("onnx-reference", crop)
    assert got["verdict"] == "wrongly-rejected"
    found, fact = triage(got)
    assert found == Triage.KNOWN_UPSTREAM and fact.link.endswith("/onnx/onnx/pull/8199")


@pytest.mark.slow
def test_a_lenience_an_identity_model_shares_is_not_pad_specific_with_the_real_runtimes():
    """Pad-11's T lists no bfloat16; nor does Identity-11's (onnx's schema). onnx's reference
    evaluator runs both models, so its acceptance of the Pad model says nothing of Pad: the
    control, an Identity model with the same broken rule, is accepted alike. onnxruntime refuses
    the Identity model, so its control passes and a lenience of its would stay a Pad bug."""
    lenient = classify(Case(spec="onnx/Pad-11", data=X.astype("float32").astype(ml_dtypes.bfloat16),
                            pads=[0, 1, 0, 1]))
    assert lenient.kind == "must-reject" and lenient.rule == "dtypes"
    control = lenient.control()
    assert control.op == "Identity" and control.kind == "must-reject"
    got = _on("onnx-reference", lenient)
    assert got["verdict"] == "wrongly-accepted"
    (outcome, status), = _runs("onnx-reference", control)
    assert judge(control, outcome, status).verdict == "wrongly-accepted"
    (outcome, status), = _runs("onnxruntime", control)
    assert judge(control, outcome, status).verdict == "pass" and outcome.error
    # Identity-13 lists bfloat16: at Pad-13 the control is the plain one, defined
    assert classify(Case(spec="onnx/Pad-13", data=np.zeros(2, ml_dtypes.bfloat16), pads=[1, 0])).control().kind \
        == "defined"


def _runs(runtime, case, placement="inputs"):
    worker = Worker(runtime)
    try:
        return list(worker.run([case], placement))
    finally:
        worker.close()


def test_a_failure_whose_control_fails_in_another_way_is_not_pad_specific_either(tmp_path):
    """OpenVINO's ONNX frontend reads an empty initializer as a scalar: Pad-18 folded on shape [0]
    data is refused ("Indices rank ..."), and Identity folded on it returns shape [] instead of
    [0]. The control fails otherwise than the Pad, but it fails: nothing is left to blame on Pad."""
    empty = classify(Case(spec="onnx/Pad-18", data=np.zeros(0, np.float32), pads=[0, 0]))
    assert empty.kind == "defined"
    got = _on("openvino-onnx", empty, "folded")
    assert got["verdict"] == "wrongly-rejected"
    (outcome, status), = _runs("openvino-onnx", empty.control(), "folded")
    control = judge(empty.control(), outcome, status)
    assert control.verdict == "mismatch" and "shape [] instead of [0]" in control.detail
    assert triage({**got, "control": {"verdict": control.verdict, "fails_too": control_fails(control.verdict)}})[0] \
        == Triage.NOT_PAD_SPECIFIC


def test_the_native_openvino_control_returns_its_data_not_freed_memory():
    """A Parameter wired straight to the Result hands back the input tensor's own memory: the
    adapter freed its input tensors before reading the output, and a [5, 109] control came back
    as garbage (-3.7e9 for 0.69), marking OpenVINO's heap crashes "not Pad-specific"."""
    data = np.random.default_rng(0).random((5, 109)).astype(np.float32)
    for spec, runtime in (("openvino/Pad-12", "openvino"), ("onnx/Pad-19", "openvino-onnx")):
        control = classify(Case(spec=spec, data=data, pads=[0, 0, 0, 0])).control()
        (outcome, status), = _runs(runtime, control)
        assert judge(control, outcome, status).verdict == "pass", runtime


@pytest.mark.slow
def test_empty_pads_or_axes_baked_in_get_a_control_of_their_own():
    """The same frontend reads an empty axes or pads initializer as a scalar: Pad-18 folded on
    [1.] with pads [] and axes [] is refused ("Indices rank and data rank are required to be
    equal. Got: 0 and: 1"), and the data's control passes, its data not being empty. The empty
    axes (int64) through Identity, folded, come back as shape []: not Pad-specific. With the
    pads fed at run time nothing empty is baked: the data's and the values' controls only."""
    from padconf.judging.verdicts import control_record
    case = classify(Case(spec="onnx/Pad-18", data=np.ones(1, np.float32), pads=[], axes=[]))
    assert case.kind == "defined"
    got = _on("openvino-onnx", case, "folded")
    assert got["verdict"] == "wrongly-rejected" and "Indices rank" in got["error"]
    assert [(operand, where) for operand, _, where in case.controls("folded")] == \
        [("data", "folded"), ("values", "folded"), ("pads", "folded"), ("axes", "folded")]
    assert [operand for operand, _, _ in case.controls("inputs")] == ["data", "values"]
    worker = Worker("openvino-onnx")
    try:
        control = control_record(case, "folded", worker.run_alone)
    finally:
        worker.close()
    assert control["operand"] == "pads" and control["fails_too"] and "shape [] instead of [0]" in control["detail"]
    assert triage({**got, "control": control})[0] == Triage.NOT_PAD_SPECIFIC
    # Pad-1 takes its pads as an attribute: nothing empty to bake but the data (and its values' control)
    assert [operand for operand, _, _ in classify(Case(spec="onnx/Pad-1", data=np.ones(1, np.float32),
                                                       pads=[0, 0])).controls("folded")] == ["data", "values"]


def test_an_undefined_point_answered_but_for_the_sign_of_a_zero_is_low_severity_not_a_wrong_value():
    """Pads that pad one end and crop the other past the axis are undefined; a runtime whose
    answer is a reading's but for -0.0 come back as +0.0 changed a zero's sign, as it does on
    defined inputs: the same low-severity class. Another value is a wrong value."""
    case = classify(Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0, 3.0], np.float32), pads=[2, -4],
                         constant_value=np.array(-0.0, np.float32)))
    assert case.kind == "ambiguous"
    signs = row(case, Outcome(np.array([0.0], np.float32)))
    assert signs["verdict"] == "unexplained" and triage(signs)[0] == Triage.NAN_PAYLOAD_OR_ZERO_SIGN
    wrong = row(case, Outcome(np.array([5.0], np.float32)))
    assert wrong["verdict"] == "unexplained" and triage(wrong)[0] == Triage.WRONG_VALUE


def test_a_values_control_failing_does_not_excuse_a_refused_default_the_pad_takes_written_out():
    """OpenVINO's frontend refuses string data without constant_value ("Unknown type") and pads it
    with '' written out; its values control (Reshape, Concat, Tile of strings) fails otherwise. The
    Pad moved the same values with the default written out: a refused default, not the path's."""
    from padconf.judging.triage import Triage, triage
    row = {"runtime": "openvino-onnx", "spec": "onnx/Pad-13", "verdict": "not-implemented", "mode": "constant",
           "dtype": "string", "placement": "inputs", "error": "Unknown type",
           "experiments": {"explicit_default": {"constant_value": "", "verdict": "pass"}}}
    failing = {"operand": "values", "fails_too": True, "verdict": "not-implemented"}
    assert triage({**row, "control": failing})[0] == Triage.WRONGLY_REJECTED
    assert triage({**row, "control": {**failing, "operand": "data"}})[0] == Triage.NOT_PAD_SPECIFIC
    assert triage({**row, "experiments": {}, "control": failing})[0] == Triage.NOT_PAD_SPECIFIC


def test_openvinos_constant_12_refusal_is_another_components_bug_not_pads():
    """OpenVINO's ONNX frontend refuses Constant-12's value_ints before the Pad is converted (a
    repro in its own API, docs/findings.md): a Pad-11 case whose pads come from such nodes (built
    at opset 12) is refused for another component's bug, to file there; the same refusal of a
    Pad-11 with Constant nodes written with value, or on another runtime, stays a Pad failure."""
    graph = "Pad(constant), pads from Constant nodes' value_ints, before Conv-2d"
    row = {"runtime": "openvino-onnx", "verdict": "wrongly-rejected", "spec": "onnx/Pad-11", "mode": "constant",
           "dtype": "float", "placement": "inputs", "origin": "generated", "difference": None, "graph": graph,
           "error": "anything", "pads": [1, 1]}
    found, fact = triage(row)
    assert found == Triage.OTHER_COMPONENT and fact.link.endswith("/openvinotoolkit/openvino/pull/5450")
    assert found not in PAD_BUGS
    assert triage({**row, "runtime": "openvino-onnx[threads=1]"})[0] == Triage.OTHER_COMPONENT
    for other in ({"graph": "Pad(constant), pads from Constant nodes, before Conv-2d"}, {"spec": "onnx/Pad-13"},
                  {"runtime": "onnxruntime"}, {"graph": None}):
        assert triage({**row, **other})[0] == Triage.WRONGLY_REJECTED, other


def _placed(case, outcome, placement, runtime):
    return judged_row(runtime, placement, case, outcome, "ok")


def test_known_upstream_issues_match_the_cases_features_not_its_words():
    """A failure that a known issue's mechanism explains is known upstream whatever its error
    says, and one the issue's features do not fit is not: IREE's refusal of negative constant pads
    (iree-org/iree#19935) with the pads as constants (initializers, folded, or made by Constant
    nodes in any placement: audit IV's iree 15 was filed as a bug), not fed at run time;
    OpenVINO's wrong answer for pads beyond the 32-bit range (openvinotoolkit/openvino#35823), not
    a crash on them."""
    from padconf.cases.context import Context, Producer
    crop = classify(Case(spec="onnx/Pad-19", data=X, pads=[0, -1, 0, 1]))
    made = classify(crop.with_(context=Context(producer=Producer.CONSTANT_NODE)))
    refused = Outcome(error="any words at all")
    for case, placement, known in ((crop, "initializers", True), (crop, "folded", True), (crop, "inputs", False),
                                   (made, "inputs", True)):
        found, fact = triage(_placed(case, refused, placement, "iree"))
        assert (found == Triage.KNOWN_UPSTREAM) == known, (case.graph, placement)
        assert not known or fact.link.endswith("iree-org/iree/issues/19935")
    wide = classify(Case(spec="openvino/Pad-12", data=np.array([1, 2, 3], np.float32),
                         pads=[2 ** 32 - 2, -(2 ** 32) + 12]))
    wrong = _placed(wide, Outcome(np.array([3, 0, 0], np.float32)), "folded", "openvino")
    found, fact = triage(wrong)
    assert found == Triage.KNOWN_UPSTREAM and fact.link.endswith("openvino/issues/35823")
    crashed = judged_row("openvino", "folded", wide, Outcome(error="SIGSEGV"), "crash")
    assert triage(crashed)[0] == Triage.CRASH  # memory-unsafe: a bug of its own, never the known issue
    narrow = classify(Case(spec="openvino/Pad-12", data=np.array([1, 2, 3], np.float32), pads=[2, -1]))
    assert triage(_placed(narrow, Outcome(np.array([9, 9, 9, 9], np.float32)), "folded", "openvino"))[0] \
        == Triage.WRONG_VALUE
