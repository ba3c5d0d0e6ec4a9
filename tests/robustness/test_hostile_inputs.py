"""Files padconf did not write: test folders, users' models, baselines, run
directories and spec folders, built the way an attacker would. Each is one line on stderr and
exit 2 (or the correct result); nothing is read or run from outside the folder padconf was
given, and padconf stays bounded in memory and time (docs/reliability.md)."""
import base64
import contextlib
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from padconf.adapters import get_adapter
from padconf.cli import main
from padconf.core.dtypes import decode_array
from padconf.core.errors import CaseError, PadconfError
from padconf.execution.worker import Worker
from padconf.gate.baseline import parse_baseline
from padconf.minimize.model_cut import UserModel
from padconf.report.report import short_markdown
from padconf.spec.loader import SPECS_DIR, load_specs
from padconf.suite.folders import case_dirs, load_tensor, read_cases

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
SPECS = load_specs()
FAKE = "tests.fake_adapters:"
GiB = 1 << 30


def one_line_exit_2(code, capsys, *words):
    """The command refused in one line on stderr, exit 2, naming ``words``; returns the line."""
    err = capsys.readouterr().err
    assert code == 2, err[-3000:]
    assert len(err.strip().splitlines()) == 1, err[-3000:]
    for word in words:
        assert word in err, err
    return err


def padconf_cli(args, cwd, memory=None, timeout=60):
    """``padconf ARGS`` as a process of its own (address space capped at ``memory`` bytes):
    (exit code, stderr, stdout). A command that does not end within ``timeout`` seconds (a hang) is
    killed and its code is None."""
    def cap():
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        proc = subprocess.run([sys.executable, "-m", "padconf.cli", *args], cwd=cwd, preexec_fn=cap,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "hang", ""
    return proc.returncode, proc.stderr, proc.stdout


def assert_one_line_exit_2(result, *words):
    code, err, _ = result
    assert code == 2, err[-3000:]
    assert len(err.strip().splitlines()) == 1, err[-3000:]
    for word in words:
        assert word in err, err


def pad_model(where: Path, data: np.ndarray, pads, pads_dtype=TensorProto.INT64, initializers=()):
    """A one-node Pad-19 test folder: data fed from test_data_set_0/input_0.pb, pads a constant."""
    (where / "test_data_set_0").mkdir(parents=True)
    nodes = [helper.make_node("Pad", ["data", "pads"], ["out"], mode="constant")]
    inits = [helper.make_tensor("pads", pads_dtype, [len(pads)], pads), *initializers]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, list(data.shape))],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (where / "model.onnx").write_bytes(model.SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(numpy_helper.from_array(data, "data").SerializeToString())
    return model


def external_tensor(name: str, dims, location: str) -> TensorProto:
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location
    return tensor


# ---------------------------------------------------------------- 1, 2: files outside the folder given


def test_a_model_bin_linked_outside_the_case_folder_is_refused(tmp_path):
    source = sorted((GENERATED / "openvino").glob("test_ovpad12_constant_float_basic_*"))[0]
    where = tmp_path / "cases" / source.name
    shutil.copytree(source, where)
    secret = tmp_path / "secret.bin"  # outside the folder padconf is given; here a valid weights file
    shutil.move(where / "model.bin", secret)
    (where / "model.bin").symlink_to(secret)
    with pytest.raises(CaseError, match="model.bin: leads outside"):
        read_cases([tmp_path / "cases"], SPECS)
    (where / "model.bin").unlink()
    shutil.copy(secret, where / "model.bin")  # the same weights inside: read as before
    assert len(read_cases([tmp_path / "cases"], SPECS)) == 1


def test_external_data_is_read_beside_its_tensor_and_never_from_the_working_directory(tmp_path, monkeypatch):
    where = tmp_path / "cases" / "test_external"
    pad_model(where, np.zeros(3, np.float32), [1, 1])
    tensor = external_tensor("data", [3], "data.bin")
    (where / "test_data_set_0" / "input_0.pb").write_bytes(tensor.SerializeToString())
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "data.bin").write_bytes(np.array([7, 8, 9], np.float32).tobytes())  # "a credential"
    monkeypatch.chdir(cwd)
    with pytest.raises(CaseError, match="external data 'data.bin'"):
        read_cases([tmp_path / "cases"], SPECS)
    (where / "test_data_set_0" / "data.bin").write_bytes(np.array([1, 2, 3], np.float32).tobytes())
    (case,) = read_cases([tmp_path / "cases"], SPECS)
    assert case.data.tolist() == [1, 2, 3]


@pytest.mark.parametrize("location", ["../../../outside.bin", "/etc/passwd", "link.bin"])
def test_external_data_leaving_the_folder_is_one_line(tmp_path, capsys, location):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 12)
    where = tmp_path / "cases" / "test_external"
    pad_model(where, np.zeros(3, np.float32), [1, 1])
    (where / "test_data_set_0" / "link.bin").symlink_to(tmp_path / "outside.bin")
    (where / "test_data_set_0" / "input_0.pb").write_bytes(external_tensor("data", [3], location).SerializeToString())
    code = main(["run", "--cases", str(tmp_path / "cases"), "--runtime", "onnx-reference",
                 "--out", str(tmp_path / "run")])
    one_line_exit_2(code, capsys, "input_0.pb")


# ---------------------------------------------------------------- 3, 4: code from the working directory or a run folder


