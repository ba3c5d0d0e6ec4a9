"""``padconf bisect`` on the four onnxruntime Pad cases whose behaviour changed across releases,
over every onnxruntime release the package index has for this Python: once from an empty
environment cache (uv's cache of wheels included: every environment downloaded and made), once
warm; prints both times, the boundaries found and the cache's size (``padconf envs``).

    python benchmarks/bench_releases.py [--from V] [--to V] [--keep DIR]
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

import numpy as np

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.examples import example_cases
from padconf.spec.loader import get_spec


def four_cases() -> dict[str, Case]:
    """Reflect pads equal to the dimension (the spec's reflect Example 2, at the begin, and the
    same at the end), the mixed-sign reflect of microsoft/onnxruntime#11828, a constant crop past
    an axis beside a pad."""
    spec = get_spec("onnx/Pad-19")

    def case(data, pads, mode):
        return classify(Case(spec.id, np.asarray(data, dtype=np.float32), pads, mode), spec)

    return {"reflect-equal-begin": next(c for c in example_cases(spec) if c.origin == "example:example_2_reflect"),
            "reflect-equal-end": case([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], [0, 0, 0, 2], "reflect"),
            "mixed-sign-reflect": case(np.arange(5), [-4, 4], "reflect"),
            "constant-crop-past-axis": case(np.arange(4), [-5, 3], "constant")}


def bisect_all(files: list[Path], cache: Path, extra: list[str]) -> tuple[float, list[dict]]:
    env = {**os.environ, "PADCONF_ENV_CACHE": str(cache)}
    started, found = time.monotonic(), []
    for path in files:
        out = path.with_suffix(".found.json")
        done = subprocess.run([sys.executable, "-m", "padconf.cli", "bisect", str(path), "--runtime", "onnxruntime",
                               "--json", str(out), *extra], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"padconf bisect {path.name} exited {done.returncode}: {done.stderr.strip()[-400:]}")
        print(done.stdout.rstrip())
        found.append(json.loads(out.read_text()))
    return time.monotonic() - started, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="start")
    parser.add_argument("--to", dest="end")
    parser.add_argument("--keep", default=None, help="the environment cache to use and keep (default: a fresh one)")
    args = parser.parse_args()
    extra = [*(["--from", args.start] if args.start else []), *(["--to", args.end] if args.end else [])]
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(args.keep or Path(scratch) / "envs")
        files = []
        for name, case in four_cases().items():
            path = Path(scratch) / f"{name}.json"
            path.write_text(json.dumps(case.to_json()) + "\n")
            files.append(path)
        cold, found = bisect_all(files, cache, extra)
        warm, again = bisect_all(files, cache, extra)
        same = [f["changes"] for f in found] == [a["changes"] for a in again]
        listing = subprocess.run([sys.executable, "-m", "padconf.cli", "envs"], capture_output=True, text=True,
                                 env={**os.environ, "PADCONF_ENV_CACHE": str(cache)}).stdout.strip().splitlines()
        tested = sum(len(f["tested"]) for f in found)
        print(f"\ncold (empty cache): {cold:.1f} s; warm: {warm:.1f} s; {tested} release runs over "
              f"{found[0]['count']} releases; the same boundaries warm: {same}")
        print(listing[-1] if listing else "padconf envs printed nothing")


if __name__ == "__main__":
    main()
