"""Runtimes misbehaving in their worker: one case gets crash / timeout, the run goes on.
The fakes (tests/fake_adapters.py) answer like the reference except on data starting with 666."""
from pathlib import Path

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.execution.worker import Worker
from padconf.judging.verdicts import judge


def batch():
    return [classify(Case(spec="onnx/Pad-18", data=np.array([v, 2, 3], np.int32), pads=[1, 1]))
            for v in (1, 666, 2, 3)]


@pytest.mark.slow
@pytest.mark.parametrize("fake,verdict,words", [
    ("SegfaultAdapter", "crash", "SIGSEGV"),
    ("AbortAdapter", "crash", "SIGABRT"),
    ("HangAdapter", "timeout", "no answer within"),
    ("GreedyAdapter", "crash", "out of memory"),
    ("WrongValuesAdapter", "mismatch", "values differ"),
])
def test_one_bad_case_costs_one_case(fake, verdict, words):
    worker = Worker(f"tests.fake_adapters:{fake}", memory_mb=1024, timeout=20 if fake != "HangAdapter" else 2)
    try:
        cases = batch()
        results = [judge(c, outcome, status) for c, (outcome, status) in zip(cases, worker.run(cases, "inputs"))]
    finally:
        worker.close()
    assert [r.verdict for r in results] == ["pass", verdict, "pass", "pass"]
    assert words in results[1].detail
    # a crash or hang is retried once alone in a fresh worker, which fails again: two restarts
    assert worker.restarts == (0 if fake == "WrongValuesAdapter" else 2)


def test_crash_caused_by_an_earlier_case_is_not_pinned_on_an_innocent_one():
    worker = Worker("tests.fake_adapters:PoisonAdapter")
    try:
        cases = batch()
        outcomes = list(worker.run(cases, "inputs"))
    finally:
        worker.close()
    verdicts = [judge(c, outcome, status).verdict for c, (outcome, status) in zip(cases, outcomes)]
    assert verdicts == ["pass"] * 4
    assert outcomes[1][0].note is None  # the poisoning case itself answered
    assert "crash when run after other cases" in outcomes[2][0].note and "SIGSEGV" in outcomes[2][0].note


def test_adapter_exception_is_an_error_outcome_not_a_crash():
    worker = Worker("tests.fake_adapters:CorrectAdapter")
    try:
        (outcome, status), = list(worker.run([Case(spec="onnx/Pad-18", data=np.array([666], np.int32), pads=[0, 0])],
                                             "inputs"))
    finally:
        worker.close()
    assert status == "ok" and "NotImplementedError" in outcome.error


@pytest.mark.slow
def test_a_worker_that_stops_reading_cannot_block_padconf():
    values = np.random.default_rng(0).integers(1, 2**31 - 1, 100_000, dtype=np.int32)
    assert values[0] != 666
    big = [classify(Case(spec="onnx/Pad-18", data=values, pads=[1, 1]))
           for _ in range(3)]  # about 0.5 MB of JSON a case: far more than a pipe holds
    stuck = Case(spec="onnx/Pad-18", data=np.array([666, 1], np.int32), pads=[0, 0])
    worker = Worker("tests.fake_adapters:DeafAdapter", timeout=2)
    try:
        assert [status for _, status in worker.run([stuck], "inputs")] == ["ok"]
        results = list(worker.run(big, "inputs"))
    finally:
        worker.close()
    assert [status for _, status in results] == ["ok"] * 3
    assert "stopped reading its input" in results[0][0].note  # retried alone in a fresh worker


@pytest.mark.slow
def test_a_case_retried_alone_gets_its_own_verdict_even_when_it_is_not_a_pass():
    # 777 crashes in the worker 666 poisoned, but alone it hangs: its verdict is timeout, not
    # the crash the poisoned worker gave it (bench_faults.py found this misattribution)
    cases = [classify(Case(spec="onnx/Pad-18", data=np.array([v, 2, 3], np.int32), pads=[1, 1]))
             for v in (1, 666, 777, 3)]
    worker = Worker("tests.fake_adapters:PoisonThenHangAdapter", timeout=2)
    try:
        outcomes = list(worker.run(cases, "inputs"))
    finally:
        worker.close()
    assert [judge(c, o, s).verdict for c, (o, s) in zip(cases, outcomes)] == ["pass", "pass", "timeout", "pass"]
    assert (outcomes[2][0].note.startswith("crash when run after other cases")
            and outcomes[2][0].note.endswith("alone: timeout"))


