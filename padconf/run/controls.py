"""A run's controls: for every distinct failure (failure.distinct_failure), its first case's data
through an Identity model on the same runtime and placement (and its empty pads or axes, where
they are baked in: verdicts.control_record), each alone in a fresh worker, written to
controls.jsonl (results.jsonl's rows stay as they were written); rundir.attach_controls gives
each failing row its failure's control. Where the control fails, the failure is not
Pad-specific (padconf.judging.triage)."""
from __future__ import annotations

import concurrent.futures
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.core.writing import write_atomically
from padconf.execution.worker import Worker, WorkerClosed
from padconf.judging.failure import distinct_failure
from padconf.judging.judged import control_row
from padconf.judging.records import ControlRow, ResultRow
from padconf.judging.verdicts import FAILURES
from padconf.run.config import RunConfig
from padconf.run.rundir import CASES, CONTROLS, RESULTS, RowsFile, read_jsonl, read_results


def run_controls(run_dir: Path, config: RunConfig, jobs: int, spares: dict[str, Worker],
                 then: Callable[[str], None] | None = None) -> list[str]:
    """Run and write the controls of the run in ``run_dir``; the notes on those that could not
    run. ``spares``: a lane's worker per runtime, its process ended, whose zygote a control
    forks from (taken from the dict: a fresh zygote would import the runtime again). ``then``
    is told what runs, once the results are in (padconf.core.progress.Advance.then)."""
    groups: dict[tuple, list[ResultRow]] = {}
    for row in read_results(run_dir / RESULTS):
        if row["verdict"] in FAILURES:
            groups.setdefault(distinct_failure(row), []).append(row)
    if not groups:
        return []
    wanted = {group[0]["case_id"] for group in groups.values()}
    cases = {doc["id"]: Case.from_json(doc) for doc in read_jsonl(run_dir / CASES) if doc.get("id") in wanted}
    by_runtime: dict[str, list[list[ResultRow]]] = {}
    for group in groups.values():
        if group[0]["case_id"] in cases:
            by_runtime.setdefault(group[0]["runtime"], []).append(group)
    notes: list[str] = []
    if then is not None:
        then(f"running the controls of {sum(map(len, by_runtime.values()))} distinct failures (each one's first "
             "case through Identity, alone in a fresh worker): " + ", ".join(sorted(by_runtime)))

    def controls(name: str) -> list[ControlRow]:
        records: list[ControlRow] = []
        worker = spares.pop(name, None) or Worker(name, config.memory_mb, config.timeout,
                                                  compile_timeout=config.compile_timeout)
        not_run: Counter[str] = Counter()  # why a control could not run: its failure stays uncontrolled
        try:
            for group in by_runtime[name]:
                first = group[0]
                try:
                    records.append(control_row(first, cases[first["case_id"]], worker))
                except WorkerClosed:
                    raise
                except PadconfError as exc:  # the runtime could not be started again
                    not_run[str(exc)] += 1
        finally:
            worker.close()
        notes.extend(f"{name}: {n} controls could not run ({why}); their failures have no control"
                     for why, n in not_run.items())
        return records

    # the runtimes side by side, the one with the most controls first: the others share the
    # other threads meanwhile, rather than one thread running it alone at the end
    order = sorted(by_runtime, key=lambda name: -len(by_runtime[name]))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        done = dict(zip(order, pool.map(controls, order)))
    records = [r for name in by_runtime for r in done[name]]
    write_atomically(run_dir / CONTROLS, "".join(map(RowsFile(run_dir / CONTROLS).line, records)))
    return notes
