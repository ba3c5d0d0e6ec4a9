"""Every field of run.json that names a path (``specs_dir``, ``cases_dir``) is read only when the
user names it again: a run directory from anyone never points ``--resume`` at files elsewhere
(docs/reliability.md)."""
from __future__ import annotations

import json

import pytest

from padconf.cli import main
from tests.robustness.test_hostile_inputs import one_line_exit_2, run_dir_with


def test_resume_reads_the_test_folders_run_json_names_only_when_named_again(tmp_path, capsys):
    """``"cases_dir": ["/"]`` walked the file system on ``--resume``, unnamed."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "cases.jsonl").unlink()  # so that --resume reads the cases again, from the folders
    doc = json.loads((run / "run.json").read_text())
    for recorded in (["/"], [str(elsewhere)]):
        (run / "run.json").write_text(json.dumps({**doc, "cases_dir": recorded}))
        one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "run.json", f"--cases {recorded[0]}")
    # named again, it is read (here it holds no test folder: one line of its own)
    code = main(["run", "--resume", "--out", str(run), "--cases", str(elsewhere)])
    err = capsys.readouterr().err
    assert code == 2 and "name it again" not in err, err


@pytest.mark.parametrize("command", ["report", "resume"])
def test_a_row_of_a_case_the_run_does_not_hold_is_one_line(tmp_path, capsys, command):
    """A mismatch row appended for a case id cases.jsonl lacks was counted by the report and
    carried on by ``--resume`` (rc 0 both)."""
    out = tmp_path / "run"
    assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out)]) in (0, 1)
    rows = (out / "results.jsonl").read_text().splitlines()
    forged = {**json.loads(rows[0]), "case_id": "onnx/Pad-19:constant:float:000000000000", "verdict": "mismatch"}
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(forged) + "\n")
    doc = json.loads((out / "run.json").read_text())
    doc["results"] = {"onnx-reference": len(rows) + 1}
    if command == "resume":
        doc.pop("results")
    (out / "run.json").write_text(json.dumps(doc))
    capsys.readouterr()
    argv = ["report", str(out), "--md", str(tmp_path / "r.md")] if command == "report" else \
        ["run", "--resume", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "which cases.jsonl does not hold" in err, err
