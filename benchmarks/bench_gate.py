"""Mutation benchmark of the CI gate: does `padconf gate` fail on every regression, and on
nothing else?

Per runtime (the real onnxruntime and openvino-onnx adapters): `padconf baseline`, timed; the
breadth of every entry it wrote (cells admitted / cells seen failing, 1.0 when exact); then
N unchanged gates (each must exit 0: a non-zero exit is a false alarm), and one gate per
planted regression (each must exit 1 naming what was planted: a `new:` line in the planted
cell, or a `fixed:` line for a fix). The regressions are planted through a `module:Class`
subclass of the real adapter (this module's Planted*), told what to plant by the environment
variable PADCONF_PLANT (JSON), read in the worker; the cells planted in are picked from the
baseline's own run (a cell that passes, a cell an entry covers, ...).

Run from the repository root: python benchmarks/bench_gate.py [--runtime onnxruntime]
[--unchanged 10] [--spec onnx/Pad-19 ...] [--kinds wrong-cell crash ...]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from padconf.adapters.onnxruntime import OnnxRuntimeAdapter  # noqa: E402
from padconf.adapters.openvino_onnx import OpenVinoOnnxAdapter  # noqa: E402
from padconf.adapters.outcome import Outcome  # noqa: E402
from padconf.cases.case import CaseKind  # noqa: E402
from padconf.gate.baseline import Cell, breadth, load_baseline  # noqa: E402
from padconf.run.rundir import read_jsonl  # noqa: E402

PLANT = "PADCONF_PLANT"
ADAPTERS = {"onnxruntime": "benchmarks.bench_gate:PlantedOnnxRuntime",
            "openvino-onnx": "benchmarks.bench_gate:PlantedOpenVinoOnnx"}


# ---------------------------------------------------------------- the planted runtimes


class _Planted:
    """The real adapter, except where PADCONF_PLANT says: ``{"kind", "cells": [[spec, mode,
    dtype, placement], ...], "case": id or None}``."""
    served = 0  # cases this worker process has run

    def run(self, case, placement="inputs"):
        _Planted.served += 1
        plant = json.loads(os.environ.get(PLANT) or "{}")
        here = [case.spec, case.mode, case.dtype, placement] in plant.get("cells", [])
        if not here or (plant.get("case") and case.id != plant["case"]):
            return super().run(case, placement)
        return self.planted(plant["kind"], case, placement)

    def planted(self, kind: str, case, placement: str) -> Outcome:
        from padconf.cases.classify import classify
        from padconf.spec.loader import get_spec

        judged = classify(case, get_spec(case.spec))
        right = super().run(case, placement)
        if kind in ("wrong-cell", "wrong-placement", "wrong-dtype") and judged.kind == CaseKind.DEFINED:
            return _spoiled(right)
        if kind == "wrong-warm" and judged.kind == CaseKind.DEFINED and _Planted.served > 1:
            return _spoiled(right)
        if kind == "flake" and judged.kind == CaseKind.DEFINED and random.random() < 0.5:
            return _spoiled(right)
        if kind == "not-implemented" and judged.kind == CaseKind.DEFINED:
            version = case.spec.rsplit("-", 1)[1]
            return Outcome(error=f"[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation "
                                 f"for Pad({version}) node with name ''", not_implemented=True)
        if kind == "crash":
            os.abort()
        if kind == "hang":
            time.sleep(3600)
        if kind == "accept" and judged.kind == CaseKind.MUST_REJECT:
            return Outcome(np.resize(case.data, case.data.shape))
        if kind == "refuse" and judged.kind == CaseKind.DEFINED:
            return Outcome(error="planted: refused")
        if kind == "garbage" and judged.kind == CaseKind.AMBIGUOUS:
            return Outcome(np.resize(case.data, tuple(n + 7 for n in case.data.shape)))
        if kind in ("fix-part", "fix-whole"):  # what the spec says, as a conforming runtime answers
            if judged.kind == CaseKind.DEFINED:
                return Outcome(judged.expected)
            if judged.kind == CaseKind.MUST_REJECT:
                return Outcome(error="planted: rejected")
            reading = next(iter(judged.interpretations.values()))
            return Outcome(error="planted: rejected") if reading is None else Outcome(reading)
        return right


def _spoiled(right: Outcome) -> Outcome:
    """The right output with its first element wrong."""
    if right.output is None or right.output.size == 0:
        return Outcome(error="planted: refused")
    out = right.output.copy().reshape(-1)
    first = out[0]
    out[0] = (not first) if out.dtype == bool else first + "x" if out.dtype == object else 0 if first != 0 else 1
    return Outcome(out.reshape(right.output.shape))


class PlantedOnnxRuntime(_Planted, OnnxRuntimeAdapter):
    pass


class PlantedOpenVinoOnnx(_Planted, OpenVinoOnnxAdapter):
    pass


# ---------------------------------------------------------------- choosing where to plant


def choose(kind: str, rows: list[dict], entries) -> dict | None:
    """Where to plant ``kind``, from the baseline run's ``rows``: {"kind", "cells", "case"}."""
    cells = defaultdict(list)
    for r in rows:
        cells[Cell.of(r)].append(r)  # reruns alone included: a cell where a case crashed alone is not clean

    def passing(kinds=(CaseKind.DEFINED,), least=1):  # cells where nothing fails or is skipped, with such cases
        return sorted(c for c, rs in cells.items() if all(r["verdict"] in ("pass", "ambiguous") for r in rs)
                      and sum(r["kind"] in kinds for r in rs) >= least)

    def plant(cells_, case=None):
        return {"kind": kind, "cells": [list(c) for c in cells_], "case": case} if cells_ else None

    clean = passing(least=3) or passing()  # a small suite (--spec) may hold no cell of three cases that pass
    floats = [c for c in clean if c.dtype == "float"] or clean
    if not floats:
        return None
    if kind == "flake":  # in four cells, so that a coin thrown for each of their cases comes up spoiled
        return plant(floats[4:8] or floats[:4])
    if kind in ("wrong-cell", "not-implemented", "refuse", "wrong-warm"):
        return plant(floats[{"wrong-cell": 0, "not-implemented": 1, "refuse": 2, "wrong-warm": 3}[kind]
                            % len(floats):][:1])
    if kind == "wrong-placement":  # every clean cell of one version in one placement
        spec = clean[len(clean) // 2].spec
        return plant([c for c in clean if c.spec == spec and c.placement == clean[0].placement])
    if kind == "wrong-dtype":  # every clean cell of one dtype, in the inputs placement
        dtype = "int8" if any(c.dtype == "int8" for c in clean) else clean[0].dtype
        return plant([c for c in clean if c.dtype == dtype and c.placement == "inputs"])
    if kind in ("crash", "hang"):
        cell = clean[-1 if kind == "crash" else -2]
        return plant([cell], sorted(r["case_id"] for r in cells[cell])[0])
    if kind == "accept":
        return plant(passing((CaseKind.MUST_REJECT,))[:1])
    if kind == "garbage":
        return plant([c for c in passing((CaseKind.AMBIGUOUS,)) if c.placement == "inputs"][:3])
    if kind in ("fix-part", "fix-whole"):
        # an unstable entry's fix cannot show in one run: the gate never calls it fixed
        sized = sorted((e for e in entries if len(e.cells) > 1 and e.case is None and e.after is None
                        and not e.unstable),
                       key=lambda e: len(e.cells))
        if not sized:
            return None
        entry = sized[0] if kind == "fix-whole" else sized[-1]
        return plant(sorted(entry.cells, key=Cell.sort_key)[:None if kind == "fix-whole" else 1])
    raise ValueError(kind)


KINDS = ("wrong-cell", "wrong-placement", "wrong-dtype", "not-implemented", "crash", "hang", "accept", "refuse",
         "garbage", "wrong-warm", "flake", "fix-part", "fix-whole")


def caught(kind: str, plant: dict, code: int, out: str) -> bool:
    """The gate failed, naming the plant: a new failure in a planted cell, or a fixed one."""
    if code != 1:
        return False
    if kind.startswith("fix"):
        return any(line.startswith("fixed: ") and any(" ".join(c) in line for c in plant["cells"])
                   for line in out.splitlines())
    planted = {tuple(c[:3]) for c in plant["cells"]}
    for line in out.splitlines():
        if line.startswith("new: "):
            case_id = line.split()[1]
            spec, mode, dtype, _ = case_id.split(":")
            if (spec, mode, dtype) in planted:
                return True
    return False


# ---------------------------------------------------------------- running


def padconf(args: list[str], env: dict | None = None) -> tuple[int, str, float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "padconf.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})  # workers import the Planted*
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def bench(runtime: str, opts, work: Path) -> dict:
    spec = [a for s in opts.spec or () for a in ("--spec", s)]
    adapter = ADAPTERS[runtime]
    baseline = work / f"{runtime}.yaml"
    # the planted class, planting nothing: a zygote that imports other modules lays out its heap
    # otherwise, and where OpenVINO corrupts its heap that changes what it answers
    code, out, baseline_s = padconf(["baseline", "--runtime", adapter, "--out", str(baseline),
                                     "--work", str(work / f"b-{runtime}"), *spec])
    if code:
        raise SystemExit(f"baseline of {runtime} failed: {out}")
    # the first run, and the failures of its repeats and of the reruns alone
    rows = [r for name in ("results.jsonl", "reruns.jsonl") for r in read_jsonl(work / f"b-{runtime}" / name)]
    entries = load_baseline(baseline)
    widths = [breadth(e, rows) for e in entries]
    print(f"\n== {runtime}\nbaseline: {baseline_s:.1f} s, {len(entries)} entries; breadth (cells admitted / cells "
          f"seen failing): min {min(widths, default=1):.2f}, max {max(widths, default=1):.2f}", flush=True)

    gate = ["gate", "--runtime", adapter, "--baseline", str(baseline), "--work", str(work / f"g-{runtime}"),
            *spec]
    alarms, gate_s = [], []
    for _ in range(opts.unchanged):
        code, out, seconds = padconf(gate)
        gate_s.append(seconds)
        if code != 0:
            alarms.append(out.strip().splitlines()[-3:])
        print(f"  unchanged gate: exit {code} in {seconds:.1f} s", flush=True)
    results = []
    for kind in opts.kinds:
        plant = choose(kind, rows, entries)
        if plant is None:
            results.append((kind, None, "nowhere to plant it"))
            print(f"  {kind:16} n/a: nowhere to plant it", flush=True)
            continue
        code, out, seconds = padconf(gate, {PLANT: json.dumps(plant)})
        ok = caught(kind, plant, code, out)
        said = next((ln for ln in out.splitlines() if ln.startswith(("new: ", "fixed: "))), out.strip()[-200:])
        results.append((kind, ok, f"exit {code} in {seconds:.1f} s; {len(plant['cells'])} cells; {said[:160]}"))
        print(f"  {kind:16} {'CAUGHT' if ok else 'missed'}: {results[-1][2]}", flush=True)
    return {"runtime": runtime, "gate_s": gate_s, "alarms": alarms, "results": results}


def report(fig: dict) -> None:
    planted = [r for r in fig["results"] if r[1] is not None]
    print(f"-- {fig['runtime']}: caught {sum(ok for _, ok, _ in planted)} / {len(planted)} planted")
    times = sorted(fig["gate_s"])
    if times:
        print(f"false alarms: {len(fig['alarms'])} over {len(times)} unchanged gates; gate wall time median "
              f"{times[len(times) // 2]:.1f} s (min {times[0]:.1f}, max {times[-1]:.1f})")
    for alarm in fig["alarms"]:
        print("  false alarm: " + " | ".join(alarm))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", action="append", choices=sorted(ADAPTERS), help="default: both")
    parser.add_argument("--unchanged", type=int, default=10, help="unchanged gates per runtime (default 10)")
    parser.add_argument("--spec", action="append", help="only these spec versions (default: all)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    opts = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench_gate.") as tmp:
        for runtime in opts.runtime or sorted(ADAPTERS):
            report(bench(runtime, opts, Path(tmp)))
            sys.stdout.flush()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
