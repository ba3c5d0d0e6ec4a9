"""padconf.pytest.plugin: ``pytest --pyargs padconf.pytest`` judges as ``padconf gate`` does, with
strict xfails for the baseline, JUnit XML, and the same verdicts under pytest-xdist. Each run is
a pytest of its own in a subprocess, on one spec version to stay fast."""
import os
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from padconf.cli import main
from padconf.gate.baseline import parse_baseline
from padconf.gate.gate import GateConfig, gate
from padconf.run.rundir import read_jsonl

ROOT = Path(__file__).resolve().parents[2]  # tests.fake_adapters imports from here
FAKE = "tests.fake_adapters:"
SPEC = "onnx/Pad-19"
EXAMPLE_CASE = "onnx/Pad-19:edge:float:af0873ff6e82"  # the worked example the *OnExample fakes spoil
NEW = re.compile(r"new: (\S+) \[(\w+)\]: ")
EXAMPLE_CELLS = "  cells:\n" + "".join(f"  - {SPEC} edge float {p}\n" for p in ("inputs", "initializers", "folded"))


def plugin(tmp_path, runtime, baseline="[]\n", *extra, name="run"):
    """Run the suite; (exit code, output, {test name: outcome}, {test name: failure message})."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(baseline)
    junit = tmp_path / f"{name}.xml"
    # --opt=value: pytest reads a separate value outside the current directory as a test path
    done = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "padconf.pytest", "-p", "no:cacheprovider",
                           f"--padconf-runtime={runtime}", f"--padconf-spec={SPEC}", f"--padconf-baseline={path}",
                           f"--junitxml={junit}", "-q", "-rA", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    outcomes, messages = {}, {}
    if junit.exists():
        for case in ElementTree.parse(junit).getroot().iter("testcase"):
            child = next(iter(case), None)
            outcomes[case.get("name")] = "passed" if child is None else f"{child.tag}:{child.get('type', '')}"
            messages[case.get("name")] = "" if child is None else child.get("message", "")
    return done.returncode, done.stdout + done.stderr, outcomes, messages


def failing(outcomes: dict) -> set[str]:
    return {name for name, outcome in outcomes.items() if outcome.startswith(("failure", "error"))}


@pytest.mark.slow
def test_a_conforming_runtime_passes_with_one_readable_junit_testcase_per_case_and_placement(tmp_path):
    code, out, outcomes, _ = plugin(tmp_path, FAKE + "ConformingAdapter")
    assert code == 0, out
    assert "padconf gate tests.fake_adapters:ConformingAdapter" in out  # the gate's summary
    names = list(outcomes)
    assert len(names) == len(set(names)) > 100 and not failing(outcomes)
    pattern = re.compile(r"test_pad\[onnx/Pad-19-[a-z]+-\w+-\w+-\d+(-[a-z-]+)?-[a-z]+\]")  # ...-<placement>
    assert all(pattern.fullmatch(n) for n in names), [n for n in names if not pattern.fullmatch(n)][:3]
    assert "test_pad[onnx/Pad-19-edge-float-ex_example_3_edge-0-inputs]" in names
    placements = Counter(n.rsplit("-", 1)[1] for n in names)
    assert len(placements) > 1 and len(set(placements.values())) == 1  # each case in every placement
    assert "inputs]" in placements


@pytest.mark.slow
def test_new_failures_are_the_gates_and_xdist_gives_the_serial_verdicts(tmp_path):
    runtime = FAKE + "WrongOnExampleAdapter"
    # a stale signature entry (few results in scope: few confirming reruns), and a case-id entry
    # listing another failure than the example's mismatch: its strict xfail must not forgive that
    stale = ("- runtime: .*\n  verdict: crash\n  why: no longer crashes\n  cells: [onnx/Pad-19 wrap int8 inputs]\n"
             f"- runtime: .*\n  case: {EXAMPLE_CASE}\n  verdict: crash\n"
             f"  why: a crash, not a mismatch\n{EXAMPLE_CELLS}")
    judgement = gate(GateConfig(runtime=runtime, specs=[SPEC]), parse_baseline(stale), tmp_path / "gate")
    code, out, outcomes, messages = plugin(tmp_path, runtime, stale)
    assert code == 1 and len(outcomes) == len(judgement.rows)  # a test per result of the gate
    failed = failing(outcomes)
    assert failed == {n for n in outcomes if "ex_example_3_edge" in n}
    plugin_new = {NEW.search(messages[n]).groups() for n in failed}  # case id, placement, verdict, why
    assert plugin_new == {(r["case_id"], r["placement"]) for r in judgement.new}
    assert all(": mismatch: edge float" in messages[n] and "\n" not in messages[n] for n in failed)
    # the case-id entry's cells still fail (otherwise): not fixed; the signature entry's cell is
    assert all("fixed: " not in messages[n] for n in failed)
    assert [f.entry.where for f in judgement.fixed] == ["<baseline>:1"] and \
           "FAILED: 1 fixed baseline signature entries" in out  # as the gate
    # xdist: the same outcome per test, and the controller judges the signature entry on every worker's rows
    code2, out2, outcomes2, _ = plugin(tmp_path, runtime, stale, "-n", "2", name="xdist")
    assert code2 == 1 and outcomes2 == outcomes and "FAILED: 1 fixed baseline signature entries" in out2


@pytest.mark.slow
def test_the_plugin_and_the_gate_give_one_triage_and_one_count(tmp_path):
    """On the same suite, the same rows: a refusal its repaired twin does not confirm is
    inconclusive in both (a skipped test, not a pass), and a failure whose control fails too is
    not Pad-specific in both (the gate ran its run's controls; the plugin too)."""
    from padconf.gate.junit import problem_lines
    from padconf.judging.verdicts import Verdict

    runtime = FAKE + "RefusesInt8Adapter"
    judgement = gate(GateConfig(runtime=runtime, specs=[SPEC]), [], tmp_path / "gate")
    counts = judgement.counts
    assert counts[Verdict.INCONCLUSIVE] and counts[Verdict.WRONGLY_REJECTED] and counts[Verdict.PASS]
    gate_new = problem_lines(judgement)
    assert gate_new and all(line.endswith("; triage: not Pad-specific") for line in gate_new), gate_new[:3]
    code, out, outcomes, messages = plugin(tmp_path, runtime)
    assert code == 1 and len(outcomes) == len(judgement.rows), out[-2000:]
    said = re.search(r"(\d+) results \((.*?)\); \d+ known failures", out)
    assert said and int(said[1]) == len(judgement.rows), out[-2000:]
    assert dict((v, int(n)) for n, v in (part.split(" ", 1) for part in said[2].split(", "))) == dict(counts)
    assert sorted(messages[n].removeprefix("Failed: ") for n in failing(outcomes)) == sorted(gate_new)
    skipped = sum(o.startswith("skipped") for o in outcomes.values())
    assert skipped == counts[Verdict.INCONCLUSIVE] + counts[Verdict.SKIPPED]
    assert any(m.startswith("inconclusive: refused, ") for m in messages.values())  # the row's reason


@pytest.mark.slow
def test_the_plugin_takes_the_cases_the_gates_filters_take(tmp_path):
    """--padconf-mode, --padconf-dtype, --padconf-k mean what padconf gate's --mode, --dtype, -k
    mean: the same cases, judged the same; a filtered suite judges no signature entry."""
    chosen = {"modes": ["edge", "wrap"], "dtypes": ["float", "int32"], "pattern": "not example or example_3"}
    judgement = gate(GateConfig(runtime=FAKE + "WrongOnExampleAdapter", specs=[SPEC], **chosen), [],
                     tmp_path / "gate")
    gate_tests = {(r["case_id"], r["placement"]) for r in judgement.rows}
    assert {r["mode"] for r in judgement.rows} == {"edge", "wrap"} and {r["dtype"] for r in judgement.rows} == \
        {"float", "int32"}
    stale = "- runtime: .*\n  verdict: crash\n  why: no longer crashes\n  cells: [onnx/Pad-19 wrap int32 inputs]\n"
    code, out, outcomes, messages = plugin(tmp_path, FAKE + "WrongOnExampleAdapter", stale, "--padconf-mode=edge",
                                           "--padconf-mode=wrap", "--padconf-dtype=float", "--padconf-dtype=int32",
                                           "--padconf-k=not example or example_3")
    assert len(outcomes) == len(gate_tests), out[-2000:]
    plugin_new = {NEW.search(messages[n]).groups() for n in failing(outcomes)}
    assert code == 1 and plugin_new == {(r["case_id"], r["placement"]) for r in judgement.new} != set()
    assert "1 baseline signature entries not judged" in out and "FAILED: " not in out  # not fixed: not judged


@pytest.mark.slow
def test_a_case_id_entry_is_a_strict_xfail(tmp_path):
    """Its why is the baseline's, anyone's text: shown with its escapes and bidi controls visible
    in the XFAIL line and JUnit (they were raw: attack round I)."""
    hostile = (f"- runtime: .*\n  case: {EXAMPLE_CASE}\n  verdict: mismatch\n  why: \"planted \\e[2J\\u202e\"\n"
               + EXAMPLE_CELLS)
    code, out, outcomes, messages = plugin(tmp_path, FAKE + "WrongOnExampleAdapter", hostile)
    assert code == 0, out
    xfailed = {n for n, o in outcomes.items() if o == "skipped:pytest.xfail"}
    assert xfailed == {n for n in outcomes if "ex_example_3_edge" in n} and len(xfailed) > 1  # in every placement
    assert "run.yaml:1): planted \\x1b[2J\\u202e" in out and "\x1b" not in out and "\u202e" not in out
    assert all(messages[n].endswith("planted \\x1b[2J\\u202e") for n in xfailed), messages
    listed = f"- runtime: .*\n  case: {EXAMPLE_CASE}\n  verdict: mismatch\n  why: planted\n{EXAMPLE_CELLS}"
    # the case passing is XPASS(strict): a failure naming the entry to remove
    code, out, outcomes, messages = plugin(tmp_path, FAKE + "ConformingAdapter", listed)
    assert code == 1 and failing(outcomes) == xfailed
    for name in xfailed:
        assert re.fullmatch(r"\[XPASS\(strict\)\] fixed: \S+run\.yaml:1: 1 cells now pass: onnx/Pad-19 edge float \w+ "
                            r"\(they gave 1 pass\) \(mismatch: planted\); remove them from the baseline "
                            r"\(padconf baseline --prune FILE\)", messages[name])


@pytest.mark.slow
def test_a_failure_that_does_not_recur_alone_is_flaky_not_failing(tmp_path, monkeypatch):
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))  # crashes twice, then not
    code, out, outcomes, messages = plugin(tmp_path, FAKE + "FlakyOnExampleAdapter")
    assert code == 0 and not failing(outcomes), out
    flaky = [n for n, m in messages.items() if m.startswith("flaky (not failing the gate): ")]
    assert len(flaky) == 1 and "ex_example_3_edge" in flaky[0] and outcomes[flaky[0]] == "skipped:pytest.xfail"
    assert re.search(r"flaky \(not failing the gate\): \S+ \[\w+\]: crash in the run, (pass, )+pass alone", out)


