"""Element types, named as the spec files spell them (ONNX's names: ``float``, ``bfloat16``,
``string`` ...), with their numpy dtype, ONNX TensorProto code and a lossless JSON form.

Every dtype is a real numpy dtype (ml_dtypes supplies bfloat16, the float8/float4 kinds and
the sub-byte integers, one element per byte); strings are numpy object arrays of ``str``.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import sys
import zlib

import ml_dtypes
import numpy as np
from onnx import TensorProto

from padconf.core.errors import CaseError
from padconf.core.untrusted import json_value

# spec name -> (numpy dtype, ONNX TensorProto element type)
_TABLE: dict[str, tuple[np.dtype, int]] = {
    "float": (np.dtype(np.float32), TensorProto.FLOAT),
    "double": (np.dtype(np.float64), TensorProto.DOUBLE),
    "float16": (np.dtype(np.float16), TensorProto.FLOAT16),
    "bfloat16": (np.dtype(ml_dtypes.bfloat16), TensorProto.BFLOAT16),
    "float8e4m3fn": (np.dtype(ml_dtypes.float8_e4m3fn), TensorProto.FLOAT8E4M3FN),
    "float8e4m3fnuz": (np.dtype(ml_dtypes.float8_e4m3fnuz), TensorProto.FLOAT8E4M3FNUZ),
    "float8e5m2": (np.dtype(ml_dtypes.float8_e5m2), TensorProto.FLOAT8E5M2),
    "float8e5m2fnuz": (np.dtype(ml_dtypes.float8_e5m2fnuz), TensorProto.FLOAT8E5M2FNUZ),
    "float8e8m0": (np.dtype(ml_dtypes.float8_e8m0fnu), TensorProto.FLOAT8E8M0),
    "float4e2m1": (np.dtype(ml_dtypes.float4_e2m1fn), TensorProto.FLOAT4E2M1),
    "complex64": (np.dtype(np.complex64), TensorProto.COMPLEX64),
    "complex128": (np.dtype(np.complex128), TensorProto.COMPLEX128),
    "int8": (np.dtype(np.int8), TensorProto.INT8),
    "int16": (np.dtype(np.int16), TensorProto.INT16),
    "int32": (np.dtype(np.int32), TensorProto.INT32),
    "int64": (np.dtype(np.int64), TensorProto.INT64),
    "uint8": (np.dtype(np.uint8), TensorProto.UINT8),
    "uint16": (np.dtype(np.uint16), TensorProto.UINT16),
    "uint32": (np.dtype(np.uint32), TensorProto.UINT32),
    "uint64": (np.dtype(np.uint64), TensorProto.UINT64),
    "int4": (np.dtype(ml_dtypes.int4), TensorProto.INT4),
    "uint4": (np.dtype(ml_dtypes.uint4), TensorProto.UINT4),
    "int2": (np.dtype(ml_dtypes.int2), TensorProto.INT2),
    "uint2": (np.dtype(ml_dtypes.uint2), TensorProto.UINT2),
    "bool": (np.dtype(np.bool_), TensorProto.BOOL),
    "string": (np.dtype(object), TensorProto.STRING),
}

ALL_DTYPES: tuple[str, ...] = tuple(_TABLE)
# The sub-byte dtypes (packed two or four to a byte in ONNX and OpenVINO tensors), each with a
# byte-wide dtype that holds every value it has.
SUB_BYTE_WIDER = {"int2": "int8", "uint2": "uint8", "int4": "int8", "uint4": "uint8", "float4e2m1": "float"}
SUB_BYTE_BITS = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4e2m1": 4}  # each element's width
# The float-like kinds whose values travel as raw bit patterns, so NaN payloads and -0.0 survive.
_BITS_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def numpy_dtype(name: str) -> np.dtype:
    try:
        return _TABLE[name][0]
    except KeyError:
        raise CaseError(f"unknown dtype {name!r}; known: {', '.join(ALL_DTYPES)}") from None


def onnx_type(name: str) -> int:
    numpy_dtype(name)
    return _TABLE[name][1]


_NAMES: dict[np.dtype, str] = {}  # numpy dtype -> spec name, as dtype_name found it: asked once a case and more


def dtype_name(dtype: np.dtype) -> str:
    """The spec name of a numpy dtype (object arrays are strings)."""
    dtype = np.dtype(dtype)
    found = _NAMES.get(dtype)
    if found is not None:
        return found
    for name, (np_dtype, _) in _TABLE.items():
        if np_dtype == dtype:
            _NAMES[dtype] = name
            return name
    raise CaseError(f"numpy dtype {dtype} has no spec name")


def is_float_like(name: str) -> bool:
    return name not in ("bool", "string") and not is_integer(name)


def is_integer(name: str) -> bool:
    return name.startswith(("int", "uint"))


def default_constant(name: str):
    """What ONNX Pad (13+) pads with when constant_value is omitted: 0, empty string or False."""
    if name == "string":
        return ""
    if name == "bool":
        return False
    if name == "float8e8m0":  # no zero: onnx's own conversion (numpy_helper.to_float8e8m0, Cast's default
        return np.array(0, np.uint8).view(numpy_dtype(name))[()]  # round_mode "up") gives 2**-127, bits 0x00
    return numpy_dtype(name).type(0)


def as_array(values, name: str) -> np.ndarray:
    """``values`` (nested lists or an array) as an array of dtype ``name``."""
    if name == "string":
        arr = np.array(values, dtype=object)
        return arr
    with np.errstate(invalid="ignore", over="ignore"):  # unrepresentable values become NaN / inf
        return np.asarray(values).astype(numpy_dtype(name))


def scalar(value, name: str):
    """``value`` as a 0-d array of dtype ``name``."""
    return as_array(value, name).reshape(())


COMPRESS_ABOVE = 1024  # bytes: smaller payloads are not worth zlib's header


def encode_array(arr: np.ndarray, name: str) -> dict:
    """Lossless, compact JSON form: ``{"dtype", "shape", "b64"}`` holding the raw little-endian
    bytes (NaN payloads, -0.0 and every ml_dtypes kind survive), ``"z64"`` instead when zlib
    shrinks a larger payload; strings as ``"values"``, or as ``"z64"`` of that list's JSON
    text when it is large (a padded array repeats its strings: megabytes shrink a hundredfold).
    Only the payload is opaque: dtype and shape stay readable for jq."""
    arr = np.asarray(arr)
    out = {"dtype": name, "shape": list(arr.shape)}
    if name == "string":
        values = [str(s) for s in arr.reshape(-1).tolist()]
        raw = json.dumps(values).encode("utf-8")
    else:
        raw = np.ascontiguousarray(arr, dtype=numpy_dtype(name).newbyteorder("<")).tobytes()
    packed = zlib.compress(raw, 6) if len(raw) > COMPRESS_ABOVE else None
    if packed is not None and len(packed) < len(raw) * 0.9:
        out["z64"] = base64.b64encode(packed).decode("ascii")
    elif name == "string":
        out["values"] = values
    else:
        out["b64"] = base64.b64encode(raw).decode("ascii")
    return out


def array_digest(arr: np.ndarray) -> str | None:
    """SHA-256 of an array as encode_array writes it (its dtype's name, its shape, its raw
    little-endian bytes or its strings' JSON), so that equal digests are bit-equal arrays; None
    for a dtype padconf has no name for."""
    arr = np.asarray(arr)
    try:
        name = dtype_name(arr.dtype)
    except CaseError:
        return None
    digest = hashlib.sha256(f"{name}|{list(arr.shape)}|".encode())
    if name == "string":
        digest.update(json.dumps([str(s) for s in arr.reshape(-1).tolist()]).encode("utf-8"))
    else:
        digest.update(np.ascontiguousarray(arr, dtype=numpy_dtype(name).newbyteorder("<")).tobytes())
    return digest.hexdigest()


MAX_ARRAY_BYTES = 1 << 26  # 64 MiB: padconf draws outputs of at most 100,000 elements (1.6 MB)
# What a string element costs decoded, besides its text: a pointer in the JSON list, one in the
# array, and a small str object where the strings differ.
STRING_ELEMENT_BYTES = 64


class OverBudget(CaseError):
    """Arrays past an ArrayBudget's limit; ``budget`` is the one they went past."""

    def __init__(self, message: str, budget: ArrayBudget):
        super().__init__(message)
        self.budget = budget


class ArrayBudget:
    """The bytes that the arrays decoded from one source (a case, a file of cases) may take in
    all, counted before each is decoded; ``parent``, when given, is a larger budget they count
    against too (a case's arrays against its file's)."""

    def __init__(self, limit: int, what: str, parent: ArrayBudget | None = None):
        self.limit, self.left, self.what, self.parent = limit, limit, what, parent

    def available(self) -> int:
        return min(self.left, self.parent.available()) if self.parent is not None else self.left

    def take(self, nbytes: int) -> None:
        budget: ArrayBudget | None = self
        while budget is not None:
            if nbytes > budget.left:
                raise OverBudget(f"{budget.what} hold more than {budget.limit} bytes decoded", budget)
            budget = budget.parent
        budget = self
        while budget is not None:
            budget.left -= nbytes
            budget = budget.parent


def _declared(obj: dict, budget: ArrayBudget | None) -> tuple[str, tuple, np.dtype, int]:
    """(name, shape, numpy dtype, bytes decoded) of an encoded array's header, its shape checked
    against MAX_ARRAY_BYTES and its size taken from ``budget`` before anything is decoded."""
    name, shape = obj["dtype"], tuple(obj["shape"])
    dtype = numpy_dtype(name)
    # set(map(type)) and min, not a generator: two arrays a case are read in a worker, one in padconf
    if len(shape) > 32 or not set(map(type, shape)) <= {int} or min(shape, default=0) < 0:
        raise CaseError(f"malformed array: shape {list(shape)[:33]} is not a list of sizes >= 0")
    size = math.prod(shape) * (dtype.itemsize if name != "string" else STRING_ELEMENT_BYTES)
    if size > MAX_ARRAY_BYTES:
        raise CaseError(f"array of {name} shape {list(shape)} ({size} bytes) is larger than {MAX_ARRAY_BYTES}")
    if budget is not None:
        budget.take(size)
    return name, shape, dtype, size


def raw_array(arr: np.ndarray, name: str) -> tuple[dict, bytes]:
    """``arr`` for a pipe between padconf's own processes: ``({"dtype", "shape", "raw": n}, its
    n raw little-endian bytes)``, no base64 and no JSON of the values (from_raw reads it back);
    strings, which have no raw bytes, as encode_array's form and no bytes."""
    arr = np.asarray(arr)
    if name == "string":
        return encode_array(arr, name), b""
    raw = np.ascontiguousarray(arr, dtype=numpy_dtype(name).newbyteorder("<")).tobytes()
    return {"dtype": name, "shape": list(arr.shape), "raw": len(raw)}, raw


# Headers from_raw has checked (_declared), by element type and shape: the arrays of a batch share a
# few, and their checks were a third of reading a case in a worker (docs/performance.md). from_raw
# reads only what raw_array wrote in another padconf process (sizes that are ints; a file's JSON,
# where true or 1.0 could stand for a size, goes through decode_array, which checks every header).
_RAW_HEADERS: dict[tuple, tuple[tuple, np.dtype, np.dtype, int]] = {}
_RAW_HEADERS_KEPT = 4096


def from_raw(obj: dict, take, budget: ArrayBudget | None = None) -> np.ndarray:
    """The array raw_array described by ``obj``, its bytes from ``take(n)`` (the next n bytes of
    the message), checked as decode_array checks a header (its bytes must be the shape's); the
    encode_array form where there are no raw bytes (strings)."""
    if "raw" not in obj:
        return decode_array(obj, budget)
    try:
        key = (obj["dtype"], *obj["shape"])
        known = _RAW_HEADERS.get(key)
        if known is None:
            name, shape, dtype, size = _declared(obj, None)
            known = shape, dtype, dtype.newbyteorder("<"), size
            if len(_RAW_HEADERS) < _RAW_HEADERS_KEPT:
                _RAW_HEADERS[key] = known
        shape, dtype, little, size = known
        if budget is not None:
            budget.take(size)
        if obj["raw"] != size:
            raise CaseError(f"malformed array: {obj['raw']!r} raw bytes for {size} bytes of {key[0]} {list(shape)}")
        raw = take(size)
        if len(raw) != size:
            raise CaseError(f"malformed array: {len(raw)} raw bytes for {size} bytes of {key[0]} {list(shape)}")
        # a copy of its own, as decode_array's: aligned and writable wherever in the message its bytes
        # lay (a runtime may share the array's memory: OpenVINO's tensors), of numpy's own dtype object
        return np.frombuffer(raw, dtype=little).astype(dtype).reshape(shape)
    except CaseError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise CaseError(f"malformed array {str(obj)[:80]}: {exc}") from None


def decode_array(obj: dict, budget: ArrayBudget | None = None) -> np.ndarray:
    """The array ``encode_array`` wrote. The JSON may come from a file padconf did not write:
    the declared shape is checked against MAX_ARRAY_BYTES, and taken from ``budget``, before
    anything is decoded, and a zlib payload is inflated to that size and no further."""
    try:
        name, shape, dtype, size = _declared(obj, budget)
        if name == "string":  # each distinct string once in memory: padded arrays repeat theirs
            # the JSON text of a string list has no size the shape declares: it is bounded as a whole
            if "values" in obj:
                values = obj["values"]
            else:
                most = MAX_ARRAY_BYTES if budget is None else min(MAX_ARRAY_BYTES, budget.available())
                text = _unpacked(obj, most, exact=False)
                if budget is not None:
                    budget.take(len(text))
                values = json_value(text.decode("utf-8"), "packed string values")
            if not isinstance(values, list):
                raise TypeError(f"string values must be a list, got {type(values).__name__}")
            flat = np.empty(len(values), dtype=object)
            flat[:] = [sys.intern(str(s)) for s in values]
        else:
            flat = np.frombuffer(_unpacked(obj, size), dtype=dtype.newbyteorder("<")).astype(dtype)
        return flat.reshape(shape)
    except CaseError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError, binascii.Error, zlib.error) as exc:
        raise CaseError(f"malformed array {str(obj)[:80]}: {exc}") from None


