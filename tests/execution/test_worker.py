"""The worker protocol's vocabulary on real worker processes: what a wait for a worker's line
ends in is a line or a Status (never a magic string), and an unusable runtime is told by its
exception's type, not by words in a message."""
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.core.errors import PadconfError
from padconf.execution.worker import RuntimeUnavailable, Worker, run_request
from padconf.execution.worker_process import WorkerProcess, Zygote
from padconf.execution.worker_protocol import Status, decode_line, encode_line


@pytest.fixture
def zygote():
    zygote = Zygote("tests.fake_adapters:CorrectAdapter", 1024, start_timeout=60)
    assert zygote.ready["unavailable"] is None
    yield zygote
    zygote.close()


def test_a_wait_for_a_line_ends_in_a_line_or_a_status(zygote):
    proc = WorkerProcess(zygote, start_timeout=60)  # it read its READY line to start
    try:
        case = Case(spec="onnx/Pad-18", data=np.array([1], np.int32), pads=[1, 1])
        payload = run_request([case], "inputs", None)
        assert proc.send(payload, time.monotonic() + 60) is Status.OK
        line = proc.readline(time.monotonic() + 60)
        assert isinstance(line, bytes) and decode_line(line)["status"] == Status.OK
        # asked nothing, a worker says nothing: the deadline ends the wait
        assert proc.readline(time.monotonic() + 0.2) is Status.TIMEOUT
        os.kill(proc.pid, signal.SIGKILL)
        select.select([proc.exited], [], [], 60)  # gone, its pipes closed with it
        assert proc.readline(time.monotonic() + 60) is Status.CRASH
        assert proc.send(payload, time.monotonic() + 60) is Status.CRASH
        assert "SIGKILL" in proc.death()
    finally:
        proc.kill()


def test_run_yields_each_case_with_a_status_member():
    worker = Worker("tests.fake_adapters:SegfaultAdapter", memory_mb=1024)
    try:
        cases = [Case(spec="onnx/Pad-18", data=np.array([v], np.int32), pads=[1, 1]) for v in (1, 666)]
        statuses = [status for _, status in worker.run(cases, "inputs")]
    finally:
        worker.close()
    assert statuses == [Status.OK, Status.CRASH]
    assert [type(s) for s in statuses] == [Status, Status]


def test_an_unusable_runtime_is_its_own_exception_type():
    worker = Worker("tests.fake_adapters:NoSuchAdapter")
    try:
        with pytest.raises(RuntimeUnavailable) as raised:
            worker.start()
        assert "NoSuchAdapter" in raised.value.why and not raised.value.why.startswith("runtime ")
        about = worker.describe([("onnx/Pad-18", "int32")])
        assert about["unavailable"] == raised.value.why  # the reason alone, not the message around it
    finally:
        worker.close()
    assert issubclass(RuntimeUnavailable, PadconfError)  # what padconf's callers catch


def test_a_crash_verdict_is_the_verdicts_word_not_the_workers_status():
    import yaml

    from padconf.adapters.outcome import Outcome
    from padconf.cases.classify import classify
    from padconf.judging.verdicts import judge
    case = classify(Case(spec="onnx/Pad-18", data=np.array([1], np.int32), pads=[1, 1]))
    verdict = judge(case, Outcome(error="killed by SIGSEGV"), Status.CRASH).verdict
    assert yaml.safe_dump([verdict]) == "- crash\n"  # a baseline is YAML: a Status member is no str to it


def test_a_zygotes_scratch_folder_goes_with_it_even_when_it_died():
    """The folder a zygote's workers share is removed when the zygote is closed, and when a
    worker replaces a zygote that died (with its socket and pidfd: no descriptor leaks)."""
    worker = Worker("tests.fake_adapters:CorrectAdapter")
    try:
        worker.spawn()
        first = worker.zygote
        assert first is not None and first.ready["unavailable"] is None
        scratch = Path(first.scratch)
        assert scratch.is_dir()
        first.proc.kill()
        first.proc.wait()
        worker.spawn()
        assert worker.zygote is not first and not scratch.exists()
        second = Path(worker.zygote.scratch)
        assert second.is_dir()
    finally:
        worker.close()
    assert not second.exists()


