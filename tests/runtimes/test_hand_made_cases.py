"""Adapters against hand-computed outputs, in both placements, for every runtime installed here.

A runtime that says it has no kernel for a case is skipped, not failed: these tests check the
plumbing (model building, feeding, reading back), not which runtime implements what.
"""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from padconf.adapters import Outcome, Refusal, get_adapter, registry
from padconf.adapters.faults import OwnFault
from padconf.adapters.rewriters import RewriterAdapter
from padconf.cases.case import Case
from padconf.core.dtypes import bit_equal
from padconf.core.vocabulary import PLACEMENTS

_ADAPTERS = {}


@pytest.fixture(params=sorted(registry()))
def adapter(request):
    name = request.param
    if name not in _ADAPTERS:  # one instance per run, so cached sessions are reused across tests
        _ADAPTERS[name] = get_adapter(name)
    why = _ADAPTERS[name].available()
    if why:
        pytest.skip(why)
    if isinstance(_ADAPTERS[name], RewriterAdapter):  # it judges a rewrite, not a Pad it runs
        pytest.skip(f"{name} is a graph rewriter, tested in tests/runtimes/test_rewriters.py")
    return _ADAPTERS[name]


f32 = lambda v: np.array(v, dtype=np.float32)  # noqa: E731
strings = lambda v: np.array(v, dtype=object)  # noqa: E731

# name -> (case, expected output). Pads in ONNX layout: all begins, then all ends.
CASES = {
    "float_constant_value": (
        Case(spec="onnx/Pad-19", data=f32([[1, 2], [3, 4]]), pads=[0, 1, 1, 0],
             constant_value=np.float32(9.5).reshape(())),
        f32([[9.5, 1, 2], [9.5, 3, 4], [9.5, 9.5, 9.5]])),
    "int32_edge": (
        Case(spec="onnx/Pad-13", data=np.array([[1, 2, 3]], np.int32), pads=[1, 1, 0, 2], mode="edge"),
        np.array([[1, 1, 2, 3, 3, 3], [1, 1, 2, 3, 3, 3]], np.int32)),
    # axes without constant_value: the node's third input is the empty name "".
    "axes_pad18": (
        Case(spec="onnx/Pad-18", data=f32([[0, 1, 2], [3, 4, 5]]), pads=[2, 1], axes=[-1]),
        f32([[0, 0, 0, 1, 2, 0], [0, 0, 3, 4, 5, 0]])),
    "string_default_pad13": (
        Case(spec="onnx/Pad-13", data=strings([["a", "b"]]), pads=[0, 1, 0, 1]),
        strings([["", "a", "b", ""]])),
    "bfloat16_reflect": (
        Case(spec="onnx/Pad-25", data=np.array([[1.5, -2, 3]], ml_dtypes.bfloat16), pads=[0, 2, 0, 1],
             mode="reflect"),
        np.array([[3, -2, 1.5, -2, 3, -2]], ml_dtypes.bfloat16)),
    "int4_constant": (  # odd element counts: the packed last byte is half used
        Case(spec="onnx/Pad-21", data=np.array([[-8, 7, 1]], ml_dtypes.int4), pads=[0, 0, 0, 2],
             constant_value=np.array(-1, ml_dtypes.int4)),
        np.array([[-8, 7, 1, -1, -1]], ml_dtypes.int4)),
    # pads_begin [1, -1], pads_end [-1, 2]: one row added on top and the last cropped; the first
    # column cropped and two added on the right.
    "openvino12_negative": (
        Case(spec="openvino/Pad-12", data=f32(np.arange(12).reshape(3, 4)), pads=[1, -1, -1, 2],
             constant_value=np.float32(7).reshape(())),
        f32([[7, 7, 7, 7, 7], [1, 2, 3, 7, 7], [5, 6, 7, 7, 7]])),
}

# Runtime deviations seen with the versions this suite was written against, by adapter, case and
# placement (None: every placement); strict, so a fix shows.
KNOWN = {
    ("onnx-reference", "string_default_pad13", None):
        "onnx.reference pads a string tensor with 0 (np.pad's default), not ''",
    ("openvino-onnx", "int4_constant", "folded"):
        "OpenVINO's constant folding pads int4 with 0, not the constant_value -1 (its kernel uses -1)",
    ("iree", "axes_pad18", "inputs"):
        "IREE ignores an axes input fed at run time: it returns the input unchanged",
    ("tvm", "float_constant_value", "inputs"):
        "TVM's Relax frontend fails on a constant value fed at run time ('Var' object has no attribute 'value')",
    ("tvm", "int4_constant", None):
        "TVM mishandles int4: 'variables (d1, d0) are used, but are not passed in as API arguments' with data "
        "fed at run time, 'TensorCopyFromBytes: size mismatch' with it baked in",
}


