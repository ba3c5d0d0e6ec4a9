"""padconf's side of a runtime at another release (``onnxruntime@1.24.4``), whose workers run in an
environment of its own (padconf.execution.environments) where nothing of padconf is installed:
what its zygote is started with, what each case is sent as, and what an answer means.

The worker there (padconf.execution.env_child) runs the adapter's StandaloneRepro function, the
runtime's own calls that a bug bundle's ``repro_<runtime>.py`` runs too, on what padconf builds
here: the case's ONNX model (padconf.cases.onnx_model) and its fed arrays, or for a runtime with
its own graph API the operands of its own Pad (``Adapter.own_operands``). Its answer is judged
here like any other: an output, or the runtime's error, whose meaning (a missing kernel, say) the
adapter reads from its text and type (``RemoteError``). What numpy cannot hold without padconf's
ml_dtypes (bfloat16, the float8 kinds, int4 ...) is not sent: such cases are skipped, with why.
"""
from __future__ import annotations

import base64
import inspect
import json
import textwrap
from pathlib import Path

import numpy as np

from padconf.adapters import Adapter, Outcome, RemoteError, adapter_class, error_text, get_adapter, split_release
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import numpy_dtype
from padconf.core.vocabulary import Placement
from padconf.execution import environments
from padconf.spec.loader import parse_spec_id

CHILD = Path(__file__).with_name("env_child.py")
# Runs a file by its path: nothing of its folder or of the working directory on the import path.
_RUN_PATH = "import runpy, sys; sys.argv[:] = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"


def _plain(dtype: np.dtype) -> bool:
    """numpy's own dtypes (and strings), which any numpy decodes; not ml_dtypes'."""
    return dtype.kind == "O" or dtype.isbuiltin == 1


def _encode(arr: np.ndarray) -> dict:
    arr = np.asarray(arr)
    if arr.dtype.kind in "OU":
        return {"dtype": "str", "shape": list(arr.shape), "values": [str(v) for v in arr.reshape(-1).tolist()]}
    little = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
    return {"dtype": little.str, "shape": list(arr.shape),
            "b64": base64.b64encode(np.ascontiguousarray(arr, dtype=little).tobytes()).decode("ascii")}


def _decode(obj: dict) -> np.ndarray:
    shape = [int(n) for n in obj["shape"]]
    if obj["dtype"] == "str":
        flat = np.empty(len(obj["values"]), dtype=object)
        flat[:] = [str(v) for v in obj["values"]]
        return flat.reshape(shape)
    dtype = np.dtype(obj["dtype"])
    if not _plain(dtype) or dtype.kind not in "biufc":
        raise ValueError(f"an array of numpy dtype {obj['dtype']!r}")
    return np.frombuffer(base64.b64decode(obj["b64"]), dtype=dtype).reshape(shape).copy()


def ensure_for(runtime: str, say=None) -> environments.Environment:
    """The environment of ``runtime`` (a registered adapter's name at a release), made if need be."""
    base, version = split_release(runtime)
    assert version is not None, runtime
    adapter = adapter_class(runtime)
    return environments.ensure(adapter.package, version, say, (adapter.module or adapter.package,),
                               adapter.blocked_modules)


