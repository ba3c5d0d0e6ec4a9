"""A whole run, as every front end makes one (the command line, the gate, a library user):
``run_cases`` takes a Run (padconf.run.runner) through its steps: its cases drawn or read back,
planned, run, their controls, and summary.md; ``Stages`` is how a front end shows them."""
from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from padconf.cases.case import Case
from padconf.core.errors import phase
from padconf.core.writing import write_markdown
from padconf.judging.records import RunData
from padconf.judging.verdicts import Verdict
from padconf.report.report import markdown
from padconf.run.rundir import SUMMARY, load_run, read_jsonl
from padconf.run.runner import Run


@dataclass
class Planned:
    """What a run will compute, as ``run_cases`` shows it before running."""
    cases: list[Case]
    batches: list[tuple[str, str, list[Case]]]  # Run.plan's: (runtime, placement, cases)
    todo: Counter[str]  # results to compute, per runtime
    skipped: int  # the skipped rows results.jsonl holds (cases an adapter cannot express)


class Stages(Protocol):
    """How a front end shows a run's stages: ``drawing`` around preparing the cases, ``running``
    around running them, yielding a ``progress(runtime)`` callback (or None)."""

    def drawing(self) -> contextlib.AbstractContextManager:
        """Entered while the cases are drawn or read."""
        raise NotImplementedError

    def running(self, planned: Planned) -> contextlib.AbstractContextManager:
        """Entered while ``planned`` runs; yields ``progress(runtime)``, called as each result is written, or None."""
        raise NotImplementedError


class Quiet:
    """Stages shown as nothing: a library user's run."""

    def drawing(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def running(self, planned: Planned) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()


def run_cases(run: Run, cases: list[Case] | None = None, stages: Stages | None = None) -> RunData:
    """Make the run ``run`` stands for, whole: its cases (``cases``, else drawn or read back),
    planned, run, their controls and summary.md (padconf.report.report.markdown); the run
    directory as read back (rundir.load_run)."""
    shown: Stages = stages or Quiet()
    with shown.drawing(), phase("drawing the cases"):
        cases = run.prepare(cases)
    with phase("asking the runtimes what they run"):
        batches = run.plan(cases)
    todo: Counter[str] = Counter()
    for name, _, batch in batches:
        todo[name] += len(batch)
    skipped = sum(r["verdict"] == Verdict.SKIPPED for r in read_jsonl(run.results_path))
    with shown.running(Planned(cases, batches, todo, skipped)) as advance:
        run.execute(batches, progress=advance)
    with phase("writing the summary"):
        data = load_run(run.dir, run.config.specs_dir)
        write_markdown(run.dir / SUMMARY, markdown(data.rows, data.cases_rows, run.notes))
    return data
