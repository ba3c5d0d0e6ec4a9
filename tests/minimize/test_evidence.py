"""A bundle's label is the conclusion of the experiments its evidence.json records (checks (a) to
(f), padconf.minimize.probes.evidence): "bug to file" only when each needed check passed, else
"needs a look" naming the missing one; the folder is named by that word and INDEX.md shows the
checks."""
import json

import ml_dtypes
import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.minimize.probes.evidence import BUG, CHECKS, NEEDS_A_LOOK

FAKE = "tests.fake_adapters:"


def _case_file(tmp_path, case):
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(classify(case).to_json()) + "\n")
    return str(path)


def _evidence(where):
    return json.loads((where / "evidence.json").read_text())


def _minimized_run(tmp_path, adapter: str, cases: list, time_limit: str = "3") -> list:
    """The bundle folders `padconf minimize RUN` writes of a run of ``cases`` on ``adapter``."""
    from padconf.run.runner import Run, RunConfig
    run = Run(tmp_path / "run", RunConfig(runtimes=[adapter]), jobs=1)
    run.execute(run.plan(run.prepare(cases)))
    out = tmp_path / "out"
    assert main(["minimize", str(tmp_path / "run"), "--runtime", adapter, "--out", str(out),
                 "--time-limit", time_limit]) == 0
    return sorted(d for d in out.iterdir() if d.is_dir())


def test_a_wrong_value_without_a_runnable_repro_needs_a_look_naming_check_a(tmp_path):
    """A planted wrong value (values flipped, where the data begins with 666) on a defined input,
    whose controls pass: every check but (a) passes; the fake runtime has no runner of its own,
    so its repro cannot exit 1 and the bundle is "needs a look", missing (a), never "bug to file"."""
    case = Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0],
                mode="constant")
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "WrongValuesAdapter", "--out", str(out),
                 "--time-limit", "5"]) == 0
    found = _evidence(out)
    assert set(found["checks"]) == set(CHECKS) and found["label"] == NEEDS_A_LOOK and found["missing"] == ["a"]
    assert found["checks"]["a"]["exit_codes"] == [2]
    assert all(found["checks"][k]["passed"] for k in "bcef") and not found["checks"]["d"]["needed"]
    assert "values" in [c["operand"] for c in found["checks"]["c"]["controls"]]
    report = (out / "REPORT.md").read_text()
    head = report.split("\n## Appendix\n")[0]
    assert "Label: **needs a look** (missing: (a))" in head and len(head.splitlines()) <= 80


def test_a_run_names_each_bundle_by_its_label_and_the_index_shows_the_checks(tmp_path):
    from padconf.run.runner import Run, RunConfig
    case = classify(Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0],
                         mode="constant"))
    run = Run(tmp_path / "run", RunConfig(runtimes=[FAKE + "WrongValuesAdapter"]), jobs=1)
    run.execute(run.plan(run.prepare([case])))
    out = tmp_path / "out"
    assert main(["minimize", str(tmp_path / "run"), "--runtime", FAKE + "WrongValuesAdapter", "--out", str(out),
                 "--time-limit", "3"]) == 0
    folders = [d.name for d in out.iterdir() if d.is_dir()]
    assert folders and all("-needs-a-look-" in name for name in folders), folders
    index = (out / "INDEX.md").read_text()
    assert "## Needs a look" in index and "a✗ b✓ c✓ d· e✓ f✓ (missing: a)" in index


@pytest.mark.slow
def test_ireees_signed_answer_for_unsigned_data_is_not_pad_specific_as_its_computing_control_shows(tmp_path):
    """IREE returns int8 for uint8 data through Pad and through Reshape and Concat alike: its
    repro exits 1 (a), yet the control computing on the values fails (c), so the bundle is not
    Pad-specific and no bug to file."""
    pytest.importorskip("iree.runtime")
    case = Case(spec="onnx/Pad-18", data=np.arange(4, dtype=np.uint8).reshape(2, 2), pads=[1, 0, 0, 1],
                mode="constant")
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", "iree", "--out", str(out),
                 "--time-limit", "10"]) == 0
    found = _evidence(out)
    assert found["checks"]["a"]["exit_codes"] == [1] and found["checks"]["a"]["script"] == "repro_iree.py"
    assert not found["checks"]["c"]["passed"] and found["label"] not in (BUG, NEEDS_A_LOOK)


