"""`padconf report`: the HTML page (checked as text and rendered in headless Chromium), the short
markdown, bad run directories, and terminal tables that stay whole in an 80-column CI log."""
import base64
import io
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections import Counter
from html import escape
from html.parser import HTMLParser

import numpy as np
import pytest
from rich.console import Console

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cli import main
from padconf.gate.baseline import baseline_entries
from padconf.judging.records import judged_row
from padconf.judging.verdicts import FAILURES, VERDICTS
from padconf.report import report
from padconf.report.report_html import render
from padconf.run.rundir import load_run, read_jsonl
from padconf.spec.loader import get_spec
from tests.robustness.test_hostile_inputs import signed_again

EVIL = "Pad <axes> & \"x\" <script>alert(1)</script>"  # a runtime's error text, to be shown as text


def _defined(first: float) -> Case:
    return classify(Case("onnx/Pad-19", np.array([first, 2, 3], np.float32), [1, 1]))


def planted_rows() -> tuple[list[Case], list[dict]]:
    """Cases and result rows holding every verdict: runtime 'alpha' gets each failure kind,
    'beta' passes or picks an interpretation. Built with classify and judged_row, as a run would."""
    must_reject = classify(Case("onnx/Pad-2", np.array([1, 2, 3], np.int32), [1, 1]))  # int32 not in Pad-2's types
    crop = classify(Case("onnx/Pad-11", np.array([1, 2], np.float32), [-3, 0]))  # crop_beyond_dim: undefined
    too_large = classify(Case("onnx/Pad-19", np.arange(4, dtype=np.uint8), [2**26, 2**26]))  # padconf's limit
    cases = [_defined(i) for i in range(1, 8)] + [must_reject, crop, too_large]
    assert [c.kind for c in cases[-3:]] == ["must-reject", "ambiguous", "too-large-to-check"]
    d = cases
    wrong = np.array([9, 9, 9, 9, 9], np.float32)
    planted = [  # (runtime, case, outcome, worker status)
        ("alpha", d[0], Outcome(d[0].expected), "ok"),
        ("alpha", d[1], Outcome(wrong), "ok"),
        ("alpha", d[2], Outcome(error=EVIL), "ok"),
        ("alpha", d[3], Outcome(error="no kernel for Pad(19) float", not_implemented=True), "ok"),
        ("alpha", d[4], Outcome(error="worker died: SIGSEGV"), "crash"),
        ("alpha", d[5], Outcome(error="no answer within 1 s"), "timeout"),
        ("alpha", d[6], Outcome(skipped="cannot feed this case"), "ok"),
        ("alpha", must_reject, Outcome(np.array([0, 1, 2, 3, 0], np.int32)), "ok"),
        ("alpha", crop, Outcome(np.array([7], np.float32)), "ok"),  # no interpretation gives it
        ("beta", d[1], Outcome(d[1].expected), "ok"),
        ("beta", must_reject, Outcome(error="type int32 not allowed"), "ok"),
        ("beta", crop, Outcome(error="cannot crop 3 of 2"), "ok"),
        ("beta", too_large, Outcome(error="out of memory"), "ok"),
    ]
    rows = [judged_row(rt, "inputs", case, outcome, status) for rt, case, outcome, status in planted]
    assert {r["verdict"] for r in rows} == set(VERDICTS)
    return cases, rows


def write_run(path, cases, rows):
    path.mkdir(parents=True, exist_ok=True)
    # the run.json of a run of the rows' runtimes (a row of a runtime it does not name is refused)
    runtimes = sorted({r["runtime"] for r in rows}) or ["alpha"]
    (path / "run.json").write_text(json.dumps({"runtimes": runtimes, "specs_dir": None,
                                                "results": {name: sum(r["runtime"] == name for r in rows)
                                                            for name in runtimes}}))
    (path / "cases.jsonl").write_text("".join(json.dumps(c.to_json()) + "\n" for c in cases))
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    signed_again(path)  # as a run signs its folder as it ends
    return path


@pytest.fixture
def run_dir(tmp_path):
    return write_run(tmp_path / "run", *planted_rows())


class Cells(HTMLParser):
    """The matrix cells of the page: (runtime, spec, mode) -> {verdict: count shown}."""

    def __init__(self):
        super().__init__()
        self.cells, self.cell, self.verdict = {}, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "cell" in (a.get("class") or "").split():
            self.cell = (a["data-runtime"], a["data-spec"], a["data-mode"])
            self.cells[self.cell] = Counter()
        elif tag == "span" and self.cell and a.get("data-verdict"):
            self.verdict = a["data-verdict"]

    def handle_data(self, data):
        if self.verdict:
            self.cells[self.cell][self.verdict] += int(data)
            self.verdict = None

    def handle_endtag(self, tag):
        if tag == "td":
            self.cell = None


def counted(rows) -> dict:
    out = {}
    for r in rows:
        out.setdefault((r["runtime"], r["spec"], r["mode"]), Counter())[r["verdict"]] += 1
    return out


