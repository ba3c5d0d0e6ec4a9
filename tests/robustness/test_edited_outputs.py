"""A file padconf wrote and the user changed afterwards (its bytes are not those the signed
FILES.sha256 lists) is never overwritten without --force: export-onnx-tests into its own
folder, as generate (tests/robustness/test_generate_manifest.py)."""
from __future__ import annotations

import hashlib

import pytest

from padconf.cli import main
from padconf.generate.writer import EXPORT_SIGNATURE
from tests.robustness.test_hostile_inputs import one_line_exit_2


def files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def exported(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["export-onnx-tests", "--out", str(out)]) == 0
    capsys.readouterr()
    return out


def test_an_export_lists_every_file_it_wrote_and_replaces_them_again(exported, capsys):
    listed = dict(reversed(line.split("  ", 1)) for line in (exported / "FILES.sha256").read_text().splitlines())
    held = files(exported)
    assert set(listed) == set(held) - {"FILES.sha256", EXPORT_SIGNATURE, ".padconf-wrote"} and len(listed) > 10
    assert all(hashlib.sha256(held[name]).hexdigest() == digest for name, digest in listed.items())
    assert main(["export-onnx-tests", "--out", str(exported)]) == 0
    assert files(exported) == held


@pytest.mark.parametrize("edited", ["model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"])
def test_a_file_the_user_edited_in_an_export_is_kept_unless_forced(exported, capsys, edited):
    test = sorted(p for p in exported.iterdir() if p.is_dir())[0]
    (test / edited).write_bytes(b"the user's own bytes")
    before = files(exported)
    one_line_exit_2(main(["export-onnx-tests", "--out", str(exported)]), capsys, "changed since padconf wrote it",
                    "--force")
    assert files(exported) == before
    assert main(["export-onnx-tests", "--out", str(exported), "--force"]) == 0
    assert (test / edited).read_bytes() != b"the user's own bytes"


@pytest.mark.parametrize("forged", ["no signature", "made-up signature", "listing rewritten"])
def test_a_listing_not_signed_by_the_users_padconf_proves_no_edit_padconfs(exported, capsys, forged):
    test = sorted(p for p in exported.iterdir() if p.is_dir())[0]
    (test / "model.onnx").write_bytes(b"edited")
    listing = exported / "FILES.sha256"
    text = listing.read_text().replace(hashlib.sha256((test / "model.onnx").read_bytes()).hexdigest(), "")
    edited = "".join(f"{hashlib.sha256(b'edited').hexdigest()}  {line.split('  ', 1)[1]}\n"
                     if line.endswith(f"{test.name}/model.onnx") else line + "\n" for line in text.splitlines())
    listing.write_text(edited)  # claims the user's bytes as padconf's
    if forged == "no signature":
        (exported / EXPORT_SIGNATURE).unlink()
    elif forged == "made-up signature":
        (exported / EXPORT_SIGNATURE).write_text("0" * 64 + "\n")
    one_line_exit_2(main(["export-onnx-tests", "--out", str(exported)]), capsys, "changed since padconf wrote it")
    assert (test / "model.onnx").read_bytes() == b"edited"
