"""``padconf generate`` replaces its output folder whole, so it deletes only what a manifest
proves it wrote: every file below ``--out``, nested ones included, must be listed in the
previous output's FILES.sha256 with the same bytes; anything else (a user's model deep inside,
an edited README.md, a link) is one line, exit 2, and kept (docs/reliability.md)."""
from __future__ import annotations

import hashlib

import pytest

from padconf.cli import main
from tests.robustness.test_hostile_inputs import one_line_exit_2

SPEC = ["--spec", "onnx/Pad-2"]


@pytest.fixture
def previous(tmp_path):
    out = tmp_path / "models"
    assert main(["generate", "--out", str(out), *SPEC]) == 0
    return out


def test_files_sha256_lists_every_file_generate_wrote_with_its_bytes(previous):
    listed = dict(reversed(line.split("  ", 1)) for line in (previous / "FILES.sha256").read_text().splitlines())
    files = {p.relative_to(previous).as_posix(): p for p in previous.rglob("*") if p.is_file()}
    assert set(listed) == set(files) - {"FILES.sha256"} and len(listed) > 10
    assert all(hashlib.sha256(files[name].read_bytes()).hexdigest() == digest for name, digest in listed.items())


@pytest.mark.parametrize("plant", ["nested model", "edited readme", "nested link", "empty folder"])
def test_generate_keeps_every_file_it_cannot_prove_it_wrote(previous, tmp_path, capsys, plant):
    """``generate --out models`` checked top-level names only: it deleted
    ``models/onnx/resnet50/model.onnx`` and overwrote the user's README.md, exit 0."""
    capsys.readouterr()
    victim = tmp_path / "victim"
    victim.write_text("someone else's")
    if plant == "nested model":
        kept = previous / "onnx" / "resnet50" / "model.onnx"
        kept.parent.mkdir()
        kept.write_bytes(b"the user's own model")
    elif plant == "edited readme":
        kept = previous / "README.md"
        kept.write_text("# my notes on these models\n")
    elif plant == "nested link":
        kept = previous / "onnx" / "weights.bin"
        kept.symlink_to(victim)
    else:
        kept = previous / "onnx" / "mine"
        kept.mkdir()
        (kept / "notes.txt").write_text("mine")
    before = kept.read_bytes() if kept.is_file() else None
    one_line_exit_2(main(["generate", "--out", str(previous), *SPEC]), capsys, "did not write")
    assert kept.exists() and (before is None or kept.read_bytes() == before)
    assert victim.read_text() == "someone else's"


def test_a_previous_output_is_replaced_when_every_file_is_proven(previous):
    (previous / "FILES.sha256").read_text()
    assert main(["generate", "--out", str(previous), *SPEC]) == 0
