"""The compile budget (padconf.run.compile_budget) and the compile limits adapted to a graph
(padconf.execution.compile_limits): which models an ahead-of-time compiler builds in a run, what
the run says about the others, and how long a build of a family that hung before may take."""
from __future__ import annotations

import json

import numpy as np
import pytest

from padconf.cases.case import Case, CaseKind
from padconf.cases.onnx_model import model_key
from padconf.cli import main
from padconf.core.errors import PadconfError
from padconf.core.vocabulary import PLACEMENTS, Placement
from padconf.execution.compile_limits import HUNG_FAMILY_FLOOR_S, CompileLimits
from padconf.judging.records import NOT_COMPILED
from padconf.report.report import counts_line
from padconf.run.compile_budget import _greedy, select
from padconf.run.config import RESULTS_WRITTEN
from padconf.run.drawing import draw_spec
from padconf.run.runner import Run, RunConfig

FAKE = "tests.fake_adapters:"


def _cells(case: Case, placement: str) -> set[tuple]:
    return {(case.spec, case.mode, case.dtype, tag, placement) for tag in case.tags}


@pytest.fixture(scope="module")
def drawn() -> list[tuple[Placement, list[Case]]]:
    cases = [Case.from_json(json.loads(line)) for spec in ("onnx/Pad-19", "onnx/Pad-13")
             for line in draw_spec((None, spec, 60, 3))]
    return [(p, cases) for p in PLACEMENTS]


def _models(todo) -> dict[tuple, list[Case]]:
    groups: dict[tuple, list[Case]] = {}
    for placement, cases in todo:
        for case in cases:
            groups.setdefault((placement, model_key(case, placement)), []).append(case)
    return groups


@pytest.mark.parametrize("budget", [0, 1, 7, 40])
def test_the_budget_bounds_the_models_and_takes_each_trigger_first(drawn, budget):
    """One model per upstream trigger and placement comes first (the known bugs' inputs)."""
    chosen, models = select(drawn, budget)
    groups = _models(drawn)
    assert models == len(groups) and len(chosen) == min(budget, models)

    def triggers(models) -> set[tuple]:
        return {(c.origin, g[0]) for g in models for c in groups[g] if c.origin.startswith("upstream-trigger:")}
    wanted = triggers(groups)
    assert len(wanted) == 3 * 5  # Pad-19 and Pad-13 hold five triggers between them, in three placements
    assert len(triggers(chosen)) == min(budget, len(wanted))


def test_no_model_repeats_a_covered_cell_while_cells_are_left(drawn):
    everything, _ = select(drawn, 10**6)
    groups = _models(drawn)
    cells = set().union(*(_cells(c, g[0]) for g in groups for c in groups[g]))
    for budget in (30, 60):
        chosen, _ = select(drawn, budget)
        got = set().union(*(_cells(c, g[0]) for g in chosen for c in groups[g]))
        if got != cells:  # not all covered: then every chosen model added a cell no other chosen one has
            for g in chosen:
                others = set().union(*(_cells(c, h[0]) for h in chosen if h != g for c in groups[h]))
                own = set().union(*(_cells(c, g[0]) for c in groups[g]))
                assert own - others or any(c.origin.startswith("upstream") for c in groups[g]), g
    assert everything == set(groups)


def test_the_choice_depends_only_on_the_cases(drawn):
    assert select(drawn, 25) == select([(p, list(cases)) for p, cases in drawn], 25)


def test_a_compiler_runs_every_case_of_its_chosen_models_and_counts_the_rest(tmp_path):
    config = RunConfig(runtimes=[FAKE + "InstantCompilerAdapter", FAKE + "ConformingAdapter"],
                       specs=["onnx/Pad-19"], max_examples=20, compile_budget=5)
    run = Run(tmp_path / "run", config, jobs=1)
    try:
        cases = run.prepare()
        run.execute(run.plan(cases))
    finally:
        run.release()
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    compiler = [r for r in rows if r["runtime"] == FAKE + "InstantCompilerAdapter"]
    other = [r for r in rows if r["runtime"] == FAKE + "ConformingAdapter"]
    left_out = [r for r in compiler if r["verdict"] == "skipped" and r["detail"].startswith(NOT_COMPILED)]
    assert len(compiler) == len(other)  # every result is there, run or counted
    assert left_out and not any(r["verdict"] == "skipped" for r in other)
    ran = {(r["placement"], r["case_id"]) for r in compiler if r not in left_out}
    by_id = {c.id: c for c in cases}
    models = {(p, model_key(by_id[i], Placement(p))) for p, i in ran}
    assert len(models) <= 5
    assert not any((r["placement"], model_key(by_id[r["case_id"]], Placement(r["placement"]))) in models
                   for r in left_out)  # a chosen model serves every case it can
    assert run.stats["runtimes"][FAKE + "InstantCompilerAdapter"]["models_built"] >= len(models)
    assert f"; {len(left_out)} {FAKE}InstantCompilerAdapter results {NOT_COMPILED}" in counts_line(rows)


