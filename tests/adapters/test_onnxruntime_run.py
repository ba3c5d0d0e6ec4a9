"""The onnxruntime adapter runs a cached session through its inner session, the feed's checks
made once a session (padconf.adapters.onnxruntime._run_session): what it answers is what
InferenceSession.run answers, and a feed session.run would refuse is refused in its words."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from padconf.adapters.onnxruntime import _new_session, _run_session
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import bit_equal
from padconf.core.vocabulary import Placement


def _case(mode: str = "constant") -> Case:
    return Case(spec="onnx/Pad-18", data=np.arange(12, dtype=np.float32).reshape(3, 4), pads=[1, 0, 2, 1],
                mode=mode, constant_value=np.array(0.5, np.float32) if mode == "constant" else None)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_a_session_answers_what_inference_session_run_answers(mode):
    case = _case(mode)
    session = _new_session(ort, build_model(case, Placement.INPUTS).SerializeToString())
    inputs = feeds(case, Placement.INPUTS)
    for _ in range(2):  # the second run takes the checks made by the first
        got = _run_session(session, inputs, None)
        assert len(got) == 1 and bit_equal(got[0], session.run(None, inputs)[0])


def test_a_feed_lacking_a_required_input_is_refused_in_onnxruntimes_words():
    case = _case()
    session = _new_session(ort, build_model(case, Placement.INPUTS).SerializeToString())
    inputs = feeds(case, Placement.INPUTS)
    _run_session(session, inputs, None)  # the plan is made with a whole feed
    del inputs["pads"]
    with pytest.raises(ValueError) as public:
        session.run(None, inputs)
    with pytest.raises(ValueError) as ours:
        _run_session(session, inputs, None)
    assert str(ours.value) == str(public.value) and "pads" in str(ours.value)
