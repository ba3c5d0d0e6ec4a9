"""A gate's shards: ``--shard`` takes ASCII digits and a bounded count, and ``--results``
judges only shards whose every row is a case of the shard its gate.json names: overlapping or
relabelled shards would leave a shard's own cases, and their failures, out (docs/reliability.md)."""
from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from padconf.cli import main
from padconf.core.errors import PadconfError
from padconf.gate.selection import MAX_SHARDS, parse_shard
from tests.robustness.test_hostile_inputs import signed_again

FAKE = "tests.fake_adapters:"
SPEC = ["--spec", "onnx/Pad-19"]


@pytest.mark.parametrize("text", ["\u0661/\u0662", "1/" + "9" * 5000, f"1/{MAX_SHARDS + 1}", "0/2", "3/2", "1/2 ",
                                  "\uff11/\uff12"])
def test_a_shard_is_ascii_digits_within_bounds(text):
    with pytest.raises(PadconfError, match="expected I/N"):
        parse_shard(text)
    assert parse_shard("2/4") == (2, 4)


@pytest.mark.slow
def test_overlapping_or_relabelled_shards_are_never_judged_as_the_whole(tmp_path, capsys):
    (tmp_path / "b.yaml").write_text("[]\n")
    dirs = [tmp_path / f"s{k}" for k in (1, 2)]
    for k, work in enumerate(dirs, 1):
        assert main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"),
                     "--work", str(work), "--shard", f"{k}/2", *SPEC]) == 0
    judge = ["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"), *SPEC,
             "--results"]
    assert main([*judge, *map(str, dirs)]) == 0
    capsys.readouterr()
    # shard 1's run relabelled as shard 2: together they look complete, and shard 2's cases are missing
    fake = tmp_path / "s2-fake"
    shutil.copytree(dirs[0], fake)
    about = json.loads((fake / "gate.json").read_text())
    (fake / "gate.json").write_text(json.dumps({**about, "shard": [2, 2]}))
    signed_again(fake)
    assert main([*judge, str(dirs[0]), str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in shard 2/2" in err
    (fake / "gate.json").write_text(json.dumps({**about, "shard": [3, 2]}))
    signed_again(fake)
    assert main([*judge, str(dirs[0]), str(fake)]) == 2
    assert "1 <= i <= n" in capsys.readouterr().err


@pytest.mark.parametrize("keys", ["1: one\n  null: two", "true: x\n  2.5: y\n  zz: z"])
def test_baseline_keys_of_mixed_types_are_one_line(keys):
    """Keys of several types (``1:`` beside ``null:``) were sorted together: a TypeError, exit 3."""
    from padconf.core.errors import CaseError
    from padconf.gate.baseline import parse_baseline
    text = f"- runtime: onnxruntime\n  verdict: mismatch\n  why: x\n  cells: [a]\n  {keys}\n"
    with pytest.raises(CaseError, match="b.yaml:1: unknown key"):
        parse_baseline(text, "b.yaml")


def _rewrite(shard, rows):
    """A shard's results.jsonl replaced by ``rows``, its run.json's count kept consistent, signed again."""
    (shard / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = json.loads((shard / "run.json").read_text())
    held = Counter(runtime for runtime, _, _ in {(r["runtime"], r["placement"], r["case_id"]) for r in rows})
    (shard / "run.json").write_text(json.dumps({**run, "results": {name: held[name] for name in run["runtimes"]}}))
    signed_again(shard)


@pytest.mark.slow
def test_a_shard_emptied_stripped_padded_or_doubled_with_consistent_counts_is_refused(tmp_path, capsys):
    """The join proves each shard whole against the suite it computes again, not its own counts:
    a shard emptied, stripped of its failing rows, holding a case of no suite, a row of another
    runtime or a row twice, each with run.json's count made to agree, is one line, exit 2."""
    from padconf.gate.selection import in_shard
    (tmp_path / "b.yaml").write_text("[]\n")
    runtime = FAKE + "WrongOnExampleAdapter"
    dirs = [tmp_path / f"s{k}" for k in (1, 2)]
    codes = [main(["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"),
                   "--work", str(work), "--shard", f"{k}/2", *SPEC]) for k, work in enumerate(dirs, 1)]
    assert sorted(codes) == [0, 1]  # the worked example it fails is in one shard
    target, whole = (dirs[0], dirs[1]) if codes[0] == 1 else (dirs[1], dirs[0])
    index = 1 if target == dirs[0] else 2
    judge = ["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), *SPEC, "--results"]
    assert main([*judge, *map(str, dirs)]) == 1  # the whole: the worked examples' failures are new
    capsys.readouterr()
    rows = [json.loads(line) for line in (target / "results.jsonl").read_text().splitlines()]
    failing = [r for r in rows if r["verdict"] == "mismatch"]
    assert failing and len(failing) < len(rows)
    other = next(f"made-up-{n}" for n in range(1000) if in_shard(f"made-up-{n}", (index, 2)))
    attacks = {
        "emptied": [],
        "stripped of its failures": [r for r in rows if r["verdict"] != "mismatch"],
        "stripped of one placement of one failure": [r for r in rows if r is not failing[0]],
        "padded with a case of no suite": [*rows, {**rows[0], "case_id": other}],
        "holding another runtime's row": [*rows, {**rows[0], "runtime": "onnxruntime"}],
        "holding a row twice": [*rows, rows[0]],
    }
    for what, attack in attacks.items():
        shard = tmp_path / f"attack-{len(attack)}-{abs(hash(what))}"
        shutil.copytree(target, shard)
        _rewrite(shard, attack)
        assert main([*judge, str(shard), str(whole)]) == 2, what
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(shard) in err, (what, err)


@pytest.mark.slow
def test_filtered_shards_are_proved_whole_against_the_filtered_suite(tmp_path, capsys):
    """gate.json records the filter as data, so the join computes the filtered suite: the honest
    shards pass, and one stripped of a case the filter takes is refused."""
    (tmp_path / "b.yaml").write_text("[]\n")
    runtime = FAKE + "ConformingAdapter"
    dirs = [tmp_path / f"s{k}" for k in (1, 2)]
    for k, work in enumerate(dirs, 1):
        assert main(["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), "--work", str(work),
                     "--shard", f"{k}/2", "--mode", "edge", *SPEC]) == 0
    assert json.loads((dirs[0] / "gate.json").read_text())["case_filter"]["modes"] == ["edge"]
    judge = ["gate", "--runtime", runtime, "--baseline", str(tmp_path / "b.yaml"), *SPEC, "--mode", "edge",
             "--results"]
    assert main([*judge, *map(str, dirs)]) == 0
    capsys.readouterr()
    # the gate judged is the one the command line names: gate.json's filter only agrees with it
    assert main([*[a for a in judge if a not in ("--mode", "edge")], *map(str, dirs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a gate of --mode, --dtype, -k --mode edge, not the none" in err, err
    for shard in dirs:  # a filter forged into every shard's gate.json, which the shards' rows agree with
        about = json.loads((shard / "gate.json").read_text())
        about["case_filter"]["modes"], about["filter"] = ["edge", "reflect"], "--mode edge --mode reflect"
        (shard / "gate.json").write_text(json.dumps(about))
    signed_again(*dirs)
    assert main([*judge, *map(str, dirs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a gate of --mode, --dtype, -k --mode edge --mode reflect, not the --mode edge" \
        in err, err
    for shard in dirs:
        about["case_filter"]["modes"], about["filter"] = ["edge"], "--mode edge"
        (shard / "gate.json").write_text(json.dumps({**json.loads((shard / "gate.json").read_text()),
                                                     "case_filter": about["case_filter"], "filter": "--mode edge"}))
    signed_again(*dirs)
    assert main([*judge, *map(str, dirs)]) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in (dirs[0] / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["mode"] == "edge" for r in rows)
    _rewrite(dirs[0], [r for r in rows if r["case_id"] != rows[0]["case_id"]])
    assert main([*judge, *map(str, dirs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lacks 1 of its" in err, err


@pytest.mark.slow
def test_shards_of_two_gate_runs_are_never_judged_as_one(tmp_path, capsys, monkeypatch):
    """Yesterday's clean shard 1 beside today's shard 2, both signed under the CI's one key,
    passed as today's gate, hiding today's failures in shard 1 (attack round IV): a shard
    records the gate run it is part of (--run-id, or the CI's run id), and --results joins
    only the shards of one run, and of the run it names where it names one."""
    for name in ("PADCONF_GATE_RUN_ID", "GITHUB_RUN_ID", "CI_PIPELINE_ID"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "b.yaml").write_text("[]\n")
    shard = ["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"), *SPEC]
    for day in ("monday", "tuesday"):
        for k in (1, 2):
            assert main([*shard, "--work", str(tmp_path / f"{day}{k}"), "--shard", f"{k}/2", "--run-id", day]) == 0
    judge = [*shard, "--results"]
    assert main([*judge, str(tmp_path / "tuesday1"), str(tmp_path / "tuesday2")]) == 0
    capsys.readouterr()
    assert main([*judge, str(tmp_path / "monday1"), str(tmp_path / "tuesday2")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gate run id differ" in err, err
    assert main([*judge, str(tmp_path / "monday1"), str(tmp_path / "monday2"), "--run-id", "tuesday"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a shard of gate run 'monday', not of 'tuesday'" in err, err
    assert main([*shard, "--work", str(tmp_path / "unnamed"), "--shard", "1/2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--shard: name the gate run its shards share with --run-id" in err, err
    monkeypatch.setenv("GITHUB_RUN_ID", "1234")  # a CI's own run id is the default
    assert main([*shard, "--work", str(tmp_path / "ci1"), "--shard", "1/2"]) == 0
    assert json.loads((tmp_path / "ci1" / "gate.json").read_text())["run_id"] == "1234"
