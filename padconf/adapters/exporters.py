"""Framework exporters as implementations under test: PyTorch's ``torch.onnx.export`` (its dynamo
exporter, the default, and the TorchScript one, ``dynamo=False``), and torch's own eager
``F.pad``, on cases of the framework's own document (``torch/Pad-2``, specs/torch/Pad-2.yaml).

The oracle is the framework's document, computed by padconf's reference under the readings that
document gives; torch's eager answer is an implementation like any other (``torch``), so where it
and the document disagree, that is torch's own finding. An exporter's verdict:

- the export raises: a refusal of the case (``torch.onnx.export raised: ...``), kept in the
  export cache like a compiler's refusal;
- its model fails ``onnx.checker.check_model(full_check=True)``: an invalid model, a refusal;
- the exported graph is judged by ONNX's document: every Pad node in it is classified under the
  ONNX Pad version of the model's opset, on the arrays that reach it (onnx's reference evaluator
  computes the other nodes). A Pad whose meaning ONNX leaves open (ambiguous) or forbids
  (must-reject) makes the graph undefined: a refusal naming the point
  (``... wrote Pad(reflect) whose meaning ONNX Pad-19 leaves open (mixed_sign_pads)``), for a
  case the framework defines a failure of the exporter whatever a runtime then does;
- else the outcome is what the graph means by ONNX's documents (padconf's reference for each Pad,
  onnx's reference evaluator for every other node), judged against the framework's document as
  any outcome is;
- the exported graph also runs on onnxruntime (its defaults, as users run an exported model), and
  the note says where its answer is not the framework's, or where it refuses the graph; the
  variant ``[on=onnxruntime]`` makes onnxruntime's answer the outcome (the whole pipeline a user
  runs), so a finding shows on the runtime too.

Exports are cached on disk by the call they export (shape, dtype, pad tuple, mode, value, torch's
version and the exporter's options: the graph), in padconf's compile cache
(``padconf.adapters.compile_cache``, bounded, signed), so a second run, a gate or a minimize
exports nothing it exported before; ``bundle_model`` reads a minimized case's exported graph
back from there for its bundle.
"""
from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from padconf.adapters import Adapter, Outcome, StandaloneRepro, error_text
from padconf.adapters.compile_cache import CompileCache, CompileFailed, cache_key, default_root
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify, last_dim_first_pairs, padded_dims
from padconf.core.dtypes import bit_equal
from padconf.core.versions import package_version
from padconf.core.vocabulary import Placement
from padconf.spec.loader import get_spec

# padconf's mode names -> torch's (specs/torch/Pad-2.yaml: replicate is edge, circular is wrap)
TORCH_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}
# ONNX Pad's versions: a model of opset N runs the newest one <= N
ONNX_PAD_VERSIONS = (1, 2, 11, 13, 18, 19, 21, 23, 24, 25)
# the dtypes padconf hands torch through numpy (ml_dtypes' bfloat16 by its bits)
HANDED_OVER = {"float", "double", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "bool", "complex64", "complex128"}
NOT_IMPLEMENTED = re.compile(r"not implemented for|NotImplementedError|Unsupported dtype|not supported", re.I)


def torch_call(case: Case) -> dict:
    """What torch is asked for ``case``: the op (Pad, or a control's Identity / Concat), the data's
    shape and dtype, torch's pad tuple (last axis first), torch's mode name and the value (a
    Python number, or None when omitted). Everything an export depends on but the data's values."""
    value = None if case.constant_value is None else np.asarray(case.constant_value).reshape(()).item()
    if value is not None and not isinstance(value, (bool, int, float, complex)):  # an ml_dtypes scalar
        value = float(value)
    if isinstance(value, complex) or (isinstance(value, float) and not np.isfinite(value)):
        value = repr(value)  # JSON has no NaN, inf or complex: the repro's literal, read back by _number
    return {"op": case.op, "shape": list(case.data.shape), "dtype": case.dtype,
            "pad": last_dim_first_pairs(case), "mode": TORCH_MODES.get(case.mode, case.mode), "value": value,
            "padded_dims": padded_dims(case) if case.data.ndim and len(case.pads) == 2 * case.data.ndim else None}


