"""padconf's exception types: every refusal is one of these, with a one-line reason."""


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