def test_a_worker_that_returned_a_wrong_output_or_accepted_an_invalid_case_does_not_run_the_next_case():
    # wrong values (666), an accepted must-reject case (int32 is not a Pad-2 type), right answers
    cases = [classify(Case(spec=spec, data=np.array([v, 2, 3], np.int32), pads=[1, 1]))
             for spec, v in (("onnx/Pad-18", 1), ("onnx/Pad-18", 666), ("onnx/Pad-18", 4), ("onnx/Pad-2", 5),
                             ("onnx/Pad-18", 6))]
    worker = Worker("tests.fake_adapters:WrongValuesAdapter", timeout=20)
    try:
        placed = []
        for _answer in worker.run(cases, "inputs"):
            placed.append(worker.placed)
    finally:
        worker.close()
    # the case after each corrupting answer (666's wrong values, the accepted Pad-2 case) runs in a fresh process
    assert [p[1] for p in placed] == [0, 1, 0, 1, 0]
    assert len({p[0] for p in placed}) == 3 and worker.recycles == 2


def test_a_worker_ended_after_an_impossible_output_has_not_started_the_next_case():
    # a runtime not known to answer alike whatever ran before gets one case at a time: what a
    # worker computed ahead would run on the heap it may have corrupted, and a build it left
    # for later workers (OpenVINO's scratch folder, a compiler's compile cache) would outlive it
    cases = [classify(Case(spec="onnx/Pad-18", data=np.array([v, 2, 3], np.int32), pads=[1, 1]))
             for v in (1, 666, 4, 5)]
    worker = Worker("tests.fake_adapters:RecordingWrongValuesAdapter", timeout=20)
    try:
        assert [status for _, status in worker.run(cases, "inputs")] == ["ok"] * 4
        started = (Path(worker.zygote.scratch) / "started").read_text().split()
    finally:
        worker.close()
    by_process: dict[str, list[str]] = {}
    for pid, first in zip(started[::2], started[1::2]):
        by_process.setdefault(pid, []).append(first)
    assert list(by_process.values()) == [["1", "666"], ["4", "5"]] and worker.recycles == 1


def test_a_worker_that_returned_an_impossible_output_does_not_run_the_next_case():
    # the planted runtime corrupts itself on 666 and would then give wrong values, hang and
    # segfault on the next three cases: a fresh worker runs them, so each gets its true verdict
    cases = [classify(Case(spec="onnx/Pad-18", data=np.array([v, 2, 3], np.int32), pads=[1, 1]))
             for v in (1, 666, 4, 5, 6, 7)]
    worker = Worker("tests.fake_adapters:CorruptingAdapter", timeout=20)
    try:
        outcomes = list(worker.run(cases, "inputs"))
    finally:
        worker.close()
    verdicts = [judge(c, o, s) for c, (o, s) in zip(cases, outcomes)]
    assert [v.verdict for v in verdicts] == ["pass", "mismatch", "pass", "pass", "pass", "pass"]
    assert verdicts[1].detail == "shape [0, 0] instead of [5]"
    assert worker.recycles == 1 and worker.restarts == 0


@pytest.mark.slow
def test_what_a_runtime_prints_is_kept_with_the_case_it_printed_during_in_a_batch():
    """One batch, one worker: each case's evidence is what was written during it, not what
    earlier cases of the batch wrote too (a log's size is taken once a case)."""
    worker = Worker("tests.fake_adapters:BatchPrintingAdapter")
    try:
        assert worker.order_independent  # its cases go in one message
        answers = list(worker.run(batch() + batch(), "inputs"))
    finally:
        worker.close()
    assert worker.restarts == 0 and len(answers) == 8
    for outcome, _ in answers:
        assert outcome.printed["stderr"] == "runtime warning: from C\n"
        assert outcome.printed["stdout"].count("runtime log: padding now") == 1