# The functions below are copied into bundles' repro scripts by their source: they import nothing
# of padconf, only numpy, torch, onnx and onnxruntime, inside the function.


def torch_pad(operands, fed, mode, opset, configuration):
    """torch's own answer: F.pad (or the nn.*Pad*d module) on the data, eagerly."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    torch_mode = {"edge": "replicate", "wrap": "circular"}.get(mode, mode)
    data = operands["data"]
    x = torch.from_numpy(data.view(np.uint16)).view(torch.bfloat16) if data.dtype.name == "bfloat16" \
        else torch.from_numpy(np.array(data, order="C"))
    pad = [int(p) for p in operands["pad"]]
    value = operands["value"].reshape(()).item() if "value" in operands else None
    if configuration.get("call") == "module" and 1 <= len(pad) // 2 <= 3 and len(pad) % 2 == 0:
        kind = {"constant": "ConstantPad", "reflect": "ReflectionPad", "replicate": "ReplicationPad",
                "circular": "CircularPad"}[torch_mode]
        cls = getattr(torch.nn, f"{kind}{len(pad) // 2}d")
        module = cls(tuple(pad), 0 if value is None else value) if kind == "ConstantPad" else cls(tuple(pad))
        y = module(x)
    else:
        y = F.pad(x, pad, torch_mode) if value is None else F.pad(x, pad, torch_mode, value)
    return y.view(torch.uint16).numpy().view(data.dtype) if y.dtype == torch.bfloat16 else y.numpy()


def torch_export(operands, fed, mode, opset, configuration):
    """torch.onnx.export of F.pad (or the nn.*Pad*d module) as padconf ran it (dynamo or
    TorchScript), then onnxruntime on the exported model, its defaults: the output."""
    import io

    import numpy as np
    import onnxruntime
    import torch
    import torch.nn.functional as F
    torch_mode = {"edge": "replicate", "wrap": "circular"}.get(mode, mode)
    data = operands["data"]
    pad = [int(p) for p in operands["pad"]]
    value = operands["value"].reshape(()).item() if "value" in operands else None

    class Pad(torch.nn.Module):
        def forward(self, x):
            if configuration.get("call") == "module" and 1 <= len(pad) // 2 <= 3 and len(pad) % 2 == 0:
                kind = {"constant": "ConstantPad", "reflect": "ReflectionPad", "replicate": "ReplicationPad",
                        "circular": "CircularPad"}[torch_mode]
                cls = getattr(torch.nn, f"{kind}{len(pad) // 2}d")
                return (cls(tuple(pad), 0 if value is None else value) if kind == "ConstantPad"
                        else cls(tuple(pad)))(x)
            return F.pad(x, pad, torch_mode) if value is None else F.pad(x, pad, torch_mode, value)

    x = torch.from_numpy(data.view(np.uint16)).view(torch.bfloat16) if data.dtype.name == "bfloat16" \
        else torch.from_numpy(np.array(data, order="C"))
    if configuration.get("dynamo", True):
        model = torch.onnx.export(Pad(), (x,), dynamo=True, verbose=False).model_proto.SerializeToString()
    else:
        buffer = io.BytesIO()
        torch.onnx.export(Pad(), (x,), buffer, dynamo=False, input_names=["x"], output_names=["y"])
        model = buffer.getvalue()
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: data})[0]


def _number(value):
    """A call's value back from JSON: repr text of NaN, inf and complex becomes the number."""
    return complex(value) if isinstance(value, str) and "j" in value else float(value) \
        if isinstance(value, str) else value


def _torch_dtype(torch, dtype: str):
    return {"float": torch.float32, "double": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
            "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
            "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
            "bool": torch.bool, "complex64": torch.complex64,
            "complex128": torch.complex128}[dtype]


