"""OpenVINO tensors: the element-type table and the numpy <-> ov.Tensor conversions, compile
settings and error classification that the native and the ONNX-frontend adapters share."""
from __future__ import annotations

import re

import numpy as np

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
NOT_IMPLEMENTED = re.compile(
    r"not supported|unsupported|doesn't support|does not support|not implemented"
    r"|no implementation|Unidentified data type|Unknown type|could not be created|Cannot create", re.I)


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