@pytest.mark.slow
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_made_case(adapter, name, placement, request):
    case, expected = CASES[name]
    why = adapter.supports(case.spec, case.dtype)
    if why:
        pytest.skip(why)
    if placement not in adapter.placements:
        pytest.skip(f"{adapter.name} has no {placement} placement")
    known = KNOWN.get((adapter.name, name, None)) or KNOWN.get((adapter.name, name, placement))
    if known:
        request.applymarker(pytest.mark.xfail(strict=True, reason=known))
    outcome = adapter.run(case, placement)
    if outcome.not_implemented:
        pytest.skip(f"{adapter.name}: {outcome.error}")
    assert outcome.error is None, outcome.error
    assert outcome.output.dtype == expected.dtype
    assert bit_equal(outcome.output, expected), outcome.output


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_wrong_pads_length_is_an_error_not_an_exception(adapter, placement, request):
    onnx = adapter.name != "openvino"
    case = Case(spec="onnx/Pad-19" if onnx else "openvino/Pad-12",
                data=f32([[1, 2], [3, 4]]), pads=[1, 1, 1, 1, 1, 1])  # rank 2 takes 4
    if placement not in adapter.placements:
        pytest.skip(f"{adapter.name} has no {placement} placement")
    outcome = adapter.run(case, placement)
    assert isinstance(outcome, Outcome)
    if adapter.name == "iree" and placement == "inputs":
        request.applymarker(pytest.mark.xfail(strict=True,
                                              reason="IREE pads with the first 4 of 6 pads fed at run time"))
    assert outcome.output is None and outcome.error and "\n" not in outcome.error


def test_unbuildable_case_is_an_error(adapter):
    # Pad-2's value is a float attribute: a string value cannot be put in the model at all.
    if not {"onnx", "openvino"} & set(adapter.domains):
        pytest.skip(f"{adapter.name} runs {', '.join(adapter.domains)} cases, never an ONNX or OpenVINO model")
    case = Case(spec="onnx/Pad-2", data=strings([["a"]]), pads=[0, 0, 0, 0],
                constant_value=np.array("x", dtype=object))
    if adapter.supports(case.spec, case.dtype):
        case = case.with_(spec="openvino/Pad-12", pads=[0, 0, 0])  # odd: no begin/end split
    outcome = adapter.run(case)
    assert outcome.output is None and outcome.error


@pytest.mark.parametrize("name, module", [("onnxruntime", "onnxruntime"), ("openvino", "openvino"),
                                          ("openvino-onnx", "openvino"),
                                          ("onnx-reference", "onnx.reference")])
def test_missing_runtime_gives_one_line_reason(monkeypatch, name, module):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    adapter = get_adapter(name)
    why = adapter.available()
    assert why and "\n" not in why and module.split(".")[0] in why
    case, _ = CASES["openvino12_negative" if name == "openvino" else "float_constant_value"]
    with pytest.raises(OwnFault, match="an import failed in the worker"):  # for the worker: never a refusal
        adapter.run(case)


def test_onnxruntime_tells_a_missing_kernel_by_the_exception_type():
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, NotImplemented
    ort = get_adapter("onnxruntime")
    text = "Could not find an implementation for Pad(19) node with name ''"  # ORT's words
    assert ort.refusal(NotImplemented(text)) == Refusal(text, not_implemented=True)
    assert ort.refusal(Fail(text)) == Refusal(text, not_implemented=False)  # the type decides, not the words
    # a real one: ORT has no bfloat16 Pad-18 kernel on CPU
    case = Case(spec="onnx/Pad-18", data=np.zeros(2, ml_dtypes.bfloat16), pads=[1, 1])
    outcome = ort.run(case)
    assert outcome.not_implemented and "NOT_IMPLEMENTED" in outcome.error
    # a type ORT's build leaves out is status FAIL: only its words tell it
    assert ort.lacks_kernel(Fail("Exception during loading: MLDataType for: tensor(complex64) is not currently "
                                 "registered or supported"))
    assert not ort.lacks_kernel(ValueError("Axis 0 is referred to more than once"))


