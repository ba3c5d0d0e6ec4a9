"""`padconf minimize`: planted bugs shrink to their known minimal case, the bundle's repro.py
exits 1 on a real runtime's real bug and 0 where the runtime is right, a runtime that crashes
on every other attempt stays within the time limit, and bad input is one line, exit 2."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.judging.failure import failure_key
from padconf.judging.records import judged_row
from padconf.minimize.bundle import repro as generic_repro
from padconf.minimize.bundle.writer import write_bundle
from padconf.minimize.shrink.loop import Attempt, Shrunk
from padconf.minimize.shrink.simplify import fewer_axes, smaller_dims
from padconf.minimize.targets import Job
from padconf.spec.loader import get_spec, load_specs
from padconf.suite.folders import read_case_dir

FAKE = "tests.fake_adapters:"
SPEC = get_spec("onnx/Pad-19")


def case_file(tmp_path, case: Case):
    path = tmp_path / "case.jsonl"
    case = case if case.expected is not None else classify(case, SPEC)  # a worked example keeps its printed output
    path.write_text(json.dumps(case.to_json()) + "\n")
    return str(path)


def minimize(tmp_path, target, runtime, *extra):
    out = tmp_path / "out"
    return main(["minimize", target, "--runtime", runtime, "--out", str(out), *extra]), out


def bundle_inputs(where):
    return np.load(where / "data.npy"), np.load(where / "pads.npy").tolist()


def planted_run_bundles(tmp_path, runtime, cases) -> list[str]:
    """The REPORT.md of each bundle `padconf minimize` writes for a run of ``cases`` on ``runtime``."""
    from padconf.run.runner import Run, RunConfig
    run = Run(tmp_path / "run", RunConfig(runtimes=[runtime]), jobs=1)
    run.execute(run.plan(run.prepare(cases)))
    code, out = minimize(tmp_path, str(tmp_path / "run"), runtime, "--time-limit", "3")
    assert code == 0
    return [(d / "REPORT.md").read_text() for d in out.iterdir() if d.is_dir()]


def test_a_wrong_value_shrinks_past_a_change_in_its_kind_and_is_one_bundle(tmp_path):
    """IREE's negative begin pad fed at run time reads one element too far: on 8 elements or more
    the first wrong value is one of the data misplaced, below it is memory never written (a value
    the output lacks). The shrink stopped at the first size whose kind changed (57 rows of 112),
    and the run's two kinds were two distinct failures, each a bundle of its own. One mechanism,
    one bundle, shrunk to the smallest case that fails."""
    big = classify(Case(spec=SPEC.id, data=np.arange(1, 13, dtype=np.float32).reshape(6, 2), pads=[0, -1, 0, 0]))
    small = classify(Case(spec=SPEC.id, data=np.arange(1, 5, dtype=np.float32).reshape(2, 2), pads=[0, -1, 0, 0]))
    reports = planted_run_bundles(tmp_path, FAKE + "ShiftedReadAdapter", [big, small])
    assert len(reports) == 1, [r.splitlines()[0] for r in reports]
    shape = re.search(r"shape \\\[([0-9, ]*)\\\]", reports[0])
    assert shape and np.prod([int(n) for n in shape[1].split(", ")]) < 8, reports[0][:600]


def test_a_crop_wrong_at_either_end_is_one_bundle(tmp_path):
    """IREE's negative pads fed at run time read one element off: one failure shrank to a negative
    begin pad, another to a negative end pad, and each was a bundle of its own. A crop is one
    cause whichever end the minimal case keeps."""
    data = np.arange(1, 13, dtype=np.float32).reshape(6, 2)
    begin = classify(Case(spec=SPEC.id, data=data, pads=[0, -1, 0, 0]))
    end = classify(Case(spec=SPEC.id, data=np.arange(1, 5, dtype=np.float32).reshape(2, 2), pads=[0, 0, 0, -1]))
    reports = planted_run_bundles(tmp_path, FAKE + "ShiftedReadAdapter", [begin, end])
    assert len(reports) == 1, [r.splitlines()[0] for r in reports]


def large_reflect_case():
    """60 x 7 x 6 random floats; the pad of 6 on the axis of 7 is the planted trigger."""
    data = np.random.default_rng(1).standard_normal((60, 7, 6)).astype(np.float32)
    return Case(spec=SPEC.id, data=data, pads=[1, 6, 2, 0, 3, 1], mode="reflect")


@pytest.mark.slow
def test_a_large_random_case_shrinks_to_the_smallest_that_trips_the_planted_bug(tmp_path, capsys):
    code, out = minimize(tmp_path, case_file(tmp_path, large_reflect_case()), FAKE + "ReflectOffByOneAdapter",
                         "--time-limit", "30")
    assert code == 0
    data, pads = bundle_inputs(out)
    assert data.shape == (2,) and sorted(pads) == [0, 1]  # pad == dim - 1 = 1 on one axis of two elements
    assert data.tolist() == [1.0, 2.0] and data.dtype == np.float32  # small distinct values, float kept
    report = (out / "REPORT.md").read_text()
    # the planted bug is on every dtype and opset: the title names neither (removal experiments)
    assert report.startswith("# Pad(reflect) returns wrong values for a pad of the dimension minus one\n\n"
                             "tests.fake_adapters:ReflectOffByOneAdapter: ONNX Pad-19 reflect float, shape \\[2\\], ")
    assert "returns wrong values: values differ first at" in report
    assert "shape [60, 7, 6], 2520 elements" in report
    assert np.load(out / "expected.npy").tolist() in ([1.0, 2.0, 1.0], [2.0, 1.0, 2.0])


@pytest.mark.slow
def test_a_nan_constant_stays_nan_while_everything_else_shrinks(tmp_path):
    data = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    case = Case(spec=SPEC.id, data=data, pads=[2, 3, 1, 4], mode="constant",
                constant_value=np.array(np.nan, np.float32))
    code, out = minimize(tmp_path, case_file(tmp_path, case), FAKE + "NanConstantAdapter", "--time-limit", "30")
    assert code == 0
    data, pads = bundle_inputs(out)
    assert data.shape == (1,) and sorted(pads) == [0, 1]
    assert np.isnan(np.load(out / "constant_value.npy"))  # without the NaN the bug is gone
    assert np.isnan(np.load(out / "expected.npy")).sum() == 1


def test_a_crash_on_an_empty_axis_keeps_the_empty_axis_and_nothing_else(tmp_path):
    case = Case(spec=SPEC.id, data=np.zeros((3, 0, 4), np.int32), pads=[1, 0, 2, 0, 0, 3], mode="constant")
    code, out = minimize(tmp_path, case_file(tmp_path, case), FAKE + "EmptyAxisCrashAdapter", "--time-limit", "30")
    assert code == 0
    data, pads = bundle_inputs(out)
    assert data.shape == (0,) and pads == [0, 0]
    assert "crashes the process (killed by SIGSEGV" in (out / "REPORT.md").read_text()


@pytest.mark.slow
def test_a_runtime_crashing_on_every_other_attempt_stops_at_the_time_limit(tmp_path, monkeypatch):
    # Every call takes >= 0.4 s, so whatever the machine's speed the shrink cannot end on its own
    # within the limit of 1 s (it needs dozens of attempts) and may start at most 3 attempts.
    monkeypatch.setenv("PADCONF_CALL_COUNTER", str(tmp_path / "counter"))
    runtime = FAKE + "SlowCrashEveryOtherAdapter"
    code, out = minimize(tmp_path, case_file(tmp_path, large_reflect_case()), runtime, "--time-limit", "1")
    assert code == 0
    report = (out / "REPORT.md").read_text()
    assert report.count("returns wrong values") == 2 and "(stopped at the time limit)" in report  # title, summary
    runs = int(re.search(r"and (\d+) runs, each in a fresh process", report)[1])
    assert 1 <= runs <= 3  # no attempt started after the limit: 1 s / 0.4 s
    assert len((tmp_path / "counter").read_text()) >= 2  # it did run, crashes and all


# ---------------------------------------------------------------- real runtime: repro.py


def run_repro(where, *args, script="repro.py"):
    proc = subprocess.run([sys.executable, str(where / script), *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout


@pytest.mark.slow
def test_onnxruntime_refusing_a_reflect_crop_to_zero_gives_a_repro_that_exits_1_and_0_where_right(tmp_path):
    """"add or remove (if negative)": removing every element leaves nothing to reflect, and an
    empty output; onnxruntime refuses it. (The reflect Example 2 it refuses was withdrawn
    upstream, so that refusal conforms and is no bug to report.)"""
    pytest.importorskip("onnxruntime")
    case = Case(spec=SPEC.id, data=np.arange(3, dtype=np.float32), pads=[-3, 0], mode="reflect")
    code, out = minimize(tmp_path, case_file(tmp_path, case), "onnxruntime", "--time-limit", "20")
    assert code == 0
    data, pads = bundle_inputs(out)
    assert data.ndim == 1 and data.shape[0] + sum(pads) == 0 and min(pads) < 0  # a crop to zero
    report = (out / "REPORT.md").read_text()
    assert report.startswith("# Pad(reflect, edge, wrap) rejects a crop down to zero elements")  # constant: right
    assert re.search(r"\nonnxruntime: ONNX Pad-19 reflect float, shape \\\[\d\\\], pads \\\[-?\d, -?\d\\\]: rejects an "
                     r"input the spec defines: .*zero effective input extent", report)
    assert "Triage: **wrongly rejected**" in report
    assert "- runtime: onnxruntime 1." in report and "- Python: 3." in report
    assert (out / "repro.py").read_bytes() == Path(generic_repro.__file__).read_bytes()  # verbatim
    assert not re.search(r"^\s*(import|from) padconf", (out / "repro.py").read_text(), re.M)
    rc, printed = run_repro(out)
    assert rc == 1 and "BUG: the runtime rejects an input the specification defines" in printed
    rc, printed = run_repro(out, "--runtime", "openvino-onnx")  # a runtime that crops to an empty output
    assert rc == 0 and "OK: the output is the expected one" in printed
    # the repro in onnxruntime's own API: in the report, and beside it, failing the same way
    api = (out / "repro_onnxruntime.py").read_text()
    assert f"```python\n{api.rstrip()}\n```" in report and not re.search(r"^\s*(import|from) padconf", api, re.M)
    rc, printed = run_repro(out, script="repro_onnxruntime.py")
    assert rc == 1 and "expected: array([], dtype=float32)" in printed
    assert "actual:   an error:" in printed and "zero effective input extent" in printed


def test_a_repro_of_a_case_the_runtime_gets_right_exits_0(tmp_path):
    pytest.importorskip("onnxruntime")
    case = classify(Case(spec=SPEC.id, data=np.array([[1, 2], [3, 4]], np.float32), pads=[0, 1, 0, 0],
                         mode="constant", constant_value=np.array(7, np.float32)), SPEC)
    row = judged_row("onnxruntime", "inputs", case, Outcome(case.expected), "ok")
    attempt = Attempt(case, row, Outcome(case.expected))
    write_bundle(tmp_path / "b", Shrunk(attempt, attempt, 1, 0.0, False), "inputs", "onnxruntime", None,
                 Job(case))
    rc, printed = run_repro(tmp_path / "b")
    assert rc == 0 and "expected: [[7., 1., 2.],\n [7., 3., 4.]]" in printed and "OK:" in printed


def test_repro_help_runs_nothing_and_another_runtime_is_titled_as_itself(tmp_path):
    case = classify(Case(spec=SPEC.id, data=np.array([1, 2], np.float32), pads=[0, 1], mode="reflect"), SPEC)
    row = judged_row("onnxruntime", "inputs", case, Outcome(error="Pad reflect: pre-pad too large"), "ok")
    attempt = Attempt(case, row, Outcome(error="Pad reflect: pre-pad too large"))
    write_bundle(tmp_path / "b", Shrunk(attempt, attempt, 1, 0.0, False), "inputs", "onnxruntime", None, Job(case))
    rc, printed = run_repro(tmp_path / "b", "--help")
    assert rc == 0 and printed.startswith("usage: python repro.py [--runtime ") and "Exit 1 while the bug" in printed
    assert "ONNX Pad-19" not in printed and "expected:" not in printed  # nothing ran, not even the title
    rc, printed = run_repro(tmp_path / "b", "--runtime", "openvino-onnx")
    first, second = printed.splitlines()[:2]
    assert first == "openvino-onnx: ONNX Pad-19 reflect float, shape [2], pads [0, 1]"
    assert second.startswith("(padconf found this on onnxruntime: ONNX Pad-19 reflect float") and "rejects" in second


# ---------------------------------------------------------------- a user's model


def user_model(where, x: np.ndarray, pads: list[int], mode: str, opset: int = 18):
    """A model in ONNX test-data layout: x -> Relu -> Mul(2) -> Pad(pads, constant) -> Abs -> y,
    next to a second, harmless Pad (constant mode) on x; the Pads sit between other nodes."""
    from onnx import TensorProto, helper, numpy_helper
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "two"], ["m"]),
             helper.make_node("Pad", ["m", "pads"], ["p"], name="the_pad", mode=mode),
             helper.make_node("Abs", ["p"], ["y"]),
             helper.make_node("Pad", ["x", "zeros"], ["z"], name="harmless_pad")]
    inits = [numpy_helper.from_array(np.array(2, x.dtype), "two"),
             numpy_helper.from_array(np.array(pads, np.int64), "pads"),
             numpy_helper.from_array(np.array([0, 1] * x.ndim, np.int64)[:2 * x.ndim], "zeros")]
    graph = helper.make_graph(nodes, "users_model", [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, None),
                               helper.make_tensor_value_info("z", elem, None)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    (where / "test_data_set_0").mkdir(parents=True)
    (where / "model.onnx").write_bytes(model.SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    assert TensorProto.FLOAT == elem or x.dtype != np.float32
    return where


@pytest.mark.slow
def test_a_users_model_is_cut_to_its_failing_pad_fed_what_reaches_it(tmp_path):
    x = np.random.default_rng(3).standard_normal((6, 8)).astype(np.float32)
    model = user_model(tmp_path / "model", x, [0, 7, 0, 0], "reflect")  # pad 7 == dim - 1: the planted bug
    code, out = minimize(tmp_path, str(model), FAKE + "ModelCrashAdapter", "--time-limit", "30")
    assert code == 0
    index = (out / "INDEX.md").read_text()
    assert "skipped: case onnx/Pad-18:constant:float:" in index and "does not fail on" in index  # harmless_pad
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    case, placement = read_case_dir(bundle, load_specs())  # the model's pads are constants: so are the bundle's
    assert placement == "initializers" and case.data.shape == (2,) and sorted(case.pads) == [0, 1]
    report = (bundle / "REPORT.md").read_text()
    assert "## Found in" in report and "its Pad node `the_pad` (#2 in the graph)" in report
    # this planted runtime segfaults on whole models: that is what the whole model did, and what
    # reaches the Pad (relu(x) * 2, a 6 x 8 case) was computed by onnx's reference evaluator
    assert "the whole model: crash: killed by SIGSEGV" in report and "computed by onnx-reference" in report
    assert "shape [6, 8], 48 elements" in report


@pytest.mark.slow
def test_a_users_model_that_onnxruntime_refuses_gives_the_pad_alone_and_a_repro_exiting_1(tmp_path):
    pytest.importorskip("onnxruntime")
    x = np.array([[1, -2, 3, 4], [3, 4, -5, 6], [-5, 6, 7, 8]], np.float32)
    model = user_model(tmp_path / "model", x, [0, -4, 0, 0], "edge")  # crops axis 1 to nothing: shape (3, 0)
    code, out = minimize(tmp_path, str(model), "onnxruntime", "--time-limit", "20")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    report = (bundle / "REPORT.md").read_text()
    assert "on onnxruntime the whole model: refused:" in report and "computed by onnxruntime" in report
    assert "rejects an input the spec defines: Pad: invalid mode: 2 with zero effective input extent" in report
    assert len([n for n in __import__("onnx").load(str(bundle / "model.onnx")).graph.node]) == 1
    rc, printed = run_repro(bundle)
    assert rc == 1 and "BUG: the runtime rejects an input the specification defines" in printed


@pytest.mark.slow
def test_a_users_model_openvino_refuses_is_cut_with_openvinos_own_pad_inputs(tmp_path):
    pytest.importorskip("openvino")
    x = np.array(3, np.int64)  # rank 0: Pad-13 defines it (no pads, the scalar itself)
    model = user_model(tmp_path / "model", x, [], "reflect", opset=13)
    code, out = minimize(tmp_path, str(model), "openvino-onnx", "--time-limit", "20")
    assert code == 0
    bundle = next(d for d in out.iterdir() if d.is_dir() and "`the_pad`" in (d / "REPORT.md").read_text())
    report = (bundle / "REPORT.md").read_text()
    assert "on openvino-onnx the whole model: refused:" in report and "computed by openvino-onnx" in report
    # folded (every operand constant) it is answered: the title names the placement the refusal needs
    assert report.splitlines()[0].startswith("# Pad rejects a rank-0 input")  # every mode refuses it
    assert report.splitlines()[0].endswith("with constant pads") or "(opset 13)" in report.splitlines()[0]
    assert "has incorrect number of input/output dimensions" in report.splitlines()[2]  # OpenVINO's innermost words
    assert "baked into the model as constants" in report  # the model's own placement, and only that one
    rc, printed = run_repro(bundle)
    assert rc == 1 and "BUG: the runtime rejects an input the specification defines" in printed


@pytest.mark.slow
def test_a_users_model_that_panics_tract_is_cut_with_tracts_own_pad_inputs(tmp_path):
    pytest.importorskip("tract")
    x = np.array([[1, -2, 3, 4], [3, 4, -5, 6], [-5, 6, 7, 8]], np.float32)
    model = user_model(tmp_path / "model", x, [0, -1, 0, 0], "edge")  # any negative pad: a Rust panic
    code, out = minimize(tmp_path, str(model), "tract", "--time-limit", "20")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    report = (bundle / "REPORT.md").read_text()
    assert "on tract the whole model: crash: killed by SIGABRT" in report and "computed by tract" in report
    case, _ = read_case_dir(bundle, load_specs())
    assert case.data.size == 1 and -1 in case.pads  # shrunk, the crop kept
    # tract's own API: the same panic, in a child process whose death is the script's exit 1
    rc, printed = run_repro(bundle, script="repro_tract.py")
    assert rc == 1 and "expected: array(" in printed and "tract.onnx().load(" in (bundle / "repro_tract.py").read_text()


def test_the_whole_model_is_compared_with_the_directorys_output_files(tmp_path):
    from onnx import numpy_helper

    from padconf.execution.worker import Worker
    from padconf.minimize.model_cut import UserModel
    x = np.array([[1, -2], [3, 4]], np.float32)
    model = UserModel(user_model(tmp_path / "model", x, [0, 1, 0, 0], "edge"))
    y = np.abs(np.pad(np.maximum(x, 0) * 2, [(0, 0), (1, 0)], mode="edge"))  # relu, times 2, edge pad, abs
    z = np.pad(x, [(0, 0), (1, 1)])  # the harmless Pad: pads [0, 1, 0, 1], a zero column each side
    worker = Worker("onnx-reference")
    try:
        assert model.whole_run(worker) == "ran (the directory has no output_<i>.pb to compare with)"
        for i, arr in enumerate([y, z]):
            (model.where / "test_data_set_0" / f"output_{i}.pb").write_bytes(
                numpy_helper.from_array(arr).SerializeToString())
        assert UserModel(model.where).whole_run(worker) == "every output equals test_data_set_0/output_<i>.pb"
        z[0, 0] = 7
        (model.where / "test_data_set_0" / "output_1.pb").write_bytes(numpy_helper.from_array(z).SerializeToString())
        assert UserModel(model.where).whole_run(worker) == "output(s) 1 differ from test_data_set_0/output_<i>.pb"
    finally:
        worker.close()


def test_a_users_model_without_a_pad_is_one_line_and_exit_2(tmp_path, capsys):
    from onnx import TensorProto, helper, numpy_helper
    where = tmp_path / "model"
    (where / "test_data_set_0").mkdir(parents=True)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    (where / "model.onnx").write_bytes(helper.make_model(graph).SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.ones(2, np.float32)).SerializeToString())
    code, out = minimize(tmp_path, str(where), FAKE + "ConformingAdapter")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"padconf: {where}/model.onnx: no Pad node in the main graph (1 nodes: Relu)"]


def test_every_run_of_a_users_model_together_has_one_time_bound(tmp_path, capsys, monkeypatch):
    """A 445-byte model, a Loop of 2**62 trips feeding two Pads, kept minimize busy 903 s: 300 s
    for the whole run, then 300 s a worker for the graph up to a Pad (attack round III). Every run
    of one model shares MODEL_TIMEOUT_S: the whole run spends it, and the next run is one line."""
    from onnx import TensorProto, helper, numpy_helper

    import padconf.minimize.model_cut as model_cut
    monkeypatch.setattr(model_cut, "MODEL_TIMEOUT_S", 3.0)
    where = tmp_path / "loop"
    (where / "test_data_set_0").mkdir(parents=True)
    info = helper.make_tensor_value_info
    identities = [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Identity", ["v"], ["v_out"])]
    body = helper.make_graph(identities, "body", [info("i", TensorProto.INT64, []), info("c", TensorProto.BOOL, []),
                                      info("v", TensorProto.FLOAT, [2])],
                             [info("c_out", TensorProto.BOOL, []), info("v_out", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("Loop", ["M", "cond", "data"], ["looped"], body=body),
             *(helper.make_node("Pad", ["looped", "pads"], [f"out{k}"], name=f"pad{k}") for k in range(2))]
    graph = helper.make_graph(nodes, "g", [info("data", TensorProto.FLOAT, [2])],
                              [info(f"out{k}", TensorProto.FLOAT, None) for k in range(2)],
                              initializer=[numpy_helper.from_array(np.array(2**62, np.int64), "M"),
                                           numpy_helper.from_array(np.array(True), "cond"),
                                           numpy_helper.from_array(np.array([1, 0], np.int64), "pads")])
    (where / "model.onnx").write_bytes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]).SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.ones(2, np.float32)).SerializeToString())
    code, out = minimize(tmp_path, str(where), "onnxruntime")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1] == f"padconf: {where}: running the model (whole, and up to its Pads) took its 3 s " \
                                    "in all: cut it to the part that fails", err


def test_a_users_model_whose_pads_do_not_fail_alone_is_one_line_and_exit_2(tmp_path, capsys):
    x = np.ones((3, 4), np.float32)
    model = user_model(tmp_path / "model", x, [0, 1, 0, 1], "edge")
    code, _ = minimize(tmp_path, str(model), FAKE + "ConformingAdapter")
    *progress, last = capsys.readouterr().err.strip().splitlines()  # progress lines, then the one-line error
    assert code == 2 and last.startswith("padconf: ") and "no Pad node of the model fails alone" in last
    assert "runs Pad cases only, not a user's whole model" in "\n".join(progress)  # what the whole model did
    assert "when run alone (pass [initializers])" in last  # in the model's own placement only


# ---------------------------------------------------------------- pieces and bad input


def test_a_dimension_shrinks_together_with_its_pads_and_axes_go_when_they_can():
    case = Case(spec=SPEC.id, data=np.zeros((5,), np.float32), pads=[4, 0], mode="reflect")
    assert any(c.data.shape == (2,) and c.pads == [1, 0] for c in smaller_dims(case))
    with_axes = Case(spec=SPEC.id, data=np.zeros((2, 3), np.float32), pads=[1, 2], axes=[-1])
    assert [(c.axes, c.pads) for c in fewer_axes(with_axes)] == [(None, [0, 1, 0, 2]), ([], []), ([1], [1, 2])]


def test_string_data_stays_string_data_down_to_rank_0():
    """np.take of one string element gives a bare str, which numpy then read as <U4 ("numpy dtype
    <U4 has no spec name"): every string failure of a run was skipped by `padconf minimize`."""
    from padconf.minimize.shrink.simplify import fewer_dims, rank_one
    case = Case(spec="onnx/Pad-19", data=np.array(["abcd", "ef"], dtype=object), pads=[1, 0])
    (scalar,) = fewer_dims(case)
    assert scalar.data.dtype == object and scalar.data.shape == () and scalar.dtype == "string"
    assert scalar.data.item() == "abcd" and scalar.id
    assert rank_one(scalar).data.dtype == object and rank_one(scalar).dtype == "string"


def test_the_failure_key_masks_numbers_but_not_the_kind_of_failure():
    row = {"verdict": "wrongly-rejected", "error": "pre-pad (4) exceeds maximum allowed (3)", "kind": "defined",
           "reason": None}
    assert failure_key(row) == failure_key({**row, "error": "pre-pad (2) exceeds maximum allowed (1)"})
    assert failure_key(row) != failure_key({**row, "kind": "ambiguous", "reason": "mirror_beyond_dim"})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    assert main(["run", "--runtime", FAKE + "ConformingAdapter", "--spec", "onnx/Pad-19", "--max-examples", "0",
                 "--out", str(out), "--jobs", "1"]) == 0
    return out


@pytest.mark.parametrize("target, runtime, message", [
    ("{tmp}/missing.jsonl", "ConformingAdapter", r"missing\.jsonl: no such file or run directory"),
    ("{run}:onnx/Pad-19:reflect:float:nosuchcase", "ConformingAdapter",
     r"no case 'onnx/Pad-19:reflect:float:nosuchcase'"),
    ("{run}", "ConformingAdapter", r"ConformingAdapter has no failure in this run"),
    ("{case}", "ConformingAdapter",
     r"case onnx/Pad-19:reflect:float:\w+ does not fail on .* alone \(pass \[inputs\], "),
    ("{case}", "nosuchruntime", r"unknown runtime 'nosuchruntime'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, run_dir, target, runtime, message):
    case = case_file(tmp_path, Case(spec=SPEC.id, data=np.ones((2, 2), np.float32), pads=[0, 1, 0, 0], mode="reflect"))
    target = target.format(tmp=tmp_path, run=run_dir, case=case)
    code, _ = minimize(tmp_path, target, runtime if ":" in runtime or runtime == "nosuchruntime" else FAKE + runtime)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and re.search(message, err), err


@pytest.mark.slow
def test_a_run_minimizes_every_failure_and_goes_on_past_one_it_cannot(tmp_path, monkeypatch):
    """One failure whose bundle cannot be written is listed in INDEX.md; the others still get theirs."""
    from padconf.minimize import minimize as minimizing
    from padconf.minimize.bundle import writer as repro
    run = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-18", "--max-examples", "20",
                 "--out", str(run), "--jobs", "1"]) == 0
    written, real = [], repro.write_bundle

    def breaks_on_the_first(where, *args, **kwargs):
        written.append(where)
        if len(written) == 1:
            raise TypeError("planted: the bundle writer breaks on this failure")
        return real(where, *args, **kwargs)
    monkeypatch.setattr(minimizing, "write_bundle", breaks_on_the_first)  # imported there from bundle.writer
    code, out = minimize(tmp_path, str(run), FAKE + "CorrectAdapter", "--time-limit", "2")  # it accepts anything
    assert code == 0
    assert "TypeError: planted: the bundle writer breaks on this failure" in (out / "INDEX.md").read_text()
    bundles = [d for d in out.iterdir() if d.is_dir()]
    assert len(written) >= 2 and len(bundles) == len(written) - 1


def test_minimal_failures_with_one_root_cause_share_one_bundle_listing_the_variants(tmp_path):
    """onnxruntime refuses rank-0 data of every dtype, each with its own C++ template in the
    error text (one distinct failure per dtype in the run): one bug, one bundle."""
    from padconf.cases.classify import classify
    from padconf.run.runner import Run, RunConfig
    pytest.importorskip("onnxruntime")
    import ml_dtypes  # bfloat16: onnxruntime's Concat has no kernel for it, so no control computes on its
    # values; that is no other mechanism (no control fails), and its refusal stays a variant
    cases = [classify(Case(spec=f"onnx/Pad-{18 if dtype != ml_dtypes.bfloat16 else 21}", data=np.array(1, dtype),
                           pads=[])) for dtype in (ml_dtypes.bfloat16, np.float32, np.uint8, np.int64)]
    run = Run(tmp_path / "run", RunConfig(runtimes=["onnxruntime"]), jobs=1)
    run.execute(run.plan(run.prepare(cases)))
    code, out = minimize(tmp_path, str(tmp_path / "run"), "onnxruntime", "--time-limit", "5")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    # found first on bfloat16, whose values no control computes on here: the bundle is a common dtype's
    assert "-bug-" in bundle.name and "bfloat16" not in bundle.name, bundle.name
    variants = (bundle / "REPORT.md").read_text().split("## Variants", 1)[1]
    lines = {dtype: [v for v in variants.splitlines() if f":{dtype}:" in v] for dtype in ("float", "uint8", "int64",
                                                                                        "bfloat16")}
    assert all(found and all("rejects a rank-0 input" in v for v in found) for found in lines.values()), variants
    assert (out / "INDEX.md").read_text().count("merged: 3 failures of the same mechanism as bundle") == 1
    # each variant rerun through the bundle's own experiment, recorded: it fails again, alike
    found = json.loads((bundle / "evidence.json").read_text())
    assert len(found["variants"]) == 3 and all(v["fails_again"] for v in found["variants"])
    assert found["fails_again"] and all(v["mechanism"] == ["answers", True, False, True] for v in found["variants"])


def test_shrinking_starts_from_a_worked_example_else_from_data_of_rank_one_or_more():
    # from rank 0 shrinking can only stay there, where OpenVINO's own rank-0 bug answers
    from padconf.minimize.targets import _starting_rows

    def row(case_id, shape, origin="generated"):
        return {"runtime": "rt", "verdict": "crash", "spec": "onnx/Pad-19", "mode": "edge", "dtype": "float",
                "error": "killed by SIGSEGV", "detail": None, "origin": origin, "case_id": case_id, "shape": shape,
                "placement": "inputs", "reason": None, "matched": None}
    rows = [row("scalar", []), row("matrix", [2, 3]), row("vector", [4])]
    assert [r["case_id"] for r in _starting_rows(rows).values()] == ["matrix"]
    rows.append(row("documented", [], origin="example:example_3_edge"))
    assert [r["case_id"] for r in _starting_rows(rows).values()] == ["documented"]


@pytest.mark.slow
def test_one_lenience_across_dtypes_and_versions_is_one_bundle_and_another_rule_its_own(tmp_path):
    """onnx's ReferenceEvaluator checks no type list: int8 data at Pad-2 and complex64 at Pad-11
    are two distinct failures of the run ("dtype int8 is not in this version's type list", and
    complex64's), one bug to file: one bundle listing both. Its acceptance of mode wrap at
    Pad-11 breaks another rule: a bundle of its own."""
    from padconf.cases.classify import classify
    from padconf.run.runner import Run, RunConfig
    data = np.arange(6).reshape(2, 3)
    dtypes = [classify(Case(spec="onnx/Pad-2", data=data.astype(np.int8), pads=[0, 1, 0, 1])),
              classify(Case(spec="onnx/Pad-11", data=data.astype(np.complex64), pads=[0, 1, 0, 1]))]
    wrap = classify(Case(spec="onnx/Pad-11", data=data.astype(np.float32), pads=[0, 1, 0, 1], mode="wrap"))
    assert [c.rule for c in dtypes] == ["dtypes", "dtypes"] and wrap.rule == "modes"
    run = Run(tmp_path / "run", RunConfig(runtimes=["onnx-reference"]), jobs=1)
    run.execute(run.plan(run.prepare([*dtypes, wrap])))
    code, out = minimize(tmp_path, str(tmp_path / "run"), "onnx-reference", "--time-limit", "3")
    assert code == 0
    reports = [(d / "REPORT.md").read_text() for d in out.iterdir() if d.is_dir()]
    assert len(reports) == 2
    (lenient,) = [r for r in reports if "type list" in r.splitlines()[0]]
    variants = lenient.split("## Variants", 1)[1]
    assert "int8 data (not in this opset's type list) (opset 2)" in variants
    assert "complex64 data (not in this opset's type list) (opset 11)" in variants
    (modes,) = [r for r in reports if r is not lenient]
    assert "accepts mode wrap" in modes.splitlines()[0] and "## Variants" not in modes


def test_a_type_list_unchecked_through_pad_and_its_control_alike_is_one_bundle_whatever_the_dtype(tmp_path):
    """onnx's ReferenceEvaluator accepts float8e4m3fn data at Pad-13 and bfloat16 at Pad-11,
    neither in those versions' type lists, and as much through the Identity control (whose
    versions list neither): not Pad-specific, one check missing on the shared path, one bundle
    for both dtypes."""
    import ml_dtypes

    from padconf.cases.classify import classify
    from padconf.run.runner import Run, RunConfig
    data = np.arange(6).reshape(2, 3)
    cases = [classify(Case(spec="onnx/Pad-13", data=data.astype(ml_dtypes.float8_e4m3fn), pads=[0, 1, 0, 1])),
             classify(Case(spec="onnx/Pad-11", data=data.astype(ml_dtypes.bfloat16), pads=[0, 1, 0, 1]))]
    assert [c.rule for c in cases] == ["dtypes", "dtypes"]
    run = Run(tmp_path / "run", RunConfig(runtimes=["onnx-reference"]), jobs=1)
    run.execute(run.plan(run.prepare(cases)))
    code, out = minimize(tmp_path, str(tmp_path / "run"), "onnx-reference", "--time-limit", "3")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    report = (bundle / "REPORT.md").read_text()
    assert "Triage: **not Pad-specific**" in report and "## Variants" in report


def test_one_bug_that_shows_as_a_wrong_value_and_as_a_refusal_is_one_bundle(tmp_path):
    """A runtime that refuses rank-0 data with constant pads and answers it wrongly with fed pads
    has one bug on rank-0 data (its minimal inputs share that feature): one bundle, both faces
    under Variants. A wrong value on some other data would be a bundle of its own."""
    from padconf.cases.classify import classify
    from padconf.run.runner import Run, RunConfig
    scalar = classify(Case(spec="onnx/Pad-19", data=np.array(2.0, np.float32), pads=[]))
    matrix = classify(Case(spec="onnx/Pad-19", data=np.ones((2, 3), np.float32), pads=[0, 1, 0, 1]))
    run = Run(tmp_path / "run", RunConfig(runtimes=[FAKE + "RankZeroAdapter"]), jobs=1)
    run.execute(run.plan(run.prepare([scalar, matrix])))
    code, out = minimize(tmp_path, str(tmp_path / "run"), FAKE + "RankZeroAdapter", "--time-limit", "3")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    variants = (bundle / "REPORT.md").read_text().split("## Variants", 1)[1]
    assert "returns wrong values for a rank-0 input" in variants and "[inputs]" in variants
    # a variant's line is its case's, without the title's removal experiments (each is more runs, a
    # compile each on a compiler): it names the opset and dtype it was found on
    assert "rejects a rank-0 input" in variants and "[folded]" in variants


@pytest.mark.parametrize("adapter, bundles", [("RunTimeSkipsCheckAdapter", 1), ("NoCheckAdapter", 2)])
def test_empty_tensors_where_folded_is_refused_are_one_check_the_run_time_path_skips(tmp_path, adapter, bundles):
    """OpenVINO refuses edge on an empty axis and reflect past the axis where it knows the shapes
    (folded) and answers both with an empty tensor at run time: two distinct failures whose
    minimal cases have different features, one check to file. A runtime that answers the empty
    tensor folded too shows no such check: two bundles."""
    empty = classify(Case(spec="onnx/Pad-19", data=np.ones((2, 0), np.float32), pads=[0, 1, 0, 0], mode="edge"))
    beyond = classify(Case(spec="onnx/Pad-19", data=np.ones((3, 2), np.float32), pads=[0, 2, 0, 0], mode="reflect"))
    assert {empty.reason, beyond.reason} == {"empty_axis_nonconstant", "mirror_beyond_dim"}
    reports = planted_run_bundles(tmp_path, FAKE + adapter, [empty, beyond])
    assert len(reports) == bundles
    skipped = [r for r in reports if "returns an empty tensor at run time for" in r.splitlines()[0]]
    if bundles == 1:
        assert skipped and "which it refuses when folded at compile time" in reports[0].splitlines()[0]
        assert "Folded at compile time (every input a constant)" in reports[0]
        assert "needs more data than the axis has" in reports[0]
        assert "## Variants" in reports[0]
    else:
        assert not skipped and all("## Variants" not in r for r in reports)


def test_two_wrong_outputs_are_alike_when_equal_or_both_hold_values_from_nowhere():
    """Memory never written (OpenVINO's rank-0 garbage, through its ONNX frontend and its own
    Pad-12) differs from process to process: two such outputs are alike where both hold a value
    that neither the input nor any reading's output holds. Values misplaced are not garbage."""
    from padconf.core.vocabulary import Status
    from padconf.minimize.probes.experiments import _alike
    case = classify(Case(spec="onnx/Pad-18", data=np.array([1.0, 2.0], np.float32), pads=[0, 1]))

    def attempt(values):
        outcome = Outcome(np.array(values, np.float32))
        return Attempt(case, judged_row("rt", "inputs", case, outcome, Status.OK), outcome)

    def native(values):
        return Outcome(np.array(values, np.float32))

    assert _alike(attempt([7.5e30, 2, 0]), case, native([-3e-20, 2, 0]), Status.OK)
    assert _alike(attempt([2, 1, 0]), case, native([2, 1, 0]), Status.OK)
    assert not _alike(attempt([2, 1, 0]), case, native([1, 1, 0]), Status.OK)
    assert not _alike(attempt([7.5e30, 2, 0]), case, native([2, 1, 0]), Status.OK)
    assert not _alike(attempt([7.5e30, 2, 0]), case, native([7.5e30, 2]), Status.OK)


@pytest.mark.slow
def test_an_answer_no_reading_gives_moves_to_a_wrong_value_on_a_defined_input_and_is_one_bug(tmp_path):
    """A constant of -0.0 padded as +0.0 (OpenVINO's CPU plugin): found on pads that pad one
    end and crop the other past the axis, which the document leaves undefined (no reading gives
    the answer), and on positive pads (a wrong value). Both shrink to a defined input with the
    same wrong value: one bundle, filed as a mismatch, not one bundle per verdict."""
    minus_zero = np.array(-0.0, np.float32)
    crop = classify(Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0, 3.0], np.float32), pads=[2, -4],
                         constant_value=minus_zero), SPEC)
    plain = classify(Case(spec="onnx/Pad-19", data=np.array([1.0], np.float32), pads=[1, 0],
                          constant_value=minus_zero), SPEC)
    assert (crop.kind, plain.kind) == ("ambiguous", "defined")
    from padconf.run.runner import Run, RunConfig
    run = Run(tmp_path / "run", RunConfig(runtimes=[FAKE + "NegativeZeroConstantAdapter"]), jobs=1)
    run.execute(run.plan(run.prepare([crop, plain])))
    code, out = minimize(tmp_path, str(tmp_path / "run"), FAKE + "NegativeZeroConstantAdapter", "--time-limit", "5")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    assert "-mismatch-" in bundle.name
    report = (bundle / "REPORT.md").read_text()
    assert "this input is defined" in report and "## Variants" in report
    assert all(p >= 0 for p in np.load(bundle / "pads.npy").tolist())


