"""Memory exhausted by the input is one line, exit 2, in every command; minimize's workers take
run's ``--memory-mb``, and a cap above ``ulimit -v`` is one line before any worker starts
(minimize exited 3 under ``ulimit -v 2000000``) (docs/reliability.md)."""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main

PADCONF = str(Path(sys.executable).with_name("padconf"))
FAKE = "tests.fake_adapters:WrongOnExampleAdapter"
REPO = Path(__file__).resolve().parents[2]


def _under(kb: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (kb * 1024, kb * 1024))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mem") / "run"
    assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "3",
                 "--out", str(out)]) in (0, 1)
    return out


def _first_made(data, value):
    data = data.copy()
    data.reshape(-1)[0] = value
    return data


def _grown(run: Path, where: Path, nbytes: int) -> Path:
    """``run`` copied with its float rows repeated, each on another case (its first element made
    unique: a case is held to its content's id) and each a refusal on no output (none to derive again), to
    ``nbytes`` of results.jsonl, its count kept consistent: an input that is large, not malformed."""
    where.mkdir()
    (where / "run.json").write_bytes((run / "run.json").read_bytes())
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    cases = {c["id"]: Case.from_json(c) for c in map(json.loads, (run / "cases.jsonl").read_text().splitlines())}
    cases = {k: c for k, c in cases.items() if c.dtype == "float" and c.data.size}  # a value to make unique
    rows = [row for row in rows if row["case_id"] in cases]
    n = 0
    with open(where / "results.jsonl", "w") as f, open(where / "cases.jsonl", "w") as g:
        while f.tell() < nbytes:
            copies = {k: classify(c.with_(data=_first_made(c.data, 1e6 + n * len(cases) + i), expected=None,
                                          interpretations={})) for i, (k, c) in enumerate(cases.items())}
            for row in rows:  # a row needs its case
                f.write(json.dumps({**{k: v for k, v in row.items() if k != "output_digest"},
                                    "case_id": copies[row["case_id"]].id, "verdict": "not-implemented",
                                    "error": "no kernel", "output": None, "note": "x" * 16000}) + "\n")
            g.write("".join(json.dumps(copy.to_json()) + "\n" for copy in copies.values()))
            n += 1
    doc = json.loads((run / "run.json").read_text())
    held = Counter(row["runtime"] for row in rows)
    (where / "run.json").write_text(json.dumps({**doc, "results": {name: held[name] * n
                                                                   for name in doc["runtimes"]}}))
    return where


@pytest.mark.slow
def test_a_report_on_an_input_too_large_for_ulimit_is_one_line_exit_2(small_run, tmp_path):
    """A real exhaustion, not a planted one: under an address-space limit the small run's
    report fits in, the same run grown to 100 MB is one line and exit 2 (a MemoryError was
    padconf's own fault, exit 3); at no limit is it 3."""
    big = _grown(small_run, tmp_path / "big", 100_000_000)
    seen = []
    for kb in (350_000, 400_000, 450_000, 500_000):
        codes = []
        for run in (small_run, big):
            done = subprocess.run([PADCONF, "report", str(run), "--md", str(tmp_path / "r.md")],
                                  capture_output=True, text=True, timeout=300, preexec_fn=_under(kb))
            codes.append(done.returncode)
            assert done.returncode in (0, 2), done.stderr
            if done.returncode == 2:
                assert done.stderr.count("\n") == 1 and "out of memory in padconf report" in done.stderr
        seen.append(codes)
    assert [0, 2] in seen, seen  # a limit the small run fits in and the large one does not


@pytest.mark.parametrize("command", [["report", "RUN", "--md", "OUT/r.md"], ["run", "--out", "OUT/r"],
                                     ["minimize", "RUN:x", "--runtime", "onnx-reference", "--out", "OUT/m"],
                                     ["gate", "--runtime", "onnx-reference", "--baseline", "b.yaml"],
                                     ["generate", "--out", "OUT/g"], ["specs"]])
def test_memory_exhausted_in_any_command_is_one_line_exit_2(tmp_path, capsys, monkeypatch, command):
    import padconf.cli.parser as parser

    def exhausted(args):
        raise MemoryError()
    name = f"cmd_{command[0]}"
    monkeypatch.setattr(parser, name, exhausted)
    argv = [a.replace("OUT", str(tmp_path)).replace("RUN", str(tmp_path)) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"out of memory in padconf {command[0]}" in err


@pytest.mark.slow
def test_minimize_takes_runs_memory_cap_and_refuses_one_above_ulimit(small_run, tmp_path):
    """Its workers were capped at run's default whatever the user asked, so under ``ulimit -v``
    below it no worker started: exit 3."""
    case = "onnx/Pad-19:edge:float:af0873ff6e82"  # the worked example the fake runtime gets wrong
    assert case in {json.loads(line)["id"] for line in (small_run / "cases.jsonl").read_text().splitlines()}
    base = [PADCONF, "minimize", f"{small_run}:{case}", "--runtime", FAKE, "--time-limit", "3"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([*base, "--out", str(tmp_path / "m1")], capture_output=True, text=True, timeout=300,
                          preexec_fn=_under(2_000_000), env=env, cwd=REPO)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--memory-mb 1953 or less" in done.stderr
    assert not (tmp_path / "m1").exists()
    done = subprocess.run([*base, "--out", str(tmp_path / "m2"), "--memory-mb", "1500"], capture_output=True,
                          text=True, timeout=300, preexec_fn=_under(2_000_000), env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([PADCONF, "minimize", str(small_run), "--out", str(tmp_path / "m3")], capture_output=True,
                          text=True, timeout=300, preexec_fn=_under(2_000_000), env=env, cwd=REPO)
    assert done.returncode == 2 and "--memory-mb 1953 or less" in done.stderr, done.stderr
