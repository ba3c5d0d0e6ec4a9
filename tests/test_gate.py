"""`padconf baseline` and `padconf gate`: exit codes with planted runtimes, baseline files,
shards, JUnit XML, and the example database of --explore."""
import json
import re
from xml.etree import ElementTree

import numpy as np
import pytest
import yaml
from hypothesis.database import DirectoryBasedExampleDatabase

from padconf.baseline import Entry, baseline_entries, load_baseline, parse_baseline
from padconf.cases import Case
from padconf.cli import main
from padconf.errors import CaseError
from padconf.gate import EXPLORE_KEY, gate_cases, in_shard, judge_rows, parse_shard
from padconf.runner import read_jsonl
from padconf.specs import get_spec

FAKE = "tests.fake_adapters:"
SPEC = ["--spec", "onnx/Pad-19"]


def gate(tmp_path, runtime, baseline_text, *extra):
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(baseline_text)
    return main(["gate", "--runtime", runtime, "--baseline", str(baseline), "--work", str(tmp_path / "work"),
                 "--timeout", "1", *SPEC, *extra])


def test_a_correct_runtime_with_an_empty_baseline_passes(tmp_path, capsys):
    assert gate(tmp_path, FAKE + "ConformingAdapter", "[]\n") == 0
    out = capsys.readouterr().out
    assert "passed: nothing new" in out and re.search(r"\d+ results \(\d+ pass", out)


def test_a_new_failure_fails_the_gate_naming_its_case(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", "[]\n", "--junit", str(junit)) == 1
    out = capsys.readouterr().out
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    bad = [r for r in rows if r["verdict"] not in ("pass", "ambiguous", "inconclusive")]
    assert bad and {r["origin"] for r in bad} == {"example:example_3_edge"}
    for row in bad:
        assert f"new: {row['case_id']} [{row['placement']}]: mismatch" in out
    suite = ElementTree.parse(junit).getroot()
    assert int(suite.get("tests")) == len(rows) and int(suite.get("failures")) == len(bad)
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert sorted(failed) == sorted(f"{r['case_id']}[{r['placement']}]" for r in bad)


@pytest.mark.parametrize("runtime, verdict", [("CrashOnExampleAdapter", "crash"), ("HangOnExampleAdapter", "timeout")])
def test_a_crash_or_hang_is_new_until_listed(tmp_path, capsys, runtime, verdict):
    assert gate(tmp_path, FAKE + runtime, "[]\n") == 1
    assert f": {verdict}: " in capsys.readouterr().out
    listed = (f"- runtime: '.*{runtime}'\n  verdict: {verdict}\n  origin: example:example_3_edge\n"
              f"  why: planted\n")
    assert gate(tmp_path, FAKE + runtime, listed) == 0


def test_a_failure_that_does_not_recur_alone_is_flaky_not_new(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))
    assert gate(tmp_path, FAKE + "FlakyOnExampleAdapter", "[]\n") == 0
    out = capsys.readouterr().out
    assert re.search(r"flaky \(not failing the gate\): \S+ \[\w+\]: crash in the run, pass, pass alone", out)
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    assert any(r["verdict"] == "crash" for r in rows)  # the run's own record keeps what happened


def test_a_baseline_knows_what_a_case_does_alone_and_the_gate_passes_on_either(tmp_path, capsys):
    runtime = FAKE + "GarbageOrCrashOnExampleAdapter"
    out = tmp_path / "b.yaml"
    assert main(["baseline", "--runtime", runtime, "--out", str(out), "--work", str(tmp_path / "b"), *SPEC]) == 0
    assert {e["verdict"] for e in yaml.safe_load(out.read_text())} == {"mismatch", "crash"}
    assert gate(tmp_path, runtime, out.read_text()) == 0
    # the run saw garbage, so the crash entry looked fixed until its case was rerun alone
    assert re.search(r"flaky \(not failing the gate\): \S+\.yaml:\d+ still fails: .* mismatch in the run, crash alone",
                     capsys.readouterr().out)


