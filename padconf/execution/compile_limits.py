"""The compile time limit of each build of an ahead-of-time compiler, adapted to its graph.

A compiler that hangs on a graph tends to hang on its family's other graphs too (iree-compile
on wrap pads given as constants, iree-org/iree#24585): waiting the whole limit on each would
cost a cold run most of its time. So the first hang of a family (the op, its mode, and whether
the pads are constants in the graph) waits the whole limit; the family's later builds get a
shorter one: ``HUNG_FAMILY_FACTOR`` times the median build of the run that finished, at least
``HUNG_FAMILY_FLOOR_S``, at most the whole limit. A build that runs out of it is a timeout
like any other (its outcome's note says the limit was shortened), kept in the compile cache
with that limit, which a later run's same or shorter limit takes as it is.
"""
from __future__ import annotations

import statistics
import threading

from padconf.cases.case import Case
from padconf.cases.onnx_model import opset_version
from padconf.core.vocabulary import Placement

HUNG_FAMILY_FLOOR_S = 10.0
HUNG_FAMILY_FACTOR = 5


def family(case: Case, placement: str) -> tuple:
    """The graphs a compiler's hang is taken to recur on: op, mode, pads constant or fed (a
    framework's call, not ONNX's, has its pads in the graph)."""
    return case.op, case.mode, placement != Placement.INPUTS or not case.spec.startswith("onnx/") \
        or opset_version(case) <= 2


class CompileLimits:
    """One compiler's limits over a run, shared by its lanes' workers."""

    def __init__(self, limit: float):
        self.limit = limit
        self._hung: set[tuple] = set()
        self._finished: list[float] = []  # seconds of each build that finished in time
        self._lock = threading.Lock()

    def for_case(self, case: Case, placement: str) -> float:
        """The limit of ``case``'s build: the whole one unless its family has hung before."""
        with self._lock:
            if family(case, placement) not in self._hung:
                return self.limit
            typical = statistics.median(self._finished) if self._finished else 0.0
            return min(self.limit, max(HUNG_FAMILY_FLOOR_S, HUNG_FAMILY_FACTOR * typical))

    def record(self, case: Case, placement: str, seconds: float, timed_out: bool) -> None:
        """A build of ``case`` that took ``seconds`` and finished, or ran out of its limit."""
        with self._lock:
            if timed_out:
                self._hung.add(family(case, placement))
            else:
                self._finished.append(seconds)
