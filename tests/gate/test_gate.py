"""`padconf baseline` and `padconf gate`: exit codes with planted runtimes, baseline files,
shards, JUnit XML, and the example database of --explore."""
import json
import os
import re
from xml.etree import ElementTree

import numpy as np
import pytest
import yaml
from hypothesis.database import DirectoryBasedExampleDatabase

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core.errors import CaseError, PadconfError
from padconf.core.vocabulary import PLACEMENTS
from padconf.gate.baseline import Cell, baseline_entries, breadth, load_baseline, parse_baseline
from padconf.gate.compare import confirm, judge_rows
from padconf.gate.explore import EXPLORE_KEY
from padconf.gate.selection import gate_cases, in_shard, parse_shard
from padconf.judging.failure import distinct_failure
from padconf.judging.records import judged_row
from padconf.judging.verdicts import judge
from padconf.run.rundir import read_jsonl
from padconf.spec.loader import get_spec
from tests.robustness.test_hostile_inputs import signed_again

FAKE = "tests.fake_adapters:"
SPEC = ["--spec", "onnx/Pad-19"]
EXAMPLE_CELLS = "  cells:\n" + "".join(f"  - onnx/Pad-19 edge float {p}\n" for p in PLACEMENTS)  # example_3_edge's


def gate(tmp_path, runtime, baseline_text, *extra, timeout="60"):
    """The gate of ``runtime`` over onnx/Pad-19. Its per-case timeout is one a loaded CI machine
    stays under (a fake's case timed out at 1 s there); only the hang tests wait for one."""
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text(baseline_text)
    return main(["gate", "--runtime", runtime, "--baseline", str(baseline), "--work", str(tmp_path / "work"),
                 "--timeout", timeout, *SPEC, *extra])


@pytest.mark.slow
def test_a_correct_runtime_with_an_empty_baseline_passes(tmp_path, capsys):
    assert gate(tmp_path, FAKE + "ConformingAdapter", "[]\n") == 0
    out = capsys.readouterr().out
    assert "passed: nothing new" in out and re.search(r"\d+ results \(\d+ pass", out)


@pytest.mark.slow
def test_a_new_failure_fails_the_gate_naming_its_case(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", "[]\n", "--junit", str(junit)) == 1
    out = capsys.readouterr().out
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    bad = [r for r in rows if r["verdict"] not in ("pass", "ambiguous", "inconclusive")]
    assert bad and {r["origin"] for r in bad} == {"example:example_3_edge"}
    for row in bad:  # each with its triage class (padconf.judging.triage), as summary.md and the bundles give it
        assert re.search(rf"new: {row['case_id']} \[{row['placement']}\]: mismatch: .*; triage: wrong value\n", out)
    suite = ElementTree.parse(junit).getroot()
    assert int(suite.get("tests")) == len(rows) and int(suite.get("failures")) == len(bad)
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert sorted(failed) == sorted(f"{r['case_id']}[{r['placement']}]" for r in bad)


@pytest.mark.slow
@pytest.mark.parametrize("runtime, verdict", [("CrashOnExampleAdapter", "crash"), ("HangOnExampleAdapter", "timeout")])
def test_a_crash_or_hang_is_new_until_listed(tmp_path, capsys, runtime, verdict):
    assert gate(tmp_path, FAKE + runtime, "[]\n", timeout="1") == 1
    assert f": {verdict}: " in capsys.readouterr().out
    listed = (f"- runtime: '.*{runtime}'\n  verdict: {verdict}\n  origin: example:example_3_edge\n"
              f"  why: planted\n{EXAMPLE_CELLS}")
    assert gate(tmp_path, FAKE + runtime, listed, timeout="1") == 0


@pytest.mark.slow
def test_a_failure_that_does_not_recur_alone_is_flaky_not_new(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))
    assert gate(tmp_path, FAKE + "FlakyOnExampleAdapter", "[]\n") == 0
    out = capsys.readouterr().out
    assert re.search(r"flaky \(not failing the gate\): \S+ \[\w+\]: crash in the run, (pass, )+pass alone", out)
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    assert any(r["verdict"] == "crash" for r in rows)  # the run's own record keeps what happened