def test_failures_whose_controls_fail_alike_are_one_bug_of_the_shared_path_whatever_the_pad(tmp_path):
    """An empty folded constant turned into a scalar shows through Pad as a wrong shape, and as a
    refusal in edge mode, two distinct failures of the run; its controls show the scalar for
    both: one bug of the path Pad shares with them, one bundle in INDEX.md's section for such
    bugs, not one per verdict or mode."""
    empty = [classify(Case(spec="onnx/Pad-13", data=np.zeros((0,), np.float32), pads=[0, 0]), get_spec("onnx/Pad-13")),
             classify(Case(spec="onnx/Pad-18", data=np.zeros((0, 2), np.float32), pads=[0, 1, 0, 0], mode="edge"),
                      get_spec("onnx/Pad-18"))]
    from padconf.run.runner import Run, RunConfig
    runtime = FAKE + "EmptyConstantToScalarAdapter"
    run = Run(tmp_path / "run", RunConfig(runtimes=[runtime]), jobs=1)
    run.execute(run.plan(run.prepare(empty)))
    code, out = minimize(tmp_path, str(tmp_path / "run"), runtime, "--time-limit", "3")
    assert code == 0
    (bundle,) = [d for d in out.iterdir() if d.is_dir()]
    assert "## Variants" in (bundle / "REPORT.md").read_text()
    index = (out / "INDEX.md").read_text()
    section = index.split(f"[{bundle.name}]")[0].rsplit("## ", 1)[1].splitlines()[0]
    assert section.startswith("Not Pad-specific")


