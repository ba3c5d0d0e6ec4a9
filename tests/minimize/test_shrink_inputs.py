"""Every shrink pass takes any case a file may hold: a constant_value of any size (a case file's
may hold two values, or none, where a spec allows one) and of any shape yields candidates, never
an exception (``padconf minimize RUN:<case>`` was exit 3: "cannot reshape array of size 2 into
shape ()")."""
from __future__ import annotations

import json

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core.dtypes import encode_array
from padconf.minimize.shrink.simplify import PASSES
from padconf.spec.loader import get_spec

SPEC = "onnx/Pad-19"


@pytest.mark.parametrize("shape", [(), (1,), (2,), (0,), (1, 1), (2, 3)])
@pytest.mark.parametrize("dtype", ["float", "int32", "string"])
def test_every_pass_takes_a_constant_value_of_any_size(shape, dtype):
    spec = get_spec(SPEC)
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    value = values.astype(object).astype(str).astype(object) if dtype == "string" else values.astype(
        np.float32 if dtype == "float" else np.int32)
    data = np.array([["a", "b"], ["c", "d"]], object) if dtype == "string" else np.ones((2, 2), value.dtype)
    case = classify(Case(spec=SPEC, data=data, pads=[1, 0, 0, 1], constant_value=value), spec)
    for shrink in PASSES:
        for candidate in shrink(case):
            classify(candidate, spec)


def test_minimize_of_a_run_case_with_two_constant_values_is_not_padconfs_fault(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    case = {"id": "onnx/Pad-19:constant:float:0000000000aa", "spec": SPEC, "pads": [1, 1], "mode": "constant",
            "kind": "must-reject", "rule": "constant_value_scalar", "expected": None,
            "data": encode_array(np.ones(3, np.float32), "float"),
            "constant_value": encode_array(np.array([1, 2], np.float32), "float")}
    (run / "cases.jsonl").write_text(json.dumps(case) + "\n")
    row = {"runtime": "onnxruntime", "placement": "inputs", "spec": SPEC, "mode": "constant", "dtype": "float",
           "shape": [3], "pads": [1, 1], "verdict": "wrongly_accepted", "case_id": case["id"], "origin": "generated",
           "kind": "must-reject", "reason": None, "error": None, "detail": "accepted", "matched": None,
           "output": None}
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    (run / "run.json").write_text(json.dumps({"runtimes": ["onnxruntime"], "specs": [SPEC], "max_examples": 0,
                                              "case_count": 1}))
    code = main(["minimize", f"{run}:{case['id']}", "--runtime", "onnxruntime", "--out", str(tmp_path / "m"),
                 "--time-limit", "20"])
    err = capsys.readouterr().err
    assert code in (0, 2), err[-3000:]
    assert "internal fault" not in err, err


@pytest.mark.parametrize("simplify", [p for p in PASSES if p.__name__ in ("valid_parts", "simpler_values",
                                                                         "simpler_types")],
                         ids=lambda f: f.__name__)
def test_a_pass_abandoned_and_closed_in_another_thread_raises_nothing(simplify):
    """minimize's lanes are threads: a shrinking pass left half-taken may be closed by another
    thread, and one that yielded inside numpy's errstate then raised "created in a different
    Context" (audit VI's minimize log). Each pass that uses errstate is left before its last
    candidate, where such a yield would stand."""
    import itertools
    import threading
    case = classify(Case(spec="onnx/Pad-11", data=np.array([1.5, 2.5], np.float16), pads=[1, -1], mode="wrap",
                         constant_value=np.float16(3.5)))
    count = len(list(simplify(case)))
    assert count >= 2
    passes = simplify(case)
    list(itertools.islice(passes, count - 1))
    got: list[BaseException] = []

    def close() -> None:
        try:
            passes.close()
        except BaseException as exc:  # noqa: BLE001 -- what the test looks for
            got.append(exc)
    thread = threading.Thread(target=close)
    thread.start()
    thread.join()
    assert got == [], got
