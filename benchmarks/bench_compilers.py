"""The ahead-of-time compilers (IREE, TVM) in a whole `padconf run`, cold and warm: the same run
twice, the first with an empty compile cache, the second with the cache the first filled. Prints
per run the wall time, per runtime the results and lane seconds, the cache's entries and size,
and the ratio cold / warm (target: >= 3).

Run: python benchmarks/bench_compilers.py [--runtime iree tvm] [--profile ci] [--seed 0] [--spec onnx/Pad-19]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(runtimes: list[str], profile: str, seed: int, cache: Path, specs: list[str]) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"padconf-bench-compilers-{profile}-")) / "run"
    cmd = [sys.executable, "-m", "padconf.cli", "--compile-cache", str(cache), "run", "--profile", profile,
           "--seed", str(seed), "--out", str(out)]
    for name in runtimes:
        cmd += ["--runtime", name]
    for spec in specs:
        cmd += ["--spec", spec]
    started = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    wall = time.monotonic() - started
    entries = list(cache.glob("*/*.bin"))
    return {"wall": wall, "stats": json.loads((out / "stats.json").read_text()), "entries": len(entries),
            "cache_mb": sum(p.stat().st_size for p in entries) / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", nargs="+", default=["iree", "tvm"])
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--spec", nargs="+", default=[], help="only these spec ids (default: all)")
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="padconf-bench-compile-cache-"))
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    print("| run | wall s | " + " | ".join(f"{r} results | {r} lane s" for r in args.runtime)
          + " | cache entries | cache MB |")
    print("|---|---:|" + "---:|---:|" * len(args.runtime) + "---:|---:|")
    walls = []
    for name in ("cold", "warm"):
        figures = run(args.runtime, args.profile, args.seed, cache, args.spec)
        walls.append(figures["wall"])
        per = figures["stats"]["runtimes"]
        cells = " | ".join(f"{per.get(r, {}).get('results', 0)} | {per.get(r, {}).get('seconds', 0):.1f}"
                           for r in args.runtime)
        print(f"| {name} | {figures['wall']:.1f} | {cells} | {figures['entries']} | {figures['cache_mb']:.1f} |")
    print(f"cold / warm: {walls[0] / walls[1]:.1f}x (target >= 3)")


if __name__ == "__main__":
    main()
