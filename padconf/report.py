"""Read results.jsonl rows and tell what they show: the conformance matrix, the distinct
failures (one example each), which interpretation each runtime picks where the spec is silent,
and how many cases each edge class got. Rendered for the terminal (rich), as summary.md and
the short PR-comment markdown here, and as a self-contained HTML page by report_html."""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from .cases import AMBIGUOUS, MUST_REJECT, Case
from .dtypes import decode_array
from .errors import CaseError, PadconfError, SpecError
from .runner import RESULT_KEYS, attach_controls, read_jsonl
from .signature import distinct_failure, failure_class
from .specs import Spec, get_spec, spec_sort_key
from .triage import PAD_BUGS, triage
from .verdicts import AMBIGUOUS_VERDICT, FAILURES, MISMATCH, NOT_IMPLEMENTED, PASS, SKIPPED, VERDICTS


def matrix(rows: list[dict]) -> dict[tuple[str, str, str], Counter]:
    cells: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for row in rows:
        cells[(row["runtime"], row["spec"], row["mode"])][row["verdict"]] += 1
    return dict(sorted(cells.items()))


def failures(rows: list[dict]) -> list[dict]:
    """Distinct failures: one entry per runtime, verdict, error class and triage class, with a
    count, the dtypes / specs it covers and one example row (a spec document's worked example
    if any)."""
    groups: dict[tuple, dict] = {}
    for row in rows:
        if row["verdict"] not in FAILURES:
            continue
        found, fact = triage(row)
        key = (*distinct_failure(row), found)
        group = groups.setdefault(key, {"runtime": key[0], "verdict": key[1], "class": key[2], "triage": found,
                                        "upstream": fact, "count": 0, "dtypes": set(), "specs": set(),
                                        "example": row})
        group["count"] += 1
        if row["origin"].startswith("example:") and not group["example"]["origin"].startswith("example:"):
            group["example"] = row  # a worked example of the spec document says most
        group["dtypes"].add(row["dtype"])
        group["specs"].add(row["spec"])
    return sorted(groups.values(), key=lambda g: (g["runtime"], g["verdict"], -g["count"]))


PLACEMENT_DEPENDENT = "placement-dependent"


def _answer(row: dict) -> tuple:
    """What a runtime answered, as far as a row tells: verdict, interpretations matched, the
    class of its failure, and its output where the row keeps it."""
    return (row["verdict"], tuple(row.get("matched") or ()),
            failure_class(row) if row["verdict"] in FAILURES else None, json.dumps(row.get("output")))


def placement_dependent(rows: list[dict]) -> list[dict]:
    """Cases one runtime answers differently in two placements (its kernel against its folding
    path, say), even where one answer is right: a user's model can take either path. Grouped
    like ``failures``, one group per runtime and pattern of verdicts."""
    by_case: dict[tuple, dict] = defaultdict(dict)
    for row in rows:
        if row["verdict"] != SKIPPED:
            by_case[(row["runtime"], row["case_id"])][row["placement"]] = row
    groups: dict[tuple, dict] = {}
    for (runtime, _), placed in sorted(by_case.items()):
        if len({_answer(r) for r in placed.values()}) < 2:
            continue
        verdicts = [placed[p]["verdict"] for p in sorted(placed)]
        pattern = "; ".join(f"{p}: {placed[p]['verdict']}" for p in sorted(placed))
        if len(set(verdicts)) == 1:
            pattern += " (different answers)"
        example = next(r for r in placed.values() if r["verdict"] != PASS)
        found, fact = triage(example) if example["verdict"] in FAILURES else (None, None)
        group = groups.setdefault((runtime, pattern), {"runtime": runtime, "verdict": PLACEMENT_DEPENDENT,
                                                       "class": pattern, "triage": found, "upstream": fact,
                                                       "count": 0, "dtypes": set(), "specs": set(),
                                                       "example": example})
        group["count"] += 1
        group["dtypes"].add(example["dtype"])
        group["specs"].add(example["spec"])
    return sorted(groups.values(), key=lambda g: (g["runtime"], -g["count"]))


