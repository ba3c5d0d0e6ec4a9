"""A verdict read back is derived again from what its row records, wherever it can be: a row about
an output is judged afresh on that output against padconf's reference of its case
(``padconf.judging.records.rederive_rows``, for report, minimize and gate --results); a control
row's ``fails_too`` must be the one its verdict gives; and minimize labels a failure only from
the controls it ran itself (docs/reliability.md, "One choke point per class")."""
from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from padconf.cli import main
from padconf.judging.triage import Triage
from tests.robustness.test_hostile_inputs import signed_again

WRONG = "tests.fake_adapters:WrongValuesAdapter"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("forged") / "run"
    code = main(["run", "--runtime", WRONG, "--spec", "onnx/Pad-19", "--max-examples", "2", "--out", str(out)])
    assert code in (0, 1)
    return out


def _copy_with(run, tmp_path, name: str, change) -> tuple:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    rows = [json.loads(line) for line in (copy / name).read_text().splitlines()]
    number = change(rows)
    (copy / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return copy, number


def _first(rows, test) -> int:
    return next(k for k, r in enumerate(rows) if test(r))


def _report(copy, tmp_path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["report", str(copy), "--md", str(tmp_path / "r.md")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("seconds", [-5, float("inf"), float("nan"), 1e12])
def test_a_rows_seconds_that_no_run_takes_is_one_line(run, tmp_path, capsys, seconds):
    """A row's seconds negative, infinite, NaN or past 1e9 was read (attack round E's
    c7_stats_and_seconds_charge)."""
    def forge(rows):
        rows[0]["seconds"] = seconds
        return 1
    copy, number = _copy_with(run, tmp_path, "results.jsonl", forge)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}" in err and "seconds" in err, err


def test_a_failure_flipped_to_pass_with_its_output_is_one_line(run, tmp_path, capsys):
    was = []

    def flip(rows):
        k = _first(rows, lambda r: r["verdict"] in ("mismatch", "wrongly-accepted") and r.get("output"))
        was.append(rows[k]["verdict"])
        rows[k]["verdict"], rows[k]["difference"] = "pass", None
        return k + 1
    copy, number = _copy_with(run, tmp_path, "results.jsonl", flip)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"row {number}: verdict pass, but the output it records is {was[0]}" in err


@pytest.mark.parametrize("first", [True, False], ids=["pass before the failure", "pass after it"])
def test_a_second_row_of_one_case_with_another_verdict_is_one_line(run, tmp_path, capsys, first):
    """A pass appended (or put first) for a failing (runtime, placement, case) was read as the
    row of that key, the other left out as a duplicate (attack round D)."""
    def duplicate(rows):
        k = _first(rows, lambda r: r["verdict"] in ("mismatch", "wrongly-accepted"))
        twin = {**rows[k], "verdict": "pass", "difference": None, "output": None}
        rows.insert(k if first else k + 1, twin)
        return k + 2
    copy, number = _copy_with(run, tmp_path, "results.jsonl", duplicate)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"row {number}: a second result of runtime" in err and "with another verdict" in err, err


def test_a_pass_flipped_to_a_failure_without_an_output_is_one_line(run, tmp_path, capsys):
    def flip(rows):
        k = _first(rows, lambda r: r["verdict"] == "pass")
        rows[k]["verdict"] = "wrongly-accepted"
        return k + 1
    copy, number = _copy_with(run, tmp_path, "results.jsonl", flip)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}: verdict wrongly-accepted records no output" in err


def test_an_unexplained_rejection_needs_no_output_to_read_back(run, tmp_path, capsys):
    """A runtime refusing an ambiguous case, which no reading does, is unexplained on no output:
    padconf's own runs hold such rows (a wrap Pad with mixed-sign pads on onnx's evaluator), and
    refusing them refused every default run."""
    def refuse(rows):
        k = _first(rows, lambda r: r["verdict"] == "pass")
        rows[k].update(verdict="unexplained", output=None, error="ValueError: index can't contain negative values")
        return k + 1
    copy, _ = _copy_with(run, tmp_path, "results.jsonl", refuse)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 0 and not err, err


def test_an_honest_run_reads_back_whole(run, tmp_path, capsys):
    code, err = _report(run, tmp_path, capsys)
    assert code in (0, 1) and not err, err


def test_a_control_whose_fails_too_its_verdict_does_not_give_is_one_line(run, tmp_path, capsys):
    def forge(rows):
        rows[0]["verdict"] = "pass"  # a failing control said to pass, fails_too kept
        rows[0]["fails_too"] = True
        return 1
    copy, _ = _copy_with(run, tmp_path, "controls.jsonl", forge)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "controls.jsonl: row 1: fails_too" in err, err


def test_minimize_labels_only_from_the_controls_it_ran():
    """A run's control (controls.jsonl) decided the bundle's triage where minimize's own attempt
    had none: a forged control made a Pad bug "not Pad-specific", or the other way."""
    from padconf.minimize.bundle.report import triage_with_fact
    row = {"verdict": "mismatch", "difference": "values", "runtime": "x", "spec": "onnx/Pad-19", "mode": "constant",
           "dtype": "float", "placement": "inputs", "case_id": "c", "origin": "example"}
    forged = {"verdict": "mismatch", "fails_too": True, "operand": "data"}
    shrunk = SimpleNamespace(final=SimpleNamespace(row=row, control=None))
    assert triage_with_fact(shrunk, {"control": forged})[0] != Triage.NOT_PAD_SPECIFIC
    ran = SimpleNamespace(final=SimpleNamespace(row=row, control=forged))
    assert triage_with_fact(ran, None)[0] == Triage.NOT_PAD_SPECIFIC


@pytest.mark.parametrize("change", [{"dtype": "bfloat16"}, {"mode": "wrap"}, {"kind": "must-reject"},
                                    {"shape": [7, 7]}, {"origin": "example:made-up"}])
def test_a_rows_copy_of_its_case_that_contradicts_the_case_is_one_line(run, tmp_path, capsys, change):
    """A failure relabelled with another dtype was shown under that dtype's cell; relabelled
    must-reject (and pass) it disappeared from the report."""
    def edit(rows):
        k = _first(rows, lambda r: r["verdict"] != "pass" and all(r.get(key) != v for key, v in change.items()))
        rows[k].update(change)
        return k + 1
    copy, number = _copy_with(run, tmp_path, "results.jsonl", edit)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}: its {next(iter(change))}" in err, err