@pytest.mark.parametrize("kept", [0.25, 0.5, 0.75])
def test_a_resumed_run_compiles_what_the_uninterrupted_run_compiles(tmp_path, kept):
    """The budget's choice is the whole run's: a run resumed after some of a compiler's results
    were written chose its models again among the cases still to run, compiled more than the
    budget, and wrote budget skips a reader of the whole run cannot derive again."""
    compiler = FAKE + "InstantCompilerAdapter"
    args = ["run", "--runtime", compiler, "--spec", "onnx/Pad-19", "--max-examples", "20", "--compile-budget", "3"]
    assert main([*args, "--out", str(tmp_path / "whole")]) == 0
    lines = (tmp_path / "whole" / "results.jsonl").read_text().splitlines(True)
    ran = [k for k, line in enumerate(lines) if NOT_COMPILED not in line]
    cut = ran[int(len(ran) * kept)] + 1  # some compiled results written, some not yet
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "results.jsonl").write_text("".join(lines[:cut]))
    for name in ("run.json", "cases.jsonl"):
        (tmp_path / "cut" / name).write_bytes((tmp_path / "whole" / name).read_bytes())
    doc = json.loads((tmp_path / "cut" / "run.json").read_text())
    doc.pop(RESULTS_WRITTEN, None)
    (tmp_path / "cut" / "run.json").write_text(json.dumps(doc))
    assert main(["run", "--resume", "--runtime", compiler, "--out", str(tmp_path / "cut")]) == 0

    def outcomes(name):
        return sorted((r["placement"], r["case_id"], r["verdict"], r.get("detail"))
                      for r in map(json.loads, (tmp_path / name / "results.jsonl").read_text().splitlines()))
    assert outcomes("cut") == outcomes("whole")


@pytest.mark.parametrize("budget", ["-3", "abc", "1.5", ""])
def test_a_bad_compile_budget_is_one_line_exit_2(capsys, tmp_path, budget):
    assert main(["run", "--compile-budget", budget, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--compile-budget" in err


@pytest.mark.parametrize("budget", [-1, "some", 1.5, True, None])
def test_a_run_json_with_a_bad_compile_budget_is_refused(budget):
    with pytest.raises(PadconfError, match="compile_budget"):
        RunConfig(runtimes=["onnxruntime"], compile_budget=budget)


def _case(mode: str, pads: list[int], spec: str = "onnx/Pad-19") -> Case:
    return Case(spec=spec, data=np.arange(6, dtype=np.float32).reshape(2, 3), pads=pads, mode=mode)


def test_a_family_that_hung_gets_a_shorter_limit_others_keep_the_whole_one():
    limits = CompileLimits(120.0)
    wrap, constant = _case("wrap", [1, 1, 1, 1]), _case("constant", [1, 1, 1, 1])
    assert limits.for_case(wrap, Placement.INITIALIZERS) == 120.0
    limits.record(constant, Placement.INITIALIZERS, 1.0, timed_out=False)
    limits.record(wrap, Placement.INITIALIZERS, 120.0, timed_out=True)
    other_wrap = _case("wrap", [0, 1, 1, 0])
    assert limits.for_case(other_wrap, Placement.FOLDED) == HUNG_FAMILY_FLOOR_S  # pads constant there too
    assert limits.for_case(other_wrap, Placement.INPUTS) == 120.0  # pads fed: another family
    assert limits.for_case(constant, Placement.INITIALIZERS) == 120.0
    assert CompileLimits(3.0).for_case(wrap, Placement.FOLDED) == 3.0  # never above the whole limit


def _class_cells(todo, chosen=None) -> set[tuple]:
    """(spec, edge class, placement) of the defined cases in a trigger class (defined negative
    constant pads, axes given, in constant mode) that the ``chosen`` models (all: None) hold."""
    groups = _models(todo)
    return {(c.spec, tag, g[0]) for g in (groups if chosen is None else chosen) for c in groups[g]
            if c.kind == CaseKind.DEFINED and c.mode == "constant"
            for tag in ("negative-pads", "axes-given") if tag in c.tags}


def test_every_version_and_placement_compiles_a_defined_case_of_each_trigger_class(drawn):
    """iree-org/iree#19935's class (defined negative constant pads, fed at run time) and the
    axes-fed trigger's class get a compiled model in each version and placement that has one."""
    wanted = _class_cells(drawn)
    assert {spec for spec, tag, _ in wanted if tag == "negative-pads"} == {"onnx/Pad-19", "onnx/Pad-13"}
    assert {p for *_, p in wanted} == set(PLACEMENTS)
    chosen, _ = select(drawn, len(wanted) + 15)  # the 15 trigger models and one a cell at most
    assert _class_cells(drawn, chosen) == wanted


def test_the_cover_goes_on_past_a_model_whose_cells_another_covered():
    """A model whose gain was counted before another covered its cells gives way to the next:
    the cover stops only when no model adds a cell."""
    cells = {"a": {1, 2, 3}, "b": {1, 2, 3}, "c": {4}}
    chosen: list = []
    _greedy(cells, set(), chosen, {"a": 0, "b": 1, "c": 2}, budget=10)
    assert chosen == ["a", "c"]
