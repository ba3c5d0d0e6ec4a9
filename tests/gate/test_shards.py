"""A gate's shards: ``--shard`` takes ASCII digits and a bounded count, and ``--results``
judges only shards whose every row is a case of the shard its gate.json names: overlapping or
relabelled shards would leave a shard's own cases, and their failures, out (docs/reliability.md)."""
from __future__ import annotations

import json
import shutil

import pytest

from padconf.cli import main
from padconf.core.errors import PadconfError
from padconf.gate.selection import MAX_SHARDS, parse_shard

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
    judge = ["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(tmp_path / "b.yaml"), "--results"]
    assert main([*judge, *map(str, dirs)]) == 0
    capsys.readouterr()
    # shard 1's run relabelled as shard 2: together they look complete, and shard 2's cases are missing
    fake = tmp_path / "s2-fake"
    shutil.copytree(dirs[0], fake)
    about = json.loads((fake / "gate.json").read_text())
    (fake / "gate.json").write_text(json.dumps({**about, "shard": [2, 2]}))
    assert main([*judge, str(dirs[0]), str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in shard 2/2" in err
    (fake / "gate.json").write_text(json.dumps({**about, "shard": [3, 2]}))
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