def test_an_inconclusive_row_on_no_ground_its_case_can_have_is_one_line(run, tmp_path, capsys):
    def edit(rows):
        k = _first(rows, lambda r: r["verdict"] == "pass" and r.get("kind") == "defined")
        rows[k]["verdict"], rows[k]["note"] = "inconclusive", "padconf's own fault, not the runtime's answer: x"
        return k + 1
    copy, number = _copy_with(run, tmp_path, "results.jsonl", edit)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}: inconclusive on no grounds" in err, err


def test_gate_results_runs_again_what_a_shard_calls_padconfs_own_fault(tmp_path, capsys):
    """A shard's failures relabelled inconclusive as padconf's own fault (which fails no gate)
    passed with nothing judged: the join runs each such case again."""
    from padconf.judging.verdicts import OWN_FAULT
    runtime, spec = "tests.fake_adapters:WrongOnExampleAdapter", ["--spec", "onnx/Pad-19"]
    (tmp_path / "b.yaml").write_text("[]\n")
    judge = ["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), *spec]
    assert main([*judge, "--work", str(tmp_path / "w"), "--timeout", "5"]) == 1
    rows = [json.loads(line) for line in (tmp_path / "w" / "results.jsonl").read_text().splitlines()]
    failing = [r for r in rows if r["verdict"] == "mismatch"]
    assert failing
    for r in failing:
        r.update(verdict="inconclusive", detail=f"{OWN_FAULT}: made up", difference=None, output=None)
    (tmp_path / "w" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "w" / "controls.jsonl").write_text("")  # their controls, of failures no row has now, would be refused
    signed_again(tmp_path / "w")
    capsys.readouterr()
    assert main([*judge, "--results", str(tmp_path / "w")]) == 1
    assert "mismatch" in capsys.readouterr().out


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """A real run whose failures record no output: onnx's evaluator refuses the bfloat16 cases
    (wrongly-rejected), each with its control."""
    out = tmp_path_factory.mktemp("refusals") / "run"
    code = main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "3",
                 "--out", str(out)])
    assert code in (0, 1)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert any(r["verdict"] == "wrongly-rejected" and r["output"] is None for r in rows)
    assert (out / "controls.jsonl").read_text()
    return out


