"""padconf's own faults and interruptions: a helper process gone when padconf needs it
is started again, never the run's end; what is padconf's fault exits 3 with its phase and a
traceback file, never as a usage error; Ctrl-C says so with 130 in every phase; one process
writes a run directory at a time; its rows are counted once; an exception that is padconf's own
fault, not the runtime's answer, is never the runtime's verdict."""
import importlib
import importlib.util
import json
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path

import numpy as np
import pytest

from padconf.adapters import Outcome
from padconf.adapters.compile_cache import ENV, KEY_ENV
from padconf.adapters.faults import OwnFault, own_fault, raise_unless_answer
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import FAULT_FILE, main
from padconf.execution.reaper import descendants
from padconf.execution.worker import Worker
from padconf.judging.verdicts import FAILURES, OWN_FAULT, Verdict, confirm_refusal, judge
from padconf.report.report import distinct_failures
from padconf.run import runner, session
from padconf.run.rundir import RESULTS_WRITTEN, RunDirLock, read_jsonl, read_results
from padconf.run.runner import Run, RunConfig

FAKE = "tests.fake_adapters:"
ROOT = Path(__file__).resolve().parents[2]


def planted(first=666):
    """A case WrongValuesAdapter answers wrongly (666 first): a failure, so the run has a control."""
    return classify(Case("onnx/Pad-19", np.array([first, 1, 2], np.int32), [0, 1], mode="constant"))


def zygote_gone_but_not_yet_reaped(worker: Worker) -> None:
    """The zygote killed while its reaper, stopped, still reads as alive: the state a busy machine
    leaves padconf in for a while after a zygote dies (the reaper not yet scheduled to end)."""
    assert worker.zygote is not None
    reaper = worker.zygote.proc.pid
    zygote, = [pid for pid in descendants(reaper) if pid in _children(reaper)]
    os.kill(reaper, signal.SIGSTOP)
    os.kill(zygote, signal.SIGKILL)
    for _ in range(500):  # the kernel ends it at once; wait until it is a zombie, not a timing guess
        if _state(zygote) in ("Z", None):
            break
        time.sleep(0.01)
    assert worker.zygote.alive  # padconf cannot tell yet


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # reaped: gone, or going while it is read
        return None


# ---------------------------------------------------------------- helpers gone when needed


@pytest.mark.slow
def test_a_zygote_started_from_a_thread_that_has_ended_lives_on():
    """Linux sends PR_SET_PDEATHSIG when the thread that forked a process ends: a zygote a lane
    thread started died with the lane, and the controls forked from it (the 'Connection reset
    by peer' at a run's end)."""
    worker = Worker(FAKE + "CorrectAdapter")
    try:
        thread = threading.Thread(target=lambda: worker.order_independent)  # starts the zygote, waits for it
        thread.start()
        thread.join()
        assert worker.zygote is not None
        exited = os.pidfd_open(worker.zygote.proc.pid)
        try:  # the reaper ends within milliseconds of the signal; 3 s is room, not a measurement
            assert not select.select([exited], [], [], 3)[0], "the zygote died with the thread that started it"
        finally:
            os.close(exited)
        case = planted(1)
        (outcome, status), = worker.run([case], "inputs")
        assert status == "ok" and outcome.output is not None
    finally:
        worker.close()


@pytest.mark.slow
def test_a_zygote_gone_before_the_controls_does_not_end_the_run(tmp_path, monkeypatch):
    """Issue 40's traceback: runner.controls -> control_record -> run_alone -> start ->
    FORK -> ConnectionResetError. The zygote is killed between the run phase and the
    controls phase; the run finishes, with its controls, summary and count."""
    original = runner.run_controls

    def kill_first(run_dir, config, jobs, spares, *more):
        for worker in spares.values():
            zygote_gone_but_not_yet_reaped(worker)
        return original(run_dir, config, jobs, spares, *more)

    monkeypatch.setattr(runner, "run_controls", kill_first)
    out = tmp_path / "run"
    run = Run(out, RunConfig(runtimes=[FAKE + "WrongValuesAdapter"]), jobs=1)
    run.execute(run.plan(run.prepare([planted(), planted(1)])))
    controls = read_jsonl(out / "controls.jsonl")
    assert len(controls) == 1 and controls[0]["verdict"] == "pass"  # Identity passes: Pad-specific
    assert json.loads((out / "run.json").read_text())[RESULTS_WRITTEN] == {
        FAKE + "WrongValuesAdapter": len(read_results(out / "results.jsonl"))}


