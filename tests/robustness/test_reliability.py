"""What padconf guarantees whatever a runtime or a user does (docs/reliability.md): a runtime's
output never corrupts padconf's channel, no process outlives padconf, every result survives
a torn file, and every bad input is one line on stderr with exit 2 and nothing destroyed."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core.dtypes import decode_array, encode_array
from padconf.execution.worker import Worker
from padconf.judging.verdicts import judge
from padconf.run.rundir import read_jsonl, set_torn_line_aside
from tests.robustness.test_hostile_inputs import identified

FAKE = "tests.fake_adapters:"
ROOT = Path(__file__).resolve().parents[2]


def one_case(first=1):
    return classify(Case(spec="onnx/Pad-18", data=np.array([first, 2, 3], np.int32), pads=[1, 1]))


def result_keys(out):
    return Counter((r["runtime"], r["placement"], r["case_id"], r["verdict"])
                   for r in read_jsonl(out / "results.jsonl"))


# ---------------------------------------------------------------- the worker channel


def test_a_runtime_writing_to_stdout_and_stderr_cannot_break_the_protocol(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "PrintingAdapter", "--spec", "onnx/Pad-19",
                 "--max-examples", "6", "--out", str(out)]) == 0
    rows = read_jsonl(out / "results.jsonl")
    # a case too large to check is inconclusive whatever the runtime does (every draw holds one)
    assert rows and all(r["verdict"] in ("pass", "ambiguous") or r["kind"] == "too-large-to-check" for r in rows)
    # what the runtime printed is that case's evidence
    assert all("runtime log: padding now" in r["printed"]["stdout"] for r in rows)
    assert all(r["printed"]["stderr"] == "runtime warning: from C\n" for r in rows)


def test_the_dtype_the_runtime_returned_is_judged():
    worker = Worker(FAKE + "WrongDtypeAdapter")
    try:
        cases = [one_case(1), one_case(666)]
        verdicts = [judge(c, o, s) for c, (o, s) in zip(cases, worker.run(cases, "inputs"))]
    finally:
        worker.close()
    assert [v.verdict for v in verdicts] == ["pass", "mismatch"]
    assert verdicts[1].detail == "dtype float64 instead of int32"


@pytest.mark.slow
@pytest.mark.parametrize("fake,why", [
    ("CrashOnProbeAdapter", "killed by SIGSEGV"),
    ("HangOnProbeAdapter", "no answer within 2 s of starting"),
    ("NoSuchAdapter", "cannot load adapter tests.fake_adapters:NoSuchAdapter: AttributeError"),
])
def test_an_adapter_that_fails_to_load_or_probe_is_unavailable_in_one_line(fake, why):
    # only the hang waits on the short start timeout: a loaded machine may take longer to import
    worker = Worker(FAKE + fake, **({"start_timeout": 2} if fake == "HangOnProbeAdapter" else {}))
    try:
        about = worker.describe([("onnx/Pad-18", "int32")])
    finally:
        worker.close()
    assert why in about["unavailable"] and "\n" not in about["unavailable"]


def test_run_with_only_an_unloadable_adapter_is_one_line_exit_2(tmp_path, capsys):
    code = main(["run", "--runtime", "no_such_module:Adapter", "--spec", "onnx/Pad-18",
                 "--max-examples", "1", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "nothing to run: runtime no_such_module:Adapter unavailable: cannot load adapter" in err


# ---------------------------------------------------------------- nothing outlives padconf


def survivors(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_no_process_outlives_padconf_even_one_that_left_the_process_group(tmp_path, how):
    marker = f"padconf-escapee-{uuid.uuid4().hex}"
    run_dir = tmp_path / "run"
    # a run of one case, Pad-2's worked example with its first element made the fake's trigger
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-2",
                 "--max-examples", "0", "--out", str(run_dir)]) == 0
    doc = json.loads((run_dir / "cases.jsonl").read_text().splitlines()[0])
    data = decode_array(doc["data"])
    data.reshape(-1)[0] = 666
    doc["data"] = encode_array(data, "float")
    (run_dir / "cases.jsonl").write_text(json.dumps(identified(doc)) + "\n")
    (run_dir / "results.jsonl").unlink()
    run_json = json.loads((run_dir / "run.json").read_text())
    run_json.update(runtimes=[FAKE + "EscapingHangAdapter"], timeout=60, case_count=1)
    (run_dir / "run.json").write_text(json.dumps(run_json))
    cmd = [sys.executable, "-m", "padconf.cli", "run", "--resume", "--runtime", FAKE + "EscapingHangAdapter",
           "--out", str(run_dir)]
    scratch = tmp_path / "tmp"  # where padconf's zygotes make their scratch folders
    scratch.mkdir()
    env = {**os.environ, "PADCONF_TEST_MARKER": marker, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not survivors(marker):
        time.sleep(0.1)
    assert survivors(marker), "the escaping child never started"
    time.sleep(0.3)
    worker_marker = "tests.fake_adapters:EscapingHangAdapter"
    assert survivors(worker_marker)
    proc.send_signal(how)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (survivors(marker) or survivors(worker_marker)
                                           or list(scratch.glob("padconf-worker-*"))):
        time.sleep(0.1)
    left = survivors(marker) + survivors(worker_marker)
    for pid in left:  # do not leave them spinning on the CI machine, then fail
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} processes outlived padconf after {how.name}"
    assert not list(scratch.glob("padconf-worker-*")), "a zygote's scratch folder outlived padconf"


# ---------------------------------------------------------------- torn files


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """An uninterrupted run, to compare every interrupted one with."""
    out = tmp_path_factory.mktemp("whole") / "run"
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-13",
                 "--max-examples", "4", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_a_results_file_cut_at_every_offset_of_its_last_line_reads_back_whole_lines(finished_run, tmp_path):
    data = (finished_run / "results.jsonl").read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1  # the last line
    whole = read_jsonl(finished_run / "results.jsonl")
    for cut in range(start, len(data)):
        path = tmp_path / "results.jsonl"
        path.write_bytes(data[:cut])
        Path(f"{path}.torn").unlink(missing_ok=True)
        assert set_torn_line_aside(path) == (cut > start)
        assert path.read_bytes() == data[:start]
        assert read_jsonl(path) == whole[:-1]
        if cut > start:
            assert Path(f"{path}.torn").read_bytes() == data[start:cut] + b"\n"


@pytest.mark.parametrize("where", ["first byte", "middle", "last byte before the newline"])
def test_resume_after_a_torn_results_line_gives_the_same_results(finished_run, tmp_path, where):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    data = (out / "results.jsonl").read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut = {"first byte": start + 1, "middle": (start + len(data)) // 2,
           "last byte before the newline": len(data) - 1}[where]
    (out / "results.jsonl").write_bytes(data[:cut])
    assert main(["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)]) == 0
    assert result_keys(out) == result_keys(finished_run)
    assert (out / "results.jsonl.torn").read_bytes() == data[start:cut] + b"\n"


def test_resume_after_a_torn_cases_file_draws_the_same_cases(finished_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    data = (out / "cases.jsonl").read_bytes()
    (out / "cases.jsonl").write_bytes(data[:len(data) // 2])
    (out / "results.jsonl").write_bytes(b"".join((out / "results.jsonl").read_bytes().splitlines(True)[:3]))
    assert main(["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)]) == 0
    assert (out / "cases.jsonl").read_bytes() == data
    assert result_keys(out) == result_keys(finished_run)


# ---------------------------------------------------------------- bad input: one line, exit 2, nothing lost


BAD_ARGUMENTS = {
    "timeout 0": ["--timeout", "0"],
    "timeout -1": ["--timeout", "-1"],
    "timeout nan": ["--timeout", "nan"],
    "timeout inf": ["--timeout", "inf"],
    "timeout 1e-300": ["--timeout", "1e-300"],  # every case a timeout charged to the runtime (attack round C)
    "compile-timeout 0.01": ["--compile-timeout", "0.01"],
    "max-examples -1": ["--max-examples", "-1"],
    "memory-mb 0": ["--memory-mb", "0"],
    "unknown spec": ["--spec", "onnx/Pad-99"],
    "unknown runtime": ["--runtime", "tensorrt"],
    "jobs 10**6": ["--jobs", "1000000"],
    "generate seed 2**64": ["generate", "--seed", str(2**64)],
    "generate per-combo 10**9": ["generate", "--per-combo", "1000000000"],
}


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys, name):
    command = [] if name.startswith("generate") else ["run"]
    code = main([*command, *BAD_ARGUMENTS[name], "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_out_over_an_existing_run_is_refused_and_keeps_it(finished_run, tmp_path, capsys):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    before = (out / "results.jsonl").read_bytes()
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)]) == 2
    assert "holds a run already" in capsys.readouterr().err
    assert (out / "results.jsonl").read_bytes() == before


@pytest.mark.parametrize("option", [["--runtime", FAKE + "SlowAdapter"], ["--spec", "onnx/Pad-19"], ["--seed", "3"]])
def test_resume_refuses_options_that_change_the_run(finished_run, tmp_path, capsys, option):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    before = (out / "results.jsonl").read_bytes()
    assert main(["run", "--resume", *option, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--resume continues" in err and len(err.strip().splitlines()) == 1
    assert (out / "results.jsonl").read_bytes() == before


def test_resume_accepts_options_that_repeat_the_run(finished_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    assert main(["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-13",
                 "--out", str(out)]) == 0


@pytest.mark.slow
def test_several_runtimes_after_one_flag(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", FAKE + "PrintingAdapter", "--spec", "onnx/Pad-2",
                 "--max-examples", "0", "--out", str(out)]) == 0
    assert {r["runtime"] for r in read_jsonl(out / "results.jsonl")} == {FAKE + "CorrectAdapter",
                                                                          FAKE + "PrintingAdapter"}


def broken_results(path):
    rows = path.read_text().splitlines(True)
    return {
        "missing keys": rows[0] + json.dumps({"runtime": "x"}) + "\n" + "".join(rows[1:]),
        "binary bytes": rows[0] + "\x00\udcff".encode("utf-8", "surrogateescape").decode("latin-1") + "\n",
        "not an object": rows[0] + "[1, 2]\n",
    }


@pytest.mark.parametrize("damage", ["missing keys", "binary bytes", "not an object"])
def test_a_damaged_results_file_is_one_line_and_left_as_it_is(finished_run, tmp_path, capsys, damage):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    text = broken_results(out / "results.jsonl")[damage]
    (out / "results.jsonl").write_bytes(text.encode("latin-1") if damage == "binary bytes" else text.encode())
    before = (out / "results.jsonl").read_bytes()
    assert main(["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "results.jsonl" in err and len(err.strip().splitlines()) == 1
    assert (out / "results.jsonl").read_bytes() == before


@pytest.mark.parametrize("doc", [{"seed": 0}, {"runtimes": [], "seed": 0}, {"runtimes": ["x"], "timeout": -1}, [1]])
def test_a_run_json_without_runtimes_or_with_bad_values_is_malformed(tmp_path, capsys, doc):
    (tmp_path / "run.json").write_text(json.dumps(doc))
    assert main(["run", "--resume", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "run.json: malformed" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("where", ["a file", "an unwritable place"])
def test_out_that_cannot_hold_a_run_is_one_line(tmp_path, capsys, where):
    target = tmp_path / "file" if where == "a file" else Path("/proc/padconf-cannot-be-here")
    if where == "a file":
        target.write_text("keep me")
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-2", "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    if where == "a file":
        assert target.read_text() == "keep me"


def spec_copy(tmp_path, text: bytes | str):
    root = tmp_path / "specs"
    shutil.copytree(ROOT / "padconf" / "spec" / "documents", root)
    path = root / "onnx" / "Pad-19.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def alias_bomb() -> str:
    lines = ["id: onnx/Pad-19", "a0: &a0 [" + ", ".join(['"lol"'] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("content,words", [
    (bytes(range(256)) * 8, "not UTF-8 text"),
    (alias_bomb(), "nodes once its aliases are expanded"),  # refused by the one YAML composer
    ("x" * (2 << 20), "larger than"),
])
def test_spec_files_that_are_not_spec_files_are_one_line(tmp_path, capsys, content, words):
    """The alias bomb is refused by its nesting ("nested too far"), before it is expanded (it took
    130 s before it was bounded): the message says which bound held, no timing is needed."""
    root = spec_copy(tmp_path, content)
    assert main(["--specs-dir", str(root), "check"]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_an_example_output_row_too_short_is_one_line(tmp_path, capsys):
    text = (ROOT / "padconf/spec/documents/onnx/Pad-19.yaml").read_text()
    root = spec_copy(tmp_path, text.replace("[0.0, 0.0, 2.3, 3.4]", "[0.0, 0.0, 2.3]", 1))
    assert main(["--specs-dir", str(root), "check"]) == 2
    err = capsys.readouterr().err
    assert "examples[0].output: not a float array: rows of unequal length" in err
    assert len(err.strip().splitlines()) == 1