def test_minimize_of_a_runs_runtimes_merges_one_engines_paths_into_one_bundle(tmp_path, monkeypatch, capsys):
    """Without --runtime every registered runtime of the run is minimized, and a module:Class
    only where named again (run.json is anyone's file: minimize imported what it named); the
    frontend's bundle, whose Pad lowers to the engine's (Adapter.lowered_to) and fails alike,
    moves under the engine's bundle as a variant: one bug, one bundle, and INDEX.md lists it
    beneath its root. (A module:Class adapter's facts are read in its worker only: its lowered_to
    is planted here as across.engine.)"""
    from padconf.minimize import across
    from padconf.run.runner import Run, RunConfig
    monkeypatch.setattr(across, "engine", lambda name: FAKE + "WrongValuesAdapter")
    case = classify(Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0],
                         mode="constant"))
    engine, frontend = FAKE + "WrongValuesAdapter", FAKE + "FrontendWrongValuesAdapter"
    run = Run(tmp_path / "run", RunConfig(runtimes=[frontend, engine]), jobs=1)
    run.execute(run.plan(run.prepare([case])))
    out = tmp_path / "out"
    argv = ["minimize", str(tmp_path / "run"), "--out", str(out), "--time-limit", "3"]
    assert main(argv) == 2  # a module:Class of run.json is imported only when the user names it
    assert "imports the module:Class runtime" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--runtime", engine, frontend]) == 0
    roots = [d for d in (out / "tests.fake_adapters_WrongValuesAdapter").iterdir() if d.is_dir()]
    assert len(roots) == 1
    assert [d.name for d in (out / "tests.fake_adapters_FrontendWrongValuesAdapter").iterdir() if d.is_dir()] == []
    variants = list((roots[0] / "variants").iterdir())
    assert len(variants) == 1 and (variants[0] / "REPORT.md").exists()
    assert "## Through other paths of the same engine" in (roots[0] / "REPORT.md").read_text()
    index = (out / "INDEX.md").read_text().splitlines()
    at = next(i for i, line in enumerate(index) if roots[0].name in line and not line.startswith("| ↳"))
    assert index[at + 1].startswith("| ↳ tests.fake\\_adapters:FrontendWrongValuesAdapter") or \
        index[at + 1].startswith("| ↳ tests.fake_adapters:FrontendWrongValuesAdapter"), index


def test_minimize_without_runtime_needs_a_run_directory(tmp_path, capsys):
    case = Case(spec="onnx/Pad-19", data=np.ones(2, np.float32), pads=[1, 0])
    assert main(["minimize", _case_file(tmp_path, case), "--out", str(tmp_path / "out")]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_shrinking_sheds_an_invalid_mode_and_repeated_axes_before_it_keeps_a_wrong_value(tmp_path):
    """A runtime that ignores the axes input answers a case of a mode Pad-18 lacks (wrap) and
    repeated axes with an output no reading gives; shrinking sheds both and keeps the wrong value
    on a valid input, whose evidence then has (f) passed."""
    case = Case(spec="onnx/Pad-18", data=np.arange(6, dtype=np.float32).reshape(2, 3), pads=[1, 1, 1, 1],
                axes=[1, 1], mode="wrap")
    assert classify(case).kind == "must-reject"
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "IgnoresAxesAdapter", "--out", str(out),
                 "--time-limit", "10"]) == 0
    final = json.loads((out / "case.json").read_text())
    assert final["mode"] in ("constant", "edge", "reflect") and len(set(final["axes"])) == len(final["axes"])
    assert final["kind"] == "defined"
    assert _evidence(out)["checks"]["f"]["passed"]


def test_a_silent_wrong_value_is_no_variant_of_a_crash_on_the_same_feature(tmp_path):
    """Rank-0 data crashes on float and is answered wrong on int32: the rank-0 feature would merge
    them, but the crash's experiment (the process dies) does not show the wrong value: two bundles."""
    cases = [classify(Case(spec="onnx/Pad-19", data=np.array(2.0, np.float32), pads=[])),
             classify(Case(spec="onnx/Pad-19", data=np.array(2, np.int32), pads=[]))]
    bundles = [d.name for d in _minimized_run(tmp_path, FAKE + "RankZeroCrashOrWrongAdapter", cases)]
    assert len(bundles) == 2 and any("-crash-" in b for b in bundles) and any("-mismatch-" in b for b in bundles)


@pytest.mark.parametrize("adapter, named", [("FedPadsWrongAdapter", True), ("WrongValuesAdapter", False)])
def test_a_title_names_the_placement_only_where_another_placement_passes(tmp_path, adapter, named):
    """The minimal case is run in the other placements: "with pads fed at run time" survives only
    where constant pads pass; a bug every placement shows is titled without it."""
    case = Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0],
                mode="constant")
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + adapter, "--out", str(out),
                 "--time-limit", "3"]) == 0
    heading = (out / "REPORT.md").read_text().splitlines()[0]
    assert ("with pads fed at run time" in heading) == named, heading


@pytest.mark.parametrize("data, adapter", [(np.array([1.0, 1.25], np.float32), "ZeroFillReflectAdapter"),
                                           (np.array([1.0, 2.0], ml_dtypes.float8_e8m0fnu),
                                            "ZeroFillReflectOnE8m0Adapter")])
def test_a_zero_fill_on_an_input_the_erratum_forbids_is_never_a_bug_to_file(tmp_path, data, adapter):
    """Reflect padding as large as the dimension (undefined at Pad-25) answered with zeros: an
    output no reading gives, yet deterministic and holding no value from nowhere but zero bytes,
    so not memory-unsafe: check (b) is missing and the bundle is no bug to file. float8e8m0 has
    no zero: its zero bytes are 2**-127, which were judged values from nowhere (audit E)."""
    case = Case(spec="onnx/Pad-25", data=data, pads=[2, 0], mode="reflect")
    assert classify(case).kind == "ambiguous"
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + adapter, "--out",
                 str(out), "--time-limit", "3"]) == 0
    found = _evidence(out)
    assert found["label"] != BUG and not found["checks"]["b"]["passed"], found["checks"]["b"]
    assert case.dtype in json.loads((out / "repro.json").read_text())["case"]  # shrinking kept the dtype