class Elsewhere:
    """A registered adapter's runtime at the release its name carries, run in its environment."""

    def __init__(self, name: str):
        self.name = name
        base, version = split_release(name)
        assert version is not None, name
        self.version = version
        self.adapter: Adapter = get_adapter(name)  # its module imports no runtime: the facts, here
        repro = self.adapter.repro
        assert repro is not None and not repro.rewrites  # unknown_runtime said so otherwise
        self.repro = repro
        self.package = self.adapter.package

    def environment(self, say=None) -> environments.Environment:
        return ensure_for(self.name, say)

    def command(self, memory_mb: int, fd: int, scratch: str) -> list[str]:
        """The zygote's command line (run under padconf's reaper): the environment's interpreter,
        isolated and writing no bytecode (its files stay as its manifest records them), on
        env_child by its path, told what to import and which function to run."""
        spec = {"adapter": self.name, "package": self.package, "module": self.adapter.module or self.package,
                "blocked": list(self.adapter.blocked_modules), "source": textwrap.dedent(inspect.getsource(
                    self.repro.run)), "function": self.repro.run.__name__, "own_graph": self.repro.own_graph,
                "order_independent": bool(self.adapter.order_independent)}
        return [str(self.environment().python), "-I", "-B", "-c", _RUN_PATH, str(CHILD), str(memory_mb), str(fd),
                scratch, json.dumps(spec)]

    def supports(self, spec_id: str, dtype: str) -> str | None:
        why = self.adapter.supports(spec_id, dtype)
        if why is None and not _plain(numpy_dtype(dtype)):
            why = (f"numpy has no {dtype} without padconf's ml_dtypes, which an environment of its own does not "
                   "hold: such cases run at the installed release only")
        return why

    def describe(self, answer: dict, pairs: list[tuple[str, str]]) -> dict:
        adapter = self.adapter
        return {"version": answer.get("version"), "placements": list(adapter.placements),
                "domains": list(adapter.domains), "target": adapter.target, "compiles_ahead": False,
                "notes": [f"{self.name} runs in an environment of its own ({self.environment().folder}), its "
                          "StandaloneRepro's calls on each case"],
                "supports": [self.supports(s, d) for s, d in pairs]}

    def call(self, case: Case, placement: Placement) -> dict:
        """What the worker is sent for ``case``: the arguments of the adapter's standalone run, or
        why the case cannot be put to the runtime there (``skip``), or, where building its
        operands raised (pads OpenVINO's Pad cannot split), that error, as the adapter's ``run``
        reports it (``refused``)."""
        try:
            return self._call(case, placement)
        except Exception as exc:  # noqa: BLE001  what the adapter's own run() turns into a refusal
            return {"refused": error_text(exc)}

    def _call(self, case: Case, placement: Placement) -> dict:
        configuration = self.adapter.configuration()
        if self.repro.own_graph:
            if case.op != "Pad" or case.context is not None:
                return {"skip": f"{case.op} graphs run at the installed release only"}
            operands = self.adapter.own_operands(case)
            fed = {"inputs": list(operands), "initializers": ["data"], "folded": []}[placement]
            arrays = operands
            call = {"fed": fed, "mode": case.mode, "opset": parse_spec_id(case.spec)[1],
                    "configuration": configuration}
        else:
            arrays = feeds(case, placement)
            call = {"model": base64.b64encode(build_model(case, placement).SerializeToString()).decode("ascii"),
                    "configuration": configuration}
        unfed = sorted({str(a.dtype) for a in arrays.values() if not _plain(np.asarray(a).dtype)})
        if unfed:
            return {"skip": f"numpy has no {', '.join(unfed)} without padconf's ml_dtypes, which an environment of "
                            "its own does not hold"}
        call["operands" if self.repro.own_graph else "inputs"] = {k: _encode(v) for k, v in arrays.items()}
        return call

    def payload(self, cases: list[Case], placement: Placement) -> bytes:
        return (json.dumps({"op": "run", "calls": [self.call(c, placement) for c in cases]}) + "\n").encode()

    def outcome(self, reply: dict) -> Outcome:
        """An answer of the worker as an Outcome: judged here, its error read by the adapter."""
        if reply.get("skipped"):
            return Outcome(skipped=reply["skipped"])
        printed, seconds = reply.get("printed"), reply.get("seconds")
        if reply.get("error") is not None:
            error = str(reply["error"])
            kernel = self.adapter.lacks_kernel(RemoteError(error, str(reply.get("error_type") or "")))
            return Outcome(error=error, not_implemented=kernel, printed=printed, seconds=seconds)
        try:
            output = _decode(reply["output"])
        except (KeyError, TypeError, ValueError) as exc:
            return Outcome(error=f"the worker in its environment answered no array padconf reads ({exc})",
                           printed=printed, seconds=seconds)
        return Outcome(output=output, printed=printed, seconds=seconds)
