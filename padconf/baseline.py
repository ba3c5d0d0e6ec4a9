"""A baseline: a runtime's known failures, as YAML, which the gate forgives.

A file is a list of entries. An entry names the runtime (a regular expression), the verdict
it forgives and why (one line), and either one case (``case``: a case id) or a failure
signature: regular expressions over the row's ``spec``, ``mode``, ``dtype``, ``placement`` and
``origin`` (each must match whole) and ``error``, searched in the runtime's error text (or a
mismatch's description). ``link`` points at the upstream report. Example::

    - runtime: onnxruntime
      verdict: not-implemented
      dtype: bfloat16
      error: Could not find an implementation for Pad
      why: no bfloat16 Pad kernel on the CPU provider
      link: https://github.com/microsoft/onnxruntime/issues/...

A case-id entry is judged wherever its case ran; a signature entry covers every case it
matches, the ones a run draws tomorrow included.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import re2
import yaml

from .errors import CaseError
from .signature import escape, failure_pattern
from .specs import spec_sort_key
from .untrusted import read_text, yaml_depth_checked
from .verdicts import FAILURES

MAX_BASELINE_BYTES = 16 << 20
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is our one line, not RE2's log on stderr


@functools.lru_cache(maxsize=4096)
def compiled(pattern: str):
    """A baseline pattern compiled by RE2, which matches in time linear in the text: a pattern
    from a file padconf did not write cannot backtrack for ever (``(a+)+$``). RE2 has no
    backreferences or lookaround; such a pattern is refused when the baseline is read."""
    return re2.compile(pattern, _RE2_OPTIONS)

PATTERN_KEYS = ("runtime", "spec", "mode", "dtype", "placement", "origin")  # whole-match over the row's field
KEYS = PATTERN_KEYS + ("verdict", "case", "error", "why", "link")


@dataclass(frozen=True)
class Entry:
    runtime: str
    verdict: str
    why: str
    case: str | None = None
    spec: str | None = None
    mode: str | None = None
    dtype: str | None = None
    placement: str | None = None
    origin: str | None = None
    error: str | None = None
    link: str | None = None
    where: str = field(default="", compare=False)  # file:line, for messages

    def in_scope(self, row: dict) -> bool:
        """The row is one this entry speaks of (whatever its verdict)."""
        if self.case is not None and row["case_id"] != self.case:
            return False
        return all(getattr(self, k) is None or compiled(getattr(self, k)).fullmatch(str(row.get(k)))
                   for k in PATTERN_KEYS)

    def speaks_of(self, spec_id: str) -> bool:
        return self.spec is None or compiled(self.spec).fullmatch(spec_id) is not None

    def matches(self, row: dict) -> bool:
        """The row is the failure this entry forgives."""
        return (row["verdict"] == self.verdict and self.in_scope(row)
                and (self.error is None or compiled(self.error).search(row.get("error") or row.get("detail") or "") is not None))

    def describe(self) -> str:
        return f"{self.where}: {self.runtime} {self.verdict} ({self.case or 'signature'}): {self.why}"


def parse_baseline(text: str, where: str = "<baseline>") -> list[Entry]:
    """Entries of a baseline document; anything malformed is one CaseError naming ``where``
    and the line."""
    yaml_depth_checked(text, where)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise CaseError(f"{where}{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode):
        raise CaseError(f"{where}:{root.start_mark.line + 1}: a baseline is a list of entries")
    entries = []
    for node in root.value:
        at = f"{where}:{node.start_mark.line + 1}"
        if not isinstance(node, yaml.MappingNode):
            raise CaseError(f"{at}: an entry is a mapping (runtime, verdict, why, and case or a signature)")
        try:
            doc = yaml.safe_load(yaml.serialize(node))
        except (yaml.YAMLError, TypeError) as exc:  # a !!python/ tag, an unhashable key
            raise CaseError(f"{at}: not a baseline entry: {getattr(exc, 'problem', None) or exc}") from None
        unknown = sorted(k for k in doc if k not in KEYS)
        if unknown:
            raise CaseError(f"{at}: unknown key {unknown[0]!r}; an entry has {', '.join(KEYS)}")
        missing = [k for k in ("runtime", "verdict", "why") if not doc.get(k)]
        if missing:
            raise CaseError(f"{at}: the entry lacks {missing[0]!r}")
        bad = [k for k, v in doc.items() if v is not None and not isinstance(v, str)]
        if bad:
            raise CaseError(f"{at}: {bad[0]!r} must be text, got {type(doc[bad[0]]).__name__}")
        if doc["verdict"] not in FAILURES:
            raise CaseError(f"{at}: verdict {doc['verdict']!r} is not a failure ({', '.join(FAILURES)})")
        for key in PATTERN_KEYS + ("error",):
            try:
                compiled(doc.get(key) or "")
            except re2.error as exc:
                raise CaseError(f"{at}: {key}: not a regular expression RE2 accepts: {_re2_text(exc)}") from None
        entries.append(Entry(**{k: " ".join(v.split()) if k == "why" else v for k, v in doc.items()}, where=at))
    return entries


def _re2_text(exc: Exception) -> str:
    text = exc.args[0] if exc.args else exc
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)


def load_baseline(path: Path | str) -> list[Entry]:
    return parse_baseline(read_text(path, MAX_BASELINE_BYTES), str(path))


def forgiving(entries: list[Entry], row: dict) -> Entry | None:
    """The first entry that forgives ``row``'s failure, if any."""
    return next((e for e in entries if e.matches(row)), None)


