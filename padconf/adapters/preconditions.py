"""The preconditions a graph rewriter's Pad passes look at, declared as data
(``Adapter.preconditions``), and the cases that make every run of the rewriter cover each of
their cells at least once (``precondition_cases``), as the compile budget covers a compiler's
cells.

A ``Precondition`` names the features (padconf.cases.context_cells.FEATURES) of the graphs its
pass rewrites (``holds``: the fusion fires there), and per feature the values next to it
(``varied``: a mode, a value, a consumer attribute the pass must leave alone or handle). Its
cells: ``holds`` itself, then ``holds`` with one feature changed to each varied value, then the
``also`` cells. A run's drawn cases rarely hold a whole precondition (constant mode, a zero or
absent value, constant pads, a Conv with no auto_pad, and axes besides), so the run adds, for each
cell no drawn case covers in the rewriter's placements, one built case (``cell_case``) of the
newest selected spec version the rewriter runs that can express it."""
from __future__ import annotations

from dataclasses import dataclass, field

from padconf.cases.case import Case
from padconf.cases.context_cells import cell_case, covers, expressible, features
from padconf.core.vocabulary import Placement
from padconf.spec.loader import Spec, spec_sort_key

PRECONDITION_TAG = "precondition"  # a built case's origin starts so: precondition:<pass>:<cell>


@dataclass(frozen=True)
class Precondition:
    pass_name: str
    holds: dict[str, str]
    varied: dict[str, tuple[str, ...]] = field(default_factory=dict)
    also: tuple[dict[str, str], ...] = ()

    def cells(self) -> list[dict[str, str]]:
        found = [dict(self.holds)] + [{**self.holds, k: v} for k, vs in self.varied.items() for v in vs]
        found += [{**self.holds, **more} for more in self.also]
        return [c for i, c in enumerate(found) if c not in found[:i]]


def cell_name(cell: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(cell.items()))


def declared_cells(preconditions) -> list[tuple[str, dict[str, str]]]:
    """(pass, cell) for each cell of each precondition, in declaration order."""
    return [(p.pass_name, cell) for p in preconditions for cell in p.cells()]


def coverage(preconditions, cases: list[Case], placements) -> tuple[list, list]:
    """(covered, uncovered) (pass, cell) pairs of ``preconditions`` over ``cases`` run in each of
    ``placements``."""
    found = [features(c, Placement(p)) for c in cases if c.context is not None for p in placements]
    covered: list[tuple[str, dict[str, str]]] = []
    uncovered: list[tuple[str, dict[str, str]]] = []
    for pass_cell in declared_cells(preconditions):
        (covered if any(covers(f, pass_cell[1]) for f in found) else uncovered).append(pass_cell)
    return covered, uncovered


def precondition_cases(adapter, specs: list[Spec], cases: list[Case]) -> tuple[list[Case], list[str]]:
    """The cases ``adapter``'s run adds so that its declared precondition cells are each covered
    once (over ``cases``, the run's drawn ones, and those added), each of the newest of ``specs``
    that the adapter runs and that can express the cell; and a line per cell none of them can."""
    runs = sorted((s for s in specs if adapter.supports(s.id, "float") is None), key=lambda s: spec_sort_key(s.id),
                  reverse=True)
    _, uncovered = coverage(adapter.preconditions, cases, adapter.placements)
    added: list[Case] = []
    lines = []
    for pass_name, cell in uncovered:
        if added and coverage([_one(pass_name, cell)], added, adapter.placements)[0]:
            continue  # a case added for an earlier cell covers it
        spec = next((s for s in runs if expressible(s, cell)), None)
        case = None if spec is None else cell_case(spec, cell, f"{PRECONDITION_TAG}:{pass_name}:{cell_name(cell)}")
        if case is None:
            lines.append(f"{adapter.name}: {pass_name}'s precondition cell {cell_name(cell)} is not covered: "
                         "no selected spec version it runs can express it")
            continue
        added.append(case)
    return added, lines


def _one(pass_name: str, cell: dict[str, str]) -> Precondition:
    return Precondition(pass_name, cell)