@pytest.mark.slow
@pytest.mark.parametrize("adapter, packed", [("PackingBugAdapter", 1), ("WideBugAdapter", 0)])
def test_failures_on_sub_byte_data_that_its_byte_wide_twin_does_not_show_are_one_bug(tmp_path, adapter, packed):
    """OpenVINO's CPU kernel packs uint2 wrong: a wrong shape for zero pads (defined) and an
    answer no reading gives for a reflect pad past the axis (undefined), two distinct failures
    of two verdicts, are one bug, since the same values as uint8 pass. A runtime wrong on uint8
    too has no packing bug, and is wrong alike in every mode: one bundle, which names no packing."""
    import ml_dtypes
    wide = classify(Case(spec="onnx/Pad-25", data=np.ones((2, 3), ml_dtypes.uint2), pads=[0, 0, 0, 0]))
    crop = classify(Case(spec="onnx/Pad-25", data=np.arange(2).astype(ml_dtypes.uint2), pads=[0, 2], mode="reflect"))
    assert (wide.kind, crop.kind) == ("defined", "ambiguous")
    reports = planted_run_bundles(tmp_path, FAKE + adapter, [wide, crop])
    assert len(reports) == 1 and "## Variants" in reports[0]
    assert len([r for r in reports if "The same values as uint8 pass" in r]) == packed


