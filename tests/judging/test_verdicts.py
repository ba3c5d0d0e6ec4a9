"""Each verdict, from a classified case and a constructed runtime outcome."""
import numpy as np

from padconf.adapters import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.judging.verdicts import FAILURES, judge

X = np.array([1.0, 2.0], np.float32)


def case(**kw):
    return classify(Case(**{"spec": "onnx/Pad-18", "data": X, "pads": [1, 0], **kw}))


def test_defined():
    c = case()
    assert judge(c, Outcome(np.array([0.0, 1.0, 2.0], np.float32))).verdict == "pass"
    assert judge(c, Outcome(np.array([0.0, 1.0, 3.0], np.float32))).detail.startswith("values differ first at [2]")
    assert "dtype float64" in judge(c, Outcome(np.array([0.0, 1.0, 2.0]))).detail
    assert "shape [2]" in judge(c, Outcome(X)).detail
    assert judge(c, Outcome(error="no")).verdict == "wrongly-rejected"
    assert judge(c, Outcome(error="no kernel", not_implemented=True)).verdict == "not-implemented"


def test_must_reject():
    c = case(pads_type="int32")
    assert judge(c, Outcome(error="bad type")).verdict == "pass"
    assert judge(c, Outcome(error="no kernel", not_implemented=True)).verdict == "pass"
    got = judge(c, Outcome(np.array([0.0, 1.0, 2.0], np.float32)))
    assert got.verdict == "wrongly-accepted" and "int32" in got.detail


def test_ambiguous_records_the_interpretation_matched():
    # [2, 1, 0, 1] in original coordinates; cropped first, the 2 kept elements mirror a pad of 2:
    # the second point (mirror_beyond_dim) is reached only under crop_first's reading
    c = case(data=np.arange(4, dtype=np.float32), pads=[2, -2], mode="reflect")
    original = c.interpretations["mixed_sign_pads=original_coordinates,mirror_beyond_dim=iterate"]
    crop_first = c.interpretations["mixed_sign_pads=crop_first,mirror_beyond_dim=iterate"]
    assert judge(c, Outcome(crop_first)).matched == ["mixed_sign_pads=crop_first,mirror_beyond_dim=iterate"]
    assert judge(c, Outcome(original)).matched == ["mixed_sign_pads=original_coordinates,mirror_beyond_dim=iterate",
                                                   "mixed_sign_pads=original_coordinates,mirror_beyond_dim=reject"]
    rejected = judge(c, Outcome(error="no"))
    assert (rejected.verdict == "ambiguous"
            and rejected.matched == ["mixed_sign_pads=crop_first,mirror_beyond_dim=reject"])


def test_an_answer_no_reading_gives_is_unexplained_a_failure_listing_what_each_reading_gives():
    c = case(data=np.arange(4, dtype=np.float32), pads=[2, -2], mode="reflect")
    garbage = judge(c, Outcome(np.array([9.0, 1.0, 0.0, 1.0], np.float32)))
    assert garbage.verdict == "unexplained" and garbage.verdict in FAILURES and not garbage.matched
    assert "returned an output no reading gives" in garbage.detail
    assert "mixed_sign_pads=crop_first,mirror_beyond_dim=reject rejects it" in garbage.detail
    assert "mixed_sign_pads=original_coordinates,mirror_beyond_dim=iterate gives shape [4] [2.0, 1.0, 0.0, 1.0] " \
           "(values differ first at [0] (values the expected output lacks): float32(9.0) instead of float32(2.0))" \
           in garbage.detail


def test_crash_and_timeout_pass_through():
    assert judge(case(), Outcome(error="killed by SIGSEGV"), "crash").verdict == "crash"
    assert judge(case(), Outcome(error="no answer"), "timeout").verdict == "timeout"


def test_a_changed_nan_payload_or_zero_sign_is_a_low_severity_mismatch_of_its_own():
    """Not hidden behind "any NaN equals any NaN", and not taken for a wrong value either."""
    quiet, payload = np.array([np.nan], np.float32), np.array([0x7FC00001], np.uint32).view(np.float32)
    c = case(data=quiet, pads=[0, 1], constant_value=np.float32(-0.0))
    assert c.expected.view(np.uint32).tolist() == [0x7FC00000, 0x80000000]
    for got in (np.concatenate([payload, [-0.0]]).astype(np.float32),  # the NaN's payload changed
                np.array([np.nan, 0.0], np.float32)):  # the pad value's -0.0 became +0.0
        v = judge(c, Outcome(got))
        assert (v.verdict, v.difference) == ("mismatch", "nan-payload-or-zero-sign"), v
        assert v.detail.startswith("only NaN payloads or signs of zero differ first at [")
    wrong = judge(c, Outcome(np.array([payload[0], 1.0], np.float32)))  # a wrong number beside it
    assert (wrong.difference, wrong.detail) == ("values", "values differ first at [1] (values the expected output "
                                                          "lacks): float32(1.0) instead of float32(-0.0)")
    assert judge(c, Outcome(c.expected.copy())).verdict == "pass"


def test_judging_a_bfloat16_signalling_nan_warns_nothing():
    """Casting bfloat16's signalling NaNs (0x7f81 to 0x7fbf) to float64 raises numpy's "invalid
    value encountered in cast": a run of the compilers printed it on padconf's own stderr."""
    import warnings

    import ml_dtypes
    signalling = np.array([0x7F81, 0x3F80], np.uint16).view(ml_dtypes.bfloat16)
    c = case(data=np.array([1.0, 2.0], ml_dtypes.bfloat16), pads=[0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = judge(c, Outcome(signalling))
    assert v.verdict == "mismatch" and "nan (0x7f81)" in v.detail, v
