"""The worker protocol's vocabulary on real worker processes: what a wait for a worker's line
ends in is a line or a Status (never a magic string), and an unusable runtime is told by its
exception's type, not by words in a message."""
import os
import select
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from padconf.cases import Case
from padconf.errors import PadconfError
from padconf.worker import RuntimeUnavailable, Worker
from padconf.worker_process import WorkerProcess, Zygote
from padconf.worker_protocol import Status


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
        payload = f'{{"op": "run", "placement": "inputs", "cases": [{case.inputs_text}]}}\n'.encode()
        assert proc.send(payload, time.monotonic() + 60) is Status.OK
        line = proc.readline(time.monotonic() + 60)
        assert isinstance(line, bytes) and b'"status": "ok"' in line
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

    from padconf.classify import classify
    from padconf.outcome import Outcome
    from padconf.verdicts import judge
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
