"""A repro that runs its call in a child (a crash or a hang) takes the child's own processes with
it: audit D found iree-compile, started by iree.compiler in the repro's child, still running at
12.6 GB after the maintainer's repro had exited."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from padconf.adapters import StandaloneRepro
from padconf.minimize.bundle.repro_runtime import script


def spawn_and_crash(model, inputs, configuration):
    import signal
    import subprocess
    import sys
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open(os.environ["PID_FILE"], "w").write(str(grandchild.pid))
    os.kill(os.getpid(), signal.SIGSEGV)  # the runtime's crash


def test_a_crash_repros_child_leaves_no_process_behind(tmp_path):
    repro = StandaloneRepro("", spawn_and_crash)
    source = script(repro, "onnxruntime", "a crash", ["expected = [np.zeros(1)]"], ["model = None"],
                    "spawn_and_crash(model, {}, {})", [np.zeros(1)], bitwise=True)
    path = tmp_path / "repro.py"
    path.write_text(str(source))
    pid_file = tmp_path / "pid"
    done = subprocess.run([sys.executable, "-I", str(path)], env={**os.environ, "PID_FILE": str(pid_file)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # the crash: the bug shows
    pid = int(pid_file.read_text())
    for _ in range(50):  # the kill is sent before the repro exits; the process may take a moment to go
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if open(f"/proc/{pid}/stat").read().split()[2] == "Z":
            return  # killed, not yet reaped by init
        time.sleep(0.1)
    os.kill(pid, 9)
    raise AssertionError(f"the repro's child's process {pid} outlived it")


def crash(model, inputs, configuration):
    import signal
    os.kill(os.getpid(), signal.SIGSEGV)  # memory corruption found as a wrong value, crashing here


def test_every_repro_runs_its_call_in_a_child_and_a_crash_is_the_bug_showing(tmp_path):
    """A bundle of a wrong value had no child: a call that then crashed (memory corruption, audit
    E's openvino-onnx 32) ended the script with the shell's 139, neither 1 nor 0."""
    source = script(StandaloneRepro("", crash), "onnxruntime", "a wrong value", ["expected = [np.zeros(1)]"],
                    ["model = None"], "crash(model, {}, {})", [np.zeros(1)], bitwise=True)
    path = tmp_path / "repro.py"
    path.write_text(str(source))
    done = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "the process crashed, SIGSEGV" in done.stdout, done.stdout + done.stderr
