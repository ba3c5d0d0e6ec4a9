"""Which cases a run, a gate or the pytest plugin takes (CaseFilter): ``--mode``, ``--dtype`` and
``-k PATTERN``, one meaning for every front end. PATTERN is pytest's ``-k`` grammar: names
joined by ``and``, ``or``, ``not`` and parentheses, a name matching, case-insensitively, any
part of a case's id or title (its origin, its edge classes, its graph: ``Slice``)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from padconf.cases.case import Case
from padconf.core.dtypes import ALL_DTYPES
from padconf.core.errors import PadconfError, did_you_mean

MODES = ("constant", "reflect", "edge", "wrap")  # every Pad mode a spec document names
MAX_PATTERN_CHARS = 1000
# parentheses and "not"s nested: the parser and the matcher it builds recurse a few frames a level,
# and 400 parentheses (within MAX_PATTERN_CHARS) passed the interpreter's recursion limit (exit 3)
MAX_PATTERN_DEPTH = 64
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def _compile(pattern: str) -> Callable[[Callable[[str], bool]], bool]:
    """pytest's -k grammar: or_expr := and_expr ("or" and_expr)*; and_expr := not_expr ("and"
    not_expr)*; not_expr := "not" not_expr | "(" or_expr ")" | NAME. A PadconfError names what
    is wrong."""
    tokens = _TOKEN.findall(pattern)
    if len(pattern) > MAX_PATTERN_CHARS or "".join(tokens) != "".join(pattern.split()):
        raise PadconfError(f"-k {pattern[:80]!r}: not a pattern (names, and, or, not, parentheses)")
    at = 0

    def take(word: str | None = None) -> str:
        nonlocal at
        if at >= len(tokens) or (word is not None and tokens[at] != word):
            raise PadconfError(f"-k {pattern[:80]!r}: expected {word or 'a name'} at "
                               f"{' '.join(tokens[at:at + 2]) or 'its end'!r}")
        at += 1
        return tokens[at - 1]

    def or_expr(depth: int):
        parts = [and_expr(depth)]
        while at < len(tokens) and tokens[at] == "or":
            take()
            parts.append(and_expr(depth))
        return lambda m: any(p(m) for p in parts)

    def and_expr(depth: int):
        parts = [not_expr(depth)]
        while at < len(tokens) and tokens[at] == "and":
            take()
            parts.append(not_expr(depth))
        return lambda m: all(p(m) for p in parts)

    def not_expr(depth: int):
        if depth > MAX_PATTERN_DEPTH:  # before recursing further: the parser's frames, and the matcher's
            raise PadconfError(f"-k {pattern[:80]!r}: parentheses and 'not' nested more than "
                               f"{MAX_PATTERN_DEPTH} deep")
        if at < len(tokens) and tokens[at] == "not":
            take()
            inner = not_expr(depth + 1)
            return lambda m: not inner(m)
        if at < len(tokens) and tokens[at] == "(":
            take()
            inner = or_expr(depth + 1)
            take(")")
            return inner
        name = take()
        if name in ("and", "or", ")"):
            raise PadconfError(f"-k {pattern[:80]!r}: expected a name, not {name!r}")
        return lambda m: m(name)

    found = or_expr(0)
    if at != len(tokens):
        raise PadconfError(f"-k {pattern[:80]!r}: unexpected {tokens[at]!r}")
    return found


def case_title(case: Case) -> str:
    """The words ``-k`` matches besides a case's id: its origin, edge classes and graph."""
    return " ".join([case.origin, *case.tags, *([case.graph] if case.graph else [])])


@dataclass(frozen=True)
class CaseFilter:
    """``--mode``, ``--dtype``, ``-k``: None takes every case."""
    modes: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    pattern: str | None = None

    def __post_init__(self):
        for name, known in (("mode", MODES), ("dtype", ALL_DTYPES)):
            for value in getattr(self, f"{name}s") or ():
                if value not in known:
                    raise PadconfError(f"--{name} {value!r}: unknown{did_you_mean(str(value), known)}; "
                                       f"known: {', '.join(known)}")
        if self.pattern is not None:
            _compile(self.pattern)  # a bad pattern is said before anything runs

    @property
    def active(self) -> bool:
        """Whether it leaves cases out: then no spec version's suite is whole (a baseline's
        signature entries are not judged)."""
        return bool(self.modes or self.dtypes or self.pattern)

    def words(self) -> str:
        """The filter as options, for a refusal that none is left."""
        return " ".join([*(f"--mode {m}" for m in self.modes or ()), *(f"--dtype {d}" for d in self.dtypes or ()),
                         *([f"-k {self.pattern!r}"] if self.pattern else [])])

    def matches(self, case: Case, title: str | None = None) -> bool:
        """``case`` is taken; ``title``: what ``-k`` matches besides its id (default case_title)."""
        if self.modes and case.mode not in self.modes:
            return False
        if self.dtypes and case.dtype not in self.dtypes:
            return False
        if self.pattern:
            text = f"{case.id} {case_title(case) if title is None else title}".lower()
            return _compile(self.pattern)(lambda name: name.lower() in text)
        return True

    def apply(self, cases: list[Case]) -> list[Case]:
        """The cases taken; none taken from some is a PadconfError (never pass on nothing)."""
        if not self.active:
            return cases
        taken = [c for c in cases if self.matches(c)]
        if cases and not taken:
            raise PadconfError(f"no case of the {len(cases)} matches {self.words()}")
        return taken
