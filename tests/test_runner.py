"""`padconf run` end to end with planted runtimes: results.jsonl, summary, and --resume."""
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

from padconf.cli import main
from padconf.runner import read_jsonl

FAKE = "tests.fake_adapters:"


def rows_of(out):
    return read_jsonl(out / "results.jsonl")


def test_run_writes_results_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-19",
                 "--spec", "openvino/Pad-12", "--max-examples", "15", "--out", str(out)])
    assert code == 0
    rows = rows_of(out)
    cases = read_jsonl(out / "cases.jsonl")
    assert len(rows) == 2 * len(cases)  # both placements
    for key in ("runtime", "spec", "mode", "dtype", "shape", "pads", "axes", "verdict", "error", "case_id"):
        assert key in rows[0]
    verdicts = Counter(r["verdict"] for r in rows)
    # the fake is the reference itself: it passes every defined example and case
    assert verdicts["pass"] > 0 and verdicts["mismatch"] == 0
    assert all(r["verdict"] == "pass" for r in rows if r["origin"].startswith("example:"))
    summary = (out / "summary.md").read_text()
    assert "## Conformance matrix" in summary and "openvino/Pad-12" in summary
    assert "## Edge classes drawn" in summary


def test_planted_wrong_values_are_reported_as_distinct_failure(tmp_path, capsys):
    out = tmp_path / "run"
    cases = tmp_path / "run" / "cases.jsonl"
    # plant: every case whose data starts with 666 gets flipped output
    assert main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-13",
                 "--max-examples", "5", "--out", str(out)]) == 0
    lines = cases.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["data"] = {"dtype": "int32", "shape": [3], "values": [666, 1, 2]}
    doc.update(pads=[0, 1], mode="constant", constant_value=None, axes=None, kind="defined",
               expected={"dtype": "int32", "shape": [4], "values": [666, 1, 2, 0]}, candidates={}, tags=[])
    cases.write_text(json.dumps(doc) + "\n")
    run_json = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**run_json, "case_count": 1}))  # else resume draws them again
    (out / "results.jsonl").unlink()
    assert main(["run", "--resume", "--out", str(out)]) == 0
    rows = rows_of(out)
    assert {r["verdict"] for r in rows} == {"mismatch"}
    assert "Distinct failures" in capsys.readouterr().out


def test_resume_after_a_killed_run_loses_nothing(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "padconf.cli", "run", "--runtime", FAKE + "SlowAdapter",
           "--spec", "onnx/Pad-18", "--max-examples", "40", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(rows_of(out)) < 10:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows_of(out)
    cases = read_jsonl(out / "cases.jsonl")
    assert 10 <= len(before) < 2 * len(cases)
    assert main(["run", "--resume", "--out", str(out)]) == 0
    after = rows_of(out)
    keys = Counter((r["runtime"], r["placement"], r["case_id"]) for r in after)
    assert len(keys) == 2 * len(cases) and max(keys.values()) == 1
    assert after[:len(before)] == before


def test_truncated_last_line_is_dropped_but_a_broken_middle_line_is_an_error(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"a": 1}\n{"a": 2')
    assert read_jsonl(path) == [{"a": 1}]
    path.write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    assert main(["run", "--resume", "--out", str(tmp_path)]) == 2  # no run.json: one-line error
    import pytest
    from padconf.errors import CaseError
    with pytest.raises(CaseError, match="results.jsonl:2"):
        read_jsonl(path)


def test_malformed_run_json_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "run.json").write_text('{"runtimes": ["onnxruntime"], "colour": "red"}')
    assert main(["run", "--resume", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "run.json: malformed" in err and len(err.strip().splitlines()) == 1


def test_unknown_runtime_is_a_usage_error(tmp_path, capsys):
    assert main(["run", "--runtime", "tensorrt", "--max-examples", "1", "--spec", "onnx/Pad-2",
                 "--out", str(tmp_path / "r")]) == 2
    assert "unknown runtime 'tensorrt'" in capsys.readouterr().err