def test_workers_import_nothing_from_the_working_directory(tmp_path, monkeypatch):
    marker = tmp_path / "imported"
    (tmp_path / "onnxruntime.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    worker = Worker("onnxruntime")
    try:
        about = worker.describe([("onnx/Pad-19", "float")])
    finally:
        worker.close()
    assert not marker.exists()
    assert about["unavailable"] is None and about["version"]  # the installed onnxruntime


@pytest.mark.slow
def test_a_module_class_of_the_working_directory_runs_only_when_pythonpath_names_it(tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text("from tests.fake_adapters import ConformingAdapter as Mine\n")
    args = ["run", "--runtime", "mine:Mine", "--spec", "onnx/Pad-19", "--max-examples", "0", "--out"]
    code, err, _ = padconf_cli([*args, "run1"], tmp_path)
    assert code == 2 and "runtime mine:Mine unavailable" in err and "No module named 'mine'" in err, err
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", str(ROOT)]))  # the user's explicit choice
    code, err, _ = padconf_cli([*args, "run2"], tmp_path)
    assert code == 0, err


def test_resume_imports_a_module_class_from_run_json_only_when_named_again(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    marker = tmp_path / "imported"
    (run / "payload.py").write_text(f"open({str(marker)!r}, 'w').close()\nclass Adapter: pass\n")
    (run / "run.json").write_text(json.dumps({"runtimes": ["payload:Adapter"], "specs": ["onnx/Pad-19"],
                                              "max_examples": 0}))
    monkeypatch.chdir(run)
    code = main(["run", "--resume", "--out", "."])
    one_line_exit_2(code, capsys, "run.json", "'payload:Adapter'", "name it again: --runtime payload:Adapter")
    assert not marker.exists()


def test_a_spec_folder_named_by_run_json_is_read_only_when_named_again(tmp_path, capsys):
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "onnx").mkdir(parents=True)
    (elsewhere / "onnx" / "Pad-19.yaml").write_text("id: hunter2\n")  # a config file of the victim's, say
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, "specs_dir": str(elsewhere)}))
    err = one_line_exit_2(main(["report", str(run), "--html", str(tmp_path / "r.html")]), capsys, "run.json",
                          f"--specs-dir {elsewhere}")
    assert "hunter2" not in err
    (run / "cases.jsonl").unlink()  # so that --resume draws the cases again, from the spec folder,
    (run / "results.jsonl").write_text("")  # as a run stopped before its first case (rows need their cases)
    err = one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "run.json", f"--specs-dir {elsewhere}")
    assert "hunter2" not in err
    assert main(["--specs-dir", str(SPECS_DIR), "run", "--resume", "--out", str(run)]) == 2
    assert "--specs-dir" in capsys.readouterr().err  # the folder named must be the one recorded


def test_a_runtime_named_module_callable_must_be_an_adapter_class():
    with pytest.raises(PadconfError, match="not a padconf Adapter class"):
        get_adapter("tempfile:mkdtemp")


# ---------------------------------------------------------------- 5: bombs, devices and FIFOs


