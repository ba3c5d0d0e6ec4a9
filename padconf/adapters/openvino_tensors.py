"""OpenVINO tensors: the element-type table and the numpy <-> ov.Tensor conversions, compile
settings, the graph key compiled models are shared by, and the error classification that the
native and the ONNX-frontend adapters share."""
from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import numpy as np

from padconf.adapters import error_text
from padconf.adapters.compile_cache import CompileCache, cache_key
from padconf.core.dtypes import numpy_dtype

# Compiled models kept. Each holds threads and buffers: hundreds of them exhaust a worker's
# address-space cap ("Resource temporarily unavailable" on thread creation).
OV_CACHE_SIZE = 32
# padconf dtype -> OpenVINO element type name. Missing (float8 *fnuz, int2, complex): OpenVINO
# has no such element type, so no tensor of it can be fed.
OV_TYPES = {
    "float": "f32", "double": "f64", "float16": "f16", "bfloat16": "bf16",
    "float8e4m3fn": "f8e4m3", "float8e5m2": "f8e5m2", "float8e8m0": "f8e8m0", "float4e2m1": "f4e2m1",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "int4": "i4", "uint4": "u4", "uint2": "u2", "bool": "boolean", "string": "string",
}
FROM_OV = {v: k for k, v in OV_TYPES.items()}  # OpenVINO element type name -> padconf dtype
# A variant's options (openvino[threads=1]) and the CPU properties each sets. Without them a model
# is compiled as OpenVINO's users compile it, compile_model(model, "CPU"): verdicts are given in
# that configuration (with one thread the CPU plugin returns an empty or uninitialised tensor
# where, by default, it raises).
OV_OPTIONS = {"threads": ("1", "2", "4"), "mode": ("accuracy", "performance")}


def ov_properties(settings: dict[str, str]) -> dict[str, object]:
    """The CPU properties a variant's ``settings`` (options of OV_OPTIONS) compile with."""
    properties: dict[str, object] = {}
    if "threads" in settings:
        properties["INFERENCE_NUM_THREADS"] = int(settings["threads"])
    if "mode" in settings:
        properties["EXECUTION_MODE_HINT"] = settings["mode"].upper()
    return properties


_NOT_IMPLEMENTED = re.compile(
    r"not supported|unsupported|doesn't support|does not support|not implemented"
    r"|no implementation|Unidentified data type|Unknown type|could not be created|Cannot create"
    r"|only [\w ]+ (is|are) supported", re.I)


def says_not_implemented(text: str) -> bool:
    """Whether OpenVINO's error ``text`` says it lacks a kernel or type ("Unidentified data type
    u2", "... is not supported", "Only CONSTANT pad mode is supported for element::string")
    rather than refuses the case. Text is all there is: OpenVINO
    raises one generic RuntimeError (its C++ exception's text, "Exception from src/...") for
    every failure, a refused case and a missing kernel alike."""
    return bool(_NOT_IMPLEMENTED.search(text))


def error_core(text: str) -> str:
    """OpenVINO's error without its wrappers ("Exception from src/x.cpp:105:", "Check '...' failed
    at src/y.hpp:94:", the node it validated, the shapes it inferred, the summary after)."""
    if not text.startswith("Exception from src/"):
        return text
    text = re.split(r"(?:Exception from |failed at )src/\S+:\d+:\s*", text)[-1]
    text = re.sub(r"While validating (node|ONNX node) '.*?'( with friendly_name '.*?')?:\s*", "", text)
    return re.sub(r"Shape inference input shapes \{.*?\}\s*", "", text).split(" Summary:")[0]


def lacks_kernel(exc: Exception) -> bool:
    """Adapter.lacks_kernel of both OpenVINO adapters."""
    return says_not_implemented(error_text(exc))


_CORE: list = []  # the process's one Core: the zygote's loads the CPU plugin, and every fork inherits both


def without_telemetry() -> None:
    """Have ``import openvino`` take its own telemetry stub (openvino.tools.ovc.telemetry_stub,
    what it uses when openvino-telemetry is not installed). Otherwise each import, unless the
    user has opted out, sends a Google Analytics event from a thread and a forked process:
    traffic padconf's user did not ask for, and a thread in a zygote that forks workers. Called
    before the import; no effect on an openvino imported already."""
    if "openvino_telemetry" not in sys.modules:  # None there: its import raises ImportError
        sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]


def load_cpu_plugin(onnx_frontend: bool = False) -> str | None:
    """Load OpenVINO's CPU plugin (and the ONNX frontend); None, or why they do not load. The
    OpenVINO adapters' availability check, run in the zygote, so that each forked worker finds
    both loaded and its first compile costs ~20 ms less. Loading starts no thread. Compiling
    does, which is why a zygote never compiles: a fork would inherit a thread pool without its
    threads, and hang."""
    try:
        core = shared_core()
        core.get_property("CPU", "FULL_DEVICE_NAME")
        if onnx_frontend:
            from onnx import TensorProto, helper
            x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [1]) for n in "xy")
            graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "load", [x], [y])
            core.read_model(helper.make_model(graph).SerializeToString(), b"")
    except Exception as exc:
        return f"OpenVINO's CPU plugin does not load: {error_text(exc)}"
    return None