def _module(torch, call: dict, call_style: str):
    """The torch module whose forward is ``call``: F.pad (or an nn.*Pad*d module), or a
    control's Identity (``x.clone()``) or Concat (the data and the value, flattened, tiled twice)."""
    import torch.nn.functional as F
    pad, mode, value = call["pad"], call["mode"], _number(call["value"])

    class Pad(torch.nn.Module):
        def forward(self, x):
            if call["op"] == "Identity":
                return x.clone()
            if call["op"] == "Concat":
                flat = x.reshape(-1)
                second = flat if value is None else torch.full((1,), value, dtype=x.dtype)
                return torch.cat([flat, second]).repeat(2)  # Case.movement_control: a second operand, tiled
            k = len(pad) // 2
            if call_style == "module" and 1 <= k <= 3 and len(pad) % 2 == 0:
                kind = {"constant": "ConstantPad", "reflect": "ReflectionPad", "replicate": "ReplicationPad",
                        "circular": "CircularPad"}[mode]
                cls = getattr(torch.nn, f"{kind}{k}d")
                return (cls(tuple(pad), 0 if value is None else value) if kind == "ConstantPad"
                        else cls(tuple(pad)))(x)
            return F.pad(x, pad, mode) if value is None else F.pad(x, pad, mode, value)
    return Pad()


