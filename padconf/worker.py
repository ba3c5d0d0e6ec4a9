"""Runtimes run in worker subprocesses, so that a segfault, an abort, a runaway allocation, a hang
or a runtime that writes all over stdout costs one case (verdict crash / timeout), not the run.

Each runtime gets a *zygote*: a process under ``padconf.reaper`` (nothing it or its children
start outlives padconf, even after kill -9) that imports the adapter and its runtime once, and
then forks a fresh worker in milliseconds whenever one is needed (at the start, and after every
crash or hang: a restart used to cost a second of imports). The zygote itself runs no case, so
every worker starts clean. A worker runs in its own process group, with an address-space cap;
its stdin is /dev/null and its stdout and stderr go to log files: they belong to the runtime,
and what it prints during a case is kept as that case's evidence.

padconf talks to the zygote over a socket (JSON messages; a fork request carries the new
worker's pipes and logs as file descriptors) and to a worker over two pipes of its own, JSON lines:

- the zygote first says ``{"ready": true, "unavailable": null | why}``, after importing the
  adapter and its runtime (a module:Class that fails to import is "unavailable", not a crash);
  ``{"op": "describe", "pairs": [[spec, dtype], ...]}`` -> ``{"version", "placements", "domains",
  "supports": [null | why, ...]}`` (the parent never imports an adapter itself);
  ``{"op": "fork"}`` -> ``{"pid"}``; ``{"op": "wait", "pid"}`` -> ``{"status"}`` (how it ended);
- a worker says ``{"ready": true}``, then answers ``{"op": "run", "placement": p, "cases":
  [case inputs, ...]}`` with one line per case as it finishes, so that when it dies the parent
  knows which case killed it, forks a new one and resends the rest (an adapter that compiles
  ahead of time first says ``{"building": true}`` whenever it compiles a model, and then has
  the compile time limit, not the run's, to answer); and answers ``{"op":
  "model", "model": base64 ONNX bytes, "feeds": {name: array}}`` (a user's whole model, for
  ``padconf minimize``) with ``{"status", "error", "outputs": [array, ...]}``.
"""
from __future__ import annotations

import atexit
import base64
import json
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref

from .adapters import CompileTimedOut, Outcome, error_text, get_adapter
from .cases import MUST_REJECT, Case
from .dtypes import bit_equal, decode_array, dtype_name, encode_array
from .errors import PadconfError
from .reaper import PR_SET_PDEATHSIG, prctl

DEFAULT_MEMORY_MB = 4096
DEFAULT_TIMEOUT_S = 5.0  # small cases take milliseconds and a first OpenVINO compile ~0.1 s: longer is a hang
MAX_TIMEOUT_S = 86400.0  # a day; select() refuses a timeout near 1e308
MAX_MEMORY_MB = 1 << 20  # a worker's cap: 1 TiB
DEFAULT_COMPILE_TIMEOUT_S = 120.0  # an ahead-of-time compiler's build of one Pad model (IREE, TVM)
BUILDING = b'{"building": true}'  # a worker's line: an ahead-of-time compile begins (Adapter.announce_build)
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


def _serve(adapter, memory_mb: int, requests, replies) -> None:
    """A worker: run the cases it is sent, one answer line per case."""
    def send(doc):
        replies.write(json.dumps(doc) + "\n")
        replies.flush()

    send({"ready": True})
    adapter.announce_build = lambda: send({"building": True})
    for line in requests:
        request = json.loads(line)
        if request["op"] == "model":
            try:
                outputs = adapter.run_model(base64.b64decode(request["model"]),
                                            {k: decode_array(v) for k, v in request["feeds"].items()})
                send({"status": "ok", "error": None,
                      "outputs": [encode_array(a, dtype_name(a.dtype)) for a in outputs]})
            except Exception as exc:
                send({"status": "ok", "error": error_text(exc), "outputs": None})
            continue
        adapter.compile_timeout = request.get("compile_timeout")
        for doc in request["cases"]:
            case = Case.from_json(doc)
            marks = _marks()
            started = time.perf_counter()
            try:
                outcome = adapter.run(case, request["placement"])
            except CompileTimedOut as exc:  # the adapter's own compile limit, e.g. iree-compile's subprocess
                send({"status": "timeout", "error": str(exc)})
                os._exit(0)
            except MemoryError:
                send({"status": "crash", "error": f"out of memory (worker cap {memory_mb} MB)"})
                os._exit(3)  # the heap may be in pieces: start afresh
            except Exception as exc:  # an adapter bug is reported, not fatal
                outcome = Outcome(error=f"adapter raised {type(exc).__name__}: {exc}")
            send({"status": "ok", "error": outcome.error, "not_implemented": outcome.not_implemented,
                  "output": _encode_output(outcome), "printed": _printed_since(marks),
                  "seconds": round(time.perf_counter() - started, 4)})


