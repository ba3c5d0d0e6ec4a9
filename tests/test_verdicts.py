"""Each verdict, from a classified case and a constructed runtime outcome."""
import numpy as np

from padconf.adapters import Outcome
from padconf.cases import Case
from padconf.classify import classify
from padconf.verdicts import FAILURES, judge

X = np.array([1.0, 2.0], np.float32)


def case(**kw):
    return classify(Case(**{"spec": "onnx/Pad-18", "data": X, "pads": [1, 0], **kw}))


def test_defined():
    c = case()
    assert judge(c, Outcome(np.array([0.0, 1.0, 2.0], np.float32))).verdict == "pass"
    assert judge(c, Outcome(np.array([-0.0, 1.0, 2.0], np.float32))).detail.startswith("values differ first at [0]")
    assert "dtype float64" in judge(c, Outcome(np.array([0.0, 1.0, 2.0]))).detail
    assert "shape [2]" in judge(c, Outcome(X)).detail
    assert judge(c, Outcome(error="no")).verdict == "wrongly-rejected"
    assert judge(c, Outcome(error="no kernel", not_implemented=True)).verdict == "not-implemented"


def test_nan_equals_nan_whatever_the_payload():
    c = case(data=np.array([np.nan], np.float32), pads=[0, 0])
    other_nan = np.array([0x7FC00123], np.uint32).view(np.float32)
    assert judge(c, Outcome(other_nan)).verdict == "pass"


def test_must_reject():
    c = case(pads_type="int32")
    assert judge(c, Outcome(error="bad type")).verdict == "pass"
    assert judge(c, Outcome(error="no kernel", not_implemented=True)).verdict == "pass"
    got = judge(c, Outcome(np.array([0.0, 1.0, 2.0], np.float32)))
    assert got.verdict == "wrongly-accepted" and "int32" in got.detail


def test_ambiguous_records_the_interpretation_matched():
    c = case(data=np.arange(4, dtype=np.float32), pads=[2, -2], mode="reflect")  # [2,1,0,1] or [0,1,0,1]
    crop_first, original = c.interpretations["mixed_sign_pads=crop_first"], c.interpretations["mixed_sign_pads=original_coordinates"]
    assert judge(c, Outcome(crop_first)).matched == ["mixed_sign_pads=crop_first"]
    assert judge(c, Outcome(original)).matched == ["mixed_sign_pads=original_coordinates"]


def test_an_answer_no_reading_gives_is_unexplained_a_failure_listing_what_each_reading_gives():
    c = case(data=np.arange(4, dtype=np.float32), pads=[2, -2], mode="reflect")  # [2,1,0,1] or [0,1,0,1]
    rejected = judge(c, Outcome(error="no"))
    assert rejected.verdict == "unexplained" and rejected.verdict in FAILURES and not rejected.matched
    assert "rejected it, which no reading does" in rejected.detail
    assert "mixed_sign_pads=original_coordinates gives shape [4] [2.0, 1.0, 0.0, 1.0]" in rejected.detail
    garbage = judge(c, Outcome(np.array([9.0, 1.0, 0.0, 1.0], np.float32)))
    assert garbage.verdict == "unexplained" and "returned an output no reading gives" in garbage.detail
    assert "mixed_sign_pads=crop_first gives shape [4] [0.0, 1.0, 0.0, 1.0] " \
           "(values differ first at [0] (values the expected output lacks): float32(9.0) instead of float32(0.0))" in garbage.detail


def test_crash_and_timeout_pass_through():
    assert judge(case(), Outcome(error="killed by SIGSEGV"), "crash").verdict == "crash"
    assert judge(case(), Outcome(error="no answer"), "timeout").verdict == "timeout"