@pytest.mark.slow
def test_a_signature_entry_that_forgives_nothing_fails_the_session_as_fixed(tmp_path):
    listed = ("- runtime: .*\n  verdict: mismatch\n  origin: example:example_3_edge\n  why: planted\n" + EXAMPLE_CELLS
              + "- runtime: .*\n  verdict: crash\n  why: of a version this run leaves out\n"
              "  cells: [onnx/Pad-18 edge float inputs]\n")
    code, out, outcomes, _ = plugin(tmp_path, FAKE + "ConformingAdapter", listed)
    assert code == 1 and not failing(outcomes)  # every test passed; the baseline did not
    assert re.search(r"fixed: \S+run\.yaml:1: 3 cells now pass: .* \(mismatch: planted\); remove them", out)
    assert re.search(r"FAILED: 1 fixed baseline signature entries: \S+run\.yaml:1\n", out)
    assert "1 baseline signature entries not judged" in out  # Pad-18's: not every test of it ran
    # not every test of Pad-19 ran either: neither entry is judged
    code, out, _, _ = plugin(tmp_path, FAKE + "ConformingAdapter", listed, "-k", "not wrap", name="part")
    assert code == 0 and "2 baseline signature entries not judged" in out


@pytest.mark.slow
def test_baseline_then_the_plugin_passes_and_dropping_an_entry_fails_its_cases(tmp_path, onnxruntime_baseline):
    baseline, work = onnxruntime_baseline  # of SPEC
    text = baseline.read_text()
    code, out, outcomes, _ = plugin(tmp_path, "onnxruntime", text)
    assert code == 0, out
    entries = yaml.safe_load(text)
    rows = read_jsonl(work / "results.jsonl")

    parsed = [parse_baseline(yaml.safe_dump([e]))[0] for e in entries]

    def freed(k):  # the results entry k alone forgives
        rest = [e for i, e in enumerate(parsed) if i != k]
        return {(r["case_id"], r["placement"]) for r in rows
                if parsed[k].matches(r) and not any(e.matches(r) for e in rest)}
    k = min((k for k in range(len(entries)) if freed(k)), key=lambda k: len(freed(k)))  # the quickest to confirm
    kept = entries[:k] + entries[k + 1:]
    code, out, outcomes, messages = plugin(tmp_path, "onnxruntime", yaml.safe_dump(kept), name="dropped")
    assert code == 1
    assert {NEW.search(messages[n]).groups() for n in failing(outcomes)} == freed(k)


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["WrongWhenWarmOnExampleAdapter", "GarbageOnAmbiguousEdgeAdapter"])
def test_the_plugin_gives_the_gates_verdict_on_planted_regressions(tmp_path, runtime):
    # a wrong value only in a worker that ran a case before (no rerun alone shows it), and
    # answers to ambiguous cases that no reading gives
    judgement = gate(GateConfig(runtime=FAKE + runtime, specs=[SPEC]), [], tmp_path / "gate")
    code, out, outcomes, messages = plugin(tmp_path, FAKE + runtime)
    assert judgement.exit_code == code == 1, out
    # the plugin runs its tests in another order than the gate's lanes (and a worker that gave a
    # wrong answer is replaced), so a warm-only failure shows in the cases its order warms
    plugin_new = {NEW.search(messages[n]).groups() for n in failing(outcomes)}
    assert plugin_new and plugin_new <= {(r["case_id"], r["placement"]) for r in judgement.new}


