"""Runtimes run in worker subprocesses, so that a segfault, an abort, a runaway allocation, a hang
or a runtime that writes all over stdout costs one case (verdict crash / timeout), not the run.

Each worker runs under ``padconf.reaper`` (nothing it forks outlives padconf, even after
kill -9), in its own session, with an address-space cap. Its stdin is /dev/null and its stdout
and stderr go to log files: they belong to the runtime, and what it prints during a case is
kept as that case's evidence. padconf talks to the worker over two pipes of its own, JSON lines:

- the worker first says ``{"ready": true, "unavailable": null | why}``, after importing the
  adapter and its runtime (a module:Class that fails to import is "unavailable", not a crash);
- ``{"op": "describe", "pairs": [[spec, dtype], ...]}`` -> ``{"version", "placements",
  "supports": [null | why, ...]}``: the parent never imports an adapter itself;
- ``{"op": "run", "placement": p, "cases": [case inputs, ...]}`` -> one line per case as it
  finishes, so that when the worker dies the parent knows which case killed it, restarts it
  and resends the rest.
"""
from __future__ import annotations

import atexit
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
import weakref

from .adapters import Outcome, get_adapter
from .cases import Case
from .dtypes import decode_array, dtype_name, encode_array
from .errors import PadconfError

DEFAULT_MEMORY_MB = 4096
DEFAULT_TIMEOUT_S = 5.0  # small cases take milliseconds and a first OpenVINO compile ~0.1 s: longer is a hang
START_TIMEOUT_S = 60.0  # importing OpenVINO takes under a second; minutes means its import hangs
PRINTED_CHARS = 2000  # of what a runtime printed during one case, kept as evidence
LOG_CAP = 16 << 20  # a log file past this is emptied between cases


# ---------------------------------------------------------------- the worker side

def _printed_since(marks: tuple[int, int]) -> dict | None:
    """What the runtime wrote to fd 1 and fd 2 since ``marks`` (their sizes then)."""
    sys.stdout.flush(), sys.stderr.flush()
    out = {}
    for fd, name, start in ((1, "stdout", marks[0]), (2, "stderr", marks[1])):
        size = os.fstat(fd).st_size
        if size > start:
            text = os.pread(fd, min(size - start, PRINTED_CHARS), start).decode(errors="replace")
            out[name] = text + (" [...]" if size - start > PRINTED_CHARS else "")
        if size > LOG_CAP:
            os.ftruncate(fd, 0)  # the logs are opened for appending: writes go on at the new end
    return out or None


def _marks() -> tuple[int, int]:
    sys.stdout.flush(), sys.stderr.flush()
    return os.fstat(1).st_size, os.fstat(2).st_size


def _serve(adapter_name: str, memory_mb: int, requests, replies) -> None:
    cap = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    def send(doc):
        replies.write(json.dumps(doc) + "\n")
        replies.flush()

    try:
        adapter = get_adapter(adapter_name)
        why = adapter.available()  # imports the runtime now, so that a spare worker is warm when "ready"
    except Exception as exc:  # the adapter module itself does not load
        adapter, why = None, f"cannot load adapter {adapter_name}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    send({"ready": True, "unavailable": why})
    for line in requests:
        request = json.loads(line)
        if request["op"] == "describe":
            send({"version": adapter.version() if adapter else None,
                  "placements": list(adapter.placements) if adapter else [],
                  "supports": [adapter.supports(s, d) if adapter else why for s, d in request["pairs"]]})
            continue
        for doc in request["cases"]:
            case = Case.from_json(doc)
            marks = _marks()
            try:
                outcome = adapter.run(case, request["placement"])
            except MemoryError:
                send({"status": "crash", "error": f"out of memory (worker cap {memory_mb} MB)"})
                os._exit(3)  # the heap may be in pieces: start afresh
            except Exception as exc:  # an adapter bug is reported, not fatal
                outcome = Outcome(error=f"adapter raised {type(exc).__name__}: {exc}")
            send({"status": "ok", "error": outcome.error, "not_implemented": outcome.not_implemented,
                  "output": _encode_output(outcome), "printed": _printed_since(marks)})


def _encode_output(outcome: Outcome):
    """The output in the dtype the runtime really returned (judged against the expected one)."""
    if outcome.output is None:
        return None
    try:
        name = dtype_name(outcome.output.dtype)
    except PadconfError:
        outcome.error = f"returned an array of numpy dtype {outcome.output.dtype}, which is no ONNX element type"
        return None
    return encode_array(outcome.output, name)


# ---------------------------------------------------------------- the parent side

_LIVE: "weakref.WeakSet[Worker]" = weakref.WeakSet()