# What a zygote does (Adapter.available), then a worker's first case, in a fresh interpreter.
_ZYGOTE_THEN_FIRST_CASE = """
import json, sys, threading
import numpy as np
from padconf.adapters import get_adapter
from padconf.cases.case import Case
from padconf.cases.classify import classify
adapter = get_adapter(sys.argv[1])
why = adapter.available()
threads, before = threading.active_count(), set(sys.modules)
spec = "openvino/Pad-12" if sys.argv[1] == "openvino" else "onnx/Pad-19"
mode = "constant" if adapter.compiles_ahead else "reflect"  # IREE has no lowering of reflect
outcome = adapter.run(Case(spec, np.arange(6, dtype=np.float32).reshape(2, 3), [0, 1, 1, 0], mode=mode),
                      "folded" if adapter.compiles_ahead else "inputs")  # TVM's frontend takes no fed pads
print(json.dumps({"unavailable": why, "threads": threads, "output": outcome.output is not None,
                  "imported": sorted(set(sys.modules) - before)}))
"""


@pytest.mark.parametrize("runtime", ["onnxruntime", "onnx-reference", "openvino", "openvino-onnx", "iree", "tvm"])
def test_a_zygote_imports_what_a_first_case_needs_and_starts_no_thread(runtime, tmp_path):
    """A worker imports nothing its zygote did not: an import there would run under the worker's
    address-space cap, where a MemoryError cuts it short and leaves that worker's imports broken
    for its life (IREE's "Dialect namespace 'func' is already registered."). The compilers' case
    is converted and compiled (their compile cache off), as a worker's first conversion is."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "JENKINS_URL")}  # telemetry's opt-outs
    env["HOME"] = str(tmp_path)  # where OpenVINO's telemetry keeps a client id
    env["PADCONF_COMPILE_CACHE"] = "none"
    done = subprocess.run([sys.executable, "-c", _ZYGOTE_THEN_FIRST_CASE, runtime], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.splitlines()[-1])
    if answer["unavailable"]:
        pytest.skip(answer["unavailable"])
    assert answer["output"]
    assert answer["imported"] == []  # else every fresh worker imports it again
    assert answer["threads"] == 1  # a fork keeps only the thread that forks
    assert not (tmp_path / "intel").exists()  # OpenVINO's telemetry kept no client id: it sent nothing


def test_an_impossible_output_is_told_by_its_bits_whatever_the_fast_path():
    """impossible_output compares bytes first: identical bytes are the answer, anything else is
    bit_equal's (any NaN equals any NaN, -0.0 is not 0.0, strings by value)."""
    from padconf.execution.worker import impossible_output

    def case(data, expected_dtype=np.float32):
        c = classify(Case(spec="onnx/Pad-19", data=np.asarray(data, expected_dtype), pads=[0, 0]))
        assert c.expected is not None
        return c

    zeros = case([0.0, 1.0])
    assert not impossible_output(zeros, np.array([0.0, 1.0], np.float32))
    assert impossible_output(zeros, np.array([-0.0, 1.0], np.float32))
    assert impossible_output(zeros, np.array([0.0, 1.0], np.float64))
    nan = case([np.nan, 1.0])
    other_nan = np.array([np.nan, 1.0], np.float32)
    other_nan.view(np.uint32)[0] ^= 1  # another payload: same bits for the spec's purpose
    assert not impossible_output(nan, other_nan)
    words = classify(Case(spec="onnx/Pad-19", data=np.array(["a", "bc"], dtype=object), pads=[0, 0]))
    assert not impossible_output(words, np.array(["a", "b" + "c"], dtype=object))
    assert impossible_output(words, np.array(["a", "bd"], dtype=object))


def test_an_answer_json_cannot_write_by_msgspec_comes_back_whole():
    """A runtime's text with a lone surrogate: msgspec writes no JSON for it, so the worker's
    answer falls back to json's escape, and padconf reads the very text back, as the runtime's
    refusal (not a crash of the worker, nor padconf's fault)."""
    from tests.fake_adapters import SurrogateTextAdapter
    worker = Worker("tests.fake_adapters:SurrogateTextAdapter")
    try:
        case = classify(Case(spec="onnx/Pad-18", data=np.array([1, 2], np.float32), pads=[1, 0]))
        (outcome, status), = worker.run([case], "inputs")
    finally:
        worker.close()
    assert status is Status.OK and outcome.fault is None
    assert outcome.error == SurrogateTextAdapter.TEXT


def test_a_line_only_json_writes_is_read_as_json_reads_it():
    """decode_line reads what json.dumps writes and msgspec does not (NaN, an escaped lone
    surrogate), and a line that is no JSON is json's error, as before."""
    assert decode_line(json.dumps({"x": float("nan"), "t": "\ud800"}).encode())["t"] == "\ud800"
    assert np.isnan(decode_line(b'{"x": NaN}')["x"])
    doc = {"status": Status.OK, "n": 2**70, "e": "é \u2028"}
    assert decode_line(encode_line(doc)) == json.loads(json.dumps(doc))
    with pytest.raises(json.JSONDecodeError):
        decode_line(b"{not json")
