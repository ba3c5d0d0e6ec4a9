"""padconf run on a busy machine, with and without faults: N runs of the ci profile with the
default runtimes while background processes keep every core busy (started and stopped here),
then N more in which a random zygote, worker or drawing child is killed mid-run. Prints, per
variant, runs completed / started, rows lost and duplicated against an undisturbed run, and
padconf processes left behind; all but the first must be 0, the first N/N.

A run counts as completed when it exits 0 with its summary.md, its controls and a run.json that
counts exactly the rows results.jsonl holds.

Run from the repository root: python benchmarks/bench_load.py [--runs 20] [--busy 2] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "PADCONF_BENCH_LOAD"  # in the environment of every process a run starts: how leftovers are found


def spin() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def processes_marked(tag: str) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose environment carries ``tag``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if f"{MARK}={tag}".encode() in Path(f"/proc/{entry}/environ").read_bytes():
                found.append((int(entry), Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return found


def parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def victims(tag: str, kind: str) -> list[int]:
    """The run's processes of ``kind``: a zygote (worker_child under its reaper), a worker (one a
    zygote forked) or a drawing child."""
    marked = dict(processes_marked(tag))
    # a reaper's command names its child's module too
    reapers = {pid for pid, cmd in marked.items() if "padconf.execution.reaper" in cmd}
    children = {pid for pid, cmd in marked.items() if "padconf.execution.worker_child" in cmd and pid not in reapers}
    if kind == "drawing child":
        return [pid for pid, cmd in marked.items() if "padconf.run.draw_child" in cmd]
    return [pid for pid in children if parent(pid) in (reapers if kind == "zygote" else children)]


def keys(results: Path) -> Counter:
    rows = Counter()
    for line in results.read_text().splitlines():
        row = json.loads(line)
        rows[(row["runtime"], row["placement"], row["case_id"])] += 1
    return rows


def one_run(out: Path, seed: int, fault: str | None, rng: random.Random, extra: list[str]) -> dict:
    tag = uuid.uuid4().hex
    env = {**os.environ, MARK: tag}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "padconf.cli", "run", "--profile", "ci", "--seed", str(seed),
                             "--out", str(out), *extra], cwd=out.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    killed = None
    if fault:
        wait = rng.uniform(0.5, 3.0) if fault == "drawing child" else rng.uniform(1.0, 25.0)
        deadline = started + wait
        while proc.poll() is None and killed is None:
            found = victims(tag, fault)
            if found and time.monotonic() >= deadline or found and fault == "drawing child":
                killed = rng.choice(found)
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.05)
    _, err = proc.communicate()
    seconds = time.monotonic() - started
    time.sleep(0.5)  # a reaper ends its tree within milliseconds of padconf's exit
    left = processes_marked(tag)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    run_json = out / "run.json"
    done = (proc.returncode == 0 and (out / "summary.md").is_file() and run_json.is_file()
            and sum(json.loads(run_json.read_text()).get("results", {}).values())
            == sum(keys(out / "results.jsonl").values()))
    return {"code": proc.returncode, "done": done, "seconds": seconds, "left": len(left), "killed": killed,
            "err": err.strip().splitlines()[-1:] if err.strip() else []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per variant (default: 20)")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy loops (default: one per core)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", choices=["both", "no faults", "faults"], default="both")
    parser.add_argument("--runtime", nargs="+", default=[], help="these runtimes (default: the run's default ones)")
    parser.add_argument("--spec", nargs="+", default=[], help="only these spec ids (default: all)")
    parser.add_argument("--max-examples", type=int, default=None, help="passed to padconf run (default: the profile's)")
    args = parser.parse_args()
    extra = [*(["--runtime", *args.runtime] if args.runtime else []), *(["--spec", *args.spec] if args.spec else []),
             *(["--max-examples", str(args.max_examples)] if args.max_examples is not None else [])]
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="padconf-bench-load-"))
    reference = one_run(work / "reference", args.seed, None, rng, extra)
    assert reference["done"], f"the undisturbed run did not finish: {reference}"
    expected = keys(work / "reference" / "results.jsonl")
    print(f"undisturbed run: {sum(expected.values())} rows in {reference['seconds']:.1f} s; "
          f"{args.busy} busy loops from now on", flush=True)
    loops = [spin() for _ in range(args.busy)]
    try:
        for variant in ("no faults", "faults") if args.variant == "both" else (args.variant,):
            figures: Counter = Counter()
            seconds = []
            for k in range(args.runs):
                fault = rng.choice(["zygote", "worker", "drawing child"]) if variant == "faults" else None
                out = work / f"{variant.replace(' ', '-')}-{k}"
                result = one_run(out, args.seed, fault, rng, extra)
                rows = keys(out / "results.jsonl") if (out / "results.jsonl").is_file() else Counter()
                figures["completed"] += result["done"]
                figures["lost"] += sum((expected - rows).values()) if result["done"] else 0
                figures["duplicated"] += sum(n - 1 for n in rows.values() if n > 1)
                figures["unexpected rows"] += len(set(rows) - set(expected))
                figures["left behind"] += result["left"]
                seconds.append(result["seconds"])
                print(f"  {variant} {k + 1}/{args.runs}: exit {result['code']}, {result['seconds']:.1f} s"
                      + (f", killed a {fault} (pid {result['killed']})" if fault else "")
                      + (f", {result['left']} processes left" if result["left"] else "")
                      + (f": {result['err'][0]}" if result["code"] else ""), flush=True)
            print(f"{variant}: {figures['completed']}/{args.runs} completed, {figures['lost']} rows lost, "
                  f"{figures['duplicated']} duplicated, {figures['unexpected rows']} unexpected, "
                  f"{figures['left behind']} processes left behind; wall time median "
                  f"{sorted(seconds)[len(seconds) // 2]:.1f} s (min {min(seconds):.1f}, max {max(seconds):.1f})",
                  flush=True)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    print(f"run directories in {work}")


if __name__ == "__main__":
    main()