def test_the_indexs_merged_rows_are_grouped_by_the_bundle_they_went_into():
    from pathlib import Path

    from padconf.minimize.bundle.index import index_markdown
    roots = [{"n": n, "dir": Path(f"0{n}-bug-x")} for n in (1, 2)]
    merged = [{"n": 3, "merged_into": roots[1], "shape": [1]}, {"n": 4, "merged_into": roots[0], "shape": [1]},
              {"n": 5, "merged_into": roots[1], "shape": [1]}]
    text = index_markdown("run", "x", merged)
    order = [line.split(" | ")[0] for line in text.splitlines() if "of the same mechanism as bundle" in line]
    assert order == ["| 4", "| 3, 5"], order  # one row per mechanism, its failures in it


@pytest.mark.slow
@pytest.mark.parametrize("runtime, case, covered", [
    # OpenVINO refuses rank-0 data with fed pads, answers it folded, and takes fed pads on plain data:
    # the refusal is rank 0's, a bug (the CPU plugin's pad.cpp check)
    ("openvino", Case(spec="openvino/Pad-12", data=np.array(1.5, np.float32), pads=[]), True),
    # TVM's Relax frontend takes a constant_value as a constant only ("documented constants-only"):
    # refused on every case with it fed, so coverage, never a bug to file
    ("tvm", Case(spec="onnx/Pad-19", data=np.array([1.0], np.float32), pads=[0, 0], constant_value=np.float32(0)),
     False),
])
def test_coverage_is_ruled_out_by_experiment_not_by_message_text(tmp_path, runtime, case, covered):
    pytest.importorskip({"openvino": "openvino", "tvm": "tvm"}[runtime])
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", runtime, "--out", str(out),
                 "--time-limit", "5"]) == 0
    found = _evidence(out)
    assert found["checks"]["d"]["passed"] is covered, found["checks"]["d"]
    assert (found["label"] == BUG) is covered and ("d" in found["missing"]) is not covered


def test_a_variant_is_rerun_through_the_bundles_own_experiment_and_split_where_it_shows_otherwise(tmp_path):
    """Rank-0 data answered wrong on float and on int32: one root cause by feature and verdict,
    but the bundle's experiment rerun on the int32 case shows another mechanism (its control
    computing on the values fails, where float's passes): two bundles; each variant a bundle
    keeps carries that experiment's record in its evidence.json."""
    cases = [classify(Case(spec="onnx/Pad-19", data=np.array(2.0, np.float32), pads=[])),
             classify(Case(spec="onnx/Pad-19", data=np.array(2, np.int32), pads=[]))]
    bundles = _minimized_run(tmp_path, FAKE + "RankZeroTwoWaysAdapter", cases)
    assert len(bundles) == 2, [b.name for b in bundles]
    found = [_evidence(b) for b in bundles]
    assert sorted(f["checks"]["c"]["passed"] for f in found) == [False, True]


@pytest.mark.parametrize("adapter, named", [("MixedSignWrongAdapter", True), ("NegativeEndWrongAdapter", False)])
def test_a_title_names_the_begin_pad_a_negative_end_pad_needs_and_only_then(tmp_path, adapter, named):
    """The trigger is the smallest set of features that still fails: a crop at the end that fails
    only beside a pad at the begin is titled with both (a removal experiment: the begin pad made
    0, the case passes); a crop that fails alone is titled with the negative end pad alone."""
    case = Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0, 3.0, 4.0], np.float32), pads=[2, -1], mode="constant")
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + adapter, "--out", str(out),
                 "--time-limit", "3"]) == 0
    heading = (out / "REPORT.md").read_text().splitlines()[0]
    assert "a negative end pad" in heading, heading
    assert ("a negative end pad with a positive begin pad" in heading) == named, heading


def test_a_missing_kernel_found_on_repeated_axes_and_undefined_crops_shrinks_to_a_plain_input(tmp_path):
    """A failure that does not depend on what the document says of the input (no kernel) found on
    repeated axes that crop an empty axis past its size (three undefined points): shrinking sheds
    the repeated axes and moves through fewer undefined points to a defined input, where it stayed
    on the original input before (every candidate had to keep all three points)."""
    case = Case(spec="onnx/Pad-21", data=np.zeros((1, 0), np.float32), pads=[0, 0, 0, 0, 1, -2], mode="wrap",
                axes=[1, 1, 0])
    assert classify(case).kind == "ambiguous" and len(classify(case).reason.split(",")) == 3
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "NoWrapAdapter", "--out", str(out),
                 "--time-limit", "10"]) == 0
    final = json.loads((out / "case.json").read_text())
    assert final["kind"] == "defined", final
    assert final["axes"] is None or len(set(final["axes"])) == len(final["axes"])


def test_a_crash_shows_alike_on_a_valid_and_an_invalid_input():
    """A crash is a bug on any input: OpenVINO's Pad-12 forbids a reflect pad past what the data
    can mirror, which ONNX Pad-19 leaves undefined; the same heap corruption through both is one
    mechanism (how_it_shows). An answer keeps the input's validity: a wrong value on an invalid
    input is no variant of one on a valid input."""
    from padconf.adapters.outcome import Outcome
    from padconf.judging.records import judged_row
    from padconf.minimize.probes.evidence import how_it_shows
    from padconf.minimize.shrink.loop import Attempt, Shrunk

    def shrunk(spec, status, outcome):
        case = classify(Case(spec=spec, data=np.array([1.0, 2.0], np.float32), pads=[3, 0], mode="reflect"))
        attempt = Attempt(case, judged_row("openvino", "inputs", case, outcome, status), outcome)
        return case.kind, how_it_shows(Shrunk(attempt, attempt, 1, 0.0, False))

    forbidden, crash_invalid = shrunk("openvino/Pad-12", "crash", Outcome(error="SIGSEGV"))
    undefined, crash_valid = shrunk("onnx/Pad-19", "crash", Outcome(error="SIGSEGV"))
    assert (forbidden, undefined) == ("must-reject", "ambiguous") and crash_invalid == crash_valid
    wrong = Outcome(np.array([9.0, 9.0, 9.0, 9.0, 9.0], np.float32))
    assert shrunk("openvino/Pad-12", "ok", wrong)[1] != shrunk("onnx/Pad-19", "ok", wrong)[1]