@pytest.mark.slow
def test_a_failure_that_recurs_alone_as_another_verdict_says_which(tmp_path, capsys, monkeypatch):
    """A case that timed out in the run (a loaded machine) and gives a wrong value alone is new,
    and its line says what the rerun alone gave: the failure a maintainer will see."""
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))
    assert gate(tmp_path, FAKE + "HangThenWrongOnExampleAdapter", "[]\n", timeout="1") == 1
    out = capsys.readouterr().out
    assert re.search(r"new: \S+ \[\w+\]: timeout: .*; rerun alone, it fails as mismatch\n", out), out
    assert not re.search(r"new: .*: mismatch: .*; rerun alone", out)  # said only where the verdicts differ


@pytest.mark.slow
def test_a_failure_only_in_a_warm_worker_is_new_with_its_poisoner_and_a_listed_pair_passes(tmp_path, capsys):
    runtime = FAKE + "WrongWhenWarmOnExampleAdapter"
    assert gate(tmp_path, runtime, "[]\n") == 1
    out = capsys.readouterr().out
    pairs = re.findall(r"new: (\S+) \[(\w+)\]: mismatch: .*; it recurs only after (\S+) ran in the same worker", out)
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    failed = {(r["case_id"], r["placement"]) for r in rows if r["verdict"] == "mismatch"}
    assert failed and {(c, p) for c, p, _ in pairs} == failed
    # the poisoner bisected out of the worker's history is a case that ran before it in that process
    where = {(r["case_id"], r["placement"]): (r["process"], r["position"]) for r in rows}
    assert all(any(r["case_id"] == poisoner and (r["process"], r["position"]) < where[(c, p)]
                   and r["process"] == where[(c, p)][0] for r in rows) for c, p, poisoner in pairs)
    listed = "".join(f"- runtime: .*\n  verdict: mismatch\n  after: {poisoner}\n  why: a known pair\n"
                     f"  cells: [onnx/Pad-19 edge float {p}]\n" for _, p, poisoner in pairs)
    assert gate(tmp_path, runtime, listed) == 0


@pytest.mark.slow
def test_an_answer_no_reading_gives_fails_the_gate_as_unexplained(tmp_path, capsys):
    assert gate(tmp_path, FAKE + "GarbageOnAmbiguousEdgeAdapter", "[]\n") == 1
    out = capsys.readouterr().out
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    unexplained = [r for r in rows if r["verdict"] == "unexplained"]
    # inconclusive: a refused must-reject case whose twin is no clean control (padconf.cases.classify.repaired_twin)
    assert unexplained and {r["verdict"] for r in rows} <= {"pass", "ambiguous", "unexplained", "inconclusive"}
    for row in unexplained:
        assert f"new: {row['case_id']} [{row['placement']}]: unexplained: edge " in out
        assert "returned an output no reading gives: " in row["detail"] and " gives shape [" in row["detail"]


def test_a_new_failure_is_rerun_once_per_cell_and_class_once_one_recurs():
    class Recorder:  # what confirm asks of a worker; every rerun gives the run's wrong answer again
        def __init__(self):
            self.asked = []

        def run_alone(self, case, placement):
            self.asked.append((case.id, placement))
            return Outcome(case.expected[::-1] + 1), "ok"

    spec = get_spec("onnx/Pad-19")
    cases = [classify(Case("onnx/Pad-19", np.arange(n, dtype=np.float32) + 1, [1, 2], mode="edge"), spec)
             for n in range(2, 7)]
    rows = [judged_row("rt", placement, c, Outcome(c.expected[::-1] + 1), "ok")
            for placement in ("inputs", "folded") for c in cases]
    judgement = judge_rows(rows, [], "rt", set())
    worker = Recorder()
    confirm(judgement, [], cases, worker)
    assert len(judgement.new) == 10 and not judgement.flaky
    assert worker.asked == [(cases[0].id, "inputs"), (cases[0].id, "folded")]  # one rerun a cell