def bomb(inflated: int) -> str:
    packer, chunk, parts = zlib.compressobj(9), b"\0" * (1 << 24), []
    for _ in range(inflated // len(chunk)):
        parts.append(packer.compress(chunk))
    return base64.b64encode(b"".join(parts) + packer.flush()).decode()


@pytest.mark.slow
def test_an_encoded_array_is_checked_before_it_is_inflated():
    z64 = bomb(GiB // 2)
    tracemalloc.start()
    try:
        for shape in ([4], [0], [GiB]):
            with pytest.raises(CaseError):
                decode_array({"dtype": "float", "shape": shape, "z64": z64})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20  # the bomb holds 512 MiB


def identified(doc: dict, classified: bool = True) -> dict:
    """``doc`` as padconf writes a case: under its content's id (a case a test edits is another
    case, and a case under another id is refused) and, where ``classified``, as the reference
    classifies it (a case read back is classified again, and one labelled otherwise is refused)."""
    from padconf.cases.case import Case
    from padconf.cases.classify import classify
    case = Case.from_json({**doc, "id": None})
    return classify(case).to_json() if classified else {**doc, "id": case.id}


def signed_again(*run_dirs: Path) -> None:
    """Each of ``run_dirs`` signed as it now is (run.sig): the forgery of one who holds the key
    (a CI secret leaked), against whom every check behind the signature must still hold."""
    from padconf.run.rundir import SIGNED
    from padconf.run.signature import sign
    for run_dir in run_dirs:
        assert sign(Path(run_dir), SIGNED) is None


def run_dir_with(tmp_path: Path, data: dict, row: dict | None = None) -> Path:
    """A run directory of one failing case whose data is ``data``."""
    run = tmp_path / "run"
    run.mkdir()
    case = {"id": "onnx/Pad-19:constant:float:000000000000", "spec": "onnx/Pad-19", "data": data, "pads": [1, 1],
            "mode": "constant", "kind": "defined", "expected": None}
    try:  # where the data decodes at all (a bomb's does not)
        case = identified(case)
    except (CaseError, ValueError, TypeError, KeyError, MemoryError):
        pass
    (run / "cases.jsonl").write_text(json.dumps(case) + "\n")
    # a failure on no output (rows are held to their case, and a mismatch to the output it records)
    # of the runtime run.json names: a row of another is refused
    row = {"runtime": "onnx-reference", "placement": "inputs", "spec": "onnx/Pad-19", "mode": "constant",
           "dtype": "float", "shape": data.get("shape", [4]), "pads": [1, 1], "verdict": "not-implemented",
           "case_id": case["id"], "origin": "generated", "kind": "defined", "reason": None, "error": "no kernel",
           "detail": None, "matched": None, "output": None, **(row or {})}
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    (run / "run.json").write_text(json.dumps({"runtimes": ["onnx-reference"], "specs": ["onnx/Pad-19"],
                                              "max_examples": 0, "memory_mb": 1024, "case_count": 1}))
    return run


def test_a_run_directorys_case_of_the_wrong_types_is_one_line_naming_its_line(tmp_path, capsys):
    """cases.jsonl is held to the case's types and bounds as it is read, each line named: a case
    with 2 million tags (a 20 MB line) took report --html 1.2 GB (attack round F)."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    case = json.loads((run / "cases.jsonl").read_text())
    for tags in ([f"t{i}" for i in range(65)], ["x" * 201]):
        (run / "cases.jsonl").write_text(json.dumps({**case, "tags": tags}) + "\n")
        one_line_exit_2(main(["report", str(run), "--html", str(tmp_path / "r.html")]), capsys,
                        "cases.jsonl:1: malformed case: tags", "is not a list of text")


@pytest.mark.slow
def test_a_zlib_bomb_in_a_run_directory_is_one_line_for_report_and_resume(tmp_path):
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [4], "z64": bomb(2 * GiB)})
    for args in (["report", str(run), "--html", str(tmp_path / "r.html")],
                 ["run", "--resume", "--out", str(run)]):
        assert_one_line_exit_2(padconf_cli(args, tmp_path, memory=(3 * GiB) // 2), "cases.jsonl", "z64")


def test_many_arrays_each_under_the_bound_are_bounded_together(tmp_path, capsys, monkeypatch):
    import padconf.cases.case
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [64], "b64": base64.b64encode(bytes(256)).decode()})
    monkeypatch.setattr(padconf.cases.case, "MAX_CASES_BYTES", 100)
    one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "cases.jsonl", "more than 100 bytes")


@pytest.mark.parametrize("what", ["baseline", "results", "spec"])
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_where_a_file_belongs_is_one_line(tmp_path, what, kind):
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    (gate_dir / "gate.json").write_text(json.dumps({"runtime": "rt", "spec_ids": ["onnx/Pad-19"], "shard": None,
                                                    "seed": 0, "explore": 0,
                                                    "run_id": os.environ["PADCONF_GATE_RUN_ID"]}))
    (gate_dir / "results.jsonl").write_text("")
    (tmp_path / "baseline.yaml").write_text("[]\n")
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "padconf" / "spec" / "documents", specs)
    target = {"baseline": tmp_path / "baseline.yaml", "results": gate_dir / "results.jsonl",
              "spec": specs / "onnx" / "Pad-19.yaml"}[what]
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(kind)
    # gate --results reads the baseline and the results (of a shard signed as it is: the reader
    # holds behind the signature); the spec folder is read by check
    signed_again(gate_dir)
    args = ["check"] if what == "spec" else ["gate", "--runtime", "rt", "--baseline", str(tmp_path / "baseline.yaml"),
                                             "--spec", "onnx/Pad-19", "--results", str(gate_dir)]
    result = padconf_cli(["--specs-dir", str(specs), *args], tmp_path, memory=2 * GiB, timeout=30)
    # a spec folder's or a run directory's files must be its own, first
    linked_out = {"spec": "leads outside", "results": "a symbolic link"}.get(what) if kind == "/dev/zero" else None
    assert_one_line_exit_2(result, target.name, linked_out or "not a regular file")


# ---------------------------------------------------------------- 6: baseline patterns


def test_a_baseline_pattern_matches_in_linear_time(tmp_path):
    """``(a+)+$`` against forty a's and a "!" backtracks for ever in Python's re; the entry judges
    the row in a child process that is given 60 s, and answers that it does not match."""
    row = {"runtime": "rt", "placement": "inputs", "spec": "onnx/Pad-19", "mode": "constant", "dtype": "float",
           "verdict": "crash", "case_id": "c", "origin": "generated", "error": "a" * 40 + "!"}
    baseline = ("- {runtime: rt, verdict: crash, error: '(a+)+$', why: backtracks, "
                "cells: ['onnx/Pad-19 constant float inputs']}\n")
    code = ("import json, sys; from padconf.gate.baseline import parse_baseline; "
            f"print(parse_baseline({baseline!r})[0].matches(json.loads(sys.argv[1])))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(row)], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.stdout.strip() == "False", done.stderr  # judged (not forgiven), and not hung


def test_a_pattern_re2_cannot_run_is_refused_when_the_baseline_is_read():
    with pytest.raises(CaseError, match=r"b.yaml:1: error: not a regular expression RE2 accepts"):
        parse_baseline("- {runtime: rt, verdict: crash, error: '(a)\\1', why: backreference, "
                       "cells: ['onnx/Pad-19 constant float inputs']}\n", "b.yaml")


# ---------------------------------------------------------------- 7: extends


def test_extends_outside_the_spec_folder_is_refused_unread(tmp_path, capsys):
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "padconf" / "spec" / "documents", specs)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "leak.yaml").write_text("secret_key: hunter2\n")
    text = (specs / "onnx" / "Pad-19.yaml").read_text()
    (specs / "onnx" / "Pad-19.yaml").write_text("extends: ../outside/leak\n" + text.replace("extends:", "x-extends:"))
    err = one_line_exit_2(main(["--specs-dir", str(specs), "specs"]), capsys, "Pad-19.yaml", "extends", "not a spec id")
    assert "secret" not in err and "hunter2" not in err
    (specs / "onnx" / "Pad-19.yaml").unlink()
    (specs / "onnx" / "Pad-19.yaml").symlink_to(tmp_path / "outside" / "leak.yaml")
    err = one_line_exit_2(main(["--specs-dir", str(specs), "specs"]), capsys, "Pad-19.yaml", "leads outside")
    assert "secret" not in err and "hunter2" not in err


# ---------------------------------------------------------------- 8, 9: text is data, never markup


@pytest.mark.slow
def test_markup_and_escapes_in_runtime_text_and_paths_are_shown_as_text(tmp_path, capsys):
    source = sorted((GENERATED / "onnx").glob("test_pad19_constant_float_basic_*"))[0]
    cases = tmp_path / "cases[/red]\x1b[2J"
    shutil.copytree(source, cases / source.name)
    out = tmp_path / "run[/]"
    args = ["run", "--cases", str(cases), "--runtime", FAKE + "HostileTextAdapter", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "[/red]" in printed
    summary = (out / "summary.md").read_text()
    assert "<img" not in summary and "\x1b" not in summary
    assert "&lt;img src=x onerror=alert(x)&gt; \\| \\`x\\` \\[link\\](javascript:void)" in summary
    resume = ["run", "--resume", "--cases", str(cases), "--runtime", FAKE + "HostileTextAdapter", "--out", str(out)]
    assert main(resume) == 0
    assert main(["report", str(out), "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]) == 0
    assert "<img" not in (tmp_path / "r.html").read_text() and "<img" not in (tmp_path / "r.md").read_text()


def test_runtime_names_are_escaped_in_the_pr_comment():
    row = {"runtime": "<img src=x onerror=alert(1)>", "verdict": "crash", "spec": "onnx/Pad-19", "mode": "constant",
           "dtype": "float", "error": "x", "detail": None, "origin": "generated", "case_id": "1", "reason": None,
           "matched": None, "placement": "inputs"}
    md = short_markdown([row], "r.html")
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md


# ---------------------------------------------------------------- 10: generate


@pytest.mark.slow
def test_a_killed_generate_leaves_the_previous_output_whole_and_nothing_to_read(tmp_path):
    out = tmp_path / "out"
    args = ["generate", "--out", str(out), "--spec", "onnx/Pad-2"]
    assert padconf_cli(args, tmp_path, timeout=300)[0] == 0
    before = files_of(out)
    dirs_before = case_dirs(tmp_path)
    killer = ("import os, signal, sys, padconf.generate.writer as t, padconf.cli as cli\n"
              "written = t.write_onnx\n"
              "def write(*a):\n"
              "    written(*a)\n"
              "    os.kill(os.getpid(), signal.SIGKILL)\n"
              "t.write_onnx = write\n"
              "cli.main(sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-c", killer, *args], cwd=tmp_path, capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    assert files_of(out) == before
    assert case_dirs(tmp_path) == dirs_before  # the staging left beside is not read


@pytest.mark.slow
def test_an_interrupt_while_generate_swaps_its_output_in_leaves_one_whole_output(tmp_path, monkeypatch):
    import padconf.generate.writer as testdata
    spec = [s for s in SPECS if s.id == "onnx/Pad-2"]
    testdata.generate(tmp_path / "ref", spec)
    new = files_of(tmp_path / "ref")
    out = tmp_path / "out"
    testdata.generate(out, [s for s in SPECS if s.id == "onnx/Pad-1"])  # a previous output generate wrote
    old = files_of(out)
    removing = shutil.rmtree

    def interrupted(path, *args, **kwargs):  # Ctrl-C as soon as the first folder is removed
        removing(path, *args, **kwargs)
        raise KeyboardInterrupt
    monkeypatch.setattr(shutil, "rmtree", interrupted)
    with pytest.raises(KeyboardInterrupt):
        testdata.generate(out, spec)
    assert files_of(out) in (old, new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "ref"]


def files_of(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_generate_refuses_a_folder_holding_files_it_did_not_write(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    one_line_exit_2(main(["generate", "--out", str(tmp_path), "--spec", "onnx/Pad-2"]), capsys, "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "mine"


# ---------------------------------------------------------------- 11, 12: one line, never a traceback


def test_onnx_tensors_that_lie_about_themselves_are_one_line(tmp_path):
    where = tmp_path / "m"
    pad_model(where, np.zeros(3, np.float32), [1, 1])
    path = where / "test_data_set_0" / "input_0.pb"
    for dims, data_type, problem in (([-5], TensorProto.FLOAT, "not sizes >= 0"),
                                     ([2**40], TensorProto.FLOAT, "exceed"),
                                     ([1], 99, "unknown element type 99")):
        tensor = numpy_helper.from_array(np.zeros(1, np.float32), "data")
        del tensor.dims[:]
        tensor.dims.extend(dims)
        tensor.data_type = data_type
        path.write_bytes(tensor.SerializeToString())
        with pytest.raises(CaseError, match=problem):
            load_tensor(path)


def test_initializers_that_lie_about_themselves_are_one_line(tmp_path, capsys):
    huge = TensorProto(name="extra", data_type=TensorProto.FLOAT, dims=[2**40], raw_data=b"\0" * 4)
    pad_model(tmp_path / "cases" / "test_huge", np.zeros(3, np.float32), [1, 1], initializers=[huge])
    code = main(["run", "--cases", str(tmp_path / "cases"), "--runtime", "onnx-reference",
                 "--out", str(tmp_path / "run")])
    one_line_exit_2(code, capsys, "model.onnx", "'extra'")


def test_float_pads_holding_nan_are_one_line(tmp_path, capsys):
    pad_model(tmp_path / "cases" / "test_nan", np.zeros(3, np.float32), [float("nan"), 1.0], TensorProto.FLOAT)
    code = main(["run", "--cases", str(tmp_path / "cases"), "--runtime", "onnx-reference",
                 "--out", str(tmp_path / "run")])
    one_line_exit_2(code, capsys, "test_nan", "not integers")


def test_yaml_nested_deep_is_one_line(tmp_path, capsys):
    deep = "[" * 20000 + "]" * 20000 + "\n"
    (tmp_path / "baseline.yaml").write_text(deep)
    with pytest.raises(CaseError, match="nested more than"):
        parse_baseline(deep, "baseline.yaml")
    specs = tmp_path / "specs"
    (specs / "onnx").mkdir(parents=True)
    (specs / "onnx" / "Pad-19.yaml").write_text("id: " + deep)
    one_line_exit_2(main(["--specs-dir", str(specs), "specs"]), capsys, "Pad-19.yaml", "nested more than")


@pytest.mark.parametrize("text,problem", [
    ("- !!python/object/apply:os.system ['touch pwned']\n", "an entry is a mapping"),
    ("- {runtime: rt, verdict: crash, why: x, error: !!python/object/apply:os.system ['touch pwned']}\n",
     "not a baseline entry"),
    ("- {runtime: rt, verdict: crash, why: x, [1, 2]: 3}\n", "not a baseline entry"),
])
def test_baseline_entries_that_are_not_data_are_one_line(tmp_path, text, problem):
    with pytest.raises(CaseError, match=problem):
        parse_baseline(text, "b.yaml")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("change,problem", [
    ({"origin": 5}, "'origin' is a number, not text"),
    ({"shape": "x"}, "'shape' is text, not an array"),
    ({"verdict": "ambiguous", "reason": 5}, "'reason' is a number, not text or null"),
    ({"verdict": "ambiguous", "matched": "crop_beyond_dim=reject"}, "'matched' is text, not an array or null"),
    ({"verdict": "ambiguous", "matched": [{"a": 1}]}, "'matched' holds something other than text"),
    ({"error": ["x"]}, "'error' is an array, not text or null"),
    ({"note": 2 ** 70}, "'note' is a number, not text or null"),
    ({"kind": ["must-reject"]}, "'kind' is an array, not text or null"),
    ({"difference": ["shape"]}, "'difference' is an array, not text or null"),
])
def test_results_rows_with_keys_of_the_wrong_type_are_one_line(tmp_path, capsys, change, problem):
    """The report reads these keys as what padconf writes: any other type is the file's fault."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="}, change)
    one_line_exit_2(main(["report", str(run), "--html", str(tmp_path / "r.html")]), capsys, "results.jsonl:1", problem)


@pytest.mark.parametrize("change,problem", [
    ({"spec": ["onnx/Pad-19"]}, "spec ['onnx/Pad-19'] is not text"),
    ({"mode": 1.5}, "mode 1.5 is not text"),
    ({"origin": 1.5}, "origin 1.5 is not text"),
    ({"pads": [1.5, 1]}, "pads [1.5, 1] is not a list of integers"),
    ({"pads_type": "float"}, "pads_type 'float' is not an integer dtype"),
    ({"op": "Relu"}, "op 'Relu' is not one of"),
    ({"tags": "rank-1"}, "tags 'rank-1' is not a list of text"),
    ({"tags": [f"t{i}" for i in range(65)]}, "is not a list of text (at most 64 items"),  # 2 million: 1.2 GB
    ({"spec": "onnx/Pad-99"}, "case onnx/Pad-99:constant:float:"),
    ({"spec": "../onnx/Pad-19"}, "malformed case: spec id '../onnx/Pad-19' is not <domain>/Pad-<version>"),
])
def test_a_case_file_with_keys_of_the_wrong_type_is_one_line_before_a_worker_sees_it(tmp_path, capsys, change,
                                                                                    problem):
    """minimize's case file, like a run's cases.jsonl, comes from others: a wrong type or a spec
    version the folder lacks was a traceback, or reached the worker and read as the runtime
    being unavailable."""
    case = {"spec": "onnx/Pad-19", "data": {"dtype": "float", "shape": [1], "b64": "AAAAAA=="}, "pads": [1, 1],
            "mode": "constant", **change}
    (tmp_path / "case.jsonl").write_text(json.dumps(case) + "\n")
    code = main(["minimize", str(tmp_path / "case.jsonl"), "--runtime", "onnx-reference", "--out",
                 str(tmp_path / "b")])
    one_line_exit_2(code, capsys, problem)


def test_an_example_database_entry_that_is_no_case_is_dropped_not_replayed():
    """--explore replays the example database a CI job downloaded (docs/ci.md): an entry that is
    not a case's JSON object, or is one of the wrong types, is deleted; the good one is replayed."""
    from hypothesis.database import InMemoryExampleDatabase

    from padconf.cases.case import Case
    from padconf.gate.explore import EXPLORE_KEY, replayed

    spec, = load_specs(ids=["onnx/Pad-19"])
    db, key = InMemoryExampleDatabase(), EXPLORE_KEY + b"onnx/Pad-19"
    good = json.dumps(Case("onnx/Pad-19", np.array([1.0], np.float32), [1, 1]).inputs_json(), sort_keys=True)
    for value in (good, "[1]", '"onnx/Pad-19"', "{", '{"spec": 5}', "null"):
        db.save(key, value.encode())
    assert [c.data.tolist() for c in replayed(db, spec)] == [[1.0]]
    assert list(db.fetch(key)) == [good.encode()]


@pytest.mark.slow
@pytest.mark.parametrize("plant,problem", [
    ("a value that links outside", "leads outside"),
    ("a value that is a FIFO", "not a regular file"),
    ("a value past the bound", "larger than 100 bytes"),
    ("values past the bound", "more than 3 values"),
    ("a key folder that links outside", "leads outside"),
])
def test_an_example_database_is_read_only_inside_its_folder_and_bounded(tmp_path, capsys, monkeypatch, plant, problem):
    """--explore reads the example database a CI job downloaded (docs/ci.md), and a pull request
    can change a checked-in one: a link to a file outside (or to /dev/zero, read without end
    before), a FIFO, a value past the bound, more values than the bound, or a key's folder that
    leads outside (where it would also have written) is one line and exit 2, and nothing outside
    is touched."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    from padconf.cases.case import Case
    from padconf.gate import explore

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("not the database's")
    db, key = DirectoryBasedExampleDatabase(str(tmp_path / "db")), explore.EXPLORE_KEY + b"onnx/Pad-19"
    db.save(key, json.dumps(Case("onnx/Pad-19", np.array([1.0], np.float32), [1, 1]).inputs_json()).encode())
    folder = db._key_path(key)
    if plant == "a value that links outside":
        (folder / "planted").symlink_to(outside / "secret")
    elif plant == "a value that is a FIFO":
        os.mkfifo(folder / "planted")
    elif plant == "a value past the bound":
        monkeypatch.setattr(explore, "MAX_VALUE_BYTES", 100)
        (folder / "planted").write_bytes(b" " * 101)
    elif plant == "values past the bound":
        monkeypatch.setattr(explore, "MAX_VALUES", 3)
        for n in range(3):
            (folder / f"planted{n}").write_text("{}")
    else:
        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("[]\n")
    code = main(["gate", "--runtime", FAKE + "ConformingAdapter", "--baseline", str(baseline), "--spec", "onnx/Pad-19",
                 "--work", str(tmp_path / "work"), "--explore", "2", "--example-db", str(tmp_path / "db")])
    one_line_exit_2(code, capsys, problem)
    assert [p.name for p in outside.iterdir()] == ["secret"]


def test_a_resumed_case_whose_spec_is_no_spec_id_is_one_line_not_an_unavailable_runtime(tmp_path, capsys):
    """Such a case reached the workers, whose zygote died describing itself: the run went on with
    the runtime "unavailable" and exited 0 without that runtime's missing results."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    case = json.loads((run / "cases.jsonl").read_text())
    (run / "cases.jsonl").write_text(json.dumps({**case, "spec": "nonsense"}) + "\n")
    one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "cases.jsonl",
                    "spec id 'nonsense' is not <domain>/Pad-<version>")


@pytest.mark.parametrize("spec", ["onnx/Pad-99", "openvino/Pad-12"])
def test_a_resumed_case_of_a_spec_version_the_run_does_not_have_is_one_line(tmp_path, capsys, spec):
    """An unknown version, or a known one the run did not select: no runtime claims such a case,
    and the resumed run exited 0 with a column of its own in summary.md."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    case = json.loads((run / "cases.jsonl").read_text())
    (run / "cases.jsonl").write_text(json.dumps(identified({**case, "spec": spec}, classified=False)) + "\n")
    one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "cases.jsonl:1:",
                    f"spec {spec} is not one of the run's spec versions")


@pytest.mark.parametrize("key,value", [("cases_dir", [1]), ("cases_dir", -1), ("specs", "onnx/Pad-19"),
                                       ("seed", 1.5), ("specs_dir", 5)])
def test_a_run_json_with_keys_of_the_wrong_type_is_one_line_on_resume(tmp_path, capsys, key, value):
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, key: value}))
    one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "run.json", key)


@pytest.mark.parametrize("name,line,problem", [
    ("cases.jsonl", {"tags": [-1]}, "'tags' holds something other than text"),
    ("cases.jsonl", {"tags": None}, "tags None is not a list of text"),  # the failure's case, decoded
    ("controls.jsonl", {"failure": [["rt"]], "verdict": "pass", "fails_too": False},
     "'failure' holds something other than text"),
])
def test_cases_and_controls_of_the_wrong_type_are_one_line_for_report(tmp_path, capsys, name, line, problem):
    """The report counts each case's tags and looks each control up by its failure: a tag or a
    failure that is not text was a traceback."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    if name == "cases.jsonl":
        line = {**json.loads((run / name).read_text()), **line}
    (run / name).write_text(json.dumps(line) + "\n")
    one_line_exit_2(main(["report", str(run), "--html", str(tmp_path / "r.html")]), capsys, name, problem)


# a value of each JSON type first (what a file of another version or tool holds), then any
JSON_VALUES = (st.sampled_from([None, True, -1, 2 ** 70, 1.5, "", "x", [], ["x"], [1], [[1]], {}, {"x": 1}])
               | st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                              lambda inner: st.lists(inner, max_size=3)
                              | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    """A real run directory: two runtimes, two spec versions, every verdict they give."""
    out = tmp_path_factory.mktemp("small-run") / "run"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", "--runtime", "onnx-reference", "onnxruntime", "--spec", "onnx/Pad-18", "onnx/Pad-19",
                     "--max-examples", "12", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
@given(data=st.data())
def test_a_report_on_a_run_directory_with_any_value_changed_is_a_report_or_one_line(small_run, tmp_path_factory,
                                                                                    data):
    """Whatever one key of one line of a run directory's files holds (any JSON value, or none),
    padconf report writes its report or exits 2 with one line: never a traceback."""
    work = tmp_path_factory.mktemp("changed") / "run"
    shutil.copytree(small_run, work)
    name = data.draw(st.sampled_from(["results.jsonl", "cases.jsonl", "controls.jsonl", "run.json"]))
    text = (work / name).read_text()
    docs = [json.loads(line) for line in text.splitlines()] if name.endswith(".jsonl") else [json.loads(text)]
    doc = data.draw(st.sampled_from(docs))
    key = data.draw(st.sampled_from(sorted(doc)))
    if data.draw(st.booleans()):
        del doc[key]
    else:
        doc[key] = data.draw(JSON_VALUES)
    (work / name).write_text("".join(json.dumps(d) + "\n" for d in docs) if name.endswith(".jsonl")
                             else json.dumps(docs[0]))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["report", str(work), "--html", str(work / "r.html"), "--md", str(work / "r.md")])
    assert code == 0 or (code == 2 and err.getvalue().count("\n") == 1), (code, err.getvalue())


def test_results_rows_without_the_keys_an_ambiguous_verdict_uses_still_make_a_report(tmp_path, capsys):
    """A row from another tool may leave out what padconf writes as null (matched, reason): the
    report counts a refusal of an ambiguous case (reflect beyond a dimension) that no reading
    gives as unexplained. (Its error stays: a row about no output is derived from its refusal.)"""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="},
                       {"verdict": "unexplained", "mode": "reflect", "kind": "ambiguous", "error": "refused"})
    import numpy as np

    from padconf.cases.case import Case
    from padconf.cases.classify import classify
    case = classify(Case(spec="onnx/Pad-19", data=np.zeros(1, np.float32), pads=[1, 1], mode="reflect")).to_json()
    (run / "cases.jsonl").write_text(json.dumps(case) + "\n")
    rows = [json.loads((run / "results.jsonl").read_text())]
    rows[0]["case_id"] = case["id"]
    for key in ("matched", "reason"):
        del rows[0][key]
    (run / "results.jsonl").write_text(json.dumps(rows[0]) + "\n")
    assert main(["report", str(run), "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]) == 0
    assert "(not named)" in (tmp_path / "r.html").read_text()


def test_a_number_of_thousands_of_digits_is_one_line(tmp_path, capsys):
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    (run / "results.jsonl").write_text('{"runtime": ' + "9" * 5000 + "}\n")
    one_line_exit_2(main(["report", str(run), "--html", str(tmp_path / "r.html")]), capsys, "results.jsonl:1")


@pytest.mark.parametrize("gate_json", [
    "[]", '{"shard": 5}', '{"shard": [1], "spec_ids": []}', "{",
    '{"runtime": "rt", "spec_ids": [], "seed": 0, "explore": 0, "shard": [1]}',
    '{"runtime": "rt", "spec_ids": [], "seed": 0, "explore": 0, "shard": "12"}',
])
def test_a_malformed_gate_json_is_one_line(tmp_path, capsys, gate_json):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "gate.json").write_text(gate_json)
    (tmp_path / "b.yaml").write_text("[]\n")
    code = main(["gate", "--runtime", "rt", "--baseline", str(tmp_path / "b.yaml"), "--results", str(tmp_path / "g")])
    one_line_exit_2(code, capsys, "gate.json")


def test_an_output_file_not_named_by_a_number_is_one_line(tmp_path):
    pad_model(tmp_path, np.zeros(3, np.float32), [1, 1])
    (tmp_path / "test_data_set_0" / "output_abc.pb").write_bytes(b"")
    with pytest.raises(CaseError, match="output_abc.pb: not output_<number>.pb"):
        UserModel(tmp_path)


def test_limits_out_of_range_are_one_line(tmp_path, capsys):
    one_line_exit_2(main(["run", "--timeout", "1e308", "--out", str(tmp_path / "a")]), capsys, "1e308")
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, "memory_mb": 10**12}))
    one_line_exit_2(main(["run", "--resume", "--out", str(run)]), capsys, "run.json", "memory_mb")


