"""``padconf generate`` replaces its output folder whole, so it deletes only what a manifest
proves it wrote: every file below ``--out``, nested ones included, must be listed in the
previous output's FILES.sha256 with the same bytes, that FILES.sha256 signed with the user's key
(MARK), or be written again byte for byte by this generate; anything else (a user's model deep inside,
an edited README.md, a link) is one line, exit 2, and kept (docs/reliability.md)."""
from __future__ import annotations

import hashlib

import pytest

from padconf.cli import main
from padconf.core.writing import MARK
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
    assert set(listed) == set(files) - {"FILES.sha256", MARK} and len(listed) > 10
    assert all(hashlib.sha256(files[name].read_bytes()).hexdigest() == digest for name, digest in listed.items())


@pytest.mark.parametrize("plant", ["nested model", "edited readme", "edited nested data", "nested link",
                                   "empty folder"])
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
    elif plant == "edited nested data":  # a test's input the user changed after generate wrote it
        kept = sorted((previous / "onnx").rglob("input_0.pb"))[0]
        kept.write_bytes(b"the user's own input")
    elif plant == "nested link":
        kept = previous / "onnx" / "weights.bin"
        kept.symlink_to(victim)
    else:
        kept = previous / "onnx" / "mine"
        kept.mkdir()
        (kept / "notes.txt").write_text("mine")
    before = kept.read_bytes() if kept.is_file() else None
    one_line_exit_2(main(["generate", "--out", str(previous), *SPEC]), capsys, "cannot prove it wrote")
    assert kept.exists() and (before is None or kept.read_bytes() == before)
    assert victim.read_text() == "someone else's"


def test_a_previous_output_is_replaced_when_every_file_is_proven(previous):
    (previous / "FILES.sha256").read_text()
    assert main(["generate", "--out", str(previous), *SPEC]) == 0


def _planted(out, files: dict[str, bytes]) -> dict:
    for name, data in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    (out / "FILES.sha256").write_text("".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in files.items()))
    return files


@pytest.mark.parametrize("mark", ["no mark", "forged mark", "a genuine output's mark"])
def test_a_planted_manifest_listing_the_users_files_proves_nothing(previous, tmp_path, capsys, mark):
    """A committed FILES.sha256 listing the user's files with their true hashes let generate
    delete them (attack round A's generate_forged_manifest). Three forgeries of the proof: none,
    a made-up signature, and the mark of a genuine output copied beside an edited listing."""
    out = tmp_path / "checkout" / "models"
    out.mkdir(parents=True)
    files = _planted(out, {"onnx/mobilenet/model.onnx": b"the user's model", "notes/NOTES.md": b"# notes",
                           "README.md": b"# the user's readme\n"})
    if mark == "forged mark":
        (out / MARK).write_text("0" * 64 + "\n")
    elif mark == "a genuine output's mark":
        (out / MARK).write_bytes((previous / MARK).read_bytes())
    capsys.readouterr()
    one_line_exit_2(main(["generate", "--out", str(out), *SPEC]), capsys, "cannot prove it wrote")
    assert all((out / name).read_bytes() == data for name, data in files.items())


def test_files_this_generate_writes_again_byte_for_byte_are_replaced_without_a_mark(previous, tmp_path):
    """A fresh clone's committed output carries no mark of this user: what generate writes
    again, byte for byte, loses nothing when replaced; --force replaces the rest."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for path in previous.rglob("*"):
        if path.is_file() and path.name != MARK:
            (clone / path.relative_to(previous)).parent.mkdir(parents=True, exist_ok=True)
            (clone / path.relative_to(previous)).write_bytes(path.read_bytes())
    assert main(["generate", "--out", str(clone), *SPEC]) == 0
    (clone / MARK).unlink()
    (clone / "onnx" / "extra.txt").write_text("the user's")
    assert main(["generate", "--out", str(clone), *SPEC]) == 2
    assert main(["generate", "--out", str(clone), *SPEC, "--force"]) == 0
    assert not (clone / "onnx" / "extra.txt").exists()
