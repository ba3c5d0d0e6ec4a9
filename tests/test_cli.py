"""padconf never passes on nothing: every way of selecting no spec, no case or no runtime is one
line on stderr and exit 2; --specs-dir is honoured by every command, --resume included."""
import importlib.metadata
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from padconf.cli import main
from padconf.runner import read_jsonl
from padconf.specs import SPECS_DIR

FAKE = "tests.fake_adapters:"


def one_line_error(capsys, code, words):
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def specs_subset(tmp_path, ids):
    root = tmp_path / "specs"
    for spec_id in ids:
        (root / spec_id).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SPECS_DIR / f"{spec_id}.yaml", root / f"{spec_id}.yaml")
    return root


def test_the_shipped_specs_live_inside_the_package():
    assert SPECS_DIR == Path(__import__("padconf").__file__).parent / "specs"
    assert len(list(SPECS_DIR.glob("*/*.yaml"))) == 12 and (SPECS_DIR / "FORMAT.md").is_file()


@pytest.mark.parametrize("command", [["specs"], ["check"], ["run", "--runtime", FAKE + "CorrectAdapter"]])
@pytest.mark.parametrize("where,words", [("missing", "no such spec folder"), ("empty", "holds no spec file")])
def test_a_specs_dir_with_no_spec_is_an_error(tmp_path, capsys, command, where, words):
    folder = tmp_path / "specs"
    if where == "empty":
        folder.mkdir()
    args = ["--specs-dir", str(folder), *command] + (["--out", str(tmp_path / "r")] if command[0] == "run" else [])
    one_line_error(capsys, main(args), words)


@pytest.mark.parametrize("command", [["check"], ["run", "--runtime", FAKE + "CorrectAdapter", "--max-examples", "0"]])
def test_an_unknown_spec_id_is_an_error(tmp_path, capsys, command):
    args = [*command, "--spec", "onnx/Pad-99"] + (["--out", str(tmp_path / "r")] if command[0] == "run" else [])
    one_line_error(capsys, main(args), "unknown spec id 'onnx/Pad-99'")


def test_a_run_no_runtime_can_run_is_an_error(tmp_path, capsys):
    # OpenVINO's native adapter builds only openvino/* specs: nothing of onnx/Pad-19 is for it
    code = main(["run", "--runtime", "openvino", "--spec", "onnx/Pad-19", "--max-examples", "2",
                 "--out", str(tmp_path / "r")])
    one_line_error(capsys, code, "nothing to run: ")


def test_specs_dir_is_honoured_by_specs_check_run_and_resume(tmp_path, capsys):
    root = specs_subset(tmp_path, ["onnx/Pad-11", "onnx/Pad-13"])
    assert main(["--specs-dir", str(root), "specs"]) == 0
    assert f"2 spec files in {root}" in capsys.readouterr().out.replace("\n", "")
    assert main(["--specs-dir", str(root), "check"]) == 0
    assert "over 2 spec files" in capsys.readouterr().out
    out = tmp_path / "run"
    assert main(["--specs-dir", str(root), "run", "--runtime", FAKE + "SlowAdapter", "--max-examples", "3",
                 "--out", str(out)]) == 0
    assert {r["spec"] for r in read_jsonl(out / "cases.jsonl")} == {"onnx/Pad-11", "onnx/Pad-13"}
    assert json.loads((out / "run.json").read_text())["specs_dir"] == str(root)
    # resume draws again from the recorded folder, not the shipped one
    (out / "cases.jsonl").unlink()
    assert main(["--specs-dir", str(root), "run", "--resume", "--runtime", FAKE + "SlowAdapter", "--out", str(out)]) == 0
    assert {r["spec"] for r in read_jsonl(out / "cases.jsonl")} == {"onnx/Pad-11", "onnx/Pad-13"}


def test_version_names_padconf_and_the_runtimes_found(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("padconf ") and "onnx " in out and "numpy " in out
    for package in ("onnxruntime", "openvino", "tract"):  # each runtime package installed here
        if importlib.util.find_spec(package):
            assert f"{package} {importlib.metadata.version(package)}" in out
