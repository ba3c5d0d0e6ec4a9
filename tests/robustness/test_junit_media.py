"""JUnit XML is a medium of its own (``escape.xml``): text from a baseline or a shard's rows
shows every control, bidi and invisible format character as its code point, as the terminal
does, and a number is a number (attack round C: C1 CSI, RLO and LRI from a baseline's why and a
row's error reached junit.xml raw; a row's NaN and -1e308 seconds became testcase times)."""
from __future__ import annotations

import math
import re
from xml.etree import ElementTree

import pytest

from padconf.core.writing import write_xml
from padconf.gate.compare import Judgement
from padconf.gate.junit import junit_xml

HOSTILE = ("E\x1b]8;;https://evil\x07click\x1b]8;;\x07 \x9b31m \u202e\u2066 \u2028 \u200b\u00ad \x01\x0c ]]> "
           "</failure><x/>")
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\u200b-\u200f\u00ad]")


@pytest.mark.parametrize("seconds", [float("nan"), -1e308, float("inf"), 1e300, -0.5, True, "3"])
def test_junit_shows_outside_text_as_code_points_and_times_as_numbers(tmp_path, seconds):
    row = {"spec": "onnx/Pad-19", "mode": "constant" + HOSTILE, "dtype": "float32", "placement": "inputs",
           "case_id": "c" + HOSTILE, "verdict": "crash", "error": HOSTILE, "shape": [1], "pads": [0, 0],
           "runtime": "r", "seconds": seconds}
    path = tmp_path / "j.xml"
    write_xml(path, junit_xml(Judgement(runtime="r" + HOSTILE, rows=[row], new=[row], known=[], fixed=[])))
    text = path.read_text(encoding="utf-8")
    assert not RAW.search(text), sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
    suite = ElementTree.parse(path).getroot()
    case = suite.find("testcase")
    assert math.isfinite(float(case.get("time"))) and 0 <= float(case.get("time")) <= 1e9
    message = case.find("failure").get("message")
    assert "\\x9b31m" in message and "\\u202e\\u2066" in message and "</failure><x/>" in message


def test_junit_keeps_a_real_time():
    row = {"spec": "onnx/Pad-19", "mode": "constant", "dtype": "float32", "placement": "inputs", "case_id": "c",
           "verdict": "pass", "shape": [1], "pads": [0, 0], "runtime": "r", "seconds": 0.25}
    suite = ElementTree.fromstring(junit_xml(Judgement(runtime="r", rows=[row], new=[], known=[], fixed=[])))
    assert suite.find("testcase").get("time") == "0.250"
