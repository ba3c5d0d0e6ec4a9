"""A run's cases: the spec documents' worked examples and the cases drawn for every selected
spec version, versions drawn side by side in child processes (padconf.run.draw_child); or the
cases of test directories (``padconf run --cases``)."""
from __future__ import annotations

import json

from padconf.adapters import adapter_class, get_adapter
from padconf.adapters.preconditions import PRECONDITION_TAG, precondition_cases
from padconf.cases.case import Case
from padconf.cases.edge_classes import edge_classes
from padconf.cases.examples import example_cases
from padconf.cases.plain import TRIGGER_TAG, upstream_triggers
from padconf.cases.strategies import draw_cases
from padconf.core.errors import CaseError
from padconf.execution.children import MAX_CHILD_DEATHS, map_in_children
from padconf.execution.worker_process import isolated
from padconf.run.config import RunConfig
from padconf.spec.loader import get_spec, load_specs
from padconf.suite.folders import read_cases

MAX_DRAW_CHILD_DEATHS = MAX_CHILD_DEATHS  # drawing children killed in turn before padconf gives up


def build_cases(config: RunConfig, jobs: int = 1) -> list[str]:
    """The spec examples, then generated cases, for every selected spec version, as cases.jsonl
    lines; the versions are drawn ``jobs`` at a time in separate processes (each draw depends
    only on its spec and the seed, so the cases are the same however many). Or the cases of
    ``config.cases_dir``, classified by the reference."""
    specs = load_specs(config.specs_dir, config.specs)
    if config.cases_dir is not None:
        selected = [s.id for s in specs]
        cases = [c for c in read_cases(config.cases_dir, load_specs(config.specs_dir)) if c.spec in selected]
        if not cases:
            raise CaseError(f"--cases: no case of the selected spec versions ({', '.join(selected)})")
        return [json.dumps(c.to_json()) for c in cases]
    args = [(config.specs_dir, spec.id, config.cases_per_spec(), config.seed) for spec in specs]
    # Below 40 cases a spec, starting processes costs more than it saves.
    if jobs > 1 and len(specs) > 1 and config.cases_per_spec() >= 40:
        drawn = _draw_in_children(args, min(jobs, len(specs)))
    else:
        drawn = [draw_spec(a) for a in args]
    lines = [line for lines in drawn for line in lines]
    return lines + _precondition_lines(config, specs, lines)


def _preconditions(name: str) -> tuple:
    """The runtime's declared preconditions; none for a plugin whose module does not import here
    (its worker then says it is unavailable, in one line, as for every runtime)."""
    try:
        return tuple(adapter_class(name).preconditions)
    except Exception:  # noqa: BLE001 -- a plugin's import may raise anything
        return ()


def _precondition_lines(config: RunConfig, specs, lines: list[str]) -> list[str]:
    """The cases that cover the declared precondition cells of the run's rewriters
    (padconf.adapters.preconditions) which its drawn cases leave uncovered, as cases.jsonl lines."""
    wanted = [name for name in config.runtimes if _preconditions(name)]
    if not wanted:
        return []
    cases = [Case.from_json(json.loads(line)) for line in lines]
    ids, added = {c.id for c in cases}, list[Case]()
    by_id = {s.id: s for s in specs}
    for name in wanted:
        for case in precondition_cases(get_adapter(name), specs, cases + added)[0]:
            if case.id not in ids:
                ids.add(case.id)
                case.tags = sorted(set(edge_classes(case, by_id[case.spec]) + [PRECONDITION_TAG]))
                added.append(case)
    return [json.dumps(c.to_json()) for c in added]


def draw_spec(args) -> list[str]:
    """A version's worked examples, drawn cases and the known upstream bugs' triggers (a case
    equal to one before it is that one: one id, one case)."""
    specs_dir, spec_id, n, seed = args
    spec = get_spec(spec_id, specs_dir)
    cases = example_cases(spec) + draw_cases(spec, n, seed=seed)
    ids = {c.id for c in cases}
    for trigger in upstream_triggers(spec):
        if trigger.id not in ids:
            trigger.tags = sorted(set(edge_classes(trigger, spec) + [TRIGGER_TAG]))
            cases.append(trigger)
    return [json.dumps(c.to_json()) for c in cases]


def _draw_in_children(args: list, jobs: int) -> list[list[str]]:
    """``draw_spec`` of each of ``args`` in ``jobs`` isolated child processes
    (padconf.run.draw_child), in the order of ``args``."""
    return map_in_children(lambda: isolated("padconf.run.draw_child"), args, jobs, "drawing cases")