def test_a_memory_cap_above_ulimit_is_one_line_naming_it(tmp_path):
    result = padconf_cli(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "0",
                          "--memory-mb", "4096", "--out", str(tmp_path / "run")], tmp_path, memory=3 * GiB)
    assert_one_line_exit_2(result, "memory_mb 4096", "ulimit -v")
    assert not (tmp_path / "run").exists()



# ---------------------------------------------------------------- hostile inputs found after the first round


def pad2_folder_with(where: Path, attribute) -> Path:
    """A copy of a generated Pad-2 test folder whose Pad node has ``attribute`` in place of its own
    of that name (or added, if it has none)."""
    import onnx
    source = sorted((GENERATED / "onnx").glob("test_pad2_constant_float_basic_*"))[0]
    shutil.copytree(source, where / source.name)
    model = onnx.load(where / source.name / "model.onnx")
    node = model.graph.node[0]
    kept = [a for a in node.attribute if a.name != attribute.name]
    del node.attribute[:]
    node.attribute.extend([*kept, attribute])
    (where / source.name / "model.onnx").write_bytes(model.SerializeToString())
    return where


_TENSOR = helper.make_tensor("t", TensorProto.INT64, [2], [1, 1])


@pytest.mark.parametrize("attribute,problem", [
    (helper.make_attribute("pads", _TENSOR), "'pads' attribute is TENSOR, not INTS"),
    (helper.make_attribute("pads", helper.make_graph([], "g", [], [])), "'pads' attribute is GRAPH, not INTS"),
    (helper.make_attribute("pads", [float("nan")]), "'pads' attribute is FLOATS, not INTS"),
    (helper.make_attribute("pads", [1e300]), "'pads' attribute is FLOATS, not INTS"),
    (helper.make_attribute("pads", [b"1", b"2"]), "'pads' attribute is STRINGS, not INTS"),
    (helper.make_attribute("value", b"0"), "'value' attribute is STRING, not FLOAT"),
    (helper.make_attribute("value", _TENSOR), "'value' attribute is TENSOR, not FLOAT"),
    (helper.make_attribute("mode", b"\xff\xfe"), "'mode' attribute is not UTF-8"),
    (helper.make_attribute("mode", [1, 2]), "'mode' attribute is INTS, not STRING"),
])
def test_pad2_attributes_of_the_wrong_type_are_one_line(tmp_path, capsys, attribute, problem):
    """Each was a traceback (int() of a TensorProto, of NaN, of b'1'; float() of a string)."""
    cases = pad2_folder_with(tmp_path / "cases", attribute)
    code = main(["run", "--cases", str(cases), "--runtime", "onnx-reference", "--out", str(tmp_path / "run")])
    one_line_exit_2(code, capsys, "test_pad2_constant_float_basic", problem)


