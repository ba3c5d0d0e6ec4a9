"""padconf against onnx's own backend test runner on the same committed test data: `padconf run
--cases generated/onnx --runtime onnxruntime` against ``onnx.backend.test.runner.Runner`` with
``onnxruntime.backend``, its tests loaded by ``load_model_tests`` from the same folders, each a
whole process (start-up included), in alternated pairs. Prints per pair the wall time and the
results per second of each (padconf's results: each case in each placement it runs; the
runner's: one test a folder on the CPU, its outcome counted as unittest's; its constructor's
loading of onnx's own suites is left out), then the median of each and the
median of the pairs' ratios (padconf's results/s over the runner's; target >= 3), and the same
ratio of results a CPU-second (each process's and its children's), which a loaded machine
disturbs less.

Run: python benchmarks/bench_vs_onnx_runner.py [--pairs 3] [--cases DIR] [--limit N]
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CPU: list[float] = []  # each timed command's CPU seconds, its children's included


def onnx_runner(data_dir: str, kind: str) -> None:
    """In a process of its own: onnx's runner over ``data_dir/kind``; prints unittest's counts."""
    import unittest
    from unittest import mock

    import onnx.backend.test.runner as onnx_runner_module
    import onnxruntime.backend
    from onnx.backend.test.loader import load_model_tests

    # Its constructor loads onnx's own suites (generating every node test: about 20 s of a loaded
    # 2-core machine), no part of running the folders given: left out, in the runner's favour.
    with mock.patch.object(onnx_runner_module, "load_model_tests", lambda **_: []):
        runner = onnx_runner_module.Runner(onnxruntime.backend, __name__)
    for test in load_model_tests(data_dir=data_dir, kind=kind):
        runner._add_model_test(test, "Node")
    with open("/dev/null", "w") as quiet:
        result = unittest.TextTestRunner(stream=quiet, verbosity=0).run(runner.test_suite)
    # each folder is a test per device; onnxruntime.backend skips the devices it lacks (CUDA)
    print(json.dumps({"run": result.testsRun - len(result.skipped), "failures": len(result.failures),
                      "errors": len(result.errors), "skipped": len(result.skipped)}))


def children_cpu() -> float:
    """User and system CPU seconds of every process this one started and reaped (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of ``cmd``, its stdout; its CPU seconds in CPU[-1]."""
    started, cpu = time.monotonic(), children_cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)  # not the checkout: -m imports from the cwd
    seconds = time.monotonic() - started
    CPU.append(children_cpu() - cpu)
    if done.returncode not in (0, 1):  # padconf run exits 1 when a result fails: still a whole run
        sys.exit(f"{' '.join(cmd[:4])} ... exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, done.stdout


def padconf_run(cases: Path, out: Path) -> tuple[float, int]:
    seconds, _ = timed([sys.executable, "-m", "padconf.cli", "run", "--cases", str(cases), "--runtime", "onnxruntime",
                        "--out", str(out), "--force"], out.parent)
    with (out / "results.jsonl").open() as rows:
        return seconds, sum(1 for _ in rows)


def runner_run(cases: Path) -> tuple[float, dict]:
    seconds, stdout = timed([sys.executable, str(Path(__file__).resolve()), "--child", str(cases.parent), cases.name],
                            cases.parent)
    return seconds, json.loads(stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="alternated pairs (default 3)")
    parser.add_argument("--cases", default=str(REPO / "generated" / "onnx"), help="default: generated/onnx")
    parser.add_argument("--limit", type=int, default=None, help="only the first N case folders (a copy of them)")
    parser.add_argument("--child", nargs=2, metavar=("DATA_DIR", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return onnx_runner(*args.child)
    work = Path(tempfile.mkdtemp(prefix="padconf-bench-vs-runner-"))
    try:
        cases = Path(args.cases).resolve()
        if args.limit is not None:
            subset = work / "data" / cases.name
            subset.mkdir(parents=True)
            for folder in sorted(p for p in cases.iterdir() if p.is_dir())[:args.limit]:
                shutil.copytree(folder, subset / folder.name)
            cases = subset
        print(f"cases: {cases} ({sum(1 for p in cases.iterdir() if p.is_dir())} folders)")
        print("| pair | padconf s | padconf CPU s | padconf results | padconf results/s | runner s | runner CPU s "
              "| runner tests | runner results/s | ratio | ratio of results a CPU-second |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        ours, theirs, ratios, cpu_ratios = [], [], [], []
        for k in range(args.pairs):
            order = ("padconf", "runner") if k % 2 == 0 else ("runner", "padconf")
            for which in order:  # alternated: the machine's load hits both alike
                if which == "padconf":
                    p_s, p_n = padconf_run(cases, work / "run")
                    p_cpu = CPU[-1]
                else:
                    r_s, counts = runner_run(cases)
                    r_cpu = CPU[-1]
            ours.append(p_n / p_s)
            theirs.append(counts["run"] / r_s)
            ratios.append(ours[-1] / theirs[-1])
            cpu_ratios.append((p_n / p_cpu) / (counts["run"] / r_cpu))
            print(f"| {k + 1} | {p_s:.2f} | {p_cpu:.2f} | {p_n} | {ours[-1]:,.0f} | {r_s:.2f} | {r_cpu:.2f} | "
                  f"{counts['run']} ({counts['failures']} failed, {counts['errors']} errors, {counts['skipped']} "
                  f"skipped) | {theirs[-1]:,.0f} | {ratios[-1]:.2f} | {cpu_ratios[-1]:.2f} |", flush=True)
        print(f"median: padconf {statistics.median(ours):,.0f} results/s, onnx's runner "
              f"{statistics.median(theirs):,.0f} results/s; median ratio {statistics.median(ratios):.2f} (target >= 3);"
              f" of results a CPU-second {statistics.median(cpu_ratios):.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
