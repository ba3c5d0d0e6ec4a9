"""Which models an ahead-of-time compiler (an adapter with ``compiles_ahead``: IREE, TVM) builds
in a run, when the run bounds them (``--compile-budget N``).

A compiled model serves every case of its model key (padconf.cases.onnx_model.model_key: with
the operands fed at run time, one model serves every shape of a spec version, mode, dtype and
rank; with them baked in, one graph serves the cases that share it). The budget counts those
models, over every placement of the compiler. They are taken in priority order:

1. one model per upstream trigger and placement (padconf.cases.plain.upstream_triggers): the
   known bugs' smallest inputs, of the newest spec version that holds each (what users run; an
   old version may refuse what a newer one gets wrong: TVM rejects Pad-1's reflect trigger);
2. then, greedily, a model for each (spec version, mode, edge class, placement) of the defined
   cases of the edge class a trigger shows (``TRIGGER_CLASSES``: defined negative constant pads,
   axes given) in the trigger's mode: the bug is the class's, not the trigger's one input, and
   each version and placement compiles its own graph (iree-org/iree#19935 holds for negative
   constant pads fed at run time in every version that allows them);
3. then, greedily, the model whose cases add the most (spec version, mode, dtype, edge class,
   placement) cells not yet covered, until every cell is covered once;
4. then the rest, most cases a model first (more results for one compile).

Ties go to the earlier model in the plan's order, so the same cases give the same choice.
Every case of a chosen model runs; the others get a skipped row saying so (``NOT_COMPILED``),
counted in the summary.
"""
from __future__ import annotations

import heapq

from padconf.cases.case import Case, CaseKind
from padconf.cases.onnx_model import model_key
from padconf.cases.plain import TRIGGER_TAG
from padconf.core.vocabulary import Placement
from padconf.judging.records import NOT_COMPILED
from padconf.spec.loader import spec_sort_key

# compiled models per compiler in a run: enough for every known bug's trigger and a first
# cover of the cells, few enough that a cold run's compiles overlap the other runtimes' lanes
DEFAULT_COMPILE_BUDGET = 160
ALL = "all"  # --compile-budget all: every model
# upstream trigger (padconf.cases.plain.upstream_triggers) -> the edge class (padconf.cases.edge_classes)
# of the bug it shows, whose defined cases in the trigger's mode the budget covers in every
# version and placement; the others show a bug of their one input (wrap-hang's costs a
# compile time limit a graph: one is enough), or of a class the cells cover (unsigned: its dtypes)
TRIGGER_CLASSES = {"negative-fed": "negative-pads", "axes-fed": "axes-given"}


def not_compiled_why(budget: int) -> str:
    return (f"{NOT_COMPILED} (the run compiles {budget} models per ahead-of-time compiler; "
            f"--compile-budget all compiles every one)")


def _cells(case: Case, placement: Placement) -> set[tuple]:
    spec, mode, dtype = case.spec, case.mode, case.dtype
    return {(spec, mode, dtype, tag, placement) for tag in (case.tags or [""])}


def _trigger(case: Case) -> str | None:
    """The upstream trigger ``case`` is (its origin's name), or None."""
    return case.origin.split(":")[1] if case.origin.startswith(TRIGGER_TAG + ":") else None


def _class_cells(case: Case, placement: Placement, classes: dict[str, str]) -> set[tuple]:
    """The trigger classes' cells ``case`` holds: (spec, mode, edge class, placement), for a
    defined case in the mode of a trigger of that class (``classes``: edge class -> mode)."""
    if case.kind != CaseKind.DEFINED:
        return set()
    return {(case.spec, case.mode, tag, placement) for tag, mode in classes.items()
            if mode == case.mode and tag in (case.tags or [])}


