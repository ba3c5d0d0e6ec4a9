"""Decoding is bounded in depth before anything is built: JSON nested past MAX_DEPTH is one
line naming the file, however far under the interpreter's recursion limit it stays (such a
value decoded, then broke whatever walked or encoded it again) (docs/reliability.md)."""
from __future__ import annotations

import json
import sys

import pytest

from padconf.cli import main
from padconf.core.errors import CaseError
from padconf.core.untrusted import MAX_DEPTH, json_nesting, json_value
from tests.robustness.test_hostile_inputs import one_line_exit_2, run_dir_with


def test_nesting_is_counted_outside_strings():
    assert json_nesting('{"a": [1, [2, "[[[[\\"{{"]], "b": {"c": 1}}') == 3
    assert json_nesting('"[[["') == 0


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, sys.getrecursionlimit() - 50])
def test_json_nested_past_the_bound_is_one_line(depth):
    text = '{"printed": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(CaseError, match=f"results.jsonl:3: JSON nested more than {MAX_DEPTH} deep"):
        json_value(text, "results.jsonl:3")
    assert json_value("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x") is not None


def test_a_row_nested_under_the_recursion_limit_is_one_line_for_report(tmp_path, capsys):
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    row = json.loads((run / "results.jsonl").read_text())
    depth = sys.getrecursionlimit() - 80
    line = json.dumps(row)[:-1] + ', "printed": ' + "[" * depth + "]" * depth + "}\n"
    (run / "results.jsonl").write_text(line)
    one_line_exit_2(main(["report", str(run), "--html", str(tmp_path / "r.html")]), capsys, "nested more than")


NESTED_K = "(" * 400 + "x" + ")" * 400  # within -k's 1000 characters


@pytest.mark.parametrize("pattern", [NESTED_K, "not " * 240 + "x", "not (" * 100 + "x" + ")" * 100])
def test_a_k_pattern_nested_past_its_bound_is_one_line_wherever_it_is_read(tmp_path, capsys, pattern):
    """-k's parser recursed a few frames a level: 400 parentheses were a RecursionError, exit 3,
    for run -k, run.json's pattern on --resume and the pytest plugin's --padconf-k (which reads
    it through the same CaseFilter, as a usage error)."""
    from padconf.cases.selection import MAX_PATTERN_DEPTH, CaseFilter
    from padconf.cli import main
    from padconf.core.errors import PadconfError
    with pytest.raises(PadconfError, match=f"nested more than {MAX_PATTERN_DEPTH} deep"):
        CaseFilter(pattern=pattern)
    CaseFilter(pattern="(" * MAX_PATTERN_DEPTH + "x" + ")" * MAX_PATTERN_DEPTH)  # at the bound: taken
    assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "1",
                 "--out", str(tmp_path / "r"), "-k", pattern]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested more than" in err, err
    assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "1",
                 "--out", str(tmp_path / "r")]) in (0, 1)
    about = json.loads((tmp_path / "r" / "run.json").read_text())
    about["pattern"] = pattern
    about.pop("results", None)
    (tmp_path / "r" / "run.json").write_text(json.dumps(about))
    capsys.readouterr()
    assert main(["run", "--resume", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested more than" in err, err


@pytest.mark.parametrize("where", ["run.json", "results.jsonl", "cases.jsonl"])
def test_a_lone_surrogate_escape_is_one_line_in_every_file_of_a_run(tmp_path, capsys, where):
    """JSON spells a lone surrogate (``"\\ud800runtimes"``) that no UTF-8 text holds: a key of
    run.json spelled so was exit 3 in report, an internal fault (attack round E). Every JSON file
    padconf reads refuses it in one line; a surrogate pair is the character it spells."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    path = run / where
    path.write_text(path.read_text().replace('"', '"\\ud800', 1))
    one_line_exit_2(main(["report", str(run), "--md", str(tmp_path / "r.md")]), capsys, "lone surrogate")
    assert json_value('{"a": "\\ud83d\\ude00"}', "x") == {"a": "\U0001F600"}