def _tensor(torch, data: np.ndarray):
    if data.dtype.name == "bfloat16":  # ml_dtypes' bfloat16, which torch.from_numpy does not take
        return torch.from_numpy(np.array(data, order="C").view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(np.array(data, order="C"))


def _numpy(torch, y, dtype) -> np.ndarray:
    if y.dtype == torch.bfloat16:
        return y.contiguous().view(torch.uint16).numpy().view(dtype)
    return y.numpy()


def _pad_version(opset: int) -> int:
    return max(v for v in ONNX_PAD_VERSIONS if v <= opset)


class GraphUndefined(Exception):
    """A Pad of an exported graph whose meaning ONNX's document leaves open or forbids."""


def onnx_meaning(model_bytes: bytes, feeds: dict) -> np.ndarray:
    """What the exported graph computes by ONNX's documents: each Pad by padconf's reference, as
    the ONNX Pad version of the model's opset classifies the arrays reaching it, every other node
    by onnx's reference evaluator. GraphUndefined where a Pad is not defined there."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import OpRun

    model = onnx.load_model_from_string(model_bytes)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    spec_id = f"onnx/Pad-{_pad_version(opset)}"

    class Pad(OpRun):
        op_domain = ""

        def _run(self, data, pads=None, constant_value=None, axes=None, mode=None, value=None, paddings=None):
            mode = (mode.decode() if isinstance(mode, bytes) else mode) or "constant"
            pads = paddings if pads is None else pads
            value = constant_value if constant_value is not None else (
                None if value is None else np.asarray(value, dtype=np.float32))
            case = Case(spec=spec_id, data=np.asarray(data), pads=[int(p) for p in np.asarray(pads).reshape(-1)],
                        mode=mode, constant_value=None if value is None else np.asarray(value).reshape(()),
                        axes=None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)],
                        pads_type=np.asarray(pads).dtype.name if pads is not None else "int64",
                        axes_type="int64" if axes is None else np.asarray(axes).dtype.name)
            found = classify(case, get_spec(spec_id))
            if found.kind != CaseKind.DEFINED:
                what = "leaves open" if found.kind == CaseKind.AMBIGUOUS else "forbids"
                raise GraphUndefined(f"Pad({mode}) with pads {case.pads} on data of shape {list(case.data.shape)}, "
                                     f"whose meaning ONNX {spec_id.split('/')[1]} {what} ({found.reason})")
            return (found.expected,)

    (out, *_) = ReferenceEvaluator(model, new_ops=[Pad]).run(None, feeds)
    return np.asarray(out)


def _ort(model_bytes: bytes, feeds: dict) -> tuple[np.ndarray | None, str | None]:
    """onnxruntime on the exported model, its defaults: (output, None) or (None, its refusal)."""
    try:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
        return np.asarray(session.run(None, feeds)[0]), None
    except Exception as exc:
        return None, error_text(exc)


def _shown(out: np.ndarray | None, err: str | None) -> str:
    if out is None:
        return f"refuses it ({(err or '')[:300]})"
    return f"gives shape {list(out.shape)} {out.reshape(-1)[:8].tolist()}"


def _conforms(case: Case | None, out: np.ndarray | None) -> bool | None:
    """Whether ``out`` (None: a refusal) is what the framework's document allows; None where the
    case could not be classified."""
    if case is None:
        return None
    if case.kind == CaseKind.MUST_REJECT:
        return out is None
    allowed = [case.expected] if case.kind == CaseKind.DEFINED else list(case.interpretations.values())
    return any(out is None if e is None else out is not None and out.dtype == e.dtype and out.shape == e.shape
               and bit_equal(e, out) for e in allowed)


def _classified(case: Case) -> Case | None:
    try:
        found = classify(case, get_spec(case.spec))
    except Exception:  # noqa: BLE001  no classification: the note says less
        return None
    return None if found.kind == CaseKind.TOO_LARGE else found


def judged_export(model: bytes, case: Case, exporter: str, eager: tuple[str, tuple | None],
                  on_runtime: bool = False) -> Outcome:
    """The outcome of ``exporter``'s graph ``model`` for ``case`` (any framework's exporter):
    onnx.checker (full_check) first, then the graph's meaning by ONNX's documents
    (``onnx_meaning``; a Pad there leaves open or forbids: a refusal naming it), or with
    ``on_runtime`` onnxruntime's answer on it. The note says what the exporter wrote, what
    onnxruntime gives and what the framework's eager call gives (``eager``: its name, and
    (output, error) or None where not asked)."""
    import onnx
    try:
        onnx.checker.check_model(onnx.load_model_from_string(model), full_check=True)
    except Exception as exc:
        return Outcome(error=f"onnx.checker (full_check) rejects the model {exporter} wrote: {error_text(exc)}")
    proto = onnx.load_model_from_string(model)
    feeds = {proto.graph.input[0].name: case.data} if len(proto.graph.input) else {}
    pads = [n for n in proto.graph.node if n.op_type == "Pad"]
    ops = ", ".join(dict.fromkeys(n.op_type for n in proto.graph.node)) or "no node"
    ort_out, ort_err = _ort(model, feeds)
    spec = _classified(case)
    said = f"{exporter} writes {ops}; onnxruntime {_shown(ort_out, ort_err)}"
    if eager[1] is not None:
        said += f"; {eager[0]} {_shown(*eager[1])}"
    if on_runtime:
        return Outcome(output=ort_out, error=None if ort_err is None else f"onnxruntime: {ort_err}", note=said)
    try:
        meaning = onnx_meaning(model, feeds)
    except GraphUndefined as exc:
        return Outcome(error=f"{exporter} wrote {exc}", note=said)
    except Exception as exc:  # onnx's evaluator on another node of the graph
        return Outcome(skipped=f"onnx's reference evaluator cannot compute the exported graph "
                               f"({type(exc).__name__}: {error_text(exc)}): no verdict on its meaning; {said}")
    if pads and _conforms(spec, ort_out) is False and _conforms(spec, meaning):
        said += " (the graph is right by ONNX's document: onnxruntime's own failure on it)"
    return Outcome(output=meaning, note=said)


class TorchAdapter(Adapter):
    """torch's eager F.pad (``call=module``: the nn.*Pad*d module), judged by torch's own document."""

    name = "torch"
    module = package = "torch"
    domains = ("torch",)
    # the data is a tensor; the pads are Python numbers in every placement
    placements: tuple[str, ...] = (Placement.INPUTS,)
    preload: tuple[str, ...] = ("padconf.cases.classify", "jsonschema")  # get_spec validates
    skips_at_run_time = True  # what torch cannot be called with
    options = {"call": ("functional", "module")}
    repro = StandaloneRepro("torch", torch_pad, own_graph=True)
    type_names = ("Float", "Double", "Half", "BFloat16", "Bool", "Long", "Int", "Short", "Char", "Byte",
                  "ComplexFloat", "ComplexDouble")
    framework_packages = ("torch", "onnxscript", "onnx")  # the versions a MANIFEST row of its graphs names

    @staticmethod
    def framework_call(case: Case) -> dict:
        """The framework call ``case`` is (torch_call), as a MANIFEST row names it."""
        return torch_call(case)

    def configuration(self) -> dict[str, object]:
        return {"call": self.settings["call"]} if "call" in self.settings else {}

    def supports(self, spec_id: str, dtype: str) -> str | None:
        return super().supports(spec_id, dtype) or (
            None if dtype in HANDED_OVER else f"numpy hands torch no {dtype} tensors (torch.from_numpy)")

    def own_operands(self, case: Case) -> dict[str, np.ndarray]:
        call = torch_call(case)
        operands = {"data": case.data, "pad": np.asarray(call["pad"], dtype=np.int64)}
        if case.constant_value is not None:
            operands["value"] = np.asarray(case.constant_value).reshape(())
        return operands

    def lacks_kernel(self, exc: Exception) -> bool:
        return isinstance(exc, NotImplementedError) and "not implemented for" in str(exc) \
            or bool(re.search(r"not implemented for '", str(exc)))

    def inexpressible(self, case: Case) -> str | None:
        """Why torch's API cannot be asked ``case`` at all, or None."""
        if case.axes is not None:
            return "F.pad takes no axes: its pad tuple pads the last dimensions"
        if case.constant_value is not None and np.iscomplexobj(case.constant_value) \
                and np.asarray(case.constant_value).imag != 0:
            return "F.pad's value is a float: a complex fill value cannot be passed"
        return None

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        import torch
        if self.inexpressible(case):
            return Outcome(skipped=self.inexpressible(case))
        call = torch_call(case)
        try:
            y = _module(torch, call, self.settings.get("call", "functional"))(_tensor(torch, case.data))
            return Outcome(output=_numpy(torch, y, case.data.dtype))
        except Exception as exc:
            return self.refusal(exc).outcome()


