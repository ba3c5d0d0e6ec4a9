"""``padconf generate`` of the whole suite (every spec version, seed 0, one drawn case per
combination): its cases by family and kind, context cases apart, the size and number of files
it writes, and the seconds it takes (drawing included). docs/performance.md quotes what it prints.
Run: python benchmarks/bench_generate.py [--per-combo N] [--spec ID ...]
"""
import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from padconf.generate.writer import generate
from padconf.spec.loader import load_specs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-combo", type=int, default=1)
    parser.add_argument("--spec", nargs="+", default=None, help="only these spec ids (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "generated"
        started = time.monotonic()
        specs = [s for s in load_specs() if args.spec is None or s.id in args.spec]
        entries = generate(out, specs, seed=0, per_combo=args.per_combo)
        seconds = time.monotonic() - started
        files = [p for p in out.rglob("*") if p.is_file()]
        size = sum(os.path.getsize(p) for p in files)
        on_disk = sum(os.stat(p).st_blocks * 512 for p in files)  # du's figure: a block or more per file
    kinds = Counter((e.case.spec.split("/")[0], "context" if e.case.context else "one-node", e.case.kind)
                    for e in entries)
    print(f"padconf generate: {len(entries)} cases, {size / 2**20:.1f} MB in {len(files)} files "
          f"({on_disk / 2**20:.0f} MB on disk), {seconds:.0f} s")
    print("| family | model | kind | cases |\n|---|---|---|---:|")
    for (family, model, kind), n in sorted(kinds.items()):
        print(f"| {family} | {model} | {kind} | {n} |")


if __name__ == "__main__":
    main()