@pytest.mark.slow
def test_a_baseline_knows_what_a_case_does_alone_and_the_gate_passes_on_either(tmp_path, capsys):
    runtime = FAKE + "GarbageOrCrashOnExampleAdapter"
    out = tmp_path / "b.yaml"
    assert main(["baseline", "--runtime", runtime, "--out", str(out), "--work", str(tmp_path / "b"), *SPEC]) == 0
    assert {e["verdict"] for e in yaml.safe_load(out.read_text())} == {"mismatch", "crash"}
    assert gate(tmp_path, runtime, out.read_text()) == 0
    # the run saw garbage, not the crash; a cell where something still fails is not fixed
    assert "fixed: " not in capsys.readouterr().out


@pytest.mark.slow
def test_a_case_answered_differently_from_run_to_run_is_unstable_in_the_baseline_and_never_fixed(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))
    runtime = FAKE + "GarbageOnExampleAdapter"
    out = tmp_path / "b.yaml"
    assert main(["baseline", "--runtime", runtime, "--out", str(out), "--work", str(tmp_path / "b"), *SPEC]) == 0
    assert "; 3 results answered differently from run to run" in out.read_text()
    entries = yaml.safe_load(out.read_text())
    assert [(e["verdict"], e["unstable"], len(e["cells"])) for e in entries] == [("mismatch", True, 3)]
    # garbage's kind of wrong value is its own from run to run: the entry does not pin it
    assert entries[0]["error"].startswith("^values differ first at ") and "lacks" not in entries[0]["error"]
    assert gate(tmp_path, runtime, out.read_text()) == 0
    monkeypatch.setenv("PADCONF_GARBAGE_MISPLACED", "1")
    assert gate(tmp_path, runtime, out.read_text()) == 0
    monkeypatch.delenv("PADCONF_GARBAGE_MISPLACED")
    monkeypatch.setenv("PADCONF_ANSWER_RIGHT", "1")  # one run's garbage happens to be the right answer
    assert gate(tmp_path, runtime, out.read_text()) == 0
    assert "fixed: " not in capsys.readouterr().out
    # without the mark, the entry would read as fixed, which one run cannot show
    assert gate(tmp_path, runtime, out.read_text().replace("  unstable: true\n", "")) == 1
    assert "fixed: " in capsys.readouterr().out


@pytest.mark.slow
def test_a_known_failing_case_answered_otherwise_after_other_cases_is_not_new(tmp_path, capsys):
    runtime = FAKE + "GarbageOrCrashOnExampleAdapter"  # garbage in the run, a crash alone
    crash = f"- runtime: .*\n  verdict: crash\n  why: crashes alone\n{EXAMPLE_CELLS}"
    assert gate(tmp_path, runtime, crash) == 0
    out = capsys.readouterr().out
    assert re.search(r"flaky \(not failing the gate\): \S+ \[\w+\]: mismatch in the run; alone it fails as "
                     r"\S+baseline.yaml:1 forgives \(crash\): a known failing case", out)
    assert gate(tmp_path, runtime, "[]\n") == 1  # unknown alone, it is new


@pytest.mark.slow
def test_a_cell_that_looks_fixed_is_rerun_alone_and_stays_known_if_its_failure_comes_back(tmp_path, capsys):
    listed = f"- runtime: .*\n  verdict: crash\n  why: crashes alone\n{EXAMPLE_CELLS}"
    assert gate(tmp_path, FAKE + "CrashAloneOnExampleAdapter", listed) == 0
    assert re.search(r"flaky \(not failing the gate\): \S+\.yaml:1 still fails in onnx/Pad-19 edge float \w+: "
                     r"\S+ gave pass in the run, crash alone", capsys.readouterr().out)


@pytest.mark.slow
def test_an_entry_that_no_longer_fails_fails_the_gate_as_fixed(tmp_path, capsys):
    listed = f"- runtime: .*\n  verdict: mismatch\n  origin: example:example_3_edge\n  why: planted\n{EXAMPLE_CELLS}"
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", listed) == 0
    assert gate(tmp_path, FAKE + "ConformingAdapter", listed) == 1
    out = capsys.readouterr().out
    assert re.search(r"fixed: \S+baseline.yaml:1: 3 cells now pass: onnx/Pad-19 edge float folded, onnx/Pad-19 edge "
                     r"float initializers, onnx/Pad-19 edge float inputs \(they gave 3 pass\) .*remove them from the "
                     r"baseline", out)


