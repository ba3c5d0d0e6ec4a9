"""Triage by experiment: before a minimized failure is put down to a policy, a
missing kernel, or judged where its input is undefined, padconf minimize runs the case that would
show otherwise (padconf.minimize.probes.experiments), on the real runtimes."""
import json

import numpy as np
import pytest

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core.vocabulary import Placement
from padconf.judging.triage import Triage, parse_facts, triage
from padconf.minimize.probes.experiments import documented_default


def minimized(tmp_path, case: Case, runtime: str) -> str:
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(classify(case).to_json()) + "\n")
    assert main(["minimize", str(path), "--runtime", runtime, "--out", str(tmp_path / "b"), "--time-limit", "5"]) == 0
    return (tmp_path / "b" / "REPORT.md").read_text()


def test_a_refusal_the_same_kernel_gives_at_a_supported_opset_is_no_policy(tmp_path):
    """onnxruntime supports opsets 7 and later; at Pad-2 (opset 2) its refusal of rank-0 data was
    put down to that policy, yet stamped with opset 7 (Pad-2 still in force) it refuses alike."""
    pytest.importorskip("onnxruntime")
    report = minimized(tmp_path, Case(spec="onnx/Pad-2", data=np.array(1.5, np.float32), pads=[]), "onnxruntime")
    assert "Triage: **wrongly rejected**" in report
    assert "stamped with opset 7, which it supports" in report


def test_what_the_policy_explains_stays_policy():
    row = {"runtime": "onnxruntime", "spec": "onnx/Pad-1", "verdict": "not-implemented", "mode": "constant",
           "dtype": "float", "placement": "inputs", "error": "Could not find an implementation for Pad(1)"}
    assert triage(row)[0] == Triage.POLICY
    assert triage({**row, "experiments": {"beyond_policy": {"opset": 7}}})[0] == Triage.NOT_IMPLEMENTED


@pytest.mark.slow
def test_a_refused_omitted_default_is_a_bug_where_the_default_written_out_works(tmp_path):
    """Pad-13: constant_value "defaults to 0, empty string, or False". OpenVINO's ONNX frontend
    says "Unknown type" for string data without it, and pads with an explicit ''."""
    pytest.importorskip("openvino")
    report = minimized(tmp_path, Case(spec="onnx/Pad-13", data=np.array(["a", "b"], dtype=object), pads=[1, 0]),
                       "openvino-onnx")
    assert report.startswith("# Pad rejects an omitted constant_value")  # every mode refuses it: the title names none
    assert "Triage: **wrongly rejected**" in report and "documented default ('')" in report


@pytest.mark.parametrize(("case", "default"), [
    (Case(spec="onnx/Pad-13", data=np.array(["a"], dtype=object), pads=[0, 0]), ""),
    (Case(spec="onnx/Pad-18", data=np.array([True]), pads=[0, 0]), False),
    (Case(spec="onnx/Pad-11", data=np.array([1], np.int8), pads=[0, 0]), 0),
])
def test_the_documented_default_of_each_kind(case, default):
    value = documented_default(case)
    assert value is not None and value.tolist() == default and value.dtype == case.data.dtype


@pytest.mark.parametrize("case", [
    Case(spec="onnx/Pad-2", data=np.array([1.0], np.float32), pads=[0, 0]),  # value is an attribute
    Case(spec="onnx/Pad-13", data=np.array([1.0], np.float32), pads=[0, 0], constant_value=np.float32(0)),
    Case(spec="onnx/Pad-13", data=np.array([1.0], np.float32), pads=[0, 0], mode="edge"),
])
def test_no_default_to_write_out(case):
    assert documented_default(case) is None


@pytest.mark.slow
def test_a_failure_where_the_input_is_undefined_is_judged_where_it_is_defined(tmp_path):
    """OpenVINO Pad-1 leaves negative pads undefined; Pad-12 defines them (a crop). The same
    inputs fail there too: defined_at judges them at Pad-12. Shrinking, for its part, finds the
    bug (+0.0 for a constant of -0.0) on Pad-1's own defined inputs: the bundle rests on no
    undefined point either way."""
    pytest.importorskip("openvino")
    from padconf.core.vocabulary import Placement
    from padconf.execution.worker import Worker
    from padconf.minimize.probes.experiments import defined_at
    from padconf.minimize.shrink.loop import IsolatedRunner
    case = Case(spec="openvino/Pad-1", data=np.array([1.0, 2.0, 3.0], np.float16), pads=[3, -1],
                constant_value=np.float16(-0.0))
    worker = Worker("openvino")
    try:
        isolated = IsolatedRunner(worker, "openvino")
        found = isolated.attempt(case, Placement.INPUTS)
        assert found.case.kind == "ambiguous" and found.row["verdict"] == "unexplained"
        there = defined_at(isolated, found, Placement.INPUTS)
    finally:
        worker.close()
    assert there is not None and there.case.spec == "openvino/Pad-12" and there.case.kind == "defined"
    assert there.row["verdict"] == "mismatch"
    report = minimized(tmp_path, case, "openvino")
    assert "); this input is defined" in report and "a constant value of -0.0" in report.splitlines()[0]
    assert "- pads: `[1, 0]`" in report


