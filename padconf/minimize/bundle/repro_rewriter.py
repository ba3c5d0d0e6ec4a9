"""The short repro of a graph rewriter's bundle: ``repro_<rewriter>.py`` builds the
case's model with onnx's helper (padconf.minimize.bundle.model_source: the whole graph, node for node),
rewrites it with the rewriter's own call (its StandaloneRepro.run, copied by its source:
``onnxoptimizer.optimize(model, ["fuse_pad_into_pool"])``), runs the model as given and the
rewritten one on the control runtime whose answer the failure is (onnx's reference evaluator, or
onnxruntime with its own graph optimizer off), and exits 1 while the rewritten model's answer is
none the specification allows, 0 once it is. Nothing of padconf is imported there."""
from __future__ import annotations

import inspect

import numpy as np

from padconf.adapters import StandaloneRepro
from padconf.core import escape
from padconf.minimize.bundle.repro_runtime import same_test

_RUNS = {  # the control runtimes a rewriter's failure shows on (Adapter.exhibited_on)
    "onnx-reference": ["from onnx.reference import ReferenceEvaluator", "", "",
                "def run(m):  # the output, or the runtime's refusal as text",
                "    try:",
                "        return ReferenceEvaluator(m).run(None, feeds)[0]"],
    "onnxruntime": ["import onnxruntime as ort", "", "",
                    "def run(m):  # the output, or the runtime's refusal as text",
                    "    options = ort.SessionOptions()",
                    "    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # as given",
                    "    try:",
                    "        session = ort.InferenceSession(m.SerializeToString(), options, "
                    "providers=[\"CPUExecutionProvider\"])",
                    "        return session.run(None, feeds)[0]"]}


def script(repro: StandaloneRepro, runtime: str, title: str, arrays: list[str], build: list[str], feeds: str,
           setup: dict, control: str, expected: list[np.ndarray | None], bitwise: bool,
           tolerance: float | None) -> escape.PySource:
    """The standalone script: ``arrays`` and ``build`` assign the arrays, ``expected`` and
    ``model``; ``feeds``: the feeds as source; ``setup``: what ``repro.run`` takes besides the
    model; ``control``: the runtime both models run on (onnx-reference, or onnxruntime)."""
    files = any("np.load(" in line for line in arrays)
    run = _RUNS[control]
    values = [e for e in expected if e is not None]
    head = [f'"""{escape.docstring(title)}', "",
            f"padconf's repro in {runtime}'s own API (pip install numpy {repro.pip}): the model as given and",
            f"the model {runtime} returns, both run on "
            + (control if control == "onnx-reference" else f"{control} with its graph optimizer off") + ";",
            'exit 1 while the bug shows, 0 once it is fixed. REPORT.md beside it says what padconf found."""',
            *(["import os"] if files else []), "import sys", "", "import numpy as np",
            "from onnx import TensorProto, helper, numpy_helper"]
    body = [*arrays, *build, f"feeds = {feeds}",
            f"rewritten = {repro.run.__name__}(model, {setup!r})",
            "for e in expected:",
            "    print(\"expected:\", \"an error\" if e is None else repr(e))",
            "print(\"the model as given:\", repr(run(model)))",
            "actual = run(rewritten)",
            "print(\"the rewritten model:\", repr(actual))",
            "if isinstance(actual, str):  # refused",
            "    sys.exit(0 if any(e is None for e in expected) else 1)",
            f"sys.exit(0 if any(e is not None and {same_test(values, bitwise, tolerance)} for e in expected) else 1)"]
    parts = ["\n".join([*head, run[0]]),
             *(["HERE = os.path.dirname(os.path.abspath(__file__))  # the bundle's .npy files"] if files else []),
             inspect.getsource(repro.run).rstrip(),
             "\n".join([*run[3:], "    except Exception as exc:",
                        "        return \"an error: \" + \" \".join(str(exc).split())[:1000]"]),
             "\n".join(body)]
    return escape.PySource("\n\n\n".join(parts) + "\n")  # every value in it a repr() of a checked literal
