"""What a runtime did with a case, as adapters report it and verdicts judge it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Outcome:
    output: np.ndarray | None = None
    error: str | None = None  # the runtime's own text when it refused the case
    not_implemented: bool = False  # the runtime says it has no kernel for this dtype / version
    note: str | None = None  # what padconf saw besides the outcome (e.g. a crash it retried)
    printed: dict | None = None  # what the runtime wrote to stdout / stderr during the case
    seconds: float | None = None  # how long the runtime took (model build included)
    skipped: str | None = None  # why the adapter could not put the case to the runtime at all
    fault: str | None = None  # why this is padconf's own fault (or a plugin's), not the runtime's answer


def error_text(exc: BaseException) -> str:
    """A runtime's exception as one line."""
    return " ".join(str(exc).split())[:1000] or type(exc).__name__