@pytest.mark.parametrize("claim", [{"verdict": "pass"}, {"verdict": "pass", "output_digest": "0" * 64},
                                   {"verdict": "ambiguous", "matched": []},
                                   {"verdict": "ambiguous", "matched": ["crop_beyond_dim=reject"]}])
def test_a_failure_on_no_output_relabelled_conforming_is_one_line(refusals, tmp_path, capsys, claim):
    """A failure that records no output (a refusal, a crash), relabelled a pass or an ambiguity,
    was accepted: a pass recorded nothing to derive it from. Every output's digest is recorded,
    and a conforming verdict is held to its reading's (gate_shard_verdicts_flipped_pass)."""
    def flip(rows):
        k = _first(rows, lambda r: r["verdict"] == "wrongly-rejected")
        rows[k].update(claim, error=None)
        return k + 1
    copy, number = _copy_with(refusals, tmp_path, "results.jsonl", flip)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}: verdict {claim['verdict']}" in err, err


def test_a_pass_is_derived_again_from_its_digest_and_an_old_row_without_one_is_refused(refusals, tmp_path, capsys):
    def other(rows):
        k = _first(rows, lambda r: r["verdict"] == "pass" and r.get("kind") == "defined")
        rows[k]["output_digest"] = "ab" * 32
        return k + 1
    copy, number = _copy_with(refusals, tmp_path, "results.jsonl", other)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and f"row {number}: verdict pass, but the output it was given on" in err, err

    def old(rows):
        k = _first(rows, lambda r: r["verdict"] == "pass" and r.get("kind") == "defined")
        del rows[k]["output_digest"]
        return k + 1
    copy, number = _copy_with(refusals, tmp_path / "old", "results.jsonl", old)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "padconf 0.1.0 from before output digests" in err, err
    code, err = _report(refusals, tmp_path, capsys)
    assert code in (0, 1) and not err, err


def test_a_row_of_a_runtime_run_json_does_not_name_is_one_line(refusals, tmp_path, capsys):
    """A row of a runtime the run never started (a failure, or a pass) was counted
    (row_of_runtime_run_did_not_run); so was any row where run.json was removed."""
    def add(rows):
        rows.append({**rows[0], "runtime": "onnxruntime"})
        return len(rows)
    copy, _ = _copy_with(refusals, tmp_path, "results.jsonl", add)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "runtime 'onnxruntime', which run.json does not name" in err
    capsys.readouterr()
    assert main(["run", "--resume", "--out", str(copy)]) == 2
    assert "runtime 'onnxruntime', which run.json does not name" in capsys.readouterr().err
    (copy / "run.json").unlink()
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "no run.json, which names the runtimes" in err