def npy_of(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def npy_header_only(shape) -> bytes:
    """A .npy file that declares ``shape`` float32 and holds no data."""
    from numpy.lib import format as npy
    buf = io.BytesIO()
    npy.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.mark.parametrize("npy,problem", [
    (npy_header_only((2**40,)), r"\(4398046511104 bytes\) exceeds 67108864 bytes"),  # np.load allocated 4 TiB
    (npy_header_only((2, 3)), "needs 24 bytes; the file holds 0"),
    (npy_of(np.zeros((2, 3), np.int64)), "dtype int64, not float32"),  # was viewed as a (2, 6) float array
    (npy_of(np.array(["ab", "c"])), "dtype <U2, not float32"),
    (npy_of(np.zeros(3, ">f4")), "dtype >f4, not float32"),
    (npy_of(np.zeros(3, [("a", "<f4")])), r"dtype \[\('a', '<f4'\)\], not float32"),
    (npy_of(np.array([1.0, None], dtype=object)), "dtype object, not float32"),
    (b"\x93NUMPY\x03\x00" + bytes(8), "format version 3.0"),
    (b"not a numpy file", "malformed .npy"),
])
def test_openvino_npy_inputs_of_the_wrong_dtype_or_size_are_one_line(tmp_path, capsys, npy, problem):
    """The .npy header is read and checked (dtype, shape against the bytes the file holds and
    against 64 MiB) before any array is made."""
    source = sorted((GENERATED / "openvino").glob("test_ovpad12_constant_float_basic_*"))[0]
    where = tmp_path / "cases" / source.name
    shutil.copytree(source, where)
    good = read_cases([tmp_path / "cases"], SPECS)[0]
    fortran = np.asfortranarray(good.data)  # the same values in the other order: read as they were
    (where / "input_0.npy").write_bytes(npy_of(fortran))
    assert np.array_equal(read_cases([tmp_path / "cases"], SPECS)[0].data, good.data)
    (where / "input_0.npy").write_bytes(npy)
    with pytest.raises(CaseError, match=problem):
        read_cases([tmp_path / "cases"], SPECS)
    code = main(["run", "--cases", str(tmp_path / "cases"), "--runtime", "openvino", "--out", str(tmp_path / "run")])
    one_line_exit_2(code, capsys, "input_0.npy")


def test_control_characters_from_a_baseline_a_runtime_or_a_case_leave_the_junit_xml_parseable(tmp_path):
    """A baseline's ``why`` (YAML's "\\x01" escape), a runtime's error text and a case id may
    hold characters XML 1.0 forbids; ElementTree wrote them as they were and the file did not
    parse. Each is shown as \\xNN / \\uNNNN."""
    from xml.etree import ElementTree

    from padconf.gate.compare import judge_rows
    from padconf.gate.junit import junit_xml
    text = ('- {runtime: "rt\\a", verdict: crash, why: "forgiven\\x01\\ud800\\uffff\\x1b[2J", '
            'cells: [onnx/Pad-19 constant float inputs]}\n'
            '- {runtime: "rt\\a", verdict: crash, why: "fixed\\x02", cells: [onnx/Pad-19 edge float inputs]}\n')
    entries = parse_baseline(text, "b\x03.yaml")
    assert "\x01" in entries[0].why and "\ud800" in entries[0].why  # the baseline keeps what it said
    row = {"runtime": "rt\x07", "placement": "inputs", "spec": "onnx/Pad-19", "dtype": "float", "shape": [2],
           "pads": [1, 1], "origin": "generated", "reason": None, "detail": None, "matched": None, "seconds": 0.1}
    rows = [{**row, "mode": "constant", "verdict": "crash", "case_id": "forgiven\x04", "error": "x\x00y"},
            {**row, "mode": "reflect", "verdict": "crash", "case_id": "new\x05\x0b\x0c\ufffe",
             "error": "\x00\x1b[2J\udfff"},
            {**row, "mode": "edge", "verdict": "pass", "case_id": "passes\x06", "error": None}]
    judgement = judge_rows(rows, entries, "rt\x07", {"onnx/Pad-19"})
    assert len(judgement.known) == 1 and len(judgement.new) == 1 and len(judgement.fixed) == 1
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml(judgement), encoding="utf-8")  # a lone surrogate would not even encode
    suite = ElementTree.parse(path).getroot()
    messages = [e.get("message") for e in suite.iter() if e.get("message")]
    assert len(messages) == 3 and suite.get("name") == "padconf gate rt\\x07"
    assert any("forgiven\\x01\\ud800\\uffff\\x1b[2J" in m for m in messages)
    assert any("\\x00\\x1b[2J\\udfff" in m for m in messages) and any("fixed\\x02" in m for m in messages)
    names = [c.get("name") for c in suite.iter("testcase")]
    assert "new\\x05\\x0b\\x0c\\ufffe[inputs]" in names and any(n.startswith("b\\x03.yaml") for n in names)


