"""What padconf writes, padconf reads back: a result row is small whatever its case holds (its
case's lists are whole once, in cases.jsonl), so a run's results.jsonl stays within what its
reader takes (docs/reliability.md)."""
from __future__ import annotations

import json

import numpy as np

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.core.vocabulary import Placement
from padconf.judging.records import MAX_ROW_LIST, RESULT_KEYS, check_row, result_row, shown_list
from padconf.judging.verdicts import Ruling, Verdict
from padconf.report.report import _example
from padconf.run.rundir import MAX_JSONL_BYTES
from padconf.spec.loader import get_spec

PADS = 8 * 2**20  # far more than a case from others may hold (MAX_PADS_ENTRIES): a row is small whatever a case holds


def test_a_case_with_millions_of_pads_gives_a_small_row_that_reads_back():
    """A Pad-2 case with 8M zero pads was copied into every row: a few rows passed the 128 MB
    padconf reads, and padconf refused its own run (run, report, --resume, gate --results: exit 2)."""
    spec = get_spec("onnx/Pad-2")
    case = classify(Case(spec="onnx/Pad-2", data=np.ones(1, np.float32), pads=[0] * PADS), spec)
    ruling = Ruling(Verdict.WRONGLY_ACCEPTED, "accepted " + "x" * 10**6)
    row = result_row("rt", Placement.INPUTS, case, Outcome(output=np.ones(1, np.float32), error="e" * 10**7), ruling)
    line = json.dumps(row)
    assert len(line) < 200_000
    assert len(row["pads"]) == MAX_ROW_LIST and row["elided"]["pads"] == PADS
    assert row["elided"]["error"] == 10**7
    again = check_row(json.loads(line), "results.jsonl:1", RESULT_KEYS)
    assert f"{PADS} in all" in shown_list(again, "pads") and f"{PADS} in all" in _example(again)
    # every runtime x placement of such cases together stays far within the reader's bound
    assert len(line) * 3 * 12 < MAX_JSONL_BYTES