def test_supported_opset_belongs_to_a_policy_and_is_an_opset():
    entry = ("- triage: {t}\n  runtime: x\n  why: w\n  quote: q\n  link: l\n  checked: c\n  supported_opset: {o}\n")
    assert parse_facts(entry.format(t="policy", o=7), "f")[0].supported_opset == 7
    for t, o in (("known-upstream", 7), ("policy", "seven"), ("policy", 0), ("policy", True)):
        with pytest.raises(Exception, match="supported_opset"):
            parse_facts(entry.format(t=t, o=o), "f")


@pytest.mark.parametrize(("case", "reading"), [
    # wrap at Pad-11, which lacks the mode: the wrap padding is what accepting it gives
    (Case(spec="onnx/Pad-11", data=np.array([1, 2, 3], np.float32), pads=[1, 0], mode="wrap"), [3, 1, 2, 3]),
    # OpenVINO Pad-12 forbids a reflect pad past the axis; reflecting on and on is what accepting it gives
    (Case(spec="openvino/Pad-12", data=np.array([0, 1, 2], np.float32), pads=[4, 0], mode="reflect"),
     [0, 1, 2, 1, 0, 1, 2]),
])
def test_lenient_only_where_a_reading_gives_the_answer(case, reading):
    """A must-reject case accepted with the output a reading gives (the broken rule set aside) is
    lenient; accepted with anything else (an empty tensor, memory never written) it is silent
    garbage, a wrong value."""
    from padconf.adapters.outcome import Outcome
    from padconf.judging.verdicts import Difference, Verdict, judge
    case = classify(case)
    assert case.kind == "must-reject"
    lenient = judge(case, Outcome(np.array(reading, np.float32)))
    assert lenient.verdict == Verdict.WRONGLY_ACCEPTED and lenient.difference is None
    assert triage({"verdict": lenient.verdict, "difference": lenient.difference, "runtime": "x"})[0] == Triage.LENIENT
    garbage = judge(case, Outcome(np.zeros(0, np.float32)))
    assert garbage.verdict == Verdict.WRONGLY_ACCEPTED and garbage.difference == Difference.NO_READING
    assert triage({"verdict": garbage.verdict, "difference": garbage.difference, "runtime": "x"})[0] == \
        Triage.WRONG_VALUE


@pytest.mark.slow
def test_a_variants_failure_the_default_configuration_does_not_share_is_titled_by_its_configuration(tmp_path):
    """OpenVINO's ONNX frontend, with one thread (openvino-onnx[threads=1]), returns an empty tensor
    for a reflect pad past the axis; in its default configuration it raises, which conforms (the
    document leaves the pad undefined). The bundle is the configuration's, and says so; the
    lowered check runs OpenVINO's own Pad set up the same way."""
    pytest.importorskip("openvino")
    report = minimized(tmp_path, Case(spec="onnx/Pad-11", data=np.ones(1, np.float32), pads=[1, 0], mode="reflect"),
                       "openvino-onnx[threads=1]")
    first = report.splitlines()[0]
    assert first.endswith("only with INFERENCE_NUM_THREADS=1 (by default: ambiguous)")  # other opsets fail alike
    assert "In its default configuration (openvino-onnx) the same case is answered as the specification allows" \
        in report
    assert "(runtime openvino\\[threads=1\\], inputs)" in report
    assert (tmp_path / "b" / "repro_openvino_onnx_threads_1.py").is_file()


def test_an_accepted_model_the_document_forbids_in_its_structure_stays_lenient():
    """Pads of the wrong length, an axis out of range, an input the version lacks: the document
    forbids the model and gives no reading of what it computes, so whatever a runtime answers
    is a lenience, not a wrong value."""
    from padconf.adapters.outcome import Outcome
    from padconf.judging.verdicts import Verdict, judge
    for case in (Case(spec="onnx/Pad-19", data=np.ones(3, np.float32), pads=[1, 0, 0]),
                 Case(spec="onnx/Pad-24", data=np.ones(1, np.float32), pads=[0, 0], axes=[-5])):
        case = classify(case)
        ruling = judge(case, Outcome(np.zeros(0, np.float32)))
        assert case.kind == "must-reject" and ruling.verdict == Verdict.WRONGLY_ACCEPTED and ruling.difference is None


