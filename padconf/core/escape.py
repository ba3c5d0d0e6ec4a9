"""Text from runtimes and files (error texts, runtime and folder names, paths) shown as data,
never as markup or terminal control: one function per place it is shown. (The HTML report
escapes with ``html.escape``.)"""
from __future__ import annotations

import re

from rich.markup import escape as _rich_escape

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL, C1: ESC sequences move the cursor, recolour


def plain(text) -> str:
    """``text`` on one line with its control characters visible as ``\\xNN``: safe to print."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", str(text))


def terminal(text) -> str:
    """``plain`` text for rich's console: a ``[/red]`` in it is printed, not parsed as markup."""
    return _rich_escape(plain(text))


_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|", "`": "\\`", "[": "\\[", "]": "\\]"}


def markdown(text) -> str:
    """``text`` for a markdown table cell: one line, no HTML tag, link or image, no cell break."""
    return "".join(_MARKDOWN.get(c, c) for c in _CONTROL.sub(" ", str(text)))
