"""What makes two failures the same, at each grain padconf asks it, owned here alone: a
result's failure class (failure_class; a baseline entry's pattern, failure_pattern), a run's
distinct failure (distinct_failure, failure_signature: with its triage class), what a result
was (result_outcome: a baseline's runs told apart), what must hold while shrinking
(failure_key) and the error class two minimized bugs are merged by (bug_class).

The class: the runtime's error text (or, for a mismatch, the kind of
difference) with its particulars blanked: paths, bracketed shapes and lists, numbers. What tells
failures apart stays: an op's version (``Pad(19)``), a dtype (``float16``, ``tensor(int8)``), a
signal (``SIGKILL``; SIGSEGV and SIGABRT are one), a mismatch's kind of wrong value. One tokenisation, two renderings: a
class text people read (``<..>``, ``N``) and a regular expression a baseline entry can hold,
which matches every text of that class."""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from padconf.core.dtypes import ALL_DTYPES
from padconf.judging.triage import Triage, triage
from padconf.judging.verdicts import FAILURES, Verdict

# A bracketed group is a particular when it holds numbers and no word (a shape, a list), not
# when it follows a word ("Pad(19)": an op's version) or holds one ("tensor(float16)").
# A number is one only standing alone: "float16", "lts_2024" and "Pad(19)" keep theirs. A
# node's generated name is one too: an op type and a serial the runtime counts up per process
# ("Split_21253", "Convert_24890": OpenVINO), which split one failure into a group per model.
_PARTICULARS = re.compile(r"(?P<serial>(?<![\w.])[A-Z][A-Za-z0-9]*_\d{3,}(?!\w))"
                          r"|(?P<path>/[\w./-]+)"
                          r"|(?P<group>(?<!\w)(?:\{[^{}A-Za-z]*\d[^{}A-Za-z]*\}|\[[^\[\]A-Za-z]*\d[^\[\]A-Za-z]*\]"
                          r"|\([^()A-Za-z]*\d[^()A-Za-z]*\)))"
                          r"|(?P<number>(?<![\w.])(?<!\w\()-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w))"
                          r"|(?P<heap>SIGSEGV|SIGABRT)")
# A corrupted heap kills the process by SIGSEGV or by SIGABRT (glibc's check), whichever trips
# first, and that differs from run to run of one case (openvino-onnx): one class. Other
# signals (SIGKILL for memory, SIGFPE, SIGBUS) stay their own.
_SHOWN = {"serial": lambda name: name.rpartition("_")[0] + "_N", "path": "<path>", "group": "<..>", "number": "N",
          "heap": "SIGSEGV/SIGABRT"}
_PATTERN = {"serial": lambda name: escape(name.rpartition("_")[0]) + r"_\d+", "path": r"\S+",
            "group": r"[\[({].*?[\])}]", "number": r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", "heap": "SIG(?:SEGV|ABRT)"}
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
        shown = kinds[m.lastgroup]
        out += [literal(text[at:m.start()]), shown(m.group()) if callable(shown) else shown]
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


def result_outcome(row: Mapping[str, Any]) -> tuple[str, str | None, str]:
    """What a result was, as a baseline's runs tell results apart: its verdict and failure
    pattern, and its output (garbage read from memory never written differs from run to run)."""
    return (row["verdict"], failure_pattern(row) if row["verdict"] in FAILURES else None,
            json.dumps(row.get("output"), sort_keys=True))


def failure_key(row: Mapping[str, Any]) -> tuple:
    """What must stay the same while shrinking (padconf.minimize.shrink.loop): the verdict, the
    failure class, the case's kind and its reason (the rule or ambiguity) with numbers masked."""
    reason = row.get("reason")
    masked = None if reason is None else failure_class({"verdict": "", "error": reason})
    return row["verdict"], failure_class(row), row["kind"], masked


_C_TYPES = r"(unsigned |signed )?(char|short|int|long|long long|float|double)"  # C++ template arguments
_GROUP = re.compile(r"[\[({][^\[\](){}]*[\])}]")


@functools.cache
def _type_words(type_names: frozenset[str]) -> re.Pattern:
    return re.compile(r"\b(" + "|".join(sorted({*ALL_DTYPES, *type_names}, key=len, reverse=True))
                      + "|" + _C_TYPES + r")\b")


def bug_class(row: Mapping[str, Any], type_names: Collection[str] = ()) -> tuple[str, str | None]:
    """The error class and masked reason by which two minimized failures are one bug to file
    (padconf.minimize.probes.root_cause): failure_key's, with more masked: a mismatch's kind of
    wrong value (garbage changes it from run to run), for an answer no reading gives which
    undefined points the version names (its wording, not the bug), C++ template arguments,
    quoted words, every bracketed group, and dtype names: padconf's and the runtime's own
    spellings (``type_names``: Adapter.type_names, OpenVINO's ``f8e5m2``)."""
    verdict, error_class, _, reason = failure_key(row)
    if verdict == Verdict.MISMATCH:
        error_class = error_class.split(" (")[0]
    if verdict == Verdict.UNEXPLAINED:
        error_class, reason = error_class.rsplit(":", 1)[-1], None
    error_class = _type_words(frozenset(type_names)).sub("<dtype>", re.sub(r"\[with .*", "[with ..]", error_class))
    error_class = re.sub(r"'[^']*'", "<..>", error_class)  # Python's "Issues with types [<class ...>, ...]"
    while (unbracketed := _GROUP.sub("<..>", error_class)) != error_class:
        error_class = unbracketed
    return error_class, reason
