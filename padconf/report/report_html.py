"""A run's report as one self-contained HTML page (inline CSS and JS, nothing fetched): the
conformance matrix, whose squares open their distinct failures with the arrays, error text and
spec rule; the interpretations runtimes picked where the spec is silent; the edge-class
coverage. Rendering only: what is shown is computed by padconf.report.report."""
from __future__ import annotations

import re

import numpy as np

from padconf.core.dtypes import dtype_name
from padconf.core.errors import CaseError
from padconf.core.escape import Html
from padconf.core.escape import html as escape
from padconf.judging.records import RunData
from padconf.report.quotes import ambiguity_texts, evidence
from padconf.report.report import (
    MUST_REJECT_NOTE,
    SILENT_WHAT,
    _example,
    configuration_dependent,
    distinct_failures,
    edge_class_counts,
    failures_count,
    interpretations,
    matrix,
    mode_label,
    must_reject_only,
    placement_dependent,
    square_findings,
    totals,
    triage_text,
    used_verdicts,
)
from padconf.spec.loader import spec_sort_key

COLOURS = {  # verdict -> colour of its chips and bar segments
    "pass": "#2f9e44", "mismatch": "#e03131", "wrongly-rejected": "#f76707", "wrongly-accepted": "#a61e4d",
    "not-implemented": "#7048e8", "crash": "#212529", "timeout": "#0c8599", "unexplained": "#e8590c",
    "ambiguous": "#f0b400", "skipped": "#adb5bd", "inconclusive": "#868e96", "placement-dependent": "#1971c2",
    "configuration-dependent": "#5f3dc4",
}
ARRAY_ELEMENTS = 100  # arrays up to this size are printed whole; larger ones abridged

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#212529}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:20px 0 6px} h3{font-size:15px;margin:0 0 6px}
table{border-collapse:collapse} th,td{border:1px solid #dee2e6;padding:3px 6px;vertical-align:top}
th{background:#f1f3f5;text-align:left} td.num{text-align:right}
.legend span,.n{display:inline-block;color:#fff;border-radius:3px;padding:0 4px;margin:1px;font-size:12px}
.main{display:grid;grid-template-columns:auto minmax(420px,1fr);gap:16px;align-items:start}
#panels{position:sticky;top:0;max-height:100vh;overflow:auto}
td.cell{padding:0;min-width:92px} td.cell a{display:block;padding:3px 5px;color:inherit;text-decoration:none}
td.cell.fails a{cursor:pointer} td.cell.fails:hover{outline:2px solid #1c7ed6}
td.cell.selected{outline:3px solid #1c7ed6}
.bar{display:flex;height:7px;margin-bottom:2px;border-radius:2px;overflow:hidden} .bar i{display:block}
td.none{color:#adb5bd;text-align:center}
.panel{display:none;border:1px solid #ced4da;border-radius:4px;padding:8px} .panel.open,.panel:target{display:block}
.failure{border-top:1px solid #dee2e6;padding:6px 0}
pre{background:#f8f9fa;padding:4px 6px;margin:2px 0;overflow:auto;max-height:260px;font-size:12px}
pre.error{background:#fff5f5;white-space:pre-wrap;word-break:break-all}
blockquote{margin:4px 0;padding:2px 8px;border-left:4px solid #1c7ed6;background:#e7f5ff}
.meta{color:#495057;font-size:12px;margin:2px 0}
.warn{background:#fff3cd;border:1px solid #ffe69c;padding:4px 8px;display:inline-block}
.caption{font-size:12px;color:#495057;margin-top:4px}
td.zero{background:#fff0f0;color:#c92a2a}
"""

# Opens the square named by the URL fragment (#cell=KEY: the page's markup calls a square's <td>
# "cell"): a click on a square sets it, and a link
# to the page can open one.
JS = """
function openCell(){
  var m = location.hash.match(/^#cell=(.+)$/);
  document.querySelectorAll('.panel.open').forEach(function(p){p.classList.remove('open')});
  document.querySelectorAll('td.cell.selected').forEach(function(c){c.classList.remove('selected')});
  var panel = m && document.getElementById('panel-' + decodeURIComponent(m[1]));
  document.getElementById('panel-hint').hidden = !!panel;
  if (!panel) return;
  panel.classList.add('open');
  document.querySelector('td[data-cell="' + panel.dataset.cell + '"]').classList.add('selected');
}
window.addEventListener('hashchange', openCell);
document.addEventListener('DOMContentLoaded', openCell);
"""


def render(run: RunData) -> Html:
    rows = run.rows
    used = used_verdicts(rows)
    runtimes = list(totals(rows))
    findings = square_findings(rows)
    keys = _square_keys(findings)
    distinct = distinct_failures(rows)
    body = [
        f"<h1>padconf report</h1><p class=meta>{escape(str(run.dir))}: {len(rows)} results over "
        f"{len({r['case_id'] for r in rows})} cases, {len(runtimes)} runtimes, "
        f"{len({r['spec'] for r in rows})} spec versions; {failures_count(distinct)}.</p>"
        + (f"<p class=warn>Part of a run only: {escape(run.unfinished)}.</p>" if run.unfinished else "")
        + (f"<p class=warn>Not verified: {escape(run.unsigned)}.</p>" if run.unsigned else ""),
        "<p class=legend>" + "".join(f"<span style='background:{COLOURS[v]}'>{v}</span>" for v in used) + "</p>",
        _totals_table(rows, used),
        "<div class=main><section id=matrix><h2>Conformance matrix</h2>"
        "<p class=meta>results per verdict (each case once per placement) for each runtime, spec version and mode; "
        "a square with failures or ambiguities opens them</p>" + _matrix_table(rows, runtimes, findings, keys)
        + (f"<p class=meta>{escape(MUST_REJECT_NOTE)}</p>" if must_reject_only(rows) else "") + "</section>",
        "<section id=panels><h2>Square details</h2><p id=panel-hint class=meta>Click a coloured square of the "
        "matrix to see its distinct failures.</p>"
        + "".join(_panel(run, key, found, keys[key]) for key, found in findings.items() if _opens(found))
        + "</section></div>",
        _placement_section(run),
        _configuration_section(run),
        _ambiguity_table(rows, runtimes, run.specs_dir),
        _edge_table(run.cases_rows),
    ]
    return Html("<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>padconf report</title>"
                f"<style>{CSS}</style><script>{JS}</script></head><body>" + "\n".join(body) + "</body></html>\n")


def _opens(found: dict) -> bool:
    return bool(found["failures"] or found["picks"])


def _square_keys(findings) -> dict:
    """(runtime, spec, mode) -> a unique fragment-safe key such as onnxruntime--onnx-Pad-19--constant."""
    keys, seen = {}, set()
    for square in findings:
        key = "--".join(re.sub(r"[^A-Za-z0-9_.]+", "-", part) for part in square)
        while key in seen:
            key += "_"
        seen.add(key)
        keys[square] = key
    return keys


def _chips(counts, used) -> str:
    total = sum(counts.values())
    bar = "".join(f"<i style='flex:{counts[v]};background:{COLOURS[v]}'></i>" for v in used if counts[v])
    chips = "".join(f"<span class=n data-verdict='{v}' title='{v}: {counts[v]} of {total}' "
                    f"style='background:{COLOURS[v]}'>{counts[v]}</span>" for v in used if counts[v])
    return f"<span class=bar>{bar}</span>{chips}"


def _totals_table(rows, used) -> str:
    head = "<tr><th>runtime</th>" + "".join(f"<th>{v}</th>" for v in used) + "<th>all</th></tr>"
    body = "".join(f"<tr><td>{escape(rt)}</td>" + "".join(f"<td class=num>{c[v] or ''}</td>" for v in used)
                   + f"<td class=num>{sum(c.values())}</td></tr>" for rt, c in totals(rows).items())
    return f"<h2>Totals per runtime</h2><table id=totals>{head}{body}</table>"


def _matrix_table(rows, runtimes, findings, keys) -> str:
    squares = matrix(rows)
    used = used_verdicts(rows)
    marked = must_reject_only(rows)
    lines = sorted({(spec, mode) for _, spec, mode in squares}, key=lambda sm: (spec_sort_key(sm[0]), sm[1]))
    out = ["<table id=conformance><tr><th>spec</th><th>mode</th>"
           + "".join(f"<th>{escape(rt)}</th>" for rt in runtimes) + "</tr>"]
    for spec, mode in lines:
        out.append(f"<tr><th>{escape(spec)}</th><td>{escape(mode_label(spec, mode, marked))}</td>")
        for rt in runtimes:
            counts = squares.get((rt, spec, mode))
            if counts is None:
                out.append("<td class=none>–</td>")
                continue
            key = keys[(rt, spec, mode)]
            opens = _opens(findings[(rt, spec, mode)])
            attrs = (f"class='cell{' fails' if opens else ''}' data-cell='{key}' data-runtime='{escape(rt)}' "
                     f"data-spec='{escape(spec)}' data-mode='{escape(mode)}'")
            inner = _chips(counts, used)
            out.append(f"<td {attrs}>" + (f"<a href='#cell={key}'>{inner}</a>" if opens else f"<a>{inner}</a>")
                       + "</td>")
        out.append("</tr>")
    return "".join(out) + "</table>"


def _panel(run: RunData, square, found, key) -> str:
    runtime, spec, mode = square
    n_fail = sum(g["count"] for g in found["failures"])
    out = [f"<div class=panel id='panel-{key}' data-cell='{key}'><h3>{escape(runtime)} · {escape(spec)} · "
           f"{escape(mode)}</h3><p class=meta>" + (f"{n_fail} failing results in {len(found['failures'])} distinct "
                                                 "failures (one example each)" if n_fail else "no failure") + "</p>"]
    for group in found["failures"]:
        out.append(_failure(run, group))
    if found["picks"]:
        out.append("<p class=caption>Where the spec is silent, this runtime matched:</p><ul class=picks>"
                   + "".join(f"<li>{escape(point)}: " + ", ".join(f"{escape(k)} ({n})" for k, n in c.most_common())
                             + "</li>" for (point, _), c in found["picks"].items()) + "</ul>")
    return "".join(out) + "</div>"


def _failure(run: RunData, group) -> str:
    row = group["example"]
    ev = evidence(row, run)
    out = [f"<div class=failure data-verdict='{group['verdict']}'><div><span class=n style='background:"
           f"{COLOURS[group['verdict']]}'>{group['verdict']}</span> ×{group['count']} "
           f"<b>{escape(group['class'])}</b></div><p class=meta>triage: {escape(triage_text(group))}<br>"
           f"dtypes: {escape(', '.join(sorted(group['dtypes'])))}; "
           f"spec versions: {escape(', '.join(sorted(group['specs'], key=spec_sort_key)))}<br>example: "
           f"{escape(_example(row))}</p>"]
    case = ev["case"]
    if case is None:
        out.append("<p class=meta>(this case is not in cases.jsonl)</p>")
    else:
        inputs = f"mode={case.mode} pads={case.pads}" + (f" axes={case.axes}" if case.axes is not None else "")
        if case.context is not None:  # the model is more than a Pad: a plain Pad of these inputs may pass
            attrs = " ".join(f"{k}={v}" for k, v in case.context.attrs.items())
            out.append(f"<div class=caption>model: <b>{escape(case.graph or '')}</b>"
                       + (f" ({escape(case.context.consumer)} {escape(attrs)})" if attrs else "") + "</div>")
        out.append(f"<div class=caption>inputs: {escape(inputs)}</div>" + _array("data", case.data))
        if case.constant_value is not None:
            out.append(_array("constant_value", case.constant_value))
        if case.expected is not None:
            out.append(_array("expected", case.expected))
        elif case.reason and not case.interpretations:
            out.append(f"<div class=caption>expected: rejected, because {escape(case.reason)}</div>")
        for name, out_arr in case.interpretations.items():
            out.append(_array(f"expected under {name}", out_arr) if out_arr is not None
                       else f"<div class=caption>expected under {escape(name)}: rejected</div>")
    if ev["actual"] is not None:
        out.append(_array(f"actual ({row['runtime']})", ev["actual"]))
    for label, text in (("detail", ev["detail"]), ("error", ev["error"]), ("note", ev["note"])):
        if text and not (label == "detail" and text == ev["error"]):
            out.append(f"<div class=caption>{label}</div><pre class=error>{escape(text)}</pre>")
    for quote in ev["rules"]:
        if quote.get("text"):
            out.append(f"<blockquote class=rule><div class=caption>{escape(row['spec'])}: "
                       f"{escape(quote['spec_key'] or '')}</div>{escape(quote['text'])}"
                       + (f"<div class=meta>{escape(quote['note'])}</div>" if quote.get("note") else "")
                       + "</blockquote>")
        elif quote.get("note"):
            out.append(f"<div class=caption>spec: {escape(quote['note'])}</div>")
    return "".join(out) + "</div>"


def _dependent_section(run: RunData, section: str, groups: list[dict], heading: str, meta: str) -> str:
    if not groups:
        return ""
    return (f"<section id={section}><h2>{heading}</h2><p class=meta>{meta}</p>"
            + "".join(("<h3>" + escape(g["runtime"]) + "</h3>" if i == 0 or groups[i - 1]["runtime"] != g["runtime"]
                       else "") + _failure(run, g) for i, g in enumerate(groups)) + "</section>")


def _placement_section(run: RunData) -> str:
    return _dependent_section(
        run, "placement", placement_dependent(run.rows), "Answers that depend on the placement",
        "cases a runtime answers differently when pads are fed, baked in, or the whole Pad is constant (folded), "
        "even where one answer is right: a user's model can take either path")


def _configuration_section(run: RunData) -> str:
    return _dependent_section(
        run, "configuration", configuration_dependent(run.rows), "Answers that depend on the configuration",
        "cases a runtime's variant (its name[option=value]) answers otherwise than the runtime in its default "
        "configuration, which its verdicts are given in")


def _array(label: str, arr) -> str:
    arr = np.asarray(arr)
    try:
        name = dtype_name(arr.dtype)
    except CaseError:
        name = str(arr.dtype)
    about = f"{label}: {name} shape {list(arr.shape)}"
    if arr.size > ARRAY_ELEMENTS:
        about += f", {arr.size} elements, abridged"
    with np.printoptions(threshold=ARRAY_ELEMENTS, edgeitems=3 if arr.ndim <= 2 else 2, linewidth=100):
        text = np.array2string(arr, separator=", ")
    return f"<div class=caption>{escape(about)}</div><pre class=array>{escape(text)}</pre>"


def _ambiguity_table(rows, runtimes, specs_dir) -> str:
    picks = interpretations(rows)
    if not picks:
        return "<h2>Where the spec is silent</h2><p class=meta>No case hit an undefined point.</p>"
    texts = ambiguity_texts(rows, specs_dir)
    out = [f"<h2>Where the spec is silent</h2><p class=meta>{escape(SILENT_WHAT)}</p>"
           "<table id=ambiguities><tr><th>undefined point</th>"
           + "".join(f"<th>{escape(rt)}</th>" for rt in runtimes) + "</tr>"]
    for point in sorted({point for point, _ in picks}):
        quotes = "".join(f"<blockquote>{escape(text)} <span class=meta>({escape(', '.join(specs))})</span>"
                         "</blockquote>" for text, specs in texts.get(point, []))
        out.append(f"<tr><td><b>{escape(point)}</b>{quotes}</td>")
        for rt in runtimes:
            c = picks.get((point, rt))
            out.append("<td class=none>–</td>" if c is None else
                       "<td>" + "<br>".join(f"{escape(k)} ({n})" for k, n in c.most_common()) + "</td>")
        out.append("</tr>")
    return "".join(out) + "</table>"


def _edge_table(cases_rows) -> str:
    counts = edge_class_counts(cases_rows)
    specs = sorted({c["spec"] for c in cases_rows}, key=spec_sort_key)
    out = ["<h2>Edge classes drawn (cases per spec version)</h2><p class=meta>shaded: no case of that "
           "class for that version</p><table id=edge-classes><tr><th>edge class</th>"
           + "".join(f"<th>{escape(s)}</th>" for s in specs) + "</tr>"]
    for tag, per_spec in counts.items():
        out.append(f"<tr><td>{escape(tag)}</td>" + "".join(
            f"<td class='num{'' if per_spec[s] else ' zero'}'>{per_spec[s] or 0}</td>" for s in specs) + "</tr>")
    return "".join(out) + "</table>"