def interpretations(rows: list[dict]) -> dict[tuple[str, str], Counter]:
    """(ambiguity, runtime) -> how often the runtime matched each interpretation (or none)."""
    picks: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for row in rows:
        if row["verdict"] != AMBIGUOUS_VERDICT:
            continue
        for chosen in row["matched"] or ["(rejected)" if row["error"] is not None else "(another output)"]:
            picks[(row["reason"], row["runtime"])][chosen] += 1
    return dict(sorted(picks.items()))


def edge_class_counts(cases_rows: list[dict]) -> dict[str, Counter]:
    """edge class -> cases per spec version that exercise it."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in cases_rows:
        for tag in row.get("tags", []):
            counts[tag][row["spec"]] += 1
    return dict(sorted(counts.items()))


def _example(row: dict) -> str:
    return (f"{row['spec']} {row['mode']} {row['dtype']} shape={row['shape']} pads={row['pads']}"
            + (f" axes={row['axes']}" if row.get("axes") is not None else "")
            + (f" value={row['constant_value']}" if row.get("constant_value") else "")
            + f" [{row['placement']}] id={row['case_id']}"
            + (f" ({row['origin'].replace(':', ' ', 1)} of the spec document)" if row["origin"].startswith("example:") else ""))


class _FitToWidth:
    """A rich renderable that builds its table for the width it is printed at."""

    def __init__(self, build):
        self.build = build

    def __rich_console__(self, console, options):
        yield self.build(options.max_width)


def matrix_table(rows: list[dict], width: int | None = None) -> Table:
    """One column per verdict where that fits ``width``; else each cell's verdicts listed in one
    column, so that no runtime or spec name is cut."""
    used = used_verdicts(rows)
    cells = matrix(rows)
    t = Table(title="Conformance matrix (cases per verdict)")
    names = [max([len(col)] + [len(key[i]) for key in cells]) for i, col in enumerate(("runtime", "spec", "mode"))]
    wide = sum(names) + sum(max(len(v), 4) for v in used) + 3 * (3 + len(used)) + 1
    for col in ("runtime", "spec", "mode"):
        t.add_column(col, overflow="fold")
    if width is None or wide <= width:
        for v in used:
            t.add_column(v, justify="right", overflow="fold")
        for (runtime, spec, mode), counts in cells.items():
            t.add_row(runtime, spec, mode, *[_cell(v, counts[v]) for v in used])
    else:
        t.add_column("cases per verdict", overflow="fold")
        for (runtime, spec, mode), counts in cells.items():
            t.add_row(runtime, spec, mode, ", ".join(f"{_cell(v, counts[v])} {v}" for v in used if counts[v]))
    return t


def terminal_tables(rows: list[dict]) -> list:
    """The matrix, distinct failures and interpretations for rich. Nothing is cut to 'onn…' at
    any width (a CI log has 80 columns): cells fold, and the matrix fits itself to the width."""
    t = _FitToWidth(lambda width: matrix_table(rows, width))
    f = Table(title="Distinct failures (one example each)")
    for col in ("runtime", "verdict", "triage", "n", "what", "example"):
        f.add_column(col, overflow="fold")
    for g in failures(rows) + placement_dependent(rows):
        f.add_row(g["runtime"], g["verdict"], triage_text(g), str(g["count"]), _what(g), _example(g["example"]))
    a = Table(title="Where the spec is silent: which interpretation each runtime matched")
    for col in ("ambiguity", "runtime", "matched (cases)"):
        a.add_column(col, overflow="fold")
    for (reason, runtime), counts in interpretations(rows).items():
        a.add_row(reason, runtime, ", ".join(f"{k} ({n})" for k, n in counts.most_common()))
    return [t, f, a]


def _cell(verdict: str, n: int) -> str:
    if not n:
        return ""
    colour = "green" if verdict == PASS else "yellow" if verdict == AMBIGUOUS_VERDICT else "red"
    return f"[{colour}]{n}[/]"


def triage_text(group: dict) -> str:
    """A group's triage class, with the upstream link it rests on."""
    if group.get("triage") is None:  # not a failure (an answer no interpretation gives)
        return "-"
    return group["triage"].label + (f" ({group['upstream'].link})" if group["upstream"] else "")