def test_the_merged_index_has_one_row_per_mechanism_for_a_runtimes_own_failures(tmp_path):
    """INDEX.md over every runtime: a bundle, beneath it each other path's bundle merged into it,
    and one row for all of its own runtime's failures of that mechanism (they were one row each)."""
    from padconf.minimize.across import merged_index
    root = {"n": 1, "dir": tmp_path / "rt" / "01-bug-x", "title": "T", "evidence": {"label": BUG, "missing": []}}
    other = {"n": 2, "dir": tmp_path / "rt" / "01-bug-x" / "variants" / "fe-02-bug-y", "title": "U",
             "merged_into": root, "merged_runtime": "fe"}
    own = [{"n": n, "dir": None, "merged_into": root} for n in (3, 4, 5)]
    text = merged_index("run", [("rt", [root, *own]), ("fe", [other])], [], tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| ↳")]
    assert len(rows) == 2 and rows[0].startswith("| ↳ fe |") and "3 more failures of the run" in rows[1], rows


def test_a_crash_that_dies_in_one_of_three_reruns_fails_again():
    """A corrupted heap does not kill every process: the mechanism's repro counts a crash that
    dies in one of CRASH_TRIES fresh processes (check (a) holds the label to 3 of 3, apart), so a
    crash variant is not split off its bundle by one lucky run; an answer must fail on its rerun."""
    from padconf.adapters.outcome import Outcome
    from padconf.judging.records import judged_row
    from padconf.minimize.probes.evidence import fails_again
    from padconf.minimize.shrink.loop import Attempt, Shrunk
    case = classify(Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0], np.float32), pads=[1, 0]))

    def attempt(status, outcome):
        return Attempt(case, judged_row("x", "inputs", case, outcome, status), outcome)

    crash, passes = attempt("crash", Outcome(error="SIGSEGV")), attempt("ok", Outcome(case.expected))

    class Reruns:  # padconf's runner, its answers planted: passes, then dies, then passes
        def __init__(self, answers):
            self.answers = list(answers)

        def attempt_if_it_can(self, case, placement, fresh=False):
            assert fresh  # a rerun that is the experiment: never an earlier run's answer
            return self.answers.pop(0)

    assert fails_again(Reruns([passes, crash, passes]), Shrunk(crash, crash, 1, 0.0, False), "inputs")
    assert not fails_again(Reruns([passes, passes, passes]), Shrunk(crash, crash, 1, 0.0, False), "inputs")
    wrong = attempt("ok", Outcome(np.array([9.0, 9.0, 9.0], np.float32)))
    assert not fails_again(Reruns([passes]), Shrunk(wrong, wrong, 1, 0.0, False), "inputs")
    assert fails_again(Reruns([wrong]), Shrunk(wrong, wrong, 1, 0.0, False), "inputs")


def test_a_label_with_every_check_passed_that_is_no_bug_says_why(tmp_path):
    """A missing kernel whose checks all pass is still no Pad bug to file (coverage): its
    evidence.json and REPORT.md say so, where the label stood with no reason beside it."""
    case = Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0], np.float32), pads=[1, 0], mode="wrap")
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "NoWrapAdapter", "--out", str(out),
                 "--time-limit", "3"]) == 0
    found = _evidence(out)
    assert found["label"] == "not-a-bug" and "coverage" in found["why"], found
    assert "coverage" in (out / "REPORT.md").read_text().split("## Evidence", 1)[1].splitlines()[2]


@pytest.mark.slow
def test_onnxruntimes_refusal_of_an_edge_crop_to_zero_elements_is_a_bug_to_file(tmp_path):
    """Real onnxruntime refuses an edge (or reflect) Pad that crops a dimension to zero elements
    ("invalid mode: 2 with zero effective input extent"), a defined input. At Pad-2 its value
    attribute's LeakyRelu control cannot run there (no kernel below opset 6): that is no control,
    never one that fails too, and the bundle comes out a bug, not "not Pad-specific"."""
    case = Case(spec="onnx/Pad-2", data=np.array([[1, 2, 3], [4, 5, 6]], np.float32), pads=[0, 0, 0, -3],
                mode="edge", constant_value=np.float32(0))
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", "onnxruntime", "--out", str(out),
                 "--time-limit", "10"]) == 0
    found = _evidence(out)
    assert found["label"] == BUG, found["missing_text"]
    assert not any(c["fails"] for c in found["checks"]["c"]["controls"])
    heading = (out / "REPORT.md").read_text().splitlines()[0]  # Pad-11 refuses it alike: no opset named
    assert "crop down to zero elements" in heading and "(opset" not in heading, heading


