"""The suite leaves out the models onnx's shape inference aborts the process on
(padconf.suite.fixed.aborts_onnx_checker): a Slice after a Pad whose known pads crop a static
dimension past zero (onnx/onnx#8481, open). When onnx fixes it, the first test fails: the guard
can go."""
from __future__ import annotations

import os
import signal

import numpy as np
import onnx
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.context import Consumer, Context, Producer
from padconf.cases.edge_classes import edge_classes
from padconf.cases.onnx_model import build_model
from padconf.core.vocabulary import Placement
from padconf.spec.loader import get_spec
from padconf.suite.fixed import SuiteCase, _buildable, aborts_onnx_checker

SLICE = {"axes": [1], "steps": [1], "starts": [0], "ends": [1]}


def _case(producer: Producer, static: bool) -> Case:
    spec = get_spec("onnx/Pad-19")
    case = classify(Case(spec=spec.id, data=np.zeros((1, 1, 2), np.float32), pads=[0, -2, 0, 0, -1, 0],
                         context=Context(Consumer.SLICE, SLICE, producer=producer, static_shape=static)), spec)
    case.tags = edge_classes(case, spec)
    return case


def _check_aborts(case: Case, placement: str) -> bool:
    pid = os.fork()
    if pid == 0:  # the child checks; only an abort kills it
        try:
            onnx.checker.check_model(build_model(case, Placement(placement)), full_check=True)
        except Exception:  # noqa: BLE001  a refusal is no abort
            pass
        os._exit(0)
    status = os.waitpid(pid, 0)[1]
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT


@pytest.mark.parametrize("producer, static, placement", [
    (Producer.INPUTS, True, "initializers"), (Producer.CONSTANT_NODE, True, "inputs"),
    (Producer.CONSTANT_NODE, True, "initializers"), (Producer.INPUTS, True, "inputs"),
    (Producer.INPUTS, False, "initializers")])
def test_the_guard_names_exactly_the_models_whose_check_aborts(producer, static, placement):
    case = _case(producer, static)
    assert _check_aborts(case, placement) == aborts_onnx_checker(case, placement)
    assert _buildable(SuiteCase(case, placement)) != aborts_onnx_checker(case, placement)