@pytest.mark.slow
def test_a_fixed_line_prints_its_file_and_line_as_they_are(tmp_path, capsys):
    # rich reads ":1234:" as an emoji code; the line number 1234 of a long baseline must stay one
    listed = "\n" * 1233 + "- runtime: .*\n  verdict: crash\n  why: gone\n  cells: [onnx/Pad-19 wrap int8 inputs]\n"
    assert gate(tmp_path, FAKE + "ConformingAdapter", listed) == 1
    assert re.search(r"fixed: \S+baseline\.yaml:1234: 1 cells now pass", capsys.readouterr().out)


@pytest.mark.slow
def test_a_partial_fix_is_fixed_per_cell_and_prune_removes_exactly_those_cells(tmp_path, capsys):
    # the example fails in every placement; the entry also lists a cell where nothing fails
    listed = (f"# reviewed\n- runtime: .*\n  verdict: mismatch\n  why: planted\n{EXAMPLE_CELLS}"
              "  - onnx/Pad-19 constant float inputs\n"
              "- runtime: .*\n  verdict: crash\n  why: gone\n  cells:\n  - onnx/Pad-19 wrap int8 inputs\n")
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", listed) == 1
    out = capsys.readouterr().out
    # (the cell holds context cases too, and constant crops past the axis: ambiguous ones, which conform as well)
    assert re.search(r"fixed: \S+baseline.yaml:2: 1 cells now pass: onnx/Pad-19 constant float inputs \(they gave \d+ "
                     r"pass(, \d+ (ambiguous|inconclusive))*\)", out)
    assert re.search(r"fixed: \S+baseline.yaml:10: 1 cells now pass: onnx/Pad-19 wrap int8 inputs", out)
    path = tmp_path / "baseline.yaml"
    assert main(["baseline", "--runtime", FAKE + "WrongOnExampleAdapter", "--prune", str(path),
                 "--work", str(tmp_path / "prune"), "--timeout", "60", *SPEC]) == 0
    diff = capsys.readouterr().out
    assert path.read_text() == f"# reviewed\n- runtime: .*\n  verdict: mismatch\n  why: planted\n{EXAMPLE_CELLS}"
    assert "-  - onnx/Pad-19 constant float inputs\n" in diff and "-  verdict: crash\n" in diff
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", path.read_text()) == 0


@pytest.mark.slow
def test_baseline_then_gate_passes_and_dropping_an_entry_names_its_cases(tmp_path, capsys, onnxruntime_baseline):
    baseline, work = onnxruntime_baseline  # of onnx/Pad-19, SPEC
    entries = yaml.safe_load(baseline.read_text())
    assert entries and all(e["why"] for e in entries)
    # every entry forgives exactly the cells it was seen failing in
    baseline_run = read_jsonl(work / "results.jsonl")
    assert [breadth(e, baseline_run) for e in load_baseline(baseline)] == [1.0] * len(entries)
    # the suite is the same whatever the seed: a seed-0 baseline gates every seed
    for seed in range(5):
        assert gate(tmp_path, "onnxruntime", baseline.read_text(), "--seed", str(seed)) == 0
    capsys.readouterr()
    dropped = entries.pop(0)
    assert gate(tmp_path, "onnxruntime", yaml.safe_dump(entries)) == 1
    out = capsys.readouterr().out
    rows = read_jsonl(tmp_path / "work" / "results.jsonl")
    dropped, entries = parse_baseline(yaml.safe_dump([dropped])), parse_baseline(yaml.safe_dump(entries))
    freed = [r for r in rows if dropped[0].matches(r) and not any(e.matches(r) for e in entries)]
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
                         "crash": r"^killed by SIG(?:SEGV|ABRT)"}
    # a pattern matches other failures of its class, not failures of another class
    assert re.search(signature["mismatch"], "values differ first at [0, 4]: nan instead of 1.0")
    assert not re.search(signature["mismatch"], "shape [3] instead of [4]")
    # a corrupted heap dies by either signal from run to run of one case; other signals are other classes
    assert re.search(signature["crash"], "killed by SIGABRT; last words: double free or corruption (out)")
    assert not re.search(signature["crash"], "killed by SIGKILL")
    assert not re.search(signature["crash"], "exit code 3")
    # each entry lists the cells its failures were seen in, no more
    assert {e["verdict"]: e["cells"] for e in baseline_entries(rows)} == {
        v: ["onnx/Pad-19 constant float initializers", "onnx/Pad-19 constant float inputs"] for v in signature}