@pytest.mark.slow
@pytest.mark.parametrize("runtime, baseline, extra, says", [
    ("no-such-runtime", "[]\n", (), "ERROR: unknown runtime 'no-such-runtime'"),
    (FAKE + "ConformingAdapter", "[]\n", ("--padconf-spec=onnx/Pad-91",),
     "ERROR: --padconf-spec 'onnx/Pad-91': unknown (did you mean 'onnx/Pad-1'?)"),
    (FAKE + "ConformingAdapter", "[]\n", ("--padconf-spec=19",),
     "ERROR: --padconf-spec '19': unknown (did you mean 'onnx/Pad-19'?)"),
    (FAKE + "ConformingAdapter", "[]\n", ("--padconf-mode=egde",),
     "ERROR: --mode 'egde': unknown (did you mean 'edge'?)"),
    (FAKE + "Missing", "[]\n", ("-n", "2"), "ERROR: nothing to run: runtime tests.fake_adapters:Missing unavailable: "),
    (FAKE + "ConformingAdapter", "- runtime: rt\n  verdict: pass\n  why: x\n  cells: [a b c d]\n", (),
     "run.yaml:1: verdict 'pass' is not"),
])
def test_a_usage_error_is_one_line_not_a_traceback(tmp_path, runtime, baseline, extra, says):
    code, out, outcomes, _ = plugin(tmp_path, runtime, baseline, *extra)
    assert code == pytest.ExitCode.USAGE_ERROR and says in out, out
    assert "Traceback" not in out and "INTERNALERROR" not in out and not outcomes