def test_html_matrix_shows_the_counts_of_results_jsonl(run_dir, tmp_path):
    assert main(["report", str(run_dir), "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]) == 0
    page = (tmp_path / "r.html").read_text()
    parser = Cells()
    parser.feed(page)
    assert parser.cells == counted(read_jsonl(run_dir / "results.jsonl"))


def test_html_is_self_contained_and_escapes_runtime_texts(run_dir):
    page = render(load_run(run_dir))
    assert not re.search(r"(?i)(https?:|//[a-z]|src=|<link|@import|url\()", page)
    assert "<script>alert" not in page and "Pad &lt;axes&gt; &amp; &quot;x&quot;" in page
    assert page.count("<script>") == 1  # the page's own


def test_html_cell_shows_arrays_error_and_rule(run_dir):
    page = render(load_run(run_dir))
    panel = page.split("id='panel-alpha--onnx-Pad-19--constant'", 1)[1].split("<div class=panel", 1)[0]
    for verdict in set(FAILURES) - {"wrongly-accepted", "unexplained"}:  # those are in the Pad-2 and Pad-11 cells
        assert f"data-verdict='{verdict}'" in panel
    assert "[9., 9., 9., 9., 9.]" in panel and "[0., 2., 2., 3., 0.]" in panel  # actual, expected
    assert "no kernel for Pad(19) float" in panel
    assert "T in (" in panel  # not-implemented: the type list quoted
    rejected = page.split("id='panel-alpha--onnx-Pad-2--constant'", 1)[1].split("<div class=panel", 1)[0]
    assert "wrongly-accepted" in rejected and "dtype int32 is not in this version" in rejected
    odd = page.split("id='panel-alpha--onnx-Pad-11--constant'", 1)[1].split("<div class=panel", 1)[0]
    assert "data-verdict='unexplained'" in odd  # an answer no interpretation gives: a failure
    assert "actual (alpha): float shape [1]" in odd and "[7.]" in odd
    assert "expected under crop_beyond_dim=reject: rejected" in odd
    assert "expected under crop_beyond_dim=clamp_to_zero: float shape [0]" in odd
    assert "ambiguities.crop_beyond_dim" in odd  # the undefined point quoted, not the rule of that name
    silent = page.split("id=ambiguities", 1)[1]
    assert "<td>reject (1)</td>" in silent and "<td>(another output) (1)</td>" in silent  # beta, alpha
    assert escape(get_spec("onnx/Pad-11").ambiguities["crop_beyond_dim"].text) in silent  # the spec's words


def test_silent_points_count_each_with_the_readings_the_answer_fits():
    """A result that hits two undefined points counts under each, with that point's
    interpretations its answer matches: a refusal is what both readings of mixed_sign_pads give
    here, once mirror_beyond_dim rejects."""
    case = classify(Case("onnx/Pad-11", np.array([1, 2, 3], np.float32), [-1, 4], mode="reflect"))
    assert case.reason == "mixed_sign_pads,mirror_beyond_dim"
    rows = [judged_row("alpha", "inputs", case, Outcome(np.array([2, 3, 2, 1, 2, 3], np.float32)), "ok"),
            judged_row("alpha", "initializers", case, Outcome(error="reflect pad 4 exceeds 3"), "ok"),
            judged_row("beta", "inputs", case, Outcome(np.array([9], np.float32)), "ok")]
    assert report.interpretations(rows) == {
        ("mirror_beyond_dim", "alpha"): Counter({"iterate": 1, "reject": 1}),
        ("mirror_beyond_dim", "beta"): Counter({"(another output)": 1}),
        ("mixed_sign_pads", "alpha"): Counter({"original_coordinates": 1, "crop_first or original_coordinates": 1}),
        ("mixed_sign_pads", "beta"): Counter({"(another output)": 1})}
    printed = report.terminal_output(rows, 200)[-1]
    assert ("- mixed_sign_pads on alpha: original_coordinates (1), crop_first or original_coordinates (1) | beta: "
            "(another output) (1)") in printed  # one line per undefined point


def test_large_arrays_are_abridged_and_say_their_size(tmp_path):
    big = classify(Case("onnx/Pad-19", np.arange(600, dtype=np.float32).reshape(20, 30), [1, 1, 1, 1]))
    row = judged_row("alpha", "inputs", big, Outcome(np.zeros((22, 32), np.float32)), "ok")
    page = render(load_run(write_run(tmp_path / "run", [big], [row])))
    assert "600 elements, abridged" in page and "704 elements, abridged" in page and "..." in page
    assert len(page) < 60_000


def test_short_markdown_fits_a_pr_comment(run_dir, tmp_path):
    assert main(["report", str(run_dir), "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    rows = read_jsonl(run_dir / "results.jsonl")
    assert len(md.splitlines()) <= 40 and "r.html" in md and "http" not in md
    first_table = md.split("\n\n")[1].splitlines()  # totals per runtime and verdict
    header, _, *body = [[c.strip() for c in line.strip("|").split(" | ")] for line in first_table]
    shown = {(row[0], verdict): int(n) for row in body for verdict, n in zip(header[1:], row[1:]) if n}
    assert shown == Counter((r["runtime"], r["verdict"]) for r in rows)
    assert "| alpha | wrongly-rejected | wrongly rejected | 1 | Pad &lt;axes&gt; &amp; " in md and "<script>" not in md


def test_a_report_on_part_of_a_run_says_so_where_it_is_read(run_dir, tmp_path, capsys):
    """A run killed part way, or a directory copied in part, holds fewer results than its run
    wrote (run.json counts them once the run has finished): a PR comment or page that showed
    them as the run would hide the failures they lack."""
    args = ["report", str(run_dir), "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]
    assert main(args) == 0
    assert "part of a run" not in capsys.readouterr().out.lower()
    assert "Part of a run" not in (tmp_path / "r.md").read_text() + (tmp_path / "r.html").read_text()
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:-1]))
    assert main(args) == 0
    cut = json.loads(lines[-1])["runtime"]
    theirs = sum(json.loads(line)["runtime"] == cut for line in lines)
    said = f"it holds {theirs - 1} results of {cut} where its run wrote {theirs}"
    assert f"(part of a run only: {said})" in capsys.readouterr().out
    assert f"**Part of a run only:** {said}." in (tmp_path / "r.md").read_text()
    assert f"<p class=warn>Part of a run only: {said}.</p>" in (tmp_path / "r.html").read_text()
    (run_dir / "run.json").unlink()  # it names the runtimes the rows must be of: without it, nothing is read
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run.json, which names the runtimes the run ran" in err


def test_short_markdown_keeps_the_top_failures_only():
    rows = [{"runtime": "rt", "verdict": "crash", "spec": "onnx/Pad-19", "mode": "constant", "dtype": "float",
             "error": f"error kind {chr(65 + i % 26)}{chr(65 + i // 26)}", "detail": None, "origin": "generated",
             "case_id": str(i), "reason": None, "matched": None, "placement": "inputs"} for i in range(300)]
    md = report.short_markdown(rows, "report.html")
    assert len(md.splitlines()) <= 40 and "those not yet triaged first (10 of 300)" in md


@pytest.mark.parametrize("problem,words", [
    ("missing", "no such run directory"), ("no results", "no results.jsonl"),
    ("empty", "holds no result"), ("malformed", "results.jsonl:2: malformed JSON"),
    ("lacks keys", "results.jsonl:1: row lacks"),
])
def test_a_bad_run_directory_is_one_line_error(run_dir, tmp_path, capsys, problem, words):
    results = run_dir / "results.jsonl"
    if problem == "missing":
        shutil.rmtree(run_dir)
    elif problem == "no results":
        results.unlink()
    elif problem == "empty":
        results.write_text("")
    elif problem == "malformed":
        results.write_text(results.read_text().splitlines()[0] + "\n{not json\n")
    elif problem == "lacks keys":
        results.write_text('{"runtime": "x"}\n')
    code = main(["report", str(run_dir), "--html", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1 and err.startswith("padconf: "), err
    assert not (tmp_path / "r.html").exists()


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and line[0] in "┏┃┡│└"]


def printed(rows, width) -> str:
    """What `padconf run` prints of ``rows`` on a console ``width`` columns wide (as cli does)."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    for part in report.terminal_output(rows, width):
        console.print(part, soft_wrap=isinstance(part, str), markup=not isinstance(part, str))
    return out.getvalue()


def test_terminal_output_cuts_no_name_and_splits_no_case_id_at_80_columns():
    _, rows = planted_rows()
    long_rows = [{**r, "runtime": "openvino-onnx" if r["runtime"] == "alpha" else "onnx-reference",
                  "spec": "openvino/Pad-12"} for r in rows]
    for width in (80, 200):
        text = printed(long_rows, width)
        lines = text.splitlines()
        assert "…" not in text
        for name in ("openvino-onnx", "onnx-reference", "openvino/Pad-12", "wrongly-rejected", "wrongly-accepted",
                     "onnx-reference: reject (1)"):
            assert any(name in line for line in lines), (width, name)
        for group in report.distinct_failures(long_rows):  # not yet triaged: its case id whole, ending its line
            if group["triage"] in report.PAD_BUGS:  # (`padconf minimize RUN:<id>` takes it as printed)
                assert any(line.endswith(f"; case id: {group['example']['case_id']}") for line in lines), width
        tables = table_lines(text)
        assert all(len(line) <= width for line in tables)
    assert max(len(line) for line in tables) > 80  # at 200 the matrix is a table with a column per verdict
    assert not table_lines(printed(long_rows, 80))  # at 80 the matrix is lines


@pytest.mark.slow
def test_padconf_run_output_in_a_ci_log_keeps_names_and_case_ids_whole(tmp_path):
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    proc = subprocess.run([sys.executable, "-m", "padconf.cli", "run", "--runtime", "onnx-reference",
                           "tests.fake_adapters:WrongValuesAdapter", "--spec", "onnx/Pad-11", "--max-examples", "4",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout and "onnx-reference" in proc.stdout
    lines = proc.stdout.splitlines()
    assert max(map(len, table_lines(proc.stdout)), default=0) <= 80
    ids = {g["example"]["case_id"] for g in report.distinct_failures(read_jsonl(tmp_path / "run" / "results.jsonl"))
           if g["triage"] in report.PAD_BUGS}  # those not yet triaged: each a line ending in its whole case id
    assert ids and all(any(line.endswith(f"; case id: {i}") for line in lines) for i in ids)
    assert f"padconf minimize {tmp_path / 'run'}:<case id> --runtime <runtime>" in proc.stdout


def test_spec_versions_sort_by_number_in_terminal_summary_html_and_errors(tmp_path, capsys):
    cases = [classify(Case(f"onnx/Pad-{v}", np.array([1, 2], np.int64), [1, 1])) for v in (1, 2, 11, 13, 19)]
    rows = [judged_row("alpha", "inputs", c, Outcome(np.zeros(4, np.int64)), "ok") for c in cases]
    numeric = ["onnx/Pad-1", "onnx/Pad-2", "onnx/Pad-11", "onnx/Pad-13", "onnx/Pad-19"]

    def order(text):
        found = re.findall(r"onnx/Pad-\d+", text)
        return list(dict.fromkeys(found))
    assert order(printed(rows, 200)) == numeric and order(printed(rows, 80)) == numeric
    assert order(report.markdown(rows, [c.to_json() for c in cases], [])) == numeric
    assert order(render(load_run(write_run(tmp_path / "run", cases, rows)))) == numeric
    in_entries = [[int(re.match(r"onnx/Pad-(\d+) ", cell)[1]) for cell in e["cells"]] for e in baseline_entries(rows)]
    assert max(map(len, in_entries)) > 2 and all(versions == sorted(versions) for versions in in_entries)
    assert main(["check", "--spec", "onnx/Pad-99"]) == 2
    unknown, known = capsys.readouterr().err.split("; known: ")
    assert order(unknown) == ["onnx/Pad-99", "onnx/Pad-19"]  # and the closest known id
    assert order(known)[:3] == ["onnx/Pad-1", "onnx/Pad-2", "onnx/Pad-11"]


def test_counts_say_what_they_count_and_mark_must_reject_only_modes(tmp_path):
    wrap = classify(Case("onnx/Pad-13", np.array([1, 2], np.int32), [1, 1], mode="wrap"))  # Pad-13 has no wrap
    plain = classify(Case("onnx/Pad-13", np.array([1, 2], np.int32), [1, 1]))
    assert wrap.kind == "must-reject"
    rows = [judged_row("alpha", p, c, Outcome(error="refused") if c is wrap else Outcome(c.expected), "ok")
            for c in (wrap, plain) for p in ("inputs", "folded")]
    rows.append(judged_row("alpha", "initializers", plain, Outcome(skipped="cannot bake it"), "ok"))
    summary = report.markdown(rows, [wrap.to_json(), plain.to_json()], [])
    assert "5 results over 2 cases: a result is one case in one placement on one runtime; 1 of them skipped" in summary
    # a case of a spec family no runtime of the run runs (torch's, in a default run) has no result:
    # the run announced the cases it drew, and ended with fewer, without a word
    torch = classify(Case("torch/Pad-2", np.array([1.0, 2.0], np.float32), [1, 1]))
    summary = report.markdown(rows, [wrap.to_json(), plain.to_json(), torch.to_json()], [])
    assert "over 2 cases" in summary and "1 of the 3 cases drawn are of spec families no runtime of the run runs" \
        in summary
    assert "| alpha | onnx/Pad-13 | wrap† | 2 |" in summary and "| alpha | onnx/Pad-13 | constant | 2 |" in summary
    assert report.MUST_REJECT_NOTE in summary and "pass means the runtime rejected it" in summary
    page = render(load_run(write_run(tmp_path / "run", [wrap, plain], rows)))
    assert "<td>wrap†</td>" in page and escape(report.MUST_REJECT_NOTE) in page and "results per verdict" in page
    for width in (80, 200):
        text = printed(rows, width)
        assert "wrap†" in text and "constant†" not in text and report.MUST_REJECT_NOTE in text
        assert "results per verdict" in text and "cases per verdict" not in text


# ---------------------------------------------------------------- headless Chromium


@pytest.fixture(scope="module")
def chromium():
    exe = shutil.which("chromium")  # installed by .ci/run; a test never installs anything
    if exe is None:
        pytest.skip("headless Chromium: Debian's chromium package is not installed "
                    "(.ci/run installs it: apt-get install chromium, as root)")
    return exe


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (CDP: NUL-separated JSON on fds 3/4)."""

    def __init__(self, exe, profile):
        to_child, self.write_fd = os.pipe()
        self.read_fd, from_child = os.pipe()

        def pipes_at_3_and_4():
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             "--window-size=1400,1000", f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=pipes_at_3_and_4, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self.buffer, self.events, self.next_id = b"", [], 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=1400, height=1000,
                  deviceScaleFactor=1, mobile=False)

    def _read(self, deadline) -> dict:
        while b"\0" not in self.buffer:
            if not select.select([self.read_fd], [], [], max(0, deadline - time.monotonic()))[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=False, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, event):
        deadline = time.monotonic() + 60
        while not any(e.get("method") == event for e in self.events):
            self.events.append(self._read(deadline))
        self.events = [e for e in self.events if e.get("method") != event]

    def goto(self, url):
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")

    def js(self, expression):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def screenshot(self, path):
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self):
        try:
            self.call("Browser.close")
        except (EOFError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.write_fd)
        os.close(self.read_fd)


MATRIX_SHOWN = ("""(() => {
  const t = document.getElementById('conformance').getBoundingClientRect();
  const cells = {};
  for (const td of document.querySelectorAll('td.cell')) {
    const r = td.getBoundingClientRect();
    const counts = {};
    for (const n of td.querySelectorAll('span.n')) counts[n.dataset.verdict] = Number(n.textContent);
    cells[[td.dataset.runtime, td.dataset.spec, td.dataset.mode].join('|')] = """
                """{counts, visible: r.width > 0 && r.height > 0};
  }
  return {width: t.width, height: t.height, cells};
})()""")

OPEN_PANEL = """(() => {
  const open = [...document.querySelectorAll('.panel')].filter(p => getComputedStyle(p).display !== 'none');
  return open.map(p => ({cell: p.dataset.cell, height: p.getBoundingClientRect().height, text: p.innerText,
                         verdicts: [...p.querySelectorAll('.failure')].map(f => f.dataset.verdict)}));
})()"""


def test_html_report_in_chromium_with_every_verdict_kind(chromium, run_dir, tmp_path):
    page = tmp_path / "report.html"
    assert main(["report", str(run_dir), "--html", str(page)]) == 0
    browser = Browser(chromium, tmp_path / "profile")
    try:
        browser.goto(page.as_uri())
        shown = browser.js(MATRIX_SHOWN)
        assert shown["width"] > 300 and shown["height"] > 50
        rows = read_jsonl(run_dir / "results.jsonl")
        assert {k: Counter(v["counts"]) for k, v in shown["cells"].items()} == \
            {"|".join(k): c for k, c in counted(rows).items()}
        assert all(v["visible"] for v in shown["cells"].values())
        assert browser.js(OPEN_PANEL) == []  # nothing open before a click
        # a click on the failing cell opens its cases
        browser.js("document.querySelector(\"td[data-runtime='alpha'][data-spec='onnx/Pad-19'] a\").click()")
        (opened,) = browser.js(OPEN_PANEL)
        assert opened["cell"] == "alpha--onnx-Pad-19--constant" and opened["height"] > 200
        assert set(opened["verdicts"]) == set(FAILURES) - {"wrongly-accepted", "unexplained"}
        assert EVIL in opened["text"]  # shown as text, not run as markup
        assert "expected: float shape [5]" in opened["text"] and "actual (alpha): float shape [5]" in opened["text"]
        assert browser.js("document.querySelector('td.cell.selected').dataset.cell") == opened["cell"]
        screenshot = tmp_path / "report.png"
        browser.screenshot(screenshot)
        assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20_000
        if os.environ.get("PADCONF_SCREENSHOT"):  # to look at it: PADCONF_SCREENSHOT=/tmp/report.png
            shutil.copy(screenshot, os.environ["PADCONF_SCREENSHOT"])
        # a link to a cell opens it on load; another cell's link switches to it
        browser.goto(page.as_uri() + "?linked#cell=alpha--onnx-Pad-2--constant")  # a new load, not a jump
        (opened,) = browser.js(OPEN_PANEL)
        assert opened["verdicts"] == ["wrongly-accepted"] and "dtype int32 is not in this version" in opened["text"]
        browser.js("document.querySelector(\"td[data-runtime='beta'][data-spec='onnx/Pad-11'] a\").click()")
        (opened,) = browser.js(OPEN_PANEL)
        assert opened["cell"] == "beta--onnx-Pad-11--constant" and "crop_beyond_dim: reject (1)" in opened["text"]
    finally:
        browser.close()


def test_html_lists_answers_that_depend_on_the_placement(tmp_path):
    case = _defined(1)
    rows = [judged_row("alpha", "inputs", case, Outcome(case.expected), "ok"),
            judged_row("alpha", "folded", case, Outcome(np.array([9, 9, 9, 9, 9], np.float32)), "ok")]
    html = render(load_run(write_run(tmp_path / "run", [case], rows)))
    section = html.split("<section id=placement>")[1].split("</section>")[0]
    assert section.count("<h3>alpha</h3>") == 1  # groups under their runtime
    assert "placement-dependent</span> ×1 <b>folded: mismatch; inputs: pass</b>" in section
    assert "actual (alpha)" in section  # the folded answer, shown as an array
    assert "<section id=placement>" not in render(load_run(write_run(tmp_path / "same", [case], rows[:1])))


def test_a_placement_dependent_group_is_triaged_by_its_failing_placement():
    """A crash folded beside an answer the spec allows elsewhere (crop_beyond_dim: the runtime
    refuses in one placement) is a crash to triage, not a group named by its allowed answer:
    such groups were untriaged, folded as "-" and out of the bug list."""
    from padconf.judging.triage import Triage
    from padconf.report.report import placement_dependent

    crop = classify(Case("onnx/Pad-11", np.array([1, 2], np.float32), [-3, 0]))
    rows = [judged_row("alpha", "inputs", crop, Outcome(error="cannot crop 3 of 2"), "ok"),
            judged_row("alpha", "folded", crop, Outcome(error="worker died: SIGSEGV"), "crash")]
    assert [r["verdict"] for r in rows] == ["ambiguous", "crash"]
    (group,) = placement_dependent(rows)
    assert group["triage"] == Triage.CRASH and group["example"]["verdict"] == "crash"


def test_a_verdict_that_differs_between_configurations_is_the_variants_own_finding(tmp_path):
    """alpha refuses what alpha[threads=1] answers wrongly, in the same placement: one group, the
    variant's, named by both verdicts; the runtime keeps the verdict of its default configuration.
    A case the variant answers alike, or ran only on one of the two, is no such finding."""
    case, other = _defined(1), _defined(2)
    wrong = Outcome(np.array([9, 9, 9, 9, 9], np.float32))
    rows = [judged_row("alpha", "inputs", case, Outcome(error="refused"), "ok"),
            judged_row("alpha[threads=1]", "inputs", case, wrong, "ok"),
            judged_row("alpha[threads=1]", "folded", case, wrong, "ok"),  # no default row in this placement
            judged_row("alpha", "inputs", other, Outcome(other.expected), "ok"),
            judged_row("alpha[threads=1]", "inputs", other, Outcome(other.expected), "ok")]
    (group,) = report.configuration_dependent(rows)
    assert group["runtime"] == "alpha[threads=1]" and group["verdict"] == "configuration-dependent"
    assert group["class"] == "alpha: wrongly-rejected; alpha[threads=1]: mismatch" and group["count"] == 1
    summary = report.markdown(rows, [c.to_json() for c in (case, other)], [])
    assert "configuration-dependent" in summary
    html = render(load_run(write_run(tmp_path / "run", [case, other], rows)))
    assert "<b>alpha: wrongly-rejected; alpha[threads=1]: mismatch</b>" in html.split("<section id=configuration>")[1]


def test_every_report_says_one_count_of_distinct_failures_and_lists_bugs_first(run_dir):
    """The terminal, summary.md, the HTML page and the PR comment count the same distinct failures
    (the placement- and configuration-dependent answers among them), the Pad bugs first."""
    cases, rows = planted_rows()
    groups = report.distinct_failures(rows)
    said = report.failures_count(groups)
    assert said.startswith(f"{len(groups)} distinct failures, ")
    terminal = "\n".join(str(x) for x in report.terminal_output(rows, 200) if isinstance(x, str))
    assert said in terminal
    assert said in report.markdown(rows, [c.to_json() for c in cases], [])
    assert said in render(load_run(run_dir))
    short = report.short_markdown(rows)
    assert said in short
    triages = [g["triage"] in report.PAD_BUGS for g in groups]
    assert triages == sorted(triages, reverse=True) and any(triages) and not all(triages)


def test_a_context_case_is_shown_as_the_graph_it_is_in_every_report_and_the_gates_lines(tmp_path):
    """A failure that needs a Slice after the Pad is named so in the terminal, summary.md, the
    HTML page and the gate's ``new:`` lines: from a plain Pad of its inputs a user sees no crash."""
    from padconf.cases.context import Consumer, Context
    from padconf.gate.compare import judge_rows
    from padconf.gate.junit import problem_lines
    from tests.context_cases import context_case

    sliced = context_case([[1, 2], [3, 4]], [0, 1, 0, 1], Context(Consumer.SLICE, {"starts": [0], "ends": [1],
                                                                                    "axes": [0], "steps": [1]}),
                          mode="edge")
    plain = _defined(5)
    assert sliced.graph == "Pad(edge) before Slice" and plain.graph is None
    rows = [judged_row("alpha", "inputs", sliced, Outcome(error="worker died: SIGSEGV"), "crash"),
            judged_row("alpha", "inputs", plain, Outcome(np.zeros(5, np.float32)), "ok")]
    assert rows[0]["graph"] == "Pad(edge) before Slice" and "graph" not in rows[1]
    out = "\n".join(p for p in report.terminal_output(rows, 200) if isinstance(p, str))
    assert f"SIGSEGV/SIGABRT; graphs: Pad(edge) before Slice; case id: {sliced.id}" in out, out
    assert f"(the expected values misplaced); case id: {plain.id}" in out  # a one-node Pad: no graph named
    bugs = "\n".join(report.bug_lines(rows, "RUN"))  # `padconf report RUN --bugs`: the example, as the graph it is
    assert "example: onnx/Pad-18 Pad(edge) before Slice float shape=[2, 2]" in bugs, bugs
    assert "example: onnx/Pad-19 constant float shape=[3]" in bugs  # a one-node Pad: its mode, as before
    assert "Pad(edge) before Slice float" in report.markdown(rows, [], [])
    page = render(load_run(write_run(tmp_path / "run", [sliced, plain], rows)))
    assert "model: <b>Pad(edge) before Slice</b> (Slice starts=[0] ends=[1] axes=[0] steps=[1])" in page
    assert "Pad(edge) before Slice float shape=[2, 2]" in page
    new = problem_lines(judge_rows(rows, [], "alpha", set()))
    assert any(f"new: {sliced.id} [inputs]: crash: Pad(edge) before Slice float shape=[2, 2]" in line for line in new)
    assert any(f"new: {plain.id} [inputs]: mismatch: constant float shape=[3]" in line for line in new)
    # one failure of a plain Pad and of a context case: the graphs it was seen in are named
    both = rows + [judged_row("alpha", "inputs", _defined(6), Outcome(error="worker died: SIGSEGV"), "crash")]
    out = "\n".join(p for p in report.terminal_output(both, 200) if isinstance(p, str))
    assert "graphs: Pad(edge) before Slice | one-node Pad" in out, out
    # graphs whose words hold commas stay apart: each one whole between the separators
    still = context_case([[1, 2], [3, 4]], [0, 1, 0, 1], Context(Consumer.SLICE, dict(sliced.context.attrs),
                                                                  static_shape=True), mode="edge")
    assert still.graph == "Pad(edge), before Slice, static shape"
    three = both + [judged_row("alpha", "inputs", still, Outcome(error="worker died: SIGSEGV"), "crash")]
    out = "\n".join(p for p in report.terminal_output(three, 200) if isinstance(p, str))
    (seen,) = [line for line in out.splitlines() if "graphs: " in line]
    assert seen.split("graphs: ")[1].split("; case id: ")[0].split(" | ") == ["Pad(edge) before Slice",
                                                      "Pad(edge), before Slice, static shape", "one-node Pad"], seen


def test_a_context_graph_names_producer_consumer_and_static_shape():
    from padconf.cases.context import Consumer, Context, Producer

    assert Context(Consumer.CONV, {"kernel_shape": [3, 3]}, producer=Producer.SHAPE_CHAIN,
                   static_shape=True).graph("constant") == ("Pad(constant), pads computed from Shape(data), "
                                                            "before Conv-2d, static shape")
    assert Context(Consumer.PAD).graph("reflect") == "Pad(reflect) before Pad(constant)"
    assert Context(producer=Producer.TORCH_PAD).graph("edge") == "Pad(edge), pads as torch.onnx exports F.pad"
    assert Context().graph("wrap") == "Pad(wrap)"
    assert Context(Consumer.SLICE, fanout=True).graph("edge") == "Pad(edge) before two Slice"
    assert Context(fanout=True).graph("edge") == "Pad(edge) before both inputs of an Add"
    assert Context(mode_attr=False).graph("constant") == "Pad(no mode attribute)"


def test_every_context_has_words_for_its_graph():  # a new producer or consumer is named in every report
    from padconf.cases.context import Consumer, Context, Producer

    graphs = {Context(consumer, producer=producer).graph("edge") for consumer in Consumer for producer in Producer}
    assert len(graphs) == len(Consumer) * len(Producer)


def test_report_bugs_lists_only_the_failures_not_yet_triaged_with_their_case_ids(run_dir, capsys):
    import shlex

    from padconf.cli.parser import build_parser
    from padconf.judging.triage import PAD_BUGS

    assert main(["report", str(run_dir), "--bugs"]) == 0
    out = capsys.readouterr().out
    groups = report.distinct_failures(read_jsonl(run_dir / "results.jsonl"))
    bugs = [g for g in groups if g["triage"] in PAD_BUGS]
    assert 0 < len(bugs) < len(groups)  # the planted run has lenient and coverage failures too
    assert out.startswith(f"{len(bugs)} of {len(groups)} distinct failures not yet triaged"), out
    assert out.count("\n- ") == len(bugs) and "lenient" not in out.split(" others (")[0].split(":", 1)[1]
    commands = [line.strip() for line in out.splitlines() if line.strip().startswith("padconf minimize ")]
    assert len(commands) == len(bugs)
    for g, command in zip(bugs, commands):
        assert f"case id: {g['example']['case_id']}" in out
        args = build_parser().parse_args(shlex.split(command)[1:])  # a command padconf takes, as printed
        assert args.target == f"{run_dir}:{g['example']['case_id']}" and args.runtime == [g["runtime"]]
    assert f"{len(groups) - len(bugs)} others (" in out
    assert not list(run_dir.glob("*.html"))


def test_report_with_nothing_to_write_is_one_line(run_dir, capsys):
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "--html FILE, --md FILE or --bugs" in err and err.count("\n") == 1


def test_report_reads_runs_own_folder_unless_told_and_bugs_says_a_run_is_partial(run_dir, tmp_path, capsys,
                                                                                monkeypatch):
    """`padconf report --bugs` after `padconf run` reads padconf-results, run's default; on a run
    that did not finish its first line says so, as summary.md does; the list's pointer to the
    full report names the run read."""
    from padconf.run.rundir import DEFAULT_RUN_DIR, RUN_JSON

    monkeypatch.chdir(tmp_path)
    assert main(["report", "--bugs"]) == 2
    assert f"{DEFAULT_RUN_DIR}" in capsys.readouterr().err  # the folder it looked for, named
    shutil.copytree(run_dir, tmp_path / DEFAULT_RUN_DIR)
    assert main(["report", "--bugs"]) == 0
    whole = capsys.readouterr().out
    assert not whole.startswith("Part of a run") and f"padconf report {DEFAULT_RUN_DIR} --html FILE" in whole
    run_json = tmp_path / DEFAULT_RUN_DIR / RUN_JSON  # as a run stopped before it wrote its count
    run_json.write_text(json.dumps({k: v for k, v in json.loads(run_json.read_text()).items() if k != "results"}))
    signed_again(run_json.parent)
    assert main(["report", DEFAULT_RUN_DIR, "--bugs"]) == 0
    part = capsys.readouterr().out
    assert part.startswith("Part of a run only: ") and part.split("\n", 1)[1] == whole


def test_the_terminal_shows_each_failure_to_act_on_in_a_line_and_the_triaged_ones_per_class():
    """A first run's list reads the failures not yet triaged first, one line each with its case
    id; the others (lenient, coverage, policy ...) one line per triage class with their counts
    and where they are listed, so a first run is not four lines per failure nobody need act on.
    Nothing goes missing: summary.md lists every distinct failure with its example and case id."""
    from padconf.judging.triage import PAD_BUGS

    cases, rows = planted_rows()
    groups = report.distinct_failures(rows)
    bugs = [g for g in groups if g["triage"] in PAD_BUGS]
    assert 0 < len(bugs) < len(groups)
    out = "\n".join(p for p in report.terminal_output(rows, 200, "RUN", "RUN/summary.md") if isinstance(p, str))
    failures = out.split("distinct failures", 1)[1].split("\nWhere the spec is silent", 1)[0]
    to_act, triaged = failures.split(f"\nThe {len(groups) - len(bugs)} triaged already", 1)
    assert "padconf report RUN --bugs" in to_act and "summary.md" not in to_act
    listed = [line for line in to_act.splitlines() if line.startswith("- ")]
    assert len(listed) == len(bugs)
    for g, line in zip(bugs, listed):
        assert line.startswith(f"- {g['runtime']} {g['verdict']} x{g['count']} [") and g["class"] in line
        assert line.endswith(f"; case id: {g['example']['case_id']}")
    per_class = [line for line in triaged.splitlines() if line.startswith("- ")]
    classes = {g["triage"].label for g in groups if g not in bugs}
    assert len(per_class) == len(classes) and "RUN/summary.md" in triaged and "padconf report RUN --html" in triaged
    for label in classes:
        mine = [g for g in groups if g not in bugs and g["triage"].label == label]
        (line,) = [x for x in per_class if x.startswith(f"- {label}: ")]
        assert f": {len(mine)} distinct failure" in line and f", {sum(g['count'] for g in mine)} results (" in line
    summary = report.markdown(rows, [c.to_json() for c in cases], [])
    for g in groups:
        assert f"id={g['example']['case_id']}" in summary


def test_squares_holding_only_skipped_or_not_implemented_results_fold_to_a_line_per_runtime():
    """A matrix square whose results are all skipped or not-implemented holds nothing judged: the
    terminal leaves it out of the matrix and says, in one line per runtime, which squares, how
    many results and why (each reason with its count); summary.md keeps every square."""
    rows = []
    for spec in ("onnx/Pad-1", "onnx/Pad-2"):
        for i, mode in enumerate(("constant", "reflect", "edge")):
            case = classify(Case(spec, np.arange(3, dtype=np.float32) + i, [1, 1], mode=mode))
            rows.append(judged_row("alpha", "inputs", case, Outcome(skipped="no kernel before opset 7"), "ok"))
            rows.append(judged_row("alpha", "initializers", case,
                                   Outcome(error="Could not find an implementation for Pad(1)", not_implemented=True),
                                   "ok"))
    judged = classify(Case("onnx/Pad-19", np.arange(3, dtype=np.float32), [1, 1]))
    rows += [judged_row("alpha", "inputs", judged, Outcome(np.array([0, 0, 1, 2, 0], np.float32)), "ok"),
             judged_row("alpha", "initializers", judged, Outcome(skipped="no initializers here"), "ok")]
    folded = report.unjudged_squares(rows)
    assert list(folded) == ["alpha"] and len(folded["alpha"]["squares"]) == 6 and folded["alpha"]["results"] == 12
    for width in (80, 300):
        text = printed(rows, width)
        matrix_part, rest = text.split(report.UNJUDGED_TITLE)
        assert "onnx/Pad-19" in matrix_part and "onnx/Pad-1 " not in matrix_part and "onnx/Pad-2 " not in matrix_part
        (line,) = [x for x in rest.splitlines() if x.startswith("- alpha: ")]
        assert line.startswith("- alpha: 6 squares, 12 results (onnx/Pad-1 constant, edge, reflect; onnx/Pad-2 "
                               "constant, edge, reflect): "), line
        assert "skipped x6: no kernel before opset N" in line and "not-implemented x6: Could not find" in line
    summary = report.markdown(rows, [], [])
    assert "| alpha | onnx/Pad-1 | reflect |" in summary  # every square, as before


def test_a_runs_notes_are_one_line_per_runtime_on_the_terminal():
    notes = ["iree: 781 cases of spec families it does not run (it runs onnx)", "runtime tract unavailable: no",
             "openvino: 16 cases skipped: OpenVINO has no element type for complex128",
             "iree: 200 cases skipped: IREE has no string tensors", "openvino: worker restarted 47 times"]
    assert report.folded_notes(notes, {"iree", "openvino"}) == [
        "iree: 781 cases of spec families it does not run (it runs onnx); 200 cases skipped: IREE has no string "
        "tensors",
        "openvino: 16 cases skipped: OpenVINO has no element type for complex128; worker restarted 47 times",
        "runtime tract unavailable: no"]


def test_a_first_runs_list_of_failures_not_yet_triaged_is_bounded_and_every_runtimes_largest_are_in_it():
    """A default run holds a hundred and more distinct failures not yet triaged: the terminal lists
    at most MAX_UNTRIAGED_LINES of them, each runtime's largest first in turn (one runtime's many
    small ones crowd out no other's), and one line counts the rest per runtime and names the
    command that lists every one; summary.md keeps them all."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
             "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform"]
    rows, sizes = [], {"many": 40, "few": 3, "some": 12}
    for runtime, groups in sizes.items():
        for g in range(groups):
            for n in range(1 + g % 5):  # results in the group: 1 to 5
                case = classify(Case("onnx/Pad-19", np.arange(3 + n, dtype=np.float32) + g, [1, 1]))
                refusal = f"refused: {words[g % len(words)]} {words[g // len(words)]}"
                rows.append(judged_row(runtime, "inputs", case, Outcome(error=refusal), "ok"))
    groups = report.distinct_failures(rows)
    assert len(groups) == sum(sizes.values()) == 55 > report.MAX_UNTRIAGED_LINES
    out = "\n".join(p for p in report.terminal_output(rows, 200, "RUN") if isinstance(p, str))
    listed = [line for line in out.splitlines() if line.startswith("- ") and "; case id: " in line]
    assert len(listed) == report.MAX_UNTRIAGED_LINES
    for runtime in sizes:
        mine = sorted((g for g in groups if g["runtime"] == runtime), key=lambda g: -g["count"])
        shown = [line for line in listed if line.startswith(f"- {runtime} ")]
        assert shown and f"x{mine[0]['count']} [" in shown[0]  # its largest among them
    assert len([x for x in listed if x.startswith("- few ")]) == 3  # a runtime with few has all of them
    (more,) = [line for line in out.splitlines() if line.startswith("- and ")]
    assert more == "- and 25 more not yet triaged (many 25): padconf report RUN --bugs lists every one"
    summary = report.markdown(rows, [], [])
    assert all(f"id={g['example']['case_id']}" in summary for g in groups)