@pytest.mark.parametrize(("forge", "says"), [
    ({"verdict": "skipped", "detail": "the adapter cannot express bfloat16 here", "error": None},
     "skipped on onnx/Pad-19 bfloat16, which it runs and never skips at run time"),
    ({"placement": "folded"}, "placement folded, which it lacks"),
])
def test_a_row_the_runtimes_adapter_never_writes_is_one_line(refusals, tmp_path, capsys, forge, says):
    """onnx's evaluator runs bfloat16, in the inputs placement only, and skips no case at run
    time: its refusals relabelled skipped (a failure the gate then never sees), or a pass copied
    into a placement it lacks, were read as its results (attack round F). A run's rows are held
    to what the runtime's adapter says it runs (supports, placements, skips_at_run_time)."""
    def change(rows):
        k = _first(rows, lambda r: r["verdict"] == "wrongly-rejected")
        rows[k].update(forge)
        return k + 1
    copy, number = _copy_with(refusals, tmp_path, "results.jsonl", change)
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}: a result of 'onnx-reference' that it never " \
        f"writes: {says}" in err, err


def test_every_registered_runtime_and_variant_says_what_it_runs_as_the_reader_asks_it():
    """The reader holds each row to its runtime's adapter, made without starting it
    (registered_adapter): the version converter's supports() read the variant's settings, which
    an adapter made without them lacked, and every run of it ended in padconf's own fault."""
    from padconf.adapters import adapter_class, registered_adapter, registry
    for name in registry():
        variants = [name, *(f"{name}[{o}={v}]" for o, values in adapter_class(name).options.items() for v in values)]
        for runtime in variants:
            adapter = registered_adapter(runtime)
            assert adapter is not None and adapter.name == runtime
            for spec in ("onnx/Pad-2", "onnx/Pad-19", "openvino/Pad-12", "torch/Pad-2", "tf/Pad-2"):
                assert adapter.supports(spec, "float") is None or isinstance(adapter.supports(spec, "float"), str)
    # and a variant is asked as itself: converting down from Pad-2 there is nothing to convert to
    assert registered_adapter("onnx-version-converter").supports("onnx/Pad-2", "float") is None
    assert registered_adapter("onnx-version-converter[direction=down]").supports("onnx/Pad-2", "float")


def test_a_run_json_naming_spec_versions_its_rows_are_not_of_is_one_line(refusals, tmp_path, capsys):
    """run.json's specs edited (to one no row is of, or one padconf does not know) reported the
    rows as a run of them (attack round E's c5_runjson_types_report)."""
    copy = tmp_path / "run"
    shutil.copytree(refusals, copy)
    doc = json.loads((copy / "run.json").read_text())
    for specs in (["onnx/Pad-18"], ["onnx/Pad-999"]):
        (copy / "run.json").write_text(json.dumps({**doc, "specs": specs}))
        code, err = _report(copy, tmp_path, capsys)
        assert code == 2 and err.count("\n") == 1 and "which run.json's specs do not name" in err, err


def test_a_runtimes_rows_taken_out_show_as_part_of_a_run_however_the_count_is_edited(tmp_path, capsys):
    """One runtime's rows taken out of a run of two, run.json's count in all edited to match, was
    reported as the whole run (attack round E's c7_runtime_rows_dropped): run.json counts each
    runtime's rows, so the rows left are part of a run, whichever count is edited."""
    out = tmp_path / "two"
    assert main(["run", "--runtime", "onnx-reference", "--runtime", WRONG, "--spec", "onnx/Pad-19",
                 "--max-examples", "2", "--out", str(out)]) in (0, 1)
    doc = json.loads((out / "run.json").read_text())
    assert set(doc["results"]) == {"onnx-reference", WRONG} and all(doc["results"].values())
    code, err = _report(out, tmp_path, capsys)
    assert code in (0, 1) and "Part of a run" not in (tmp_path / "r.md").read_text()
    copy, _ = _copy_with(out, tmp_path, "results.jsonl", lambda rows: rows.__setitem__(
        slice(None), [r for r in rows if r["runtime"] != WRONG]))
    controls = [json.loads(line) for line in (copy / "controls.jsonl").read_text().splitlines()]
    (copy / "controls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in controls
                                                 if c["failure"][0] != WRONG))  # its controls taken out too
    left = doc["results"]["onnx-reference"]
    for count, said in [(doc["results"], f"it holds 0 results of {WRONG} where its run wrote {doc['results'][WRONG]}"),
                        (left, f"its run.json counts {left} results in all, not each runtime's"),
                        ({"onnx-reference": left}, "its run.json counts the results of other runtimes than it ran")]:
        (copy / "run.json").write_text(json.dumps({**doc, "results": count}))
        code, err = _report(copy, tmp_path, capsys)
        assert code in (0, 1) and not err, err
        assert f"**Part of a run only:** {said}" in (tmp_path / "r.md").read_text()