@pytest.mark.slow
def test_a_worker_that_dies_with_its_zygote_costs_no_case(tmp_path):
    """A zygote killed while its worker runs a case: the worker dies with it, and the case runs
    again in a worker of a new zygote, rather than being called the case's crash."""
    worker = Worker(FAKE + "SlowAdapter")
    try:
        cases = [planted(k) for k in range(1, 300)]  # seconds of work: the kill lands mid-batch
        answers = worker.run(cases, "inputs")
        first = next(answers)
        zygote_gone_but_not_yet_reaped(worker)
        rest = list(answers)
        assert [s for _, s in [first, *rest]] == ["ok"] * len(cases)
        assert worker.zygote_deaths == 1
    finally:
        worker.close()


# ---------------------------------------------------------------- exit codes say whose fault


@pytest.mark.slow
def test_padconfs_own_fault_is_exit_3_naming_its_phase_and_its_traceback(tmp_path, monkeypatch, capsys):
    def broken(*args):
        raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr(runner, "run_controls", broken)
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out)]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith("padconf: internal fault while running the controls (ConnectionResetError")
    assert f"`padconf run --resume --out {out}` continues" in err and str(out / FAULT_FILE) in err
    assert "ConnectionResetError" in (out / FAULT_FILE).read_text()


