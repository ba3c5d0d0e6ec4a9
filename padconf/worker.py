"""Runtimes run in worker subprocesses, so that a segfault, an abort, a runaway allocation or
a hang costs one case (verdict crash / timeout), not the run.

Protocol, JSON lines: the parent sends ``{"placement": ..., "cases": [case inputs, ...]}`` per
batch; the worker answers one line per case as it finishes, so that when it dies the parent
knows exactly which case killed it, restarts it and resends the rest of the batch.
The worker runs as ``python -m padconf.worker ADAPTER`` where ADAPTER is a registry name or
``module:Class`` (padconf's own tests plant fake runtimes that way).
"""
from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time

from .adapters import Outcome, get_adapter
from .cases import Case
from .dtypes import decode_array, encode_array
from .errors import PadconfError

DEFAULT_MEMORY_MB = 4096
DEFAULT_TIMEOUT_S = 5.0  # small cases take milliseconds and a first OpenVINO compile ~0.1 s: longer is a hang
START_TIMEOUT_S = 120.0  # importing OpenVINO on a busy 2-core machine takes seconds


# ---------------------------------------------------------------- the worker side

def _serve(adapter_name: str, memory_mb: int) -> None:
    cap = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    out = sys.stdout
    adapter = get_adapter(adapter_name)
    adapter.available()  # imports the runtime now, so that a spare worker is warm when "ready"
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        batch = json.loads(line)
        for doc in batch["cases"]:
            case = Case.from_json(doc)
            try:
                outcome = adapter.run(case, batch["placement"])
            except MemoryError:
                out.write(json.dumps({"status": "crash", "error": f"out of memory (worker cap {memory_mb} MB)"}) + "\n")
                out.flush()
                os._exit(3)  # the heap may be in pieces: start afresh
            except Exception as exc:  # an adapter bug is reported, not fatal
                outcome = Outcome(error=f"adapter raised {type(exc).__name__}: {exc}")
            reply = {"status": "ok", "error": outcome.error, "not_implemented": outcome.not_implemented,
                     "output": None if outcome.output is None else encode_array(outcome.output, case.dtype)}
            out.write(json.dumps(reply) + "\n")
            out.flush()


# ---------------------------------------------------------------- the parent side

class Worker:
    """One adapter in a subprocess; ``run`` yields ``(outcome, status)`` per case, in order."""

    def __init__(self, adapter: str, memory_mb: int = DEFAULT_MEMORY_MB, timeout: float = DEFAULT_TIMEOUT_S):
        self.adapter, self.memory_mb, self.timeout = adapter, memory_mb, timeout
        self.proc = None
        self._spare = None  # a process already importing the runtime, to replace a dead one at once
        self.restarts = 0

    def _spawn(self):
        stderr = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [sys.executable, "-m", "padconf.worker", self.adapter, str(self.memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
        return proc, stderr

    def start(self) -> None:
        self.proc, self._stderr = self._spare or self._spawn()
        self._spare = None
        self._buffer = b""
        self._served = 0  # cases this process has answered
        line = self._readline(time.monotonic() + START_TIMEOUT_S)
        if isinstance(line, str):
            raise PadconfError(f"worker for {self.adapter} did not start: {self._death()}")
        if self.restarts:  # this runtime has died once: keep a replacement warming up
            self._spare = self._spawn()

    def _readline(self, deadline: float) -> bytes | str:
        """One line from the worker, or "crash" when its output ended, "timeout" at the deadline."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return "timeout"
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return "crash"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _send(self, data: bytes, deadline: float) -> str:
        """Write ``data`` to the worker without ever blocking past ``deadline`` (a batch can be
        larger than the pipe, and a hung worker stops reading): "ok", "timeout" or "crash"."""
        fd = self.proc.stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                return "timeout"
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: it closed its input, or died
                return "crash"
        return "ok"

    def _death(self) -> str:
        """Why the worker is gone: its signal or exit code, and the last line it printed."""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()  # also what it forked: OpenVINO leaves a forked child behind when it dies
        code = self.proc.returncode
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
        self._stderr.seek(0)
        tail = [ln for ln in self._stderr.read().decode(errors="replace").splitlines() if ln.strip()][-1:]
        return how + (f"; last words: {tail[0][:300]}" if tail else "")

    def kill(self) -> None:
        """End the worker and everything it forked, and reap it."""
        if self.proc:
            _kill_group(self.proc)

    def close(self) -> None:
        for proc in (self.proc, self._spare and self._spare[0]):
            if proc:
                _kill_group(proc)
        self.proc = self._spare = None

    def run(self, cases: list[Case], placement: str):
        """Yield ``(outcome, status)`` per case. A case that crashes or hangs a worker which had
        already run other cases is retried alone in a fresh worker: a runtime that corrupted its
        memory on an earlier case must not have its crash pinned on an innocent one."""
        for case, (outcome, status, fresh) in zip(cases, self._raw(cases, placement)):
            if status != "ok" and not fresh:
                (retry, retry_status, _), = self._raw([case], placement)
                if retry_status == "ok":
                    retry.note = f"{status} when run after other cases ({outcome.error}); alone it ran"
                    outcome, status = retry, retry_status
            yield outcome, status

    def _raw(self, cases: list[Case], placement: str):
        """``(outcome, status, fresh)`` per case; ``fresh`` is true when the case was the first
        one its worker process ran."""
        pending = list(cases)
        while pending:
            if self.proc is None or self.proc.poll() is not None:
                if self.proc is not None:
                    self.restarts += 1
                self.start()
            payload = json.dumps({"placement": placement, "cases": [c.inputs_json() for c in pending]}) + "\n"
            sent = self._send(payload.encode(), time.monotonic() + self.timeout)
            if sent != "ok":  # a worker that stops reading its input is hung or dead
                pending.pop(0)
                if sent == "timeout":
                    self.kill()
                    yield Outcome(error=f"stopped reading its input for {self.timeout:g} s"), "timeout", self._served == 0
                else:
                    yield Outcome(error=self._death()), "crash", self._served == 0
                continue
            while pending:
                line = self._readline(time.monotonic() + self.timeout)
                pending.pop(0)
                fresh = self._served == 0
                self._served += 1
                if line == "timeout":  # alive but silent: a hang
                    self.kill()
                    yield Outcome(error=f"no answer within {self.timeout:g} s"), "timeout", fresh
                    break  # restart and resend the rest
                if line == "crash":
                    yield Outcome(error=self._death()), "crash", fresh
                    break
                reply = json.loads(line)
                if reply["status"] != "ok":  # it reported its own end (out of memory) and exits
                    self.kill()
                    yield Outcome(error=reply["error"]), reply["status"], fresh
                    break
                output = None if reply["output"] is None else decode_array(reply["output"])
                yield Outcome(output, reply["error"], reply["not_implemented"]), "ok", fresh


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (its own session): the worker and anything it forked;
    then reap the worker."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    _serve(argv[0], int(argv[1]) if len(argv) > 1 else DEFAULT_MEMORY_MB)


if __name__ == "__main__":
    main()
