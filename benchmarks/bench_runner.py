"""Runner throughput per adapter: cases/s through worker isolation with cached models (what
`padconf run` does) against building one model per case in-process. Side by side in one run.

Small cases: float32 (3, 4), pads 0..2, constant mode with a value; every output is judged.
Run: python benchmarks/bench_runner.py [--cases N] [--uncached N]
"""
import argparse
import time

import numpy as np

from padconf.adapters import get_adapter, registry
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.execution.worker import Worker
from padconf.judging.verdicts import judge
from padconf.run.runner import BATCH_SIZE


def small_cases(spec: str, n: int, seed=0) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [classify(Case(spec=spec, data=rng.random((3, 4), dtype=np.float32),
                          pads=[int(p) for p in rng.integers(0, 3, 4)],
                          constant_value=np.array(0.5, np.float32))) for _ in range(n)]


def isolated_cached(name: str, cases: list[Case]) -> float:
    worker = Worker(name)
    worker.start()  # not timed: importing a runtime happens once per run
    list(worker.run(cases[:BATCH_SIZE], "inputs"))  # warm: the first model build
    t0 = time.perf_counter()
    passed = 0
    for i in range(0, len(cases), BATCH_SIZE):
        batch = cases[i:i + BATCH_SIZE]
        passed += sum(judge(c, o, s).verdict == "pass" for c, (o, s) in zip(batch, worker.run(batch, "inputs")))
    elapsed = time.perf_counter() - t0
    worker.close()
    assert passed == len(cases), f"{name}: only {passed} of {len(cases)} passed"
    return len(cases) / elapsed


def one_model_per_case(name: str, cases: list[Case]) -> float:
    adapter = get_adapter(name)
    adapter.run(cases[0])  # warm the runtime's own start-up
    t0 = time.perf_counter()
    for case in cases:
        adapter._models.clear()
        judge(case, adapter.run(case))
    return len(cases) / (time.perf_counter() - t0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--uncached", type=int, default=300)
    args = parser.parse_args()
    print(f"{'adapter':<16} {'isolated+cached':>16} {'1 model/case':>13} {'ratio':>6}   (cases/s)")
    for name in registry():
        adapter = get_adapter(name)
        if adapter.available():
            print(f"{name:<16} skipped: {adapter.available()}")
            continue
        spec = "openvino/Pad-12" if name == "openvino" else "onnx/Pad-18"
        cases = small_cases(spec, args.cases)
        fast = isolated_cached(name, cases)
        slow = one_model_per_case(name, cases[:args.uncached])
        print(f"{name:<16} {fast:>16,.0f} {slow:>13,.0f} {fast / slow:>6.1f}")


if __name__ == "__main__":
    main()
