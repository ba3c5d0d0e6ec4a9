"""Text from runtimes and files (error texts, runtime and folder names, paths) shown as data,
never as markup or terminal control: one function per place it is shown.

Each medium's escaped text is a type of its own (``Terminal``, ``Markdown``, ``Html``, ``Xml``,
``PySource``), made only by its escaper here (or, for padconf's own fixed text, by naming the
type: ``Markdown("# padconf run summary")``), and the medium's writer
(``padconf/core/writing.py::write_markdown``, ``write_html``, ``write_xml``, ``write_python``)
takes that type and no other: a ``str`` from outside written without its escaper is a mypy
error where it is written (tests/robustness/test_escaper_types.py)."""
from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable
from typing import NewType

import yaml
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


def _hex(m: re.Match) -> str:
    return f"\\x{ord(m[0]):02x}"


Terminal = NewType("Terminal", str)  # text safe to print: ``plain``, ``terminal``
Html = NewType("Html", str)  # text of an HTML page: ``html``
Xml = NewType("Xml", str)  # an XML document's text (JUnit): ``xml``, then ElementTree
PySource = NewType("PySource", str)  # generated Python: ``python_literal`` for every value in it
Yaml = NewType("Yaml", str)  # a YAML document's text: ``yaml_document``


def yaml_document(value, *, width: int = 100, sort_keys: bool = False) -> Yaml:
    """``value`` as a YAML document of ASCII text: every other character (bidi controls and
    invisible format characters among them, which a reviewer of a committed baseline would not
    see) is written as a double-quoted escape, which reads back as itself."""
    return Yaml(yaml.safe_dump(value, sort_keys=sort_keys, allow_unicode=False, width=width))


def docstring(text) -> str:
    """``text`` as the inside of a triple-quoted docstring of generated Python: no backslash it
    holds starts an escape, and no quote ends it."""
    return str(text).replace("\\", "\\\\").replace('"""', "\'\'\'")


def plain(text) -> Terminal:
    """``text`` on one line with its control characters visible as ``\\xNN`` and its bidi and
    invisible format characters as ``\\uNNNN``: safe to print."""
    return Terminal(_INVISIBLE.sub(_code_point, _CONTROL.sub(_hex, str(text))))


def terminal(text) -> Terminal:
    """``plain`` text for rich's console: a ``[/red]`` in it is printed, not parsed as markup."""
    return Terminal(_rich_escape(plain(text)))


_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # C0 but tab and newlines, DEL, C1


def _shown_in_lines(text) -> str:
    """``text`` with each control character but tab and newlines as ``\\xNN`` and each bidi or
    invisible format character as ``\\uNNNN``, as ``plain`` shows them, its lines kept."""
    return _INVISIBLE.sub(_code_point, _CONTROL_BUT_LINES.sub(_hex, str(text)))


def html(text) -> Html:
    """``text`` as the text of an HTML element or a quoted attribute: no tag, entity or quote
    of it is live (its lines kept, for a ``<pre>``), and each control character (C1 included) as
    ``\\xNN`` and each bidi or invisible format character as ``\\uNNNN``, as ``xml`` shows them
    (attack round F: a runtime's U+202E and an ESC OSC-8 link reached the page raw)."""
    return Html(_html.escape(_shown_in_lines(text), quote=True))


# What XML 1.0 forbids in a document (C0 controls but tab and newlines, lone surrogates, U+FFFE,
# U+FFFF): ElementTree writes them as they are, and the file no longer parses.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml(text) -> Xml:
    """``text`` (a baseline's why, a runtime's error, a case's id: none written by padconf) with
    each character XML 1.0 forbids, each control character (C1 included: CSI moves a terminal's
    cursor when a CI log shows the file) as ``\\xNN``, and each bidi or invisible format character
    as ``\\uNNNN``, as ``plain`` shows them: the file parses and shows its text as it is
    (ElementTree then escapes markup)."""
    text = _shown_in_lines(text)
    return Xml(_NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text))


_LITERALS = (bool, int, float, str, bytes, type(None))


