"""The ahead-of-time compilers' bundles carry a repro in the compiler's own API (IREE:
iree.compiler + iree.runtime; TVM: its Relax ONNX frontend + tvm.compile) and a generic checker
that runs them too: each script, run here against the installed compiler, exits 1 while the
runtime's answer differs from what the specification says and 0 where it agrees."""
import subprocess
import sys

import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.context import Consumer, Context
from padconf.judging.records import judged_row
from padconf.minimize.bundle.writer import write_bundle
from padconf.minimize.shrink.loop import Attempt, Shrunk
from padconf.minimize.targets import Job

pytestmark = pytest.mark.slow  # each script compiles its model: a second or more


def _bundle(where, case, runtime, placement, outcome=None):
    """A bundle of ``case`` as ``runtime`` answered it (``outcome``; its expected output by default)."""
    outcome = outcome or Outcome(case.expected)
    attempt = Attempt(case, judged_row(runtime, placement, case, outcome, "ok"), outcome)
    write_bundle(where, Shrunk(attempt, attempt, 1, 0.0, False), placement, runtime, None, Job(case))
    return where


def _run(where, script, *args):
    proc = subprocess.run([sys.executable, str(where / script), *args], capture_output=True, text=True, timeout=300,
                          cwd=where)
    return proc.returncode, proc.stdout + proc.stderr


def _own(runtime):
    return f"repro_{runtime}.py"


UINT8 = Case(spec="onnx/Pad-18", data=np.arange(4, dtype=np.uint8).reshape(2, 2), pads=[1, 0, 0, 1], mode="constant")
INT32 = Case(spec="onnx/Pad-18", data=np.arange(4, dtype=np.int32).reshape(2, 2), pads=[1, 0, 0, 1], mode="constant")


@pytest.mark.parametrize("placement", ["initializers", "inputs"])
def test_ireees_repro_in_its_own_api_exits_1_on_its_signed_output_for_unsigned_data(tmp_path, placement):
    """IREE's ONNX import gives a signed tensor for uint8 data (the same through Concat or Add:
    torch-mlir's signless integers): its own-API repro and the generic checker exit 1 on it, and
    0 on int32, whose answer is right."""
    pytest.importorskip("iree.runtime")
    wrong = _bundle(tmp_path / "u8", classify(UINT8), "iree", placement,
                    Outcome(classify(UINT8).expected.astype(np.int8)))
    script = (wrong / _own("iree")).read_text()
    assert "import padconf" not in script and "from padconf" not in script and "iree.compiler.compile_str(" in script
    assert "iree.runtime.load_vm_flatbuffer(" in script and 15 <= script.count("\n") <= 90
    code, printed = _run(wrong, _own("iree"))
    assert code == 1 and "dtype=int8" in printed, printed
    head, appendix = (wrong / "REPORT.md").read_text().split("\n## Appendix\n")
    assert len(head.splitlines()) <= 80 and "python repro_iree.py" in head and "def standalone_run" in appendix
    code, printed = _run(wrong, "repro.py")
    assert code == 1 and "BUG: the output differs" in printed, printed
    right = _bundle(tmp_path / "i32", classify(INT32), "iree", placement)
    assert _run(right, _own("iree"))[0] == 0
    assert _run(right, "repro.py")[0] == 0


def test_tvms_repro_in_its_own_api_exits_0_where_it_is_right_and_1_on_fed_pads_it_refuses(tmp_path):
    """TVM's Relax frontend pads uint8 right with constant pads (exit 0) and refuses pads fed at run
    time ("Dynamic pads are not supported yet"), an input the specification defines (exit 1)."""
    pytest.importorskip("tvm")
    right = _bundle(tmp_path / "right", classify(UINT8), "tvm", "initializers")
    script = (right / _own("tvm")).read_text()
    assert "import padconf" not in script and "from padconf" not in script and "tvm.compile(from_onnx(" in script
    assert _run(right, _own("tvm"))[0] == 0
    assert _run(right, "repro.py")[0] == 0
    fed = _bundle(tmp_path / "fed", classify(UINT8), "tvm", "inputs", Outcome(error="Dynamic pads are not supported"))
    code, printed = _run(fed, _own("tvm"))
    assert code == 1 and "actual:   an error" in printed and "Dynamic pads" in printed, printed
    code, printed = _run(fed, "repro.py")
    assert code == 1 and "BUG: the runtime rejects" in printed, printed


@pytest.mark.parametrize("runtime", ["iree", "tvm"])
def test_a_context_cases_repro_runs_its_whole_graph_on_the_compiler(tmp_path, runtime):
    """A Pad before a MaxPool: the repro spells the whole graph and the compiler's answer is the
    expected one (exit 0); with an expectation the answer misses, the same script exits 1."""
    pytest.importorskip({"iree": "iree.runtime", "tvm": "tvm"}[runtime])
    ctx = Context(Consumer.MAX_POOL, {"kernel_shape": [2, 2], "strides": [1, 1], "dilations": [1, 1],
                                      "auto_pad": "NOTSET", "pads": [0, 0, 0, 0], "ceil_mode": 0})
    case = classify(Case(spec="onnx/Pad-18", data=np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3),
                         pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="edge", context=ctx))
    right = _bundle(tmp_path / "right", case, runtime, "initializers")
    assert "MaxPool" in (right / _own(runtime)).read_text()
    assert _run(right, _own(runtime))[0] == 0
    missed = case.with_(expected=case.expected + 1)
    wrong = _bundle(tmp_path / "wrong", missed, runtime, "initializers", Outcome(case.expected))
    assert _run(wrong, _own(runtime))[0] == 1


def test_tracts_generic_checker_runs_tract(tmp_path):
    """tract, where it runs the case (constant pads): the generic checker runs it too."""
    pytest.importorskip("tract")
    right = _bundle(tmp_path / "right", classify(INT32), "tract", "initializers")
    assert _run(right, _own("tract"))[0] == 0
    code, printed = _run(right, "repro.py")
    assert code == 0 and "OK: the output is the expected one" in printed, printed