def test_an_accepted_case_answered_in_32_bits_is_narrowed_not_garbage():
    """OpenVINO runs f64 as f32: wrap (not in Pad-11) accepted, -inf comes back as float32's
    lowest value: a reading computed in 32 bits, which its upstream fact calls policy."""
    from padconf.adapters.outcome import Outcome
    from padconf.judging.verdicts import Difference, Verdict, judge
    case = classify(Case(spec="onnx/Pad-11", data=np.array([-np.inf, 1.0]), pads=[0, 1], mode="wrap"))
    ruling = judge(case, Outcome(np.array([np.float32(-3.4028235e38), 1.0, np.float32(-3.4028235e38)])))
    assert ruling.verdict == Verdict.WRONGLY_ACCEPTED and ruling.difference == Difference.NARROWED
    row = {"verdict": ruling.verdict, "difference": ruling.difference, "runtime": "openvino-onnx", "dtype": "double"}
    assert triage(row)[0] == Triage.POLICY


@pytest.mark.slow
def test_an_answer_no_reading_gives_sheds_its_undefined_points_one_at_a_time(tmp_path):
    """An output left unwritten (planted: OpenVINO's uint2 kernel, where this was found, leaves
    memory that is not always zeros, so its shrinking varied from run to run), found on Pad-1's
    negative pads that also mirror past the axis: three undefined points, and an answer no
    reading gives. Halving the pads leaves one undefined point and the same wrong value; a
    shorter pad then leaves none: the bundle is a wrong value on a defined input."""
    case = Case(spec="onnx/Pad-1", data=np.array([1, 2], np.float32), pads=[-1, 4], mode="reflect")
    assert classify(case).reason == "negative_pads,mixed_sign_pads,mirror_beyond_dim"
    report = minimized(tmp_path, case, "tests.fake_adapters:UnwrittenOutputAdapter")
    assert report.startswith("# Pad returns wrong values")
    assert "this input is defined" in report and "- pads: `[0, 1]`" in report


def _refused(case: Case, runtime: str, placement: str, error: str):
    from padconf.adapters.outcome import Outcome
    from padconf.core.vocabulary import Status
    from padconf.judging.records import judged_row
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    outcome = Outcome(error=error)
    attempt = Attempt(case, judged_row(runtime, placement, case, outcome, Status.OK), outcome)
    return Shrunk(attempt, attempt, 1, 0.0, False)


def test_a_refusal_is_onnxs_schemas_by_experiment_whatever_the_runtime_words_it():
    """onnxruntime declares it runs onnx's shape inference on every model it loads
    (Adapter.shape_inference). Pad-18 allows int32 axes; onnx's strict shape inference refuses
    them as an initializer: the refusal is onnx's schema's, whatever the runtime's text says
    (it was decided by onnx's words appearing in the runtime's). Rank-0 data, which onnx's
    shape inference takes, stays the runtime's own."""
    from padconf.core.vocabulary import Placement
    from padconf.minimize.probes.experiments import schema_check
    axes = classify(Case(spec="onnx/Pad-18", data=np.ones((2, 3), np.float32), pads=[0, 1], axes=[1],
                         axes_type="int32"))
    worded = _refused(axes, "onnxruntime", "initializers", "a refusal in words of its own")
    found = schema_check(worded, "onnxruntime", Placement.INITIALIZERS)
    assert found is not None and found["runtime"] == "onnx" and found["verdict"] == "wrongly-rejected"
    scalar = classify(Case(spec="onnx/Pad-18", data=np.array(1.0, np.float32), pads=[]))
    assert schema_check(_refused(scalar, "onnxruntime", "initializers", "ParseData type mismatch"),
                        "onnxruntime", Placement.INITIALIZERS) is None
    # a runtime that declares no such thing: never onnx's, whatever its text
    assert schema_check(_refused(axes, "onnx-reference", "initializers", found["detail"]), "onnx-reference",
                        Placement.INITIALIZERS) is None