def test_an_entry_that_no_longer_fails_fails_the_gate_as_fixed(tmp_path, capsys):
    listed = ("- runtime: .*\n  verdict: mismatch\n  spec: onnx/Pad-19\n  origin: example:example_3_edge\n"
              "  why: planted\n")
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", listed) == 0
    assert gate(tmp_path, FAKE + "ConformingAdapter", listed) == 1
    out = capsys.readouterr().out
    assert re.search(r"fixed: \S+baseline.yaml:1 .*remove it from the baseline", out)


def test_baseline_then_gate_passes_and_dropping_an_entry_names_its_cases(tmp_path, capsys):
    work = ["--work", str(tmp_path / "b"), *SPEC]
    assert main(["baseline", "--runtime", "onnxruntime", "--out", str(tmp_path / "b.yaml"), *work]) == 0
    entries = yaml.safe_load((tmp_path / "b.yaml").read_text())
    assert entries and all(e["why"] for e in entries)
    assert gate(tmp_path, "onnxruntime", (tmp_path / "b.yaml").read_text()) == 0
    capsys.readouterr()
    dropped = entries.pop(0)
    assert gate(tmp_path, "onnxruntime", yaml.safe_dump(entries)) == 1
    out = capsys.readouterr().out
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    freed = [r for r in rows if Entry(**dropped).matches(r) and not any(Entry(**e).matches(r) for e in entries)]
    assert freed and all(f"new: {r['case_id']} [{r['placement']}]" in out for r in freed)


def test_baseline_by_case_lists_every_failing_case_once_and_signatures_mask_particulars():
    detail = {"mismatch": "values differ first at [1]: 2.0 instead of 3.0", "pass": None, "crash": None}
    rows = [{"runtime": "rt", "case_id": f"onnx/Pad-19:constant:float:{i}", "verdict": v, "placement": p,
             "spec": "onnx/Pad-19", "mode": "constant", "dtype": "float", "detail": detail[v],
             "error": "killed by SIGSEGV; last words: free(): invalid pointer" if v == "crash" else None}
            for i, v in enumerate(["mismatch", "pass", "crash"]) for p in ("inputs", "initializers")]
    assert sorted(e["case"][-1] for e in baseline_entries(rows, by_case=True)) == ["0", "2"]
    signature = {e["verdict"]: e["error"] for e in baseline_entries(rows)}
    assert signature == {"mismatch": r"^values differ first at [\[({].*?[\])}]",
                         "crash": r"^killed by SIG[A-Z]+"}
    # a pattern matches other failures of its class, not failures of another class
    assert re.search(signature["mismatch"], "values differ first at [0, 4]: nan instead of 1.0")
    assert not re.search(signature["mismatch"], "shape [3] instead of [4]")
    # a heap-corrupting runtime dies by either signal, with whatever glibc noticed first
    assert re.search(signature["crash"], "killed by SIGABRT; last words: double free or corruption (out)")
    assert not re.search(signature["crash"], "exit code 3")


