"""A bundle as a runtime's maintainer reads it: titled in the runtime's terms, with a short repro
in the runtime's own API that exits 1 while the bug shows, beside the generic checker (a real
file of the package, copied verbatim); and shrinking one bug never slips into another of the
same run."""
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core.dtypes import bit_equal
from padconf.judging.records import judged_row
from padconf.minimize.bundle import repro as generic_repro
from padconf.minimize.bundle.report import _others
from padconf.minimize.bundle.title import title
from padconf.run.runner import Run, RunConfig

FAKE = "tests.fake_adapters:"


def run_script(where, script, *args):
    proc = subprocess.run([sys.executable, str(where / script), *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_checkers_bit_equality_is_padconfs():
    """generic_repro.same is a standalone copy (a bundle runs without padconf): it must say what
    padconf.core.dtypes.bit_equal says, NaN payloads equal, signs of zero not."""
    nan2 = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
    pairs = [(np.array([np.nan, 1.0], np.float32), np.array([nan2, 1.0], np.float32)),
             (np.array([0.0], np.float64), np.array([-0.0], np.float64)),
             (np.array([1, 2], np.int8), np.array([1, 2], np.int8)),
             (np.array([1, 2], np.int8), np.array([1, 3], np.int8)),
             (np.array([1, 2], np.int8), np.array([1, 2], np.int16)),
             (np.array([1 + 2j]), np.array([1 - 2j])),
             (np.array(["a", "b"], dtype=object), np.array(["a", "b"], dtype=object)),
             (np.ones((2, 1), np.float16), np.ones((1, 2), np.float16))]
    got = [generic_repro.same(a, b) for a, b in pairs]
    assert got == [bit_equal(a, b) for a, b in pairs] == [True, False, True, False, False, False, True, False]


def planted_row(case, outcome, status="ok", runtime="onnxruntime", placement="inputs"):
    return judged_row(runtime, placement, case, outcome, status)


@pytest.mark.parametrize("case, outcome, status, expected", [
    (Case(spec="onnx/Pad-19", data=np.arange(4, dtype=np.float16).reshape(2, 2), pads=[0, -1, 0, 0], mode="reflect"),
     Outcome(np.zeros((2, 1), np.float16)), "ok",
     "Pad(reflect) returns wrong values for a negative begin pad on float16 (opset 19)"),
    (Case(spec="onnx/Pad-18", data=np.arange(3, dtype=np.float64), pads=[-5, 0], mode="edge"),
     Outcome(error="killed by SIGSEGV"), "crash",
     "Pad(edge) crashes (SIGSEGV) on pads that remove more than the axis holds on double (opset 18)"),
    # one end crops past the axis, the other pads more: the size stays positive
    (Case(spec="onnx/Pad-18", data=np.arange(4, dtype=np.float64), pads=[2, -5], mode="edge"),
     Outcome(error="killed by SIGABRT"), "crash",
     "Pad(edge) crashes (SIGABRT) on a crop beyond the dimension on double (opset 18)"),
    (Case(spec="onnx/Pad-18", data=np.array(1.0, np.float32), pads=[], mode="constant"),
     Outcome(error="Pad: invalid rank 0"), "ok", "Pad(constant) rejects a rank-0 input on float (opset 18)"),
    # onnxruntime's constant folding refuses int32 axes: rank 0 is where shrinking ends, not the bug
    (Case(spec="onnx/Pad-18", data=np.array(1.0, np.float32), pads=[], axes=[], axes_type="int32"),
     Outcome(error="ParseData type mismatch for tensor: axes. Expected:int64 Actual:int32"), "ok",
     "Pad(constant) rejects int32 axes on rank-0 data on float (opset 18)"),
    (Case(spec="onnx/Pad-18", data=np.arange(3, dtype=np.float32), pads=[0, 1], mode="wrap"),
     Outcome(np.array([0, 1, 2, 0], np.float32)), "ok",
     "Pad(wrap) accepts mode wrap (not in this opset) on float (opset 18)"),
    # OpenVINO Pad-12: "pads_begin[D] and pads_end[D] must be not greater than data.shape[D] 1" (a minus lost)
    (Case(spec="openvino/Pad-12", data=np.arange(3, dtype=np.float32), pads=[3, 0], mode="reflect"),
     Outcome(np.array([1, 2, 1, 0, 1, 2], np.float32)), "ok",  # reflecting on: lenient
     "Pad(reflect) accepts a reflect pad beyond what the data can mirror on float (OpenVINO opset12)"),
    (Case(spec="openvino/Pad-12", data=np.zeros((2, 0), np.int32), pads=[0, 1, 0, 1], mode="symmetric"),
     Outcome(error="no answer within 5 s"), "timeout",
     "Pad(symmetric) hangs on an empty axis on int32 (OpenVINO opset12)"),
    # OpenVINO's ONNX frontend refuses Pad-2's value attribute of inf in every mode: the minimal
    # case keeps the value in edge mode, where the title said "float data"
    (Case(spec="onnx/Pad-2", data=np.ones(1, np.float32), pads=[0, 0], mode="edge", constant_value=np.float32(np.inf)),
     Outcome(error="inf assigned value out of range for f32"), "ok",
     "Pad(edge) rejects a constant value of inf on float (opset 2)"),
])
def test_a_title_says_mode_failure_feature_and_dtype(case, outcome, status, expected):
    case = classify(case)
    assert title(planted_row(case, outcome, status), case) == expected


def test_a_placement_dependent_failure_says_where_the_pads_come_from():
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.int64), pads=[1, 0], mode="edge"))
    row = planted_row(case, Outcome(np.zeros(4, np.int64)), placement="initializers")
    assert title(row, case, placement_dependent=True) == \
        "Pad(edge) returns wrong values for int64 data with constant pads (opset 19)"
    # Pad-1's pads are an attribute: what the placement moves is the data
    case = classify(Case(spec="onnx/Pad-1", data=np.arange(3, dtype=np.float32), pads=[1, 0], mode="edge"))
    row = planted_row(case, Outcome(np.zeros(4, np.float32)), placement="inputs")
    assert title(row, case, placement_dependent=True) == \
        "Pad(edge) returns wrong values for float data with data fed at run time (opset 1)"


