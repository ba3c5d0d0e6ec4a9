"""Issue 50's writes and streams, closed as classes (docs/reliability.md). Every folder padconf
writes into is opened through one check (``padconf.core.writing.open_folder``: no link anywhere
below the working directory), and a folder a command fills (a run directory, a gate's work
folder, exported tests) is claimed (``claim_folder``): absent, empty or marked by this user's
padconf, else one line, exit 2, its files kept, unless --force. A stream that fails for any
reason is dropped, and the command keeps its own exit code. Every text reaching RE2 or the
JUnit writer may hold a lone surrogate. The instances here are new ones, beside the attack
round's (attack_A: run_out_userdir, export_userdir, the .padconf and .padconf/examples links,
stderr_full, stdout_full, surrogate_text)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from padconf.cli import main
from padconf.core.errors import CaseError
from padconf.core.streams import ClosableStream
from padconf.core.writing import MARK, claim_folder, make_folder, open_folder, write_atomically
from tests.robustness.test_hostile_inputs import one_line_exit_2

PADCONF = str(Path(sys.executable).with_name("padconf"))
RUNTIME = "tests.fake_adapters:CorrectAdapter"
RUN = ["run", "--runtime", RUNTIME, "--spec", "onnx/Pad-19", "--max-examples", "2"]


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A working directory (a checkout) and a folder outside it."""
    inside, outside = tmp_path / "checkout", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    monkeypatch.chdir(inside)
    return inside, outside


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# --- the one folder check: links anywhere below the working directory --------------------------

@pytest.mark.parametrize("depth", [0, 1, 2])
def test_a_link_anywhere_on_the_path_below_the_working_directory_is_refused(checkout, depth):
    inside, outside = checkout
    names = ["a", "b", "c"]
    real = inside.joinpath(*names[:depth]) if depth else inside
    real.mkdir(parents=True, exist_ok=True)
    (real / "linked").symlink_to(outside)
    target = Path(*names[:depth], "linked", "deeper", "x.json")
    with pytest.raises(CaseError, match="symbolic link"):
        make_folder(target.parent)
    with pytest.raises(CaseError, match="symbolic link"):
        write_atomically(target, "{}")
    assert list(outside.iterdir()) == []


def test_a_file_where_a_folder_goes_is_one_line_and_a_folder_outside_is_made_link_free(checkout, tmp_path):
    inside, _ = checkout
    (inside / "plain").write_text("a file")
    with pytest.raises(CaseError, match="not a folder"):
        open_folder("plain/sub", create=True)
    far = tmp_path / "elsewhere" / "new" / "deeper"
    os.close(open_folder(far, create=True))
    assert far.is_dir()
    (tmp_path / "elsewhere" / "lnk").symlink_to(inside)
    with pytest.raises(CaseError, match="symbolic link"):
        open_folder(tmp_path / "elsewhere" / "lnk", create=True)  # the folder named itself


# --- a folder padconf fills: only one it can prove it claimed ---------------------------------

def test_a_mark_proves_only_its_own_folder(checkout):
    inside, _ = checkout
    mine = claim_folder(inside / "mine")
    (mine / "file.txt").write_text("padconf's")
    claim_folder(mine)  # marked: taken again
    users = inside / "users"
    users.mkdir()
    (users / "stats.json").write_text("the user's")
    (users / MARK).write_bytes((mine / MARK).read_bytes())  # a genuine mark, copied
    with pytest.raises(Exception, match="cannot prove it wrote"):
        claim_folder(users)
    (users / MARK).write_text("padconf wrote this folder; its signature, under this user's key:\n" + "0" * 64 + "\n")
    with pytest.raises(Exception, match="cannot prove it wrote"):
        claim_folder(users)
    assert (users / "stats.json").read_text() == "the user's"
    claim_folder(users, force=True)