def test_no_bundle_folder_stays_pending_when_its_experiments_break_off(tmp_path, monkeypatch):
    """Planted in padconf: the evidence step raises. The bundle's folder still ends with a triage
    word ("needs a look", its evidence.json saying why), never "pending"."""
    from padconf.minimize import minimize as minimizing
    from padconf.run.runner import Run, RunConfig

    def broken(*args, **kwargs):
        raise RuntimeError("planted: the experiments broke off")

    monkeypatch.setattr(minimizing, "evidence", broken)
    case = classify(Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0]))
    run = Run(tmp_path / "run", RunConfig(runtimes=[FAKE + "WrongValuesAdapter"]), jobs=1)
    run.execute(run.plan(run.prepare([case])))
    out = tmp_path / "out"
    assert main(["minimize", str(tmp_path / "run"), "--runtime", FAKE + "WrongValuesAdapter", "--out", str(out),
                 "--time-limit", "3"]) == 0
    folders = [d for d in out.iterdir() if d.is_dir()]
    assert folders and not [d.name for d in folders if "pending" in d.name]
    assert all("-needs-a-look-" in d.name and _evidence(d)["label"] == NEEDS_A_LOOK for d in folders)
    assert "planted" in _evidence(folders[0])["why"]


@pytest.mark.parametrize("ends", ["exits", "hangs"])
def test_nothing_a_repro_starts_outlives_it(tmp_path, monkeypatch, ends):
    """A repro whose own child leaves its session (as iree-compile under iree.compiler may outlive
    a killed script): when the repro exits, or is stopped at its time limit, the child is gone too."""
    import os
    import time

    from padconf.minimize.probes import evidence
    monkeypatch.setattr(evidence, "REPRO_TIMEOUT_S", 5)
    pid_file = tmp_path / "pid"
    (tmp_path / "repro.py").write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        + ("time.sleep(120)\n" if ends == "hangs" else "sys.exit(1)\n"))
    codes = evidence.run_repro(tmp_path, "repro.py", 1)
    assert codes == (["timeout"] if ends == "hangs" else [1])
    pid = int(pid_file.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the repro's child {pid} outlived it")


def test_the_form_a_bundle_is_reported_in_is_no_matter_of_the_time_left(tmp_path):
    """A planted crash on rank-0 data that shows alike at rank 1: with no time left for shrinking,
    as with plenty, the bundle is written at rank 1 (the last step of shrinking is an experiment,
    never skipped at the limit: a label or title must not depend on the machine's speed)."""
    from padconf.minimize.minimize import minimize
    case = Case(spec="onnx/Pad-18", data=np.array(666, np.float32), pads=[])
    shapes = []
    for limit in (0.001, 30):
        out = tmp_path / f"out{limit}"
        [done] = minimize(_case_file(tmp_path, case), FAKE + "SegfaultAdapter", out, time_limit=limit)
        shapes.append(list(done["shrunk"].final.case.data.shape))
    assert shapes == [[1], [1]]


@pytest.mark.parametrize(("adapter", "opset", "dtype"), [
    ("WrongValuesAdapter", False, False),  # every opset and dtype: neither named
    ("WrongAtOneOpsetAdapter", True, False),  # Pad-19 only: its opset named
    ("WrongOnFloatAdapter", False, True),  # float only: its dtype named
])
def test_a_title_names_the_opset_and_dtype_only_where_another_passes(tmp_path, adapter, opset, dtype):
    """Each feature a title names survives a removal experiment: the same case at the opsets next
    to its own, or of another dtype, answered right names it; failing alike drops it."""
    case = Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0])
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + adapter, "--out", str(out),
                 "--time-limit", "5"]) == 0
    heading = (out / "REPORT.md").read_text().splitlines()[0]
    assert ("(opset 19)" in heading) == opset and (" float" in heading) == dtype, heading


def test_one_mechanism_under_two_labels_is_one_bundle(tmp_path, monkeypatch):
    """Planted in padconf: the int32 failure's triage reads as known upstream (labelled so, not a
    bug to file), the float one's as a refusal, of one planted check on one feature, and their root
    causes tell the dtypes apart. Merging by
    mechanism comes after labelling and across labels: one bundle, the other rerun through its
    experiment and listed under it with the label it had alone."""
    from padconf.judging.triage import Triage
    from padconf.minimize import minimize as minimizing
    real, cause = minimizing.bundle_triage, minimizing.root_cause
    monkeypatch.setattr(minimizing, "bundle_triage", lambda shrunk, job: Triage.KNOWN_UPSTREAM
                        if shrunk.final.case.dtype == "int32" else real(shrunk, job))
    monkeypatch.setattr(minimizing, "root_cause", lambda shrunk, placement: (*cause(shrunk, placement),
                                                                             shrunk.final.case.dtype))
    cases = [classify(Case(spec="onnx/Pad-19", data=np.array([[1, 2, 3], [3, 4, 5]], dtype), pads=[0, 0, 0, -1]))
             for dtype in (np.float32, np.int32)]
    folders = _minimized_run(tmp_path, FAKE + "RefusesEndCropAdapter", cases, time_limit="5")
    assert len(folders) == 1, [d.name for d in folders]
    [root] = folders
    assert "-needs-a-look-" in root.name and [d.name for d in (root / "variants").iterdir()]
    variants = _evidence(root)["variants"]
    assert [v["label_alone"] for v in variants if "label_alone" in v] == ["known-upstream"]