@pytest.mark.slow
def test_shrinking_one_bug_never_answers_with_the_other(tmp_path):
    """Two bugs, one crash class (a run's one distinct failure): ScalarAndCropCrashAdapter
    segfaults on rank-0 data through Pad and Identity alike (not a Pad bug: its control fails
    too) and in Pad on a negative pad. The negative pad's case shrinks to rank 1, never to rank
    0, where the other bug answers: each candidate's own control tells them apart."""
    runtime = FAKE + "ScalarAndCropCrashAdapter"
    crop = classify(Case(spec="onnx/Pad-19", data=np.arange(12, dtype=np.float32).reshape(3, 4),
                         pads=[0, -1, 1, 0], mode="constant"))
    scalar = classify(Case(spec="onnx/Pad-19", data=np.array(5, np.float32), pads=[], mode="constant"))
    run = Run(tmp_path / "run", RunConfig(runtimes=[runtime]), jobs=1)
    run.execute(run.plan(run.prepare([crop, scalar])))
    out = tmp_path / "bundle"
    assert main(["minimize", f"{tmp_path / 'run'}:{crop.id}", "--runtime", runtime, "--out", str(out),
                 "--time-limit", "20"]) == 0
    report = (out / "REPORT.md").read_text()
    assert np.load(out / "data.npy").ndim == 1
    first = report.splitlines()[0]
    # the planted crash is on every mode: the title names none (a removal experiment)
    assert first.startswith("# Pad crashes (SIGSEGV) on ") and "rank-0" not in first
    assert "Triage: **crash or memory corruption**" in report
    assert "- the minimal case's control (inputs): passed" in report
    # the other bug, minimized alone, is the rank-0 crash, and no Pad bug
    assert main(["minimize", f"{tmp_path / 'run'}:{scalar.id}", "--runtime", runtime, "--out",
                 str(tmp_path / "other"), "--time-limit", "5"]) == 0
    other = (tmp_path / "other" / "REPORT.md").read_text()
    assert "rank-0 input" in other.splitlines()[0] and "Triage: **not Pad-specific**" in other


