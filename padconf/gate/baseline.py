"""A baseline: a runtime's known failures, as YAML, which the gate forgives.

A file is a list of entries. An entry names the runtime (a regular expression), the verdict
it forgives and why (one line), and the cells it was seen failing in: each ``SPEC MODE DTYPE
PLACEMENT``, listed one by one, so that an entry forgives nothing it was not seen doing.
``error`` is a regular expression searched in the runtime's error text (or a mismatch's
description); ``case`` (a case id) narrows an entry to one case, ``origin`` (a regular
expression over the case's origin, e.g. ``example:example_3_edge``) to cases of that origin;
``after`` (a case id) to a failure that recurs only when that case ran before it in the same
worker process (a state-dependent pair: padconf.gate.compare finds them). ``unstable: true`` marks
failures the runtime showed in some of the baseline's runs and not in others (it reads memory it
never wrote, or an earlier case corrupted its heap): such an entry forgives them when they show,
and is never reported fixed when they do not. ``link`` points at the upstream report. Example::

    - runtime: onnxruntime
      verdict: not-implemented
      error: Could not find an implementation for Pad\\(19\\)
      cells:
      - onnx/Pad-19 constant bfloat16 inputs
      - onnx/Pad-19 constant bfloat16 initializers
      why: no bfloat16 Pad kernel on the CPU provider
      link: https://github.com/microsoft/onnxruntime/issues/...

A failure of an explored case (``padconf gate --explore``) is forgiven in any placement of a
listed cell's spec, mode and dtype: exploration lands where the suite has no case.
"""
from __future__ import annotations

import difflib
import functools
import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import msgspec
import re2
import yaml

from padconf.adapters import split_release
from padconf.core.errors import CaseError
from padconf.core.escape import yaml_document
from padconf.core.untrusted import read_text, yaml_compose
from padconf.judging.failure import escape, failure_pattern
from padconf.judging.records import ResultRow
from padconf.judging.verdicts import FAILURES
from padconf.spec.loader import spec_sort_key

MAX_BASELINE_BYTES = 16 << 20
# YAML nodes a baseline may have, its aliases expanded: over twice the cells a 16 MB file holds
# written out (about 400,000); 2,000 aliases of one entry of 20,000 cells (40M) took minutes.
MAX_BASELINE_NODES = 1 << 20
# RE2's memory for one pattern (its programs and the DFAs it builds while matching; RE2's own
# default is 8 MiB): a pattern of padconf's (failure_pattern: at most 400 characters) needs a few
# KiB; one that needs more is refused when the baseline is read.
MAX_PATTERN_MEM = 1 << 20
# Distinct patterns a baseline may hold, so that all of them together stay within
# MAX_PATTERNS * MAX_PATTERN_MEM (1 GiB), checked before any is compiled; and the instructions
# of their programs in all, checked as each is compiled, which bounds the time compiling takes
# (RE2 compiles about 1.5M instructions a second): 300 patterns each just under RE2's default
# budget took 949 MB and 41 s, 800 ended in std::bad_alloc.
MAX_PATTERNS = 1024
MAX_PATTERN_INSTRUCTIONS = 1 << 20
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is our one line, not RE2's log on stderr
_RE2_OPTIONS.max_mem = MAX_PATTERN_MEM


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> str:
    """``text`` as RE2 can take it (UTF-8): a lone surrogate (a JSON ``"\\ud800"`` in a row from
    outside) as the text ``\\ud800``, as the one writer stores it, never an encoding error."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class _Pattern:
    """An RE2 pattern that takes any ``str`` (``_utf8``), the pattern's own text included."""

    def __init__(self, pattern: str):
        # a lone surrogate in the pattern matches the text ``\\udNNN`` that _utf8 makes of it
        self._re = re2.compile(_SURROGATE.sub(lambda m: f"\\\\u{ord(m[0]):04x}", pattern), _RE2_OPTIONS)
        self.programsize = self._re.programsize

    def search(self, text: str):
        return self._re.search(_utf8(text))

    def fullmatch(self, text: str):
        return self._re.fullmatch(_utf8(text))


@functools.lru_cache(maxsize=4096)
def compiled(pattern: str) -> _Pattern:
    """A baseline pattern compiled by RE2, which matches in time linear in the text: a pattern
    from a file padconf did not write cannot backtrack for ever (``(a+)+$``). RE2 has no
    backreferences or lookaround; such a pattern is refused when the baseline is read."""
    return _Pattern(pattern)

_Text = Annotated[str, msgspec.Meta(min_length=1)]
_FailureVerdict = Literal["mismatch", "wrongly-rejected", "wrongly-accepted", "not-implemented", "crash", "timeout",
                          "unexplained"]  # verdicts.FAILURES (a test holds them equal)


