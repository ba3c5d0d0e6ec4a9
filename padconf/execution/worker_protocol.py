"""What padconf and its worker processes say to each other: the one vocabulary both sides use
(``padconf.execution.worker_child`` runs in the worker processes; ``padconf.execution.worker_process`` and
``padconf.execution.worker`` drive them from padconf's side).

padconf talks to a runtime's zygote over a socket (JSON messages; a fork request carries the
new worker's pipes and logs as file descriptors) and to a worker over two pipes of its own,
JSON lines:

- the zygote first says ``{"ready": true, "unavailable": null | why, "order_independent": bool}``,
  after importing the adapter and its runtime (a module:Class that fails to import is
  "unavailable", not a crash);
  ``{"op": "describe", "pairs": [[spec, dtype], ...]}`` -> ``{"version", "placements", "domains",
  "target", "supports": [null | why, ...]}`` (the parent never imports an adapter itself);
  ``{"op": "fork"}`` -> ``{"pid"}``; ``{"op": "wait", "pid"}`` -> ``{"status"}`` (how it ended);
- a worker says READY, then answers ``{"op": "run", "placement": p, "compile_timeout": s,
  "raw": n, "cases": [case inputs, ...]}`` followed by n raw bytes (the cases in Case.wire's
  form, their arrays' bytes in order, one request a batch; one case at a time where the adapter
  is not order_independent) with one answer per case as it finishes: a line (``{"status",
  "output", "seconds"}`` and, where set, ``"error", "not_implemented", "printed", "skipped",
  "note", "fault"``; the output a dtypes.raw_array header) followed by the output's raw bytes
  (a ``fault``, why the answer is padconf's own fault and not the runtime's, ends the worker
  after its answer), so that when it
  dies the parent knows which case killed it, forks a new one and resends the rest (an adapter
  that compiles ahead of time first says BUILDING whenever it compiles a model, and then has the
  compile time limit, not the run's, to answer); and answers ``{"op": "model", "model": base64
  ONNX bytes, "feeds": {name: array}}`` (a user's whole model, for ``padconf minimize``) with
  ``{"status", "error", "outputs": [array, ...], "fault"}``.
"""
from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

from padconf.core.vocabulary import Status, Word

__all__ = ["Status", "Ended", "Op", "READY", "BUILDING", "encode_line", "decode_line"]

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()


def encode_line(doc: dict) -> bytes:
    """A worker's request or answer as JSON text: msgspec's writer, since one is written a case
    (its cost: docs/performance.md); json's where msgspec writes no JSON for it (a lone
    surrogate in a runtime's text, which json escapes as ``\\udXXX``)."""
    try:
        return _ENCODER.encode(doc)
    except (msgspec.EncodeError, ValueError):  # UnicodeEncodeError is a ValueError
        return json.dumps(doc).encode()


def decode_line(line: bytes | str) -> Any:
    """The JSON value of one request or answer line: msgspec's reader; json's for what only
    json.dumps writes (NaN, an escaped lone surrogate), and json's error for a line that is no
    JSON at all."""
    try:
        return _DECODER.decode(line)
    except msgspec.DecodeError:
        return json.loads(line)


# What ended a wait for a worker's line, when no line came: it is gone, or the deadline passed.
Ended = Literal[Status.CRASH, Status.TIMEOUT]


class Op(Word):
    """What padconf asks: of a zygote (DESCRIBE, FORK, WAIT) or of a worker (RUN, MODEL)."""
    DESCRIBE = "describe"
    FORK = "fork"
    WAIT = "wait"
    RUN = "run"
    MODEL = "model"


READY = '{"ready": true}'  # a new worker's first line
BUILDING = '{"building": true}'  # a worker's line: an ahead-of-time compile begins (Adapter.announce_build)