def test_the_operation_pad_lowers_to_runs_set_up_as_the_runtime_that_failed():
    """native_check's runtime: the adapter's lowered_to, with a variant's settings carried over
    (OpenVINO's Pad-12 compiled as the frontend's variant was); none where Pad lowers to nothing."""
    from padconf.minimize.probes.experiments import lowered_runtime
    assert lowered_runtime("openvino-onnx") == ("openvino", "openvino/Pad-12")
    assert lowered_runtime("openvino-onnx[threads=1]") == ("openvino[threads=1]", "openvino/Pad-12")
    assert lowered_runtime("onnxruntime") is None and lowered_runtime("openvino") is None


def test_a_report_of_an_input_with_many_readings_reads_once_within_80_lines(tmp_path):
    """An undefined input with three undefined points has twelve readings, most of them an error:
    REPORT.md lists each distinct answer once (the readings that give it together), and where its
    first part would still run past about 80 lines, the specification's words go to the appendix."""
    from padconf.minimize.minimize import write_evidence
    from padconf.minimize.probes.evidence import NEEDS_A_LOOK
    spec = get_spec("onnx/Pad-18")
    case = classify(Case(spec=spec.id, data=np.zeros((1, 0), np.complex64), pads=[0, 0, 0, 0, 1, -2], mode="edge",
                         axes=[1, 1, 0]), spec)
    assert case.kind == "ambiguous" and len(case.interpretations) == 12
    outcome = Outcome(error="MLDataType for: tensor(complex64) is not currently registered or supported")
    attempt = Attempt(case, judged_row("onnxruntime", "inputs", case, outcome, "ok"), outcome)
    write_bundle(tmp_path / "b", Shrunk(attempt, attempt, 1, 0.0, False), "inputs", "onnxruntime", None, Job(case))
    checks = {k: {"name": k, "what": "w", "needed": True, "passed": True, "how": "h"} for k in "abcdef"}
    write_evidence(tmp_path / "b", {"label": NEEDS_A_LOOK, "missing": [], "checks": checks})
    report = (tmp_path / "b" / "REPORT.md").read_text()
    head, appendix = report.split("\n## Appendix\n", 1)
    assert len(head.splitlines()) <= 80, len(head.splitlines())
    assert head.count(": an error") == 1  # ten readings, one answer
    assert "Behavior is undefined if an axis is repeated." in report


