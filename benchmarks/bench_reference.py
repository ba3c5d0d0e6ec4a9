"""padconf.spec.reference.pad against numpy.pad, side by side in one run.

64x256x256 float32, pads of 8 on the last two axes, every mode numpy has; best of N runs each,
interleaved so that machine noise hits both alike. Prints milliseconds and the ratio.
Run: python benchmarks/bench_reference.py [--repeat N]
"""
import argparse
import time

import numpy as np

from padconf.spec.reference import pad

MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    data = np.random.default_rng(0).random((64, 256, 256), dtype=np.float32)
    widths = ((0, 0), (8, 8), (8, 8))
    pads = [0, 8, 8, 0, 8, 8]
    print(f"{'mode':<10} {'padconf ms':>11} {'numpy ms':>9} {'ratio':>6}")
    for mode in MODES:
        assert np.array_equal(pad(data, pads, mode), np.pad(data, widths, mode=mode))
        ours, theirs = [], []
        for _ in range(3):  # interleave rounds so a noisy moment hits both
            ours.append(best_of(lambda mode=mode: pad(data, pads, mode), args.repeat // 3 or 1))
            theirs.append(best_of(lambda mode=mode: np.pad(data, widths, mode=mode), args.repeat // 3 or 1))
        a, b = min(ours), min(theirs)
        print(f"{mode:<10} {a:>11.2f} {b:>9.2f} {a / b:>6.2f}")


if __name__ == "__main__":
    main()
