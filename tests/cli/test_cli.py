"""padconf never passes on nothing: every way of selecting no spec, no case or no runtime is one
line on stderr and exit 2; --specs-dir is honoured by every command, --resume included."""
import itertools
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from padconf.cli import main
from padconf.core.progress import ProgressLog, progress_waits
from padconf.run.rundir import read_jsonl
from padconf.spec.loader import SPECS_DIR

FAKE = "tests.fake_adapters:"


def one_line_error(capsys, code, words):
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def specs_subset(tmp_path, ids):
    root = tmp_path / "specs"
    for spec_id in ids:
        (root / spec_id).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SPECS_DIR / f"{spec_id}.yaml", root / f"{spec_id}.yaml")
    return root


def test_the_shipped_specs_live_inside_the_package():
    assert SPECS_DIR == Path(__import__("padconf").__file__).parent / "spec" / "documents"
    assert len(list(SPECS_DIR.glob("*/*.yaml"))) == 14 and (SPECS_DIR / "FORMAT.md").is_file()


@pytest.mark.parametrize("command", [["specs"], ["check"], ["run", "--runtime", FAKE + "CorrectAdapter"]])
@pytest.mark.parametrize("where,words", [("missing", "no such spec folder"), ("empty", "holds no spec file"),
                                         ("too many", "holds more than 64 spec files")])
def test_a_specs_dir_with_no_spec_is_an_error(tmp_path, capsys, command, where, words):
    """Too many is refused before any is parsed (attack round C: 4000 spec files kept
    ``padconf specs`` busy past two minutes)."""
    folder = tmp_path / "specs"
    if where != "missing":
        folder.mkdir()
    if where == "too many":
        (folder / "onnx").mkdir()
        for version in range(65):
            (folder / "onnx" / f"Pad-{version}.yaml").write_text("not: [a spec\n")
    args = ["--specs-dir", str(folder), *command] + (["--out", str(tmp_path / "r")] if command[0] == "run" else [])
    one_line_error(capsys, main(args), words)


@pytest.mark.parametrize("command", [["check"], ["run", "--runtime", FAKE + "CorrectAdapter", "--max-examples", "0"]])
def test_an_unknown_spec_id_is_an_error(tmp_path, capsys, command):
    args = [*command, "--spec", "onnx/Pad-99"] + (["--out", str(tmp_path / "r")] if command[0] == "run" else [])
    one_line_error(capsys, main(args), "unknown spec id 'onnx/Pad-99'")
    assert not (tmp_path / "r").exists()  # nothing written: the corrected command is not refused


def test_an_unknown_spec_id_is_the_runs_only_line(tmp_path, capsys):
    """The refusal alone, as for an unknown runtime: no "drawing cases ... into DIR" first on
    stdout, which says a run has started that never does."""
    code = main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-1x", "--out", str(tmp_path / "r")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "", captured.out
    assert "unknown spec id 'onnx/Pad-1x' (did you mean 'onnx/Pad-1'?)" in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


FINE = ["--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-19", "--max-examples", "0"]


