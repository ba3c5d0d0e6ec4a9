"""Every installed runtime over every worked example of the spec documents, in both placements,
through the real worker isolation. An example either passes or is a listed, explained
discrepancy (tests/known_discrepancies.yaml): the shape of a CI gate."""
import re
from pathlib import Path

import pytest

from padconf.adapters import get_adapter, registry
from padconf.adapters.rewriters import RewriterAdapter
from padconf.cases.examples import example_cases
from padconf.execution.worker import Worker
from padconf.gate.baseline import load_baseline
from padconf.gate.compare import judge_rows
from padconf.gate.junit import problem_lines
from padconf.judging.records import judged_row
from padconf.spec.loader import load_specs

BASELINE = Path(__file__).resolve().parents[1] / "known_discrepancies.yaml"
SPECS = load_specs()
CASES = [case for spec in SPECS for case in example_cases(spec)]


@pytest.fixture(scope="module", params=sorted(registry()))
def runtime_rows(request):
    name = request.param
    adapter = get_adapter(name)
    if adapter.compiles_ahead:  # hundreds of compiles of seconds each: test_compilers.py runs them on a few
        pytest.skip(f"{name} is an ahead-of-time compiler, tested in tests/runtimes/test_compilers.py")
    if adapter.available():
        pytest.skip(adapter.available())
    if isinstance(adapter, RewriterAdapter):
        pytest.skip(f"{name} is a graph rewriter, tested in tests/runtimes/test_rewriters.py")
    worker = Worker(name)
    rows = []
    try:
        for placement in adapter.placements:
            batch = [c for c in CASES if adapter.supports(c.spec, c.dtype) is None]
            for case, (outcome, status) in zip(batch, worker.run(batch, placement)):
                rows.append(judged_row(name, placement, case, outcome, status))
    finally:
        worker.close()
    return name, rows


@pytest.mark.slow
def test_examples_pass_or_are_known_discrepancies(runtime_rows):
    """padconf gates itself with the gate's own judgement: a new failure or a fixed entry fails."""
    name, rows = runtime_rows
    ids = {s.id for s in SPECS}
    judgement = judge_rows(rows, load_baseline(BASELINE), name, ids)
    assert not judgement.new and not judgement.fixed, "\n".join(problem_lines(judgement))


def test_every_known_discrepancy_names_real_examples():
    origins = {(c.spec, c.origin) for c in CASES}
    for entry in load_baseline(BASELINE):
        assert any(entry.speaks_of(spec) and re.fullmatch(entry.origin, origin)
                   for spec, origin in origins), entry.where
