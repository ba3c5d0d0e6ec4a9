"""A whole `padconf run`, end to end, per profile: wall time, results/s, and per runtime the
results, seconds, worker restarts and seconds spent waiting on hangs; seconds drawing cases,
padconf's own peak RSS and the size of the run directory. Targets (2 cores): default < 120 s,
ci < 25 s, peak RSS < 300 MB, run directory < 30 MB.

Run: python benchmarks/bench_run.py [--profile ci default] [--jobs N] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"ci": 25, "default": 120}


def run(profile: str, jobs: int | None, seed: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"padconf-bench-{profile}-")) / "run"
    cmd = [sys.executable, "-m", "padconf.cli", "run", "--profile", profile, "--seed", str(seed), "--out", str(out)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    started = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - started
    stats = json.loads((out / "stats.json").read_text())
    results = sum(1 for _ in (out / "results.jsonl").open())
    size = sum(p.stat().st_size for p in out.iterdir())
    return {"profile": profile, "wall": wall, "results": results, "size_mb": size / 2**20, "dir": out, **stats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", nargs="+", default=["ci", "default"])
    parser.add_argument("--jobs", type=int, default=None, help="lanes (default: one per core)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("| profile | wall s | target s | results | results/s | drawing s | peak RSS MB | run dir MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    figures = [run(p, args.jobs, args.seed) for p in args.profile]
    for f in figures:
        print(f"| {f['profile']} | {f['wall']:.1f} | {TARGETS.get(f['profile'], '')} | {f['results']} | "
              f"{f['results'] / f['wall']:.0f} | {f['draw_seconds']:.1f} | {f['peak_rss_mb']:.0f} | {f['size_mb']:.1f} |")
    print()
    print("| profile | runtime | results | seconds | worker restarts | waiting on hangs s |")
    print("|---|---|---:|---:|---:|---:|")
    for f in figures:
        for name, r in f["runtimes"].items():
            print(f"| {f['profile']} | {name} | {r['results']} | {r['seconds']:.1f} | {r.get('restarts', 0)} | "
                  f"{r.get('hang_wait_seconds', 0):.1f} |")
    print()
    for f in figures:
        print(f"{f['profile']}: {f['dir']}")


if __name__ == "__main__":
    main()