CELL = "onnx/Pad-19 constant float inputs"


def alias_chain(links: int) -> str:
    """An entry holding anchors that each nest the previous one's alias 60 deep: 60 * ``links``
    deep once expanded (for whatever walks it), 63 in the text."""
    chain = ", ".join(f"&l{i} " + "[" * 60 + (f"*l{i - 1}" if i else "x") + "]" * 60 for i in range(links))
    return f"- {{runtime: rt, verdict: crash, why: x, cells: [{CELL}], chain: [{chain}]}}\n"


@pytest.mark.parametrize("text,problem", [
    # one entry of 2,000 cells and 600 aliases of it: 1.2M nodes; the 20,000 and 2,000 took minutes
    ("- &e\n  runtime: rt\n  verdict: crash\n  why: x\n  cells:\n" + f"  - {CELL}\n" * 2000 + "- *e\n" * 600,
     r"b.yaml:1: YAML of more than 1048576 nodes once its aliases are expanded"),
    (alias_chain(200), "nested more than 64 deep once its aliases are expanded"),
    (f"- &e {{runtime: rt, verdict: crash, why: x, cells: [{CELL}], case: *e}}\n", "alias inside the node it names"),
])
def test_yaml_aliases_are_counted_expanded_before_a_baseline_is_built(tmp_path, capsys, text, problem):
    with pytest.raises(CaseError, match=problem):
        parse_baseline(text, "b.yaml")
    (tmp_path / "b.yaml").write_text(text)
    one_line_exit_2(main(["gate", "--runtime", "onnx-reference", "--baseline", str(tmp_path / "b.yaml")]), capsys,
                    "b.yaml", problem.split(": ")[-1])


