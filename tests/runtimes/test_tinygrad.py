"""tinygrad's ONNX runner as an implementation under test (padconf.adapters.tinygrad), on the
real tinygrad, in padconf's worker (its Python device unless DEV says otherwise)."""
from __future__ import annotations

import numpy as np
import pytest

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.execution.worker import Worker
from padconf.judging.verdicts import Verdict, judge
from padconf.spec.loader import get_spec

pytest.importorskip("tinygrad")
pytestmark = pytest.mark.slow  # a worker imports tinygrad


@pytest.fixture(scope="module")
def worker():
    found = Worker("tinygrad")
    yield found
    found.close()


def _case(pads, mode, data=None) -> Case:
    data = np.arange(1, 5, dtype=np.float32).reshape(1, 4) if data is None else data
    return classify(Case(spec="onnx/Pad-19", data=data, pads=pads, mode=mode), get_spec("onnx/Pad-19"))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("placement", ["inputs", "initializers"])
def test_plain_pads_pass_in_every_mode_and_placement(worker, mode, placement):
    case = _case([0, 1, 0, 2], mode)
    assert case.kind == CaseKind.DEFINED
    outcome, status = worker.run_alone(case, placement)
    assert status == "ok" and (judge(case, outcome).verdict == Verdict.PASS or outcome.skipped), outcome


def test_each_case_gets_a_runner_of_its_own(worker):
    """Two cases of one model (pads fed at run time) in one worker: a shared runner would answer
    the first case's pads for the second (tinygrad caches them by name)."""
    cases = [_case([0, 1, 0, 0], "constant"), _case([0, 0, 0, 3], "constant")]
    for case, (outcome, status) in zip(cases, worker.run(cases, "inputs")):
        assert status == "ok" and outcome.output.shape == case.expected.shape, outcome


def test_a_mixed_sign_reflect_pad_is_computed_where_onnx_leaves_it_open(worker):
    """The ONNX Pad torch.onnx.export writes for F.pad(x, (-3, 2), "reflect"), which onnxruntime
    refuses: tinygrad computes it (an answer of one reading, not a verdict)."""
    case = _case([0, -3, 0, 2], "reflect")
    assert case.kind == CaseKind.AMBIGUOUS
    outcome, status = worker.run_alone(case, "inputs")
    assert status == "ok" and outcome.output is not None and outcome.output.shape == (1, 3), outcome
    assert any(o is not None and np.array_equal(o, outcome.output) for o in case.interpretations.values())
