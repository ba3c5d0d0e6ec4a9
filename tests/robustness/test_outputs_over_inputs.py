"""The one writer never replaces a file the command read (``padconf/core/inputs.py``): a report,
a JUnit file or a baseline named over the run, the baseline or a spec it comes from is one
line, exit 2, and the input keeps its bytes, whatever name the target gives it."""
from __future__ import annotations

import os
import stat

import pytest

from padconf.cli import main
from padconf.core import inputs
from padconf.core.errors import CaseError
from padconf.core.untrusted import read_bytes
from padconf.core.writing import FolderLock, open_to_append, write_atomically
from tests.robustness.test_hostile_inputs import one_line_exit_2

RUNTIME = "tests.fake_adapters:CorrectAdapter"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("over_inputs") / "run"
    assert main(["run", "--runtime", RUNTIME, "--spec", "onnx/Pad-19", "--max-examples", "2", "--out", str(out)]) == 0
    return out


def tree(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("flag", ["--md", "--html"])
@pytest.mark.parametrize("name", ["results.jsonl", "cases.jsonl", "run.json"])
@pytest.mark.parametrize("spelling", ["plain", "dotdot", "hard link"])
def test_a_report_named_over_one_of_its_run_files_is_one_line_and_keeps_it(run_dir, tmp_path, capsys, flag, name,
                                                                           spelling):
    before = tree(run_dir)
    target = {"plain": run_dir / name, "dotdot": run_dir / ".." / run_dir.name / name,
              "hard link": tmp_path / "report.out"}[spelling]
    if spelling == "hard link":
        os.link(run_dir / name, target)
    one_line_exit_2(main(["report", str(run_dir), flag, str(target)]), capsys, "one of this command's inputs")
    assert tree(run_dir) == before


@pytest.mark.parametrize("name", ["summary.md", "stats.json"])
def test_a_report_over_a_file_of_the_run_it_reads_is_one_line_and_keeps_it(run_dir, capsys, name):
    """A file of a folder the command reads whole, though it reads not that file, was replaced:
    ``gate --results s1 s2 --junit s1/stats.json`` lost the shard's stats.json (attack round I)."""
    before = tree(run_dir)
    assert name in before
    one_line_exit_2(main(["report", str(run_dir), "--md", str(run_dir / name)]), capsys,
                    "a folder this command reads")
    assert tree(run_dir) == before


@pytest.mark.parametrize("spelling", ["plain", "dotdot", "hard link"])
def test_a_report_whose_two_outputs_are_one_file_is_one_line_and_writes_neither(run_dir, tmp_path, capsys,
                                                                               spelling):
    """``report --html same.out --md same.out`` wrote the page, then replaced it with the
    markdown, exit 0 (attack round II)."""
    html = tmp_path / "same.out"
    md = {"plain": html, "dotdot": tmp_path / ".." / tmp_path.name / "same.out",
          "hard link": tmp_path / "md.out"}[spelling]
    html.write_text("kept")
    if spelling == "hard link":
        os.link(html, md)
    one_line_exit_2(main(["report", str(run_dir), "--html", str(html), "--md", str(md)]), capsys, "name one file")
    assert html.read_text() == "kept"


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_an_output_named_over_what_is_no_regular_file_is_one_line_and_keeps_it(run_dir, tmp_path, capsys, kind):
    """``gate --junit /dev/full`` replaced the device node with a regular file (attack round I): a
    device, a pipe, a socket or a folder is never replaced."""
    target = tmp_path / "out"
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    one_line_exit_2(main(["report", str(run_dir), "--md", str(target)]), capsys, "is not a regular file")
    assert (stat.S_ISFIFO if kind == "fifo" else stat.S_ISDIR)(os.lstat(target).st_mode)


def test_a_report_beside_its_run_files_is_written(run_dir, capsys):
    try:
        assert main(["report", str(run_dir), "--md", str(run_dir / "short.md"), "--html", str(run_dir / "r.html")]) == 0
        assert (run_dir / "short.md").stat().st_size and (run_dir / "r.html").stat().st_size
    finally:
        for name in ("short.md", "r.html"):
            (run_dir / name).unlink(missing_ok=True)


@pytest.mark.parametrize("spelling", ["plain", "hard link"])
def test_gate_junit_over_its_baseline_is_refused_before_the_gate_runs(tmp_path, capsys, spelling):
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("[]\n")
    target = baseline if spelling == "plain" else tmp_path / "junit.xml"
    if spelling == "hard link":
        os.link(baseline, target)
    one_line_exit_2(main(["gate", "--runtime", RUNTIME, "--baseline", str(baseline), "--spec", "onnx/Pad-19",
                          "--work", str(tmp_path / "work"), "--junit", str(target)]), capsys,
                    "one of this command's inputs")
    assert baseline.read_text() == "[]\n"
    assert not (tmp_path / "work").exists()  # refused before any case was drawn


def test_the_writer_refuses_what_the_command_read_unless_its_folder_is_the_commands_own(tmp_path):
    own, other = tmp_path / "own", tmp_path / "other"
    own.mkdir()
    other.mkdir()
    for folder in (own, other):
        (folder / "f").write_text("input\n")
    write_atomically(other / "f", "not read by any command: replaced\n")
    (other / "f").write_text("input\n")
    with inputs.command():
        read_bytes(other / "f", 100)
        read_bytes(own / "f", 100)
        with pytest.raises(CaseError, match="one of this command's inputs"):
            write_atomically(other / "f", "lost\n")
        with pytest.raises(CaseError, match="one of this command's inputs"):
            open_to_append(other / "f")
        os.symlink(other / "f", other / "link")  # a link is replaced, never written through: its target is kept
        write_atomically(other / "link", "the link's own file\n")
        with FolderLock(own, exclusive=True):  # a run directory its run reads and writes
            write_atomically(own / "f", "rewritten by its owner\n")
        write_atomically(other / "f", "pruned in place\n", replaces_input=True)
        assert (other / "f").read_text() == "pruned in place\n"
    assert (own / "f").read_text() == "rewritten by its owner\n"
    assert (other / "link").read_text() == "the link's own file\n" and not (other / "link").is_symlink()
    with inputs.command():  # the next command's inputs are its own
        write_atomically(other / "f", "a later command's output\n")