def _unpacked(obj: dict, size: int, exact: bool = True) -> bytes:
    """The payload bytes of an encoded array: ``b64``, or ``z64`` inflated to ``size`` bytes and
    no further (a zlib bomb stops there); ``exact``: the payload must be that size."""
    raw = base64.b64decode(obj["b64"] if "b64" in obj else obj["z64"], validate=True)
    if "z64" not in obj:
        return raw
    inflate = zlib.decompressobj()
    raw = inflate.decompress(raw, max(size, 1))  # max_length 0 would mean no limit
    if inflate.unconsumed_tail or not inflate.eof or (exact and len(raw) != size):
        raise CaseError(f"malformed array: its z64 payload is not {'' if exact else 'at most '}{size} bytes of "
                        f"{obj.get('dtype')} {obj.get('shape')}")
    return raw


def npy_bytes(arr: np.ndarray) -> bytes:
    """``arr`` in numpy's own file format (.npy, loadable without pickle): strings as unicode,
    ml_dtypes' kinds (bfloat16, float8, int4 ...), which numpy cannot load, as their bits."""
    arr = np.asarray(arr)
    if arr.dtype == object:
        arr = arr.astype(str)
    elif arr.dtype.isbuiltin == 2:
        arr = arr.view({1: np.uint8, 2: np.uint16}[arr.dtype.itemsize])
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def bit_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and elements, floats compared bit for bit except that any NaN equals
    any NaN (payload and sign of NaN are not a conformance question; -0.0 vs 0.0 is)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.all(equal_elements(a, b)))


