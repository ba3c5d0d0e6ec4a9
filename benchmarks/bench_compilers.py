"""The ahead-of-time compilers (IREE, TVM) in a whole `padconf run`, cold and warm: the same run
twice, the first with an empty compile cache, the second with the cache the first filled. By
default the run is a default `padconf run` (every installed runtime, the compilers with their
compile budget); ``--runtime`` narrows it. Prints per run the wall time and the CPU seconds of
padconf and every process it started; per compiler the models its budget chose (of all the
run's models), its builds (compiled, or taken from the cache, in every worker: a worker started
after a crash builds its model again; repaired twins' models too), its results run and those
its compile budget left out, its lane seconds; the
cache's entries and size; and which known IREE and TVM bugs the run's results show (targets:
cold <= 600 s, warm <= 120 s, on 2 cores). A default run is followed by one of its other
runtimes alone, under the same load: what the compilers add to it.

Run: python benchmarks/bench_compilers.py [--runtime iree tvm] [--profile default] [--seed 0]
     [--spec onnx/Pad-19] [--compile-budget N|all] [--compile-timeout S]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from padconf.adapters import default_runtimes

COMPILERS = ("iree", "tvm")
FAILURES_OF_VALUES = {"mismatch", "unexplained"}


def _pads(case: dict) -> list[int]:
    return case.get("pads") or []


# (the bug, its upstream report, whether a result row and its case show it)
KNOWN_BUGS = [
    ("IREE: wrong values for negative pads fed at run time", "iree-org/iree#19935",
     lambda r, c: r["runtime"] == "iree" and r["placement"] == "inputs" and r["verdict"] in FAILURES_OF_VALUES
     and r.get("difference") == "values" and any(p < 0 for p in _pads(c))),
    ("IREE: unsigned output returned signed", "docs/findings.md (not reported upstream)",
     lambda r, c: r["runtime"] == "iree" and r["dtype"].startswith("uint") and r.get("difference") == "dtype"),
    ("IREE: axes fed at run time ignored", "llvm/torch-mlir#3468",
     lambda r, c: r["runtime"] == "iree" and r["placement"] == "inputs" and c.get("axes") is not None
     and r["verdict"] in FAILURES_OF_VALUES and r.get("difference") == "shape"),
    ("iree-compile hangs on wrap pads given as constants", "iree-org/iree#24585",
     lambda r, c: r["runtime"] == "iree" and r["mode"] == "wrap" and r["verdict"] == "timeout"
     and "compile" in (r.get("error") or "")),
    ("TVM: reflect pads read outside the input", "apache/tvm#11687",
     lambda r, c: r["runtime"] == "tvm" and r["mode"] == "reflect" and r["verdict"] in ("unexplained", "crash")),
]


def run(args, cache: Path, runtimes: list[str]) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"padconf-bench-compilers-{args.profile}-")) / "run"
    cmd = [sys.executable, "-m", "padconf.cli", "--compile-cache", str(cache), "run", "--profile", args.profile,
           "--seed", str(args.seed), "--out", str(out)]
    for name in runtimes:
        cmd += ["--runtime", name]
    for spec in args.spec:
        cmd += ["--spec", spec]
    for option in ("compile_budget", "compile_timeout"):
        if getattr(args, option) is not None:
            cmd += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    entries = list(cache.glob("*/*.bin"))
    cases = {c["id"]: c for c in map(json.loads, (out / "cases.jsonl").read_text().splitlines())}
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    found = [(bug, link) for bug, link, shows in KNOWN_BUGS
             if any(shows(r, cases.get(r["case_id"], {})) for r in rows)]
    per: dict[str, dict] = {}
    for r in rows:
        if r["runtime"] in COMPILERS:
            figures = per.setdefault(r["runtime"], {"run": 0, "not_compiled": 0, "other_skipped": 0})
            if r["verdict"] != "skipped":
                figures["run"] += 1
            elif (r.get("detail") or "").startswith("not compiled: budget"):
                figures["not_compiled"] += 1
            else:
                figures["other_skipped"] += 1
    return {"wall": wall, "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "stats": json.loads((out / "stats.json").read_text()), "entries": len(entries),
            "cache_mb": sum(p.stat().st_size for p in entries) / 2**20, "results": len(rows), "per": per,
            "found": found, "dir": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", nargs="+", default=[], help="default: a default run's runtimes")
    parser.add_argument("--profile", default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--spec", nargs="+", default=[], help="only these spec ids (default: all)")
    parser.add_argument("--compile-budget", default=None, help="default: padconf's")
    parser.add_argument("--compile-timeout", default=None, help="default: padconf's")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="padconf-bench-compile-cache-"))
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print("| run | wall s | CPU s | results | " + " | ".join(
        f"{c} models (of all) | {c} builds | {c} results run | {c} not compiled: budget | {c} lane s"
        for c in COMPILERS)
        + " | cache entries | cache MB |")
    print("|---|---:|---:|---:|" + "---:|---:|---:|---:|---:|" * len(COMPILERS) + "---:|---:|")
    figures = {}
    # a default run's other runtimes alone, last, under the same load: what the compilers add
    without = [] if args.runtime else [r for r in default_runtimes() if r not in COMPILERS]
    for name, runtimes in (("cold", args.runtime), ("warm", args.runtime), ("no compilers", without)):
        if name == "no compilers" and not runtimes:
            continue
        got = figures[name] = run(args, cache, runtimes)
        stats = got["stats"]["runtimes"]
        cells = " | ".join(
            f"{stats.get(c, {}).get('models_chosen', 'all')} ({stats.get(c, {}).get('models_in_all', '-')}) | "
            f"{stats.get(c, {}).get('models_built', 0)} | {got['per'].get(c, {}).get('run', 0)} | "
            f"{got['per'].get(c, {}).get('not_compiled', 0)} | {stats.get(c, {}).get('seconds', 0):.1f}"
            for c in COMPILERS)
        print(f"| {name} | {got['wall']:.1f} | {got['cpu']:.1f} | {got['results']} | {cells} | {got['entries']} | "
              f"{got['cache_mb']:.1f} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    for name, got in figures.items():
        if name == "no compilers":
            continue
        print(f"{name} ({got['dir']}): known bugs found {len(got['found'])} of {len(KNOWN_BUGS)}")
        for bug, link, _ in KNOWN_BUGS:
            print(f"  {'found' if (bug, link) in got['found'] else 'MISSED'}: {bug} ({link})")


if __name__ == "__main__":
    main()