@pytest.mark.parametrize("users_file", ["notes/README.md", "stats.json", "results.md", ".hidden"])
def test_run_out_on_a_users_folder_keeps_every_file(checkout, capsys, users_file):
    inside, _ = checkout
    out = inside / "results"
    (out / users_file).parent.mkdir(parents=True, exist_ok=True)
    (out / users_file).write_text("the user's own")
    one_line_exit_2(main([*RUN, "--out", "results"]), capsys, "cannot prove it wrote", "--force")
    assert tree(out) == {users_file: b"the user's own"}
    assert main([*RUN, "--out", "results", "--force"]) == 0
    assert (out / "results.jsonl").is_file() and (out / MARK).is_file()


def test_a_run_directory_padconf_made_is_its_own_again(checkout):
    assert main([*RUN, "--out", "r"]) == 0
    assert main([*RUN, "--out", "r", "--force"]) == 0  # its mark: no refusal beside the run's own
    assert main([*RUN, "--out", "r/nested"]) == 0  # a new folder inside one padconf claimed


def test_a_gate_work_folder_holding_a_users_files_is_refused(checkout, capsys, tmp_path):
    inside, _ = checkout
    work = inside / "w"
    work.mkdir()
    (work / "summary.md").write_text("the user's")
    baseline = tmp_path / "b.yaml"
    one_line_exit_2(main(["baseline", "--runtime", RUNTIME, "--spec", "onnx/Pad-19", "--work", "w",
                          "--out", str(baseline)]), capsys, "cannot prove it wrote", "--work")
    assert tree(work) == {"summary.md": b"the user's"} and not baseline.exists()


def test_a_committed_padconf_folder_of_links_below_the_gate_is_refused(checkout, capsys, tmp_path):
    """Attack round A linked .padconf itself; here it is a real folder whose ``gate`` is the link."""
    inside, outside = checkout
    (inside / ".padconf").mkdir()
    (inside / ".padconf" / "baseline").symlink_to(outside)
    one_line_exit_2(main(["baseline", "--runtime", RUNTIME, "--spec", "onnx/Pad-19",
                          "--out", str(tmp_path / "b.yaml")]), capsys, "symbolic link")
    assert list(outside.iterdir()) == []


def test_the_example_database_below_a_link_is_refused(checkout):
    from padconf.gate.explore import example_database
    inside, outside = checkout
    (inside / "ci").symlink_to(outside)
    with pytest.raises(CaseError, match="symbolic link"):
        example_database("ci/examples")
    assert list(outside.iterdir()) == []


@pytest.mark.slow
def test_export_onnx_tests_keeps_a_users_files_and_writes_through_no_link_inside(checkout, capsys):
    inside, outside = checkout
    assert main(["export-onnx-tests", "--out", "t"]) == 0
    written = sorted(p.name for p in (inside / "t").iterdir() if p.is_dir())
    capsys.readouterr()
    os.rename(inside / "t" / written[0], outside / "moved")  # a test's folder becomes a link outside
    (inside / "t" / written[0]).symlink_to(outside / "moved")
    one_line_exit_2(main(["export-onnx-tests", "--out", "t"]), capsys, "symbolic link")
    users = inside / "u"
    (users / written[1]).mkdir(parents=True)
    (users / written[1] / "model.onnx").write_bytes(b"the user's model")
    one_line_exit_2(main(["export-onnx-tests", "--out", "u"]), capsys, "cannot prove it wrote")
    assert tree(users) == {f"{written[1]}/model.onnx": b"the user's model"}


# --- streams: any failure dropped, the command's own code ---------------------------------------

class _Failing:
    """A stream whose every write fails with ``errno``."""

    def __init__(self, code):
        self.code = code

    def write(self, text):
        raise OSError(self.code, os.strerror(self.code))

    flush = write

    def fileno(self):
        raise ValueError("no descriptor")


@pytest.mark.parametrize("code", [5, 28, 122])  # EIO (a terminal gone), ENOSPC, EDQUOT
def test_a_stream_failing_for_any_reason_is_dropped(code):
    stream = ClosableStream(_Failing(code))
    assert stream.write("lost line\n") == len("lost line\n")
    stream.flush()
    assert stream.closed_by_reader


def _shell(command: str, cwd: Path) -> int:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, timeout=300).returncode


