"""Instances of each class found by an attack round made by a session that had not seen the
fixes: each is one line and exit 2, or the right result, never exit 3 or a command that loses its
work."""
from __future__ import annotations

import base64
import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.core import escape
from padconf.core.writing import write_atomically

ROOT = Path(__file__).resolve().parents[2]


def test_a_backslash_in_text_is_no_escape_in_a_generated_docstring():
    for text in ("Pad(\\x) crashes", "Pad(\\N) crashes", 'Pad(""") crashes', "Pad(\\\\\"\"\") x"):
        source = f'"""{escape.docstring(text)}"""\n'
        assert compile(source, "repro.py", "exec") and eval(source) == text.replace('"""', "'''")


def test_a_lone_surrogate_is_shown_and_written_never_a_fault(tmp_path):
    assert "\\ud800" in escape.terminal("bad \ud800 text") and "\\udfff" in escape.markdown("d \udfff")
    write_atomically(tmp_path / "r.md", "bad \ud800 text")
    assert (tmp_path / "r.md").read_bytes() == b"bad \\ud800 text"


def test_packed_string_values_nested_too_deep_are_one_line(tmp_path, capsys):
    case = classify(Case("onnx/Pad-19", np.array(["a"], dtype=object), [1, 1], mode="constant"))
    doc = case.to_json()
    doc["data"] = {"dtype": "string", "shape": [1],
                   "z64": base64.b64encode(zlib.compress(b"[" * 100000 + b"]" * 100000)).decode()}
    (tmp_path / "case.json").write_text(json.dumps(doc))
    code = main(["minimize", str(tmp_path / "case.json"), "--runtime", "onnx-reference", "--out",
                 str(tmp_path / "m")])
    assert code == 2 and "nested more than" in capsys.readouterr().err


def test_argparses_messages_quote_argv_as_terminal_text(capsys):
    assert main(["run", "--ou\x1b]0;PWN\x07\x1b[31m\u202eZ", "R"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err and "\\x1b" in err


def test_a_command_whose_stdout_and_stderr_are_not_open_keeps_its_results(tmp_path):
    done = subprocess.run(f"{sys.executable} -m padconf.cli run --runtime onnx-reference --max-examples 1 "
                          f"--spec onnx/Pad-19 --out {tmp_path / 'R'} 1>&- 2>&-", shell=True, cwd=tmp_path,
                          timeout=600)
    assert done.returncode == 0
    assert (tmp_path / "R" / "summary.md").is_file() and (tmp_path / "R" / "results.jsonl").stat().st_size


def test_generate_removes_only_staging_folders_it_marked_as_its_own(tmp_path):
    mine = tmp_path / ".G.padconf-generate-mywork" / "nested"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("the user's")
    assert main(["generate", "--spec", "onnx/Pad-2", "--out", str(tmp_path / "G")]) == 0
    assert (mine / "notes.txt").read_text() == "the user's"
    assert ".padconf-generate-staging" not in {p.name for p in (tmp_path / "G").iterdir()}