@pytest.mark.parametrize("runtime", ["onnxruntime", "iree"])
def test_a_crash_of_onnxs_own_shape_inference_is_onnxs_not_the_runtimes(tmp_path, runtime):
    """onnxruntime and IREE run onnx's shape inference on every model they load, and both die
    (SIGABRT) on a Slice after a Pad cropping a static dimension past zero: onnx's Slice
    inference, onnx/onnx#8481 (open). Each filed it as its own crash, a bug to file. That
    inference, run alone in a fresh process on the minimal model, dies too: the bundle says the
    crash is onnx's, and names the upstream issue. When onnx fixes it, this test fails."""
    pytest.importorskip({"onnxruntime": "onnxruntime", "iree": "iree.runtime"}[runtime])
    from padconf.cases.context import Consumer, Context, Producer
    slice_ = {"axes": [1], "steps": [1], "starts": [0], "ends": [1]}
    case = Case(spec="onnx/Pad-19", data=np.zeros((1, 1, 2), np.float32), pads=[0, -2, 0, 0, -1, 0],
                context=Context(Consumer.SLICE, slice_, producer=Producer.INPUTS, static_shape=True))
    report = minimized(tmp_path, case, runtime)
    assert "Label: **other-component**" in report, report
    assert "infer_shapes(model, " in report and "is killed by SIGABRT" in report
    assert "https://github.com/onnx/onnx/issues/8481" in report


def test_both_refusing_is_alike_whatever_either_says():
    """A frontend's refusal and the refusal of the operation it lowers Pad to are one where both
    refuse the same values and pads (an experiment), not where one's text holds the other's; and
    garbage on one path is the other's crash on the same values."""
    from padconf.adapters.outcome import Outcome
    from padconf.core.vocabulary import Status
    from padconf.judging.verdicts import Verdict
    from padconf.minimize.probes.experiments import _alike
    case = classify(Case(spec="onnx/Pad-18", data=np.array(1.0, np.float32), pads=[]))
    attempt = _refused(case, "openvino-onnx", "inputs", "Check 'x' failed at frontend.cpp").final
    assert _alike(attempt, case, Outcome(error="Pad-12: another wording at pad.cpp:103"), Status.OK)
    assert not _alike(attempt, case, Outcome(np.array(1.0, np.float32)), Status.OK)
    assert not _alike(attempt, case, Outcome(), Status.CRASH)
    # garbage on one path, a crash on the other: one memory corrupted (audit V's openvino-onnx 50)
    from padconf.minimize.shrink.loop import Attempt
    defined = classify(Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0], np.float32), pads=[1, 0]))
    garbage = Outcome(np.array([7e28, 1.0, 2.0], np.float32))
    wrong = Attempt(defined, {"verdict": Verdict.MISMATCH}, garbage)
    assert _alike(wrong, defined, Outcome(), Status.CRASH)
    own = Outcome(np.array([0.0, 1.0, 2.0], np.float32))  # the input's own values: no corruption shown
    assert not _alike(Attempt(defined, {"verdict": Verdict.MISMATCH}, own), defined, Outcome(), Status.CRASH)


def test_no_upstream_fact_reads_error_text():
    """A fact matches a row's fields and the case's (negative pads), never the runtime's words:
    onnx's reference refusing negative pads is onnx/onnx#8199's whatever it says, and a refusal
    of positive pads is not, even in #8199's words; a fact holding an error pattern is refused."""
    crop = {"runtime": "onnx-reference", "spec": "onnx/Pad-19", "verdict": "wrongly-rejected", "mode": "constant",
            "dtype": "float", "placement": "inputs", "pads": [0, -1, 0, 0], "error": "some other wording"}
    found, fact = triage(crop)
    assert found == Triage.KNOWN_UPSTREAM and fact.link.endswith("/pull/8199")
    assert triage({**crop, "pads": [0, 1, 0, 0], "error": "index can't contain negative values"})[0] \
        == Triage.WRONGLY_REJECTED
    entry = ("- triage: known-upstream\n  runtime: x\n  error: boom\n  why: w\n  quote: q\n"
             "  link: https://example.org\n  checked: read by hand\n")
    with pytest.raises(Exception, match="never its error text"):
        parse_facts(entry, "f")
    # an IREE wrap hang is the known one whatever padconf's own words for the hang
    hang = {"runtime": "iree", "spec": "onnx/Pad-19", "verdict": "timeout", "mode": "wrap", "dtype": "int32",
            "placement": "initializers", "pads": [1, 1], "error": "the worker gave no answer"}
    assert triage(hang)[0] == Triage.KNOWN_UPSTREAM


