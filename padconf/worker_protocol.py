"""What padconf and its worker processes say to each other: the one vocabulary both sides use
(``padconf.worker_child`` runs in the worker processes; ``padconf.worker_process`` and
``padconf.worker`` drive them from padconf's side).

padconf talks to a runtime's zygote over a socket (JSON messages; a fork request carries the
new worker's pipes and logs as file descriptors) and to a worker over two pipes of its own,
JSON lines:

- the zygote first says ``{"ready": true, "unavailable": null | why}``, after importing the
  adapter and its runtime (a module:Class that fails to import is "unavailable", not a crash);
  ``{"op": "describe", "pairs": [[spec, dtype], ...]}`` -> ``{"version", "placements", "domains",
  "target", "supports": [null | why, ...]}`` (the parent never imports an adapter itself);
  ``{"op": "fork"}`` -> ``{"pid"}``; ``{"op": "wait", "pid"}`` -> ``{"status"}`` (how it ended);
- a worker says READY, then answers ``{"op": "run", "placement": p, "compile_timeout": s,
  "cases": [case inputs, ...]}`` with one line per case as it finishes (``{"status", "error",
  "not_implemented", "output", "printed", "seconds"}``), so that when it dies the parent knows
  which case killed it, forks a new one and resends the rest (an adapter that compiles ahead
  of time first says BUILDING whenever it compiles a model, and then has the compile time
  limit, not the run's, to answer); and answers ``{"op": "model", "model": base64 ONNX bytes,
  "feeds": {name: array}}`` (a user's whole model, for ``padconf minimize``) with ``{"status",
  "error", "outputs": [array, ...]}``.
"""
from __future__ import annotations

from enum import Enum
from typing import Literal


class _Word(str, Enum):
    """A member is a str, equal to, formatted and written to JSON as its value (Python 3.11
    formats a plain (str, Enum) member as ``Status.OK``). Merge note: the same as the
    vocabularies' base elsewhere; one base, once both are in."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:
        return str.__format__(self, format_spec)


class Status(_Word):
    """How a case ended in its worker: the ``status`` of a worker's answer, and what
    ``Worker.run`` yields with each outcome. A str, so rows and verdicts take it as it is."""
    OK = "ok"  # the runtime answered: an output, or its own error
    CRASH = "crash"  # the worker died on it (or ran out of memory and ended itself)
    TIMEOUT = "timeout"  # no answer within the time limit (or the adapter's own compile limit ran out)


# What ended a wait for a worker's line, when no line came: it is gone, or the deadline passed.
Ended = Literal[Status.CRASH, Status.TIMEOUT]


class Op(_Word):
    """What padconf asks: of a zygote (DESCRIBE, FORK, WAIT) or of a worker (RUN, MODEL)."""
    DESCRIBE = "describe"
    FORK = "fork"
    WAIT = "wait"
    RUN = "run"
    MODEL = "model"


READY = '{"ready": true}'  # a new worker's first line
BUILDING = '{"building": true}'  # a worker's line: an ahead-of-time compile begins (Adapter.announce_build)