def test_a_file_the_user_named_stays_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.slow
def test_a_fault_file_planted_as_a_link_is_not_written_through(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "run_controls", lambda *args: 1 / 0)
    out = tmp_path / "run"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (out / FAULT_FILE).symlink_to(victim)
    # --force: a folder holding what padconf did not write is refused before any fault, else
    assert main(["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out), "--force"]) == 3
    assert victim.read_text() == "keep"
    where = capsys.readouterr().err.rsplit("traceback in ", 1)[1].strip()
    assert "ZeroDivisionError" in Path(where).read_text()
    Path(where).unlink()


# ---------------------------------------------------------------- Ctrl-C in every phase

def _interrupt_in(monkeypatch, target, name):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(target, name, interrupted)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["drawing", "planning", "controls", "summary"])
def test_ctrl_c_in_each_phase_of_run_is_130_and_its_message(tmp_path, monkeypatch, capsys, where):
    target = {"drawing": (runner, "build_cases"), "planning": (Run, "plan"), "controls": (runner, "run_controls"),
              "summary": (session, "markdown")}[where]
    _interrupt_in(monkeypatch, *target)
    argv = ["run", "--runtime", FAKE + "WrongValuesAdapter", "--spec", "onnx/Pad-19", "--max-examples", "2",
            "--out", str(tmp_path / "run")]
    assert main(argv) == 130
    said = (f"nothing was written yet: `{shlex.join(['padconf', *argv])}` starts it again" if where == "drawing"
            else f"what finished is kept (`padconf run --resume --out {tmp_path / 'run'}` continues)")
    assert capsys.readouterr().err == f"padconf: interrupted; {said}\n"


def _padconf(*args, cwd, tag=""):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PADCONF_TEST_TAG": tag}  # the fake adapters; a mark
    # SIGINT as a terminal gives it: a suite started in the background (`.ci/run &`) hands its
    # children SIGINT ignored, which Python then keeps ignored, as a shell's background job should
    return subprocess.Popen([sys.executable, "-m", "padconf.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.slow
@pytest.mark.parametrize("command, into", [("run", 0.3), ("run", 2.0), ("run", 4.0), ("baseline", 0.3),
                                           ("gate", 0.3), ("minimize", 0.3), ("generate", 0.5)])
def test_ctrl_c_while_the_runtime_works_is_130_for_every_command(tmp_path, command, into):
    """SIGINT ``into`` seconds after workers (generate: its drawing children) are busy (a real
    signal, while lanes, pipes and zygotes are at work: two real runtimes for run, as an earlier user
    found it): never 'Bad file descriptor' or 'Connection reset by peer', and no process left
    behind."""
    runtime = FAKE + "SlowAdapter"
    spec = ["--spec", "onnx/Pad-19"]
    args = {"run": ["run", "--runtime", "onnxruntime", "openvino-onnx", "--profile", "ci", "--out", "r"],
            "baseline": ["baseline", "--runtime", runtime, *spec, "--work", "w", "--out", "b.yaml"],
            "gate": ["gate", "--runtime", runtime, *spec, "--work", "w"],
            "minimize": ["minimize", "case.json", "--runtime", runtime, "--out", "m"],
            "generate": ["generate", "--out", "g"]}[command]
    if command == "gate":
        (tmp_path / "padconf-baseline.yaml").write_text("")
        args += ["--baseline", "padconf-baseline.yaml"]
    if command == "minimize":
        big = classify(Case("onnx/Pad-19", np.full((40, 40), 666, np.int32), [1, 1, 1, 1], mode="constant"))
        (tmp_path / "case.json").write_text(json.dumps(big.to_json()))
    tag = uuid.uuid4().hex
    proc = _padconf(*args, cwd=tmp_path, tag=tag)
    try:
        deadline = time.monotonic() + 300  # a hang's bound, not a timing: it waits for a state
        busy = (lambda: descendants(proc.pid)) if command == "generate" else (lambda: _busy_with(proc.pid))
        while not busy() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(into)  # somewhere inside the work
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    again = f"`{shlex.join(['padconf', *args])}`"
    # a run stopped before its run.json (while it drew its cases, its workers already started) wrote nothing
    drawn = (tmp_path / "r" / "run.json").exists()
    continues = {"run": "what finished is kept (`padconf run --resume --out r` continues)" if drawn else
                        f"nothing was written yet: {again} starts it again",
                 "baseline": f"a baseline starts over: {again} runs it again",
                 "gate": f"a gate starts over: {again} runs it again",
                 "minimize": "the bundles finished are kept in m; minimize starts over, into a new or empty folder: "
                             f"`{shlex.join(['padconf', *args[:-1], 'm-2'])}` runs it again",
                 "generate": f"g is as it was (generate replaces it whole): {again} runs it again"}[command]
    assert (proc.returncode, err.strip().splitlines()[-1:]) == (130, [f"padconf: interrupted; {continues}"]), err
    for _ in range(200):  # every process it started carries the mark; each ends within moments of padconf
        if not _marked(tag):
            break
        time.sleep(0.05)
    assert not _marked(tag)


@pytest.mark.slow
def test_ctrl_c_in_a_minimize_of_several_runtimes_stops_every_lane_before_its_line(tmp_path):
    """Ctrl-C while `minimize RUN` shrinks two runtimes' failures side by side: the interrupt
    line was printed, then the other lane, its workers closed under it, went on to say
    "skipped: WorkerClosed" and label its folder needs-a-look (3 of 6 tries). Every lane now
    stops and settles its folders before the line, which is the last thing said."""
    runtimes = [FAKE + "SlowWrongValuesAdapter", FAKE + "OtherSlowWrongValuesAdapter"]
    data = np.arange(900, dtype=np.float32).reshape(30, 30)
    data[0, 0] = 666  # the fakes' trigger
    case = classify(Case("onnx/Pad-19", data, [1, 1, 1, 1], mode="constant"))
    run = Run(tmp_path / "run", RunConfig(runtimes=runtimes), jobs=1)
    run.execute(run.plan(run.prepare([case])))
    run.release()  # its lock, which the minimize below waits for
    tag = uuid.uuid4().hex
    args = ["minimize", "run", "--runtime", *runtimes, "--jobs", "2", "--time-limit", "60", "--out", "m"]
    proc = _padconf(*args, cwd=tmp_path, tag=tag)
    try:
        deadline = time.monotonic() + 300  # a hang's bound, not a timing: it waits for a state
        while not _busy_with(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.5)  # both lanes shrinking
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    lines = (out + err).strip().splitlines()
    assert proc.returncode == 130 and lines[-1].startswith("padconf: interrupted; "), (out, err)
    assert not any("skipped" in line or "WorkerClosed" in line for line in lines), err
    assert not [p for p in (tmp_path / "m").rglob("*-pending-*")]  # every folder settled
    for _ in range(200):
        if not _marked(tag):
            break
        time.sleep(0.05)
    assert not _marked(tag)


def test_a_minimize_of_several_runtimes_that_minimizes_none_is_one_line_and_exit_2(tmp_path, capsys):
    """A run still being written (its lock held): each runtime's minimize was refused, and
    `minimize RUN` said "0 bundles of 0 failures", exit 0. Nothing minimized is exit 2, its reason."""
    runtimes = [FAKE + "WrongValuesAdapter", FAKE + "WrongAtOneOpsetAdapter"]
    data = np.arange(6, dtype=np.float32)
    data[0] = 666
    run = Run(tmp_path / "run", RunConfig(runtimes=runtimes), jobs=1)
    run.execute(run.plan(run.prepare([classify(Case("onnx/Pad-19", data, [1, 1], mode="constant"))])))
    run.release()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from padconf.run.rundir import RunDirLock\n"
                               "with RunDirLock(Path(sys.argv[1]), exclusive=True):\n"
                               "    print('held', flush=True); time.sleep(120)", str(tmp_path / "run")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        capsys.readouterr()
        assert main(["minimize", str(tmp_path / "run"), "--runtime", *runtimes, "--out", str(tmp_path / "m")]) == 2
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another padconf process is writing this run directory" in err, err


def _marked(tag: str) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"PADCONF_TEST_TAG={tag}".encode() in Path(f"/proc/{entry}/environ").read_bytes():
                found.append(int(entry))
        except OSError:
            pass
    return found


def _busy_with(pid: int) -> bool:
    """Whether padconf ``pid`` has a worker (a reaper's grandchild) under way."""
    return any(descendants(p) for p in descendants(pid))


# ---------------------------------------------------------------- one run per folder


@pytest.mark.slow
def test_a_second_process_on_a_run_directory_is_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    held = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; "
                             "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); "
                             "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(600)", str(out)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert held.stdout is not None and held.stdout.readline() == "held\n"
        before = (out / "results.jsonl").read_bytes()
        for args in (["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)],
                     ["run", "--force", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)],
                     ["report", str(out), "--html", str(tmp_path / "r.html")]):
            assert main(args) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "another padconf process" in err, args
        assert (out / "results.jsonl").read_bytes() == before
    finally:
        held.kill()
        held.wait()
    # the kernel dropped the lock with its holder
    assert main(["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)]) == 0


def test_a_command_gives_up_its_run_directory_when_it_ends_whatever_holds_its_run(tmp_path, monkeypatch):
    """`padconf run` releases the folder's lock as it ends, not when its Run is collected: a Run
    something still holds (here the test; in a long-lived process a traceback, a frame, a
    reference cycle) would hold the lock on, and the next process on the folder be refused."""
    from padconf.cli import commands
    kept = []
    real = commands._run_config
    monkeypatch.setattr(commands, "_run_config", lambda args: kept.append(real(args)) or kept[-1])
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out)]) == 0
    taken = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
             "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)")
    assert kept and subprocess.run([sys.executable, "-c", taken, str(out)]).returncode == 0


def test_a_run_directory_lock_is_dropped_once_released_and_writes_nothing(tmp_path):
    (tmp_path / "d").mkdir()
    with RunDirLock(tmp_path / "d", exclusive=False), RunDirLock(tmp_path / "d", exclusive=False):
        pass  # readers share
    taken = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
             "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)")
    with RunDirLock(tmp_path / "d", exclusive=True):
        assert subprocess.run([sys.executable, "-c", taken, str(tmp_path / "d")]).returncode != 0
    assert subprocess.run([sys.executable, "-c", taken, str(tmp_path / "d")]).returncode == 0
    assert os.listdir(tmp_path / "d") == []  # nothing written into the folder for the lock