def entries_with_errors(patterns) -> str:
    return "".join(f"- {{runtime: rt, verdict: crash, why: x, error: '{p}', cells: [{CELL}]}}\n" for p in patterns)


@pytest.mark.slow
@pytest.mark.parametrize("text,problem", [
    # 1,023 errors, the runtime's and the empty one: 1,025 distinct patterns, refused before any is compiled
    (entries_with_errors(f"error {i}" for i in range(1023)), "b.yaml: 1025 distinct patterns, more than 1024"),
    # each just under the 1 MiB RE2 budget (66K instructions): the 16th passes 1M in all
    (entries_with_errors(f"\\pL{{55}}|{i}" for i in range(300)),
     r"b.yaml:16: error: the baseline's patterns compile to more than 1048576 RE2 instructions"),
    # just under RE2's default 8 MiB budget: 300 of these took 949 MB and 41 s
    (entries_with_errors(["\\pL{446}"]), "b.yaml:1: error: not a regular expression RE2 accepts: pattern too large"),
])
def test_a_baselines_patterns_are_bounded_in_number_memory_and_size_before_any_row_is_judged(tmp_path, capsys, text,
                                                                                              problem):
    with pytest.raises(CaseError, match=problem):
        parse_baseline(text, "b.yaml")
    (tmp_path / "b.yaml").write_text(text)
    one_line_exit_2(main(["gate", "--runtime", "onnx-reference", "--baseline", str(tmp_path / "b.yaml")]), capsys,
                    "b.yaml", problem.split(": ")[-1])