class CachedExport(Adapter):
    """What an adapter exporting a framework's call to ONNX adds to its framework's adapter: the
    export cache, keyed by the call (``export_call``) and the adapter's own ``export_key``, and the
    exported graph read back into a bundle. Subclasses define ``export_call``, ``export_key`` and
    ``_export``."""

    verb = "exports"  # what notes() says is done again with the cache off
    skips_at_run_time = True  # a graph onnx's evaluator cannot compute

    def __init__(self):
        super().__init__()
        self._cache = CompileCache(default_root())

    def available(self) -> str | None:
        found = super().available()
        self._cache.why_off()  # reads the cache's key in the zygote: its workers inherit it
        return found

    def notes(self) -> list[str]:
        why = self._cache.why_off()
        return [f"{self.verb} everything again: {why}"] if why and self._cache.root is not None else []

    def export_call(self, case: Case) -> dict:
        raise NotImplementedError

    def export_key(self, call: dict) -> str:
        raise NotImplementedError

    def _export(self, call: dict) -> bytes:
        raise NotImplementedError

    def exported(self, case: Case):
        """The exported model of ``case``'s call, from the export cache or exported now; a Refusal
        with the exporter's words where it refuses."""
        call = self.export_call(case)
        key = self.export_key(call)
        return self.cached(key, lambda: self._cache.fetch(key, lambda: self._export(call), float("inf")))

    def bundle_model(self, case: Case, placement: Placement, where):
        """The exported graph of the minimized case, read back from the export cache (the worker
        that ran the case put it there); None where it is not there (the bundle holds no model)."""
        entry = self._cache.get(self.export_key(self.export_call(case)))
        if entry is None or entry[:1] != b"M":
            return None, {"data": case.data}
        import onnx

        (where / "model.onnx").write_bytes(entry[1:])
        return "model.onnx", {onnx.load_model_from_string(entry[1:]).graph.input[0].name: case.data}


