"""Fake runtimes that plant bugs, for testing padconf's own isolation and verdicts.

Each answers like the reference except on a trigger: the first data element equal to 666.
"""
import os
import signal
import sys
import time

import numpy as np

from padconf.adapters import Adapter, Outcome
from padconf.reference import pad

TRIGGER = 666


class CorrectAdapter(Adapter):
    name = "fake-correct"

    def run(self, case, placement="inputs"):
        if self.triggered(case):
            return self.misbehave(case)
        try:
            return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))
        except Exception as exc:
            return Outcome(error=str(exc))

    @staticmethod
    def triggered(case):
        return case.data.size > 0 and case.data.reshape(-1)[0] == TRIGGER

    def misbehave(self, case):
        raise NotImplementedError


class SegfaultAdapter(CorrectAdapter):
    def misbehave(self, case):
        os.kill(os.getpid(), signal.SIGSEGV)


class AbortAdapter(CorrectAdapter):
    def misbehave(self, case):
        os.abort()


class HangAdapter(CorrectAdapter):
    def misbehave(self, case):
        time.sleep(3600)


class GreedyAdapter(CorrectAdapter):
    def misbehave(self, case):
        hoard = []
        while True:
            hoard.append(np.ones(2**26, np.uint8))


class WrongValuesAdapter(CorrectAdapter):
    def misbehave(self, case):
        out = pad(case.data, case.pads, case.mode, case.constant_value, case.axes)
        return Outcome(np.flip(out).copy())  # right shape and dtype, values in the wrong places


class SlowAdapter(CorrectAdapter):
    """Correct, but slow enough for a test to kill the run half way."""

    def run(self, case, placement="inputs"):
        time.sleep(0.02)
        return super().run(case, placement)


class PoisonAdapter(CorrectAdapter):
    """Answers the trigger case correctly but corrupts itself: the next case, whatever it is,
    crashes, as a runtime that wrote out of bounds does."""

    poisoned = False

    def misbehave(self, case):
        PoisonAdapter.poisoned = True
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))

    def run(self, case, placement="inputs"):
        if PoisonAdapter.poisoned:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(case, placement)


class DeafAdapter(CorrectAdapter):
    """Answers the trigger case, then never reads its input again (a worker stuck outside any
    case, as OpenVINO's once was): a large batch sent after that must not block padconf."""

    def misbehave(self, case):
        requests = int(sys.argv[3])  # python -m padconf.worker ADAPTER MEMORY_MB REQUESTS_FD REPLIES_FD
        self._keep = os.pipe(), os.dup(requests)  # padconf's pipe stays open, just never read again
        os.dup2(self._keep[0][0], requests)  # the worker's input is now a pipe nobody writes to
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))
