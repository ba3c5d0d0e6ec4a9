"""What every ONNX model padconf builds shares, apart from building one: its output's name, the
opset a case's spec stands for, the oldest IR that holds it, and the Pad's array operands. A
module of its own so that padconf.cases.context_oracle (a context case's graph) and
padconf.cases.onnx_model (a one-node model, which hands a context case to contexts) both use it."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from padconf.cases.case import Case
from padconf.core.dtypes import numpy_dtype
from padconf.spec.loader import parse_spec_id

OUTPUT_NAME = "output"

# The IR version that introduced each element type newer than IR 7 (onnx.proto's IR_VERSION notes).
_TYPE_IR = {"float8e4m3fn": 9, "float8e4m3fnuz": 9, "float8e5m2": 9, "float8e5m2fnuz": 9,
            "int4": 10, "uint4": 10, "float4e2m1": 11, "float8e8m0": 12, "int2": 13, "uint2": 13}


def opset_version(case: Case) -> int:
    domain, version = parse_spec_id(case.spec)
    if domain != "onnx":
        raise ValueError(f"{case.spec} is not an ONNX spec")
    return version


def ir_version(opset: int, dtype: str) -> int:
    """The oldest IR that can hold this opset and element type. Installed onnx stamps its newest
    IR (14 for onnx 1.23), which onnxruntime 1.31 refuses ("max supported IR version: 13"); the
    oldest sufficient one is accepted by every runtime that knows the opset. Floor 7: IR < 4 would
    make initializers overridable graph inputs."""
    # Not helper.find_min_ir_version_for: it raises for opsets no release shipped (2, 3, 4).
    needed = next((row[1] for row in helper.VERSION_TABLE if row[2] >= opset), onnx.IR_VERSION)
    return max(7, needed, _TYPE_IR.get(dtype, 7))


def pad_arrays(case: Case) -> dict[str, np.ndarray]:
    """Pads / constant_value / axes as the arrays the Pad-11+ inputs take (absent ones left out)."""
    out = {"pads": np.array(case.pads, dtype=numpy_dtype(case.pads_type))}
    if case.constant_value is not None:
        out["constant_value"] = np.asarray(case.constant_value)
    if case.axes is not None:
        out["axes"] = np.array(case.axes, dtype=numpy_dtype(case.axes_type))
    return out