def test_a_placement_in_a_title_names_every_operand_it_moves():
    """A placement feeds (or bakes) pads, axes and the constant value together: a title naming
    it names them all, never the pads alone where the failure may be the axes' (IREE ignores a
    fed axes input whatever the pads)."""
    from padconf.minimize.bundle.title import title
    case = classify(Case(spec="onnx/Pad-25", data=np.array([1, 2], np.float32), pads=[1, 0], axes=[0]))
    row = {"verdict": "mismatch", "placement": "inputs", "difference": None, "runtime": "fake"}
    assert "with pads and axes fed at run time" in title(row, case, placement_dependent=True)
    assert "with constant pads and axes" in title({**row, "placement": "initializers"}, case, placement_dependent=True)
    plain = classify(Case(spec="onnx/Pad-25", data=np.array([1, 2], np.float32), pads=[1, 0]))
    assert "with pads fed at run time" in title(row, plain, placement_dependent=True)


def test_not_pad_specific_only_where_a_control_fails_when_rerun(tmp_path, monkeypatch):
    """Planted in padconf: the triage reads as not Pad-specific (as a control cut short at the time
    limit, or one that failed once, made it), while every control of check (c) passes when rerun.
    The label follows the experiments: needs a look, (c) missing and saying why, never
    not-pad-specific beside a passed check (c)."""
    from padconf.judging.triage import Triage
    from padconf.minimize import minimize as minimizing
    monkeypatch.setattr(minimizing, "bundle_triage", lambda shrunk, job: Triage.NOT_PAD_SPECIFIC)
    case = Case(spec="onnx/Pad-19", data=np.array([[666, 1, 2], [3, 4, 5]], np.float32), pads=[0, 1, 0, 0])
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "WrongValuesAdapter", "--out", str(out),
                 "--time-limit", "3"]) == 0
    found = _evidence(out)
    assert found["label"] == NEEDS_A_LOOK and "c" in found["missing"], found
    assert "no control fails when rerun" in found["checks"]["c"]["how"]


def test_a_read_past_the_row_that_one_row_shows_as_zeros_is_memory_unsafe(tmp_path):
    """A planted reflect past the dimension that reads the next row's values (zeros past the
    buffer's end, as IREE with dynamic dims): shrunk to one row it looks like a zero fill; the
    same input stacked on a new unpadded axis shows one copy's output holding another's values,
    so check (b) passes as memory-unsafe, where a true zero fill (ZeroFillReflectAdapter) does not."""
    case = Case(spec="onnx/Pad-25", data=np.arange(1, 101, dtype=np.float32).reshape(10, 10),
                pads=[0, 10, 0, 0], mode="reflect")
    assert classify(case).kind == "ambiguous"
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "RowOverrunReflectAdapter", "--out",
                 str(out), "--time-limit", "10"]) == 0
    found = _evidence(out)
    assert found["checks"]["b"]["passed"] and "another copy's data" in found["checks"]["b"]["how"], found["checks"]["b"]


def test_a_refusal_of_every_case_of_its_dtype_is_coverage_whatever_the_text(tmp_path):
    """A planted runtime lowering no complex Pad: refused folded too, but so is the plainest case
    of the dtype (with another error text): check (d) finds coverage by experiment, never by the
    message (audit C, seed 45212, iree 33)."""
    case = Case(spec="onnx/Pad-19", data=np.array([1, 2], np.complex64), pads=[1, 0], constant_value=np.complex64(5))
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "RefusesComplexAdapter", "--out",
                 str(out), "--time-limit", "3"]) == 0
    found = _evidence(out)
    assert found["label"] != BUG and found["checks"]["d"]["passed"] is False, found["checks"]["d"]
    assert "(coverage)" in found["checks"]["d"]["how"]


def test_pads_beyond_32_bits_that_the_failure_needs_are_the_titles_trigger():
    """A minimal case whose pads shrinking could not bring within 32 bits (OpenVINO's CPU node
    truncates fed int64 pads: [2**32 + 1, -2**32] computes as [1, 0]) is titled by them, not by
    the crop beyond the dimension they also make (audit C, seed 45212, openvino 03)."""
    from padconf.minimize.bundle.title import WIDE_PADS, feature
    case = Case(spec="openvino/Pad-12", data=np.array([1, 2, 3, 4], np.float32), pads=[2 ** 32 + 1, -2 ** 32])
    assert feature(case) == WIDE_PADS
    assert feature(case.with_(pads=[1, -5])) == "a crop beyond the dimension"


@pytest.mark.slow
def test_a_refusal_of_every_non_constant_mode_names_them_all_not_the_one_found(tmp_path):
    """Real onnxruntime refuses a wrap crop to zero elements as it does edge and reflect, and
    answers constant: the title names the modes failing alike, never "Pad(wrap)" alone (audit C,
    seed 45212, onnxruntime 05)."""
    case = Case(spec="onnx/Pad-19", data=np.array([1, 2, 3, 4], np.float32), pads=[-3, -1], mode="wrap")
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", "onnxruntime", "--out", str(out),
                 "--time-limit", "5"]) == 0
    heading = (out / "REPORT.md").read_text().splitlines()[0]
    assert heading.startswith("# Pad(wrap, ") and "edge" in heading and "reflect" in heading, heading
    assert "constant" not in heading.split(")")[0], heading