def test_rows_written_twice_are_counted_once_and_the_report_says_so(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(out)]) == 0
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines + lines[:3]))
    rows = read_results(out / "results.jsonl")
    assert (len(rows), rows.duplicates) == (len(lines), 3)
    capsys.readouterr()
    assert main(["report", str(out), "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]) == 0
    said = capsys.readouterr().out
    assert f"report on {len(lines)} results" in said and "3 rows repeat" in said.replace("\n", " ")
    assert "3 rows repeat" in (tmp_path / "r.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before it reads", "after it reads"])
def test_a_drawing_child_killed_is_replaced_and_draws_the_same_cases(monkeypatch, when):
    """A drawing child that dies (killed, out of memory) costs nothing: its version is drawn again
    by a new child (a version's cases depend on its spec and seed only). A request it never read
    was a BrokenPipeError at the end of the drawing, reported as padconf's fault."""
    from padconf.execution import children
    from padconf.run import drawing
    from padconf.run.drawing import _draw_in_children, draw_spec
    dies = {"before it reads": "import os; os.kill(os.getpid(), 9)",
            "after it reads": "import os, sys; sys.stdin.readline(); os.kill(os.getpid(), 9)"}[when]
    started = []
    real = drawing.isolated

    def first_one_dies(module):
        started.append(module)
        return [sys.executable, "-c", dies] if len(started) == 1 else real(module)

    class DeadOnArrival(subprocess.Popen):  # the first child gone before padconf writes its request
        def __init__(self, *popen_args, **popen_kwargs):
            super().__init__(*popen_args, **popen_kwargs)
            if len(started) == 1 and when == "before it reads":
                self.wait()

    monkeypatch.setattr(drawing, "isolated", first_one_dies)
    monkeypatch.setattr(children.subprocess, "Popen", DeadOnArrival)
    args = [(None, spec, 4, 0) for spec in ("onnx/Pad-2", "onnx/Pad-19", "openvino/Pad-12")]
    assert _draw_in_children(args, 2) == [draw_spec(a) for a in args]
    assert len(started) == 3  # two children, and one in place of the one that died


# ---------------------------------------------------------------- padconf's own faults are never verdicts

needs_iree = pytest.mark.skipif(importlib.util.find_spec("iree") is None, reason="padconf[iree] is not installed")
needs_tvm = pytest.mark.skipif(importlib.util.find_spec("tvm") is None, reason="padconf[tvm] is not installed")
COMPILERS = [pytest.param("Iree", marks=needs_iree), pytest.param("Tvm", marks=needs_tvm)]


@pytest.fixture
def compile_cache(tmp_path, monkeypatch):
    """A compile cache and key of the test's own, which the workers inherit: every model is converted."""
    monkeypatch.setenv(ENV, str(tmp_path / "compile-cache"))
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "compile-cache.key"))
    monkeypatch.setenv("PADCONF_FLAKY_COUNTER", str(tmp_path / "counter"))


