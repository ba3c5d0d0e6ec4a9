"""One escaper per medium (``padconf/core/escape.py``): text from runtimes, models and files is
data in each, never markup, a link, a mention, or terminal control (docs/reliability.md)."""
from __future__ import annotations

import re

import pytest

from padconf.cases.case import Case
from padconf.core import escape
from padconf.core.errors import CaseError
from padconf.judging.records import check_row

HOSTILE = ("see https://evil.example/x and www.evil.example, cc @org/team and @maintainer, "
           "mail a@b.example, HTTP://X.Y/ <img src=x onerror=alert(1)> [a](javascript:alert(1))")
BIDI = "abc\u202edcb\u2066x\u2069\u200b\ufeff"


def test_markdown_leaves_no_autolink_mention_or_tag_live():
    """``escape.markdown`` left ``https://…``, ``www.…`` and ``@org/team`` live in summary.md and
    the PR comment: GitHub linked them and notified the team."""
    text = escape.markdown(HOSTILE)
    assert not re.search(r"(?i)[a-z]://|www\.|(?<![\w.+-])@\w|<img|(?<!\\)\](?=\()", text), text
    assert text.replace("\u2060", "").replace("\\", "").replace("&lt;", "<").replace("&gt;", ">") == HOSTILE


def test_markdown_leaves_no_issue_reference_or_math_live():
    """``onnx/onnx#7000``, ``#1`` and ``GH-2`` from a spec's rule text reached a bundle's
    REPORT.md, written to be filed upstream, live (each referenced issue gets a "mentioned this"
    event), and ``$...$`` math from a mode reached summary.md (attack round III)."""
    text = "fixed by onnx/onnx#7000, see #1, gh-2 and GH-3; $\\Huge\\textsf{PASSED}$ a/b#1"
    shown = escape.markdown(text)
    assert not re.search(r"#\d|(?i:\bgh)-\d|(?<!\\)\$", shown), shown
    assert shown.replace("\u2060", "").replace("\\$", "$").replace("\\\\", "\\") == text
    assert escape.markdown("C# and #x and a#b") == "C# and #x and a#b"  # no reference: as it is


@pytest.mark.parametrize("name", ["<img src=x onerror=alert(1)>", "a`b``c", "`", "x\n## heading", BIDI,
                                  "[x](javascript:alert(1))"])
def test_a_code_span_holds_any_text_as_text(name):
    """A Pad node's name went into REPORT.md's "Found in" as `name`: a backtick in it ended the
    span and left an <img> and a javascript: link live."""
    span = escape.markdown_code(name)
    fence = re.match("`+", span)[0]
    inside = span[len(fence):-len(fence)]
    assert span.endswith(fence) and fence not in inside and "\n" not in span
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b\ufeff]", span)


def test_a_fenced_block_is_not_ended_by_the_text_in_it():
    lines = escape.markdown_block("error: ```\n</pre><script>x</script>\n````` more")
    assert lines[0] == lines[-1] and not any(lines[0] in line for line in lines[1:-1])


@pytest.mark.parametrize("show", [escape.plain, escape.terminal, escape.markdown, escape.html])
def test_bidi_and_invisible_characters_never_reach_the_terminal_or_a_page(show):
    """Bidi overrides (Trojan Source) in a runtime's error or a file's name reached the terminal:
    each is shown as \\uNNNN."""
    text = show(BIDI)
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b\u200e\u200f\ufeff\u2028\u2029]", text)
    assert "\\u202e" in text and "\\u2066" in text


def test_a_mode_from_a_file_is_one_padconf_knows():
    """A case's mode from cases.jsonl went unchecked into summary.md; a must-reject case may hold
    a mode no spec has (a test folder's model spells it), as short printable text."""
    doc = {"spec": "onnx/Pad-19", "data": {"dtype": "float", "shape": [1], "b64": "AAAAAA=="}, "pads": [0, 0],
           "kind": "defined"}
    with pytest.raises(CaseError, match="mode .* is not one of"):
        Case.from_json({**doc, "mode": "https://evil.example @team"})
    assert Case.from_json({**doc, "mode": "reflect"}).mode == "reflect"
    assert Case.from_json({**doc, "kind": "must-reject", "mode": "foo"}).mode == "foo"
    with pytest.raises(CaseError, match="mode"):
        Case.from_json({**doc, "kind": "must-reject", "mode": "x" * 65})
    row = {"runtime": "rt", "placement": "inputs", "spec": "onnx/Pad-19", "mode": "<b>", "dtype": "float",
           "shape": [1], "pads": [0, 0], "verdict": "pass", "case_id": "c", "origin": "generated"}
    with pytest.raises(CaseError, match="results.jsonl:1: mode"):
        check_row(row, "results.jsonl:1", tuple(row))


def test_padconfs_own_upstream_link_stays_live_where_outside_text_is_escaped():
    from types import SimpleNamespace

    from padconf.report.report import _md_row, triage_markdown
    group = {"triage": SimpleNamespace(label="known upstream <b>"),
             "upstream": SimpleNamespace(link="https://github.com/onnx/onnx/issues/1")}
    row = _md_row("https://evil.example", triage_markdown(group))
    assert "(https://github.com/onnx/onnx/issues/1)" in row and "&lt;b&gt;" in row
    assert "https://evil" not in row


def test_every_format_character_of_this_pythons_unicode_is_shown_as_its_code_point():
    """The escapers' list of format characters is written out (building it from unicodedata cost
    every process's start); a Python whose Unicode adds one fails here until the list has it."""
    import unicodedata

    from padconf.core import escape
    unseen = [hex(c) for c in range(0xA0, 0x110000) if unicodedata.category(chr(c)) == "Cf"
              and escape.plain(chr(c)) == chr(c)]
    assert not unseen


def test_a_committed_yaml_document_is_ascii_and_reads_back_as_its_text():
    """A runtime's error text in a baseline's why (attack round C: a raw U+202E reached the
    committed baseline, invisible in review) is written as an escape that reads back as itself."""
    import yaml

    from padconf.gate.baseline import dump_baseline

    why = "bidi \u202e\u2066 CSI \x9b tag \U000e0041 accent \u00e9 nul \x00"
    text = dump_baseline([{"match": "x", "why": why}], "header")
    assert text.isascii()
    assert yaml.safe_load(text) == [{"match": "x", "why": why}]


def test_control_characters_never_reach_a_page_and_its_lines_stay():
    """An ESC OSC-8 link, C1's CSI and NEL in a runtime's error reached the HTML report raw
    (attack round F); a <pre>'s lines and tabs are kept."""
    text = escape.html("a\x1b]8;;https://x\x07b\x9b2J\x85<i>\nnext\tline")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text) and "\\x1b" in text and "\\x9b" in text
    assert "\nnext\tline" in text and "&lt;i&gt;" in text