def test_one_bug_whose_symptom_the_index_type_chooses_is_one_bundle(tmp_path):
    """Rank-0 data with empty pads fed at run time: int64 pads refused, int32 pads a crash (audit
    II filed OpenVINO's twice). The experiments differ (one dies, one answers), but the crash's
    case with int64 pads is refused as the other bundle's is: one bundle, the other listed under
    it with that twin recorded."""
    cases = [classify(Case(spec="onnx/Pad-19", data=np.array(2.0, np.float32), pads=[], pads_type=t))
             for t in ("int64", "int32")]
    bundles = _minimized_run(tmp_path, FAKE + "RankZeroFedPadsByIndexTypeAdapter", cases)
    assert len(bundles) == 1, [b.name for b in bundles]
    [twin] = [v["operand_twin"] for v in _evidence(bundles[0])["variants"] if v.get("operand_twin")]
    assert twin["verdict"] in ("crash", "wrongly-rejected"), twin
    assert "one bug, two symptoms" in (bundles[0] / "REPORT.md").read_text()


def test_a_bug_of_the_operation_a_frontend_lowers_to_has_a_repro_in_that_runtimes_own_api(tmp_path):
    """OpenVINO's CPU Pad turns a -0.0 pad value into +0.0 (audit II): found through the ONNX
    frontend, whose bundle says "file it in openvino", while the native path never drew the case.
    The bundle carries native/repro_openvino.py, OpenVINO's own API alone, which exits 1."""
    pytest.importorskip("openvino")
    import subprocess
    import sys
    case = Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0], np.float32), pads=[1, 0], mode="constant",
                constant_value=np.float32(-0.0))
    out = tmp_path / "out"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", "openvino-onnx", "--out", str(out),
                 "--time-limit", "10"]) == 0
    assert _evidence(out)["label"] == "other-component"
    assert "Its own repro: native/repro_openvino.py" in (out / "REPORT.md").read_text()
    ran = subprocess.run([sys.executable, "-I", "repro_openvino.py"], cwd=out / "native", capture_output=True,
                         text=True, timeout=120)
    assert ran.returncode == 1 and "actual:   array([0., 1.]" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.slow
def test_a_frontends_bundle_its_engine_never_drew_is_the_engines_bug_to_file(tmp_path):
    """OpenVINO's CPU Pad passes an int32 pad value through float32 (audits IV and V: 16777217
    comes back 16777216): found through the ONNX frontend, and failed alike by OpenVINO's own
    Pad-12, while the native path's draws never met it. Minimizing the run files it against
    openvino, as a bug, with native/repro_openvino.py; left other-component it was filed nowhere."""
    pytest.importorskip("openvino")
    from padconf.run.runner import Run, RunConfig
    case = classify(Case(spec="onnx/Pad-11", data=np.array([1], np.int32), pads=[0, 1], mode="constant",
                         constant_value=np.array(16777217, np.int32)))
    run = Run(tmp_path / "run", RunConfig(runtimes=["openvino-onnx"]), jobs=1)
    run.execute(run.plan(run.prepare([case])))
    out = tmp_path / "out"
    assert main(["minimize", str(tmp_path / "run"), "--out", str(out), "--time-limit", "10"]) == 0
    (bundle,) = [d for d in (out / "openvino-onnx").iterdir() if d.is_dir()]
    found = _evidence(bundle)
    assert "-bug-" in bundle.name and found["label"] == BUG and found["filed_against"] == "openvino"
    assert found["missing"] == [] and found["checks"]["e"]["passed"]
    report = (bundle / "REPORT.md").read_text()
    assert report.count("## Evidence") == 1 and "rounds integers to float32 precision" in report.splitlines()[0]
    assert "| openvino (through openvino-onnx) |" in (out / "INDEX.md").read_text()
    assert (bundle / "native" / "repro_openvino.py").exists()


@pytest.mark.parametrize("adapter", ["CropPastAxisCorruptsAdapter", "CropPastAxisCorruptsAlikeAdapter"])
def test_a_crash_and_an_output_of_memory_never_written_on_one_feature_are_one_bundle(tmp_path, adapter):
    """OpenVINO's crop past an axis beside a pad, pads fed at run time, crashed in constant mode
    and answered uninitialised values in edge mode: filed twice (audit IV's openvino 01 and 15),
    and again with garbage of the same bits each run (audit V's openvino 01 and 34). Memory
    corrupted (a crash, or an output whose bits change run to run, or hold values from nowhere
    that no conversion explains: Pad computes nothing) is one symptom whatever its face: one
    bundle, the other listed under it."""
    cases = [classify(Case(spec="onnx/Pad-19", data=np.array([1.0, 2.0, 3.0], np.float32), pads=[-2, 1])),
             classify(Case(spec="onnx/Pad-19", data=np.array([[1.0], [2.0], [3.0], [4.0]], np.float32),
                           pads=[-3, 0, 2, 0], mode="edge"))]
    assert [c.kind for c in cases] == ["defined", "defined"]
    bundles = _minimized_run(tmp_path, FAKE + adapter, cases)
    assert len(bundles) == 1, [b.name for b in bundles]
    [variant] = _evidence(bundles[0])["variants"]
    assert variant["mechanism"][0] == "corrupts memory", variant