def _compiler_run(tmp_path, runtime: str, cases: list[Case]) -> list[dict]:
    """A real run of ``runtime`` on ``cases``, its rows in plan order; no row may be a failure."""
    out = tmp_path / "run"
    run = Run(out, RunConfig(runtimes=[runtime]), jobs=1)
    run.execute(run.plan(run.prepare(cases)))
    rows = list(read_results(out / "results.jsonl"))
    assert len(rows) == len(cases)
    assert [r for r in rows if r["verdict"] in FAILURES] == []  # nothing to triage, file, gate or minimize
    assert distinct_failures(rows) == [] and not (out / "controls.jsonl").exists()
    return rows


def _small(k: int, first: int | None = None) -> Case:
    data = np.arange(k + 2, dtype=np.float32)
    if first is not None:
        data[0] = first
    return classify(Case("onnx/Pad-19", data, [0, k + 1], mode="constant"))


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_worker_whose_imports_break_mid_run_is_replaced_and_its_case_run_again(tmp_path, compile_cache, compiler):
    """IREE's default run: a worker's import cut short under its cap broke its imports, and every
    later case in it was IREE's "cannot import name ..." refusal, 37 of them Pad bugs to file. The
    ImportError in padconf's conversion code is padconf's fault: the worker ends, the case runs
    again in a fresh one and gets the runtime's own verdict, and so does every case after it."""
    cases = [_small(k) for k in range(5)]
    rows = _compiler_run(tmp_path, FAKE + f"{compiler}ImportsBreakMidRun", cases)
    assert [r["verdict"] for r in rows] == ["pass"] * len(cases)
    faulted = [i for i, r in enumerate(rows) if "padconf's own fault" in (r["note"] or "")]
    assert len(faulted) == 1, [r["note"] for r in rows]
    i = faulted[0]
    assert "import failed in the worker" in rows[i]["note"] and "run again in a fresh worker" in rows[i]["note"]
    before = {r["process"] for r in rows[:i]}
    assert before and rows[i]["process"] not in before  # the worker was replaced
    assert {r["process"] for r in rows[i:]} == {rows[i]["process"]}  # and its successor judged the rest
    assert not any(r["error"] for r in rows)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_slip_in_an_adapters_own_code_is_inconclusive_saying_so_never_a_refusal(tmp_path, compile_cache,
                                                                                  compiler):
    """An AttributeError the adapter's own code raises while it builds one case's model, inside the
    try that turns the runtime's exceptions into refusals: the case runs again in a fresh worker,
    fails the same way, and is inconclusive, saying it is padconf's fault; the worker is replaced
    and the cases after it are judged as usual."""
    cases = [_small(0), _small(1), _small(2, first=666), _small(3), _small(4)]
    rows = _compiler_run(tmp_path, FAKE + f"{compiler}SlipOnTrigger", cases)
    (slipped,) = [i for i, r in enumerate(rows) if r["case_id"] == cases[2].id]
    row = rows[slipped]
    assert row["verdict"] == "inconclusive" and row["error"] is None
    assert row["detail"].startswith(OWN_FAULT + ": AttributeError: ") and "session_options" in row["detail"]
    assert "fake_adapters.py" in row["detail"] and "run again in a fresh worker" in row["note"]
    assert [r["verdict"] for i, r in enumerate(rows) if i != slipped] == ["pass"] * (len(cases) - 1)
    before, after = {r["process"] for r in rows[:slipped]}, {r["process"] for r in rows[slipped + 1:]}
    assert row["process"] not in before | after and not before & after  # each fault ended its worker


