"""Result rows and gate.json are strict records (msgspec): an unknown or mistyped key is one
line naming the file, where check_row alone took a shape of text and any unknown key
(benchmarks/bench_records.py, docs/reliability.md)."""
from __future__ import annotations

import json
import re

import pytest

from padconf.cli import main

ROW_CHANGES = {"a shape of text": {"shape": ["3"]}, "pads of floats": {"pads": [1.5, 0]},
               "a key nobody writes": {"surprise": 1}, "a position of text": {"position": "1"},
               "elided counts of text": {"elided": {"pads": "9"}}, "a boolean for seconds": {"seconds": True},
               "a negative position": {"position": -1}, "a control written into the row": {"control": {}}}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("strict") / "run"
    assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out)]) in (0, 1)
    return out


@pytest.mark.parametrize("change", sorted(ROW_CHANGES))
def test_a_result_row_with_a_key_unknown_or_mistyped_is_one_line(run, tmp_path, capsys, change):
    import shutil
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    lines = (copy / "results.jsonl").read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), **ROW_CHANGES[change]})
    (copy / "results.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["report", str(copy), "--md", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results.jsonl: row 2" in err, err


@pytest.mark.parametrize("doc", [{"surprise": 1}, {"seed": "0"}, {"explore": -1}, {"shard": [0, 2]},
                                 {"shard": [1, 5000]}, {"case_filter": {"modes": "edge"}},
                                 {"case_filter": {"pattern": "((("}}, {"run_id": "day\u202e 1"}, {"run_id": 7}])
def test_a_gate_json_with_a_key_unknown_mistyped_or_out_of_bounds_is_one_line(tmp_path, doc):
    from padconf.core.errors import CaseError
    from padconf.gate.gate import read_gate_json
    where = tmp_path / "gate.json"
    where.write_text(json.dumps({"runtime": "onnxruntime", "spec_ids": ["onnx/Pad-19"], "seed": 0, "explore": 0,
                                 "shard": [1, 2], **doc}))
    with pytest.raises(CaseError, match="gate.json: malformed"):
        read_gate_json(where).chosen(where)


def test_a_rows_strict_record_is_derived_from_its_one_declaration():
    """ResultRow and ControlRow (TypedDicts) are the only declaration of a row's keys and types:
    the strict records are made from them, every key a file may hold and no other."""
    import typing

    import msgspec

    from padconf.judging.records import NOT_WRITTEN, RESULT_KEYS, ControlRow, ResultRow, strict_record
    for declared in (ResultRow, ControlRow):
        fields = {f.name: f for f in msgspec.structs.fields(strict_record(declared))}
        assert set(fields) == set(typing.get_type_hints(declared)) - set(NOT_WRITTEN)
    required = {f.name for f in msgspec.structs.fields(strict_record(ResultRow)) if f.required}
    assert required == set(RESULT_KEYS)


def test_run_json_and_baseline_records_declare_the_vocabularies_they_hold():
    """run.json's profile and modes, and a baseline's verdict, are enums of their record: the
    words declared there are the vocabularies' own."""
    import typing

    from padconf.cases.profiles import PROFILES
    from padconf.gate.baseline import EntryRecord
    from padconf.judging.verdicts import FAILURES
    from padconf.run.config import Mode, Profile
    from padconf.spec.loader import load_specs
    assert set(typing.get_args(Profile)) == set(PROFILES)
    assert set(typing.get_args(Mode)) == {m for s in load_specs() for m in s.modes}
    assert set(typing.get_args(typing.get_type_hints(EntryRecord)["verdict"])) == set(FAILURES)


@pytest.mark.parametrize("key, value, problem", [
    ("colour", "red", "unknown field `colour`"),
    ("profile", "fast", "Invalid enum value 'fast' - at `$.profile`"),
    ("modes", ["mirror"], "Invalid enum value 'mirror' - at `$.modes[0]`"),
    ("seed", 2 ** 64, "Expected `int` <= 9223372036854775807 - at `$.seed`"),
    ("runtimes", [], "Expected `array` of length >= 1 - at `$.runtimes`"),
    ("results", -1, "Expected `int` >= 0 - at `$.results`"),
    ("timeout", "60", "Expected `float`, got `str` - at `$.timeout`"),
])
def test_run_json_is_held_to_its_record_by_report_and_resume(tmp_path, capsys, key, value, problem):
    """run.json bypassed the typed reader: each command checked the keys it used, in its own way
    (a report never looked at a key it did not use)."""
    from padconf.core.errors import CaseError
    from padconf.run.rundir import read_run_json
    run = tmp_path / "run"
    run.mkdir()
    doc = {"runtimes": ["onnx-reference"], "specs": ["onnx/Pad-19"], "max_examples": 0, "case_count": 0,
           key: value}
    (run / "run.json").write_text(json.dumps(doc))
    with pytest.raises(CaseError, match="run.json: malformed: .*" + re.escape(problem)):
        read_run_json(run / "run.json")  # what report, gate --results and --resume read it by
    assert main(["run", "--resume", "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run.json: malformed" in err and problem in err, err