@pytest.mark.parametrize("module, says, refuses", [
    ("onnxruntime", "tensor type 14 is not supported", "Axis 0 is referred to more than once."),
    ("openvino_tensors", "Unidentified data type u2", "Check 'pad_mode != op::PadMode::EDGE' failed"),
    ("tract", "Unknown DatumType for the ONNX element type", "Expect padding to be constant"),
    ("iree", "error: failed to legalize operation 'torch.aten.reflection_pad2d'", "error: invalid pads"),
    ("tvm", "Dynamic pads are not supported yet", "Check failed: pads.size() == 2"),
])
def test_each_runtimes_words_for_a_missing_kernel_are_read_in_one_function(module, says, refuses):
    import importlib
    read = importlib.import_module(f"padconf.adapters.{module}")
    read = getattr(read, "says_type_not_built" if module == "onnxruntime" else "says_not_implemented")
    assert read(says) and not read(refuses)


def test_openvinos_string_pad_in_constant_mode_only_is_coverage_not_a_refusal():
    """OpenVINO pads strings in constant mode only (its ONNX frontend: "Only CONSTANT pad mode is
    supported for element::string"): no kernel for edge on strings, not a refusal of the case."""
    from padconf.adapters.openvino_tensors import says_not_implemented
    assert says_not_implemented("Only CONSTANT pad mode is supported for element::string")
    assert not says_not_implemented("Check 'pads_begin.size() == arg_rank' failed")


def test_tract_reads_the_message_chain_not_its_backtrace():
    tract = get_adapter("tract")
    exc = RuntimeError("Expect padding to be constant\n\nStack backtrace:\n 0: tract_core::unimplemented")
    assert tract.refusal(exc) == Refusal("Expect padding to be constant", not_implemented=False)


def test_adapters_share_code_through_the_base_and_openvino_tensors_only():
    """One adapter module never imports another (the ONNX-frontend adapter once took its
    tensor codec from the native OpenVINO adapter)."""
    import ast
    from pathlib import Path
    adapter_modules = {spec.split(":")[0].rsplit(".", 1)[1] for spec in registry().values()}
    folder = Path(__import__("padconf.adapters").adapters.__file__).parent
    for name in adapter_modules:
        tree = ast.parse((folder / f"{name}.py").read_text())
        siblings = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.level == 1 and node.module}
        assert not siblings & adapter_modules, f"{name} imports {siblings & adapter_modules}"


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_the_folded_placement_is_evaluated_while_compiling(mode):
    """Every input constant: onnxruntime's optimizer and OpenVINO's ConstantFolding evaluate
    the Pad, so the model that runs has no Pad left (what `folded` is there to test)."""
    import tempfile

    import onnx
    import onnxruntime as ort
    import openvino as ov

    from padconf.adapters.openvino import native_model
    from padconf.cases.onnx_model import build_model

    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    onnx_case = Case("onnx/Pad-19", data, [0, 1, 0, 1], mode)
    ov_case = Case("openvino/Pad-12", data, [0, 1, 0, 1], mode)

    def ort_ops(placement):
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.optimized_model_filepath = tempfile.mktemp(suffix=".onnx")
        ort.InferenceSession(build_model(onnx_case, placement).SerializeToString(), options,
                             providers=["CPUExecutionProvider"])
        return [n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node]

    def ov_ops(model):
        compiled = ov.Core().compile_model(model, "CPU")
        return [op.get_rt_info()["layerType"].astype(str) for op in compiled.get_runtime_model().get_ordered_ops()]

    core = ov.Core()
    assert "Pad" in ort_ops("initializers") and ort_ops("folded") == []
    read = lambda placement: core.read_model(build_model(onnx_case, placement).SerializeToString(), b"")  # noqa: E731
    assert "Pad" in ov_ops(read("initializers")) and "Pad" not in ov_ops(read("folded"))
    assert ("Pad" in ov_ops(native_model(ov_case, "initializers"))
            and "Pad" not in ov_ops(native_model(ov_case, "folded")))