def _alternatives(values, key=None) -> str:
    values = sorted(set(values), key=key)
    return escape(values[0]) if len(values) == 1 else "(" + "|".join(map(escape, values)) + ")"


def baseline_entries(rows: list[dict], by_case: bool = False) -> list[dict]:
    """Entries (as plain mappings, ready for YAML) forgiving every failure in ``rows``: one per
    failing case with ``by_case``, else one signature per runtime, verdict and failure class,
    narrowed to the versions, modes and dtypes it was seen on."""
    failing = [r for r in rows if r["verdict"] in FAILURES]
    if by_case:
        groups = defaultdict(list)
        for r in failing:
            groups[(r["runtime"], r["case_id"], r["verdict"])].append(r)
        return [{"runtime": escape(runtime), "case": case, "verdict": verdict,
                 "why": _why(group[0], group)} for (runtime, case, verdict), group in groups.items()]
    groups = defaultdict(list)
    for r in failing:
        groups[(r["runtime"], r["verdict"], failure_pattern(r))].append(r)
    entries = []
    for (runtime, verdict, pattern), group in groups.items():
        entry = {"runtime": escape(runtime), "verdict": verdict,
                 "spec": _alternatives((r["spec"] for r in group), spec_sort_key), "mode": _alternatives(r["mode"] for r in group),
                 "dtype": _alternatives(r["dtype"] for r in group)}
        failed_in = {r["placement"] for r in group}
        ids = {r["case_id"] for r in group}
        if failed_in < {r["placement"] for r in rows if r["runtime"] == runtime and r["case_id"] in ids}:
            entry["placement"] = _alternatives(failed_in)  # the same cases pass in another placement
        if pattern != "^":
            entry["error"] = pattern
        entry["why"] = _why(group[0], group)
        entries.append(entry)
    return entries


def _why(row: dict, group: list[dict]) -> str:
    """A first reason, for a person to review: how many results (a case in one placement; a
    rerun alone counts no result twice), what went wrong, where first seen."""
    what = (row.get("error") or row.get("detail") or row["verdict"]).splitlines()[0][:120]
    count = len({(r["case_id"], r["placement"]) for r in group})
    return f"{count} result{'s' * (count != 1)}; e.g. {row['case_id']}: {what}"


def dump_baseline(entries: list[dict], header: str) -> str:
    body = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100) if entries else "[]\n"
    return "".join(f"# {line}\n" for line in header.splitlines()) + body
