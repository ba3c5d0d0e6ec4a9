"""Closed vocabularies as types: a member is a str, equal to, hashed, formatted, printed and
written to JSON and YAML as its value, so rows, reports and test data read the same as when
they were strings."""
from __future__ import annotations

from enum import Enum

import yaml


class Word(str, Enum):
    """The base of padconf's vocabularies (verdicts.Verdict, cases.CaseKind, Placement ...).
    Python 3.11 formats a plain (str, Enum) member as ``Verdict.PASS``; these format as the value."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)

    def __repr__(self) -> str:
        return str.__repr__(self)


for _dumper in (yaml.SafeDumper, yaml.Dumper):  # yaml.safe_dump refuses a str subclass it was not told of
    _dumper.add_multi_representer(Word, lambda dumper, word: dumper.represent_str(str(word)))


class Placement(Word):
    """How a case's operands enter the model (padconf.cases.onnx_model): graph inputs fed at run time,
    initializers (constants the runtime may fold), or every input constant, data included."""

    INPUTS = "inputs"
    INITIALIZERS = "initializers"
    FOLDED = "folded"
    # ONNX Pad-1/2 take pads and value as attributes: a test folder's placement, never a run's
    ATTRIBUTES = "attributes"


# what a run's adapter may offer (an Adapter's placements); the folding path: every input of the
# Pad constant, so that the runtime may evaluate it while compiling
PLACEMENTS = (Placement.INPUTS, Placement.INITIALIZERS, Placement.FOLDED)


class Status(Word):
    """How a case ended in its worker (padconf.execution.worker_protocol): the ``status`` of a worker's
    answer, and what ``Worker.run`` yields with each outcome; verdicts.judge reads it."""
    OK = "ok"  # the runtime answered: an output, or its own error
    CRASH = "crash"  # the worker died on it (or ran out of memory and ended itself)
    TIMEOUT = "timeout"  # no answer within the time limit (or the adapter's own compile limit ran out)