@pytest.mark.slow
def test_a_real_openvino_refusal_gives_a_repro_in_openvinos_own_api_that_exits_1(tmp_path):
    """OpenVINO's ONNX frontend fails Pad-13 on rank-0 data, which Pad-13 defines (the scalar
    itself): refused with constant pads, garbage or "ptr is Null" with pads fed at run time. Its
    own repro builds the model with onnx.helper and reads it with read_model."""
    pytest.importorskip("openvino")
    case = classify(Case(spec="onnx/Pad-13", data=np.array(3, np.int64), pads=[], mode="reflect"))
    path = tmp_path / "case.jsonl"
    path.write_text(__import__("json").dumps(case.to_json()) + "\n")
    out = tmp_path / "out"
    assert main(["minimize", str(path), "--runtime", "openvino-onnx", "--out", str(out), "--time-limit", "10"]) == 0
    first = (out / "REPORT.md").read_text().splitlines()[0]
    # the opset named only where a removal experiment needs it (the neighbouring opsets refuse alike)
    assert first.startswith("# Pad") and " a rank-0 input" in first
    script = (out / "repro_openvino_onnx.py").read_text()
    assert "read_model(model.SerializeToString()" in script and "actual = np.asarray(standalone_run(model, " in script
    code, printed = run_script(out, "repro_openvino_onnx.py")
    assert code == 1 and "expected: array(" in printed and "\nactual:   " in printed


def test_a_real_openvino_native_failure_gives_a_repro_in_its_opset_api(tmp_path):
    """The native adapter's bundle builds OpenVINO's own opset12 Pad graph; where the runtime
    is right (a planted bundle of a correct answer) the same script exits 0."""
    pytest.importorskip("openvino")
    from padconf.minimize.bundle.writer import write_bundle
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    from padconf.minimize.targets import Job
    case = classify(Case(spec="openvino/Pad-12", data=np.arange(4, dtype=np.float32), pads=[1, -1], mode="edge"))
    right = Attempt(case, planted_row(case, Outcome(case.expected), runtime="openvino"), Outcome(case.expected))
    write_bundle(tmp_path / "right", Shrunk(right, right, 1, 0.0, False), "inputs", "openvino", None, Job(case))
    code, printed = run_script(tmp_path / "right", "repro_openvino.py")
    assert code == 0 and "expected: array([0., 0., 1., 2.], dtype=float32)" in printed
    assert "ops.pad(" in (tmp_path / "right" / "repro_openvino.py").read_text()
    wrong = Attempt(case, planted_row(case, Outcome(case.expected[::-1].copy()), runtime="openvino"),
                    Outcome(case.expected[::-1].copy()))
    broken = case.with_(expected=case.expected[::-1].copy())  # an expectation the runtime misses
    write_bundle(tmp_path / "wrong", Shrunk(wrong, Attempt(broken, wrong.row, wrong.outcome), 1, 0.0, False),
                 "initializers", "openvino", None, Job(case))
    code, printed = run_script(tmp_path / "wrong", "repro_openvino.py")
    assert code == 1 and "actual:   array([0., 0., 1., 2.], dtype=float32)" in printed


def test_a_runtimes_error_in_the_index_stays_one_table_row():
    """OpenVINO's errors span lines and hold ``|``: INDEX.md shows them as data, one row each."""
    from padconf.minimize.bundle.index import index_markdown
    error = "RuntimeError: Check 'a || b' failed at src/x.hpp:83:\nWhile validating node 'Pad'\n[link](x)"
    rows = index_markdown("run", "openvino", [{"n": 1, "dir": None, "recorded": {"verdict": "wrongly-rejected"},
                                               "error": error, "shape": [0]}]).splitlines()
    row = next(r for r in rows if r.startswith("| 1 |"))
    assert row.count(" | ") == 7 and "[link]" not in row and "While validating" in row


