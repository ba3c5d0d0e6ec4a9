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