@pytest.mark.slow
def test_a_models_computed_pad_input_is_bounded_before_padconf_reads_it(tmp_path, capsys):
    """A 134-byte model whose Pad is fed by an Expand to 2**26 + 1 floats: the worker computes
    it, and says it is too large in one line, rather than padconf reading and decoding it first
    (2.2 GB at 2**28) and judging its size after."""
    where = tmp_path / "model"
    (where / "test_data_set_0").mkdir(parents=True)
    nodes = [helper.make_node("Expand", ["data", "shape"], ["big"]),
             helper.make_node("Pad", ["big", "pads"], ["out"], mode="constant")]
    inits = [helper.make_tensor("shape", TensorProto.INT64, [1], [2**26 + 1]),
             helper.make_tensor("pads", TensorProto.INT64, [2], [1, 1])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (where / "model.onnx").write_bytes(model.SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.ones(1, np.float32), "data").SerializeToString())
    code = main(["minimize", str(where), "--runtime", "onnxruntime", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip().splitlines()  # minimize says what the whole model did first
    assert code == 2 and err[-1].startswith("padconf: ") and "more than padconf reads" in err[-1], err


@pytest.mark.parametrize("linked", ["case.json", "repro.json"])
def test_a_bundle_file_linked_outside_the_bundle_is_one_line_for_bisect(tmp_path, capsys, linked):
    """``padconf bisect BUNDLE`` read BUNDLE/case.json through a link to a file outside the
    bundle, and used it (attack round I): a bundle's files are read as a run directory's are."""
    from padconf.cases.case import Case
    from padconf.cases.classify import classify
    bundle, outside = tmp_path / "bundle", tmp_path / "outside"
    bundle.mkdir()
    outside.mkdir()
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 0]))
    (outside / "case.json").write_text(json.dumps(case.to_json()) + "\n")
    (outside / "repro.json").write_text(json.dumps({"placement": "inputs"}))
    for name in ("case.json", "repro.json"):
        if name == linked:
            (bundle / name).symlink_to(outside / name)
        else:
            (bundle / name).write_bytes((outside / name).read_bytes())
    one_line_exit_2(main(["bisect", str(bundle), "--runtime", "onnxruntime"]), capsys, "a symbolic link")


@pytest.mark.parametrize("command", [["report", "RUN", "--md", "OUT/r.md"], ["run", "--resume", "--out", "RUN"]])
@pytest.mark.parametrize("copy", ["under a made-up id", "under its own id"])
def test_a_case_copied_in_a_run_directory_is_one_line(tmp_path, capsys, command, copy):
    """A case and its row copied under another id counted as two cases (two failures, with
    run.json's counts edited to match) (attack round I); a case is held to its content's id,
    and is drawn once."""
    run = run_dir_with(tmp_path, {"dtype": "float", "shape": [1], "b64": "AAAAAA=="})
    case, row = (json.loads((run / name).read_text()) for name in ("cases.jsonl", "results.jsonl"))
    other = "onnx/Pad-19:constant:float:0123456789ab" if copy == "under a made-up id" else case["id"]
    (run / "cases.jsonl").write_text(json.dumps(case) + "\n" + json.dumps({**case, "id": other}) + "\n")
    if other != case["id"]:
        (run / "results.jsonl").write_text(json.dumps(row) + "\n" + json.dumps({**row, "case_id": other}) + "\n")
    run_json = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**run_json, "case_count": 2}))
    argv = [a.replace("OUT", str(tmp_path)).replace("RUN", str(run)) for a in command]
    one_line_exit_2(main(argv), capsys, "cases.jsonl:2:",
                    "is not the id of its content" if other != case["id"] else "again: a case is drawn once")
