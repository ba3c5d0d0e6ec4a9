"""docs/findings.md's OpenVINO Constant-12 finding, held against the installed OpenVINO in its
own API (no padconf), in a process of its own (python -I): a Constant written with value_ints
before a Pad is refused at opset 12 (where ONNX's Constant-12 has value_ints) and runs at 13.
When OpenVINO fixes it this test fails: drop the upstream.yaml fact and the finding with it."""
import subprocess
import sys

import pytest

REPRO = """
import numpy as np, onnx, openvino as ov
from onnx import TensorProto, helper
for opset in (12, 13):
    nodes = [helper.make_node("Constant", [], ["pads"], value_ints=[1, 1]),
             helper.make_node("Pad", ["x", "pads"], ["y"], mode="constant")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    core = ov.Core()
    try:
        compiled = core.compile_model(core.read_model(model.SerializeToString(), b""), "CPU")
        out = compiled(np.array([1, 2, 3], np.float32))[0]
        print(opset, "runs", out.tolist())
    except Exception as exc:
        print(opset, "refused", "Constant-12" in str(exc))
"""


@pytest.mark.slow
def test_openvino_refuses_constant_12_value_ints_and_runs_it_at_opset_13():
    pytest.importorskip("openvino")
    proc = subprocess.run([sys.executable, "-I", "-c", REPRO], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["12 refused True", "13 runs [0.0, 1.0, 2.0, 3.0, 0.0]"], proc.stdout