def equal_elements(a: np.ndarray, b: np.ndarray, compare: str = "bits") -> np.ndarray:
    """``bit_equal`` element by element, for two arrays of one dtype and shape: a flat bool array.
    ``compare``: "bits" (any NaN equals any NaN, -0.0 differs from 0.0), "exact" (NaN payloads
    too) or "numbers" (any NaN equals any NaN, and -0.0 equals 0.0)."""
    if a.dtype == object:
        return np.array([x == y for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())], dtype=bool)
    name = dtype_name(a.dtype)
    if not is_float_like(name):
        return a.reshape(-1) == b.reshape(-1)
    fa, fb = a.reshape(-1), b.reshape(-1)
    if fa.dtype.kind == "c":  # real and imaginary parts side by side: an element is equal when both are
        parts = np.dtype(np.float32 if fa.dtype == np.complex64 else np.float64)
        fa, fb = fa.view(parts), fb.view(parts)
    itemsize = fa.dtype.itemsize
    same = fa.view(_BITS_VIEW[itemsize]) == fb.view(_BITS_VIEW[itemsize])
    if compare != "exact":
        with np.errstate(invalid="ignore"):  # casting a signalling NaN (bfloat16 0x7f81) warns
            wide_a, wide_b = fa.astype(np.float64), fb.astype(np.float64)
            same |= np.isnan(wide_a) & np.isnan(wide_b)
            if compare == "numbers":
                same |= wide_a == wide_b
    return same.reshape(-1, 2).all(axis=1) if a.dtype.kind == "c" else same