class EntryRecord(msgspec.Struct, forbid_unknown_fields=True):
    """A baseline entry as its file holds it: its keys, their types and the verdicts it may
    forgive, declared once; an unknown or mistyped key is refused (parse_baseline)."""
    runtime: _Text  # a pattern, whole-matched over the row's runtime
    verdict: _FailureVerdict
    why: _Text
    cells: Annotated[list[str], msgspec.Meta(min_length=1)]  # each 'SPEC MODE DTYPE PLACEMENT' (_cell_lines)
    case: str | None = None
    after: str | None = None
    origin: str | None = None  # a pattern, whole-matched over the row's origin
    error: str | None = None  # a pattern, searched in the row's error text
    link: str | None = None
    unstable: bool = False


PATTERN_KEYS = ("runtime", "origin")  # whole-match over the row's field
KEYS: tuple[str, ...] = EntryRecord.__struct_fields__


class Cell(NamedTuple):
    """Where a failure happens, as finely as an entry can say it."""
    spec: str
    mode: str
    dtype: str
    placement: str  # as a baseline file spells it: a cell naming no placement matches no row

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Cell:
        return cls(row["spec"], row["mode"], row["dtype"], row["placement"])

    @classmethod
    def parse(cls, text: str) -> Cell:
        words = text.split()
        if len(words) != 4:
            raise ValueError(f"a cell is 'SPEC MODE DTYPE PLACEMENT', got {text!r}")
        return cls(*words)

    def __str__(self) -> str:
        return " ".join(self)

    def sort_key(self) -> tuple:
        return (spec_sort_key(self.spec), self.mode, self.dtype, self.placement)


def explored(row: Mapping[str, Any]) -> bool:
    return str(row.get("origin", "")).startswith("explore")


@dataclass(frozen=True)
class BaselineEntry:
    runtime: str
    verdict: str
    why: str
    cells: frozenset[Cell] = frozenset()
    case: str | None = None
    after: str | None = None
    origin: str | None = None
    error: str | None = None
    link: str | None = None
    unstable: bool = False
    where: str = field(default="", compare=False)  # file:line, for messages
    cell_lines: dict = field(default_factory=dict, compare=False, hash=False)  # Cell -> its line in the file
    lines: tuple[int, int] = field(default=(0, 0), compare=False)  # [first, end) of its lines, 0-based

    def in_scope(self, row: Mapping[str, Any]) -> bool:
        """The row is one this entry speaks of (whatever its verdict): in one of its cells."""
        return Cell.of(row) in self.cells and self._about(row)

    def _about(self, row: Mapping[str, Any]) -> bool:
        return ((self.case is None or row["case_id"] == self.case)
                and (self.runtime is None or runtime_matches(self.runtime, str(row.get("runtime"))))
                and all(getattr(self, k) is None or compiled(getattr(self, k)).fullmatch(str(row.get(k)))
                        for k in PATTERN_KEYS if k != "runtime"))

    def speaks_of(self, spec_id: str) -> bool:
        return any(c.spec == spec_id for c in self.cells)

    def matches(self, row: Mapping[str, Any]) -> bool:
        """The row is the failure this entry forgives: in one of its cells (an explored case: in
        any placement of one), of its verdict and error, after its poisoner if it names one
        (padconf.gate.compare.confirm finds it)."""
        if row["verdict"] != self.verdict or not self._about(row):
            return False
        if self.after is not None and row.get("after") != self.after:
            return False
        if Cell.of(row) not in self.cells and not (explored(row) and Cell.of(row)[:3] in {c[:3] for c in self.cells}):
            return False
        return (self.error is None
                or compiled(self.error).search(row.get("error") or row.get("detail") or "") is not None)