def _controls(refusals, tmp_path, change):
    copy = tmp_path / "run"
    shutil.copytree(refusals, copy)
    rows = [json.loads(line) for line in (copy / "controls.jsonl").read_text().splitlines()]
    change(rows)
    (copy / "controls.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return copy


@pytest.mark.parametrize("forge, problem", [
    (lambda rows: rows.append(dict(rows[0])), "a second control of failure"),
    (lambda rows: rows[0].update(failure=["onnx-reference", "crash", "made up"]), "which no failing row"),
    (lambda rows: rows[0].update(case_id="onnx/Pad-19:constant:float:000000000000"), "not of its failure's first"),
    (lambda rows: rows[0].update(operand="pads"), "none of case"),
    (lambda rows: rows[0].update(verdict="crash", fails_too=True, error=None), "on no output says no error"),
])
def test_a_control_that_cannot_be_derived_again_is_one_line(refusals, tmp_path, capsys, forge, problem):
    """A forged controls.jsonl made a failure not Pad-specific, out of the list of failures to act
    on (controls_forged_hide_untriaged): a control must be of a failure of the run, on its first
    case, one of that case's experiments, and its verdict what its recorded output gives."""
    code, err = _report(_controls(refusals, tmp_path, forge), tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and "controls.jsonl: row" in err and problem in err, err


def test_a_control_said_to_fail_on_the_right_output_is_one_line(refusals, tmp_path, capsys):
    """A control's verdict about an output is judged again on the output it records: the data
    itself through Identity is a pass, whatever the control says."""
    cases = {c["id"]: c for c in map(json.loads, (refusals / "cases.jsonl").read_text().splitlines())}

    def forge(rows):
        rows[0].update(verdict="mismatch", fails_too=True, error=None, output=cases[rows[0]["case_id"]]["data"])
    code, err = _report(_controls(refusals, tmp_path, forge), tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "controls.jsonl: row 1: verdict mismatch, but the output it records is pass" in err, err


def test_a_control_about_an_output_it_does_not_record_is_not_attached(refusals, tmp_path, capsys):
    """A control said to fail with a wrong output, which it does not record, cannot be derived
    again: its failure stays one to act on."""
    from padconf.judging.failure import distinct_failure
    from padconf.run.rundir import load_run
    first = json.loads((refusals / "controls.jsonl").read_text().splitlines()[0])
    failure = tuple(first["failure"])
    honest = [r for r in load_run(refusals).rows if r["verdict"] != "pass" and distinct_failure(r) == failure]
    assert honest and all(r["control"] == first for r in honest)
    forged = load_run(_controls(refusals, tmp_path, lambda rows: rows[0].update(
        verdict="mismatch", fails_too=True, error=None, output=None)))
    held = [r for r in forged.rows if r["verdict"] != "pass" and distinct_failure(r) == failure]
    assert len(held) == len(honest) and not any("control" in r for r in held)


def test_a_gate_shards_refusals_relabelled_passes_are_one_line(tmp_path, capsys):
    """A shard's failures that record no output (refusals), relabelled pass with their controls
    removed, passed the gate (gate_shard_verdicts_flipped_pass): each pass is derived again from
    its output's digest where the shards are joined."""
    runtime, spec = "tests.fake_adapters:RefusesEndCropAdapter", ["--spec", "onnx/Pad-19"]
    (tmp_path / "b.yaml").write_text("[]\n")
    judge = ["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), *spec]
    assert main([*judge, "--work", str(tmp_path / "w"), "--timeout", "5"]) == 1
    rows = [json.loads(line) for line in (tmp_path / "w" / "results.jsonl").read_text().splitlines()]
    failing = [k for k, r in enumerate(rows) if r["verdict"] == "wrongly-rejected"]
    assert failing and all(rows[k]["output_digest"] is None for k in failing)
    for k in failing:
        rows[k].update(verdict="pass", error=None, detail=None)
    (tmp_path / "w" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "w" / "controls.jsonl").write_text("")
    signed_again(tmp_path / "w")
    capsys.readouterr()
    assert main([*judge, "--results", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--results: row {failing[0] + 1}: verdict pass on no output" in err, err


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory):
    """A real IREE run whose compile budget (two models) leaves most cases out."""
    out = tmp_path_factory.mktemp("budgeted") / "run"
    code = main(["run", "--runtime", "iree", "--spec", "onnx/Pad-19", "--max-examples", "3",
                 "--compile-budget", "2", "--out", str(out)])
    assert code in (0, 1)
    return out


@pytest.mark.parametrize("forge", ["a compiled case's failure", "another budget's words", "a run compiling all"])
def test_a_compile_budget_skip_the_runs_budget_does_not_write_is_one_line(budgeted, tmp_path, capsys, forge):
    """A compiler's failure relabelled "not compiled: budget" (the gate then never sees it) was
    read as the budget's skip: the budget's choice is derived again from the run's cases."""
    from padconf.run.compile_budget import not_compiled_why
    copy = tmp_path / "run"

    def change(rows):
        if forge == "a compiled case's failure":
            k = _first(rows, lambda r: r["verdict"] not in ("skipped", "pass"))
            rows[k].update(verdict="skipped", detail=not_compiled_why(2), error=None, output=None, difference=None)
        elif forge == "another budget's words":
            k = _first(rows, lambda r: (r.get("detail") or "").startswith("not compiled"))
            rows[k]["detail"] = not_compiled_why(200)
        else:
            k = _first(rows, lambda r: (r.get("detail") or "").startswith("not compiled"))
        return k + 1
    copy, number = _copy_with(budgeted, tmp_path, "results.jsonl", change)
    if forge == "a run compiling all":
        doc = json.loads((copy / "run.json").read_text())
        (copy / "run.json").write_text(json.dumps({**doc, "compile_budget": "all"}))
    code, err = _report(copy, tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and f"row {number}: " in err and "compile budget" in err, err
    code, err = _report(budgeted, tmp_path, capsys)
    assert code in (0, 1) and not err, err



@pytest.mark.parametrize("forge", ["defined relabelled must-reject", "expected output edited"])
@pytest.mark.parametrize("command", ["report", "resume"])
def test_a_case_classified_otherwise_than_the_reference_derives_is_one_line(run, tmp_path, capsys, forge, command):
    """A failing case relabelled must-reject in cases.jsonl, its rows relabelled alike and their
    refusal made a pass, hid a failure; so did an expected output edited to the runtime's answer.
    Every case read back is classified again by the reference (rundir.decoded_cases)."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    rows = [json.loads(line) for line in (copy / "results.jsonl").read_text().splitlines()]
    docs = [json.loads(line) for line in (copy / "cases.jsonl").read_text().splitlines()]
    ran = {r["case_id"] for r in rows}  # a defined case of the run, padded (its expected output is not its data)
    number = next(k for k, d in enumerate(docs, 1)
                  if d["id"] in ran and d["kind"] == "defined" and d["expected"] != d["data"])
    doc = docs[number - 1]
    if forge.startswith("defined"):
        doc.update(kind="must-reject", rule="modes", reason="mode is not one of the version's modes", expected=None)
        for r in rows:
            if r["case_id"] == doc["id"]:
                r.update(kind="must-reject", reason=doc["reason"], rule=doc["rule"], verdict="pass",
                         error="refused: not one of the version's modes")  # a refusal, as a pass of it reads
                for key in ("output", "output_digest", "difference"):
                    r.pop(key, None)
    else:  # the runtime's answer made the expected output, and the pass rows' digests made its
        from padconf.core.dtypes import array_digest, decode_array
        doc["expected"] = doc["data"]
        for r in rows:
            if r["case_id"] == doc["id"] and r["verdict"] == "pass":
                r["output_digest"] = array_digest(decode_array(doc["data"]))
    (copy / "cases.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (copy / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    if command == "report":
        code = main(["report", str(copy), "--md", str(tmp_path / "r.md")])
    else:
        code = main(["run", "--resume", "--out", str(copy), "--runtime", WRONG])
    err = capsys.readouterr().err
    field = "kind" if forge.startswith("defined") else "expected output"
    assert code == 2 and err.count("\n") == 1 and f"cases.jsonl:{number}: " in err and f"its {field} is" in err, err


def _forged_passes(work) -> int:
    """Each refusal of ``work``'s results.jsonl relabelled a pass on the digest of its expected
    output, which anyone computes from cases.jsonl (attack round II's B1), its controls removed
    (B2); how many."""
    from padconf.cases.case import Case
    from padconf.core.dtypes import array_digest
    cases = {c["id"]: Case.from_json(c) for c in map(json.loads, (work / "cases.jsonl").read_text().splitlines())}
    rows = [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines()]
    forged = 0
    for row in rows:
        if row["verdict"] == "wrongly-rejected" and cases[row["case_id"]].expected is not None:
            row.update(verdict="pass", error=None, detail=None,
                       output_digest=array_digest(cases[row["case_id"]].expected))
            forged += 1
    (work / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (work / "controls.jsonl").write_text("")
    return forged


@pytest.mark.parametrize("signature", ["kept", "deleted", "copied from another run"])
def test_failures_relabelled_passes_on_their_expected_digest_pass_no_gate(tmp_path, capsys, signature):
    """Failures relabelled passes, each with the digest of its expected output, were consistent
    with everything a row can be checked against: `gate --results` said "passed: nothing new"
    and `report` showed a clean run (attack round II's B1 and B2). Only the runtime's answer
    tells them apart, so a run signs what padconf reads back of it (run.sig, under the user's
    key): the join judges signed shards only, and report says a run not signed, or changed
    since, is not verified."""
    runtime, spec = "tests.fake_adapters:RefusesEndCropAdapter", ["--spec", "onnx/Pad-19"]
    (tmp_path / "b.yaml").write_text("[]\n")
    judge = ["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), *spec]
    work = tmp_path / "w"
    assert main([*judge, "--work", str(work), "--timeout", "5"]) == 1
    assert main([*judge, "--results", str(work)]) == 1  # the honest shard fails the gate
    assert _forged_passes(work)
    if signature == "deleted":
        (work / "run.sig").unlink()
    elif signature == "copied from another run":
        other = tmp_path / "other"
        assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "0",
                     "--out", str(other)]) in (0, 1)
        shutil.copy(other / "run.sig", work / "run.sig")
    said = {"kept": "changed since padconf signed it", "deleted": "not signed (no run.sig)",
            "copied from another run": "changed since padconf signed it"}[signature]
    capsys.readouterr()
    assert main([*judge, "--results", str(work)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{work}: {said}" in err, err
    code, err = _report(work, tmp_path, capsys)  # a folder from elsewhere: its figures, said to be unverified
    assert code == 0, err
    assert f"**Not verified:** {said}" in (tmp_path / "r.md").read_text()


def test_a_shard_signed_under_another_key_is_one_line(tmp_path, capsys, monkeypatch):
    """Another machine's shard is judged only where every job holds one key (docs/ci.md)."""
    from padconf.core import user_key
    runtime, spec = "tests.fake_adapters:RefusesEndCropAdapter", ["--spec", "onnx/Pad-19"]
    (tmp_path / "b.yaml").write_text("[]\n")
    judge = ["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), *spec]
    assert main([*judge, "--work", str(tmp_path / "w"), "--timeout", "5"]) == 1
    monkeypatch.setenv(user_key.KEY_ENV, str(tmp_path / "keys" / "another.key"))
    monkeypatch.setattr(user_key, "KEYS", {})
    capsys.readouterr()
    assert main([*judge, "--results", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "signed under another key than yours" in err and user_key.KEY_ENV in err, err


def test_resume_never_signs_a_run_padconf_did_not_make_there_or_one_changed_since(tmp_path, capsys):
    """A signed run copied elsewhere, a failure relabelled a pass and its run.sig and mark
    removed, was resumed and signed as padconf's own: report then showed it verified, and a
    gate's shard so laundered passed (attack round VI), and again after `export-onnx-tests
    --force` marked the folder (round VII). --resume signs only a run padconf made in that folder
    as a run, unchanged since any signature of it; any other it continues unsigned, saying why."""
    from padconf.core.writing import MARK
    run, runtime = tmp_path / "own" / "run", "onnx-reference"  # it refuses what the spec defines
    assert main(["run", "--runtime", runtime, "--spec", "onnx/Pad-19", "--max-examples", "5", "--out", str(run)]) == 0
    from padconf.cases.case import Case
    from padconf.core.dtypes import array_digest
    cases = {c["id"]: Case.from_json(c) for c in map(json.loads, (run / "cases.jsonl").read_text().splitlines())}

    def relabel(rows):  # as one who knows padconf would: the expected output's digest, no evidence left
        k = _first(rows, lambda r: r["verdict"] == "wrongly-rejected" and cases[r["case_id"]].expected is not None)
        rows[k].update(verdict="pass", difference=None, output=None, error=None, detail=None,
                       output_digest=array_digest(cases[rows[k]["case_id"]].expected))
        return k + 1
    copy, _ = _copy_with(run, tmp_path, "results.jsonl", relabel)
    (copy / "controls.jsonl").write_text("")
    (copy / "run.sig").unlink()
    (copy / MARK).unlink()
    def resumed_unsigned(folder, why):
        capsys.readouterr()
        assert main(["run", "--resume", "--out", str(folder)]) == 0
        assert f"not signed: {folder} holds {why}" in capsys.readouterr().out
        assert not (folder / "run.sig").exists()
        assert main(["report", str(folder), "--md", str(tmp_path / "r.md")]) == 0
        assert "Not verified" in (tmp_path / "r.md").read_text()
    resumed_unsigned(copy, "no run padconf made in this folder")
    # another command's claim of the folder (an export, with --force, keeps the run's files) is no run's
    assert main(["export-onnx-tests", "--out", str(copy), "--force"]) == 0
    resumed_unsigned(copy, "no run padconf made in this folder")
    # in its own folder, changed after it was signed
    rows = (run / "results.jsonl").read_text()
    (run / "results.jsonl").write_text(rows.replace('"seconds": ', '"seconds": 1', 1))
    resumed_unsigned(run, "changed since padconf signed it")
    fresh = tmp_path / "fresh" / "run"
    assert main(["run", "--runtime", runtime, "--spec", "onnx/Pad-19", "--max-examples", "5", "--out", str(fresh)]) == 0
    assert main(["run", "--resume", "--out", str(fresh)]) == 0 and (fresh / "run.sig").exists()  # its own, signed
