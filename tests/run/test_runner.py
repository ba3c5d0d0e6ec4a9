"""`padconf run` end to end with planted runtimes: results.jsonl, summary, and --resume."""
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core.dtypes import encode_array
from padconf.core.errors import InternalFault
from padconf.core.vocabulary import PLACEMENTS
from padconf.execution.worker_process import Zygote
from padconf.report.report import MUST_REJECT_MARK
from padconf.run.drawing import _draw_in_children, draw_spec
from padconf.run.rundir import load_run, read_jsonl
from padconf.run.runner import Run, RunConfig
from tests.robustness.test_hostile_inputs import identified

FAKE = "tests.fake_adapters:"


def rows_of(out):
    return read_jsonl(out / "results.jsonl")


def md_table(summary: str, heading: str) -> list[dict]:
    """The rows of the table under ``## heading`` in summary.md, as {column: cell}."""
    lines = summary.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    lines = [line for line in lines if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]
    return [dict(zip(cells[0], row)) for row in cells[2:]]


@pytest.mark.slow
def test_run_writes_results_and_summary(tmp_path):
    out = tmp_path / "run"
    code = main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-19",
                 "--spec", "openvino/Pad-12", "--max-examples", "15", "--out", str(out)])
    assert code == 0
    rows = rows_of(out)
    cases = read_jsonl(out / "cases.jsonl")
    assert len(rows) == len(PLACEMENTS) * len(cases)  # every placement
    for key in ("runtime", "spec", "mode", "dtype", "shape", "pads", "axes", "verdict", "error", "case_id"):
        assert key in rows[0]
    verdicts = Counter(r["verdict"] for r in rows)
    # the fake is the reference itself: it passes every defined example and case
    assert verdicts["pass"] > 0 and verdicts["mismatch"] == 0
    examples = [r for r in rows if r["origin"].startswith("example:")]
    assert all(r["verdict"] == "pass" for r in examples if r["kind"] == "defined")
    # the withdrawn reflect Example 2 is the undefined point it is: the reference's reading matches
    assert {(r["verdict"], tuple(r["matched"])) for r in examples if r["kind"] != "defined"} \
        == {("ambiguous", ("mirror_beyond_dim=iterate",))}
    summary = (out / "summary.md").read_text()
    # every cell of the matrix is the count results.jsonl holds, and nothing else is in it
    counted = Counter((r["runtime"], r["spec"], r["mode"], r["verdict"]) for r in rows)
    shown = Counter()
    for row in md_table(summary, "Conformance matrix"):
        for verdict in set(row) - {"runtime", "spec", "mode"}:
            if row[verdict]:
                mode = row["mode"].removesuffix(MUST_REJECT_MARK)  # marks a mode whose every case is must-reject
                shown[(row["runtime"], row["spec"], mode, verdict)] = int(row[verdict])
    assert shown == counted
    # the edge-class table counts the tags of cases.jsonl per spec version
    tagged = Counter((tag, c["spec"]) for c in cases for tag in c["tags"])
    shown = Counter()
    for row in md_table(summary, "Edge classes drawn (cases per spec version)"):
        shown.update({(row["edge class"], spec): int(n) for spec, n in row.items() if spec != "edge class" and n})
    assert shown == tagged


@pytest.mark.slow
def test_planted_wrong_values_are_reported_as_distinct_failure(tmp_path):
    out = tmp_path / "run"
    cases = tmp_path / "run" / "cases.jsonl"
    # plant: every case whose data starts with 666 gets flipped output
    assert main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-13",
                 "--max-examples", "5", "--out", str(out)]) == 0
    lines = cases.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["data"] = encode_array(np.array([666, 1, 2], np.int32), "int32")
    doc.update(pads=[0, 1], mode="constant", constant_value=None, axes=None, kind="defined",
               expected=encode_array(np.array([666, 1, 2, 0], np.int32), "int32"), interpretations={}, tags=[])
    doc = identified(doc)
    cases.write_text(json.dumps(doc) + "\n")
    run_json = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**run_json, "case_count": 1}))  # else resume draws them again
    (out / "results.jsonl").unlink()
    assert main(["run", "--resume", "--runtime", FAKE + "WrongValuesAdapter", "--out", str(out)]) == 0
    rows = rows_of(out)
    assert {r["verdict"] for r in rows} == {"mismatch"}
    # one distinct failure: the planted case, in every placement
    (failure,) = md_table((out / "summary.md").read_text(), "Distinct failures")
    assert (failure["runtime"], failure["verdict"], failure["n"]) == (rows[0]["runtime"], "mismatch",
                                                                      str(len(PLACEMENTS)))
    planted = Case.from_json(doc).id
    assert {r["case_id"] for r in rows} == {planted}
    assert f"id={planted}" in failure["example"] and failure["what"].startswith("values differ first at")


@pytest.mark.slow
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
    assert 10 <= len(before) < len(PLACEMENTS) * len(cases)
    assert "did not finish" in load_run(out).unfinished  # a report on it says it is part of a run
    assert main(["run", "--resume", "--runtime", FAKE + "SlowAdapter", "--out", str(out)]) == 0
    after = rows_of(out)
    assert json.loads((out / "run.json").read_text())["results"] == {FAKE + "SlowAdapter": len(after)}
    assert load_run(out).unfinished is None
    keys = Counter((r["runtime"], r["placement"], r["case_id"]) for r in after)
    assert len(keys) == len(PLACEMENTS) * len(cases) and max(keys.values()) == 1
    # results are rewritten in plan order at the end, so compare as sets: every row
    # written before the kill is still there, unchanged
    def canonical(rows):
        return Counter(json.dumps(r, sort_keys=True) for r in rows)

    assert not canonical(before) - canonical(after)