def test_an_error_class_keeps_what_tells_failures_apart():
    def pattern(verdict, text, key="error"):
        return baseline_entries([{"runtime": "rt", "case_id": "c", "verdict": verdict, "placement": "inputs",
                                  "spec": "onnx/Pad-19", "mode": "edge", "dtype": "float", key: text}])[0]["error"]
    ort = "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for Pad({}) node with name ''"
    version = pattern("not-implemented", ort.format(19))
    assert re.search(version, ort.format(19)) and not re.search(version, ort.format(18))
    loading = "Exception during loading: MLDataType for: tensor({}) is not currently registered or supported"
    dtype = pattern("not-implemented", loading.format("float16"))
    assert re.search(dtype, loading.format("float16")) and not re.search(dtype, loading.format("int8"))
    # numbers, shapes and paths are particulars
    shaped = pattern("wrongly-rejected", "/src/pad.cc:120 Pad reflect: pre-pad 3 exceeds [2, 4]")
    assert re.search(shaped, "/other/pad.cc:98 Pad reflect: pre-pad 7 exceeds [5, 1, 2]")
    # an unexplained answer: the undefined point and what the runtime did, not the readings' values
    odd = "mixed_sign_pads: returned an output no reading gives: crop_first gives shape [3] [1.0, {}, 1.0]"
    unexplained = pattern("unexplained", odd.format("8.52e-39"), "detail")
    assert re.search(unexplained, odd.format("-95.43")) and not re.search(unexplained, "mixed_sign_pads: rejected it")
    # a node's generated name (OpenVINO counts one serial up per process) is a particular: one failure is one
    # distinct failure whichever model's nodes it names; an op's version ('Pad_18', onnx's evaluator) is not
    split = ("[CPU] Split node with name 'Split_{}' Check 'dimension_at_axis % num_splits == 0' failed: While "
             "validating node 'opset1::Split Split_{} (opset1::Convert Convert_{}[0]:i32[?])")
    named = pattern("wrongly-rejected", split.format(21253, 21253, 24890))
    assert re.search(named, split.format(42689, 42689, 46326)) and not re.search(named, split.format("x", 1, 2))
    rows = [{"runtime": "rt", "verdict": "wrongly-rejected", "error": split.format(n, n, n + 3637)}
            for n in (21253, 22048, 42689, 37851)]
    assert len({distinct_failure(r) for r in rows}) == 1
    ref = "TypeError: Issues with types and attributes ['mode'] (operator 'Pad_{}')."
    versioned = pattern("wrongly-rejected", ref.format(18))
    assert re.search(versioned, ref.format(18)) and not re.search(versioned, ref.format(11))
    crash = pattern("crash", "killed by SIGSEGV; last words: free(): invalid pointer")
    assert re.search(crash, "killed by SIGABRT") and not re.search(crash, "killed by SIGFPE")
    # a wrong output: the kind of wrong value, not which values
    kinds = {}
    for name, got in (("nan", [1.0, np.nan, 3.0]), ("misplaced", [1.0, 3.0, 2.0]), ("lacks", [1.0, 9.0, 3.0])):
        case = classify(Case("onnx/Pad-19", np.array([1.0, 2.0, 3.0], np.float32), [0, 0], mode="edge"),
                        get_spec("onnx/Pad-19"))
        detail = judge(case, Outcome(np.array(got, np.float32))).detail
        kinds[name] = (detail, pattern("mismatch", detail, "detail"))
    assert ("(NaN where numbers belong)" in kinds["nan"][0]
            and "(the expected values misplaced)" in kinds["misplaced"][0])
    assert "(values the expected output lacks)" in kinds["lacks"][0]
    for name, (_detail, regex) in kinds.items():
        assert [other for other, (text, _) in kinds.items() if re.search(regex, text)] == [name]


