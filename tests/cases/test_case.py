"""Cases survive JSON losslessly, for every dtype, including NaN payloads and -0.0."""
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from padconf.cases.case import Case, dumps, loads
from padconf.cases.strategies import arrays
from padconf.core.dtypes import (
    ALL_DTYPES,
    ArrayBudget,
    OverBudget,
    bit_equal,
    decode_array,
    from_raw,
    numpy_dtype,
    raw_array,
)
from padconf.core.errors import CaseError


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@given(data=st.data())
def test_round_trip_every_dtype(dtype, data):
    arr = data.draw(arrays(dtype, data.draw(st.sampled_from([(), (0,), (3,), (2, 3)]))))
    value = data.draw(arrays(dtype, ()))
    case = Case(spec="onnx/Pad-25", data=arr, pads=[1] * (2 * arr.ndim), mode="edge",
                constant_value=value, axes=None, expected=arr, interpretations={"x=y": arr, "x=z": None})
    back = loads(dumps(case))
    assert back.same_inputs(case) and back.id == case.id
    assert back.with_().id == case.id  # recomputed from the decoded inputs, not the recorded id
    assert back.data.dtype == numpy_dtype(dtype)
    for a, b in ((case.data, back.data), (case.constant_value, back.constant_value),
                 (case.expected, back.expected), (case.interpretations["x=y"], back.interpretations["x=y"])):
        assert _identical_bits(a, b)
    assert back.interpretations["x=z"] is None


def _identical_bits(a, b):
    """Stricter than bit_equal: NaN payloads must survive too."""
    if a.dtype == object:
        return a.tolist() == b.tolist()
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def test_nan_payload_and_negative_zero_survive():
    bits = np.array([0x7FC00001, 0xFFC00123, 0x80000000, 0x00000001], dtype=np.uint32)
    arr = bits.view(np.float32)
    back = loads(dumps(Case(spec="onnx/Pad-18", data=arr, pads=[0, 0])))
    assert back.data.view(np.uint32).tolist() == bits.tolist()


def test_bit_equal_is_strict_on_signed_zero_but_not_on_nan_payload():
    a = np.array([0.0, np.nan], np.float32)
    b = np.array([-0.0, np.nan], np.float32)
    c = np.array([0x00000000, 0x7FC00005], np.uint32).view(np.float32)
    assert not bit_equal(a, b) and bit_equal(a, c)
    assert not bit_equal(a, a.astype(np.float64))


@pytest.mark.parametrize("text,problem", [
    ("{", "malformed case JSON"),
    ('{"spec": "onnx/Pad-18"}', "malformed case"),
    ('{"spec": "onnx/Pad-19", "data": {"dtype": "float33", "shape": [1], "b64": "AAAAAA=="}, '
     '"pads": [0, 0], "mode": "edge"}', "unknown dtype"),
    ('{"spec": "onnx/Pad-19", "data": {"dtype": "float", "shape": [2], "b64": "AAAAAA=="}, '
     '"pads": [0, 0], "mode": "edge"}', "malformed array"),
    ('{"spec": "onnx/Pad-19", "data": {"dtype": "int8", "shape": [1], "b64": "AQ=="}, '
     '"pads": [0, 0], "mode": "edge", "kind": "maybe"}', "kind"),
])
def test_malformed_case_is_one_line_error(text, problem):
    with pytest.raises(CaseError, match=problem) as info:
        loads(text)
    assert "\n" not in str(info.value)


def test_arrays_travel_as_raw_bytes():
    for dtype in ALL_DTYPES:
        doc = json.loads(dumps(Case(spec="onnx/Pad-19", data=np.zeros(1, numpy_dtype(dtype)) if dtype != "string"
                                    else np.array([""], object), pads=[0, 0])))
        assert ("b64" in doc["data"]) == (dtype != "string") and doc["data"]["dtype"] == dtype
    big = np.resize(np.arange(256, dtype=np.float64), (300, 300))  # 720 KB of a repeated run
    doc = json.loads(dumps(Case(spec="onnx/Pad-19", data=big, pads=[0, 0, 0, 0])))
    assert "z64" in doc["data"] and len(doc["data"]["z64"]) < 20_000 and doc["data"]["shape"] == [300, 300]
    assert bit_equal(loads(json.dumps(doc)).data, big)
    for pre_release in ({"dtype": "float", "shape": [2], "bits": [0x7FC00001, 0x80000000]},
                        {"dtype": "int64", "shape": [2], "values": [2**40 + 5, -1]}):  # padconf 0.1's forms
        with pytest.raises(CaseError, match="malformed array"):
            decode_array(pre_release)


def test_a_raw_header_read_before_is_checked_and_charged_again():
    """from_raw keeps the headers it checked (a batch's arrays share a few shapes): a header seen
    before still costs its budget, and its bytes must still be the shape's."""
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    header, raw = raw_array(arr, "float")
    for _ in range(2):  # the second read finds the header kept
        assert bit_equal(from_raw(header, lambda n: raw), arr)
    budget = ArrayBudget(len(raw) + 10, "the case's arrays")
    from_raw(header, lambda n: raw, budget)
    with pytest.raises(OverBudget):
        from_raw(header, lambda n: raw, budget)
    with pytest.raises(CaseError, match="raw bytes"):
        from_raw({**header, "raw": len(raw) - 4}, lambda n: raw)
    with pytest.raises(CaseError, match="raw bytes"):
        from_raw(header, lambda n: raw[:-4])
    for shape in ([3, -4], [3, "4"], [[3], 4]):  # never kept: refused each time
        for _ in range(2):
            with pytest.raises(CaseError, match="malformed array"):
                from_raw({**header, "shape": shape}, lambda n: raw)


def test_a_large_string_array_is_stored_compressed_and_small_ones_readable():
    # a padded string array repeats its strings: as JSON values it would be megabytes
    strings = np.array(["ab" * 100, "äß漢字🙂", ""] * 20000, dtype=object).reshape(200, 300)
    doc = json.loads(dumps(Case(spec="onnx/Pad-19", data=strings, pads=[0, 0, 0, 0])))
    assert "values" not in doc["data"] and len(doc["data"]["z64"]) < 40_000 and doc["data"]["shape"] == [200, 300]
    back = loads(json.dumps(doc)).data
    assert back.tolist() == strings.tolist() and back.dtype == object
    assert len({id(s) for s in back.flat}) == 3  # each distinct string once in memory
    small = json.loads(dumps(Case(spec="onnx/Pad-19", data=np.array(["a", "é"], object), pads=[0, 0])))
    assert small["data"]["values"] == ["a", "é"]  # still readable for jq