def test_the_suite_without_a_runtime_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "padconf.pytest", "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: padconf.pytest needs --padconf-runtime NAME" in done.stdout + done.stderr


# README's and docs/ci.md's command: the `pytest` entry point (no working directory on sys.path,
# as `python -m` puts it), no ini file of the working directory (-c /dev/null), no conftest.py
# (--noconftest), no .pytest_cache read or written (-p no:cacheprovider)
DOCUMENTED = ["pytest", "-c", "/dev/null", "--noconftest", "-p", "no:cacheprovider", "--pyargs", "padconf.pytest"]


@pytest.fixture(scope="module")
def reference_baseline(tmp_path_factory) -> Path:
    """onnx-reference's baseline of SPEC, made once for the tests that only read it."""
    where = tmp_path_factory.mktemp("reference-baseline")
    baseline = where / "baseline.yaml"
    assert main(["baseline", "--runtime", "onnx-reference", "--spec", SPEC, "--out", str(baseline),
                 "--work", str(where / "work")]) == 0
    return baseline


@pytest.mark.slow
def test_the_documented_command_runs_no_code_of_the_working_directory(tmp_path, reference_baseline):
    """A runtime team's checkout under test is the working directory: ``python -m pytest
    --pyargs padconf.pytest`` imported its conftest.py (pytest's rootdir conftest), its yaml.py
    instead of PyYAML (``-m`` puts the working directory first on sys.path) and the plugin its
    pytest.ini names, in padconf's controller. The documented command runs none of them, and
    draws no case through the working directory's .hypothesis folder (FIFOs there hang a draw)."""
    for doc in (ROOT / "README.md", ROOT / "docs" / "ci.md"):
        assert " ".join(DOCUMENTED) in doc.read_text(), doc
    checkout, markers = tmp_path / "checkout", tmp_path / "imported"
    checkout.mkdir()
    markers.mkdir()
    options = ["--padconf-runtime=onnx-reference", f"--padconf-spec={SPEC}", f"--padconf-baseline={reference_baseline}",
               "-q"]
    plants = {"conftest.py": "conftest", "yaml.py": "yaml",
              "pytest.ini": "[pytest]\naddopts = -p team_plugin\npythonpath = .\n", "team_plugin.py": "team_plugin"}
    for name, text in plants.items():  # each module leaves a file when imported
        path = checkout / name
        path.write_text(text if name.endswith(".ini") else f"open({str(markers / text)!r}, 'w').close()\n")
        if name != "pytest.ini":
            # the command the README gave imports it (the test plants it right); the earlier
            # plants are imported first, or instead where they break padconf
            subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "padconf.pytest", *options, "--collect-only"],
                           cwd=checkout, capture_output=True, text=True, timeout=300)
            assert (markers / path.stem).exists(), name

    for marker in markers.iterdir():
        marker.unlink()
    # and modules shadowing what padconf and its drawing children import (the old form runs them too,
    # or breaks on them: it trusts the working directory, as docs/ci.md says)
    for name in ("numpy", "multiprocessing", "json"):
        (checkout / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\nraise SystemExit(7)\n")
    charmap = Path(".hypothesis", "unicode_data", unicodedata.unidata_version, "charmap.json.gz")
    for fifo in (checkout / charmap, checkout / ".hypothesis" / "examples",
                 checkout / ".pytest_cache" / "v" / "cache" / "lastfailed"):
        fifo.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
    for extra in ([], ["-n", "2"]):
        done = subprocess.run([str(Path(sys.executable).with_name("pytest")), *DOCUMENTED[1:], *options, *extra],
                              cwd=checkout, capture_output=True, text=True, timeout=300)
        out = done.stdout + done.stderr
        assert done.returncode == 0 and " passed" in out, out[-3000:]
        assert not list(markers.iterdir()), out[-3000:]


@pytest.mark.slow
def test_xdist_workers_start_isolated_from_a_python_path_holding_a_space(tmp_path, reference_baseline):
    """execnet splits a worker's ``python=`` as a shell does, and the plugin once left the workers
    of a Python whose path holds a space unisolated: the checkout's json.py ran in each of them."""
    spaced = tmp_path / "My Projects" / "venv"
    spaced.parent.mkdir()
    spaced.symlink_to(sys.prefix, target_is_directory=True)
    checkout, markers = tmp_path / "checkout", tmp_path / "imported"
    checkout.mkdir()
    markers.mkdir()
    (checkout / "json.py").write_text(f"open({str(markers / 'json')!r}, 'w').close()\nraise SystemExit(7)\n")
    python = spaced / "bin" / Path(sys.executable).name
    done = subprocess.run([str(python), str(spaced / "bin" / "pytest"), *DOCUMENTED[1:], "-q", "-n", "2",
                           "--padconf-runtime=onnx-reference", f"--padconf-spec={SPEC}",
                           f"--padconf-baseline={reference_baseline}"],
                          cwd=checkout, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and " passed" in out, out[-3000:]
    assert not list(markers.iterdir()), out[-3000:]


@pytest.mark.parametrize("gone", ["reader", "device", "stdout", "stderr"])
def test_the_documented_command_keeps_its_exit_code_when_a_stream_fails(tmp_path, reference_baseline, gone):
    """``pytest ... | head -1``: pytest's terminal writer raised on the closed pipe, and the
    session exited 1, "tests failed", where every failure is forgiven; so did stdout or stderr
    not open at all (``>&-``, ``2>&-``: pytest's last flush, its faulthandler plugin). The report
    is dropped from there on, said in one line where stderr is open, and the exit code is the
    tests'. The reader is gone before the first byte here, so the write fails on every machine."""
    streams: dict = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    if gone == "reader":
        read, streams["stdout"] = os.pipe()
        os.close(read)
    elif gone == "device":
        streams["stdout"] = os.open("/dev/full", os.O_WRONLY)
    # a stream not open at all: the shell's ">&-", in the child before pytest starts
    shut = {"stdout": 1, "stderr": 2}.get(gone)
    try:
        done = subprocess.run([str(Path(sys.executable).with_name("pytest")), *DOCUMENTED[1:], "-q",
                               "--padconf-runtime=onnx-reference", f"--padconf-spec={SPEC}",
                               f"--padconf-baseline={reference_baseline}"],
                              cwd=tmp_path, text=True, timeout=300, **streams,
                              preexec_fn=None if shut is None else lambda: os.close(shut))
    finally:
        if isinstance(streams["stdout"], int) and streams["stdout"] >= 0:
            os.close(streams["stdout"])
    said = done.stderr or ""
    assert done.returncode == 0, said[-3000:]
    if gone != "stderr":
        assert said.startswith("padconf: stdout failed (") and said.count("\n") == 1, said[-3000:]
