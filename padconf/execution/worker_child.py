"""The worker side: what runs inside a runtime's zygote and the workers it forks (padconf's side,
``padconf.execution.worker_process`` and ``padconf.execution.worker``, starts them as
``python -m padconf.execution.reaper python -m padconf.execution.worker_child ADAPTER MEMORY_MB FD``).
It imports nothing of padconf's side.

The zygote imports the adapter and its runtime once, answers what it supports, and forks a fresh
worker whenever padconf asks; it runs no case itself, so every worker starts clean. A worker
runs in its own process group, dies with the zygote, has an address-space cap, and runs the
cases it is sent, one answer line per case (the protocol: padconf.execution.worker_protocol). Its stdin
is /dev/null and its stdout and stderr go to log files: they belong to the runtime, and what it
prints during a case is kept as that case's evidence.
"""
from __future__ import annotations

import base64
import json
import os
import resource
import signal
import socket
import sys
import time
from pathlib import Path

from padconf.adapters import Outcome, error_text, get_adapter
from padconf.adapters.compile_cache import CompileDied, CompileTimedOut
from padconf.adapters.faults import OwnFault, own_fault, plugin_files
from padconf.cases.case import MAX_CASE_BYTES, Case
from padconf.core.dtypes import decode_array, dtype_name, encode_array, raw_array
from padconf.core.errors import PadconfError
from padconf.execution.reaper import PR_SET_PDEATHSIG, prctl
from padconf.execution.worker_protocol import BUILDING, READY, Op, Status, decode_line, encode_line

PRINTED_CHARS = 2000  # of what a runtime printed during one case, kept as evidence
LOG_CAP = 16 << 20  # a log file past this is emptied between cases


def _printed_since(marks: tuple[int, int]) -> tuple[dict | None, tuple[int, int]]:
    """What the runtime wrote to fd 1 and fd 2 since ``marks`` (their sizes then), and their
    sizes now: the next case's marks, one seek to a log's end per case."""
    sys.stdout.flush(), sys.stderr.flush()
    out, now = {}, []
    for fd, name, start in ((1, "stdout", marks[0]), (2, "stderr", marks[1])):
        size = _size(fd)
        if size > start:
            text = os.pread(fd, min(size - start, PRINTED_CHARS), start).decode(errors="replace")
            out[name] = text + (" [...]" if size - start > PRINTED_CHARS else "")
        if size > LOG_CAP:
            os.ftruncate(fd, 0)  # the logs are opened for appending: writes go on at the new end
            size = 0
        now.append(size)
    return out or None, (now[0], now[1])


def _marks() -> tuple[int, int]:
    sys.stdout.flush(), sys.stderr.flush()
    return _size(1), _size(2)


def _size(fd: int) -> int:
    """A log's size: a seek to its end, a third of an fstat's cost (the logs are opened for
    appending, so the offset moves nothing a write does; the text is read with pread)."""
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:  # not a file (a terminal, a pipe: a worker's _serve run by hand): nothing to keep
        return os.fstat(fd).st_size


def _serve(adapter, memory_mb: int, requests, replies) -> None:
    """A worker: run the cases it is sent, one answer per case (a line, and the raw bytes of
    its output where it has one), flushed as each is done."""
    def say(line: bytes, raw: bytes = b"") -> None:
        replies.write(line + b"\n" + raw)
        replies.flush()

    def send(doc: dict) -> None:
        say(encode_line(doc))

    say(READY.encode())
    adapter.announce_build = lambda: say(BUILDING.encode())
    while line := requests.readline():
        request = decode_line(line)
        if request["op"] == Op.MODEL:
            try:
                outputs = adapter.run_model(base64.b64decode(request["model"]),
                                            {k: decode_array(v) for k, v in request["feeds"].items()})
                size = sum(a.nbytes for a in outputs)
                if size > MAX_CASE_BYTES:  # a model from anyone: bounded here, before padconf reads a byte of it
                    send({"status": Status.OK, "outputs": None,
                          "error": f"its outputs hold {size} bytes, more than padconf reads ({MAX_CASE_BYTES})"})
                    continue
                send({"status": Status.OK, "error": None,
                      "outputs": [encode_array(a, dtype_name(a.dtype)) for a in outputs]})
            except CompileDied as exc:
                send({"status": _died(exc), "error": str(exc), "outputs": None})
            except MemoryError:
                send({"status": Status.CRASH, "error": f"out of memory (worker cap {memory_mb} MB)", "outputs": None})
                os._exit(3)
            except BaseException as exc:
                fault = _fault(adapter, exc)
                send({"status": Status.OK, "error": None if fault else error_text(exc), "outputs": None,
                      "fault": fault})
                if fault:
                    os._exit(0)  # its state may be the cause: padconf forks a fresh worker
            continue
        adapter.compile_timeout = request.get("compile_timeout")
        take = _reader(requests, request["raw"])
        marks = _marks()
        for doc in request["cases"]:
            case = Case.from_wire(doc, take)
            started = time.perf_counter()
            try:
                outcome = adapter.run(case, request["placement"])
            except CompileDied as exc:  # e.g. iree-compile's subprocess, past the compile limit or killed
                send({"status": _died(exc), "error": str(exc)})
                os._exit(0)
            except MemoryError:
                send({"status": Status.CRASH, "error": f"out of memory (worker cap {memory_mb} MB)"})
                os._exit(3)  # the heap may be in pieces: start afresh
            except BaseException as exc:  # escaped the adapter: its runtime's refusal, or padconf's fault
                fault = _fault(adapter, exc)
                outcome = (Outcome(fault=fault) if fault
                           else Outcome(error=f"adapter raised {type(exc).__name__}: {exc}"))
            printed, marks = _printed_since(marks)
            output, raw = _encode_output(outcome)
            answer = {"status": Status.OK, "output": output, "seconds": round(time.perf_counter() - started, 4)}
            for key, value in (("error", outcome.error), ("not_implemented", outcome.not_implemented or None),
                               ("printed", printed), ("skipped", outcome.skipped), ("note", outcome.note),
                               ("fault", outcome.fault)):
                if value is not None:  # what is unset is left out: the line is read once a case
                    answer[key] = value
            say(encode_line(answer), raw)
            if outcome.fault:
                os._exit(0)  # its state may be the cause (imports left half made): padconf forks a fresh worker


