"""Runner throughput per runtime: cases/s through worker isolation with cached models (what
`padconf run` does) against building one model per case in-process, and, for onnxruntime, its
in-process floor (one cached InferenceSession run in this process on one thread, the feeds
made beforehand: the runtime alone, with nothing of padconf's around it). Side by side in one
run, alternated round by round; the median of the rounds is printed.

Small cases: float32 (3, 4), pads 0..2, constant mode with a value; every output is judged, and
the table says how many passed. The default runtimes are measured; the others registered (the
rewriters, the version converter and the exporters, which are no runtimes: they are judged on
four model runs a case; the GPU targets; tract) are left out with a line saying why, unless
named with --runtime, when they are measured as what they are (a rewriter's unchanged model is
a skip, not a pass).
Run: python benchmarks/bench_runner.py [--cases N] [--uncached N] [--rounds N] [--runtime NAME ...]
"""
import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from padconf.adapters import OPT_IN, default_runtimes, get_adapter, registry
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.vocabulary import Placement
from padconf.execution.worker import Worker
from padconf.judging.verdicts import judge, judged
from padconf.run.runner import BATCH_SIZE


def small_cases(spec: str, n: int, seed=0) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [classify(Case(spec=spec, data=rng.random((3, 4), dtype=np.float32),
                          pads=[int(p) for p in rng.integers(0, 3, 4)],
                          constant_value=np.array(0.5, np.float32))) for _ in range(n)]


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def isolated_cached(worker: Worker, cases: list[Case]) -> tuple[float, float, float, int]:
    """(cases/s, CPU microseconds a case in padconf and its worker together, of them the
    worker's, cases passed) through ``worker``, a batch of BATCH_SIZE at a time, judged."""
    assert worker.proc is not None
    pid = worker.proc.pid
    t0, cpu0, worker0 = time.perf_counter(), time.process_time(), process_cpu(pid)
    passed = 0
    for i in range(0, len(cases), BATCH_SIZE):
        batch = cases[i:i + BATCH_SIZE]
        # judged as padconf run judges (one comparison an answer, which also tells an impossible one)
        passed += sum(ruling is not None and ruling.verdict == "pass"
                      for _, _, ruling in worker.run_judged(batch, Placement.INPUTS, judged))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if worker.proc is None or worker.proc.pid != pid:  # a fresh worker: its predecessor's CPU is gone
        return len(cases) / wall, float("nan"), float("nan"), passed
    in_worker = process_cpu(pid) - worker0
    return len(cases) / wall, (cpu + in_worker) / len(cases) * 1e6, in_worker / len(cases) * 1e6, passed


def one_model_per_case(adapter, cases: list[Case]) -> float:
    t0 = time.perf_counter()
    for case in cases:
        adapter._models.clear()
        judge(case, adapter.run(case))
    return len(cases) / (time.perf_counter() - t0)


class OnnxRuntimeFloor:
    """onnxruntime alone: one InferenceSession, built once, run in this process on one thread."""

    def __init__(self, cases: list[Case]):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(build_model(cases[0], Placement.INPUTS).SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])
        self.feeds = [feeds(c, Placement.INPUTS) for c in cases]  # every case has the first one's model
        self.session.run(None, self.feeds[0])

    def rate(self) -> tuple[float, float]:
        """(cases/s, CPU microseconds a case)."""
        run = self.session.run
        t0, cpu0 = time.perf_counter(), time.process_time()
        for inputs in self.feeds:
            run(None, inputs)
        return (len(self.feeds) / (time.perf_counter() - t0),
                (time.process_time() - cpu0) / len(self.feeds) * 1e6)


def measure(name: str, args) -> str:
    adapter = get_adapter(name)
    if adapter.available():
        return f"{name:<16} skipped: {adapter.available()}"
    spec = "openvino/Pad-12" if name == "openvino" else "onnx/Pad-18"
    cases = small_cases(spec, args.cases)
    uncached = cases[:args.uncached]
    worker = Worker(name)
    worker.start()  # not timed: importing a runtime happens once per run
    list(worker.run(cases[:BATCH_SIZE], Placement.INPUTS))  # warm: the first model build
    adapter.run(cases[0])  # warm the runtime's own start-up in this process
    floor = OnnxRuntimeFloor(cases) if name == "onnxruntime" else None
    fast, fast_cpu, worker_cpu, slow, low, low_cpu, passed = [], [], [], [], [], [], 0
    try:
        for _ in range(args.rounds):  # alternated: the machine's load hits each alike
            rate, cpu, in_worker, passed = isolated_cached(worker, cases)
            fast.append(rate)
            fast_cpu.append(cpu)
            worker_cpu.append(in_worker)
            slow.append(one_model_per_case(adapter, uncached))
            if floor is not None:
                rate, cpu = floor.rate()
                low.append(rate)
                low_cpu.append(cpu)
    finally:
        worker.close()
    f, s, fc = statistics.median(fast), statistics.median(slow), statistics.median(fast_cpu)
    floor_cols = (f"{statistics.median(low):>10,.0f} {f / statistics.median(low):>7.1%} "
                  f"{statistics.median(low_cpu) / fc:>9.1%}" if low else f"{'':>10} {'':>7} {'':>9}")
    wc = statistics.median(worker_cpu)
    return (f"{name:<16} {f:>16,.0f} {fc:>8.1f} {wc:>9.1f} {s:>13,.0f} {f / s:>6.1f} {floor_cols} "
            f"{passed:>7}/{len(cases)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--uncached", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds; the median is printed")
    parser.add_argument("--runtime", nargs="+", default=None, help="default: the default runtimes")
    args = parser.parse_args()
    chosen = args.runtime or default_runtimes()
    for name in registry():
        if name not in chosen:
            print(f"left out: {name}: {OPT_IN.get(name, 'not asked for (--runtime)')}")
    print(f"{'runtime':<16} {'isolated+cached':>16} {'CPU us':>8} {'worker us':>9} {'1 model/case':>13} {'ratio':>6} "
          f"{'in-process':>10} {'of it':>7} {'CPU of it':>9} {'passed':>15}")
    print("(cases/s, medians of the rounds; CPU us: padconf's and its worker's CPU microseconds a case; worker us: "
          "the worker's part of them; in-process: "
          "the runtime's own floor; of it: the worker's cases/s as a share of the floor's; CPU of it: the floor's CPU "
          "a case as a share of the worker path's)")
    for name in chosen:
        print(measure(name, args), flush=True)


if __name__ == "__main__":
    main()