def test_a_graph_openvino_refuses_to_build_gets_its_own_api_repro_and_no_model(tmp_path):
    """OpenVINO's shape inference refuses edge mode on an empty axis, crop and pad in one, while
    building a graph of constants: there is no model file to write, so the bundle's repro is the
    opset12 script that builds it. The refusal is one reading of the open point
    (empty_axis_nonconstant=reject; the other gives shape [0]), so the script exits 0."""
    pytest.importorskip("openvino")
    from padconf.minimize.bundle.writer import write_bundle
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    from padconf.minimize.targets import Job
    case = classify(Case(spec="openvino/Pad-12", data=np.zeros(0, np.int8), pads=[-2, 1], mode="edge"))
    refused = Outcome(error="Check 'pad_mode != op::PadMode::EDGE || dim_lb >= 1' failed")
    attempt = Attempt(case, planted_row(case, refused, runtime="openvino", placement="folded"), refused)
    write_bundle(tmp_path / "b", Shrunk(attempt, attempt, 1, 0.0, False), "folded", "openvino", None, Job(case))
    assert not (tmp_path / "b" / "model.xml").exists() and not (tmp_path / "b" / "repro.py").exists()
    report = (tmp_path / "b" / "REPORT.md").read_text()
    assert "- model: none: OpenVINO refuses to build this graph" in report and "python repro.py" not in report
    assert case.reason == "empty_axis_nonconstant" and "- empty_axis_nonconstant=reject: an error" in report
    code, printed = run_script(tmp_path / "b", "repro_openvino.py")
    assert code == 0 and "EDGE padding mode requires" in printed


def test_onnx_references_own_api_repro_runs_the_reference_evaluator(tmp_path):
    """Right on a defined case (exit 0); on mode wrap at opset 18, which Pad-18 does not define,
    the script reports whatever onnx's evaluator does against the spec's required error."""
    from padconf.minimize.bundle.writer import write_bundle
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    from padconf.minimize.targets import Job
    for name, case in [("right", Case(spec="onnx/Pad-18", data=np.arange(3, dtype=np.int32), pads=[1, 0], mode="edge")),
                       ("wrap", Case(spec="onnx/Pad-18", data=np.arange(3, dtype=np.int32), pads=[1, 0], mode="wrap"))]:
        case = classify(case)
        outcome = Outcome(case.expected if case.expected is not None else np.array([2, 0, 1, 2], np.int32))
        attempt = Attempt(case, planted_row(case, outcome, runtime="onnx-reference"), outcome)
        write_bundle(tmp_path / name, Shrunk(attempt, attempt, 1, 0.0, False), "initializers", "onnx-reference", None,
                     Job(case))
        assert "ReferenceEvaluator(model)" in (tmp_path / name / "repro_onnx_reference.py").read_text()
    code, printed = run_script(tmp_path / "right", "repro_onnx_reference.py")
    assert code == 0 and "expected: array([0, 0, 1, 2], dtype=int32)" in printed
    code, printed = run_script(tmp_path / "wrap", "repro_onnx_reference.py")
    assert "expected: an error" in printed and code == (0 if "actual:   an error" in printed else 1)


@pytest.mark.slow
def test_a_lenient_failure_does_not_shrink_where_another_bug_answers(tmp_path):
    """ScalarGarbageLenientPadsAdapter accepts pads of the wrong length (a Pad bug) and answers
    rank-0 data with garbage (another), which "accepts" wrong pads too. Shrinking the first
    stops at rank 1: at rank 0 the repaired twin (pads of the right length) fails as well."""
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(6, dtype=np.float32).reshape(2, 3), pads=[1, 0, 0],
                         mode="constant"))
    assert case.kind == "must-reject" and case.rule == "pads_length"
    path = tmp_path / "case.jsonl"
    path.write_text(__import__("json").dumps(case.to_json()) + "\n")
    out = tmp_path / "out"
    assert main(["minimize", str(path), "--runtime", FAKE + "ScalarGarbageLenientPadsAdapter", "--out", str(out),
                 "--time-limit", "20"]) == 0
    assert np.load(out / "data.npy").ndim == 1
    # no reading pads with pads of the wrong length (a rule on the model's structure): lenient
    assert (out / "REPORT.md").read_text().startswith("# Pad(constant) accepts pads of the wrong length on float (")