def test_truncated_last_line_is_dropped_but_a_broken_middle_line_is_an_error(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"a": 1}\n{"a": 2')
    assert read_jsonl(path) == [{"a": 1}]
    path.write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    assert main(["run", "--resume", "--out", str(tmp_path)]) == 2  # no run.json: one-line error
    import pytest

    from padconf.core.errors import CaseError
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


@pytest.mark.slow
def test_a_parallel_run_gives_the_serial_run_row_for_row(tmp_path):
    # onnxruntime and onnx's reference answer each case the same whatever ran before (their
    # adapters' order_independent: any lane takes their batches), so the lanes must change
    # nothing but the time taken (results.jsonl is rewritten in plan order)
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        assert main(["run", "--runtime", "onnxruntime", "onnx-reference", "--spec", "onnx/Pad-18", "onnx/Pad-19",
                     "--max-examples", "30", "--jobs", jobs, "--out", str(out)]) == 0
        # the time taken, and which worker process of which lane answered, are not the answer
        runs[jobs] = [{k: v for k, v in row.items() if k not in ("seconds", "process", "position")}
                      for row in rows_of(out)]
    assert len(runs["1"]) > 100 and runs["1"] == runs["2"]


@pytest.mark.slow
def test_versions_drawn_in_child_processes_come_back_in_order_as_drawn_here():
    # each child takes the next version as it finishes one, so which child drew which varies
    args = [(None, spec, 8, 0) for spec in ("onnx/Pad-2", "onnx/Pad-19", "openvino/Pad-12")]
    assert _draw_in_children(args, 2) == [draw_spec(a) for a in args]


@pytest.mark.slow
def test_a_draw_child_that_fails_is_one_line_with_its_last_words():
    """A child that dies is replaced and its version drawn again (a kill); one that dies each
    time is padconf's fault, said in one line with the last one's last words."""
    with pytest.raises(InternalFault, match=r"^drawing cases: 4 child processes died in turn \(exited with code 1; "
                                            r"last words: .*unknown spec id 'onnx/Pad-99'.*\)$"):
        _draw_in_children([(None, "onnx/Pad-19", 4, 0), (None, "onnx/Pad-99", 4, 0)], 2)


def test_the_controls_fork_from_the_lanes_zygote_and_no_zygote_outlives_the_run(tmp_path, monkeypatch):
    started = []
    original = Zygote.__init__

    def counted(self, *args, **kwargs):
        started.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Zygote, "__init__", counted)
    run = Run(tmp_path / "run", RunConfig(runtimes=[FAKE + "WrongValuesAdapter"]), jobs=1)
    planted = classify(Case("onnx/Pad-19", np.array([666, 1, 2], np.int32), [0, 1], mode="constant"))
    run.execute(run.plan(run.prepare([planted])))
    assert read_jsonl(tmp_path / "run" / "controls.jsonl")  # its wrong values had a control
    # the zygote that answered describe ran the lane, then the controls: none imported it again
    assert len(started) == 1 and not started[0].alive


def test_every_case_in_a_runtimes_scope_gets_a_row_skipped_ones_with_their_reason(tmp_path):
    import numpy as np

    from padconf.cases.classify import classify
    from padconf.judging.verdicts import Verdict
    from padconf.run.runner import Run, RunConfig

    complex_case = classify(Case("onnx/Pad-21", np.array([1 + 2j, 3j], np.complex64), [1, 0]))
    float_case = classify(Case("onnx/Pad-21", np.array([1.0, 2.0], np.float32), [1, 0]))
    native_case = classify(Case("openvino/Pad-12", np.array([1.0, 2.0], np.float32), [1, 0]))
    run = Run(tmp_path / "run", RunConfig(runtimes=["openvino-onnx", "onnxruntime"]))
    run.dir.mkdir()
    run.execute(run.plan([complex_case, float_case, native_case]))
    got = {(r["runtime"], r["placement"], r["dtype"]): r for r in rows_of(tmp_path / "run")}
    # OpenVINO has no complex element type: a row per placement, verdict skipped, with why
    for placement in PLACEMENTS:
        row = got[("openvino-onnx", placement, "complex64")]
        assert row["verdict"] == Verdict.SKIPPED and "no element type for complex64" in row["detail"]
    # onnxruntime's Python API cannot feed complex, but loading the model says there is no kernel
    assert got[("onnxruntime", "inputs", "complex64")]["verdict"] == Verdict.NOT_IMPLEMENTED
    # the OpenVINO-native case is no ONNX runtime's case: no row, one note
    assert not any(r["spec"] == "openvino/Pad-12" for r in got.values())
    assert any("1 cases of spec families it does not run" in n for n in run.notes)
    assert len(got) == 2 * len(PLACEMENTS) * 2  # runtimes x placements x ONNX cases


def test_a_case_answered_differently_by_placement_is_a_distinct_failure(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "FoldingBugAdapter", "--spec", "onnx/Pad-19", "--max-examples", "30",
                 "--out", str(out)]) == 0
    rows = rows_of(out)
    assert {r["placement"] for r in rows} == {"inputs", "initializers", "folded"}
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case_id"], {})[r["placement"]] = (r["verdict"], json.dumps(r["output"]))
    differing = [c for c, answers in by_case.items() if len(set(answers.values())) > 1]
    assert differing  # the planted folding bug shows on some edge cases
    shown = [row for row in md_table((out / "summary.md").read_text(), "Distinct failures")
             if row["verdict"] == "placement-dependent"]
    assert sum(int(row["n"]) for row in shown) == len(differing)
    assert all("folded: mismatch" in row["what"] and "inputs: pass" in row["what"] for row in shown)
