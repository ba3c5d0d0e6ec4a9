"""The gate's cases: the fixed suite, drawn cases to explore and the example database's replays
(gate_cases), and one shard's part of them. Sharding splits the cases by a hash of their id, so
the N shards are disjoint, their union is the whole, and a case stays in its shard whatever
else is drawn."""
from __future__ import annotations

import hashlib
import re

from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.gate.explore import replayed
from padconf.spec.loader import Spec

MAX_SHARDS = 4096  # a gate's shard count: each shard is a CI job


def parse_shard(text: str) -> tuple[int, int]:
    """"I/N" (1 <= I <= N <= MAX_SHARDS, ASCII digits: ``\\d`` took "١/٢" and 10**5000 digits)
    as (I, N)."""
    m = re.fullmatch(r"([0-9]{1,5})/([0-9]{1,5})", text or "", re.ASCII)
    if not m or not 1 <= int(m[1]) <= int(m[2]) <= MAX_SHARDS:
        raise PadconfError(f"--shard {text!r}: expected I/N with 1 <= I <= N <= {MAX_SHARDS}, e.g. 2/4")
    return int(m[1]), int(m[2])


def in_shard(case_id: str, shard: tuple[int, int] | None) -> bool:
    if shard is None:
        return True
    index, count = shard
    return int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % count == index - 1


def gate_suite(specs: list[Spec], frameworks: bool = False) -> list[tuple[str, Case]]:
    """The fixed part of the gate's cases, each once, with its name in the suite
    (test_pad19_reflect_float_crop_mixed_3): what padconf.pytest.plugin parametrises over. The
    same for a padconf version and its spec files, whatever ``--seed`` explores. A framework's
    document's cases (torch/Pad-2) are in it with ``frameworks`` (the gate of an exporter)."""
    # Hypothesis: imported to draw cases, not to judge rows (tests/docs/test_layers.py)
    from padconf.suite.fixed import suite_cases
    unique: dict[str, tuple[str, Case]] = {}
    for entry in suite_cases(specs, frameworks=frameworks):
        unique.setdefault(entry.case.id, (entry.name, entry.case))
    return list(unique.values())


def gate_cases(specs: list[Spec], seed: int = 0, explore: int = 0, db=None,
               frameworks: bool = False) -> list[Case]:
    """The suite, then ``explore`` cases per version drawn with ``seed``, then the database's
    replays; each case once."""
    from padconf.cases.strategies import draw_cases  # as in gate_suite
    cases = [case for _, case in gate_suite(specs, frameworks)]
    for spec in specs:
        if explore:
            cases += [c.with_(origin="explore") for c in draw_cases(spec, explore, seed)]
        if db is not None:
            cases += replayed(db, spec)
    unique: dict[str, Case] = {}
    for case in cases:
        unique.setdefault(case.id, case)
    return list(unique.values())
