"""Read results.jsonl rows and tell what they show: the conformance matrix, the distinct
failures (one example each), which interpretation each runtime picks where the spec is silent,
and how many cases each edge class got. Rendered for the terminal (rich) and as summary.md."""
from __future__ import annotations

import re
from collections import Counter, defaultdict

from rich.table import Table

from .specs import spec_sort_key
from .verdicts import AMBIGUOUS_VERDICT, FAILURES, PASS, VERDICTS


def error_class(row: dict) -> str:
    """What makes two failures 'the same': the error text with numbers, names and shapes
    blanked, or the kind of difference for a mismatch."""
    text = row.get("error") or row.get("detail") or ""
    if row["verdict"] == "mismatch":
        text = (row.get("detail") or "").split(":")[0]
    text = text.splitlines()[0] if text else ""
    text = re.sub(r"/[\w./-]+", "<path>", text)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\([^)]*\)", "<..>", text)
    text = re.sub(r"-?\d+(\.\d+)?", "N", text)
    return text[:160] or "(no text)"


def matrix(rows: list[dict]) -> dict[tuple[str, str, str], Counter]:
    cells: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for row in rows:
        cells[(row["runtime"], row["spec"], row["mode"])][row["verdict"]] += 1
    return dict(sorted(cells.items()))


def failures(rows: list[dict]) -> list[dict]:
    """Distinct failures: one entry per runtime, verdict and error class, with a count, the
    dtypes / specs it covers and one example row (a spec document's worked example if any)."""
    groups: dict[tuple, dict] = {}
    for row in rows:
        if row["verdict"] not in FAILURES:
            continue
        key = (row["runtime"], row["verdict"], error_class(row))
        group = groups.setdefault(key, {"runtime": key[0], "verdict": key[1], "class": key[2],
                                        "count": 0, "dtypes": set(), "specs": set(), "example": row})
        group["count"] += 1
        if row["origin"].startswith("example:") and not group["example"]["origin"].startswith("example:"):
            group["example"] = row  # a worked example of the spec document says most
        group["dtypes"].add(row["dtype"])
        group["specs"].add(row["spec"])
    return sorted(groups.values(), key=lambda g: (g["runtime"], g["verdict"], -g["count"]))


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


def terminal_tables(rows: list[dict]) -> list[Table]:
    used = [v for v in VERDICTS if any(r["verdict"] == v for r in rows)]
    t = Table(title="Conformance matrix (cases per verdict)")
    for col in ["runtime", "spec", "mode"] + used:
        t.add_column(col, justify="right" if col in used else "left")
    for (runtime, spec, mode), counts in matrix(rows).items():
        t.add_row(runtime, spec, mode, *[_cell(v, counts[v]) for v in used])
    f = Table(title="Distinct failures (one example each)")
    for col in ("runtime", "verdict", "n", "what", "example"):
        f.add_column(col, overflow="fold")
    for g in failures(rows):
        f.add_row(g["runtime"], g["verdict"], str(g["count"]), _what(g), _example(g["example"]))
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


def _what(group: dict) -> str:
    specs = sorted(group["specs"])
    dtypes = sorted(group["dtypes"])
    return f"{group['class']}  — dtypes: {', '.join(dtypes)}; specs: {', '.join(specs)}"


def markdown(rows: list[dict], cases_rows: list[dict], notes: list[str]) -> str:
    used = [v for v in VERDICTS if any(r["verdict"] == v for r in rows)]
    out = ["# padconf run summary", "", f"{len(rows)} results over {len(cases_rows)} cases.", ""]
    if notes:
        out += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    out += ["## Conformance matrix", "", "| runtime | spec | mode | " + " | ".join(used) + " |",
            "|---|---|---|" + "---:|" * len(used)]
    for (runtime, spec, mode), counts in matrix(rows).items():
        out.append(f"| {runtime} | {spec} | {mode} | " + " | ".join(str(counts[v] or "") for v in used) + " |")
    out += ["", "## Distinct failures", "", "| runtime | verdict | n | what | example |", "|---|---|---:|---|---|"]
    for g in failures(rows):
        out.append(f"| {g['runtime']} | {g['verdict']} | {g['count']} | {_md(_what(g))} | {_md(_example(g['example']))} |")
    out += ["", "## Where the spec is silent", "", "| ambiguity | runtime | matched (cases) |", "|---|---|---|"]
    for (reason, runtime), counts in interpretations(rows).items():
        out.append(f"| {reason} | {runtime} | " + ", ".join(f"{k} ({n})" for k, n in counts.most_common()) + " |")
    specs = sorted({row["spec"] for row in cases_rows}, key=spec_sort_key)
    out += ["", "## Edge classes drawn (cases per spec version)", "",
            "| edge class | " + " | ".join(specs) + " |", "|---|" + "---:|" * len(specs)]
    for tag, per_spec in edge_class_counts(cases_rows).items():
        out.append(f"| {tag} | " + " | ".join(str(per_spec[s] or "") for s in specs) + " |")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