def shared_core():
    """The Core that loaded the CPU plugin: in a worker, the zygote's, inherited with the plugin
    loaded (a fresh worker that built a Core of its own would pay for it again,
    benchmarks/bench_openvino_workers.py); a new one elsewhere."""
    if not _CORE:
        import openvino as ov
        _CORE.append(ov.Core())
    return _CORE[0]


def compile_shared(core, graph, key: tuple, folder: Path | None, properties: dict):
    """``graph`` compiled for the CPU, or the same compile imported from ``folder``, where an
    earlier worker of this zygote exported it (OpenVINO's own model caching, by ``graph_key``).
    A worker replaced after an impossible output gets an empty heap, but need not compile its
    first graphs anew: a fresh worker imports in about half the time it compiles
    (benchmarks/bench_openvino_workers.py), and a run replaces workers ~1,800 times. A blob
    that does not import is compiled instead."""
    entries = CompileCache(folder)
    name = cache_key(repr(key))
    blob = entries.get(name)
    if blob is not None:
        try:
            return core.import_model(io.BytesIO(blob), "CPU", properties)
        except Exception:  # noqa: BLE001  the compile below says what is wrong, if anything
            pass
    compiled = core.compile_model(graph, "CPU", properties)
    entries.put(name, compiled.export_model().getvalue())
    return compiled


def ov_type(dtype: str):
    import openvino as ov
    return getattr(ov.Type, OV_TYPES[dtype])


def to_tensor(arr: np.ndarray, dtype: str):
    """An ov.Tensor of ``arr``, built from its bytes with an explicit shape and element type:
    ov.Tensor(array) turns a 0-d array into shape [1] and cannot name ml_dtypes' kinds. OpenVINO
    packs sub-byte kinds two (four) a byte, lowest bits first; ml_dtypes keeps one in a byte's
    low bits."""
    import openvino as ov
    arr = np.asarray(arr, order="C")  # not ascontiguousarray: that makes a 0-d array 1-d
    if dtype == "string":
        return ov.Tensor(np.asarray(arr, dtype=str))
    # This constructor shares the buffer; the Tensor holds a reference to it.
    return ov.Tensor(packed(arr, ov_type(dtype).bitwidth), ov.Shape(list(arr.shape)), ov_type(dtype))


def packed(arr: np.ndarray, bits: int) -> np.ndarray:
    """``arr``'s bytes as OpenVINO holds elements of ``bits`` bits: as they are from 8 bits up,
    else two (four) a byte, lowest bits first (ml_dtypes keeps one in a byte's low bits)."""
    raw = np.asarray(arr, order="C").reshape(-1).view(np.uint8)
    if bits < 8:
        per = 8 // bits
        groups = np.pad(raw & ((1 << bits) - 1), (0, -raw.size % per)).reshape(-1, per)
        raw = np.bitwise_or.reduce(groups << (np.arange(per, dtype=np.uint8) * bits), axis=1).astype(np.uint8)
    return raw.copy()


def from_tensor(tensor) -> np.ndarray:
    """``tensor`` as a numpy array of the padconf dtype matching its OpenVINO element type.
    tensor.data is not the values for every type (bf16 comes back as a float16 view, the
    float8 and packed kinds as raw bytes), so decode the bytes."""
    name = FROM_OV.get(tensor.element_type.to_string())
    if name is None:
        raise TypeError(f"OpenVINO returned element type {tensor.element_type}, which padconf has no name for")
    shape = tuple(tensor.shape)
    if name == "string":
        out = np.empty(shape, dtype=object)
        out[...] = np.asarray(tensor.str_data, dtype=str).reshape(shape)
        return out
    raw = np.ascontiguousarray(tensor.data).reshape(-1).view(np.uint8)
    bits = tensor.element_type.bitwidth
    if bits < 8:
        shifts = np.arange(8 // bits, dtype=np.uint8) * bits
        raw = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:int(np.prod(shape))]
    return raw.copy().view(numpy_dtype(name)).reshape(shape)


def graph_key(model) -> tuple:
    """What compiling the ov.Model ``model`` depends on: for each op in topological order, its
    type and opset, where its inputs come from, its outputs' element types and shapes, its
    attributes, a Constant's bytes, a Parameter's or Result's name (inputs are fed by name).
    Graphs with equal keys compile alike, so their cases share one compiled model: the same
    Pad read from Pad-13 and from Pad-19, or equal pads baked in. Compiling costs ~25 ms a
    graph, most of OpenVINO's time in a run, and two graphs in three had been compiled already."""
    ops = model.get_ordered_ops()
    index = {op.get_name(): i for i, op in enumerate(ops)}

    def own(op):
        kind = op.get_type_name()
        if kind == "Constant":
            view = op.get_tensor_view()
            return tuple(view.str_data.ravel().tolist()) if op.get_element_type().to_string() == "string" \
                else op.get_data().tobytes()
        return op.get_friendly_name() if kind in ("Parameter", "Result") else None

    return tuple((op.get_type_name(), op.get_type_info().version_id,
                  tuple((index[i.get_source_output().get_node().get_name()], i.get_source_output().get_index())
                        for i in op.inputs()),
                  tuple((o.get_element_type().to_string(), str(o.get_partial_shape())) for o in op.outputs()),
                  repr(sorted(op.get_attributes().items())), own(op))
                 for op in ops)