def _what(group: dict) -> str:
    specs = sorted(group["specs"])
    dtypes = sorted(group["dtypes"])
    return f"{group['class']}  — dtypes: {', '.join(dtypes)}; specs: {', '.join(specs)}"


def markdown(rows: list[dict], cases_rows: list[dict], notes: list[str]) -> str:
    used = used_verdicts(rows)
    out = ["# padconf run summary", "", f"{len(rows)} results over {len(cases_rows)} cases.", ""]
    if notes:
        out += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    out += ["## Conformance matrix", "", "| runtime | spec | mode | " + " | ".join(used) + " |",
            "|---|---|---|" + "---:|" * len(used)]
    for (runtime, spec, mode), counts in matrix(rows).items():
        out.append(f"| {runtime} | {spec} | {mode} | " + " | ".join(str(counts[v] or "") for v in used) + " |")
    distinct = failures(rows) + placement_dependent(rows)
    bugs = [g for g in distinct if g["triage"] in PAD_BUGS]
    out += ["", "## Distinct failures", "",
            f"{len(distinct)} distinct failures, {len(bugs)} of them Pad bugs to file (triage: "
            + ", ".join(t.label for t in PAD_BUGS) + "); the others are coverage, documented policy, "
            "known upstream or not Pad-specific.", "",
            "| runtime | verdict | triage | n | what | example |", "|---|---|---|---:|---|---|"]
    for g in sorted(distinct, key=lambda g: g["triage"] not in PAD_BUGS):
        out.append(f"| {g['runtime']} | {g['verdict']} | {_md(triage_text(g))} | {g['count']} | {_md(_what(g))} "
                   f"| {_md(_example(g['example']))} |")
    out += ["", "## Not implemented (coverage: runtime x spec version x dtype)", "",
            "| runtime | spec | dtypes without a kernel |", "|---|---|---|"]
    for (runtime, spec), dtypes in support_gaps(rows).items():
        out.append(f"| {runtime} | {spec} | {', '.join(sorted(dtypes))} |")
    out += ["", "## Where the spec is silent", "", "| ambiguity | runtime | matched (cases) |", "|---|---|---|"]
    for (reason, runtime), counts in interpretations(rows).items():
        out.append(f"| {reason} | {runtime} | " + ", ".join(f"{k} ({n})" for k, n in counts.most_common()) + " |")
    specs = sorted({row["spec"] for row in cases_rows}, key=spec_sort_key)
    out += ["", "## Edge classes drawn (cases per spec version)", "",
            "| edge class | " + " | ".join(specs) + " |", "|---|" + "---:|" * len(specs)]
    for tag, per_spec in edge_class_counts(cases_rows).items():
        out.append(f"| {tag} | " + " | ".join(str(per_spec[s] or "") for s in specs) + " |")
    return "\n".join(out) + "\n"


def support_gaps(rows: list[dict]) -> dict[tuple[str, str], set[str]]:
    """(runtime, spec) -> the dtypes it answered not-implemented for: coverage, not bugs."""
    gaps: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        if row["verdict"] == NOT_IMPLEMENTED:
            gaps[(row["runtime"], row["spec"])].add(row["dtype"])
    return dict(sorted(gaps.items(), key=lambda kv: (kv[0][0], spec_sort_key(kv[0][1]))))


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- a run directory, for `padconf report`

