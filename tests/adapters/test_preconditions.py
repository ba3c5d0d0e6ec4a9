"""The rewriters' declared Pad-pass preconditions (padconf.adapters.preconditions): cells in
padconf.cases.context_cells' words, each covered by every run of its rewriter: the run adds a
built case for each cell its drawn cases leave uncovered."""
from __future__ import annotations

import json

import pytest

from padconf.adapters import get_adapter
from padconf.adapters.preconditions import PRECONDITION_TAG, coverage, declared_cells
from padconf.cases.case import Case
from padconf.cases.context_cells import FEATURES, expressible
from padconf.run.config import RunConfig
from padconf.run.drawing import build_cases
from padconf.spec.loader import load_specs

REWRITERS = ("onnxoptimizer", "onnxscript", "onnxslim", "onnxsim", "onnx-version-converter",
             "onnx-version-converter[direction=down]")
SPECS = ["onnx/Pad-13", "onnx/Pad-18", "onnx/Pad-19"]


@pytest.mark.parametrize("name", REWRITERS)
def test_each_rewriter_declares_its_pad_passes_preconditions_in_the_feature_words(name):
    adapter = get_adapter(name)
    cells = declared_cells(adapter.preconditions)
    assert cells and {p for p, _ in cells} <= set(adapter.passes) | {"convert_version"}
    for _, cell in cells:
        assert all(k in FEATURES and v in FEATURES[k] for k, v in cell.items()), cell
    # every precondition names what the fusions look at, and the cells beside each
    for precondition in adapter.preconditions:
        assert {"mode", "value", "pads", "axes"} <= set(precondition.holds)
        assert {"mode", "value", "pads", "axes"} <= set(precondition.varied)
        assert set(precondition.varied["axes"]) == {"ordered", "reordered"}


@pytest.mark.slow
@pytest.mark.parametrize("name", REWRITERS)
def test_a_run_of_each_rewriter_covers_every_declared_cell_its_specs_can_express(name):
    config = RunConfig(runtimes=[name], specs=SPECS, max_examples=12, seed=3)
    cases = [Case.from_json(json.loads(line)) for line in build_cases(config)]
    adapter = get_adapter(name)
    drawn = [c for c in cases if not c.origin.startswith(PRECONDITION_TAG)]
    assert coverage(adapter.preconditions, drawn, adapter.placements)[1]  # the draw alone leaves cells out
    covered, uncovered = coverage(adapter.preconditions, cases, adapter.placements)
    specs = [s for s in load_specs(None, SPECS) if adapter.supports(s.id, "float") is None]
    for _, cell in uncovered:  # only what no spec version it runs can hold (wrap before Pad-19)
        assert not any(expressible(s, cell) for s in specs), cell
    assert all(p.holds in [cell for _, cell in covered] for p in adapter.preconditions)
    assert len(covered) >= len(declared_cells(adapter.preconditions)) - 1
    if name == "onnx-version-converter":  # its wrap cell too: Pad-19 converts up to 21
        assert not uncovered


def test_a_run_without_a_rewriter_adds_no_precondition_case():
    config = RunConfig(runtimes=["onnxruntime"], specs=["onnx/Pad-19"], max_examples=6)
    assert not [line for line in build_cases(config) if f'"origin": "{PRECONDITION_TAG}:' in line]


@pytest.mark.slow
def test_a_runs_summary_says_which_declared_cells_it_covered(tmp_path):
    from padconf.cli import main
    from padconf.report.report import precondition_coverage
    from padconf.run.rundir import read_jsonl

    out = tmp_path / "run"
    assert main(["run", "--runtime", "onnx-version-converter", "--spec", "onnx/Pad-19", "--max-examples", "6",
                 "--out", str(out)]) in (0, 1)
    declared = len(declared_cells(get_adapter("onnx-version-converter").preconditions))
    summary = (out / "summary.md").read_text()
    assert "## Rewriter precondition cells covered" in summary
    assert f"| onnx-version-converter | {declared} of {declared} | none |" in summary
    rows, cases = read_jsonl(out / "results.jsonl"), read_jsonl(out / "cases.jsonl")
    assert all(n for *_, n in precondition_coverage(rows, cases))
    # without the cases the run built for its cells, the same count finds cells no result covered
    built = {c["id"] for c in cases if c["origin"].startswith(PRECONDITION_TAG)}
    drawn_only = precondition_coverage([r for r in rows if r["case_id"] not in built], cases)
    assert any(n == 0 for *_, n in drawn_only) and len(drawn_only) == declared