def test_a_pad_value_of_inf_is_written_as_a_float_literal_in_the_runtimes_own_repro(tmp_path):
    """Pad-1's value attribute inf once went into repro_<runtime>.py as a bare `inf`: the script
    died of a NameError and exited 1, a false "the bug shows". The reference pads it right: 0."""
    from padconf.minimize.bundle.writer import write_bundle
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    from padconf.minimize.targets import Job
    case = classify(Case(spec="onnx/Pad-1", data=np.ones(1, np.float32), pads=[0, 1],
                         constant_value=np.float32(np.inf)))
    outcome = Outcome(case.expected)
    attempt = Attempt(case, planted_row(case, outcome, runtime="onnx-reference"), outcome)
    write_bundle(tmp_path / "b", Shrunk(attempt, attempt, 1, 0.0, False), "inputs", "onnx-reference", None,
                 Job(case))
    assert 'value=float("inf")' in (tmp_path / "b" / "repro_onnx_reference.py").read_text()
    code, printed = run_script(tmp_path / "b", "repro_onnx_reference.py")
    assert code == 0 and "NameError" not in printed, printed


@pytest.mark.slow
def test_openvinos_onnx_frontend_is_judged_as_its_users_compile_it(tmp_path):
    """In OpenVINO's default configuration the CPU plugin raises where a pad crops more than the
    axis holds ([2, 3] padded [0, -4, 0, 0]) or reflects past it: refusals the documents allow
    (undefined points), so no bundle. With one thread (the variant openvino-onnx[threads=1]) it
    swallows the exception and returns an empty tensor: that variant's own bundle. Pad-1's inf
    value and rank-0 data are refused in both; the inf value as LeakyRelu's alpha=inf is too (not
    Pad-specific)."""
    pytest.importorskip("openvino")
    crop = classify(Case(spec="onnx/Pad-13", data=np.ones((2, 3), np.float32), pads=[0, -4, 0, 0]))
    inf = classify(Case(spec="onnx/Pad-1", data=np.ones(2, np.float32), pads=[0, 1],
                        constant_value=np.float32(np.inf)))
    beyond = classify(Case(spec="onnx/Pad-11", data=np.ones(1, np.float32), pads=[1, 0], mode="reflect"))
    scalar = classify(Case(spec="onnx/Pad-18", data=np.array(1.0, np.float32), pads=[]))

    def minimize(name, case, runtime):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(__import__("json").dumps(case.to_json()) + "\n")
        out = tmp_path / f"{name}-{runtime}"
        code = main(["minimize", str(path), "--runtime", runtime, "--out", str(out), "--time-limit", "3"])
        return code, (out / "REPORT.md").read_text() if code == 0 else ""

    for name, case in (("crop", crop), ("beyond", beyond)):
        assert minimize(name, case, "openvino-onnx") == (2, "")  # does not fail: nothing to minimize
        code, report = minimize(name, case, "openvino-onnx[threads=1]")
        assert code == 0 and "returns an empty tensor at run time" in report.splitlines()[0]
    code, report = minimize("inf", inf, "openvino-onnx")
    # the frontend refuses the float attribute's inf as it refuses LeakyRelu's alpha=inf (the attribute's control)
    assert code == 0 and "Triage: **not Pad-specific**" in report
    # shrinking reaches rank 0, where the refusal shows alike at rank 1: reported there, not as rank 0's
    assert re.match(r"# Pad(\(constant[^)]*\))? rejects a constant value of inf on float \(opset 1\)", report), \
        report.splitlines()[0]
    assert "- data: `[1.]   # float32, shape [1]`" in report
    code, report = minimize("scalar", scalar, "openvino-onnx")
    # folded (every operand constant) it is answered: the title names the placement the refusal needs
    heading = report.splitlines()[0]
    assert code == 0 and re.match(r"# Pad(\(constant[^)]*\))? rejects a rank-0 input", heading), heading
    assert "with pads fed at run time" in heading