def test_a_consumer_failing_on_any_tensor_of_no_rank_is_no_pad_bug():
    """IREE aborts compiling a Pad with an axes input fed at run time before a Conv (LLVM out of
    memory): its importer reads a tensor onnx's shape inference gives no rank as rank 0, and a
    Reshape to a shape fed at run time before the same Conv aborts alike (audit I). The
    consumer's control on the padded data, of its known rank, passed, and the bundle was a bug to
    file. Where the runtime's inference gives the Pad's output no rank, the consumer is also
    run on a tensor of no rank, and its failure is the control's. When IREE fixes it, this fails."""
    pytest.importorskip("iree.runtime")
    from padconf.cases.context import Consumer, Context
    from padconf.execution.worker import Worker
    from padconf.judging.verdicts import control_record
    from padconf.minimize.probes.inference import controls_seen
    conv = {"kernel_shape": [2, 1, 1], "strides": [2, 1, 2], "dilations": [1, 2, 1], "auto_pad": "NOTSET",
            "pads": [1, 0, 0, 1, 0, 0], "group": 1}
    case = classify(Case(spec="onnx/Pad-25", data=np.arange(1, 7, dtype=np.float32).reshape(2, 1, 3, 1, 1), pads=[],
                         mode="edge", axes=[], context=Context(Consumer.CONV, conv, fanout=True,
                                                               weights=np.array([2, -1], np.float32).reshape(
                                                                   1, 1, 2, 1, 1))))
    unranked = [c for _, c, _ in controls_seen(case, "iree", Placement.INPUTS) if c.op == "UnrankedConsumer"]
    assert len(unranked) == 1
    # baked in, the axes are known and the output ranked; onnx's evaluator runs no such inference
    for runtime, placement in (("iree", Placement.INITIALIZERS), ("onnx-reference", Placement.INPUTS)):
        assert [c.op for _, c, _ in controls_seen(case, runtime, placement)] == \
            [c.op for _, c, _ in case.controls(placement)]
    worker = Worker("iree")
    try:
        record = control_record(case, Placement.INPUTS, worker.run_alone, "crash",
                                controls_seen(case, "iree", Placement.INPUTS))
        # the consumer alone on the padded data, of its known rank, passes: no control failed before
        assert not control_record(case, Placement.INPUTS, worker.run_alone, "crash")["fails_too"]
    finally:
        worker.close()
    assert record["fails_too"] and record["verdict"] == "crash" and record["operand"] == "consumer", record


def test_an_ambiguous_context_cases_consumer_is_controlled_under_each_reading():
    """OpenVINO's CPU Conv runs f32 in bf16 by default: Pad(edge) before Conv on mixed-sign pads
    (an input the document leaves open) answered -9984 for -10000, labelled a bug (audit II). The
    consumer's control was built for defined cases only; an ambiguous case's consumer runs alone
    on each reading's padded values, and fails there too. When OpenVINO's default is f32, this fails."""
    pytest.importorskip("openvino")
    from padconf.cases.classify import consumer_readings
    from padconf.cases.context import Consumer, Context
    from padconf.execution.worker import Worker
    from padconf.judging.verdicts import control_record
    from padconf.minimize.probes.inference import controls_seen
    conv = {"kernel_shape": [2, 1], "strides": [1, 1], "dilations": [1, 1], "auto_pad": "NOTSET",
            "pads": [0, 0, 0, 0], "group": 1}
    case = classify(Case(spec="onnx/Pad-13", data=np.array([-1e4, 2, 3], np.float32).reshape(1, 1, 3, 1),
                         pads=[0, 0, 2, 0, 0, 0, -3, 0], mode="edge",
                         context=Context(Consumer.CONV, conv, weights=np.array([0, 1, 0.5, 1], np.float32).reshape(
                             2, 1, 2, 1))))
    assert case.kind == CaseKind.AMBIGUOUS and case.consumer_control() is None
    given = {tuple(g.ravel()): tuple(a.ravel()) for g, a in consumer_readings(case)}
    assert given == {(-1e4, -1e4): (-1e4, -1.5e4), (0, 0): (0, 0)}  # each reading's Pad, then the Conv
    consumers = [c for operand, c, _ in controls_seen(case, "openvino-onnx", Placement.INPUTS) if operand == "consumer"]
    assert [c.op for c in consumers] == ["Consumer"] * 2 and all(c.kind == CaseKind.DEFINED for c in consumers)
    worker = Worker("openvino-onnx")
    try:
        record = control_record(case, Placement.INPUTS, worker.run_alone, "unexplained",
                                controls_seen(case, "openvino-onnx", Placement.INPUTS))
    finally:
        worker.close()
    assert record["fails_too"] and record["operand"] == "consumer" and record["verdict"] == "mismatch", record