@atexit.register
def close_all() -> None:
    """End every worker still running: called at exit and by padconf's signal handlers."""
    for worker in list(_LIVE):
        worker.close()


class WorkerClosed(PadconfError):
    """The worker was closed (padconf is ending) while a case was being run."""


class _Process:
    """One worker process (under its reaper), its two pipes and its two log files."""

    def __init__(self, adapter: str, memory_mb: int):
        req_read, self.req = os.pipe()
        self.rep, rep_write = os.pipe()
        self.stdout_log = tempfile.TemporaryFile(mode="a+b")  # appending: the worker may truncate
        self.stderr_log = tempfile.TemporaryFile(mode="a+b")
        command = [sys.executable, "-m", "padconf.reaper", sys.executable, "-m", "padconf.worker",
                   adapter, str(memory_mb), str(req_read), str(rep_write)]
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.stdout_log,
                                         stderr=self.stderr_log, pass_fds=(req_read, rep_write),
                                         start_new_session=True)
        finally:
            os.close(req_read), os.close(rep_write)
        os.set_blocking(self.req, False)
        self.exited = os.pidfd_open(self.proc.pid)  # readable once the reaper (so the worker) is gone
        self.buffer = b""
        self.served = 0  # cases this process has answered

    def readline(self, deadline: float) -> bytes | str:
        """One line from the worker, or "crash" when it is gone, "timeout" at the deadline."""
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready = select.select([self.rep, self.exited], [], [], left)[0]
            if self.rep in ready:
                chunk = os.read(self.rep, 1 << 20)
                if chunk:
                    self.buffer += chunk
                    continue
                return "crash"
            if self.exited in ready:  # gone; take what it wrote before it went
                chunk = os.read(self.rep, 1 << 20) if select.select([self.rep], [], [], 0)[0] else b""
                if not chunk:
                    return "crash"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def send(self, data: bytes, deadline: float) -> str:
        """Write ``data`` without ever blocking past ``deadline`` (a batch can be larger than the
        pipe, and a hung worker stops reading): "ok", "timeout" or "crash"."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready = select.select([self.exited], [self.req], [], left)
            if ready[0]:
                return "crash"
            if not ready[1]:
                return "timeout"
            try:
                view = view[os.write(self.req, view):]
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: it closed its input, or died
                return "crash"
        return "ok"

    def death(self) -> str:
        """Why the worker is gone: its signal or exit code, and the last line it printed."""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        code = self.proc.returncode
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
        tail = []
        for log in (self.stderr_log, self.stdout_log):
            log.seek(max(0, os.fstat(log.fileno()).st_size - 4096))
            tail = tail or [ln for ln in log.read().decode(errors="replace").splitlines() if ln.strip()][-1:]
        return how + (f"; last words: {tail[0][:300]}" if tail else "")

    def kill(self) -> None:
        """End the worker and everything it started, escaped or not, and reap it. The reaper
        does the killing (it finds what left the process group); SIGKILL to the group is
        the fallback should it not answer."""
        if self.proc.returncode is None:
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for fd in (self.req, self.rep, self.exited):
            try:
                os.close(fd)
            except OSError:
                pass
        self.req = self.rep = self.exited = -1  # the logs stay readable for death()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and self.req != -1


class Worker:
    """One adapter in a subprocess; ``describe`` says what it can run, ``run`` yields
    ``(outcome, status)`` per case, in order."""

    def __init__(self, adapter: str, memory_mb: int = DEFAULT_MEMORY_MB, timeout: float = DEFAULT_TIMEOUT_S,
                 start_timeout: float = START_TIMEOUT_S):
        self.adapter, self.memory_mb, self.timeout, self.start_timeout = adapter, memory_mb, timeout, start_timeout
        self.proc: _Process | None = None
        self._spare: _Process | None = None  # a process already importing the runtime, to replace a dead one at once
        self._closed = False
        self.restarts = 0
        self.hang_wait = 0.0  # seconds spent waiting on cases that then timed out
        self.unavailable: str | None = None
        _LIVE.add(self)

    def start(self) -> None:
        """A ready worker process, or PadconfError when the worker does not start at all."""
        self.proc, self._spare = self._spare or _Process(self.adapter, self.memory_mb), None
        line = self.proc.readline(time.monotonic() + self.start_timeout)
        if isinstance(line, str):
            why = self.proc.death() if line == "crash" else f"no answer within {self.start_timeout:g} s of starting"
            self.proc.kill()
            raise PadconfError(f"runtime {self.adapter} unavailable: its worker {why}")
        self.unavailable = json.loads(line)["unavailable"]
        if self.restarts:  # this runtime has died once: keep a replacement warming up
            self._spare = _Process(self.adapter, self.memory_mb)

    def describe(self, pairs: list[tuple[str, str]]) -> dict:
        """``{"unavailable", "version", "placements", "supports"}``, asked of the worker: a plugin
        that segfaults or hangs while loading or answering is "unavailable", never padconf's end."""
        try:
            if self.proc is None or not self.proc.alive:
                self.start()
            if self.unavailable:
                return {"unavailable": self.unavailable, "version": None, "placements": [], "supports": []}
            request = json.dumps({"op": "describe", "pairs": [list(p) for p in pairs]}).encode() + b"\n"
            deadline = time.monotonic() + self.start_timeout
            line = self.proc.send(request, deadline)
            line = self.proc.readline(deadline) if line == "ok" else line
            if isinstance(line, str):
                why = self.proc.death() if line == "crash" else f"no answer within {self.start_timeout:g} s"
                self.proc.kill()
                raise PadconfError(f"runtime {self.adapter} unavailable: describing itself, its worker {why}")
            return {"unavailable": None, **json.loads(line)}
        except PadconfError as exc:
            return {"unavailable": str(exc).split("unavailable: ", 1)[-1], "version": None,
                    "placements": [], "supports": []}

    def close(self) -> None:
        self._closed = True
        for proc in (self.proc, self._spare):
            if proc:
                proc.kill()
        self.proc = self._spare = None
        _LIVE.discard(self)

    def run(self, cases: list[Case], placement: str):
        """Yield ``(outcome, status)`` per case. A case that crashes or hangs a worker which had
        already run other cases is retried alone in a fresh worker: a runtime that corrupted its
        memory on an earlier case must not have its crash pinned on an innocent one."""
        for case, (outcome, status, fresh) in zip(cases, self._raw(cases, placement)):
            if status != "ok" and not fresh:  # what it does alone is its own verdict, whatever it is
                (retry, retry_status, _), = self._raw([case], placement)
                if retry_status != status:
                    retry.note = f"{status} when run after other cases ({outcome.error}); alone: " \
                                 + ("it ran" if retry_status == "ok" else retry_status)
                outcome, status = retry, retry_status
            yield outcome, status

    def _check_open(self) -> None:
        if self._closed:  # closed from another thread: what its process "answered" since is not its own
            raise WorkerClosed(f"worker for {self.adapter} closed")

    def _raw(self, cases: list[Case], placement: str):
        """``(outcome, status, fresh)`` per case; ``fresh`` is true when the case was the first
        one its worker process ran."""
        pending = list(cases)
        while pending:
            self._check_open()
            if self.proc is None or not self.proc.alive:
                if self.proc is not None:
                    self.restarts += 1
                    self.proc.kill()
                self.start()
            proc = self.proc
            payload = json.dumps({"op": "run", "placement": placement,
                                  "cases": [c.inputs_json() for c in pending]}) + "\n"
            sent = proc.send(payload.encode(), time.monotonic() + self.timeout)
            self._check_open()
            if sent != "ok":  # a worker that stops reading its input is hung or dead
                pending.pop(0)
                if sent == "timeout":
                    proc.kill()
                    yield Outcome(error=f"stopped reading its input for {self.timeout:g} s"), "timeout", proc.served == 0
                else:
                    yield Outcome(error=proc.death()), "crash", proc.served == 0
                continue
            while pending:
                asked = time.monotonic()
                line = proc.readline(asked + self.timeout)
                self._check_open()
                pending.pop(0)
                fresh = proc.served == 0
                proc.served += 1
                if line == "timeout":  # alive but silent: a hang
                    self.hang_wait += time.monotonic() - asked
                    proc.kill()
                    yield Outcome(error=f"no answer within {self.timeout:g} s"), "timeout", fresh
                    break  # restart and resend the rest
                if line == "crash":
                    yield Outcome(error=proc.death()), "crash", fresh
                    break
                reply = json.loads(line)
                if reply["status"] != "ok":  # it reported its own end (out of memory) and exits
                    proc.kill()
                    yield Outcome(error=reply["error"]), reply["status"], fresh
                    break
                output = None if reply["output"] is None else decode_array(reply["output"])
                yield Outcome(output, reply["error"], reply["not_implemented"], printed=reply["printed"]), "ok", fresh


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    adapter, memory_mb, req_fd, rep_fd = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    for fd in (req_fd, rep_fd):  # padconf's channel: not for what the runtime execs
        os.set_inheritable(fd, False)
    with os.fdopen(req_fd, "r", encoding="utf-8") as requests, os.fdopen(rep_fd, "w", encoding="utf-8") as replies:
        _serve(adapter, memory_mb, requests, replies)


if __name__ == "__main__":
    main()