@dataclass
class RunData:
    dir: Path
    rows: list[dict]  # results.jsonl
    cases: dict[str, dict]  # cases.jsonl by case id, still JSON (decoded only where shown)
    specs_dir: str | None  # run.json's: where the run's spec files are

    @property
    def cases_rows(self) -> list[dict]:
        return list(self.cases.values())


def load_run(run_dir: Path | str) -> RunData:
    """A run directory's results and cases; a missing or empty one is an error (a report on
    nothing would look like a clean run)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise PadconfError(f"{run_dir}: no such run directory")
    results = run_dir / "results.jsonl"
    if not results.is_file():
        raise PadconfError(f"{run_dir}: no results.jsonl (not a run directory of `padconf run --out`?)")
    rows = attach_controls(read_jsonl(results, RESULT_KEYS), run_dir)
    if not rows:
        raise PadconfError(f"{results}: holds no result: nothing to report")
    cases = {c.get("id"): c for c in read_jsonl(run_dir / "cases.jsonl", ("id", "spec", "data", "pads", "mode"))}
    specs_dir = None
    if (run_dir / "run.json").is_file():
        try:
            specs_dir = json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("specs_dir")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
            raise CaseError(f"{run_dir / 'run.json'}: malformed: {exc}") from None
    return RunData(run_dir, rows, cases, specs_dir)


def totals(rows: list[dict]) -> dict[str, Counter]:
    """runtime -> results per verdict."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        out[row["runtime"]][row["verdict"]] += 1
    return dict(sorted(out.items()))


def used_verdicts(rows: list[dict]) -> list[str]:
    return [v for v in VERDICTS if any(r["verdict"] == v for r in rows)]


def cell_findings(rows: list[dict]) -> dict[tuple[str, str, str], dict]:
    """(runtime, spec, mode) -> that matrix cell's distinct failures and interpretation picks."""
    by_cell: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        by_cell[(row["runtime"], row["spec"], row["mode"])].append(row)
    return {key: {"failures": failures(cell), "picks": interpretations(cell), "unmatched": unmatched(cell)}
            for key, cell in sorted(by_cell.items())}


def unmatched(rows: list[dict]) -> list[dict]:
    """Answers to an undefined point that no interpretation gives, grouped like failures (one
    per runtime and ambiguity, with an example): not a failure, but worth a look."""
    groups: dict[tuple, dict] = {}
    for row in rows:
        if row["verdict"] == AMBIGUOUS_VERDICT and not row["matched"]:
            group = groups.setdefault((row["runtime"], row["reason"]), {
                "runtime": row["runtime"], "verdict": AMBIGUOUS_VERDICT, "count": 0, "dtypes": set(), "specs": set(),
                "class": f"{row['reason']}: an answer no interpretation gives", "example": row})
            group["count"] += 1
            group["dtypes"].add(row["dtype"])
            group["specs"].add(row["spec"])
    return sorted(groups.values(), key=lambda g: (g["runtime"], g["class"]))


def _spec(spec_id: str, specs_dir) -> Spec | None:
    try:
        return get_spec(spec_id, Path(specs_dir) if specs_dir else None)
    except SpecError:  # the spec file moved since the run: the report shows the rest
        return None


def rule_quotes(row: dict, specs_dir=None) -> list[dict]:
    """The spec's sentences a failure is judged by, as [{spec_key, text, note?}]: the rule a
    must-reject case breaks, the ambiguity an ambiguous case hits, or for a defined case the
    rule that fixes what went wrong (output shape, layout of pads, type list)."""
    from .onnx_testdata import rule_text  # onnx_testdata imports onnx: only when asked

    spec = _spec(row["spec"], specs_dir)
    if spec is None:
        return [{"spec_key": None, "text": None, "note": f"spec file of {row['spec']} not found"}]
    if row.get("kind") == MUST_REJECT:
        return [rule_text(spec, row.get("rule"))]
    if row.get("kind") == AMBIGUOUS:
        return [{"spec_key": f"ambiguities.{name}", "text": spec.ambiguities[name].text}
                for name in (row["reason"] or "").split(",") if name in spec.ambiguities]
    detail = row.get("detail") or ""
    if row["verdict"] == MISMATCH:
        rule = "output_shape" if detail.startswith("shape") else "dtypes" if detail.startswith("dtype") else "pads_layout"
        return [rule_text(spec, rule)]
    if row["verdict"] == NOT_IMPLEMENTED:
        return [rule_text(spec, "dtypes")]
    return [{"spec_key": None, "text": None, "note": "the case is defined: no rule of the spec rejects it"}]


