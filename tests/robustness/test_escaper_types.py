"""Text from outside cannot reach a medium's writer without that medium's escaper: each escaper
(padconf/core/escape.py) returns a type of its own, each writer (padconf/core/writing.py) takes
only that type, and mypy, which CI runs, finds the place that forgets. Checked here by running
mypy on code that forgets, beside the same code that escapes."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from padconf.core import escape

# each line ending in "# forgets" must be a mypy error, and no other line
SNIPPET = textwrap.dedent('''
    from padconf.core import escape
    from padconf.core.escape import Markdown, markdown, markdown_lines, markdown_row
    from padconf.core.writing import write_html, write_markdown, write_python, write_xml
    from padconf.report.report import markdown as summary
    from padconf.gate.junit import junit_xml
    from padconf.cli.commands import say

    error: str = "a runtime's error, a node name, a case id"
    write_markdown("summary.md", error)  # forgets
    write_markdown("summary.md", markdown(error))
    write_markdown("summary.md", markdown_lines([Markdown("# title"), error]))  # forgets
    write_markdown("summary.md", markdown_lines([Markdown("# title"), markdown_row(error, 3)]))
    write_markdown("summary.md", markdown_lines([Markdown("# title"), Markdown("## ") + markdown(error)]))  # forgets
    write_markdown("summary.md", summary([], [], []))
    write_html("report.html", "<p>" + error + "</p>")  # forgets
    write_html("report.html", escape.Html("<p>" + escape.html(error) + "</p>"))
    write_xml("junit.xml", error)  # forgets
    write_xml("junit.xml", escape.xml(error))
    write_python("repro.py", f"x = {error}")  # forgets
    write_python("repro.py", escape.python_literal(error))
    say(error)  # forgets
    say(escape.plain(error))
    say(escape.terminal(error))
    write_markdown("x.md", escape.plain(error))  # forgets
    write_xml("x.xml", escape.html(error))  # forgets
''')


def test_mypy_finds_every_writer_handed_text_without_its_escaper(tmp_path):
    snippet = tmp_path / "forgets.py"
    snippet.write_text(SNIPPET)
    found = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context",
                            "--ignore-missing-imports", "--follow-imports=silent", str(snippet)],
                           capture_output=True, text=True, timeout=600)
    flagged = {int(m[1]) for m in re.finditer(r"forgets\.py:(\d+): error:", found.stdout)}
    forgetting = {i for i, line in enumerate(SNIPPET.splitlines(), 1) if line.endswith("# forgets")}
    assert forgetting and flagged == forgetting, found.stdout + found.stderr


def test_each_escaper_gives_its_medium_text_that_is_data_there():
    assert escape.html('<img src=x onerror="a()">') == "&lt;img src=x onerror=&quot;a()&quot;&gt;"
    assert escape.xml("a\x00b\ud800\ufffe") == "a\\x00b\\ud800\\ufffe"
    assert escape.markdown_row("a|b", "<b>", escape.Markdown("**own**")) == "| a\\|b | &lt;b&gt; | **own** |"
    assert escape.python_literal({"k": [1, 2.5, None, "x'"]}) == repr({"k": [1, 2.5, None, "x'"]})
    with pytest.raises(TypeError):
        escape.python_literal(type("Code", (), {"__repr__": lambda self: "__import__('os').system('x')"})())
