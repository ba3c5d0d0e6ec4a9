"""OpenVINO's own Pad (opset1 / opset12) built with the Python graph API, run on CPU.

Also holds the tensor conversions the OpenVINO ONNX-frontend adapter shares.
"""
from __future__ import annotations

import re

import numpy as np

from . import Adapter, Outcome, error_text, spec_domain_version
from ..cases import Case
from ..dtypes import numpy_dtype

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
_FROM_OV = {v: k for k, v in OV_TYPES.items()}
# Compile so the CPU plugin keeps the model's precision (it may otherwise run f32 as bf16).
COMPILE_CONFIG = {"EXECUTION_MODE_HINT": "ACCURACY", "INFERENCE_NUM_THREADS": 1}
_NOT_IMPLEMENTED = re.compile(
    r"not supported|unsupported|doesn't support|does not support|not implemented"
    r"|no implementation|Unidentified data type|Unknown type|could not be created|Cannot create", re.I)


def failure(text: str) -> Outcome:
    return Outcome(error=text, not_implemented=bool(_NOT_IMPLEMENTED.search(text)))


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
    bits = ov_type(dtype).bitwidth
    raw = arr.reshape(-1).view(np.uint8)
    if bits < 8:
        per = 8 // bits
        raw = np.pad(raw & ((1 << bits) - 1), (0, -raw.size % per)).reshape(-1, per)
        raw = np.bitwise_or.reduce(raw << (np.arange(per, dtype=np.uint8) * bits), axis=1).astype(np.uint8)
    # This constructor shares the buffer; the Tensor holds a reference to it.
    return ov.Tensor(raw.copy(), ov.Shape(list(arr.shape)), ov_type(dtype))


def from_tensor(tensor) -> np.ndarray:
    """``tensor`` as a numpy array of the padconf dtype matching its OpenVINO element type.
    tensor.data is not the values for every type (bf16 comes back as a float16 view, the
    float8 and packed kinds as raw bytes), so decode the bytes."""
    name = _FROM_OV.get(tensor.element_type.to_string())
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


def split_pads(case: Case) -> dict[str, np.ndarray]:
    """ONNX-layout pads -> the inputs OpenVINO's Pad takes, in feed order."""
    if len(case.pads) % 2:
        raise ValueError(f"{len(case.pads)} pads do not split into pads_begin and pads_end")
    pads = np.array(case.pads, dtype=numpy_dtype(case.pads_type))
    out = {"pads_begin": pads[:len(pads) // 2], "pads_end": pads[len(pads) // 2:]}
    if case.constant_value is not None:
        out["pad_value"] = np.asarray(case.constant_value)
    return out


def native_model(case: Case, placement: str = "inputs", default_pad_value: bool = False):
    """OpenVINO's own Pad (opset1 or opset12, from the case's spec) as an ov.Model: data, then
    pads_begin / pads_end / pad_value as Parameters ("inputs") or Constants ("initializers").
    Every node gets a fixed friendly name, so a saved IR does not depend on OpenVINO's global
    node counters. ``default_pad_value``: spell an omitted pad_value as the zero Constant
    "pad_value_default" (the serializer would otherwise add an anonymous one)."""
    import openvino as ov
    import openvino.opset1 as opset1
    import openvino.opset12 as opset12
    ops = opset1 if spec_domain_version(case.spec)[1] == 1 else opset12
    # Static rank, dynamic dims: one compiled model serves every shape of that rank.
    data = ops.parameter(ov.PartialShape([-1] * case.data.ndim), ov_type(case.dtype), name="data")
    params, args = [data], []
    for name, arr in split_pads(case).items():
        dtype = case.dtype if name == "pad_value" else case.pads_type
        if placement == "initializers":
            # Copy: a Constant sharing the Tensor's memory does not keep that memory alive.
            args.append(ov.op.Constant(to_tensor(arr, dtype), shared_memory=False))
            args[-1].set_friendly_name(name)
        else:
            shape = [-1] * arr.ndim  # any pads length reuses the model
            params.append(ops.parameter(ov.PartialShape(shape), ov_type(dtype), name=name))
            args.append(params[-1])
    if default_pad_value and case.constant_value is None:
        zero = np.zeros((), dtype=numpy_dtype(case.dtype))
        args.append(ov.op.Constant(to_tensor(zero, case.dtype), shared_memory=False))
        args[-1].set_friendly_name("pad_value_default")
    node = ops.pad(data, args[0], args[1], case.mode, *args[2:])
    node.set_friendly_name("pad")
    node.output(0).get_tensor().set_names({"output"})
    model = ov.Model([node], params, "pad")
    model.get_results()[0].set_friendly_name("output")
    return model


class OpenVinoAdapter(Adapter):
    name = module = "openvino"
    cache_size = OV_CACHE_SIZE

    def __init__(self):
        super().__init__()
        self._core = None

    def supports(self, spec_id: str, dtype: str) -> str | None:
        domain, version = spec_domain_version(spec_id)
        if domain != "openvino" or version not in (1, 12):
            return f"{self.name} builds openvino/Pad-1 and openvino/Pad-12 only, not {spec_id}"
        if dtype not in OV_TYPES:
            return f"OpenVINO has no element type for {dtype}"
        return None

    _split = staticmethod(split_pads)

    def _signature(self, case: Case, placement: str) -> tuple:
        key = (case.spec, case.mode, case.dtype, case.data.ndim, placement, case.pads_type,
               None if case.constant_value is None else np.ndim(case.constant_value))
        if placement == "initializers":  # the values are baked in
            key += tuple((k, v.shape, v.tobytes() if v.dtype != object else tuple(v.ravel().tolist()))
                         for k, v in self._split(case).items())
        return key

    def _build(self, case: Case, placement: str):
        import openvino as ov
        if self._core is None:
            self._core = ov.Core()
        compiled = self._core.compile_model(native_model(case, placement), "CPU", COMPILE_CONFIG)
        return compiled, compiled.create_infer_request()

    def run(self, case: Case, placement: str = "inputs") -> Outcome:
        if case.axes is not None:  # checked per case: a cached build error must not stand for it
            return Outcome(error="OpenVINO Pad has no axes input")
        try:
            model = self.cached(self._signature(case, placement), lambda: self._build(case, placement))
            if isinstance(model, str):
                return failure(model)
            _, request = model
            inputs = {"data": case.data}
            if placement == "inputs":
                inputs.update(self._split(case))
            # Positional, in Parameter order (data, pads_begin, pads_end, pad_value).
            request.infer([to_tensor(v, case.dtype if k in ("data", "pad_value") else case.pads_type)
                           for k, v in inputs.items()])
            return Outcome(output=from_tensor(request.get_output_tensor(0)))
        except Exception as exc:
            return failure(error_text(exc))
