"""Every script in benchmarks/ runs from the development install (every extra installed) at a
tiny size and prints its table. Not timed: nothing here depends on the machine's speed."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"

# script -> (its tiny size's arguments, a line of the table it prints)
TINY = {
    "bench_reference.py": (["--repeat", "2"], "constant"),
    "bench_runner.py": (["--cases", "64", "--uncached", "4", "--rounds", "1"], "isolated+cached"),
    "bench_vs_onnx_runner.py": (["--pairs", "1", "--limit", "6"], "median ratio"),
    "bench_openvino_workers.py": (["--forks", "2"], "import"),
    "bench_faults.py": (["--kills", "1", "--cases", "10"], "kills"),
    "bench_run.py": (["--profile", "ci", "--spec", "onnx/Pad-19", "--max-examples", "5", "--runtime", "onnxruntime"],
                     "| profile | seed | wall s"),
    "bench_gate.py": (["--runtime", "onnxruntime", "--unchanged", "1", "--spec", "onnx/Pad-19",
                       "--kinds", "wrong-cell"],
                      "caught"),
    "bench_load.py": (["--runs", "1", "--busy", "0", "--runtime", "onnxruntime", "--spec", "onnx/Pad-19",
                       "--max-examples", "5"], "no faults: 1/1 completed"),
    "bench_compilers.py": (["--runtime", "iree", "tvm", "--profile", "ci", "--spec", "onnx/Pad-19",
                            "--compile-budget", "2"], "cold"),
    "bench_generate.py": (["--spec", "onnx/Pad-19"], "| family | model | kind | cases |"),
    "bench_releases.py": (["--from", "1.20.0", "--to", "1.20.1"], "warm"),
    "bench_records.py": (["--repeat", "1", "--copies", "1"], "msgspec Struct"),
}
NEEDS_NETWORK = {"bench_releases.py"}  # it downloads onnxruntime's releases from the package index


def _online() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
        return True
    except OSError:
        return False


def test_every_benchmark_has_a_tiny_size():
    assert sorted(p.name for p in BENCHMARKS.glob("bench_*.py")) == sorted(TINY)


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(TINY))
def test_benchmark_runs_and_prints_its_table(script, tmp_path):
    if script in NEEDS_NETWORK and not _online():
        pytest.skip(f"{script} needs the package index, and it cannot be reached from here")
    args, table = TINY[script]
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    assert table in done.stdout, done.stdout[-2000:]
