"""padconf: conformance test-suite generator and differential tester for the Pad operator.

Its public API (padconf.api, docs/api.md) is importable from here: ``from padconf import pad,
Case, classify, run_case``. Those names are imported on first use, so that ``import padconf``
(every command's first step) imports neither numpy nor a runtime."""
import os

# padconf's numpy work is on small arrays, in several processes at once (drawing cases, judging,
# one worker per core): OpenBLAS's own threads would only spin against them. Set before numpy is
# first imported; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__all__ = ["INTERPRETATIONS", "Adapter", "Case", "CaseKind", "Outcome", "Placement", "Refusal", "ResultRow", "Run",
           "RunConfig", "RunData", "Spec", "StandaloneRepro", "Verdict", "classify", "get_spec", "load_run",
           "load_specs", "pad", "run_case", "run_cases"]


def __getattr__(name: str):
    if name in __all__:
        from padconf import api
        return getattr(api, name)
    raise AttributeError(f"module 'padconf' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