def evidence(row: dict, run: RunData) -> dict:
    """What a reader needs to see a failure for themselves: the inputs, the expected output
    (or each interpretation's), what the runtime gave or said, and the spec's words."""
    doc = run.cases.get(row["case_id"])
    out = {"case": None, "actual": None, "error": row.get("error"), "detail": row.get("detail"),
           "note": row.get("note"), "rules": rule_quotes(row, run.specs_dir)}
    try:
        if doc is not None:
            out["case"] = Case.from_json(doc)
        if row.get("output") is not None:
            out["actual"] = decode_array(row["output"])
    except CaseError as exc:
        raise CaseError(f"{run.dir}: case {row['case_id']}: {exc}") from None
    return out


def ambiguity_texts(rows: list[dict], specs_dir=None) -> dict[str, list[tuple[str, list[str]]]]:
    """ambiguity name -> [(the spec's text of it, the spec versions hit that say so)]: versions
    word the same undefined point differently."""
    texts: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for spec_id in sorted({r["spec"] for r in rows if r["verdict"] == AMBIGUOUS_VERDICT}, key=spec_sort_key):
        spec = _spec(spec_id, specs_dir)
        hit = {name for r in rows if r["spec"] == spec_id and r["reason"] for name in r["reason"].split(",")}
        for name, amb in (spec.ambiguities if spec else {}).items():
            if name in hit:
                texts[name].setdefault(amb.text, []).append(spec_id)
    return {name: list(by_text.items()) for name, by_text in sorted(texts.items())}


def short_markdown(rows: list[dict], html_name: str | None = None, top: int = 10) -> str:
    """A few dozen lines for a pull-request comment: totals per runtime and verdict, the most
    frequent distinct failures, and where the full report is."""
    used = used_verdicts(rows)
    found = failures(rows)
    picks = interpretations(rows)
    out = [f"### padconf: {len(rows)} results, {len({r['case_id'] for r in rows})} cases, "
           f"{len(found)} distinct failures", "",
           "| runtime | " + " | ".join(used) + " |", "|---|" + "---:|" * len(used)]
    for runtime, counts in totals(rows).items():
        out.append(f"| {runtime} | " + " | ".join(str(counts[v] or "") for v in used) + " |")
    if found:
        shown = sorted(found, key=lambda g: -g["count"])[:top]
        out += ["", f"Distinct failures ({len(shown)} most frequent of {len(found)}):" if len(shown) < len(found)
                else f"Distinct failures ({len(found)}):", "", "| runtime | verdict | n | what |", "|---|---|---:|---|"]
        # a PR comment renders HTML: a runtime's "<axes>" would vanish as an unknown tag
        out += [f"| {g['runtime']} | {g['verdict']} | {g['count']} | "
                + _short(_md(_what(g)), 160).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + " |"
                for g in shown]
    if picks:
        out += ["", f"Where the spec is silent: {len({reason for reason, _ in picks})} undefined points hit, "
                    f"{sum(sum(c.values()) for c in picks.values())} results; see the full report."]
    if html_name:
        out += ["", f"Full report (matrix, every failure with its arrays, spec rules quoted): `{html_name}`"]
    return "\n".join(out) + "\n"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
