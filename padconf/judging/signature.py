"""What makes two failures the same: the runtime's error text (or, for a mismatch, the kind of
difference) with its particulars blanked: paths, bracketed shapes and lists, numbers. What tells
failures apart stays: an op's version (``Pad(19)``), a dtype (``float16``, ``tensor(int8)``), a
signal (``SIGKILL``; SIGSEGV and SIGABRT are one), a mismatch's kind of wrong value. One tokenisation, two renderings: a
class text people read (``<..>``, ``N``) and a regular expression a baseline entry can hold,
which matches every text of that class."""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from padconf.judging.triage import Triage, triage
from padconf.judging.verdicts import Verdict

# A bracketed group is a particular when it holds numbers and no word (a shape, a list), not
# when it follows a word ("Pad(19)": an op's version) or holds one ("tensor(float16)").
# A number is one only standing alone: "float16", "lts_2024" and "Pad(19)" keep theirs.
_PARTICULARS = re.compile(r"(?P<path>/[\w./-]+)"
                          r"|(?P<group>(?<!\w)(?:\{[^{}A-Za-z]*\d[^{}A-Za-z]*\}|\[[^\[\]A-Za-z]*\d[^\[\]A-Za-z]*\]"
                          r"|\([^()A-Za-z]*\d[^()A-Za-z]*\)))"
                          r"|(?P<number>(?<![\w.])(?<!\w\()-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w))"
                          r"|(?P<heap>SIGSEGV|SIGABRT)")
# A corrupted heap kills the process by SIGSEGV or by SIGABRT (glibc's check), whichever trips
# first, and that differs from run to run of one case (openvino-onnx): one class. Other
# signals (SIGKILL for memory, SIGFPE, SIGBUS) stay their own.
_SHOWN = {"path": "<path>", "group": "<..>", "number": "N", "heap": "SIGSEGV/SIGABRT"}
_PATTERN = {"path": r"\S+", "group": r"[\[({].*?[\])}]", "number": r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?",
            "heap": "SIG(?:SEGV|ABRT)"}
MAX_CHARS = 400  # ORT puts a source path and a C++ signature before what went wrong


def _text(row: Mapping[str, Any]) -> str:
    """The first line of what the row says went wrong; for a mismatch only its kind
    ("values differ first at [..] (NaN where numbers belong)", "shape [..] instead of [..]"),
    not the values."""
    text = row.get("error") or row.get("detail") or ""
    if row["verdict"] == Verdict.MISMATCH:
        text = (row.get("detail") or "").split(":")[0]
    elif row["verdict"] == Verdict.UNEXPLAINED:  # the undefined point and what the runtime did, not the readings'
        text = ":".join((row.get("detail") or "").split(":")[:2])
    elif row["verdict"] == Verdict.CRASH:  # glibc's last words name whichever check the heap tripped first
        text = text.split("; last words:")[0]
    return text.splitlines()[0][:MAX_CHARS] if text else ""


def _render(text: str, kinds: dict, literal) -> str:
    out, at = [], 0
    for m in _PARTICULARS.finditer(text):
        out += [literal(text[at:m.start()]), kinds[m.lastgroup]]
        at = m.end()
    return "".join(out + [literal(text[at:])])


def escape(text: str) -> str:
    """``re.escape`` that leaves spaces, dashes and quotes alone, for patterns people read."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def failure_class(row: Mapping[str, Any]) -> str:
    return _shown(_text(row)) or "(no text)"


@functools.lru_cache(maxsize=4096)
def _shown(text: str) -> str:  # a run's rows hold a few hundred texts, which each report section classes
    return _render(text, _SHOWN, str)


def distinct_failure(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """What makes two failing rows one distinct failure: runtime, verdict and failure class."""
    return row["runtime"], row["verdict"], failure_class(row)


def failure_signature(row: Mapping[str, Any]) -> tuple[str, str, str, Triage]:
    """One distinct failure of a run (padconf.report.report.failures' groups): distinct_failure and the
    triage class, which the row's control (``row["control"]``) and padconf/judging/upstream.yaml decide.
    A failure that also shows through an Identity model is not the Pad bug beside it."""
    return (*distinct_failure(row), triage(row)[0])


def failure_pattern(row: Mapping[str, Any], kind: bool = True) -> str:
    """A regular expression (for ``re.search``) matching the start of the error text of every
    failure of ``row``'s class; with ``kind=False``, of a mismatch's every kind of wrong value
    (garbage read from memory never written is now a value the output lacks, now one misplaced)."""
    text = _text(row)
    if not kind and row["verdict"] == Verdict.MISMATCH:
        text = text.split(" (")[0]
    return "^" + _render(text, _PATTERN, escape)
