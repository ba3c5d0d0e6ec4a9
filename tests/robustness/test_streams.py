"""A closed stdout or stderr (``padconf run ... | head -1``) never loses results and never
changes the exit code: what padconf would print there is dropped, the command runs to its end
and exits with its own code (0 here; 1 only for a difference found) (docs/reliability.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PADCONF = str(Path(sys.executable).with_name("padconf"))
RUN = ["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "3"]


def finished(out: Path) -> int:
    """The results run.json counts once the run has finished, of all its runtimes (absent: it did not)."""
    return sum(json.loads((out / "run.json").read_text())["results"].values())


@pytest.mark.slow
@pytest.mark.parametrize("stream", ["stdout", "stderr", "both"])
def test_a_run_whose_reader_closes_its_stream_finishes_and_keeps_its_exit_code(tmp_path, stream):
    """rich's console raised SystemExit(1), the code for a difference found, with no result
    written: as ``| head -1`` does, the reader takes one line and closes the pipe."""
    out = tmp_path / "run"
    redirect = {"stdout": "", "stderr": "2>&1 >/dev/null", "both": "2>&1"}[stream]
    shell = f"{PADCONF} {' '.join(RUN)} --out {out} {redirect} | head -1; echo rc=${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=300)
    lines = done.stdout.splitlines()
    assert lines[-1] == "rc=0", done.stdout + done.stderr
    assert finished(out) == len((out / "results.jsonl").read_text().splitlines()) > 0
    assert (out / "summary.md").is_file() and "Traceback" not in done.stderr, done.stderr


@pytest.mark.slow
def test_a_report_or_baseline_to_a_closed_stdout_keeps_its_exit_code(tmp_path):
    out = tmp_path / "run"
    assert subprocess.run([PADCONF, *RUN, "--out", str(out)], capture_output=True, timeout=300).returncode == 0
    for args in (["report", str(out), "--html", str(tmp_path / "r.html")],
                 ["baseline", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--work", str(tmp_path / "w"),
                  "--out", str(tmp_path / "b.yaml")]):
        shell = f"{PADCONF} {' '.join(args)} 2>&1 | head -c 1 >/dev/null; echo rc=${{PIPESTATUS[0]}}"
        done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=300)
        assert done.stdout.splitlines()[-1] == "rc=0", done.stdout + done.stderr
    # the baseline's only output is stdout: lost, it is said, exit 2 (attack round C: exit 0, the baseline nowhere)
    done = subprocess.run(["bash", "-c", f"{PADCONF} baseline --runtime onnx-reference --spec onnx/Pad-19 --work "
                           f"{tmp_path / 'w2'} >/dev/full"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "the baseline did not reach it whole" in done.stderr, done.stderr


@pytest.mark.parametrize("args, code", [(["--version"], 0), (["--help"], 0), (["run", "--help"], 0),
                                        (["--no-such-option"], 2), (["run", "--max-examples", "x"], 2)])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_what_prints_before_any_command_runs_keeps_its_exit_code_on_a_closed_stream(args, code, stream):
    """``padconf --version | head -0``: argparse printed before the streams were padconf's, and
    the broken pipe was a traceback and exit 1. What --help and --version print is their whole
    output, as a listing's is: lost on stdout, it is one line and exit 2 (attack round E's
    c5_listing_cmds_stdout_closed: exit 0, the version nowhere); a usage error keeps its 2."""
    code = 2 if stream == "stdout" else code
    read, write = os.pipe()
    os.close(read)  # the reader has gone before padconf writes
    try:
        other = subprocess.PIPE
        done = subprocess.run([PADCONF, *args], stdout=write if stream == "stdout" else other,
                              stderr=write if stream == "stderr" else other, timeout=120)
    finally:
        os.close(write)
    shown = (done.stderr if stream == "stdout" else done.stdout) or b""
    assert done.returncode == code, shown
    assert b"Traceback" not in shown and b"BrokenPipe" not in shown
    if stream == "stdout" and args[-1] in ("--help", "--version"):
        assert shown.count(b"\n") == 1 and b"did not reach it whole" in shown, shown


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("streams") / "run"
    assert subprocess.run([PADCONF, *RUN, "--out", str(out)], capture_output=True, timeout=300).returncode == 0
    return out


@pytest.mark.parametrize("where", ["full device", "reader gone"])
def test_a_commands_output_on_stdout_lost_is_one_line_and_exit_2(small_run, where):
    """``report --bugs`` is its stdout: on a full device, or with its reader gone, it exited 0
    with nothing written (attack round C); ``baseline`` without --out likewise (above)."""
    assert subprocess.run([PADCONF, "report", str(small_run), "--bugs"], capture_output=True, timeout=120).stdout
    read, write = os.pipe()
    os.close(read)  # the reader gone before padconf writes
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        done = subprocess.run([PADCONF, "report", str(small_run), "--bugs"], stderr=subprocess.PIPE, text=True,
                              stdout=full if where == "full device" else write, timeout=120)
    finally:
        os.close(write)
        os.close(full)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "did not reach it whole" in done.stderr, done.stderr
    ok = subprocess.run([PADCONF, "report", str(small_run), "--bugs"], stdout=subprocess.DEVNULL, timeout=120)
    assert ok.returncode == 0


@pytest.mark.parametrize("command", [["specs"], ["runtimes"], ["compile-cache"], ["compile-cache", "--clear"]])
@pytest.mark.parametrize("where", ["not open", "full device", "reader gone"])
def test_a_listing_commands_stdout_lost_is_one_line_and_exit_2(tmp_path, command, where):
    """``padconf specs >&-`` lost its whole listing and exited 0 (attack round D): every command
    whose output is its listing on stdout says so, exit 2, as ``report --bugs`` does; and
    ``compile-cache --clear``, whose count of what it deleted went nowhere (attack round V)."""
    read, write = os.pipe()
    os.close(read)
    full = os.open("/dev/full", os.O_WRONLY)
    target = {"not open": "", "full device": ">/dev/full", "reader gone": f">&{write}"}[where]
    closed = "1>&-" if where == "not open" else ""
    env = {**os.environ, "PADCONF_COMPILE_CACHE": str(tmp_path / "cache")}
    try:
        done = subprocess.run(["bash", "-c", f"{PADCONF} {' '.join(command)} {target} {closed}"], env=env,
                              stderr=subprocess.PIPE, text=True, timeout=120, pass_fds=(write,))
    finally:
        os.close(write)
        os.close(full)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "did not reach it whole" in done.stderr, done.stderr
    ok = subprocess.run([PADCONF, *command], stdout=subprocess.DEVNULL, env=env, timeout=120)
    assert ok.returncode == 0


@pytest.mark.slow
def test_a_gate_that_finds_a_difference_with_its_lines_lost_stays_1_and_says_so(tmp_path):
    """``gate ... >&-`` that fails the build exited 1 with its lines (what is new) nowhere and
    nothing on stderr (attack round VI): the verdict stays 1, and one line says what was lost."""
    (tmp_path / "b.yaml").write_text("[]\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(["bash", "-c", f"{PADCONF} gate --runtime tests.fake_adapters:WrongOnExampleAdapter "
                           f"--spec onnx/Pad-19 --baseline b.yaml --work w >&-"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "the gate's lines (what is new, what is fixed) did not reach it whole" \
        in done.stderr, done.stderr