def _greedy(cells: dict[tuple, set], covered: set, chosen: list[tuple], order: dict, budget: int) -> None:
    """Adds to ``chosen`` the model of ``cells`` (model -> its cells) that adds the most cells not
    yet ``covered``, until every cell is covered or the budget is spent; ``order`` breaks ties."""
    # lazy greedy: a model's gain only shrinks as others are chosen, so a stale gain is an upper bound
    taken = set(chosen)
    heap = [(-len(cells[g] - covered), order[g], g) for g in cells if g not in taken]
    heapq.heapify(heap)
    while heap and len(chosen) < budget:
        stale, rank, g = heapq.heappop(heap)
        if not stale:  # the best bound left is nothing: every cell is covered
            break
        gain = len(cells[g] - covered)
        if not gain:  # its cells were covered since: the models below may still add some
            continue
        if -stale != gain:
            heapq.heappush(heap, (-gain, rank, g))
            continue
        chosen.append(g)
        covered |= cells[g]


def plan_order(cases: list[Case]) -> list[Case]:
    """``cases`` in the order a run plans them, which the budget's ties follow: cases that share
    a model sit together, the spec version last (one graph often serves several versions:
    openvino_tensors.graph_key, and a worker keeps few compiled models)."""
    return sorted(cases, key=lambda c: (c.mode, c.dtype, c.data.ndim, c.constant_value is None,
                                        c.axes is None, c.pads_type, c.axes_type, c.spec))


def left_out(todo: dict[Placement, list[Case]], budget: int) -> tuple[set[tuple[Placement, str]], int, int]:
    """The (placement, case id) pairs the budget leaves out of a compiler's ``todo`` (placement
    -> every case of the run it can express there, in plan order, those a resumed run ran
    included: the choice is the whole run's); the models chosen, and the models in all."""
    groups = _groups(list(todo.items()))
    chosen = _choose(groups, budget)
    out = {(g[0], c.id) for g, cases in groups.items() if g not in chosen for c in cases}
    return out, len(chosen), len(groups)


def select(todo: list[tuple[Placement, list[Case]]], budget: int) -> tuple[set[tuple], int]:
    """The (placement, model key) pairs to compile, at most ``budget``, of the ``todo`` cases
    (placement, cases in plan order); and how many models there were in all."""
    groups = _groups(todo)
    return _choose(groups, budget), len(groups)


def _groups(todo: list[tuple[Placement, list[Case]]]) -> dict[tuple, list[Case]]:
    """(placement, model key) -> its cases, in plan order."""
    groups: dict[tuple, list[Case]] = {}
    for placement, cases in todo:
        for case in cases:
            groups.setdefault((placement, model_key(case, placement)), []).append(case)
    return groups


def _choose(groups: dict[tuple, list[Case]], budget: int) -> set[tuple]:
    order = {g: i for i, g in enumerate(groups)}
    newest: dict[tuple, tuple] = {}  # (trigger, placement) -> the model of its newest spec version
    for g, cases in groups.items():
        for case in cases:
            name = _trigger(case)
            if name and ((name, g[0]) not in newest
                         or spec_sort_key(case.spec) > spec_sort_key(newest[(name, g[0])][0])):
                newest[(name, g[0])] = (case.spec, g)
    chosen: list[tuple] = []
    for _, g in newest.values():
        if g not in chosen and len(chosen) < budget:
            chosen.append(g)
    classes = {TRIGGER_CLASSES[name]: case.mode for cases in groups.values() for case in cases
               if (name := _trigger(case)) in TRIGGER_CLASSES}
    class_cells = {g: set().union(*(_class_cells(c, g[0], classes) for c in cases)) for g, cases in groups.items()}
    covered_classes = set().union(*(class_cells[g] for g in chosen))
    _greedy(class_cells, covered_classes, chosen, order, budget)
    cells = {g: set().union(*(_cells(c, g[0]) for c in cases)) for g, cases in groups.items()}
    covered = set().union(*(cells[g] for g in chosen))
    _greedy(cells, covered, chosen, order, budget)
    taken = set(chosen)
    rest = sorted((-len(cases), i, g) for i, (g, cases) in enumerate(groups.items()) if g not in taken)
    return taken | {g for _, _, g in rest[:max(0, budget - len(chosen))]}