def parse_baseline(text: str, where: str = "<baseline>") -> list[BaselineEntry]:
    """Entries of a baseline document; anything malformed is one CaseError naming ``where``
    and the line."""
    try:
        root = yaml_compose(text, where, MAX_BASELINE_NODES)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise CaseError(f"{where}{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode):
        raise CaseError(f"{where}:{root.start_mark.line + 1}: a baseline is a list of entries")
    checked = []
    for node in root.value:
        at = f"{where}:{node.start_mark.line + 1}"
        if not isinstance(node, yaml.MappingNode):
            raise CaseError(f"{at}: an entry is a mapping (runtime, verdict, cells, why, ...)")
        try:
            doc = yaml.safe_load(yaml.serialize(node))
        except (yaml.YAMLError, TypeError) as exc:  # a !!python/ tag, an unhashable key
            raise CaseError(f"{at}: not a baseline entry: {getattr(exc, 'problem', None) or exc}") from None
        # keys of several types (1: x beside why: y) cannot be sorted together: each as its text
        unknown = sorted((k for k in doc if k not in KEYS), key=lambda k: (type(k).__name__, str(k)))
        if unknown:
            raise CaseError(f"{at}: unknown key {unknown[0]!r}; an entry has {', '.join(KEYS)}")
        try:
            msgspec.convert(doc, EntryRecord, strict=True)
        except msgspec.ValidationError as exc:
            raise CaseError(f"{at}: {_entry_problem(str(exc), doc)}") from None
        checked.append((node, at, doc))
    _compile_patterns(checked, where)
    entries = []
    for node, at, doc in checked:
        cell_lines = _cell_lines(node, at)
        fields: dict = {k: " ".join(v.split()) if k == "why" else v for k, v in doc.items() if k != "cells"}
        entries.append(BaselineEntry(**fields, cells=frozenset(cell_lines), where=at, cell_lines=cell_lines,
                             lines=(node.start_mark.line, _end_line(node))))
    return entries


def _entry_problem(said: str, doc: dict) -> str:
    """msgspec's word for what is wrong with an entry, in the baseline's words."""
    missing = re.fullmatch(r"Object missing required field `(\w+)`", said)
    if missing:
        return f"the entry lacks {missing.group(1)!r}"
    if said.endswith("`$.verdict`"):
        return f"verdict {doc.get('verdict')!r} is not a failure ({', '.join(FAILURES)})"
    short = re.fullmatch(r"Expected `array` of length >= 1 - at `\$\.(\w+)`|"
                         r"Expected `str` of length >= 1 - at `\$\.(\w+)`", said)
    if short:
        return f"the entry lacks {(short.group(1) or short.group(2))!r}"
    return f"not a baseline entry: {said}"


def _compile_patterns(checked: Sequence[tuple[yaml.Node, str, dict]], where: str) -> None:
    """Compile every pattern of a baseline's entries (``(node, file:line, mapping)``) once,
    within the bounds above: their number before any is compiled, each one's memory, and the
    instructions of all as they are compiled; anything past them is one CaseError."""
    patterns: dict[str, tuple[str, str]] = {}  # pattern -> (file:line, key) of its first entry
    for _, at, doc in checked:
        for key in PATTERN_KEYS + ("error",):
            patterns.setdefault(doc.get(key) or "", (at, key))
    if len(patterns) > MAX_PATTERNS:
        raise CaseError(f"{where}: {len(patterns)} distinct patterns, more than {MAX_PATTERNS} (each may take "
                        f"{MAX_PATTERN_MEM >> 20} MiB of RE2's memory)")
    instructions = 0
    for pattern, (at, key) in patterns.items():
        try:
            instructions += compiled(pattern).programsize
        except re2.error as exc:
            raise CaseError(f"{at}: {key}: not a regular expression RE2 accepts: {_re2_text(exc)}") from None
        if instructions > MAX_PATTERN_INSTRUCTIONS:
            raise CaseError(f"{at}: {key}: the baseline's patterns compile to more than {MAX_PATTERN_INSTRUCTIONS} "
                            "RE2 instructions in all")


def _re2_text(exc: Exception) -> str:
    text = exc.args[0] if exc.args else exc
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)


def _end_line(node: yaml.Node) -> int:
    """The line after a node's last (its end mark stands at the next node's start, or at the
    end of its last line)."""
    return node.end_mark.line + (node.end_mark.column > 0)


def _cell_lines(node: yaml.MappingNode, at: str) -> dict[Cell, int]:
    """An entry's cells, each with its line (1-based) in the file."""
    cells = next((v for k, v in node.value if k.value == "cells"), None)
    if not isinstance(cells, yaml.SequenceNode) or not all(isinstance(c, yaml.ScalarNode) for c in cells.value):
        raise CaseError(f"{at}: 'cells' is a list of 'SPEC MODE DTYPE PLACEMENT' lines")
    lines = {}
    for item in cells.value:
        try:
            cell = Cell.parse(item.value)
        except ValueError as exc:
            raise CaseError(f"{at.rsplit(':', 1)[0]}:{item.start_mark.line + 1}: {exc}") from None
        lines[cell] = item.start_mark.line + 1
    return lines


def load_baseline(path: Path | str) -> list[BaselineEntry]:
    return read_baseline(path)[1]


def read_baseline(path: Path | str) -> tuple[str, list[BaselineEntry]]:
    """A baseline file's text and its entries."""
    text = read_text(path, MAX_BASELINE_BYTES)
    return text, parse_baseline(text, str(path))


_AT_RELEASE = re.compile(r"(.+)@[0-9\\.]+(?:\\.post[0-9]+)?")  # an entry's runtime written at a release


