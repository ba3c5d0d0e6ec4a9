"""The worker side in an environment of its own (padconf.execution.environments): what runs in a
runtime's zygote and workers there, under that environment's interpreter, where padconf and its
pins (numpy, onnx) are not installed. It imports nothing of padconf, only the standard library,
numpy (every runtime padconf tests depends on it) and the runtime, and is run by its path.

It speaks padconf.execution.worker_protocol as padconf.execution.worker_child does, with one
difference: padconf's side has already built each case's model and its fed arrays
(padconf.execution.env_worker), and the worker runs the adapter's StandaloneRepro function on
them (the runtime's own calls, the function a bug bundle's repro script runs, shipped here by its
source), and answers its output or its exception's text and type. Judging, and reading what an
exception means, stay on padconf's side.

    python -I env_child.py MEMORY_MB FD SCRATCH SPEC_JSON
"""
from __future__ import annotations

import base64
import ctypes
import importlib
import importlib.metadata
import json
import os
import resource
import signal
import socket
import sys
import time

PRINTED_CHARS = 2000
LOG_CAP = 16 << 20
PR_SET_PDEATHSIG = 1
READY = '{"ready": true}'
MAX_OUTPUT_BYTES = 1 << 28


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _decode(obj, np):
    if obj["dtype"] == "str":
        flat = np.empty(len(obj["values"]), dtype=object)
        flat[:] = obj["values"]
        return flat.reshape(obj["shape"])
    return np.frombuffer(base64.b64decode(obj["b64"]), dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()


def _encode(arr, np):
    arr = np.asarray(arr)
    if arr.dtype.kind in "OUS":
        return {"dtype": "str", "shape": list(arr.shape), "values": [str(v) for v in arr.reshape(-1).tolist()]}
    if arr.nbytes > MAX_OUTPUT_BYTES:
        raise MemoryError(f"an output of {arr.nbytes} bytes")
    little = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
    return {"dtype": little.str, "shape": list(arr.shape),
            "b64": base64.b64encode(np.ascontiguousarray(arr, dtype=little).tobytes()).decode("ascii")}


class _Serialized:
    """An ONNX model as its bytes, for a StandaloneRepro function that only serializes it
    (onnxruntime's, OpenVINO's ONNX frontend's) where onnx is not installed."""

    def __init__(self, data: bytes):
        self.data = data

    def SerializeToString(self) -> bytes:  # noqa: N802  (onnx's ModelProto's name)
        return self.data


def _model(data: bytes):
    try:
        import onnx
    except ImportError:
        return _Serialized(data)
    return onnx.load_model_from_string(data)


def _error_text(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:1000] or type(exc).__name__


def _marks() -> tuple[int, int]:
    sys.stdout.flush(), sys.stderr.flush()
    return os.fstat(1).st_size, os.fstat(2).st_size


def _printed_since(marks: tuple[int, int]) -> dict | None:
    sys.stdout.flush(), sys.stderr.flush()
    out = {}
    for fd, name, start in ((1, "stdout", marks[0]), (2, "stderr", marks[1])):
        size = os.fstat(fd).st_size
        if size > start:
            text = os.pread(fd, min(size - start, PRINTED_CHARS), start).decode(errors="replace")
            out[name] = text + (" [...]" if size - start > PRINTED_CHARS else "")
        if size > LOG_CAP:
            os.ftruncate(fd, 0)
    return out or None


def _call(run, spec: dict, call: dict, np):
    """What the runtime answers to one case: its output array, or it raises."""
    if spec["own_graph"]:
        operands = {k: _decode(v, np) for k, v in call["operands"].items()}
        return run(operands, call["fed"], call["mode"], call["opset"], call["configuration"])
    inputs = {k: _decode(v, np) for k, v in call["inputs"].items()}
    return run(_model(base64.b64decode(call["model"])), inputs, call["configuration"])


def _serve(run, spec: dict, memory_mb: int, requests, replies, np) -> None:
    def say(line: str) -> None:
        replies.write(line + "\n")
        replies.flush()

    say(READY)
    for line in requests:
        request = json.loads(line)
        for call in request["calls"]:
            if call.get("skip"):
                say(json.dumps({"status": "ok", "skipped": call["skip"], "error": None, "output": None}))
                continue
            if call.get("refused"):  # padconf's side could not build what the runtime is given
                say(json.dumps({"status": "ok", "error": call["refused"], "error_type": "", "output": None}))
                continue
            marks = _marks()
            started = time.perf_counter()
            answer: dict = {"status": "ok", "error": None, "error_type": None, "output": None}
            try:
                answer["output"] = _encode(_call(run, spec, call, np), np)
            except MemoryError:
                say(json.dumps({"status": "crash", "error": f"out of memory (worker cap {memory_mb} MB)"}))
                os._exit(3)
            except Exception as exc:  # the runtime refused the case
                answer["error"] = _error_text(exc)
                answer["error_type"] = f"{type(exc).__module__}.{type(exc).__qualname__}"
            answer["printed"] = _printed_since(marks)
            answer["seconds"] = round(time.perf_counter() - started, 4)
            say(json.dumps(answer))


def _worker(run, spec, memory_mb: int, requests: int, replies: int, stdout: int, stderr: int, np) -> None:
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.setpgid(0, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.close(stdout)
        os.close(stderr)
        cap = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        with os.fdopen(requests, "r", encoding="utf-8") as reqs, os.fdopen(replies, "w", encoding="utf-8") as reps:
            _serve(run, spec, memory_mb, reqs, reps, np)
    finally:
        os._exit(0)


def _zygote(spec: dict, memory_mb: int, control: socket.socket) -> None:
    def send(doc):
        control.send(json.dumps(doc).encode())

    run, why, np = None, None, None
    for blocked in spec["blocked"]:  # None in sys.modules: importing it raises ImportError
        sys.modules.setdefault(blocked, None)  # type: ignore[arg-type]
    try:
        import numpy as np  # type: ignore[no-redef,assignment]
        importlib.import_module(spec["module"])
        namespace = {"np": np, "__name__": "padconf_standalone"}
        exec(compile(spec["source"], f"<{spec['function']} of padconf's {spec['adapter']} adapter>", "exec"),
             namespace)
        run = namespace[spec["function"]]
    except Exception as exc:  # the runtime does not import in its environment
        why = f"{spec['module']} cannot be imported in its environment: {type(exc).__name__}: {_error_text(exc)[:300]}"
    send({"ready": True, "unavailable": why, "order_independent": spec["order_independent"]})
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
        if not data:
            return
        request = json.loads(data)
        if request["op"] == "describe":
            try:
                version = importlib.metadata.version(spec["package"])
            except importlib.metadata.PackageNotFoundError:
                version = None
            send({"version": version})
        elif request["op"] == "fork":
            sys.stdout.flush(), sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                control.close()
                requests, replies, stdout, stderr = fds
                _worker(run, spec, memory_mb, requests, replies, stdout, stderr, np)
            for fd in fds:
                os.close(fd)
            send({"pid": pid})
        elif request["op"] == "wait":
            try:
                status = os.waitpid(request["pid"], 0)[1]
            except ChildProcessError:
                status = None
            send({"status": status})


def main(argv: list[str]) -> None:
    memory_mb, control, spec = int(argv[0]), int(argv[1]), json.loads(argv[3])
    os.set_inheritable(control, False)
    os.chdir(argv[2])  # the scratch folder: nothing of the user's working directory
    _zygote(spec, memory_mb, socket.socket(fileno=control))


if __name__ == "__main__":
    main(sys.argv[1:])