def python_literal(value) -> PySource:
    """``value`` as Python source: ``repr()`` of a literal (numbers, text, bytes, None, and lists,
    tuples and dicts of them), which evaluates back to ``value`` and runs nothing; anything else
    (an object whose repr is code) is refused."""
    def check(v) -> None:
        if isinstance(v, (list, tuple)):
            for item in v:
                check(item)
        elif isinstance(v, dict):
            for k, item in v.items():
                check(k)
                check(item)
        elif type(v) not in _LITERALS:
            raise TypeError(f"not a literal padconf writes as Python: {type(v).__name__}")
    check(value)
    return PySource(repr(value))


_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|", "`": "\\`", "[": "\\[", "]": "\\]",
             "*": "\\*", "~": "\\~", "$": "\\$"}  # emphasis, strike-through and math too
_FLANKING_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # an _ inside a word emphasises nothing
_JOINER = "\u2060"  # WORD JOINER: invisible, and no autolink or mention spans it
# What GitHub makes live in plain text, where no markup shows it: an autolink (scheme://, www.)
# a mention (@user, @org/team), which also notifies its owner, or an e-mail address (a@b.c, and
# onnxruntime@1.23.2 reads as one): the joiner goes after every @; an issue reference (#1,
# owner/repo#1, GH-1), which puts a "mentioned this" event on that issue: after # or GH.
_LIVE = re.compile(r"(?i)(?<=[a-z0-9+.-])(?=://)|(?<=www)(?=\.)|(?<=@)|(?<=#)(?=\d)|(?<=\bgh)(?=-\d)")


class Markdown(str):
    """Markdown padconf wrote itself from its own data (an upstream issue's link): ``markdown``
    passes it as it is; everything else is text to escape."""


def markdown(text) -> Markdown:
    """``text`` for markdown (summary.md, a PR comment, a bundle's REPORT.md), a table cell
    included: one line, no HTML tag, link, image, emphasis or math, no cell break, and no
    autolink (``https://``, ``www.``), ``@mention`` or issue reference (``#1``, ``a/b#1``,
    ``GH-1``), which the word joiner after them breaks. A ``Markdown`` value is padconf's own and
    passes as it is."""
    if isinstance(text, Markdown):
        return text
    text = _INVISIBLE.sub(_code_point, _CONTROL.sub(" ", str(text)))
    text = _FLANKING_UNDERSCORE.sub(r"\\_", "".join(_MARKDOWN.get(c, c) for c in text))
    return Markdown(_LIVE.sub(_JOINER, text))


def markdown_row(*cells) -> Markdown:
    """A markdown table row, each cell ``markdown`` (a ``Markdown`` cell is padconf's own)."""
    return Markdown("| " + " | ".join(map(markdown, cells)) + " |")


def markdown_concat(*parts: Markdown) -> Markdown:
    """``parts`` as one piece of markdown, each escaped already (``+`` of two gives a ``str``)."""
    return Markdown("".join(parts))


def markdown_lines(lines: Iterable[Markdown]) -> Markdown:
    """A markdown document of ``lines``, each escaped already (a ``str`` among them is a mypy error)."""
    return Markdown("".join(line + "\n" for line in lines))


def markdown_code(text) -> Markdown:
    """``text`` as one markdown code span: its fence longer than any run of backticks in it (so
    that none ends the span), and inside a span no markup, HTML or link is live; control and
    invisible characters as ``\\xNN`` / ``\\uNNNN``."""
    text = plain(text)
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""  # as CommonMark strips
    return Markdown(f"{fence}{pad}{text}{pad}{fence}")


def markdown_block(text) -> list[Markdown]:
    """``text`` (an error, several lines) as the lines of a fenced markdown code block whose
    fence is longer than any run of backticks in it, so that nothing in it ends the block."""
    text = _INVISIBLE.sub(_code_point, str(text))
    lines = [_CONTROL.sub(_hex, line) for line in text.strip().splitlines()]
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))
    return [Markdown(line) for line in (fence, *lines, fence)]