def test_padconfs_own_fault_is_inconclusive_whatever_the_case_and_the_worker_said():
    """judge() gives an outcome marked as padconf's fault no other verdict, for every kind of case
    (a must-reject case's missing output would otherwise pass, a defined one's be wrongly-rejected),
    and a refusal whose repaired twin faulted is not confirmed."""
    fault = "ImportError: cannot import name 'Attribute' from 'iree.compiler.ir'"
    defined = planted(1)
    must_reject = classify(Case("onnx/Pad-19", np.array([1, 2, 3], np.int32), [0, 1, 2], mode="constant"))
    ambiguous = classify(Case("onnx/Pad-19", np.zeros((0,), np.float32), [1, 1], mode="edge"))
    assert {defined.kind, must_reject.kind, ambiguous.kind} == {"defined", "must-reject", "ambiguous"}
    for case in (defined, must_reject, ambiguous):
        for status in ("ok", "crash"):
            ruling = judge(case, Outcome(fault=fault), status)
            assert (ruling.verdict, ruling.detail) == (Verdict.INCONCLUSIVE, f"{OWN_FAULT}: {fault}")
    refused = judge(must_reject, Outcome(error="pads of the wrong length"))
    assert refused.verdict == Verdict.PASS
    twin = confirm_refusal(refused, defined, Outcome(fault=fault))
    assert twin.verdict == Verdict.INCONCLUSIVE and fault in twin.detail


