"""What a fresh OpenVINO worker pays for its first graph: processes forked, as padconf's workers
are, from one that loaded OpenVINO's CPU plugin and ONNX frontend and compiled nothing; each
reads a Pad model and compiles it, or imports the compile an earlier worker exported
(openvino_tensors.compile_shared), then runs it once. Prints the median milliseconds of each
step, compiling and importing side by side in one run (alternated), then the same worker's
compile of a second graph; and, as a third worker alternated with them, compiling with a Core
the worker builds itself ("core" step) instead of the zygote's (openvino_tensors.shared_core).

Run: python benchmarks/bench_openvino_workers.py [--forks 20]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forks", type=int, default=20)
    args = parser.parse_args()
    if args.forks < 1:
        parser.error(f"--forks must be at least 1, got {args.forks}")  # exit 2, one line of why

    import openvino as ov

    from padconf.adapters.openvino_tensors import (
        compile_shared,
        graph_key,
        load_cpu_plugin,
        shared_core,
        without_telemetry,
    )
    from padconf.cases.case import Case
    from padconf.cases.onnx_model import build_model
    without_telemetry()  # what a zygote does before it forks
    assert load_cpu_plugin(onnx_frontend=True) is None
    cases = [Case("onnx/Pad-19", np.arange(12, dtype=np.float32).reshape(shape), [1, 0, 0, 2], mode="reflect")
             for shape in ((3, 4), (2, 6))]
    models = [build_model(case, "inputs").SerializeToString() for case in cases]
    folder = Path(tempfile.mkdtemp(prefix="padconf-bench-"))

    def worker(variant: str) -> dict:
        share = variant == "imported"
        times, started = {}, time.perf_counter()

        def step(name: str) -> None:
            nonlocal started
            times[name] = (time.perf_counter() - started) * 1000
            started = time.perf_counter()

        core = ov.Core() if variant == "own core" else shared_core()  # a worker's: the zygote's
        step("core")
        for i, model in enumerate(models):
            graph = core.read_model(model, b"")
            step(f"read {i}")
            compiled = (compile_shared(core, graph, graph_key(graph), folder, {}) if share and i == 0
                        else core.compile_model(graph, "CPU"))
            step(f"build {i}")
            compiled.create_infer_request().infer([np.zeros((2, 2), np.float32), np.array([0, 0, 0, 0])])
            step(f"infer {i}")
        return times

    def forked(variant: str) -> dict:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            os.write(write, json.dumps(worker(variant)).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as answer:
            times = json.loads(answer.read())
        os.waitpid(pid, 0)
        return times

    labels = {"compiled": "graph 0 compiled", "imported": "graph 0 imported (compile_shared)",
              "own core": "graph 0 compiled, the worker's own Core"}
    runs: dict[str, list[dict]] = {variant: [] for variant in labels}
    try:
        forked("imported")  # exports the first graph's compile for the workers after it
        for _ in range(args.forks):
            for variant in labels:
                runs[variant].append(forked(variant))
    finally:
        shutil.rmtree(folder)
    print("| fresh worker, first graph | " + " | ".join(runs["compiled"][0]) + " |")
    print("|---|" + "---:|" * len(runs["compiled"][0]))
    for variant, label in labels.items():
        steps = runs[variant][0]
        print(f"| {label} | " + " | ".join(f"{statistics.median(r[s] for r in runs[variant]):.2f}" for s in steps)
              + " |")
    print(f"(milliseconds, median of {args.forks} forks each; graph 1 is compiled in all)")


if __name__ == "__main__":
    main()