@pytest.mark.slow
def test_an_onnxruntime_refusal_that_onnxs_own_shape_inference_gives_is_said_to_be_onnxs(tmp_path):
    """Pad-18 allows int32 axes ("Tind: tensor(int32), tensor(int64)"); onnxruntime refuses them
    as an initializer with onnx's own shape inference's words ("ParseData type mismatch for
    tensor: axes"), which onnx.shape_inference gives on the model too: the bundle says the
    refusal is onnx's Pad schema's. Its refusal of rank-0 data is its own."""
    pytest.importorskip("onnxruntime")
    axes = classify(Case(spec="onnx/Pad-18", data=np.ones((2, 3), np.float32), pads=[0, 1], axes=[1],
                         axes_type="int32"))
    scalar = classify(Case(spec="onnx/Pad-18", data=np.array(1.0, np.float32), pads=[]))
    reports = {}
    for name, case in (("axes", axes), ("scalar", scalar)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(__import__("json").dumps(case.to_json()) + "\n")
        assert main(["minimize", str(path), "--runtime", "onnxruntime", "--out", str(tmp_path / name),
                     "--time-limit", "3"]) == 0
        reports[name] = (tmp_path / name / "REPORT.md").read_text()
    assert "fails through onnx's shape inference itself too (runtime onnx, initializers): wrongly-rejected: " \
           "ParseData type mismatch for tensor: axes" in reports["axes"]
    assert "itself too" not in reports["scalar"] and "Triage: **wrongly rejected**" in reports["scalar"]


def test_a_bundle_for_an_undefined_point_says_what_each_runtime_matched_per_point():
    """The bundle of an ambiguous case lists, per runtime and undefined point, the readings the
    run's answers matched ("a or b" where the answer is what both give), counted in results."""
    case = classify(Case("onnx/Pad-11", np.array([1, 2, 3], np.float32), [-1, 4], mode="reflect"))
    rows = [judged_row("alpha", "inputs", case, Outcome(np.array([9], np.float32)), "ok"),
            judged_row("beta", "inputs", case, Outcome(error="reflect pad 4 exceeds 3"), "ok"),
            judged_row("beta", "folded", case, Outcome(np.array([2, 3, 2, 1, 2, 3], np.float32)), "ok")]
    lines = _others(SimpleNamespace(run_rows=rows, recorded=None, case=case), case, "alpha")
    heading = next(i for i, line in enumerate(lines) if line.startswith("Where the document leaves"))
    assert lines[heading + 2:] == [
        "- alpha, `mirror_beyond_dim`: (another output) (1)", "- alpha, `mixed_sign_pads`: (another output) (1)",
        "- beta, `mirror_beyond_dim`: reject (1), iterate (1)",
        "- beta, `mixed_sign_pads`: crop_first or original_coordinates (1), original_coordinates (1)", ""]


def test_a_variants_own_api_repro_is_its_adapters_run_set_up_as_padconf_ran_it():
    """The short repro is the adapter's own (Adapter.repro, copied by its source) and compiles as
    the variant that failed: OpenVINO's defaults ({}) for the plain name, the variant's properties
    otherwise; a runtime whose adapter supplies none gets none."""
    from padconf.adapters import Adapter
    from padconf.adapters.openvino_onnx import OpenVinoOnnxAdapter
    from padconf.minimize.bundle.scripts import api_script
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 1], mode="edge"))
    plain = api_script(case, "inputs", "openvino-onnx", "t")
    variant = api_script(case, "inputs", "openvino-onnx[threads=1]", "t")
    assert plain and variant and '"pads": pads}, {}))' in plain
    assert "\"pads\": pads}, {'INFERENCE_NUM_THREADS': 1}))" in variant
    assert variant.count("def standalone_run(model, inputs, configuration):") == 1
    assert OpenVinoOnnxAdapter.repro is not None and "compile_model(read, \"CPU\", configuration)" in variant
    assert Adapter.repro is None and api_script(case, "inputs", FAKE + "CorrectAdapter", "t") is None


def test_the_index_lists_the_bugs_to_file_first(tmp_path):
    """INDEX.md by triage: the Pad bugs to file first, whatever order minimize met them in; a
    lenient acceptance (the output a reading gives) after them."""
    from padconf.minimize.bundle.index import index_markdown
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    lenient = classify(Case(spec="onnx/Pad-11", data=np.array([1, 2, 3], np.float32), pads=[1, 0], mode="wrap"))
    wrong = classify(Case(spec="onnx/Pad-19", data=np.array([1, 2], np.float32), pads=[1, 0]))
    summaries = []
    for n, (case, output) in enumerate(((lenient, [3, 1, 2, 3]), (wrong, [9, 9, 9])), 1):
        outcome = Outcome(np.array(output, np.float32))
        attempt = Attempt(case, planted_row(case, outcome), outcome)
        summaries.append({"n": n, "dir": tmp_path / f"{n:02d}", "title": f"title {n}", "recorded": None,
                          "shrunk": Shrunk(attempt, attempt, 1, 0.1, False)})
    index = index_markdown("run", "onnxruntime", summaries)
    assert index.index("## Pad bugs to file") < index.index("| 2 |") < index.index("## Not a bug to file") \
        < index.index("| 1 |")
    assert "| wrong value |" in index and "| lenient (accepts what the spec forbids) |" in index


