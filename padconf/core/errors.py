"""padconf's exception types: every refusal is one of these, with a one-line reason."""
from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterable, Iterator


class PadconfError(Exception):
    """Base class: the message is one line, fit to print as it is."""


class PadError(PadconfError, ValueError):
    """The reference refuses a Pad input (bad pads, axes, mode, dtype, or an undefined point
    whose selected interpretation is 'reject'). ``rule`` names what it breaks: a key of the spec
    files' rules or ambiguities (e.g. "pads_length", "mirror_beyond_dim"), so that nothing has to
    read the rule back out of the message."""

    def __init__(self, message: str, rule: str | None = None):
        super().__init__(message)
        self.rule = rule


class TooLargeToCheck(PadError):
    """The output would exceed the reference's allocation bound: padconf's own limit, not a rule
    of any spec, so such a case is never must-reject, only too large to check."""


class SpecError(PadconfError):
    """A spec file is broken: the message names the file, the key path and the problem."""


class CaseError(PadconfError):
    """A case, baseline or results file is malformed."""


class InternalFault(PadconfError):
    """padconf's own fault, not the user's input: a helper process gone and not to be started
    again, a drawing child that died. The command line says so with exit 3, not 2."""


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """An exception leaving the block carries ``name`` (the innermost phase's) as
    ``padconf_phase``: what padconf was doing, for the one line that reports its own fault."""
    try:
        yield
    except BaseException as exc:
        if not hasattr(exc, "padconf_phase"):
            try:
                exc.padconf_phase = name  # type: ignore[attr-defined]
            except AttributeError:  # an exception type without a __dict__
                pass
        raise


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """" (did you mean 'x'?)" for the choice closest to a mistyped ``word``, or "" when none is
    close: the tail of a one-line refusal of an unknown name."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