def test_pads_from_constant_nodes_that_play_no_part_leave_the_bundle_a_plain_pad_of_initializers(tmp_path):
    """TVM reads past the input for a reflect pad of the dimension, with its pads constants, and
    refuses pads fed at run time: a case with pads from Constant nodes kept them to the end (the
    Pad alone, in its placement, takes them fed), titled "(pads from Constant nodes)", one bug
    filed twice (audit VI). Where the plain Pad with its constants as initializers fails alike,
    that is the bundle."""
    from padconf.cases.context import Consumer, Context, Producer
    from tests.context_cases import context_case
    case = context_case([[1.0, 2.0, 3.0]], [0, 3, 0, 0], Context(Consumer.NONE, producer=Producer.CONSTANT_NODE),
                        mode="reflect")
    out = tmp_path / "bundle"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "ConstantPadsZeroFillReflectAdapter",
                 "--out", str(out), "--time-limit", "10"]) == 0
    report = (out / "REPORT.md").read_text()
    assert report.startswith("# Pad(reflect) answers a pad as large as the dimension"), report[:300]
    assert "Constant nodes" not in report.split("\n")[0] and "pads produced by" not in report
    assert json.loads((out / "case.json").read_text().splitlines()[0]).get("context") is None
    assert json.loads((out / "repro.json").read_text())["placement"] == "initializers"


def test_memory_never_written_at_a_higher_rank_shrinks_to_the_crash_it_is_at_rank_one(tmp_path):
    """OpenVINO's crop beside a pad answered 1.77e-43 at rank 4 and crashed at rank 1: the shrink,
    held to the same verdict, stayed at rank 4, and the bug was filed twice (audit VI's
    openvino-onnx 38 and openvino 01). Memory never written and a crash on the same feature are
    one symptom: the shrink moves on to the crash."""
    data = np.arange(1, 7, dtype=np.float32).reshape(1, 2, 3)
    case = classify(Case(spec="onnx/Pad-19", data=data, pads=[0, 0, -2, 0, 0, 1]))
    out = tmp_path / "bundle"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "CropPastAxisCorruptsAtRankAdapter",
                 "--out", str(out), "--time-limit", "10"]) == 0
    minimal = json.loads((out / "case.json").read_text().splitlines()[0])
    assert len(minimal["data"]["shape"]) == 1, minimal
    assert "crash" in (out / "REPORT.md").read_text().split("\n")[0].lower()


def test_pads_from_constant_nodes_have_a_control_whose_values_come_from_constant_nodes_written_alike(tmp_path):
    """TVM refused a Pad whose pads came from Constant nodes written with value_ints, and its
    controls passed: they fed the pads' values as graph inputs, a path the failure never took,
    and the bundle asked for a look; the same Constant feeding Reshape fails alike (audit VI's
    tvm 05). The pads' values control takes them from the Pad's own producer."""
    from padconf.cases.context import Consumer, Context, Producer
    from tests.context_cases import context_case
    case = context_case([1.0, 2.0], [1, 0], Context(Consumer.NONE, producer=Producer.CONSTANT_INTS), mode="edge")
    out = tmp_path / "bundle"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "ValueIntsRefusedAdapter",
                 "--out", str(out), "--time-limit", "5"]) == 0
    found = _evidence(out)
    controls = {c["operand"]: c for c in found["checks"]["c"]["controls"]}
    assert controls["pads values"]["fails"] and controls["pads values"]["error"] == "no value in Constant"
    assert found["label"] == "not-pad-specific", found["why"]


def test_a_control_through_other_ops_that_fails_otherwise_than_the_pad_does_not_fail_check_c(tmp_path):
    """TVM read past the input for a reflect pad with pads from Constant nodes, and refused the
    pads' values control, their Constant feeding Concat ("ShapeExpr"): another op's flaw, which
    says nothing of the Pad's wrong value, left (c) missing and the bug asking for a look. A
    control through other ops fails (c) only as it fails beside a failure in triage: as the Pad did."""
    from padconf.cases.context import Consumer, Context, Producer
    from tests.context_cases import context_case
    case = context_case([[1.0, 2.0, 3.0]], [0, 3, 0, 0], Context(Consumer.NONE, producer=Producer.CONSTANT_NODE),
                        mode="reflect")
    out = tmp_path / "bundle"
    assert main(["minimize", _case_file(tmp_path, case), "--runtime", FAKE + "ConstantNodeZeroFillReflectAdapter",
                 "--out", str(out), "--time-limit", "10"]) == 0
    found = _evidence(out)
    assert found["checks"]["c"]["passed"], found["checks"]["c"]
    assert "failing otherwise than the Pad, which says nothing of it: pads values (Concat: wrongly-rejected)" \
        in found["checks"]["c"]["how"]
    assert "c" not in found["missing"], found["missing_text"]


def test_one_bug_whose_symptom_the_pads_placement_and_index_type_choose_is_one_bundle(tmp_path):
    """OpenVINO's rank-0 data: refused with constant pads, a crash with int32 pads fed at run time,
    filed twice (audit VII's openvino 18 and 34). The crash's case with the refusal's index type
    and placement is refused as that bundle's case is: one bundle."""
    cases = [classify(Case(spec="onnx/Pad-19", data=np.array(2.0, np.float32), pads=[], pads_type=t))
             for t in ("int64", "int32")]
    bundles = _minimized_run(tmp_path, FAKE + "RankZeroByPlacementAndIndexTypeAdapter", cases)
    assert len(bundles) == 1, [b.name for b in bundles]
    twins = [v["operand_twin"] for v in _evidence(bundles[0])["variants"] if v.get("operand_twin")]
    assert any("placement" in t for t in twins), twins
