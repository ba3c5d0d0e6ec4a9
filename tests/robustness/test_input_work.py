"""The whole input of one command is bounded by the work its cases imply, not only by their
bytes (``padconf.cases.case.InputBudget``, ``padconf.spec.reference.implied_work``): tiny test
folders each padding to 2**26 elements passed every bound and then every case timed out, charged
to the runtime (docs/reliability.md, "One choke point per class")."""
from __future__ import annotations

import json
import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from padconf.cases.case import MAX_INPUT_WORK_BYTES, Case, CaseKind, InputBudget, case_work
from padconf.cases.classify import classify
from padconf.core.errors import CaseError
from padconf.spec.loader import get_spec, load_specs
from padconf.spec.reference import MAX_WORK_BYTES, implied_work
from padconf.suite.folders import read_cases

SIDE = 8192  # (1, 1) padded to (8192, 8192): 2**26 elements, 512 MiB of float64


def _big_test_dir(where, k: int, mode: str = "edge") -> None:
    """A test folder of a few hundred bytes: float64 data of one element padded to 2**26."""
    (where / "test_data_set_0").mkdir(parents=True)
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)], "g",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 1]),
         helper.make_tensor_value_info("p", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), where / "model.onnx")
    data = numpy_helper.from_array(np.full((1, 1), float(k)), "x")  # each its own case
    pads = numpy_helper.from_array(np.array([0, 0, SIDE - 1, SIDE - 1], np.int64), "p")
    (where / "test_data_set_0" / "input_0.pb").write_bytes(data.SerializeToString())
    (where / "test_data_set_0" / "input_1.pb").write_bytes(pads.SerializeToString())


def test_implied_work_counts_the_output_under_every_reading_and_the_references_index_maps():
    """From the shapes alone: a checked case its work (output twice, index maps), a case too
    large to check its output (what a runtime computes), a dimension beyond int64 nothing."""
    assert implied_work((3,), 4, [1, 2], "constant") == 6 * 4 + 6 * 48
    assert implied_work((3,), 4, [1, 2], "edge") == 6 * 4 * 2 + 6 * 48
    assert implied_work((1, 1), 8, [0, 0, SIDE - 1, SIDE - 1], "edge") == SIDE * SIDE * 8  # too large: output
    assert implied_work((3,), 4, [2**31, -(2**31)], "constant") == 3 * 4 + 3 * 48  # cancels to 3
    assert implied_work((0, 3), 4, [0, 2**62, 0, 2**62], "constant") == 0  # no tensor holds it
    # negative pads a version forbids, repeated axes it refuses: the reading that computes most
    assert implied_work((4,), 1, [5, 5, 5, 5], "constant", axes=[0, 0]) == 24 + 24 * 48
    case = classify(Case(spec="onnx/Pad-19", data=np.zeros((1, 1)), pads=[0, 0, SIDE - 1, SIDE - 1], mode="edge"),
                    get_spec("onnx/Pad-19"))
    assert case.kind == CaseKind.TOO_LARGE and case_work(case) == SIDE * SIDE * 8


def test_test_folders_each_within_every_bound_are_bounded_by_the_work_they_imply(tmp_path, capsys):
    """Each folder a few hundred bytes and too large to check (so no expected output is kept):
    before, all were read and each ran on the runtime until its timeout."""
    from padconf.cli import main
    count = MAX_INPUT_WORK_BYTES // (SIDE * SIDE * 8) + 1
    for k in range(count):
        _big_test_dir(tmp_path / "cases" / f"test_big_{k}", k)
    _big_test_dir(tmp_path / "one" / "test_big", 0)
    assert [c.kind for c in read_cases([tmp_path / "one"], load_specs())] == [CaseKind.TOO_LARGE]
    with pytest.raises(CaseError, match=f"imply more than {MAX_INPUT_WORK_BYTES} bytes of work together"):
        read_cases([tmp_path / "cases"], load_specs())
    # across folders as within one: the one folder and all but one of the others
    shutil.rmtree(tmp_path / "cases" / f"test_big_{count - 1}")
    with pytest.raises(CaseError, match="bytes of work together"):
        read_cases([tmp_path / "cases", tmp_path / "one"], load_specs())
    assert main(["run", "--runtime", "onnx-reference", "--out", str(tmp_path / "out"),
                 "--cases", str(tmp_path / "cases"), str(tmp_path / "one")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bytes of work together" in err
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_files_cases_are_bounded_by_the_work_they_imply_where_each_is_read():
    """cases.jsonl (resume, report), a gate's shards, a run minimize reads, the example database:
    every reader of many cases takes an InputBudget, which Case.from_json charges."""
    spec = get_spec("onnx/Pad-19")
    docs = [classify(Case(spec=spec.id, data=np.full((1, 1), float(k)), pads=[0, 0, SIDE - 1, SIDE - 1],
                          mode="edge"), spec).to_json() for k in range(MAX_INPUT_WORK_BYTES // (SIDE * SIDE * 8) + 1)]
    assert len(json.dumps(docs)) < 20_000  # a few KB of JSON
    budget = InputBudget("cases.jsonl")
    with pytest.raises(CaseError, match="the cases of cases.jsonl imply more than"):
        for doc in docs:
            Case.from_json(doc, budget)
    for doc in docs:  # each alone is within its own bounds
        Case.from_json(doc, InputBudget("cases.jsonl"))
    assert MAX_INPUT_WORK_BYTES >= MAX_WORK_BYTES  # one case at the reference's bound fits