@pytest.mark.parametrize("text, where, what", [
    ("- runtime: rt\n  verdict: mismatch\n  why: x\n  colour: red\n", ":1", "unknown key 'colour'"),
    ("- runtime: rt\n  verdict: mismatch\n  why: x\n  cells: [a b c d]\n- runtime: rt\n  verdict: pass\n  why: y\n"
     "  cells: [a b c d]\n", ":5", "not a failure"),
    ("- runtime: rt\n  verdict: crash\n", ":1", "lacks 'why'"),
    ("- runtime: rt\n  verdict: crash\n  why: x\n", ":1", "lacks 'cells'"),
    ("- runtime: rt\n  verdict: crash\n  why: x\n  cells:\n  - onnx/Pad-19 edge float\n", ":5",
     "a cell is 'SPEC MODE DTYPE PLACEMENT'"),
    ("- runtime: rt\n  verdict: crash\n  why: x\n  cells: [a b c d]\n  error: '(unclosed'\n", ":1",
     "error: not a regular expression"),
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


@pytest.mark.slow
def test_shards_are_disjoint_and_complete():
    ids = [c.id for c in gate_cases([get_spec("onnx/Pad-19"), get_spec("openvino/Pad-12")])]
    parts = [[i for i in ids if in_shard(i, (k, 3))] for k in (1, 2, 3)]
    assert all(parts) and sorted(sum(parts, [])) == sorted(ids)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(Exception, match="expected I/N"):
            parse_shard(bad)


def test_a_signature_entrys_cells_are_judged_only_where_their_versions_whole_suite_ran(tmp_path):
    entry = parse_baseline("- runtime: rt\n  verdict: mismatch\n  why: x\n"
                           "  cells: [onnx/Pad-19 edge float inputs, onnx/Pad-18 edge float inputs]\n")
    rows = [{"runtime": "rt", "case_id": "a", "verdict": "pass", "placement": "inputs", "spec": "onnx/Pad-19",
             "mode": "edge", "dtype": "float", "origin": "hypothesis"}]
    judged = judge_rows(rows, entry, "rt", set())  # one shard
    assert judged.unjudged == entry and not judged.fixed
    judged = judge_rows(rows, entry, "rt", {"onnx/Pad-19"})  # Pad-19's cell passes; Pad-18's may still fail
    assert judged.unjudged == entry and [(f.cells, f.stale) for f in judged.fixed] == [([Cell.of(rows[0])], [])]
    judged = judge_rows(rows, entry, "rt", {"onnx/Pad-18", "onnx/Pad-19"})  # Pad-18's cell holds no case
    assert not judged.unjudged
    assert [(f.cells, f.stale) for f in judged.fixed] == [([Cell.of(rows[0])],
                                                           [Cell.parse("onnx/Pad-18 edge float inputs")])]
    with pytest.raises(Exception, match="never passes on nothing"):
        judge_rows([], entry, "rt", {"onnx/Pad-19"})


def test_an_explored_failure_is_forgiven_in_any_placement_of_a_listed_cells_spec_mode_and_dtype():
    entry, = parse_baseline("- runtime: rt\n  verdict: mismatch\n  why: x\n  cells: [onnx/Pad-19 edge float inputs]\n")
    row = {"runtime": "rt", "case_id": "a", "verdict": "mismatch", "placement": "folded", "spec": "onnx/Pad-19",
           "mode": "edge", "dtype": "float", "origin": "explore"}
    assert entry.matches(row) and entry.matches({**row, "origin": "explore:replayed"})
    assert not entry.matches({**row, "origin": "hypothesis"})  # the suite's case: its placement is a cell of its own
    assert not entry.matches({**row, "dtype": "float16"}) and not entry.matches({**row, "mode": "reflect"})


@pytest.mark.slow
def test_sharded_gates_merge_into_the_whole_judgement(tmp_path, capsys):
    listed = f"- runtime: .*\n  verdict: mismatch\n  origin: example:example_3_edge\n  why: planted\n{EXAMPLE_CELLS}"
    (tmp_path / "b.yaml").write_text(listed)
    dirs = []
    for k in (1, 2):
        dirs.append(str(tmp_path / f"s{k}"))
        code = main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                     "--work", dirs[-1], "--shard", f"{k}/2", *SPEC])
        assert code == 0  # a signature entry spans shards: neither shard can call it fixed
    assert "not judged here" in capsys.readouterr().out
    assert json.loads((tmp_path / "s1" / "gate.json").read_text())["shard"] == [1, 2]
    assert main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                 *SPEC, "--results", *dirs]) == 1
    assert "fixed: " in capsys.readouterr().out
    for given, says in (([dirs[0]], "shards 2 of 2 missing"), ([dirs[0], dirs[0]], "shards 2 of 2 missing")):
        assert main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                     *SPEC, "--results", *given]) == 2  # part of the suite is never judged as the whole
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err


