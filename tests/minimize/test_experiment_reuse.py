"""What minimize runs after shrinking: a case and placement run once with the full timeout is
answered from that run when an experiment asks for it again (the minimal case folded, its
controls, its twins: a compile each on a compiler), but a rerun that is the experiment (does it
fail again, does its output change from run to run) runs afresh; a run cut short by the
shrinking deadline is never reused. And without --runtime, the runtimes start slowest first."""
import numpy as np

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.core.vocabulary import Placement, Status
from padconf.minimize.shrink.loop import IsolatedRunner
from padconf.spec.reference import pad


class CountingWorker:
    """Stands in for a Worker in padconf's own test: answers as the reference, counting its runs."""

    def __init__(self):
        self.timeout, self.runs = 5.0, []

    def run_alone(self, case, placement):
        self.runs.append((case.id, placement, self.timeout))
        if case.op == "Identity":
            return Outcome(output=case.data.copy()), Status.OK
        return Outcome(output=pad(case.data, case.pads, case.mode, case.constant_value, case.axes)), Status.OK


def test_an_experiment_asking_a_case_again_is_answered_by_its_earlier_run():
    worker = CountingWorker()
    isolated = IsolatedRunner(worker, "onnxruntime")
    case = Case(spec="onnx/Pad-19", data=np.array([1, 2, 3], np.float32), pads=[1, 0])
    first = isolated.attempt(case, Placement.INPUTS)
    again = isolated.attempt(case, Placement.INPUTS)
    assert len(worker.runs) == 1 and isolated.tries == 1 and isolated.reused == 1
    assert again.row["verdict"] == first.row["verdict"] == "pass"
    np.testing.assert_array_equal(again.outcome.output, first.outcome.output)
    isolated.attempt(case, Placement.FOLDED)  # another placement is another run
    isolated.attempt(case, Placement.INPUTS, fresh=True)  # a rerun meant as one
    isolated.control(first, Placement.INPUTS)
    isolated.control(first, Placement.INPUTS)  # its controls once
    controls = len(first.case.controls(Placement.INPUTS))
    assert len(worker.runs) == 3 + controls and isolated.reused == 1 + controls


def test_a_run_cut_short_by_the_deadline_is_not_reused():
    import time
    worker = CountingWorker()
    isolated = IsolatedRunner(worker, "onnxruntime")
    case = Case(spec="onnx/Pad-19", data=np.array([1, 2, 3], np.float32), pads=[0, 1])
    isolated.attempt(case, Placement.INPUTS, deadline=time.monotonic() + 1.0, shorten=True)
    isolated.attempt(case, Placement.INPUTS)
    assert len(worker.runs) == 2 and worker.runs[0][2] < 5.0 and worker.runs[1][2] == 5.0
    isolated.attempt(case, Placement.INPUTS)
    assert len(worker.runs) == 2


def test_the_compilers_and_the_runtimes_with_most_failures_start_first(tmp_path):
    import json

    from padconf.minimize.across import failures, slowest_first
    from padconf.run.rundir import RESULTS
    whole = {"placement": "inputs", "spec": "onnx/Pad-19", "mode": "constant", "dtype": "float", "shape": [1],
             "pads": [1, 0], "case_id": "x", "origin": "example"}
    rows = [{**whole, "runtime": r, "verdict": v, "case_id": f"case{n}"} for n, (r, v) in enumerate(
            [("onnxruntime", "mismatch"), ("openvino", "mismatch"), ("openvino", "crash"), ("tvm", "mismatch"),
             ("openvino-onnx", "pass")])]
    (tmp_path / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in rows))
    order = slowest_first(failures(tmp_path), ["onnxruntime", "openvino", "openvino-onnx", "tvm"])
    assert order == ["tvm", "openvino", "onnxruntime", "openvino-onnx"]


def test_the_pads_own_control_passing_is_no_control_of_the_datas_values():
    """Check (c) needs a control computing on the data's values to pass: where the data's own
    Concat has no kernel (OpenVINO's frontend on strings), the pads' int64 values through Concat
    passing says nothing of the data, and the check is still missing."""
    from types import SimpleNamespace

    from padconf.minimize.probes.evidence import computing_controls

    class Runner:  # padconf's own stand-in: the data's Concat refused, every other control right
        runtime = "onnxruntime"

        def run_alone(self, control, where):
            if control.op == "Concat" and control.data.dtype != np.int64:
                return Outcome(error="no Concat kernel for this type"), Status.OK
            return Outcome(output=control.expected), Status.OK

    case = Case(spec="onnx/Pad-19", data=np.array([1, 2, 3], np.int32), pads=[1, 0])
    final = SimpleNamespace(case=case, row={"verdict": "wrongly-rejected"})
    found = computing_controls(Runner(), SimpleNamespace(final=final), Placement.INPUTS)
    assert [r["operand"] for r in found["controls"]] == ["data", "values", "pads values"]
    assert found["controls"][2]["verdict"] == "pass" and found["passed"] is False


def test_the_jobs_of_one_runtime_share_what_its_runs_gave():
    """Two jobs of one runtime (runners of one worker, each with its own reading of the
    document's ambiguities) ask alike cases, a plain twin or a control: the second is answered
    by the first's run."""
    worker, answers = CountingWorker(), {}
    case = Case(spec="onnx/Pad-19", data=np.array([1, 2, 3], np.float32), pads=[1, 1])
    IsolatedRunner(worker, "onnxruntime", answers=answers).attempt(case, Placement.INPUTS)
    second = IsolatedRunner(worker, "onnxruntime", answers=answers)
    assert second.attempt(case, Placement.INPUTS).row["verdict"] == "pass"
    assert len(worker.runs) == 1 and second.reused == 1 and second.tries == 0


def test_a_hang_is_not_waited_for_again_in_other_placements_nor_shrunk_where_upstream_knows_it():
    """A compiler's hang costs its whole compile limit each time it is asked: the placement's
    removal experiment does not ask it again (None: the run's case decides the title), and a
    hang a known issue covers by the case's features (IREE's wrap compile hang) is not shrunk,
    while a hang of another runtime or mode is."""
    from padconf.cases.classify import classify
    from padconf.judging.records import judged_row
    from padconf.minimize.probes.experiments import known_hang, placement_needed
    from padconf.minimize.shrink.loop import Attempt

    class NeverAsked:
        def attempt_if_it_can(self, *args, **kw):
            raise AssertionError("a hang was asked again")

    def hang(runtime, mode):
        case = classify(Case(spec="onnx/Pad-19", data=np.array([1, 2, 3], np.float32), pads=[1, 1], mode=mode))
        return Attempt(case, judged_row(runtime, "initializers", case, Outcome(error="timed out"), "timeout"),
                       Outcome(error="timed out"))

    assert placement_needed(NeverAsked(), hang("iree", "wrap"), Placement.INITIALIZERS,
                            ["inputs", "initializers", "folded"]) is None
    assert known_hang(hang("iree", "wrap"))
    assert not known_hang(hang("iree", "edge")) and not known_hang(hang("tvm", "wrap"))