def test_openvino_graph_key_is_equal_only_for_graphs_that_compile_alike():
    """OpenVINO cases share a compiled model when their converted graphs have one key: the same
    Pad read from two opsets does; a different baked pad, constant, mode, dtype, rank or input
    set must not, or a case would be answered by another case's model."""
    pytest.importorskip("openvino")
    import openvino as ov

    from padconf.adapters.openvino import native_model
    from padconf.adapters.openvino_tensors import graph_key
    from padconf.cases.onnx_model import build_model

    core = ov.Core()
    base = Case("onnx/Pad-13", f32([[1, 2], [3, 4]]), [0, 1, 1, 0], constant_value=np.float32(2).reshape(()))

    def key(case, placement="initializers"):
        if case.spec.startswith("openvino"):
            return graph_key(native_model(case, placement))
        return graph_key(core.read_model(build_model(case, placement).SerializeToString(), b""))

    assert key(base) == key(base.with_(spec="onnx/Pad-19")) == key(base.with_(data=f32([[5, 6], [7, 8]])))
    assert key(base, "inputs") == key(base.with_(pads=[1, 1, 1, 1], spec="onnx/Pad-21"), "inputs")
    others = [base.with_(pads=[0, 1, 1, 1]), base.with_(constant_value=np.float32(-0.0).reshape(())),
              base.with_(mode="edge", constant_value=None), base.with_(data=f32([[1, 2, 3]]).astype(np.float16),
                                                                       constant_value=np.float16(2).reshape(())),
              base.with_(data=f32([1, 2]), pads=[0, 1]), base.with_(constant_value=None),
              base.with_(spec="onnx/Pad-18", axes=[1], pads=[0, 1])]
    keys = [key(base)] + [key(c) for c in others] + [key(base, "inputs"), key(base, "folded")]
    assert len(set(keys)) == len(keys)
    native = Case("openvino/Pad-12", f32([[1, 2]]), [0, 1, 0, 1], constant_value=np.float32(2).reshape(()))
    assert key(native) != key(native.with_(spec="openvino/Pad-1")) != key(native.with_(pads=[0, 1, 0, 2]))
    assert key(native, "folded") != key(native.with_(data=f32([[1, 3]])), "folded")
    strings_case = Case("onnx/Pad-13", strings([["a"]]), [0, 1, 0, 0], constant_value=np.array("x", dtype=object))
    assert key(strings_case) != key(strings_case.with_(constant_value=np.array("y", dtype=object)))


def test_tract_captures_no_backtraces_in_its_processes_whatever_rust_backtrace_says():
    """With RUST_BACKTRACE=1 (many Rust developers' setting) every tract error captured a stack
    backtrace, tens of milliseconds a refusal, for text the adapter drops: a default tract run
    took 131 lane-s instead of 35. The adapter turns backtraces off where it imports tract."""
    pytest.importorskip("tract")
    script = ("from padconf.adapters import get_adapter\n"
              "from padconf.cases.case import Case\n"
              "from padconf.cases.onnx_model import build_model\n"
              "import ml_dtypes, numpy as np\n"
              "from padconf.adapters.tract import _load\n"
              "assert get_adapter('tract').available() is None\n"
              "case = Case(spec='onnx/Pad-19', data=np.zeros((2, 3), ml_dtypes.bfloat16), pads=[0, 1, 0, 1])\n"
              "try:\n"
              "    _load(build_model(case, 'initializers').SerializeToString())\n"
              "except Exception as exc:\n"
              "    print('Unknown DatumType' in str(exc), 'backtrace' in str(exc).lower())\n")
    env = {**os.environ, "RUST_BACKTRACE": "1", "RUST_LIB_BACKTRACE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True", "False"], done.stderr


def test_openvino_imports_what_an_earlier_worker_compiled_and_compiles_what_does_not_import(tmp_path):
    """compile_shared: the second of two workers (two Cores) sharing a scratch folder imports the
    first one's compile instead of compiling; a stored blob OpenVINO cannot import is compiled
    again, never trusted."""
    pytest.importorskip("openvino")
    import openvino as ov

    from padconf.adapters.compile_cache import CompileCache, cache_key
    from padconf.adapters.openvino import native_model
    from padconf.adapters.openvino_tensors import compile_shared, from_tensor, graph_key

    class Counting:  # a Core that counts its compiles
        def __init__(self):
            self.core, self.compiles = ov.Core(), 0

        def compile_model(self, *args):
            self.compiles += 1
            return self.core.compile_model(*args)

        def import_model(self, *args):
            return self.core.import_model(*args)

    case = Case("openvino/Pad-12", f32([[1, 2], [3, 4]]), [0, 1, 1, 0], mode="reflect")
    graph = native_model(case, "folded")
    key = graph_key(graph)

    def output(core):
        request = compile_shared(core, graph, key, tmp_path, {}).create_infer_request()
        request.infer([])
        return from_tensor(request.get_output_tensor(0))

    first, second = Counting(), Counting()
    assert output(first).tolist() == output(second).tolist() == [[2, 1, 2], [4, 3, 4], [2, 1, 2]]
    assert (first.compiles, second.compiles) == (1, 0)
    CompileCache(tmp_path).put(cache_key(repr(key)), b"not a compiled model")
    third = Counting()
    assert output(third).tolist() == [[2, 1, 2], [4, 3, 4], [2, 1, 2]] and third.compiles == 1