@pytest.mark.slow
def test_a_shard_cut_short_is_never_judged_as_the_whole(tmp_path, capsys):
    """A shard's run killed part way, or its directory copied in part, holds fewer results than
    its run wrote; judged anyway, the failures it lacks would pass the gate. run.json counts the
    results once the run has finished, and --results takes no shard whose count differs or is
    missing."""
    (tmp_path / "b.yaml").write_text("[]\n")
    dirs = [str(tmp_path / f"s{k}") for k in (1, 2)]
    for k, work in enumerate(dirs, 1):
        assert main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                     "--work", work, "--shard", f"{k}/2", *SPEC]) == 0
    judge = ["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
             *SPEC, "--results", *dirs]
    assert main(judge) == 0
    capsys.readouterr()
    results, about = tmp_path / "s2" / "results.jsonl", tmp_path / "s2" / "run.json"
    whole = results.read_text()
    results.write_text(whole[:whole.rindex("\n", 0, -1) + 1])  # its last row gone
    signed_again(tmp_path / "s2")
    assert main(judge) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"results of {FAKE}ConformingAdapter where its run wrote" in err
    results.write_text(whole)
    about.write_text(json.dumps({k: v for k, v in json.loads(about.read_text()).items() if k != "results"}))
    signed_again(tmp_path / "s2")
    assert main(judge) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did not finish" in err


