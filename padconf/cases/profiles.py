"""The drawing profiles by name: cases drawn per spec version by `padconf run --profile NAME`, and
pytest's budget. Apart from padconf.cases.strategies, so that what only names a profile (the
command line, a run's configuration) does not import Hypothesis."""
from __future__ import annotations

from typing import Any

PROFILES: dict[str, dict[str, Any]] = {
    "ci": dict(max_examples=40, derandomize=True),
    "default": dict(max_examples=250, derandomize=False),
    "thorough": dict(max_examples=2500, derandomize=False),
}
