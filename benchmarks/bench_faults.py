"""Fault injection: a planted runtime that prints, crashes, hangs and corrupts itself, and a
padconf killed at random moments (SIGKILL or SIGTERM), its results file sometimes cut
mid-line as a power loss leaves it, and resumed each time. Prints what
padconf guarantees (docs/reliability.md): kills survived, results lost, duplicated,
misattributed, processes left behind; every figure but the first must be 0.

Run from the repository root: python benchmarks/bench_faults.py [--kills 25] [--cases 300] [--seed 0]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from padconf.adapters import Adapter, Outcome  # noqa: E402
from padconf.cases.case import Case  # noqa: E402
from padconf.judging.verdicts import judge  # noqa: E402
from padconf.spec.reference import pad  # noqa: E402

ADAPTER = "benchmarks.bench_faults:ChaosAdapter"
# per case, decided by its content so that the expected verdict of every case is known
ACTIONS = (("print", 10), ("segfault", 3), ("hang", 2), ("poison", 3), ("correct", 82))


def action(case_json: dict) -> str:
    digest = hashlib.sha1(json.dumps(case_json, sort_keys=True).encode()).digest()
    roll = int.from_bytes(digest[:4], "little") % 100
    for name, share in ACTIONS:
        if roll < share:
            return name
        roll -= share
    raise AssertionError


class ChaosAdapter(Adapter):
    """The reference, except: 'print' writes garbage to fd 1 and 2 and answers right;
    'segfault' and 'hang' do that; 'poison' answers right and makes the next case segfault."""

    poisoned = False

    def run(self, case, placement="inputs"):
        time.sleep(0.04)  # a runtime's pace, so that the random kills land mid-run
        if ChaosAdapter.poisoned:
            os.kill(os.getpid(), signal.SIGSEGV)
        what = action(case.inputs_json())
        if what == "print":
            os.write(1, b'{"status": "ok", "output": null}\n' + os.urandom(64) + b"\n")
            os.write(2, b"chaos: a warning\n")
        elif what == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif what == "hang":
            while True:
                pass
        elif what == "poison":
            ChaosAdapter.poisoned = True
        return self.answer(case)

    @staticmethod
    def answer(case) -> Outcome:
        try:
            return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))
        except Exception as exc:
            return Outcome(error=str(exc))


def expected_verdict(case_row: dict) -> str:
    """What the case deserves: crash or timeout where it was planted, else the verdict of the
    same adapter run in this process, unharmed by anything that ran before."""
    case = Case.from_json(case_row)
    what = action(case.inputs_json())
    if what in ("segfault", "hang"):
        return {"segfault": "crash", "hang": "timeout"}[what]
    return judge(case, ChaosAdapter.answer(case)).verdict


def leftovers() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if ADAPTER.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=25)
    parser.add_argument("--cases", type=int, default=300, help="generated cases (onnx/Pad-19)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = Path(tempfile.mkdtemp(prefix="padconf-faults-")) / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "padconf.cli", "run", "--out", str(out)]
    first = base + ["--runtime", ADAPTER, "--spec", "onnx/Pad-19", "--max-examples", str(args.cases),
                    "--timeout", "1", "--seed", str(args.seed)]
    started = time.monotonic()
    kills, orphans, codes = 0, 0, Counter()
    while True:
        cmd = first if not (out / "run.json").exists() else base + ["--resume", "--runtime", ADAPTER]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if kills < args.kills:
            try:
                proc.wait(timeout=rng.uniform(0.3, 2.5))
            except subprocess.TimeoutExpired:
                how = rng.choice([signal.SIGKILL, signal.SIGTERM])
                proc.send_signal(how)
                proc.wait()
                kills += 1
                results = out / "results.jsonl"
                if rng.random() < 0.3 and results.exists() and results.stat().st_size > 1:
                    data = results.read_bytes()  # a power loss: the last line half written
                    start = data.rstrip(b"\n").rfind(b"\n") + 1
                    results.write_bytes(data[:rng.randrange(start, len(data))])
                time.sleep(1.0)  # the reaper's grace: it acts within milliseconds
                left = leftovers()
                orphans += len(left)
                for pid in left:
                    os.kill(pid, signal.SIGKILL)
                continue
        codes[proc.wait()] += 1
        if codes[0]:
            break
        if sum(codes.values()) > 3:
            raise SystemExit(f"padconf run keeps failing: exit codes {dict(codes)}")
    orphans += len(leftovers())
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    placements = ("inputs", "initializers")
    wanted = {(p, c["id"]) for c in cases for p in placements}
    got = Counter((r["placement"], r["case_id"]) for r in rows)
    expected = {c["id"]: expected_verdict(c) for c in cases}
    misattributed = [r for r in rows if r["verdict"] != expected[r["case_id"]]]
    actions = Counter(action(Case.from_json(c).inputs_json()) for c in cases)
    print(f"cases: {len(cases)} x {len(placements)} placements; planted per case: {dict(actions)}")
    print(f"wall time: {time.monotonic() - started:.0f} s; torn lines set aside: "
          f"{sum(1 for _ in open(f'{out}/results.jsonl.torn')) if Path(f'{out}/results.jsonl.torn').exists() else 0}")
    print(f"kills survived:   {kills}")
    print(f"results lost:     {len(wanted - set(got))}")
    print(f"duplicated:       {sum(n - 1 for n in got.values() if n > 1)}")
    print(f"misattributed:    {len(misattributed)}")
    for r in misattributed[:5]:
        print(f"  {r['case_id']} [{r['placement']}]: {r['verdict']} ({(r['detail'] or '')[:100]})")
    print(f"processes left:   {orphans}")
    print(f"run directory:    {out}")


if __name__ == "__main__":
    main()
