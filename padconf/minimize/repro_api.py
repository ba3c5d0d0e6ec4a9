"""The short repro in a runtime's own API that a bundle carries beside its generic checker
(padconf.minimize.bundle_check): ``repro_<runtime>.py``, the adapter's StandaloneRepro.run
(padconf.adapters: each runtime supplies its own) copied with the helpers below that call it, and
called there on the minimal case, written out as literals (or loaded from the bundle's .npy
files when large). It builds the one-node model (ONNX here, or the runtime's own graph in
``run``), runs it, prints expected and actual and exits 1 while the bug shows, 0 once fixed.

The functions import nothing from padconf (the script runs where only numpy and the runtime are
installed): ``same`` comes from bundle_check, the one standalone copy of padconf's bit equality.
Only adapters with a short public API have one (IREE and TVM need a compile step and a tensor
conversion each: their bundles keep the generic checker only)."""
from __future__ import annotations

import inspect

from padconf.adapters import StandaloneRepro
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


def from_onnx(run, operands, inputs, fed, attributes, opset, ir, configuration, expected):
    """``run`` (the runtime's, set up as ``configuration`` says) on the one-node ONNX model and the
    ``fed`` operands."""
    return check(expected, lambda: run(onnx_model(operands, inputs, fed, attributes, opset, ir),
                                       {name: operands[name] for name in fed}, configuration))


def from_operands(run, operands, fed, mode, opset, configuration, expected):
    """``run`` (the runtime's, set up as ``configuration`` says) building its own Pad's graph from
    ``operands``."""
    return check(expected, lambda: run(operands, fed, mode, opset, configuration))


def script(repro: StandaloneRepro, runtime: str, title: str, arrays: list[str], arguments: list[str]) -> str:
    """The standalone script: ``arrays``, lines assigning the case's arrays (``expected`` among
    them), and ``arguments``, the glue's arguments after ``run`` as source text (from_onnx's, or
    from_operands' where ``repro.own_graph``)."""
    glue, helpers = (from_operands, (same, check)) if repro.own_graph else (from_onnx, (same, check, onnx_model))
    sources = [inspect.getsource(f).rstrip() for f in (*helpers, repro.run, glue)]
    call = f"sys.exit({glue.__name__}(\n    " + ",\n    ".join([repro.run.__name__, *arguments]) + "))"
    preamble = PREAMBLE.format(title=title.replace('"""', "'''"), runtime=runtime).rstrip()
    return "\n\n\n".join([preamble, *sources, "\n".join(arrays) + "\n" + call]) + "\n"
