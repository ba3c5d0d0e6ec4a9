"""padconf's public API: what a script imports to compute, classify and run Pad cases, to make
and read runs, and to write an adapter. ``from padconf import ...`` gives the same names (the
package imports them on first use, so ``import padconf`` stays light). Documented in
docs/api.md; names beneath (``padconf.cases.case`` ...) may move between releases, these do not.

- the reference: ``pad`` (ONNX's pads layout, every mode, negative pads, axes) and
  ``INTERPRETATIONS`` (the readings of each point a document leaves undefined, keywords of
  ``pad``);
- specs: ``load_specs``, ``get_spec``, ``Spec``;
- cases: ``Case``, ``CaseKind``, ``classify`` (what a spec version says of a case);
- running: ``run_case`` (one case on one runtime, judged), ``run_cases`` with ``Run`` and
  ``RunConfig`` (a whole run into a run directory), ``load_run`` (a run directory read back);
- verdicts: ``Verdict``, ``Placement``, ``ResultRow``, ``RunData``;
- plugins: ``Adapter``, ``Outcome``, ``Refusal``, ``StandaloneRepro`` (docs/adapters.md).
"""
from __future__ import annotations

from padconf.adapters import Adapter, Refusal, StandaloneRepro
from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.core.errors import PadconfError
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, Worker
from padconf.judging.records import ResultRow, RunData, judged_row
from padconf.judging.verdicts import Verdict
from padconf.run.config import RunConfig
from padconf.run.rundir import load_run
from padconf.run.runner import Run
from padconf.run.session import run_cases
from padconf.spec.loader import Spec, get_spec, load_specs
from padconf.spec.reference import INTERPRETATIONS, pad

__all__ = ["INTERPRETATIONS", "Adapter", "Case", "CaseKind", "Outcome", "Placement", "Refusal", "ResultRow", "Run",
           "RunConfig", "RunData", "Spec", "StandaloneRepro", "Verdict", "classify", "get_spec", "load_run",
           "load_specs", "pad", "run_case", "run_cases"]


def run_case(case: Case, runtime: str, placement: Placement | str = Placement.INPUTS, *,
             timeout: float | None = None, memory_mb: int | None = None) -> ResultRow:
    """``case`` run once on ``runtime`` (a registered name, a variant ``name[option=value]`` or
    ``module:Class``) in ``placement``, in a worker process of its own, and judged against what
    its spec says: its result row (``row["verdict"]`` a ``Verdict``; the runtime's error text,
    output and the verdict's detail beside it). An unclassified case (``classify`` not yet
    asked) is classified first. A crash or hang of the runtime is its verdict, not an exception
    here; a runtime that is not installed is a PadconfError."""
    if case.expected is None and not case.interpretations and case.kind == CaseKind.DEFINED:
        case = classify(case)
    worker = Worker(runtime, memory_mb or DEFAULT_MEMORY_MB, timeout or DEFAULT_TIMEOUT_S)
    try:
        about = worker.describe([(case.spec, case.dtype)])
        if about["unavailable"]:
            raise PadconfError(f"runtime {runtime} unavailable: {about['unavailable']}")
        why_not = about["supports"][0]  # the adapter cannot put this case to its runtime: a skipped row
        outcome, status = ((Outcome(skipped=why_not), Status.OK) if why_not
                           else worker.run_alone(case, Placement(placement)))
    finally:
        worker.close()
    return judged_row(runtime, Placement(placement), case, outcome, status)