def test_a_sign_of_zero_lost_in_two_modes_and_two_float8_types_is_one_bug():
    """OpenVINO's Pad-1 copies float8 -0 as +0 with zero pads, in constant mode on float8e4m3fn
    and in symmetric mode on float8e5m2: two bug bundles, one mechanism (audit I)."""
    import ml_dtypes

    from padconf.core.vocabulary import Placement
    from padconf.minimize.probes.root_cause import mechanism_key, root_cause
    keys = []
    for dtype, mode, values in ((ml_dtypes.float8_e4m3fn, "constant", [1, 2, 3, -0.0]),
                                (ml_dtypes.float8_e5m2, "symmetric", [1, -0.0])):
        case = classify(Case(spec="openvino/Pad-1", data=np.array(values, dtype), pads=[0, 0], mode=mode))
        outcome = Outcome(np.abs(case.data))
        row = judged_row("openvino", "inputs", case, outcome, "ok")
        assert row["difference"] == "nan-payload-or-zero-sign", row
        shrunk = Shrunk(Attempt(case, row, outcome), Attempt(case, row, outcome), 1, 0.1, False)
        keys.append((root_cause(shrunk, Placement.INPUTS), mechanism_key(shrunk, Placement.INPUTS)))
    assert keys[0] == keys[1]