def _fault(adapter, exc: BaseException) -> str | None:
    """Why ``exc``, out of the adapter, is padconf's own fault (or the plugin's), not the runtime's
    answer; None when it is the runtime's (adapters.faults)."""
    if isinstance(exc, OwnFault):
        return str(exc)
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: the worker's end, not an answer
        raise exc
    return own_fault(exc, plugin_files(type(adapter)))


def _died(exc: CompileDied) -> Status:
    return Status.TIMEOUT if isinstance(exc, CompileTimedOut) else Status.CRASH


def _zygote(adapter_name: str, memory_mb: int, control: socket.socket, scratch: Path) -> None:
    """Import the adapter and its runtime once, answer what it supports, fork workers."""
    def send(doc):
        control.send(json.dumps(doc).encode())

    try:
        adapter = get_adapter(adapter_name)
        why = adapter.available()  # imports the runtime, so that every fork has it already
    except Exception as exc:  # the adapter module itself does not load
        adapter, why = None, (f"cannot load adapter {adapter_name}: "
                              f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    send({"ready": True, "unavailable": why, "order_independent": bool(adapter and adapter.order_independent)})
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
        if not data:  # padconf is gone
            return
        request = json.loads(data)
        if request["op"] == Op.DESCRIBE:
            send({"version": adapter.version() if adapter else None,
                  "placements": list(adapter.placements) if adapter else [],
                  "domains": list(adapter.domains) if adapter else [],
                  "target": adapter.target if adapter else None,
                  "compiles_ahead": bool(adapter and adapter.compiles_ahead),
                  "notes": adapter.notes() if adapter and not why else [],
                  "supports": [adapter.supports(s, d) if adapter else why for s, d in request["pairs"]]})
        elif request["op"] == Op.FORK:
            sys.stdout.flush(), sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                control.close()
                _worker(adapter_name, memory_mb, scratch, *fds)
            for fd in fds:
                os.close(fd)
            send({"pid": pid})
        elif request["op"] == Op.WAIT:
            try:
                status = os.waitpid(request["pid"], 0)[1]
            except ChildProcessError:
                status = None
            send({"status": status})


def _worker(adapter_name: str, memory_mb: int, scratch: Path, requests: int, replies: int, stdout: int,
            stderr: int) -> None:
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
        with os.fdopen(requests, "rb") as reqs, os.fdopen(replies, "wb") as reps:
            adapter = get_adapter(adapter_name)
            adapter.scratch = scratch
            _serve(adapter, memory_mb, reqs, reps)
    finally:
        os._exit(0)


def _reader(requests, size: int):
    """``take(n)``: the next n of the ``size`` raw bytes that follow a request's line (its
    cases' arrays, in order), read at once."""
    blob = bytearray(size)
    view, got = memoryview(blob), 0
    while got < size:
        n = requests.readinto(view[got:])
        if not n:
            raise EOFError(f"the request's raw bytes ended after {got} of {size}")  # padconf is gone
        got += n
    at = 0

    def take(n: int) -> memoryview:
        nonlocal at
        at += n
        return view[at - n:at]
    return take


def _encode_output(outcome: Outcome) -> tuple[dict | None, bytes]:
    """The output in the dtype the runtime really returned (judged against the expected one), as
    raw_array's header and bytes."""
    if outcome.output is None:
        return None, b""
    try:
        name = dtype_name(outcome.output.dtype)
    except PadconfError:
        outcome.error = f"returned an array of numpy dtype {outcome.output.dtype}, which is no ONNX element type"
        return None, b""
    return raw_array(outcome.output, name)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    adapter, memory_mb, control, scratch = argv[0], int(argv[1]), int(argv[2]), Path(argv[3])
    os.set_inheritable(control, False)  # padconf's channel: not for what the runtime execs
    _zygote(adapter, memory_mb, socket.socket(fileno=control), scratch)


if __name__ == "__main__":
    main()
