"""Every installed runtime over every worked example of the spec documents, in both placements,
through the real worker isolation. An example either passes or is a listed, explained
discrepancy (tests/known_discrepancies.yaml): the shape of a CI gate."""
import re
from pathlib import Path

import pytest
import yaml

from padconf.adapters import REGISTRY, get_adapter
from padconf.examples import example_cases
from padconf.specs import load_specs
from padconf.verdicts import PASS, judge
from padconf.worker import Worker

KNOWN = yaml.safe_load((Path(__file__).with_name("known_discrepancies.yaml")).read_text())
CASES = [case for spec in load_specs() for case in example_cases(spec)]


def expected_verdict(runtime: str, key: str) -> tuple[str, str | None]:
    for entry in KNOWN:
        if re.fullmatch(entry["runtime"], runtime) and re.match(entry["match"], key):
            return entry["verdict"], entry["why"]
    return PASS, None


@pytest.fixture(scope="module", params=sorted(REGISTRY))
def runtime_verdicts(request):
    name = request.param
    adapter = get_adapter(name)
    if adapter.available():
        pytest.skip(adapter.available())
    worker = Worker(name)
    verdicts = {}
    try:
        for placement in adapter.placements:
            batch = [c for c in CASES if adapter.supports(c.spec, c.dtype) is None]
            for case, (outcome, status) in zip(batch, worker.run(batch, placement)):
                key = f"{case.spec}:{case.origin.split(':', 1)[1]}:{placement}"
                verdicts[key] = judge(case, outcome, status)
    finally:
        worker.close()
    return name, verdicts


def test_examples_pass_or_are_known_discrepancies(runtime_verdicts):
    name, verdicts = runtime_verdicts
    assert verdicts, f"{name} ran no example"
    problems = []
    for key, got in sorted(verdicts.items()):
        want, why = expected_verdict(name, key)
        if got.verdict != want:
            problems.append(f"{name} {key}: {got.verdict} ({(got.detail or '')[:120]}), expected {want}"
                            + (f" [known: {why[:60]}...]" if why else ""))
    assert not problems, "\n".join(problems)


def test_every_known_discrepancy_names_real_examples():
    keys = {f"{c.spec}:{c.origin.split(':', 1)[1]}:" for c in CASES}
    for entry in KNOWN:
        assert any(re.match(entry["match"], k) for k in keys), entry["match"]
        assert entry["why"].strip() and entry["verdict"] != PASS