@pytest.mark.parametrize("text, where, what", [
    ("- runtime: rt\n  verdict: mismatch\n  why: x\n  colour: red\n", ":1", "unknown key 'colour'"),
    ("- runtime: rt\n  verdict: mismatch\n  why: x\n- runtime: rt\n  verdict: pass\n  why: y\n", ":4", "not a failure"),
    ("- runtime: rt\n  verdict: crash\n", ":1", "lacks 'why'"),
    ("- runtime: rt\n  verdict: crash\n  why: x\n  error: '(unclosed'\n", ":1", "error: not a regular expression"),
    ("- runtime: rt\n  verdict: [crash\n", ":3", "not valid YAML"),
    ("runtime: rt\n", ":1", "a baseline is a list"),
    ("- just text\n", ":1", "an entry is a mapping"),
])
def test_a_malformed_baseline_is_one_line_naming_file_and_line(tmp_path, capsys, text, where, what):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CaseError, match=re.escape(f"{path}{where}: ") + ".*" + re.escape(what)):
        load_baseline(path)
    assert main(["gate", "--runtime", "onnxruntime", "--baseline", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}{where}" in err


def test_shards_are_disjoint_and_complete():
    ids = [c.id for c in gate_cases([get_spec("onnx/Pad-19"), get_spec("openvino/Pad-12")])]
    parts = [[i for i in ids if in_shard(i, (k, 3))] for k in (1, 2, 3)]
    assert all(parts) and sorted(sum(parts, [])) == sorted(ids)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(Exception, match="expected I/N"):
            parse_shard(bad)


def test_a_signature_entry_is_judged_only_on_the_whole_suite(tmp_path):
    entry = parse_baseline("- runtime: rt\n  verdict: mismatch\n  mode: edge\n  why: x\n")
    rows = [{"runtime": "rt", "case_id": "a", "verdict": "pass", "placement": "inputs", "spec": "onnx/Pad-19",
             "mode": "edge", "dtype": "float", "origin": "hypothesis"}]
    every = {"onnx/Pad-18", "onnx/Pad-19"}
    assert judge_rows(rows, entry, "rt", set(), every).unjudged == entry  # one shard
    assert judge_rows(rows, entry, "rt", {"onnx/Pad-19"}, every).unjudged == entry  # it may fail on Pad-18
    assert [e for e, _ in judge_rows(rows, entry, "rt", every, every).fixed] == entry
    narrow = parse_baseline("- runtime: rt\n  verdict: mismatch\n  spec: onnx/Pad-19\n  why: x\n")
    assert [e for e, _ in judge_rows(rows, narrow, "rt", {"onnx/Pad-19"}, every).fixed] == narrow
    with pytest.raises(Exception, match="never passes on nothing"):
        judge_rows([], entry, "rt", every, every)


def test_sharded_gates_merge_into_the_whole_judgement(tmp_path, capsys):
    listed = ("- runtime: .*\n  verdict: mismatch\n  spec: onnx/Pad-19\n  origin: example:example_3_edge\n"
              "  why: planted\n")
    (tmp_path / "b.yaml").write_text(listed)
    dirs = []
    for k in (1, 2):
        dirs.append(str(tmp_path / f"s{k}"))
        code = main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                     "--work", dirs[-1], "--shard", f"{k}/2", *SPEC])
        assert code == 0  # a signature entry spans shards: neither shard can call it fixed
    assert "not judged here" in capsys.readouterr().out
    assert main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                 "--results", *dirs]) == 1
    assert "fixed: " in capsys.readouterr().out
    assert main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                 "--results", dirs[0]]) == 0  # one shard of two is not the whole suite


def test_explore_keeps_new_failures_in_the_example_database_and_replays_them(tmp_path):
    db, key = DirectoryBasedExampleDatabase(str(tmp_path / "db")), EXPLORE_KEY + b"onnx/Pad-19"
    args = ["--explore", "20", "--example-db", str(tmp_path / "db"), "--seed", "3"]
    assert gate(tmp_path, FAKE + "ConformingWrongValuesAdapter", "[]\n", *args) == 0  # nothing drawn triggers it
    assert not list(db.fetch(key))
    # a failing case an earlier exploration found (the fake fails when data[0] is 666)
    found = json.dumps(Case("onnx/Pad-19", np.array([666.0, 1.0], np.float32), [1, 1]).inputs_json()).encode()
    db.save(key, found)
    assert gate(tmp_path, FAKE + "ConformingWrongValuesAdapter", "[]\n", *args) == 1  # replayed, still failing: kept
    assert [json.loads(v) for v in db.fetch(key)] == [json.loads(found)]
    assert gate(tmp_path, FAKE + "ConformingAdapter", "[]\n", *args) == 0  # replayed, fixed: forgotten
    assert not list(db.fetch(key))