def test_a_failure_every_mode_shows_alike_is_one_mechanism_whatever_mode_it_shrank_in():
    """IREE returns the data unchanged for axes fed at run time: one bundle shrank in constant
    mode ("an axes input"), another in reflect mode, titled "a pad of the dimension minus one";
    each bundle's mode experiment found every mode failing alike, and they are one mechanism
    (audit I)."""
    from padconf.core.vocabulary import Placement
    from padconf.minimize.probes.root_cause import mechanism_key

    def key(mode, data, pads, modes, right=(), output=None):
        case = classify(Case(spec="onnx/Pad-21", data=np.array(data, np.float32), pads=pads, axes=[0], mode=mode))
        outcome = Outcome(case.data.copy() if output is None else np.array(output, np.float32))
        row = judged_row("iree", "inputs", case, outcome, "ok")
        assert row["verdict"] == "mismatch", row
        shrunk = Shrunk(Attempt(case, row, outcome), Attempt(case, row, outcome), 1, 0.1, False)
        shrunk.features = {"opset": True, "dtype": True, "modes": modes, "modes_right": list(right)}
        return mechanism_key(shrunk, Placement.INPUTS)
    assert key("constant", [1], [0, 1], []) == key("reflect", [1, 2], [1, 0], [])
    # the input answered unchanged, as a wrong shape or as wrong values, where no other mode's
    # case could be judged alike (audit V: a crop to nothing, and pads that keep the shape)
    assert key("edge", [1, 2, 3], [0, -3], None) == key("constant", [1, 2], [1, -1], None)
    # where another mode is answered right, the mode is the mechanism's
    assert key("constant", [1], [0, 1], None, right=["edge"]) != key("reflect", [1, 2], [1, 0], None, right=["edge"])
    # a wrong value that is not the input unchanged keeps its mode
    assert key("constant", [1], [0, 1], None, output=[1, 7]) != key("edge", [1], [0, 1], None, output=[1, 7])


def test_a_pad_answered_by_its_input_unchanged_is_titled_so():
    """Audit V: IREE's dropped Pad was titled by its symptom ("the wrong output shape for a crop
    down to zero elements"), which hid that the pads were ignored."""
    from padconf.minimize.bundle.title import title
    case = classify(Case(spec="onnx/Pad-24", data=np.array([1.0], np.float32), pads=[0, -1], axes=[0]))
    outcome = Outcome(case.data.copy())
    row = judged_row("iree", "inputs", case, outcome, "ok")
    assert Attempt(case, row, outcome).pads_ignored
    assert "ignores its pads, returning its input unchanged" in title(row, case, features={"pads_ignored": True})
    wrong = Outcome(np.array([7.0], np.float32))
    assert not Attempt(case, judged_row("iree", "inputs", case, wrong, "ok"), wrong).pads_ignored
