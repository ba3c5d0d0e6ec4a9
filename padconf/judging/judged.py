"""One judgement for every front end (``padconf run`` and ``padconf gate``'s runner, the pytest
plugin): cases run in a worker and judged (judged_batch: a must-reject case's refusal counts once
its repaired twin is accepted), a failure's control (control_row: where the same data through
Identity fails too, the failure is not Pad-specific), and what a test framework makes of a row
(test_outcome)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import cast

from padconf.cases.case import Case, CaseKind
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import Worker
from padconf.judging.failure import distinct_failure
from padconf.judging.records import ControlRow, ResultRow, result_row
from padconf.judging.verdicts import Ruling, Verdict, confirm_refusal, control_record, judged


def judged_batch(runtime: str, placement: Placement, batch: list[Case], worker: Worker,
                 twin_of: Callable[[Case], Case | str], target: str | None = None) -> Iterator[ResultRow]:
    """The row of each case of ``batch`` run by ``worker`` in ``placement``, as it is judged: at
    once, but for a must-reject case the runtime refused, whose rows come after the batch, once
    their repaired twins (``twin_of``: classify.repaired_twin, or why there is none) ran in the
    same worker and placement (verdicts.confirm_refusal)."""
    refused = []
    for case, (outcome, _, ruling) in zip(batch, worker.run_judged(batch, placement, judged)):
        assert isinstance(ruling, Ruling)  # judged's
        if case.kind == CaseKind.MUST_REJECT and ruling.verdict == Verdict.PASS:
            refused.append((case, outcome, ruling, worker.placed))
        else:
            yield result_row(runtime, placement, case, outcome, ruling, worker.placed, target)
    twins = [twin_of(case) for case, *_ in refused]
    ran = iter(worker.run([t for t in twins if isinstance(t, Case)], placement))
    for (case, outcome, ruling, placed), twin in zip(refused, twins):
        twin_ran = next(ran) if isinstance(twin, Case) else (None, Status.OK)
        yield result_row(runtime, placement, case, outcome, confirm_refusal(ruling, twin, *twin_ran), placed, target)


def control_row(row: ResultRow, case: Case, worker: Worker) -> ControlRow:
    """The control of the failure ``row`` (``case``'s, in its placement), each experiment alone
    in a fresh worker process (verdicts.control_record), as controls.jsonl holds it and a
    failing row carries it as ``control`` (padconf.judging.triage reads it first)."""
    record = control_record(case, row["placement"], worker.run_alone, row["verdict"])
    return cast(ControlRow, {"failure": list(distinct_failure(row)), **record})


def test_outcome(row: ResultRow) -> str | None:
    """Why a row is no pass a test framework should count, or None: a skipped result (the adapter
    cannot express the case) or an inconclusive one (padconf could not judge it: its own fault, a
    refusal its repaired twin could not confirm, a case too large to check). Such a test is
    skipped, in the plugin and the gate's JUnit XML alike, with this reason."""
    if row["verdict"] == Verdict.SKIPPED:
        return f"{row['runtime']} cannot run it: {row.get('detail')}"
    if row["verdict"] == Verdict.INCONCLUSIVE:
        return f"inconclusive: {row.get('detail') or row.get('error') or row.get('reason')}"
    return None