@pytest.mark.slow
def test_stdout_and_stderr_on_a_full_device_keep_results_and_exit_codes(tmp_path):
    onnx_ref = ["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-2", "--max-examples", "2"]
    assert _shell(f"{PADCONF} {' '.join(onnx_ref)} --out r >/dev/full 2>/dev/full", tmp_path) == 0
    rows = (tmp_path / "r" / "results.jsonl").read_text().splitlines()
    assert json.loads((tmp_path / "r" / "run.json").read_text())["results"] == {"onnx-reference": len(rows)}
    assert rows
    for bad in ("report nowhere --md x.md", "gate --runtime onnx-reference --baseline missing.yaml",
                "run --runtime onnx-reference --spec onnx/Pad-404", "minimize nowhere:case"):
        for redirect in ("2>/dev/full", ">/dev/full 2>/dev/full"):
            assert _shell(f"{PADCONF} {bad} {redirect}", tmp_path) == 2, (bad, redirect)
    assert _shell(f"{PADCONF} report r --html p.html >/dev/full 2>/dev/full", tmp_path) == 0
    assert (tmp_path / "p.html").is_file()


# --- any str through RE2 and the JUnit writer ---------------------------------------------------

@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udc80\x00\x1b]8;;x\x07", "ok \ud83d end"])
def test_a_baseline_pattern_and_a_rows_text_may_hold_lone_surrogates(text):
    from padconf.gate.baseline import compiled
    assert compiled("boom").search(f"x{text}boom") is not None
    assert compiled(f".*{text}.*").fullmatch(f"a{text}b") is not None
    assert compiled("^$").search(text) is None


def test_junit_takes_lone_surrogates_in_every_field_and_parses(tmp_path):
    from padconf.gate.compare import Judgement
    from padconf.gate.junit import junit_xml
    row = {"spec": "onnx/Pad-19\ud800", "mode": "constant", "dtype": "float32", "placement": "inputs",
           "case_id": "c\udfff]]>", "verdict": "crash", "error": "bad \ud800 <x/>", "shape": [1], "pads": [0, 0],
           "runtime": "r", "seconds": 0.1}
    judgement = Judgement(runtime="r\udc00", rows=[row], new=[row], known=[], fixed=[])
    path = tmp_path / "j.xml"
    write_atomically(path, junit_xml(judgement))
    suite = ElementTree.parse(path).getroot()
    assert suite.get("failures") == "1" and "\\ud800" in suite.find("testcase/failure").get("message")


@pytest.mark.parametrize("bound", [1 << 20, 120_000])
def test_a_loud_runtime_never_makes_a_run_padconf_cannot_read_back(tmp_path, capsys, monkeypatch, bound):
    """A runtime answering 40 KB of error a case wrote 149 MB of rows: every row within its own
    bound, the file past the 128 MB padconf reads, which report and --resume then refused
    (attack round IV). Past half the bound a row keeps less of its texts, saying so (elided); a
    row the bound cannot hold stops the run, one line, exit 2, with what it wrote readable."""
    import padconf.run.rundir as rundir
    monkeypatch.setattr(rundir, "MAX_JSONL_BYTES", bound)  # the whole bound, in small
    out = tmp_path / "r"
    capsys.readouterr()
    code = main(["run", "--runtime", "tests.fake_adapters:LoudAdapter", "--spec", "onnx/Pad-19", "--max-examples",
                 "20", "--out", str(out)])
    err = capsys.readouterr().err
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert (out / "results.jsonl").stat().st_size <= bound
    if bound == 1 << 20:
        assert code == 0, err
        assert rows[0]["elided"]["error"] > 40_000 and len(rows[0]["error"]) == 1 << 14
        assert rows[-1]["elided"]["error"] > 40_000 and len(rows[-1]["error"]) == rundir.MAX_ROW_TEXT_PAST_HALF
    else:
        assert code == 2 and err.count("\n") == 1 and "its rows reach the 120000 bytes padconf reads back" in err, err
    assert main(["report", str(out), "--md", str(tmp_path / "r.md")]) == 0