# What padconf's own frames and a runtime's look like to own_fault: this module stands for a
# plugin adapter's (its frames count as padconf's), numpy and onnx for runtimes.
HERE = (__file__,)


def _raised(action) -> BaseException:
    try:
        action()
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("nothing raised")


def _slip_attribute():
    return np.ndarray.session_options  # type: ignore[attr-defined]


def _slip_call():
    return _small(1, 2, 3)  # type: ignore[call-arg]


def _slip_none():
    return None + 1  # type: ignore[operator]


def _slip_subscript():
    return _raised.__defaults__[0]  # None[0]


def _runtime_type_error():
    return np.zeros("three")  # numpy's native code refuses the argument: its answer


def _deliberate():
    raise TypeError("OpenVINO returned element type dynamic, which padconf has no name for")


def _runtime_python():
    import onnx.checker
    onnx.checker.check_model(123)  # its own code reads an attribute an int lacks: still its answer


def test_own_fault_tells_padconfs_slips_from_the_runtimes_answers(tmp_path, monkeypatch):
    assert "_slip_attribute" in "".join(traceback.format_exception(_raised(_slip_attribute)))
    for slip in (_slip_attribute, _slip_call, _slip_none, _slip_subscript):
        why = own_fault(_raised(slip), HERE)
        assert why and "the adapter's own code" in why and "test_own_faults.py" in why, slip
        assert own_fault(_raised(slip)) is None  # not this test's frames: another's, the runtime's
    for answer in (_runtime_type_error, _deliberate, _runtime_python):
        assert own_fault(_raised(answer), HERE) is None, answer
    # an import that fails is the worker's imports, wherever it fails, whatever it raises
    missing = own_fault(_raised(lambda: importlib.import_module("padconf_no_such_module")))
    assert missing and "import failed in the worker" in missing
    (tmp_path / "half_made.py").write_text("raise RuntimeError(\"Dialect namespace 'func' is already registered.\")\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    broken = own_fault(_raised(lambda: importlib.import_module("half_made")))
    assert broken and "half_made.py:1" in broken and "already registered" in broken
    # the worker's cap: raised for the worker to end itself, never a refusal
    with pytest.raises(MemoryError):
        raise_unless_answer(MemoryError())
    with pytest.raises(OwnFault):
        raise_unless_answer(_raised(_slip_none), HERE)
    raise_unless_answer(_raised(_runtime_python), HERE)


def test_a_run_stopped_while_it_draws_its_cases_says_nothing_was_written(tmp_path):
    """Ctrl-C in a new run's first seconds, while it drew its cases, said "what finished is kept
    (`padconf run --resume --out r` continues)", and that --resume was refused: nothing to resume
    (no run.json). A run writes nothing until its cases are drawn: the same command starts it again."""
    from argparse import Namespace

    from padconf.cli import continues
    out = tmp_path / "r"
    args = Namespace(command="run", out=str(out), resume=False, argv=["run", "--out", str(out)])
    assert continues(args) == f"nothing was written yet: `padconf run --out {out}` starts it again"
    out.mkdir()
    (out / "run.json").write_text("{}")
    assert continues(args) == f"what finished is kept (`padconf run --resume --out {out}` continues)"
