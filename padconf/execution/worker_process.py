"""padconf's side of a runtime's worker processes, one at a time: starting a runtime's zygote
(under ``padconf.execution.reaper``, so nothing it or its children start outlives padconf, even after
kill -9) and asking it things; forking a worker from it, writing to it and reading its answers
without ever blocking past a deadline, and telling a crash from a hang. What runs inside those
processes is ``padconf.execution.worker_child``; the protocol is ``padconf.execution.worker_protocol``; the pool
that feeds cases to them, retries and recycles them is ``padconf.execution.worker``.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable

from padconf.core.errors import PadconfError
from padconf.execution.worker_protocol import READY, Ended, Op, Status

START_TIMEOUT_S = 60.0  # importing OpenVINO takes under a second; minutes means its import hangs
# one answer line of a worker: a case's arrays (cases.MAX_CASE_BYTES) in base64, and room for the rest
MAX_ANSWER_BYTES = 3 << 28


def exit_text(status: int | None) -> str:
    if status is None:
        return "ended (its exit status is lost)"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with code {os.WEXITSTATUS(status)}"


def wait_status(returncode: int) -> int:
    """The wait status of a child whose ``subprocess`` return code is ``returncode``."""
    return (returncode & 0xFF) << 8 if returncode >= 0 else -returncode


def last_words(*logs) -> str:
    """The last line a process wrote to the first of ``logs`` that holds one; for a Rust panic
    (tract), the panic and its message, since a backtrace and "aborting" follow them (and, across
    an FFI boundary, a second panic that only says it cannot unwind). Text is all a dead process
    leaves: its exit status says how it ended, its log what it last said."""
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


def isolated(module: str) -> list[str]:
    return [sys.executable, "-I", "-c", _BOOT, ":".join(import_path()), module]


# Linux sends a child's PR_SET_PDEATHSIG when the *thread* that forked it ends, not its process
# (prctl(2)): a reaper started from a lane or a pool thread took its zygote down when that thread
# finished, and whatever forked from it next (the controls, an interrupt's clean-up) found it gone.
# So every zygote is started from the main thread or from this one, which lives as long as padconf.
_SPAWNER = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="padconf-spawner")


def start_process(command: list[str], **popen) -> subprocess.Popen:
    """``subprocess.Popen(command, **popen)`` from a thread that outlives the run."""
    if threading.current_thread() is threading.main_thread():
        return subprocess.Popen(command, **popen)
    return _SPAWNER.submit(lambda: subprocess.Popen(command, **popen)).result()


class Zygote:
    """The process that imports a runtime once and forks its workers (under a reaper)."""

    def __init__(self, adapter: str, memory_mb: int, start_timeout: float,
                 child: Callable[..., list[str]] | None = None):
        """``child(memory_mb, fd, scratch)``: the zygote's own command line, where it is not padconf's
        worker_child in padconf's interpreter (a runtime in an environment of its own:
        padconf.execution.env_worker)."""
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.TemporaryFile(mode="a+b")
        # a folder for the zygote's workers, one at a time (what one compiled, the next imports)
        self.scratch = tempfile.mkdtemp(prefix="padconf-worker-")
        try:
            zygote = (child(memory_mb, theirs.fileno(), self.scratch) if child is not None else
                      [*isolated("padconf.execution.worker_child"), adapter, str(memory_mb), str(theirs.fileno()),
                       self.scratch])
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            theirs.close()
            raise
        command = [*isolated("padconf.execution.reaper"), "--remove", self.scratch, *zygote]
        try:
            self.proc = start_process(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                      pass_fds=(theirs.fileno(),), start_new_session=True)
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        finally:
            theirs.close()
        self.exited = os.pidfd_open(self.proc.pid)
        self._closing = threading.Lock()
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
        try:
            ready = select.select([self.sock.fileno(), self.exited], [], [], timeout)[0]
            data = self.sock.recv(1 << 20) if self.sock.fileno() in ready else b""
        except (OSError, ValueError):  # ECONNRESET: it died with the request unread; or closed meanwhile
            if self.exited == -1:
                raise PadconfError(f"closed while {doing}") from None
            data, ready = b"", [self.exited]
        if data:
            return json.loads(data)
        if not ready:
            self.close()
            raise PadconfError(f"no answer within {timeout:g} s of {doing}")
        with contextlib.suppress(OSError, ValueError):  # its reaper ends the way it did, once it has reaped it
            select.select([self.exited], [], [], 5)
        self.close()
        raise PadconfError(f"{exit_text(self._status())}{last_words(self.log)}")

    def _status(self) -> int | None:
        self.proc.wait()
        return wait_status(self.proc.returncode)  # the reaper ends the way the zygote did

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """End the zygote, its workers and anything they started: the reaper kills them all."""
        with self._closing:  # from a lane and from padconf's clean-up at once: its fds are closed once
            self._close()

    def _close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)  # the reaper removed it, unless it was killed
        if self.exited == -1:  # closed before: the number may be another file's by now
            return
        self.sock.close()
        os.close(self.exited)
        self.exited = -1


class WorkerProcess:
    """One forked worker, its two pipes and its two log files."""

    def __init__(self, zygote: Zygote, start_timeout: float):
        self.zygote = zygote
        self._closing = threading.Lock()
        req_read, self.req = os.pipe()
        self.rep, rep_write = os.pipe()
        self.stdout_log = tempfile.TemporaryFile(mode="a+b")  # appending: the worker may truncate
        self.stderr_log = tempfile.TemporaryFile(mode="a+b")
        try:
            self.pid = zygote.ask({"op": Op.FORK}, fds=(req_read, rep_write, self.stdout_log.fileno(),
                                                        self.stderr_log.fileno()), doing="forking a worker")["pid"]
        finally:
            os.close(req_read)
            os.close(rep_write)
        os.set_blocking(self.req, False)
        self.exited = os.pidfd_open(self.pid)  # readable once the worker is gone
        self.status: int | None = None
        self.buffer = b""
        self.oversized = False  # its answer passed MAX_ANSWER_BYTES
        self.served = 0  # cases this process has answered
        self.name = f"{zygote.proc.pid}.{self.pid}"  # unique while padconf runs: zygote and worker pids
        if self.readline(time.monotonic() + start_timeout) != READY.encode():
            raise PadconfError(f"a new worker did not start: {self.death()}")

    def readline(self, deadline: float) -> bytes | Ended:
        """One line from the worker, or CRASH when it is gone, TIMEOUT at the deadline."""
        ended = self._fill(lambda: b"\n" in self.buffer, deadline)
        if ended is not None:
            return ended
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def read(self, size: int, deadline: float) -> bytes | Ended:
        """The next ``size`` bytes from the worker (an answer's raw bytes, after its line), or
        CRASH when it is gone first (or ``size`` passes MAX_ANSWER_BYTES), TIMEOUT at the deadline."""
        if size > MAX_ANSWER_BYTES:
            self.oversized = True
            return Status.CRASH
        ended = self._fill(lambda: len(self.buffer) >= size, deadline)
        if ended is not None:
            return ended
        raw, self.buffer = self.buffer[:size], self.buffer[size:]
        return raw

    def _fill(self, enough: Callable[[], bool], deadline: float) -> Ended | None:
        """Read from the worker until ``enough()``: None then, or CRASH / TIMEOUT."""
        while not enough():
            left = deadline - time.monotonic()
            if left <= 0:
                return Status.TIMEOUT
            ready = select.select([self.rep, self.exited], [], [], left)[0]
            if self.rep in ready:
                chunk = os.read(self.rep, 1 << 20)
                if chunk:
                    self.buffer += chunk
                    if len(self.buffer) > MAX_ANSWER_BYTES:  # the runtime's output: bounded before parsing
                        self.oversized = True
                        return Status.CRASH
                    continue
                return Status.CRASH
            if self.exited in ready:  # gone; take what it wrote before it went
                chunk = os.read(self.rep, 1 << 20) if select.select([self.rep], [], [], 0)[0] else b""
                if not chunk:
                    return Status.CRASH
                self.buffer += chunk
        return None

    def send(self, data: bytes, deadline: float) -> Status:
        """Write ``data`` without ever blocking past ``deadline`` (a batch can be larger than the
        pipe, and a hung worker stops reading): OK, TIMEOUT or CRASH."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                return Status.TIMEOUT
            ready = select.select([self.exited], [self.req], [], left)
            if ready[0]:
                return Status.CRASH
            if not ready[1]:
                return Status.TIMEOUT
            try:
                view = view[os.write(self.req, view):]
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: it closed its input, or died
                return Status.CRASH
        return Status.OK

    def death(self) -> str:
        """Why the worker is gone: its signal or exit code, and the last line it printed."""
        if self.oversized:
            self.kill()
            return f"it answered more than {MAX_ANSWER_BYTES} bytes for one request (padconf's bound), and was ended"
        select.select([self.exited], [], [], 5)  # it may still be on its way out
        self.kill()
        return exit_text(self.status) + last_words(self.stderr_log, self.stdout_log)

    def kill(self) -> None:
        """End the worker and its process group, and have the zygote reap it. (A child that
        left the group is ended with the zygote, by its reaper.)"""
        with self._closing:  # a lane and padconf's clean-up may both end it: its fds are closed once
            if self.req == -1:
                return
            for end in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
                try:  # the group, and the worker itself should it not have made its group yet
                    end()
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                self.status = self.zygote.ask({"op": Op.WAIT, "pid": self.pid}, doing="reaping a worker")["status"]
            except PadconfError:
                self.status = None
            fds, self.req, self.rep, self.exited = (self.req, self.rep, self.exited), -1, -1, -1
            for fd in fds:  # the logs stay readable for death()
                os.close(fd)

    @property
    def alive(self) -> bool:
        return self.req != -1 and not select.select([self.exited], [], [], 0)[0]
