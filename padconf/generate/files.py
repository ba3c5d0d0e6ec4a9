"""The bytes of a test-data file: a tensor as onnx's TensorProto, a JSON document, an output's
file name for an interpretation. The suite's writer and the exported graphs' share them."""
from __future__ import annotations

import json
import re

import numpy as np
from onnx import numpy_helper


def json_bytes(doc) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def tensor_bytes(arr: np.ndarray, name: str) -> bytes:
    return numpy_helper.from_array(np.asarray(arr), name).SerializeToString()


def interpretation_file(key: str) -> str:
    """An interpretation's key (``mixed_sign_pads=crop_first``) as a file name's part."""
    return re.sub(r"[^A-Za-z0-9_=,.+-]", "_", key)
