"""padconf's exception types: every refusal is one of these, with a one-line reason."""


class PadconfError(Exception):
    """Base class: the message is one line, fit to print as it is."""


class PadError(PadconfError, ValueError):
    """The reference refuses a Pad input (bad pads, axes, mode, dtype, too large, or an
    undefined point whose selected interpretation is 'reject')."""


class SpecError(PadconfError):
    """A spec file is broken: the message names the file, the key path and the problem."""


class CaseError(PadconfError):
    """A case, baseline or results file is malformed."""
