"""Cases built for a rewriter's precondition cells (padconf.cases.context_cells): each has the
features its cell names, is defined, and onnxruntime (its optimizer off: nothing rewritten)
computes padconf's expected output for it in every placement."""
from __future__ import annotations

import pytest

from padconf.cases.case import CaseKind
from padconf.cases.context import snap
from padconf.cases.context_cells import FEATURES, cell_case, covers, features
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import bit_equal
from padconf.core.vocabulary import Placement
from padconf.spec.loader import get_spec

ORT = pytest.importorskip("onnxruntime")
BASE = {"consumer": "Conv", "mode": "constant", "value": "absent", "pads": "initializer", "axes": "absent",
        "amounts": "growing", "consumers": "one", "auto_pad": "NOTSET", "own_pads": "none", "group": "1"}
CELLS = [{**BASE, feature: value} for feature, values in FEATURES.items() if feature != "count_include_pad"
         for value in values if feature in BASE or feature == "consumer"]
CELLS += [{**BASE, "consumer": "AveragePool", "count_include_pad": "1", "group": None}]


def _run(model, inputs):
    options = ORT.SessionOptions()
    options.graph_optimization_level = ORT.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ORT.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items() if BASE.get(k) != v))
def test_a_built_case_has_its_cells_features_and_runs_as_expected(cell):
    cell = {k: v for k, v in cell.items() if v is not None}
    if cell["consumer"] not in ("Conv",):  # group is Conv's; the pools' own attributes stay
        cell.pop("group", None)
    if cell["consumer"] not in ("Conv", "MaxPool", "AveragePool"):
        for name in ("auto_pad", "own_pads"):
            cell.pop(name)
    case = cell_case(get_spec("onnx/Pad-19"), cell, "test")
    if cell["consumer"] in ("Pad", "Slice", "SpaceToDepth", "DepthToSpace"):
        assert case is None  # no rewriter's pass fuses into them: no cell of theirs is built
        return
    assert case is not None and case.kind == CaseKind.DEFINED
    found = [features(case, p) for p in (Placement.INPUTS, Placement.INITIALIZERS)]
    assert any(covers(f, cell) for f in found), (cell, found)
    for placement in (Placement.INPUTS, Placement.INITIALIZERS):
        got = _run(build_model(case, placement), feeds(case, placement))
        assert got.shape == case.expected.shape and bit_equal(case.expected, snap(case.context, case.expected, got))


def test_a_cell_a_version_cannot_hold_builds_nothing():
    assert cell_case(get_spec("onnx/Pad-13"), {**BASE, "axes": "ordered"}, "test") is None
    assert cell_case(get_spec("onnx/Pad-18"), {**BASE, "mode": "wrap"}, "test") is None
