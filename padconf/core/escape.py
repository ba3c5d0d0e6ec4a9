"""Text from runtimes and files (error texts, runtime and folder names, paths) shown as data,
never as markup or terminal control: one function per place it is shown. (The HTML report
escapes with ``html.escape``.)"""
from __future__ import annotations

import re

from rich.markup import escape as _rich_escape

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL, C1: ESC sequences move the cursor, recolour
# Every format character (Unicode's Cf: bidi controls, as in Trojan Source, zero-width ones, the
# soft hyphen, the TAG block that can spell words nobody sees), besides the fillers and variation
# selectors that render as nothing, line and paragraph separators and lone surrogates: shown as
# \uNNNN (\UNNNNNNNN past the BMP)
_INVISIBLE = re.compile("["  # Unicode 14.0.0's Cf (test_escaping holds this Python's to it), then the rest
                        "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
                        "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
                        "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2028\u2029\u3164\ufe00-\ufe0f\uffa0"
                        "\ud800-\udfff\U000e0100-\U000e01ef]")


def _code_point(m: re.Match) -> str:
    c = ord(m[0])
    return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"


def docstring(text) -> str:
    """``text`` as the inside of a triple-quoted docstring of generated Python: no backslash it
    holds starts an escape, and no quote ends it."""
    return str(text).replace("\\", "\\\\").replace('"""', "\'\'\'")


def plain(text) -> str:
    """``text`` on one line with its control characters visible as ``\\xNN`` and its bidi and
    invisible format characters as ``\\uNNNN``: safe to print."""
    return _INVISIBLE.sub(_code_point, _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", str(text)))


def terminal(text) -> str:
    """``plain`` text for rich's console: a ``[/red]`` in it is printed, not parsed as markup."""
    return _rich_escape(plain(text))


_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|", "`": "\\`", "[": "\\[", "]": "\\]",
             "*": "\\*", "~": "\\~"}  # emphasis and strike-through too
_FLANKING_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # an _ inside a word emphasises nothing
_JOINER = "\u2060"  # WORD JOINER: invisible, and no autolink or mention spans it
# What GitHub makes live in plain text, where no markup shows it: an autolink (scheme://, www.)
# a mention (@user, @org/team), which also notifies its owner, or an e-mail address (a@b.c, and
# onnxruntime@1.23.2 reads as one): the joiner goes after every @.
_LIVE = re.compile(r"(?i)(?<=[a-z0-9+.-])(?=://)|(?<=www)(?=\.)|(?<=@)")


class Markdown(str):
    """Markdown padconf wrote itself from its own data (an upstream issue's link): ``markdown``
    passes it as it is; everything else is text to escape."""


def markdown(text) -> str:
    """``text`` for markdown (summary.md, a PR comment, a bundle's REPORT.md), a table cell
    included: one line, no HTML tag, link, image or emphasis, no cell break, and no autolink
    (``https://``, ``www.``) or ``@mention``, which the word joiner after them breaks. A
    ``Markdown`` value is padconf's own and passes as it is."""
    if isinstance(text, Markdown):
        return text
    text = _INVISIBLE.sub(_code_point, _CONTROL.sub(" ", str(text)))
    text = _FLANKING_UNDERSCORE.sub(r"\\_", "".join(_MARKDOWN.get(c, c) for c in text))
    return _LIVE.sub(_JOINER, text)


def markdown_code(text) -> str:
    """``text`` as one markdown code span: its fence longer than any run of backticks in it (so
    that none ends the span), and inside a span no markup, HTML or link is live; control and
    invisible characters as ``\\xNN`` / ``\\uNNNN``."""
    text = plain(text)
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""  # as CommonMark strips
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_block(text) -> list[str]:
    """``text`` (an error, several lines) as the lines of a fenced markdown code block whose
    fence is longer than any run of backticks in it, so that nothing in it ends the block."""
    text = _INVISIBLE.sub(_code_point, str(text))
    lines = [_CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", line) for line in text.strip().splitlines()]
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))
    return [fence, *lines, fence]
