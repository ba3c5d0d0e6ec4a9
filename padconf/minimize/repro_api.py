"""The short repro in a runtime's own API that a bundle carries beside its generic checker
(padconf.minimize.bundle_check): one function per runtime here, copied with the helpers it calls into
``repro_<runtime>.py`` and called there on the minimal case, written out as literals (or loaded
from the bundle's .npy files when large). It builds the one-node model the runtime's own way,
runs it, prints expected and actual and exits 1 while the bug shows, 0 once fixed.

The functions import nothing from padconf (the script runs where only numpy and the runtime are
installed): ``same`` comes from bundle_check, the one standalone copy of padconf's bit equality.
Only padconf's adapters with a short public API have one (IREE and TVM need a compile step
and a tensor conversion each: their bundles keep the generic checker only)."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from padconf.minimize.bundle_check import same

PREAMBLE = '''"""{title}

padconf's standalone repro in {runtime}'s own API: prints expected and actual, exit 1 while
the bug shows, 0 once it is fixed. (REPORT.md beside it says what padconf found.)
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))  # large arrays are read from the bundle's .npy files
'''


def check(expected, run):
    """``expected``: the outputs the specification allows (None: an error). 1 while the bug shows,
    2 where the runtime is not installed."""
    for want in expected:
        print("expected:", "an error" if want is None else repr(want))
    try:
        actual = run()
    except ImportError as exc:  # not the bug: the runtime is missing
        print(f"cannot run: {exc}")
        return 2
    except Exception as exc:  # the runtime refused the model or its inputs
        print("actual:   an error:", " ".join(str(exc).split())[:1000])
        return 0 if any(want is None for want in expected) else 1
    print("actual:  ", repr(actual))
    return 0 if any(want is not None and same(want, actual) for want in expected) else 1


def onnx_model(operands, inputs, fed, attributes, opset, ir):
    """Pad alone: the ``fed`` operands are graph inputs of symbolic dims, the others initializers."""
    from onnx import helper, numpy_helper
    kind = {name: helper.np_dtype_to_tensor_dtype(arr.dtype) for name, arr in operands.items()}
    graph = helper.make_graph(
        [helper.make_node("Pad", inputs, ["y"], **attributes)], "pad",
        [helper.make_tensor_value_info(name, kind[name], [f"{name}_{i}" for i in range(operands[name].ndim)])
         for name in fed],
        [helper.make_tensor_value_info("y", kind["data"], None)],
        [numpy_helper.from_array(arr, name) for name, arr in operands.items() if name not in fed])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def onnxruntime(operands, inputs, fed, attributes, opset, ir, expected):
    def run():
        import onnxruntime as ort
        model = onnx_model(operands, inputs, fed, attributes, opset, ir).SerializeToString()
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        return session.run(None, {name: operands[name] for name in fed})[0]
    return check(expected, run)


def openvino_onnx(operands, inputs, fed, attributes, opset, ir, properties, expected):
    def run():
        import openvino as ov
        core = ov.Core()
        model = core.read_model(onnx_model(operands, inputs, fed, attributes, opset, ir).SerializeToString(), b"")
        compiled = core.compile_model(model, "CPU", properties)  # {}: OpenVINO's defaults
        return compiled([operands[name] for name in fed])[0]
    return check(expected, run)


def onnx_reference(operands, inputs, fed, attributes, opset, ir, expected):
    def run():
        from onnx.reference import ReferenceEvaluator
        model = onnx_model(operands, inputs, fed, attributes, opset, ir)
        return ReferenceEvaluator(model).run(None, {name: operands[name] for name in fed})[0]
    return check(expected, run)


def tract(operands, inputs, fed, attributes, opset, ir, expected):
    def run():
        import tempfile

        import tract
        with tempfile.NamedTemporaryFile(suffix=".onnx") as f:  # tract loads models from files only
            f.write(onnx_model(operands, inputs, fed, attributes, opset, ir).SerializeToString())
            f.flush()
            runnable = tract.onnx().load(f.name).into_model().into_runnable()
        return runnable.run([operands[name] for name in fed])[0].to_numpy()
    return check(expected, run)


def openvino(operands, fed, mode, opset, properties, expected):
    """OpenVINO's own Pad (opset1 or opset12): data, pads_begin, pads_end[, pad_value]."""
    def run():
        import openvino as ov
        import openvino.opset1
        import openvino.opset12
        ops = openvino.opset1 if opset == 1 else openvino.opset12
        nodes = {name: ops.parameter(ov.PartialShape([-1] * arr.ndim), ov.Type(arr.dtype), name=name) if name in fed
                 else ov.op.Constant(ov.Tensor(arr), shared_memory=False) for name, arr in operands.items()}
        pad = ops.pad(nodes["data"], nodes["pads_begin"], nodes["pads_end"], mode, nodes.get("pad_value"))
        model = ov.Model([pad], [nodes[name] for name in fed])
        core = ov.Core()
        compiled = core.compile_model(model, "CPU", properties)  # {}: OpenVINO's defaults
        return compiled([operands[name] for name in fed])[0]
    return check(expected, run)


# runtime -> (its function, the helpers it calls, in the order the script defines them)
PIP = {"onnxruntime": "onnx onnxruntime", "openvino-onnx": "onnx openvino", "openvino": "openvino",
       "onnx-reference": "onnx", "tract": "onnx tract"}  # what each runner needs besides numpy
Runner = Callable[..., Any]
RUNNERS: dict[str, tuple[Runner, tuple[Runner, ...]]] = {
    "onnxruntime": (onnxruntime, (same, check, onnx_model)),
    "openvino-onnx": (openvino_onnx, (same, check, onnx_model)),
    "onnx-reference": (onnx_reference, (same, check, onnx_model)),
    "tract": (tract, (same, check, onnx_model)),
    "openvino": (openvino, (same, check))}


def script(runtime: str, title: str, arrays: list[str], arguments: list[str]) -> str:
    """The standalone script: ``arrays``, lines assigning the case's arrays (``expected`` among
    them), and ``arguments``, the runner's arguments as source text."""
    function, helpers = RUNNERS[runtime]
    sources = [inspect.getsource(f).rstrip() for f in (*helpers, function)]
    call = f"sys.exit({function.__name__}(\n    " + ",\n    ".join(arguments) + "))"
    preamble = PREAMBLE.format(title=title.replace('"""', "'''"), runtime=runtime).rstrip()
    return "\n\n\n".join([preamble, *sources, "\n".join(arrays) + "\n" + call]) + "\n"