class TorchExportAdapter(CachedExport, TorchAdapter):
    """``torch.onnx.export`` of F.pad (or an nn.*Pad*d module), its dynamo exporter by default
    (``dynamo=false``: the TorchScript one), the exported graph judged by ONNX's document
    (``on=onnxruntime``: by onnxruntime's answer on it)."""

    name = "torch-export"
    module = "torch.onnx"
    package = "torch"
    preload = ("padconf.cases.classify", "jsonschema", "onnx.reference", "onnxruntime", "onnxscript")
    options = {"dynamo": ("true", "false"), "call": ("functional", "module"), "on": ("document", "onnxruntime")}
    repro = StandaloneRepro("torch onnx onnxscript onnxruntime", torch_export, own_graph=True)
    compiles_ahead = True  # an export takes a second: padconf waits for it as for a compile

    @property
    def dynamo(self) -> bool:
        return self.settings.get("dynamo", "true") == "true"

    @property
    def exporter(self) -> str:
        return f"torch.onnx.export(dynamo={self.dynamo})"

    def configuration(self) -> dict[str, object]:
        found: dict[str, object] = {"dynamo": self.dynamo} if "dynamo" in self.settings else {}
        if "call" in self.settings:
            found["call"] = self.settings["call"]
        return found

    def export_call(self, case: Case) -> dict:
        return torch_call(case)

    def export_key(self, call: dict) -> str:
        """The export cache's key: the call, torch's and onnxscript's versions, the options."""
        return cache_key(b"torch-export", json.dumps(call, sort_keys=True), package_version("torch") or "",
                         package_version("onnxscript") or "", package_version("onnx") or "",
                         json.dumps({"dynamo": self.dynamo, "call": self.settings.get("call", "functional")}))

    def _export(self, call: dict) -> bytes:
        import io
        import warnings

        import torch
        module = _module(torch, call, self.settings.get("call", "functional"))
        x = torch.zeros(call["shape"], dtype=_torch_dtype(torch, call["dtype"]))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if self.dynamo:
                    program = torch.onnx.export(module, (x,), dynamo=True, verbose=False, report=False)
                    assert program is not None  # dynamo=True returns the ONNXProgram
                    return program.model_proto.SerializeToString()
                buffer: Any = io.BytesIO()  # torch's stubs name a path; its code takes a file object too
                torch.onnx.export(module, (x,), buffer, dynamo=False, input_names=["x"], output_names=["y"])
                return buffer.getvalue()
        except Exception as exc:  # the exporter's refusal, as deterministic as its graph
            raise CompileFailed(f"{type(exc).__name__}: {error_text(exc)}") from None

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        if self.inexpressible(case):
            return Outcome(skipped=self.inexpressible(case))
        if case.dtype in ("complex64", "complex128"):
            return Outcome(error="torch.onnx.export exports no complex tensors", not_implemented=True)
        model = self.exported(case)
        if not isinstance(model, bytes):  # a Refusal: the exporter raised
            return Outcome(error=f"{self.exporter} raised: {model.error}",
                           not_implemented=bool(NOT_IMPLEMENTED.search(model.error)))
        eager = None if _classified(case) is None or case.op != "Pad" else self._eager(case)
        return judged_export(model, case, self.exporter, ("eager torch", eager),
                             on_runtime=self.settings.get("on") == "onnxruntime")

    def _eager(self, case: Case) -> tuple[np.ndarray | None, str | None]:
        import torch
        try:
            y = _module(torch, torch_call(case), self.settings.get("call", "functional"))(_tensor(torch, case.data))
            return _numpy(torch, y, case.data.dtype), None
        except Exception as exc:
            return None, error_text(exc)