@pytest.mark.slow
def test_results_over_every_shard_confirm_as_an_unsharded_gate_does(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))  # crashes twice, then not
    runtime, dirs = FAKE + "FlakyOnExampleAdapter", []
    for k in (1, 2):
        dirs.append(str(tmp_path / f"s{k}"))
        assert gate(tmp_path, runtime, "[]\n", "--work", dirs[-1], "--shard", f"{k}/2") == 0
    capsys.readouterr()
    # the crash the shard's run recorded does not recur alone, nor after its worker's history
    assert main(["gate", "--runtime", runtime, "--baseline", str(tmp_path / "baseline.yaml"), *SPEC,
                 "--results", *dirs]) == 0
    assert re.search(r"flaky \(not failing the gate\): \S+ \[\w+\]: crash in the run, (pass, )+pass alone",
                     capsys.readouterr().out)


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_shards_cases_are_bounded_together_before_the_gate_reruns_them(tmp_path, capsys, monkeypatch):
    """A gate's shards come from other jobs: every array of every case they hold counts against
    one total before any is decoded for the confirming reruns (a planted cases.jsonl decoded
    2.77 GB)."""
    import padconf.cases.case
    runtime = FAKE + "WrongOnExampleAdapter"
    assert gate(tmp_path, runtime, "[]\n") == 1  # a new failure: the gate reruns it from the shard's cases
    capsys.readouterr()
    monkeypatch.setattr(padconf.cases.case, "MAX_CASES_BYTES", 100)
    assert main(["gate", "--runtime", runtime, "--baseline", str(tmp_path / "baseline.yaml"),
                 *SPEC, "--results", str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than 100 bytes" in err, err


@pytest.mark.slow
def test_a_baseline_with_no_entry_for_the_gated_runtime_says_so_in_one_line(tmp_path, capsys):
    """A baseline made for another runtime (or under another name) forgives nothing: the gate says
    why its every failure is new, in one line naming the runtimes the baseline speaks of."""
    other = "- runtime: onnxruntime\n  verdict: mismatch\n  why: planted\n" + EXAMPLE_CELLS
    assert gate(tmp_path, FAKE + "WrongOnExampleAdapter", other) == 1
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if "holds no entry for runtime" in line]
    assert f"runtime {FAKE}WrongOnExampleAdapter (its entries are for onnxruntime)" in line
    mine = other.replace("runtime: onnxruntime", f"runtime: {FAKE.replace('.', '[.]')}WrongOnExampleAdapter")
    (tmp_path / "named").mkdir()
    gate(tmp_path / "named", FAKE + "WrongOnExampleAdapter", mine)
    assert "holds no entry" not in capsys.readouterr().out


@pytest.mark.slow
def test_the_gates_triage_reads_the_runs_controls(tmp_path, capsys):
    """The gate's run controls its distinct failures as any run does: where the data comes back
    wrong through Identity too, the gate's line says not Pad-specific, as summary.md does."""
    assert gate(tmp_path, FAKE + "WrongThroughIdentityOnExampleAdapter", "[]\n") == 1
    news = [line for line in capsys.readouterr().out.splitlines() if line.startswith("new: ")]
    assert news and all(line.endswith("triage: not Pad-specific") for line in news)


def test_example_db_names_a_python_file_by_its_path(tmp_path, monkeypatch):
    """docs/ci.md's ``--example-db ci_db.py:DB``: the team's file, run from the path named, the
    working directory left off sys.path (``ci_db:DB`` names an installed module only)."""
    import sys

    from hypothesis.database import InMemoryExampleDatabase

    from padconf.gate.explore import example_database

    team = tmp_path / "team"
    team.mkdir()
    (team / "ci_db.py").write_text("from hypothesis.database import InMemoryExampleDatabase\n"
                                   "DB = InMemoryExampleDatabase()\nNOT_A_DB = 3\n")
    monkeypatch.chdir(team)
    assert isinstance(example_database("ci_db.py:DB"), InMemoryExampleDatabase)
    assert isinstance(example_database(str(team / "ci_db.py") + ":DB"), InMemoryExampleDatabase)
    assert "ci_db" not in sys.modules and str(team) not in sys.path and "" not in sys.path[:1]
    for where, words in (("ci_db:DB", "No module named 'ci_db'"), ("ci_db.py:NOT_A_DB", "not a hypothesis"),
                         ("nothere.py:DB", "no file nothere.py"), ("ci_db.py:MISSING", "has no attribute")):
        with pytest.raises(PadconfError, match=f"^--example-db {re.escape(where)}: .*{words}"):
            example_database(where)


@pytest.mark.parametrize("theirs", ["results.jsonl", "run.json"])
def test_the_gate_leaves_a_folder_holding_someone_elses_run_files_as_it_was(tmp_path, capsys, theirs):
    """A working folder someone else prepared may hold .padconf/gate/RUNTIME with their files
    (a results.jsonl with no gate.json: not a gate's): one line and exit 2, the file as it was,
    before anything runs (it was overwritten before)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / theirs).write_text("someone else's\n")
    assert gate(tmp_path, FAKE + "ConformingAdapter", "[]\n") == 2
    err = capsys.readouterr().err
    assert f"not a gate's ({theirs}" in err and "--work" in err and err.count("\n") == 1, err
    assert (work / theirs).read_text() == "someone else's\n" and sorted(p.name for p in work.iterdir()) == [theirs]


def test_a_gate_whose_every_result_is_inconclusive_passes_on_nothing_and_is_exit_2(tmp_path, capsys):
    """`-k uint4` on onnx's evaluator selects one case, a refusal that proves nothing
    (inconclusive): the gate said "passed: nothing new", and the plugin "1 skipped", exit 0
    (attack round III). A gate passes on results that conclude; the plugin's session is a usage error."""
    import subprocess
    import sys
    (tmp_path / "b.yaml").write_text("[]\n")
    capsys.readouterr()
    assert main(["gate", "--runtime", "onnx-reference", "--baseline", str(tmp_path / "b.yaml"), *SPEC,
                 "-k", "uint4", "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing judged" in err, err
    done = subprocess.run([sys.executable, "-I", "-m", "pytest", "-c", os.devnull, "--noconftest", "-p",
                           "no:cacheprovider", "--pyargs", "padconf.pytest", "--padconf-runtime", "onnx-reference",
                           "--padconf-spec", "onnx/Pad-19", "--padconf-k", "uint4", "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 4 and "nothing judged" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