@pytest.mark.parametrize(("dtype", "values"), [
    ("float8_e4m3fn", [1, 2, 3, -0.0]),  # OpenVINO's Pad-1 copied -0 as +0 on some CPUs (audit I)
    ("float8_e5m2", [1, 2, 3]), ("bfloat16", [1.5, -2, 3])])
def test_openvinos_repro_of_data_numpy_lacks_holds_it_in_openvinos_own_tensors(tmp_path, dtype, values):
    """float8 and bfloat16 data had no repro in OpenVINO's own API (the generic checker only),
    which a maintainer asks for: the script holds the bits in an ov.Tensor of OpenVINO's type and
    compares the elements' codes, importing no ml_dtypes; it fails exactly where padconf's own
    OpenVINO adapter gets other bits than the reference's (which kernel runs depends on the CPU)."""
    pytest.importorskip("openvino")
    import ml_dtypes

    from padconf.adapters import adapter_class
    from padconf.core.dtypes import bit_equal
    from padconf.minimize.bundle.scripts import api_script
    case = classify(Case(spec="openvino/Pad-1", data=np.array(values, getattr(ml_dtypes, dtype)), pads=[1, 0]))
    exit_code = 0 if bit_equal(adapter_class("openvino")().run(case).output, case.expected) else 1
    script = api_script(case, "inputs", "openvino", "t")
    assert script is not None and "ov.Type." in script and "ml_dtypes" not in script
    (tmp_path / "repro_openvino.py").write_text(script)
    done = subprocess.run([sys.executable, "-I", str(tmp_path / "repro_openvino.py")], capture_output=True,
                          text=True)
    assert done.returncode == exit_code, done.stdout + done.stderr
    codes = np.pad(case.data, (1, 0)).view(f"uint{8 * case.data.dtype.itemsize}")
    assert f"expected: {np.array2string(codes, separator=', ')}" in done.stdout.replace("array(", ""), done.stdout


@pytest.mark.parametrize(("placement", "exit_code"), [("inputs", 0), ("folded", 1)])
def test_openvinos_repro_of_sub_byte_data_uses_its_own_packed_tensors(tmp_path, placement, exit_code):
    """numpy has no uint4: OpenVINO's repro holds the data as OpenVINO's own packed tensor and
    compares the output's element codes. OpenVINO pads uint4 fed at run time right, and folded
    as a constant it shifts the data by one element (a bug the script must show: exit 1)."""
    pytest.importorskip("openvino")
    import ml_dtypes

    from padconf.minimize.bundle.scripts import api_script
    case = classify(Case(spec="openvino/Pad-12", data=np.array([1, 2, 3], ml_dtypes.uint4), pads=[1, 0]))
    script = api_script(case, placement, "openvino", "t")
    assert script is not None and "ov.Type.u4" in script and "ml_dtypes" not in script
    (tmp_path / "repro_openvino.py").write_text(script)
    done = subprocess.run([sys.executable, str(tmp_path / "repro_openvino.py")], capture_output=True, text=True)
    assert done.returncode == exit_code, done.stdout + done.stderr
    assert "expected: array([0, 1, 2, 3], dtype=uint8)" in done.stdout


def test_a_spec_files_words_are_escaped_in_a_bundles_report(monkeypatch):
    """A spec folder is another's (--specs-dir): its sentences went raw into REPORT.md's quotes,
    live HTML, autolinks, mentions and bidi controls included (attack round I)."""
    from types import SimpleNamespace

    from padconf.minimize.bundle import report
    hostile = "<img src=x onerror=alert(1)> \u202e https://evil.example @someone \x1b[31m"
    monkeypatch.setattr(report, "rule_quotes", lambda row, specs_dir: [{"spec_key": "rules.`x`", "text": hostile,
                                                                        "note": hostile}])
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 0]))
    text = "\n".join(report._spec_words({}, case, SimpleNamespace(example=None, specs_dir=None)))
    for live in ("<img", "\u202e", "https://evil", "@someone", "\x1b"):
        assert live not in text, (live, text)
