"""Links planted in folders padconf writes or reads: a run directory's files, a gate's
work folder, a rewrite cut short by a full disk. padconf never writes, cuts or reads through a
link there: a victim elsewhere keeps its bytes, and a page never shows its text."""
import errno
import os
from pathlib import Path

import pytest

from padconf.cli import main
from padconf.core.writing import write_atomically

FAKE = "tests.fake_adapters:"
RUNTIME = FAKE + "CorrectAdapter"
VICTIM_TEXT = "someone else's file\n"


@pytest.fixture
def run_dir(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "--runtime", RUNTIME, "--spec", "onnx/Pad-19", "--max-examples", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    return path


def plant(link: Path, target: Path) -> None:
    link.unlink(missing_ok=True)
    link.symlink_to(target)


def resume(out):
    return main(["run", "--resume", "--runtime", RUNTIME, "--out", str(out)])


def test_a_results_file_that_is_a_link_is_neither_cut_nor_appended_to(run_dir, victim, capsys):
    victim.write_text(VICTIM_TEXT + "a torn last line")  # what --resume would cut back to its last newline
    plant(run_dir / "results.jsonl", victim)
    assert resume(run_dir) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert victim.read_text() == VICTIM_TEXT + "a torn last line"


@pytest.mark.parametrize("name", ["stats.json", "summary.md", "run.json", "controls.jsonl", "results.jsonl.torn"])
def test_resume_replaces_a_link_planted_among_its_outputs_and_never_writes_through_it(run_dir, victim, name):
    if name == "run.json":  # --resume reads it first: a link there is refused, the victim untouched
        plant(run_dir / name, victim)
        assert resume(run_dir) == 2
    else:
        (run_dir / "results.jsonl").write_text((run_dir / "results.jsonl").read_text() + '{"torn')
        plant(run_dir / name, victim)
        assert resume(run_dir) in (0, 2)
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.slow
def test_a_gate_work_folder_with_a_planted_run_json_keeps_the_victim(tmp_path, victim):
    work = tmp_path / ".padconf" / "gate" / "r"
    work.mkdir(parents=True)
    plant(work / "run.json", victim)
    plant(work / "gate.json", victim)
    baseline = tmp_path / "baseline.yaml"
    # a folder holding files padconf cannot prove it wrote (no mark signed with the user's key)
    assert main(["baseline", "--runtime", RUNTIME, "--spec", "onnx/Pad-19", "--work", str(work),
                 "--out", str(baseline)]) == 2
    assert victim.read_text() == VICTIM_TEXT


def test_a_report_never_shows_a_file_outside_the_run_directory(run_dir, tmp_path, victim, capsys):
    victim.write_text((run_dir / "results.jsonl").read_text().replace('"onnx/Pad-19"', '"SECRET-outside"'))
    plant(run_dir / "results.jsonl", victim)
    page = tmp_path / "r.html"
    assert main(["report", str(run_dir), "--html", str(page)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert not page.exists() or "SECRET-outside" not in page.read_text()


def test_a_rewrite_cut_short_by_a_full_disk_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    reviewed = tmp_path / "baseline.yaml"
    reviewed.write_text("reviewed entries\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        write_atomically(reviewed, "a new baseline\n" * 1000)
    assert reviewed.read_text() == "reviewed entries\n"
    assert os.listdir(tmp_path) == ["baseline.yaml"]  # no temporary file left behind


def test_a_rewrite_replaces_a_planted_link_and_leaves_its_target(tmp_path, victim):
    plant(tmp_path / "run.json", victim)
    plant(tmp_path / "run.json.tmp", victim)  # where a rewrite once put its temporary file
    write_atomically(tmp_path / "run.json", "{}")
    assert victim.read_text() == VICTIM_TEXT
    assert not (tmp_path / "run.json").is_symlink() and (tmp_path / "run.json").read_text() == "{}"


@pytest.mark.parametrize("option", ["--html", "--md"])
def test_a_report_written_where_a_checkout_committed_a_link_leaves_the_target(run_dir, tmp_path, victim, option):
    """``report --html/--md`` wrote through links committed in the checkout: a link at the file is
    replaced, its target untouched; a folder that is a link is refused in one line, exit 2."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    plant(checkout / "report.out", victim)
    html = [] if option == "--html" else ["--html", str(checkout / "r.html")]
    assert main(["report", str(run_dir), *html, option, str(checkout / "report.out")]) == 0
    assert victim.read_text() == VICTIM_TEXT and not (checkout / "report.out").is_symlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plant(checkout / "reports", elsewhere)
    assert main(["report", str(run_dir), *html, option, str(checkout / "reports" / "r.out")]) == 2
    assert not list(elsewhere.iterdir())


def test_gate_junit_written_where_a_link_was_planted_leaves_the_target(tmp_path, victim, capsys):
    baseline = tmp_path / "baseline.yaml"
    args = ["--runtime", RUNTIME, "--spec", "onnx/Pad-19", "--work", str(tmp_path / "work")]
    assert main(["baseline", *args, "--out", str(baseline)]) == 0
    plant(tmp_path / "junit.xml", victim)
    assert main(["gate", *args, "--baseline", str(baseline), "--junit", str(tmp_path / "junit.xml")]) == 0
    assert victim.read_text() == VICTIM_TEXT and "<testsuite" in (tmp_path / "junit.xml").read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plant(tmp_path / "ci", elsewhere)
    assert main(["gate", *args, "--baseline", str(baseline), "--junit", str(tmp_path / "ci" / "junit.xml")]) == 2
    assert not list(elsewhere.iterdir())
    assert "a symbolic link" in capsys.readouterr().err


def test_a_results_file_that_is_a_hard_link_is_not_appended_to(run_dir, tmp_path, capsys):
    """An unfinished run whose results.jsonl is a hard link to a user's file elsewhere: --resume
    appended its rows to that file (attack round F's c3_resume_hardlinked_results)."""
    import json
    rows = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text("".join(rows[:-3]))  # the run cut short, its last rows to come
    (run_dir / "results.jsonl").unlink()
    os.link(theirs, run_dir / "results.jsonl")
    doc = json.loads((run_dir / "run.json").read_text())
    doc.pop("results")
    (run_dir / "run.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert resume(run_dir) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hard link" in err, err
    assert theirs.read_text() == "".join(rows[:-3])


@pytest.mark.parametrize("target", ["/dev/null", "fifo", "folder", "/proc/self/fd/1"])
def test_an_output_that_links_to_a_stream_is_one_line_and_the_link_stays(tmp_path, capsys, target):
    """`report --html /dev/stdout` as root replaced the system's /dev/stdout link with a regular
    file, exit 0, even with stdout a regular file (attack round III): a link to a stream, or to
    anything but a regular file, is neither written through nor replaced, and no file is written
    in /dev, /proc or /sys."""
    from padconf.core.errors import CaseError
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    elif target == "folder":
        (tmp_path / "folder").mkdir()
    pointed = target if target.startswith("/") else str(tmp_path / target)
    link = tmp_path / "out.html"
    link.symlink_to(pointed)
    with pytest.raises(CaseError, match="is a link to a device, a stream, a pipe, a socket or a folder"):
        write_atomically(link, "x")
    assert link.is_symlink() and os.readlink(link) == pointed
    with pytest.raises(CaseError, match="in a folder of devices and streams"):
        write_atomically("/dev/padconf-test-output", "x")
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(tmp_path / "nowhere")
    write_atomically(dangling, "x")  # a link to nothing: replaced, as before
    assert not dangling.is_symlink() and dangling.read_text() == "x"