def _zygote(adapter_name: str, memory_mb: int, control: socket.socket) -> None:
    """Import the adapter and its runtime once, answer what it supports, fork workers."""
    def send(doc):
        control.send(json.dumps(doc).encode())

    try:
        adapter = get_adapter(adapter_name)
        why = adapter.available()  # imports the runtime, so that every fork has it already
    except Exception as exc:  # the adapter module itself does not load
        adapter, why = None, (f"cannot load adapter {adapter_name}: "
                              f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    send({"ready": True, "unavailable": why})
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
        if not data:  # padconf is gone
            return
        request = json.loads(data)
        if request["op"] == "describe":
            send({"version": adapter.version() if adapter else None,
                  "placements": list(adapter.placements) if adapter else [],
                  "domains": list(adapter.domains) if adapter else [],
                  "target": adapter.target if adapter else None,
                  "supports": [adapter.supports(s, d) if adapter else why for s, d in request["pairs"]]})
        elif request["op"] == "fork":
            sys.stdout.flush(), sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                control.close()
                _worker(adapter_name, memory_mb, *fds)
            for fd in fds:
                os.close(fd)
            send({"pid": pid})
        elif request["op"] == "wait":
            try:
                status = os.waitpid(request["pid"], 0)[1]
            except ChildProcessError:
                status = None
            send({"status": status})


def _worker(adapter_name: str, memory_mb: int, requests: int, replies: int, stdout: int, stderr: int) -> None:
    """The forked worker: its own process group, dies with the zygote, serves until told to end."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.setpgid(0, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.close(stdout)
        os.close(stderr)
        cap = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        with os.fdopen(requests, "r", encoding="utf-8") as reqs, os.fdopen(replies, "w", encoding="utf-8") as reps:
            _serve(get_adapter(adapter_name), memory_mb, reqs, reps)
    finally:
        os._exit(0)


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

_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()


@atexit.register
def close_all() -> None:
    """End every worker still running: called at exit and by padconf's signal handlers."""
    for worker in list(_LIVE):
        worker.close()


class WorkerClosed(PadconfError):
    """The worker was closed (padconf is ending) while a case was being run."""


def _corrupting(case: Case, output) -> bool:
    """An output no reading of the spec gives (wrong values, another shape or rank, an invalid
    case accepted): what a runtime returns after writing out of bounds, and often dies of, or
    answers differently after, on a later case (OpenVINO's (0, 0) answer to reflect pads beyond
    the dimension; its garbage for mixed-sign edge pads)."""
    if output is None:
        return False
    if case.kind == MUST_REJECT:
        return True
    allowed = ([case.expected] if case.expected is not None
               else [c for c in case.interpretations.values() if c is not None])
    if not allowed and not case.interpretations:  # not classified: nothing to tell it by
        return False
    return not any(a.shape == output.shape and a.dtype == output.dtype and bit_equal(a, output) for a in allowed)


def _exit_text(status: int | None) -> str:
    if status is None:
        return "ended (its exit status is lost)"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with code {os.WEXITSTATUS(status)}"


def _last_words(*logs) -> str:
    """The last line a process wrote to the first of ``logs`` that holds one; for a Rust panic
    (tract), the panic and its message, since a backtrace and "aborting" follow them (and, across
    an FFI boundary, a second panic that only says it cannot unwind)."""
    for log in logs:
        log.seek(max(0, os.fstat(log.fileno()).st_size - 65536))
        lines = [ln.strip() for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
        panics = [i for i, ln in enumerate(lines) if " panicked at " in ln
                  and lines[i + 1:i + 2] != ["panic in a function that cannot unwind"]]
        if lines:
            return f"; last words: {(' '.join(lines[panics[-1]:panics[-1] + 2]) if panics else lines[-1])[:300]}"
    return ""


# How a padconf process starts another: ``python -I`` (no working directory, PYTHONPATH or user
# site on the import path, whatever ``-m`` or ``-c`` would add) with ``import_path()`` put first.
_BOOT = ("import runpy, sys; path, module = sys.argv[1:3]; sys.path[:0] = [p for p in path.split(':') if p]; "
         "sys.argv[:3] = [module]; runpy.run_module(module, run_name='__main__', alter_sys=True)")


def import_path() -> list[str]:
    """Where workers import adapters and runtimes from: padconf's own import path less the
    working directory (which ``python -m`` puts first: an ``onnxruntime.py`` there must not
    stand in for the runtime), unless PYTHONPATH names it, as the user's explicit choice."""
    cwd = os.path.realpath(os.getcwd())
    named = {os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    return [p for p in sys.path if p and ":" not in p and (os.path.realpath(p) != cwd or cwd in named)]


def _isolated(module: str) -> list[str]:
    return [sys.executable, "-I", "-c", _BOOT, ":".join(import_path()), module]


class _Zygote:
    """The process that imports a runtime once and forks its workers (under a reaper)."""

    def __init__(self, adapter: str, memory_mb: int, start_timeout: float):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.TemporaryFile(mode="a+b")
        command = [*_isolated("padconf.reaper"), *_isolated("padconf.worker"), adapter, str(memory_mb),
                   str(theirs.fileno())]
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                         pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self.exited = os.pidfd_open(self.proc.pid)
        self.start_timeout = start_timeout
        self._ready: dict | None = None

    @property
    def ready(self) -> dict:
        """Its first message, waited for on first use (so that several zygotes import at once)."""
        if self._ready is None:
            self._ready = self.ask(None, timeout=self.start_timeout, doing="starting")
        return self._ready

    def ask(self, request: dict | None, fds=(), timeout: float = START_TIMEOUT_S, doing: str = "answering") -> dict:
        """Send ``request`` (with ``fds``), return the answer; PadconfError if it dies or hangs."""
        if request is not None:
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], list(fds))
            except OSError:
                pass  # it is gone: said below
        ready = select.select([self.sock.fileno(), self.exited], [], [], timeout)[0]
        data = self.sock.recv(1 << 20) if self.sock.fileno() in ready else b""
        if data:
            return json.loads(data)
        if not ready:
            self.close()
            raise PadconfError(f"no answer within {timeout:g} s of {doing}")
        self.close()
        raise PadconfError(f"{_exit_text(self._status())}{_last_words(self.log)}")

    def _status(self) -> int | None:
        self.proc.wait()
        code = self.proc.returncode  # the reaper ends the way the zygote did
        return (code & 0xFF) << 8 if code >= 0 else -code

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """End the zygote, its workers and anything they started: the reaper kills them all."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for closing in (self.sock.close, lambda: os.close(self.exited)):
            try:
                closing()
            except OSError:
                pass


class _Process:
    """One forked worker, its two pipes and its two log files."""

    def __init__(self, zygote: _Zygote, start_timeout: float):
        self.zygote = zygote
        req_read, self.req = os.pipe()
        self.rep, rep_write = os.pipe()
        self.stdout_log = tempfile.TemporaryFile(mode="a+b")  # appending: the worker may truncate
        self.stderr_log = tempfile.TemporaryFile(mode="a+b")
        try:
            self.pid = zygote.ask({"op": "fork"}, fds=(req_read, rep_write, self.stdout_log.fileno(),
                                                        self.stderr_log.fileno()), doing="forking a worker")["pid"]
        finally:
            os.close(req_read)
            os.close(rep_write)
        os.set_blocking(self.req, False)
        self.exited = os.pidfd_open(self.pid)  # readable once the worker is gone
        self.status: int | None = None
        self.buffer = b""
        self.served = 0  # cases this process has answered
        self.name = f"{zygote.proc.pid}.{self.pid}"  # unique while padconf runs: zygote and worker pids
        if self.readline(time.monotonic() + start_timeout) != b'{"ready": true}':
            raise PadconfError(f"a new worker did not start: {self.death()}")

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
        select.select([self.exited], [], [], 5)  # it may still be on its way out
        self.kill()
        return _exit_text(self.status) + _last_words(self.stderr_log, self.stdout_log)

    def kill(self) -> None:
        """End the worker and its process group, and have the zygote reap it. (A child that
        left the group is ended with the zygote, by its reaper.)"""
        if self.req == -1:
            return
        for end in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:  # the group, and the worker itself should it not have made its group yet
                end()
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.status = self.zygote.ask({"op": "wait", "pid": self.pid}, doing="reaping a worker")["status"]
        except PadconfError:
            self.status = None
        for fd in (self.req, self.rep, self.exited):
            os.close(fd)
        self.req = self.rep = self.exited = -1  # the logs stay readable for death()

    @property
    def alive(self) -> bool:
        return self.req != -1 and not select.select([self.exited], [], [], 0)[0]


class Worker:
    """One adapter in worker subprocesses; ``describe`` says what it can run, ``run`` yields
    ``(outcome, status)`` per case, in order."""

    def __init__(self, adapter: str, memory_mb: int = DEFAULT_MEMORY_MB, timeout: float = DEFAULT_TIMEOUT_S,
                 start_timeout: float = START_TIMEOUT_S, compile_timeout: float = DEFAULT_COMPILE_TIMEOUT_S):
        self.adapter, self.memory_mb, self.timeout, self.start_timeout = adapter, memory_mb, timeout, start_timeout
        self.compile_timeout = compile_timeout
        self.zygote: _Zygote | None = None
        self.proc: _Process | None = None
        self._closed = False
        self.restarts = 0  # workers that died or hung
        self.recycles = 0  # workers ended after an impossible output, before their next case
        self.hang_wait = 0.0  # seconds spent waiting on cases that then timed out
        # where the last answer came from: its process and how many cases that process ran
        # before it, so that a state-dependent failure can be replayed (padconf.gate)
        self.placed: tuple[str, int] | None = None
        _LIVE.add(self)

    def spawn(self) -> None:
        """Start the runtime's zygote if need be, without waiting for it to import the runtime.
        From the thread that will outlive the run: the reaper dies with the thread that started it."""
        if self.zygote is None or not self.zygote.alive:
            self.zygote = _Zygote(self.adapter, self.memory_mb, self.start_timeout)

    def _zygote(self) -> _Zygote:
        """The runtime's zygote, started if need be; PadconfError "runtime X unavailable: why"."""
        self.spawn()
        zygote = self.zygote
        assert zygote is not None  # spawn() started one
        try:
            why = zygote.ready["unavailable"]
        except PadconfError as exc:
            zygote.close()
            self.zygote = None
            raise PadconfError(f"runtime {self.adapter} unavailable: {exc}") from None
        if why:
            raise PadconfError(f"runtime {self.adapter} unavailable: {why}")
        return zygote

    def start(self) -> None:
        """A fresh worker process, forked from the zygote."""
        try:
            self.proc = _Process(self._zygote(), self.start_timeout)
        except PadconfError as exc:
            if str(exc).startswith(f"runtime {self.adapter} unavailable"):
                raise
            raise PadconfError(f"runtime {self.adapter}: {exc}") from None

    def describe(self, pairs: list[tuple[str, str]]) -> dict:
        """``{"unavailable", "version", "placements", "supports"}``, asked of the zygote: a plugin
        that segfaults or hangs while loading or answering is "unavailable", never padconf's end."""
        try:
            answer = self._zygote().ask({"op": "describe", "pairs": [list(p) for p in pairs]},
                                        timeout=self.start_timeout, doing="describing itself")
            return {"unavailable": None, **answer}
        except PadconfError as exc:
            why = str(exc).split(" unavailable: ", 1)[-1]
            return {"unavailable": why, "version": None, "placements": [], "domains": [], "supports": []}

    def close(self) -> None:
        self._closed = True
        if self.proc:
            self.proc.kill()
        if self.zygote:
            self.zygote.close()
        self.proc = self.zygote = None
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
            if status == "ok" and _corrupting(case, outcome.output) and self.proc is not None:
                self._retire_process()  # a runtime that returns this has often corrupted its memory:
                self.recycles += 1  # the next case gets a fresh worker, not its heap
            yield outcome, status

    def run_alone(self, case: Case, placement: str) -> tuple[Outcome, str]:
        """``(outcome, status)`` of ``case`` in a worker process of its own, ended after it."""
        self._retire_process()  # nothing ran there before it
        (outcome, status, _), = self._raw([case], placement)
        self._retire_process()  # nothing runs on its heap after it
        return outcome, status

    def replay(self, history: list[tuple[Case, str]], case: Case, placement: str) -> tuple[Outcome, str]:
        """``(outcome, status)`` of ``case`` run in a fresh worker process right after the
        ``(case, placement)`` pairs of ``history``, in order, ended after it."""
        self._retire_process()
        for earlier, earlier_placement in history:
            for _ in self._raw([earlier], earlier_placement):
                pass
        (outcome, status, _), = self._raw([case], placement)
        self._retire_process()
        return outcome, status

    def run_model(self, model: bytes, feeds: dict, timeout: float | None = None) -> tuple[list | None, str | None, str]:
        """``(outputs, error, status)`` of a whole ONNX model run alone in a worker process of its
        own: outputs in graph order, or the runtime's error; status "ok", "crash" or "timeout"
        (after ``timeout`` seconds, default the worker's)."""
        self._retire_process()
        self.start()
        timeout = timeout or self.timeout
        proc, deadline = self.proc, time.monotonic() + timeout
        assert proc is not None  # start() forked it
        payload = json.dumps({"op": "model", "model": base64.b64encode(model).decode(),
                              "feeds": {k: encode_array(v, dtype_name(v.dtype)) for k, v in feeds.items()}})
        sent = proc.send(payload.encode() + b"\n", deadline)
        line, limit = (self._answer(proc, max(0.0, deadline - time.monotonic())) if sent == "ok"
                       else (sent, f"{timeout:g} s"))
        try:
            if line == "timeout":
                return None, f"no answer within {limit}", "timeout"
            if line == "crash":
                return None, proc.death(), "crash"
            reply = json.loads(line)
            return ((None if reply["outputs"] is None else [decode_array(a) for a in reply["outputs"]]),
                    reply["error"], "ok")
        finally:
            self._retire_process()

    def _answer(self, proc: _Process, timeout: float) -> tuple[bytes | str, str]:
        """The worker's next answer (or "crash" / "timeout") within ``timeout`` seconds, and how
        long it had, in words: a build it announces adds the compile time limit."""
        limit = f"{timeout:g} s"
        line = proc.readline(time.monotonic() + timeout)
        while line == BUILDING:
            limit = f"{self.compile_timeout:g} s of compiling (the compile time limit) and {timeout:g} s"
            line = proc.readline(time.monotonic() + self.compile_timeout + timeout)
        return line, limit

    def _retire_process(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc = None

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
            assert proc is not None  # start() forked it
            payload = (json.dumps({"op": "run", "placement": placement, "compile_timeout": self.compile_timeout})[:-1]
                       + ', "cases": [' + ", ".join(c.inputs_text for c in pending) + "]}\n")
            sent = proc.send(payload.encode(), time.monotonic() + self.timeout)
            self._check_open()
            if sent != "ok":  # a worker that stops reading its input is hung or dead
                pending.pop(0)
                self.placed = (proc.name, proc.served)
                if sent == "timeout":
                    proc.kill()
                    yield (Outcome(error=f"stopped reading its input for {self.timeout:g} s"), "timeout",
                           proc.served == 0)
                else:
                    yield Outcome(error=proc.death()), "crash", proc.served == 0
                continue
            while pending:
                if proc is not self.proc:  # recycled by run(): the rest goes to a fresh worker
                    break
                asked = time.monotonic()
                line, limit = self._answer(proc, self.timeout)
                self._check_open()
                pending.pop(0)
                fresh = proc.served == 0
                self.placed = (proc.name, proc.served)
                proc.served += 1
                if line == "timeout":  # alive but silent: a hang
                    self.hang_wait += time.monotonic() - asked
                    proc.kill()
                    yield Outcome(error=f"no answer within {limit}"), "timeout", fresh
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
                yield Outcome(output, reply["error"], reply["not_implemented"], printed=reply["printed"],
                              seconds=reply["seconds"]), "ok", fresh


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    adapter, memory_mb, control = argv[0], int(argv[1]), int(argv[2])
    os.set_inheritable(control, False)  # padconf's channel: not for what the runtime execs
    _zygote(adapter, memory_mb, socket.socket(fileno=control))


if __name__ == "__main__":
    main()
