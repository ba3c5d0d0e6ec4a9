"""Hostile inputs found after the first round: a working directory whose ``.hypothesis``
folder holds FIFOs, numbers in run.json that no bound held, and cases whose arrays are each
under the per-array bound but not together. Each is one line on stderr and exit 2, or the
command's ordinary result; nothing hangs (docs/reliability.md)."""
import base64
import json
import os
import resource
import stat
import subprocess
import sys
import unicodedata
import zlib
from pathlib import Path

import hypothesis.internal.charmap
import numpy as np
import pytest

from padconf.cases.case import MAX_CASE_BYTES, Case
from padconf.core.dtypes import MAX_ARRAY_BYTES, ArrayBudget, decode_array
from padconf.core.errors import CaseError
from padconf.run.config import MAX_EXAMPLES
from tests.robustness.test_hostile_inputs import identified

PADCONF = str(Path(sys.executable).with_name("padconf"))  # the console script users run
HANG_S = 300  # a command that takes longer hangs: each finishes in seconds
MiB = 1 << 20


def padconf(args, cwd, timeout=HANG_S, memory=None):
    """(exit code, stderr) of ``padconf ARGS`` run in ``cwd``, its address space capped at
    ``memory`` bytes; a hang fails the test."""
    def cap():
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        proc = subprocess.run([PADCONF, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=cap)
    except subprocess.TimeoutExpired:
        pytest.fail(f"padconf {' '.join(args)} still ran after {timeout} s: it hangs")
    return proc.returncode, proc.stderr


def assert_one_line_exit_2(result, *words):
    code, err = result
    assert code == 2, err[-3000:]
    assert len(err.strip().splitlines()) == 1, err[-3000:]
    for word in words:
        assert word in err, err


# ---------------------------------------------------------------- Hypothesis's storage


def plant_fifos(cwd: Path) -> list[Path]:
    """FIFOs where Hypothesis, left to itself, keeps its Unicode charmap cache and its example
    database: ``./.hypothesis/...``, the paths as the installed Hypothesis spells them."""
    charmap = Path(".hypothesis", *hypothesis.internal.charmap.charmap_file().parts[-3:])
    assert charmap.parts[-3:-1] == ("unicode_data", unicodedata.unidata_version)
    fifos = [cwd / charmap, cwd / ".hypothesis" / "examples"]
    for fifo in fifos:
        fifo.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
    return fifos


def assert_untouched(cwd: Path, fifos: list[Path]) -> None:
    assert all(stat.S_ISFIFO(f.lstat().st_mode) for f in fifos)
    assert sorted(p.relative_to(cwd) for p in (cwd / ".hypothesis").rglob("*")) == sorted(
        {f.relative_to(cwd) for f in fifos} | {p.relative_to(cwd) for f in fifos for p in f.parents
                                              if cwd / ".hypothesis" in p.parents})


@pytest.mark.slow
@pytest.mark.parametrize("args,codes", [
    (["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "3", "--out", "out"], {0}),
    # drawn in padconf.run.draw_child processes: two versions, 40 cases each, two jobs
    (["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-18", "onnx/Pad-19", "--max-examples", "40",
      "--jobs", "2", "--out", "out"], {0}),
    # an empty baseline: the reference's own refusals are new failures (exit 1), a judgement all the same
    (["gate", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--explore", "3", "--baseline", "empty.yaml",
      "--work", "out", "--example-db", "none"], {0, 1}),
    (["generate", "--spec", "onnx/Pad-19", "--out", "out"], {0}),
], ids=["run", "run-drawing-children", "gate", "generate"])
def test_drawing_never_reads_the_working_directorys_hypothesis_folder(tmp_path, args, codes):
    """A FIFO at ``.hypothesis/unicode_data/<version>/charmap.json.gz`` hung every command that
    draws text cases, for ever: Hypothesis read its cache from the working directory."""
    fifos = plant_fifos(tmp_path)
    (tmp_path / "empty.yaml").write_text("[]\n")
    code, err = padconf(args, tmp_path)
    assert code in codes, err[-3000:]
    assert "Traceback" not in err
    assert_untouched(tmp_path, fifos)


# ---------------------------------------------------------------- run.json's numbers


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A real run directory: onnx-reference on Pad-19, two drawn cases."""
    out = tmp_path_factory.mktemp("run") / "run"
    code, err = padconf(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "2",
                         "--out", str(out)], out.parent)
    assert code == 0, err[-3000:]
    return out


def copy_run(run: Path, to: Path) -> Path:
    to.mkdir()
    for name in ("run.json", "cases.jsonl", "results.jsonl"):
        (to / name).write_bytes((run / name).read_bytes())
    return to


@pytest.mark.slow
@pytest.mark.parametrize("key,value", [
    ("max_examples", 10 ** 9), ("max_examples", MAX_EXAMPLES + 1), ("max_examples", True),
    ("seed", 2 ** 63), ("seed", -(2 ** 63) - 1), ("runtimes", ["onnx-reference"] * 2),
    ("specs", ["onnx/Pad-19"] * 2000), ("specs_dir", "x" * 5000), ("memory_mb", 1 << 40),
])
def test_run_json_numbers_are_bounded_before_a_resume_draws(finished_run, tmp_path, key, value):
    """run.json with max_examples 10**9 and a cases.jsonl short of its count drew 10**9 cases a
    version on --resume: for ever."""
    run = copy_run(finished_run, tmp_path / "run")
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, key: value}))
    (run / "cases.jsonl").write_text((run / "cases.jsonl").read_text().splitlines(keepends=True)[0])  # short
    assert_one_line_exit_2(padconf(["run", "--resume", "--out", str(run)], tmp_path), "run.json", key)


@pytest.mark.parametrize("option,value,key", [
    ("--max-examples", str(MAX_EXAMPLES + 1), "max_examples"), ("--seed", str(2 ** 63), "seed"),
])
def test_the_command_line_has_run_jsons_bounds(tmp_path, option, value, key):
    assert_one_line_exit_2(padconf(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", option, value,
                                    "--out", "out"], tmp_path), key)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- a case's arrays, and a file's


def zeros_z64(nbytes: int) -> str:
    """``nbytes`` zero bytes as an encoded array's z64 payload: a kilobyte a MiB."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(bytes(MiB)) for _ in range(nbytes // MiB)]
    parts += [packer.compress(bytes(nbytes % MiB)), packer.flush()]
    return base64.b64encode(b"".join(parts)).decode()


def floats(count: int, z64: str | None = None) -> dict:
    return {"dtype": "float", "shape": [count], "z64": z64 or zeros_z64(4 * count)}


CASE = {"spec": "onnx/Pad-19", "pads": [1, 1], "mode": "constant", "kind": "defined"}


@pytest.mark.parametrize("where", ["constant_value", "pads", "axes", "expected", "interpretations"])
def test_every_array_of_a_case_counts_against_its_bound_before_it_is_inflated(monkeypatch, where):
    """The bound is taken from each array's declared shape: the last array, whose payload is no
    zlib stream at all, is refused by the bound, never inflated."""
    import padconf.cases.case
    monkeypatch.setattr(padconf.cases.case, "MAX_CASE_BYTES", 1000)
    broken = floats(100, z64=base64.b64encode(b"not zlib").decode())  # 400 bytes declared
    doc = {**CASE, "data": floats(150)}  # 600 bytes, and 16 of pads
    assert Case.from_json(doc).data.nbytes == 600
    doc.update({"constant_value": {"constant_value": broken, "kind": "must-reject"},
                "pads": {"pads": [0] * 60},  # 480 bytes: the data is past the bound
                "axes": {"axes": [0] * 60},
                "expected": {"expected": broken},
                "interpretations": {"kind": "ambiguous", "interpretations": {"a": None, "b": broken}}}[where])
    with pytest.raises(CaseError, match="the case's arrays hold more than 1000 bytes decoded"):
        Case.from_json(doc)


def test_a_string_arrays_text_counts_too():
    """A string array's z64 text has no size its shape declares: it is inflated only as far as
    the budget left, and counted."""
    values = json.dumps(["x" * 1000] * 4).encode()
    doc = {"dtype": "string", "shape": [4], "z64": base64.b64encode(zlib.compress(values)).decode()}
    assert decode_array(doc, ArrayBudget(4 * 64 + len(values), "these")).tolist() == ["x" * 1000] * 4
    with pytest.raises(CaseError, match="not at most"):
        decode_array(doc, ArrayBudget(4 * 64 + 100, "these"))


def run_of_cases(tmp_path: Path, docs: list[dict]) -> Path:
    """A run directory over ``docs``, resumable: run.json counts them, no result is written."""
    run = tmp_path / "run"
    run.mkdir()
    docs = [identified({**CASE, **doc}) for doc in docs]
    (run / "cases.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (run / "results.jsonl").write_text("")
    (run / "run.json").write_text(json.dumps({"runtimes": ["onnx-reference"], "specs": ["onnx/Pad-19"],
                                              "max_examples": 0, "memory_mb": 1024, "case_count": len(docs)}))
    return run


@pytest.mark.slow
def test_a_resumed_run_bounds_every_array_of_its_cases_together(tmp_path):
    """40 cases whose constant_value each declares 64 MiB of zlib zeros (a 3.5 MB cases.jsonl):
    each case is under its bound, but --resume counted only data and expected outputs towards the
    file's, and ran out of memory decoding 2.5 GiB."""
    bomb = floats(MAX_ARRAY_BYTES // 4)
    run = run_of_cases(tmp_path, [{"data": floats(1), "pads": [i, 1], "constant_value": bomb,
                                   "kind": "must-reject"} for i in range(40)])
    assert (run / "cases.jsonl").stat().st_size < 4 * MiB
    result = padconf(["run", "--resume", "--out", str(run)], tmp_path, memory=3 << 29)
    assert_one_line_exit_2(result, "cases.jsonl:8:", "cases.jsonl hold more than 536870912 bytes decoded")
    assert MAX_CASE_BYTES >= 2 * MAX_ARRAY_BYTES  # data and expected output at the bound are a case


def test_an_ir_with_a_document_type_declaration_is_one_line(tmp_path, capsys):
    """Entities (a billion laughs, ``SYSTEM "file:///etc/passwd"``) in a test folder's model.xml
    (attack round D): an IR never holds a DTD, so one is refused before OpenVINO parses it."""
    import shutil

    from padconf.cli import main
    source = sorted((Path(__file__).parents[2] / "generated/openvino").glob("test_ovpad12_constant_float_*"))[0]
    shutil.copytree(source, tmp_path / "c" / "test_x")
    xml = tmp_path / "c" / "test_x" / "model.xml"
    head, _, rest = xml.read_text().partition("?>")
    xml.write_text(head + '?><!DOCTYPE net [<!ENTITY a "aaaa"><!ENTITY ext SYSTEM "file:///etc/passwd">]>'
                   + rest.replace("<net ", '<net note="&a;&ext;" ', 1))
    capsys.readouterr()
    code = main(["run", "--runtime", "openvino", "--cases", str(tmp_path / "c"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "a document type declaration" in err, err
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_cases_padconf_could_not_read_back_are_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    """Test folders within every bound made a cases.jsonl past the bound padconf reads back (151 MB
    of 6 folders of 12 MB): the run ran them all, then refused its own run, and report and --resume
    refused it too (attack round III). The cases as written are held to that bound first."""
    import padconf.run.runner
    from padconf.cli import main
    monkeypatch.setattr(padconf.run.runner, "MAX_JSONL_BYTES", 1000)
    out = tmp_path / "run"
    capsys.readouterr()
    assert main(["run", "--runtime", "onnx-reference", "--spec", "onnx/Pad-19", "--max-examples", "0",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than the 1000 padconf reads back of a run" in err, err
    assert not (out / "results.jsonl").exists() and not (out / "cases.jsonl").exists()


def test_a_model_of_more_messages_than_its_bound_is_one_line(tmp_path, monkeypatch):
    """A model.onnx of 8.4M Identity nodes (266 MB, under the file's bound) took 97 s and 5.4 GB
    walking every message before it was refused (attack round III): the walk counts its work."""
    import onnx
    from onnx import TensorProto, helper

    import padconf.suite.folders as folders
    monkeypatch.setattr(folders, "MAX_MODEL_MESSAGES", 1000)
    nodes = [helper.make_node("Identity", [f"t{i}"], [f"t{i + 1}"]) for i in range(2000)]
    graph = helper.make_graph(nodes, "many", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("t2000", TensorProto.FLOAT, [1])])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), path)
    with pytest.raises(CaseError, match=f"{path}: holds more than 1000 messages"):
        folders.load_model(path)


def _pad_folder(root: Path, pads: int, axes: int) -> Path:
    """A test folder of one Pad-19 node fed ``pads`` pads and ``axes`` axes (repeated axis 0)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    where = root / "test_pad_long_lists"
    (where / "test_data_set_0").mkdir(parents=True)
    inputs = [helper.make_tensor_value_info("data", TensorProto.FLOAT, [2]),
              helper.make_tensor_value_info("pads", TensorProto.INT64, [pads]),
              helper.make_tensor_value_info("cv", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("axes", TensorProto.INT64, [axes])]
    graph = helper.make_graph([helper.make_node("Pad", ["data", "pads", "cv", "axes"], ["output"], mode="constant")],
                              "g", inputs, [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), where / "model.onnx")
    arrays = [np.ones(2, np.float32), np.ones(pads, np.int64), np.array(0, np.float32), np.zeros(axes, np.int64)]
    for i, a in enumerate(arrays):
        (where / "test_data_set_0" / f"input_{i}.pb").write_bytes(numpy_helper.from_array(a).SerializeToString())
    return root


@pytest.mark.parametrize("pads, axes", [(2 * 600, 600), (2000, 1)])
def test_a_case_of_more_pads_or_axes_than_its_bound_is_one_line_before_anything_runs(tmp_path, capsys, pads, axes):
    """A test folder of 3M repeated axes and 6M pads (69 MB) took 148 s and 2.1 GB, each entry
    Python work in every stage (attack round III): a case holds at most MAX_PADS_ENTRIES pads and
    MAX_AXES_ENTRIES axes, counted before they are read into numbers, from a folder or a case file."""
    from padconf.cases.case import MAX_AXES_ENTRIES, MAX_PADS_ENTRIES
    from padconf.cli import main
    assert pads > MAX_PADS_ENTRIES or axes > MAX_AXES_ENTRIES
    folder = _pad_folder(tmp_path / "cases", pads, axes)
    capsys.readouterr()
    assert main(["run", "--runtime", "onnx-reference", "--cases", str(folder), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{pads} pads and {axes} axes" in err, err
    assert not (tmp_path / "o" / "results.jsonl").exists()
    doc = {"spec": "onnx/Pad-19", "data": {"dtype": "float", "shape": [2], "b64": "AACAPwAAgD8="},
           "pads": [0] * pads, "mode": "constant", "axes": [0] * axes, "id": None}
    with pytest.raises(CaseError, match=f"{pads} pads and {axes} axes"):  # a line of cases.jsonl, a shard's
        Case.from_json(doc)


def _ir_of_string_constant(where: Path, count: int) -> None:
    """An OpenVINO IR whose Pad-12 pads a Const of ``count`` strings (its weights left short:
    only the XML's declared shape matters before OpenVINO builds it)."""
    dims = f"<dim>{count}</dim>"
    const = ('<layer id="{i}" name="{name}" type="Const" version="opset1"><data element_type="{t}" shape="{shape}" '
             'offset="0" size="{size}"/><output><port id="0" precision="{p}">{dims}</port></output></layer>')
    layers = [const.format(i=0, name="data", t="string", shape=count, size=8, p="STRING", dims=dims),
              const.format(i=1, name="pads_begin", t="i64", shape=1, size=8, p="I64", dims="<dim>1</dim>"),
              const.format(i=2, name="pads_end", t="i64", shape=1, size=8, p="I64", dims="<dim>1</dim>"),
              f'<layer id="3" name="pad" type="Pad" version="opset12"><data pad_mode="constant"/><input>'
              f'<port id="0" precision="STRING">{dims}</port><port id="1" precision="I64"><dim>1</dim></port>'
              f'<port id="2" precision="I64"><dim>1</dim></port></input><output><port id="3" precision="STRING">'
              f'<dim>-1</dim></port></output></layer>',
              '<layer id="4" name="output" type="Result" version="opset1"><input><port id="0" precision="STRING">'
              '<dim>-1</dim></port></input></layer>']
    edges = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
                    for a, b, c, d in ((0, 0, 3, 0), (1, 0, 3, 1), (2, 0, 3, 2), (3, 3, 4, 0)))
    where.mkdir(parents=True)
    (where / "model.xml").write_text(f'<?xml version="1.0"?><net name="pad" version="11"><layers>{"".join(layers)}'
                                     f'</layers><edges>{edges}</edges></net>')
    (where / "model.bin").write_bytes(np.array([1, 0], np.int64).tobytes())


def test_an_ir_constant_past_its_bound_is_refused_before_openvino_builds_it(tmp_path, capsys):
    """An IR Const of 60M empty strings took OpenVINO's read_model 75 s and 3.6 GB before padconf's
    64 MiB bound saw the array (attack round III): the XML's declared shapes are bounded first."""
    pytest.importorskip("openvino")
    from padconf.cli import main
    _ir_of_string_constant(tmp_path / "c" / "test_strings", 60_000_000)
    capsys.readouterr()
    assert main(["run", "--runtime", "openvino", "--cases", str(tmp_path / "c"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Const 'data' of string shape [60000000] would build" in err, err
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_an_ir_with_a_layer_no_pad_test_holds_is_refused_before_openvino_builds_it(tmp_path, capsys):
    """A side branch Const -> Broadcast(to 2**27) -> ReduceMax feeding a Reshape's shape beside
    the Pad: read_model computed it for shape inference, 2.2 GB (attack round IV). A Pad test's
    IR holds Parameters, Consts, one Pad and Results; any other layer is refused unbuilt."""
    ov = pytest.importorskip("openvino")
    from openvino import opset12 as ops

    from padconf.cli import main
    data, side = ops.parameter([2, 2], np.float32, name="data"), ops.parameter([-1], np.float32, name="side")
    pad = ops.pad(data, ops.constant(np.array([1, 1], np.int64)), ops.constant(np.array([1, 1], np.int64)), "constant")
    wide = ops.broadcast(ops.constant(np.array([1], np.int64)), ops.constant(np.array([1 << 20], np.int64)))
    reshaped = ops.reshape(side, ops.reduce_max(wide, ops.constant(np.array([0], np.int64)), True), False)
    where = tmp_path / "c" / "test_side_branch"
    where.mkdir(parents=True)
    ov.save_model(ov.Model([pad, reshaped], [data, side]), str(where / "model.xml"), compress_to_fp16=False)
    np.save(where / "input_0.npy", np.ones((2, 2), np.float32))
    np.save(where / "input_1.npy", np.ones(1, np.float32))
    capsys.readouterr()
    assert main(["run", "--runtime", "openvino", "--cases", str(tmp_path / "c"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no one-node Pad model among 1 test directories" in err, err
    from padconf.suite.folders import NotPadModel, check_ir_layers
    with pytest.raises(NotPadModel, match="a layer of type 'Broadcast'"):
        check_ir_layers((where / "model.xml").read_bytes(), where / "model.xml")


def test_an_ir_of_many_elements_is_refused_before_it_is_parsed(tmp_path, capsys):
    """A model.xml of 30M empty elements (120 MB) took 2.9 GB to parse before it was refused
    (attack round IV): a one-Pad IR's XML is a few KB, its arrays are in model.bin."""
    from padconf.cli import main
    from padconf.suite.folders import MAX_IR_ELEMENTS, MAX_IR_XML_BYTES, CaseError, check_ir_layers
    where = tmp_path / "c" / "test_elements"
    where.mkdir(parents=True)
    (where / "model.xml").write_text('<net name="p" version="11"><layers>' + "<a/>" * (MAX_IR_XML_BYTES // 4)
                                     + "</layers></net>")
    capsys.readouterr()
    assert main(["run", "--runtime", "openvino", "--cases", str(tmp_path / "c"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"larger than {MAX_IR_XML_BYTES} bytes" in err, err
    with pytest.raises(CaseError, match=f"more than {MAX_IR_ELEMENTS} XML elements"):
        check_ir_layers(b"<net>" + b"<a/>" * MAX_IR_ELEMENTS + b"</net>", where / "model.xml")


def test_an_ir_whose_names_only_elementtree_reads_otherwise_is_refused_before_openvino_builds_it(tmp_path):
    """Two IRs padconf's check read otherwise than OpenVINO (attack round V): a default XML
    namespace renamed every element for ElementTree ("{urn:x}layer"), so no layer was checked
    and the side branch of 2**20 elements was built; a Const shape of "²", a digit to Python,
    ended in int() (exit 3)."""
    pytest.importorskip("openvino")
    from padconf.suite.folders import CaseError, check_ir_layers
    where = tmp_path / "c" / "test_side_branch"
    wide = tmp_path / "w"
    wide.mkdir()
    _ir_of_string_constant(where, 2)
    xml = (where / "model.xml").read_text()
    with pytest.raises(CaseError, match="an XML namespace"):
        check_ir_layers(xml.replace('<net name=', '<net xmlns="urn:x" name=', 1).encode(), where / "model.xml")
    with pytest.raises(CaseError, match="an XML namespace"):
        check_ir_layers(xml.replace('<layer id="0"', '<layer xmlns:x="urn:x" x:type="Broadcast" id="0"', 1).encode(),
                        where / "model.xml")
    with pytest.raises(CaseError, match="not sizes >= 0"):
        check_ir_layers(xml.replace('shape="2"', 'shape="\u00b2"', 1).encode(), where / "model.xml")


def test_an_ir_constants_element_type_is_counted_in_any_case(tmp_path):
    """OpenVINO takes "STRING" and "I64" as it takes "string": counted as 1 byte an element, a
    Const of 8 million upper-case strings passed the bound 32 times under (attack round VI)."""
    from padconf.suite.folders import CaseError, check_ir_layers
    where = tmp_path / "c" / "test_strings"
    _ir_of_string_constant(where, 3_000_000)
    xml = (where / "model.xml").read_text()
    for spelled in ("STRING", "String"):
        with pytest.raises(CaseError, match="would build 96000000 bytes"):
            check_ir_layers(xml.replace('element_type="string"', f'element_type="{spelled}"', 1).encode(),
                            where / "model.xml")


def test_a_string_cases_work_counts_its_text(tmp_path):
    """One string of a million characters padded 500 times in edge mode was counted as 8 bytes an
    element and took 1 GB before a late refusal naming no file (attack round VI): its text counts,
    and a string output no array may hold is refused where the case is read."""
    from padconf.cases.case import InputBudget, case_work
    from padconf.core.dtypes import OverBudget, as_array
    big = Case(spec="onnx/Pad-19", data=as_array(["x" * 1_000_000], "string"), pads=[0, 500], mode="edge")
    with pytest.raises(OverBudget, match="a string output of 501004008 bytes implied"):
        InputBudget("t").take_work(big)
    small = Case(spec="onnx/Pad-19", data=as_array(["x" * 100], "string"), pads=[0, 5], mode="edge")
    assert case_work(small) >= 6 * 108
    InputBudget("t").take_work(small)


def test_a_folder_name_that_is_no_utf8_is_one_line_before_anything_runs(tmp_path, capsys):
    """A test folder named with bytes no UTF-8 decodes went into its case's origin and every row,
    which padconf then refused to read: its own run unreadable (attack round VI)."""
    import shutil

    from padconf.cli import main
    source = sorted((Path(__file__).resolve().parents[2] / "generated" / "onnx").glob("test_*"))[0]
    cases = tmp_path / "c"
    cases.mkdir()
    shutil.copytree(source, os.fsdecode(bytes(cases) + b"/test_a\xff\xfeb_1"))
    capsys.readouterr()
    assert main(["run", "--runtime", "onnx-reference", "--cases", str(cases), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a folder name that is not UTF-8 text" in err, err
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_a_lone_surrogate_in_a_runtimes_text_leaves_its_row_readable(tmp_path):
    """The reader refuses a JSON lone surrogate as no text; a runtime's bytes decoded leniently
    reach a row's error: the writer spells them "?", so padconf reads back what it wrote."""
    from padconf.core.untrusted import json_value
    from padconf.run.rundir import RowsFile
    line = RowsFile(tmp_path / "results.jsonl").line({"error": "bad \udcff byte, \U0001f600 kept"})
    assert json_value(line, "row") == {"error": "bad ? byte, \U0001f600 kept"}
    from padconf.run.rundir import MAX_JSONL_BYTES, MAX_ROW_TEXT_PAST_HALF
    past_half = RowsFile(tmp_path / "results.jsonl", MAX_JSONL_BYTES // 2)  # where the row is cut too
    cut = json_value(past_half.line({"error": "\udcff" + "x" * 2000}), "row")
    assert cut["error"] == "?" + "x" * (MAX_ROW_TEXT_PAST_HALF - 1) and cut["elided"] == {"error": 2001}


@pytest.mark.parametrize("number", ["1" * 5000, "-" + "9" * 4400, "1" * 500 + ".5"])
def test_a_yaml_number_of_thousands_of_digits_is_one_line(tmp_path, number):
    """PyYAML constructs a number with int(), which past Python's 4,300 digits raises ValueError,
    no YAML error: a baseline's or a spec's such number was exit 3 (attack round VII). The one
    YAML reader refuses it as it composes the document."""
    from padconf.core.errors import SpecError
    from padconf.gate.baseline import parse_baseline
    from padconf.suite.folders import CaseError
    entry = f"- runtime: onnx-reference\n  verdict: wrongly-rejected\n  cells: [onnx/Pad-19 constant]\n  why: x\n" \
            f"  issue: {number}\n"
    with pytest.raises(CaseError, match=r"b.yaml:5: a number of \d+ characters"):
        parse_baseline(entry, "b.yaml")
    import shutil

    from padconf.spec.loader import load_specs
    specs = tmp_path / "specs"
    shutil.copytree(Path(__file__).resolve().parents[2] / "padconf" / "spec" / "documents", specs)
    spec = specs / "onnx" / "Pad-19.yaml"
    spec.write_text(spec.read_text() + f"note2: {number}\n")
    with pytest.raises(SpecError, match="a number of"):
        load_specs(str(specs))
