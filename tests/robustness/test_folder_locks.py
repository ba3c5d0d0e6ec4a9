"""Every command that writes a folder holds a lock on it (``padconf.core.writing.FolderLock``):
a second process is refused in one line, never waits, never interleaves (docs/reliability.md)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from padconf.cli import main
from tests.robustness.test_hostile_inputs import one_line_exit_2


def hold(folder) -> subprocess.Popen:
    """Another padconf process holding ``folder``'s lock until its stdin closes."""
    code = textwrap.dedent(f"""
        import sys
        from padconf.core.writing import FolderLock
        with FolderLock({str(folder)!r}, exclusive=True):
            print("held", flush=True)
            sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_minimize_generate_and_export_refuse_a_folder_another_process_writes(tmp_path, capsys):
    for args, folder in ((["minimize", str(tmp_path / "none.jsonl"), "--runtime", "onnxruntime"], tmp_path / "m"),
                         (["generate", "--spec", "onnx/Pad-2"], tmp_path / "g"),
                         (["export-onnx-tests"], tmp_path / "e")):
        target = folder.parent if args[0] == "generate" else folder
        folder.mkdir()
        other = hold(target)
        try:
            one_line_exit_2(main([*args, "--out", str(folder)]), capsys, "another padconf process")
        finally:
            other.stdin.close()
            other.wait()
        assert not list(folder.iterdir())


def test_gate_and_baseline_refuse_a_work_folder_another_process_writes(tmp_path, capsys):
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("[]\n")
    runtime = "tests.fake_adapters:CorrectAdapter"
    for args in (["gate", "--runtime", runtime, "--baseline", str(baseline)], ["baseline", "--runtime", runtime],
                 ["baseline", "--runtime", runtime, "--prune", str(baseline)]):
        work = tmp_path / "work"
        work.mkdir()
        other = hold(work)
        try:
            one_line_exit_2(main([*args, "--spec", "onnx/Pad-19", "--work", str(work)]), capsys,
                            "another padconf process", "gate's work folder")
        finally:
            other.stdin.close()
            other.wait()
        assert not list(work.iterdir()) and baseline.read_text() == "[]\n"
        work.rmdir()


def test_minimize_of_every_runtime_of_a_run_refuses_a_folder_another_process_writes(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", "--runtime", "tests.fake_adapters:WrongValuesAdapter", "--spec", "onnx/Pad-19",
                 "--max-examples", "2", "--out", str(run)]) in (0, 1)
    out = tmp_path / "m"
    out.mkdir()
    other = hold(out)
    try:
        one_line_exit_2(main(["minimize", str(run), "--out", str(out), "--runtime",
                              "tests.fake_adapters:WrongValuesAdapter", "onnx-reference"]), capsys,
                        "another padconf process")
    finally:
        other.stdin.close()
        other.wait()
    assert not list(out.iterdir())