def runtime_matches(pattern: str, runtime: str) -> bool:
    """An entry's ``runtime`` pattern speaks of ``runtime`` at any release of it: a baseline
    made with onnxruntime (or onnxruntime@1.23.2) gates onnxruntime@1.25.1 too, so that an upgrade
    shows what it changes (``padconf gate --runtime NAME@NEW``)."""
    base = split_release(runtime)[0]
    at = _AT_RELEASE.fullmatch(pattern)
    patterns = [pattern] + ([at[1]] if at else [])
    return any(compiled(p).fullmatch(r) for p in patterns for r in {runtime, base})


def unnamed_runtime(entries: list[BaselineEntry], runtime: str) -> str | None:
    """One line where no entry of the baseline speaks of ``runtime`` (a baseline made for another
    runtime, or under another name: a variant, a module:Class), so that every failure of the gate
    counts as new; else None."""
    if any(runtime_matches(e.runtime, runtime) for e in entries):
        return None
    named = sorted({e.runtime for e in entries})
    return (f"the baseline holds no entry for runtime {runtime}"
            + (f" (its entries are for {', '.join(named)})" if named else " (it holds no entry at all)")
            + f": every failure of {runtime} counts as new; make its own with `padconf baseline --runtime {runtime}`")


def forgiving(entries: list[BaselineEntry], row: Mapping[str, Any]) -> BaselineEntry | None:
    """The first entry that forgives ``row``'s failure, if any."""
    return next((e for e in entries if e.matches(row)), None)


def baseline_entries(rows: list[ResultRow], by_case: bool = False,
                     unstable: Collection[tuple[str, str]] = ()) -> list[dict]:
    """Entries (as plain mappings, ready for YAML) forgiving every failure in ``rows``, each
    listing exactly the cells its failures were seen in: one per failing case with ``by_case``,
    else one per runtime, verdict and failure class (and poisoner, for a state-dependent one);
    the failures of ``unstable`` results (case id, placement) in entries of their own."""
    groups = defaultdict(list)
    for r in rows:
        if r["verdict"] in FAILURES:
            shaky = (r["case_id"], r["placement"]) in unstable
            what = r["case_id"] if by_case else failure_pattern(r, kind=not shaky)
            groups[(r["runtime"], r["verdict"], what, r.get("after"), shaky)].append(r)
    entries = []
    for (runtime, verdict, what, after, shaky), group in groups.items():
        entry: dict[str, Any] = {"runtime": escape(runtime), "verdict": verdict}
        if by_case:
            entry["case"] = what
        elif what != "^":
            entry["error"] = what
        if after:
            entry["after"] = after
        entry["why"] = _why(group[0], group)
        if shaky:
            entry["unstable"] = True
        entry["cells"] = [str(c) for c in sorted({Cell.of(r) for r in group}, key=Cell.sort_key)]
        entries.append(entry)
    return entries


def breadth(entry: BaselineEntry, rows: list[ResultRow]) -> float:
    """The cells ``entry`` admits over the cells of ``rows`` it forgives a failure in: 1.0 when
    it forgives nowhere it was not seen failing (inf when it forgives nothing there)."""
    failing = {Cell.of(r) for r in rows if entry.matches(r)}
    return len(entry.cells) / len(failing) if failing else float("inf")


def pruned(text: str, fixed: dict[BaselineEntry, set[Cell]]) -> str:
    """The baseline ``text`` without the lines of its fixed cells, and without the entries
    whose every cell is fixed; the rest (comments, wording) as it was."""
    lines, drop = text.splitlines(keepends=True), set[int]()
    for entry, cells in fixed.items():
        if cells >= entry.cells:
            drop.update(range(*entry.lines))
            continue
        for cell in cells:
            at = entry.cell_lines[cell] - 1
            if lines[at].strip().lstrip("- ").strip("'\"") != str(cell):
                raise CaseError(f"{entry.where.rsplit(':', 1)[0]}:{at + 1}: cannot remove cell {str(cell)!r} alone: "
                                "write one cell per line ('- SPEC MODE DTYPE PLACEMENT')")
            drop.add(at)
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


def _why(row: Mapping[str, Any], group: list[ResultRow]) -> str:
    """A first reason, for a person to review: how many results (a case in one placement; a
    rerun alone counts no result twice), what went wrong, where first seen."""
    what = (row.get("error") or row.get("detail") or row["verdict"]).splitlines()[0][:120]
    count = len({(r["case_id"], r["placement"]) for r in group})
    return f"{count} result{'s' * (count != 1)}; e.g. {row['case_id']}: {what}"


def dump_baseline(entries: list[dict], header: str) -> str:
    body = yaml_document(entries) if entries else "[]\n"
    return "".join(f"# {line}\n" for line in header.splitlines()) + body
