"""The short repro in a runtime's own API that a bug bundle carries beside its generic checker
(padconf.minimize.bundle.repro): ``repro_<runtime>.py``, a flat script a maintainer reads in a
minute. It spells the minimal case's arrays as literals (or loads them from the bundle's .npy
files when large), builds the one-node model with onnx's helper (or, for a runtime with its own
graph API, lets the adapter's function build it), runs it with the adapter's StandaloneRepro.run
(the runtime's own calls, copied by its source: each runtime supplies its own) set up as padconf
ran the runtime, prints what it got and exits 1 while the bug shows, 0 once it is fixed. A bug
that kills the process or hangs runs in a child process, whose death or hang is the exit 1.

Nothing of padconf is imported there: only numpy, onnx where the model is ONNX, and the runtime."""
from __future__ import annotations

import inspect

import numpy as np
from onnx import TensorProto, helper

from padconf.adapters import StandaloneRepro, adapter_class, split_release
from padconf.core import escape
from padconf.minimize.bundle.model_source import attribute_name

CHILD_TIMEOUT_S = 60  # a hang's repro waits this long for its child


def same_test(values: list[np.ndarray], bitwise: bool, tolerance: float | None = None) -> str:
    """The test, as source, that an expected array ``e`` is ``actual``: by value for strings;
    within a context case's tolerance (its consumer a Conv or AveragePool: a sum in some order);
    bit for bit where the bug is about bits or no NaN is expected; else NaN equal to NaN."""
    if tolerance is not None:
        return f"e.dtype == actual.dtype and e.shape == actual.shape and np.allclose(actual, e, rtol=0, " \
               f"atol={tolerance!r}, equal_nan=True)"
    if any(v.dtype == object for v in values):
        return "e.shape == actual.shape and e.tolist() == actual.tolist()"
    if bitwise or not any(v.dtype.kind in "fc" and np.isnan(v).any() for v in values):
        return "e.dtype == actual.dtype and e.shape == actual.shape and e.tobytes() == actual.tobytes()"
    return "e.dtype == actual.dtype and np.array_equal(e, actual, equal_nan=True)"


def _value_info(name: str, arr: np.ndarray, dims: list[str | None] | None) -> str:
    kind = TensorProto.DataType.Name(helper.np_dtype_to_tensor_dtype(arr.dtype))
    return f"helper.make_tensor_value_info({name!r}, TensorProto.{kind}, {dims!r})"


def onnx_model_lines(operands: dict[str, np.ndarray], inputs: list[str], fed: list[str], attributes: dict[str, str],
                     opset: int, ir: int) -> list[str]:
    """Source lines assigning ``model``: Pad alone, the ``fed`` operands graph inputs of symbolic
    dims, the others initializers (each operand a variable of its own name). ``attributes``: name
    -> value as source; an empty list is typed explicitly (make_node cannot infer its type)."""
    graph_inputs = ", ".join(_value_info(n, operands[n], [f"{n}_{i}" for i in range(operands[n].ndim)])
                             for n in fed)
    baked = ", ".join(f"numpy_helper.from_array({n}, {n!r})" for n in operands if n not in fed)
    given = ", ".join(f"{attribute_name('Pad', k, opset)}={v}" for k, v in attributes.items() if v != "[]")
    empty = [f"node.attribute.append(helper.make_attribute({attribute_name('Pad', k, opset)!r}, [], "
             "attr_type=AttributeProto.INTS))" for k, v in attributes.items() if v == "[]"]
    return [f'node = helper.make_node("Pad", {inputs!r}, ["y"], {given})', *empty,
            "model = helper.make_model(helper.make_graph(",
            f"    [node], \"pad\", [{graph_inputs}],",
            # the output of the data's rank, as model.onnx declares it: an unranked output changes
            # what a compiler builds (IREE's tensor.cast to a rank-0 tensor, its unmappable buffer)
            f"    [{_value_info('y', operands['data'], [None] * operands['data'].ndim)}],",
            f"    [{baked}]),",
            f'    opset_imports=[helper.make_opsetid("", {opset})], ir_version={ir})']


def script(repro: StandaloneRepro, runtime: str, title: str, arrays: list[str], build: list[str], call: str,
           expected: list[np.ndarray | None], bitwise: bool,
           tolerance: float | None = None) -> escape.PySource:
    """The standalone script. ``arrays``: lines assigning the operands and ``expected`` (the
    outputs the specification allows, None an error); ``build``: lines making ``model`` (none
    where the adapter builds its own graph); ``call``: the expression running it; ``tolerance``:
    a context case's (padconf.cases.context.Context.tolerance). The call runs in a child, whatever
    the verdict: a wrong value may be memory corruption that kills the process (audit E), and a
    crash is the bug showing, exit 1, never the shell's 139."""
    files = any("np.load(" in line for line in arrays)
    release, package = split_release(runtime)[1], adapter_class(runtime).package
    pip = " ".join(f"{w}=={release}" if release and w == package else w for w in repro.pip.split())
    head = [f'"""{escape.docstring(title)}', "",
            f"padconf's repro in {runtime}'s own API (pip install numpy {pip}): exit 1 while the bug shows,",
            '0 once it is fixed. REPORT.md beside it says what padconf found."""',
            "import os", "import sys", "", "import numpy as np",
            *([f"from onnx import {'AttributeProto, ' if any('AttributeProto' in b for b in build) else ''}"
                "TensorProto, helper, numpy_helper"] if build else [])]
    child = ["if sys.argv[1:] != [\"--child\"]:  # the call may kill or hang its process: run it in a child",
             "    import signal",
             "    import subprocess",
             "    child = subprocess.Popen([sys.executable, __file__, \"--child\"], start_new_session=True)",
             "    try:",
             f"        code = child.wait(timeout={CHILD_TIMEOUT_S})",
             "    except subprocess.TimeoutExpired:  # a hang: exit 1",
             f"        print(\"actual:   no answer within {CHILD_TIMEOUT_S} s (a hang)\", flush=True)",
             "        code = 1",
             "    finally:  # the child's own processes too (a compiler it started outlives it otherwise)",
             "        try:",
             "            os.killpg(child.pid, signal.SIGKILL)",
             "        except ProcessLookupError:",
             "            pass",
             "    if code < 0:  # a crash: exit 1",
             "        print(\"actual:   the process crashed,\", signal.Signals(-code).name, flush=True)",
             "    sys.exit(0 if code == 0 else 1)"]
    values = [e for e in expected if e is not None]
    body = [*arrays, *build,
            "for e in expected:",
            "    print(\"expected:\", \"an error\" if e is None else repr(e))",
            "try:",
            f"    actual = np.asarray({call})",
            "except Exception as exc:  # the runtime refused",
            "    print(\"actual:   an error:\", \" \".join(str(exc).split())[:1000], flush=True)",
            "    os._exit(0 if any(e is None for e in expected) else 1)",
            "print(\"actual:  \", repr(actual), flush=True)",
            "# os._exit, no teardown: a runtime whose memory the bug corrupted may crash there, hiding the verdict",
            f"os._exit(0 if any(e is not None and {same_test(values, bitwise, tolerance)} for e in expected) else 1)"]
    parts = ["\n".join(head), *([("HERE = os.path.dirname(os.path.abspath(__file__))  # the bundle's .npy files")]
                                if files else []),
             "\n".join(child),
             inspect.getsource(repro.run).rstrip(), "\n".join(body)]
    return escape.PySource("\n\n\n".join(parts) + "\n")  # every value in it a repr() of a checked literal