@pytest.mark.slow
@pytest.mark.parametrize("mistake, words", [
    (["--spec", "Pad-19"], "unknown spec id 'Pad-19'"),
    (["--runtime", "no_such_module:Adapter"], "nothing to run: runtime no_such_module:Adapter unavailable"),
    (["--cases", "{tmp}/no-such-folder"], "no-such-folder"),
])
def test_a_mistaken_run_writes_nothing_so_the_corrected_one_just_runs(tmp_path, capsys, mistake, words):
    out = tmp_path / "padconf-results"
    mistake = [a.replace("{tmp}", str(tmp_path)) for a in mistake]
    mistaken = list(FINE)  # the mistake in place of the option it names, or added
    at = mistaken.index(mistake[0]) if mistake[0] in mistaken else len(mistaken)
    mistaken[at:at + 2] = mistake
    one_line_error(capsys, main(["run", *mistaken, "--out", str(out)]), words)
    assert not out.exists()
    assert main(["run", *FINE, "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # a mistaken --force leaves the run it would have replaced as it was
    one_line_error(capsys, main(["run", *mistaken, "--force", "--out", str(out)]), words)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_run_no_runtime_can_run_is_an_error(tmp_path, capsys):
    # OpenVINO's native adapter builds only openvino/* specs: nothing of onnx/Pad-19 is for it
    code = main(["run", "--runtime", "openvino", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(tmp_path / "r")])
    one_line_error(capsys, code, "nothing to run: ")
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_specs_dir_is_honoured_by_specs_check_run_and_resume(tmp_path, capsys):
    root = specs_subset(tmp_path, ["onnx/Pad-11", "onnx/Pad-13"])
    assert main(["--specs-dir", str(root), "specs"]) == 0
    assert f"2 spec files in {root}" in capsys.readouterr().out.replace("\n", "")
    assert main(["--specs-dir", str(root), "check"]) == 0
    assert "over 2 spec files" in capsys.readouterr().out
    out = tmp_path / "run"
    assert main(["--specs-dir", str(root), "run", "--runtime", FAKE + "SlowAdapter", "--max-examples", "3",
                 "--out", str(out)]) == 0
    assert {r["spec"] for r in read_jsonl(out / "cases.jsonl")} == {"onnx/Pad-11", "onnx/Pad-13"}
    assert json.loads((out / "run.json").read_text())["specs_dir"] == str(root)
    # resume draws again from the recorded folder, not the shipped one
    (out / "cases.jsonl").unlink()
    assert main(["--specs-dir", str(root), "run", "--resume", "--runtime", FAKE + "SlowAdapter",
                 "--out", str(out)]) == 0
    assert {r["spec"] for r in read_jsonl(out / "cases.jsonl")} == {"onnx/Pad-11", "onnx/Pad-13"}


def test_no_time_left_is_estimated_while_a_runtime_has_not_started():
    now = [0.0]
    log = ProgressLog("running", Counter({"iree": 10, "onnxruntime": 8547}), clock=lambda: now[0])
    for _ in range(5):
        log.advance("iree")
    now[0] = 5.0
    log.line()
    log.advance("iree")
    now[0] = 10.0
    assert log.line() == ("running: 10 s, 6/8557 results (iree 6/10, onnxruntime 0/8547); not started yet: "
                          "onnxruntime: no estimate of the time left")
    assert log.left() == (None, ["onnxruntime"])
    assert log.left_text() == "time left: not known until onnxruntime starts"


def test_what_still_runs_after_the_last_result_is_said():
    now = [0.0]
    log = ProgressLog("running", Counter({"onnxruntime": 2}), clock=lambda: now[0])
    log.advance("onnxruntime")
    log.advance("onnxruntime")
    log.then = "running the controls of 3 distinct failures"
    now[0] = 30.0
    assert log.line().endswith("; all results in; now running the controls of 3 distinct failures")


@pytest.mark.slow
def test_a_run_says_the_controls_run_after_its_last_result(tmp_path, capsys):
    assert main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-19", "--max-examples", "3",
                 "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    controls = re.search(r"^running: running the controls of \d+ distinct failures \(each one's first case through "
                         rf"Identity, alone in a fresh worker\): {re.escape(FAKE)}WrongValuesAdapter$", out, re.M)
    assert controls, out
    # and from the last result to the controls (results.jsonl rewritten, the failures found), it says so too
    sorting = re.search(r"^running: writing results.jsonl in plan order and finding the distinct failures, whose "
                        r"controls run next$", out, re.M)
    assert sorting and sorting.start() < controls.start(), out
    # and the results' last count before either, not a tick printed after them (day-one trial)
    count = re.search(r"^running: \d+ s, (\d+)/\1 results \(.*\)$", out, re.M)
    assert count and count.start() < sorting.start(), out


def test_a_progress_line_says_how_far_each_runtime_is_and_what_is_slow():
    now = [0.0]
    log = ProgressLog("running", Counter({"onnxruntime": 10, "openvino-onnx": 100}), clock=lambda: now[0])
    for _ in range(10):
        log.advance("onnxruntime")
    now[0] = 5.0
    log.advance("openvino-onnx")
    now[0] = 10.0
    for _ in range(4):
        log.advance("openvino-onnx")  # 5 results in its first 5 s: 95 left at 1 a second
    assert log.line() == ("running: 10 s, 15/110 results (onnxruntime 10/10, openvino-onnx 5/100); "
                          "about 95 s left (the slowest, openvino-onnx, at its pace)")
    assert log.left() == (95.0, []) and log.left_text() == "about 95 s left"
    now[0] = 25.0  # nothing since the last line: a hang, say
    assert log.line().endswith("; slow: openvino-onnx: no result in the last 15 s")


def test_without_a_terminal_progress_lines_come_ever_less_often_down_to_one_a_minute():
    waits = list(itertools.islice(progress_waits(), 6))
    assert waits == [15.0, 30.0, 60.0, 60.0, 60.0, 60.0]
    # a first default run on a busy machine (15 minutes) is 16 lines of progress, not 60
    assert len(list(itertools.takewhile(lambda t: t <= 900, itertools.accumulate(progress_waits())))) == 16


@pytest.mark.slow
def test_without_a_terminal_a_run_prints_progress_lines_at_a_steady_interval(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("padconf.core.progress.PROGRESS_EVERY_S", 0.1)  # SlowAdapter takes >= 0.02 s a result: > 1 s
    assert main(["run", "--runtime", FAKE + "SlowAdapter", "--spec", "onnx/Pad-19", "--max-examples", "20",
                 "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    ticks = re.findall(rf"^running: \d+ s, (\d+)/(\d+) results \({re.escape(FAKE)}SlowAdapter \1/\2\)", out, re.M)
    assert len(ticks) >= 2 and all(int(done) <= int(total) for done, total in ticks)


@pytest.mark.slow
def test_baseline_counts_each_failing_result_once_as_the_gate_forgives_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("padconf.core.progress.PROGRESS_EVERY_S", 0.01)
    runtime, spec = FAKE + "CrashOnExampleAdapter", ["--spec", "onnx/Pad-19"]
    baseline = tmp_path / "b.yaml"
    # its crashes are rerun alone to confirm them: the reruns are no further failures
    assert main(["baseline", "--runtime", runtime, "--out", str(baseline), "--work", str(tmp_path / "b"), *spec]) == 0
    err = capsys.readouterr().err
    assert re.search(rf"^baseline {re.escape(runtime)}: \d+ s", err, re.M)  # a log is never silent
    text = baseline.read_text()
    failing = int(re.search(r"(\d+) failing results \(a case in one placement", text)[1])
    in_entries = sum(int(re.match(r"(\d+) results?;", e["why"])[1]) for e in yaml.safe_load(text))
    assert main(["gate", "--runtime", runtime, "--baseline", str(baseline), "--work", str(tmp_path / "g"), *spec]) == 0
    forgiven = int(re.search(r"(\d+) failing results forgiven", capsys.readouterr().out)[1])
    assert failing == in_entries == forgiven > 0


@pytest.mark.parametrize("args", [["run", "--seed", "١٢"], ["run", "--seed", " 7"], ["run", "--max-examples", "1_0"],
                                  ["run", "--timeout", "١.٥"], ["gate", "--runtime", "onnx-reference", "--seed", "٣"],
                                  ["run", "--compile-budget", "²"]])
def test_a_number_not_in_ascii_digits_is_one_line(capsys, args):
    """int() and float() take Arabic-Indic digits, "1_0" and " 7": `run --seed ١٢` ran (attack
    round D) where `--shard` already refused them; every number of the command line is ASCII."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("ASCII digits" in err or "whole number" in err), err


def test_ctrl_c_while_the_command_imports_is_one_line_and_130():
    """SIGINT in the first half second of any command, while padconf.cli still imported, was a
    traceback and a death by the signal (attack round III): the entry point imports the command
    where the interrupt is caught. The import interrupted here is planted, not timed."""
    import subprocess
    import sys
    planted = ("import builtins, sys\n"
               "real = builtins.__import__\n"
               "def interrupted(name, *args, **kwargs):\n"
               "    if name == 'padconf.cli':\n"
               "        raise KeyboardInterrupt\n"
               "    return real(name, *args, **kwargs)\n"
               "builtins.__import__ = interrupted\n"
               "from padconf.entry import main\n"
               "sys.exit(main())\n")
    done = subprocess.run([sys.executable, "-I", "-c", planted], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130 and done.stderr == "padconf: interrupted while starting; nothing was done\n", \
        done.stderr
