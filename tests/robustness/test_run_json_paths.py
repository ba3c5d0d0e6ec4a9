"""Every field of run.json that names a path (``specs_dir``, ``cases_dir``) is read only when the
user names it again: a run directory from anyone never points ``--resume`` at files elsewhere
(docs/reliability.md)."""
from __future__ import annotations

import json

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
