"""A whole `padconf run`, end to end, per profile and seed: wall time; CPU seconds of padconf and
every process it started, and those over the cores (a wall time no scheduling of the lanes can
beat); results/s, and per runtime
the results, seconds, worker restarts and seconds spent waiting on hangs; the lane seconds of the
context cases and the wall time less their share, the run without them; seconds drawing cases,
padconf's own peak RSS and the size of the run directory (and its largest file). Targets (2
cores): default < 120 s, ci < 25 s, peak RSS < 300 MB, run directory < 30 MB, for every seed
(what is drawn depends on the seed: seed 2 once wrote 60 MB); a row past a size target is
marked OVER.

With --compare PROFILE it instead runs PROFILE serially twice and once in parallel (same seed)
and counts, per runtime, the verdicts that differ: 0 for the runtimes that answer each case
alike whatever ran before; OpenVINO's failures depend on what ran before in its process.

With --runtime it runs those (e.g. all seven implementations; the compilers use the compile cache
padconf would, ``$PADCONF_COMPILE_CACHE``: warm it with a first run, see bench_compilers.py).

With --cache cold each run starts from an empty compile cache (the compilers compile every
graph anew), with --cache warm from one that an unmeasured first run of the same command filled.

Run: python benchmarks/bench_run.py [--profile ci default] [--jobs N] [--seed 0 1 2 3 4] [--compare ci]
     [--runtime NAME ...] [--compile-timeout S] [--cache yours|cold|warm]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

TARGETS = {"ci": 25, "default": 120}
PEAK_RSS_MB, RUN_DIR_MB = 300, 30


def run(profile: str, jobs: int | None, seed: int, runtimes: Sequence[str] = (), extra: Sequence[str] = (),
        cache: str | None = None) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"padconf-bench-{profile}-")) / "run"
    cmd = [sys.executable, "-m", "padconf.cli", "run", "--profile", profile, "--seed", str(seed), "--out", str(out),
           *extra]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    for name in runtimes:
        cmd += ["--runtime", name]
    if cache:
        cmd[3:3] = ["--compile-cache", cache]  # padconf's own option, before the command
    started, cpu_before = time.monotonic(), _children_cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall, cpu = time.monotonic() - started, _children_cpu() - cpu_before
    stats = json.loads((out / "stats.json").read_text())
    results = sum(1 for _ in (out / "results.jsonl").open())
    sizes = {p.name: p.stat().st_size for p in out.iterdir()}
    largest = max(sizes, key=sizes.get)
    return {"profile": profile, "seed": seed, "wall": wall, "cpu": cpu, "results": results,
            "size_mb": sum(sizes.values()) / 2**20, "largest": f"{largest} {sizes[largest] / 2**20:.1f}", "dir": out,
            **stats}


def context_share(out: Path) -> tuple[float, float]:
    """(lane seconds of the run's context cases, of all its cases): the cost of contexts,
    which draw on top of every version's budget (a run without them is the same run less them)."""
    contexts = {doc["id"] for doc in map(json.loads, (out / "cases.jsonl").open()) if doc.get("context")}
    rows = [json.loads(line) for line in (out / "results.jsonl").open()]
    return (sum(r["seconds"] or 0 for r in rows if r["case_id"] in contexts), sum(r["seconds"] or 0 for r in rows))


def _children_cpu() -> float:
    """User and system CPU seconds of every process padconf started and reaped, itself included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _against(value: float, limit: float) -> str:
    return f"{value:.1f}" + (" OVER" if value >= limit else "")


def verdicts(out: Path) -> dict:
    rows = (json.loads(line) for line in (out / "results.jsonl").open())
    return {(r["runtime"], r["placement"], r["case_id"]): r["verdict"] for r in rows}


def compare(profile: str, seed: int) -> None:
    serial = [run(profile, 1, seed) for _ in range(2)]
    parallel = run(profile, 2, seed)
    first = verdicts(serial[0]["dir"])
    print(f"| {profile} | runtime | results | serial vs serial differ | serial vs parallel differ |")
    print("|---|---|---:|---:|---:|")
    others = {"serial": verdicts(serial[1]["dir"]), "parallel": verdicts(parallel["dir"])}
    for runtime in sorted({k[0] for k in first}):
        keys = [k for k in first if k[0] == runtime]
        differ = {name: sum(first[k] != other.get(k) for k in keys) for name, other in others.items()}
        print(f"| | {runtime} | {len(keys)} | {differ['serial']} | {differ['parallel']} |")
    print(f"wall s: serial {serial[0]['wall']:.1f}, {serial[1]['wall']:.1f}; parallel {parallel['wall']:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", nargs="+", default=["ci", "default"])
    parser.add_argument("--jobs", type=int, default=None, help="lanes (default: one per core)")
    parser.add_argument("--seed", type=int, nargs="+", default=[0], help="one run per seed (default: 0)")
    parser.add_argument("--compare", metavar="PROFILE", help="serial twice and parallel once: verdicts that differ")
    parser.add_argument("--runtime", nargs="+", default=[], help="these runtimes (default: the run's default ones)")
    parser.add_argument("--spec", nargs="+", default=[], help="only these spec ids (default: all)")
    parser.add_argument("--max-examples", type=int, default=None, help="passed to padconf run (default: the profile's)")
    parser.add_argument("--compile-timeout", help="passed to padconf run (a warm compile cache keeps time-outs "
                        "per limit: give a warm run the limit its cold run had)")
    parser.add_argument("--cache", choices=["yours", "cold", "warm"], default="yours",
                        help="the compilers' compile cache (iree, tvm): yours "
                        "($PADCONF_COMPILE_CACHE or ~/.cache/padconf/compile), an empty one per run (cold), or one "
                        "a first, unmeasured run of the same command filled (warm)")
    args = parser.parse_args()
    if args.compare:
        return compare(args.compare, args.seed[0])
    cores = os.cpu_count() or 1
    print(f"compile cache: {args.cache}")
    print(f"| profile | seed | wall s | target s | CPU s | CPU s / {cores} cores | results | results/s | drawing s | "
          f"peak RSS MB (< {PEAK_RSS_MB}) | run dir MB (< {RUN_DIR_MB}) | largest file MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    figures = []
    for p in args.profile:
        for seed in args.seed:
            extra = ["--compile-timeout", args.compile_timeout] if args.compile_timeout else []
            extra += [*(["--spec", *args.spec] if args.spec else []),
                      *(["--max-examples", str(args.max_examples)] if args.max_examples is not None else [])]
            cache = None if args.cache == "yours" else tempfile.mkdtemp(prefix="padconf-bench-cache-")
            try:
                if args.cache == "warm":
                    run(p, args.jobs, seed, args.runtime, extra, cache)
                f = run(p, args.jobs, seed, args.runtime, extra, cache)
            finally:
                if cache:  # compiled models: hundreds of MB with the compilers, of no use once measured
                    shutil.rmtree(cache, ignore_errors=True)
            figures.append(f)
            print(f"| {f['profile']} | {seed} | {f['wall']:.1f} | {TARGETS.get(f['profile'], '')} | {f['cpu']:.1f} | "
                  f"{f['cpu'] / cores:.1f} | {f['results']} | "
                  f"{f['results'] / f['wall']:.0f} | {f['draw_seconds']:.1f} | "
                  f"{_against(f['peak_rss_mb'], PEAK_RSS_MB)} | "
                  f"{_against(f['size_mb'], RUN_DIR_MB)} | {f['largest']} |", flush=True)
    print()
    print("| profile | seed | wall s | context cases' lane s | all lane s | wall s without contexts (estimated) |")
    print("|---|---:|---:|---:|---:|---:|")
    for f in figures:
        ctx, total = context_share(f["dir"])
        print(f"| {f['profile']} | {f['seed']} | {f['wall']:.1f} | {ctx:.1f} | {total:.1f} | "
              f"{f['wall'] * (1 - ctx / total if total else 1):.1f} |")
    print()
    print("| profile | seed | runtime | results | lane seconds | worker restarts | recycled | waiting on hangs s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for f in figures:
        for name, r in f["runtimes"].items():
            print(f"| {f['profile']} | {f['seed']} | {name} | {r['results']} | {r['seconds']:.1f} | "
                  f"{r.get('restarts', 0)} | {r.get('recycles', 0)} | {r.get('hang_wait_seconds', 0):.1f} |")
    print()
    for f in figures:
        print(f"{f['profile']} seed {f['seed']}: {f['dir']}")


if __name__ == "__main__":
    main()
