"""INDEX.md of a minimize over a run directory or a model: its bundles by triage, the Pad bugs to
file first."""
from __future__ import annotations

from padconf.core import escape
from padconf.judging.triage import PAD_BUGS, Triage
from padconf.minimize.bundle.report import short_error, triage_with_fact
from padconf.minimize.probes.evidence import checks_text

PAD_BUG, OTHER_COMPONENT = "Pad bugs to file", "Another component's bug, to file there"
NEEDS_A_LOOK = "Needs a look: a Pad failure whose label misses a check (evidence.json names it)"
NOT_PAD_SPECIFIC = "Not Pad-specific: the runtime's bug on a path its controls share, to file as a control shows it"
KNOWN_UPSTREAM = "Known upstream: an issue the runtime's maintainers know already (its link in the bundle)"
NOT_A_BUG, MERGED = "Not a bug to file", "Merged or not minimized"


def index_markdown(target: str, runtime: str, summaries: list[dict]) -> escape.Markdown:
    """INDEX.md: the bundles by triage, the Pad bugs to file first, then those that are another
    component's (the operation Pad is lowered to, onnx's shape inference), then the runtime's bugs
    that its controls show too (not Pad-specific), then the rest; the failures merged into
    another bundle or not minimized last."""
    sections: dict[str, list[str]] = {PAD_BUG: [], NEEDS_A_LOOK: [], OTHER_COMPONENT: [], KNOWN_UPSTREAM: [],
                                      NOT_PAD_SPECIFIC: [], NOT_A_BUG: [], MERGED: []}
    # merged failures beside their root (grouped by mechanism), then the ones not minimized
    summaries = sorted(summaries, key=lambda s: (0, 0) if not (s.get("merged_into") or s.get("dir") is None) else
                       (1, s["merged_into"]["n"]) if s.get("merged_into") else (2, s["n"]))
    merged: dict[int, list[dict]] = {}  # the failures merged into each bundle: one row per mechanism
    for s in summaries:
        if s.get("merged_into"):  # into a bundle of this runtime, or of another path of its engine (``link``)
            merged.setdefault(id(s["merged_into"]), []).append(s)
            continue
        if s.get("dir") is None:
            rec = s["recorded"]
            sections[MERGED].append(
                f"| {s['n']} | - | - | {rec['verdict'] + ' in the run, not alone' if rec else 'skipped'}: "
                f"{escape.markdown(short_error(s['error'], 300))} | - | {s['shape']} | - | - |")
            continue
        sh = s["shrunk"]
        found = triage_with_fact(sh, s["recorded"])[0]
        proof = s.get("evidence")
        section = (OTHER_COMPONENT if sh.native and not (proof or {}).get("filed_against") else
                   (NEEDS_A_LOOK if proof and proof["missing"] else PAD_BUG) if found in PAD_BUGS else
                   NOT_PAD_SPECIFIC if found == Triage.NOT_PAD_SPECIFIC else
                   KNOWN_UPSTREAM if found == Triage.KNOWN_UPSTREAM else NOT_A_BUG)
        checks = checks_text(proof) + (" (missing: " + ", ".join(proof["missing"]) + ")" if proof["missing"] else "") \
            if proof else "-"
        a, b = sh.original.case.data, sh.final.case.data
        shown = s["title"] + (f" (fails through {sh.native['spec']} itself too: its bug)" if sh.native else "")
        sections[section].append(
            f"| {s['n']} | [{s['dir'].name}]({s['dir'].name}/REPORT.md) | {found.label if found else '-'} | "
            f"{escape.markdown(shown)} | {checks} | {list(a.shape)} ({a.size}) | {list(b.shape)} ({b.size}) | "
            f"{sh.seconds:.1f} |")
    grouped = []
    for group in merged.values():
        root, first = group[0]["merged_into"], group[0]
        shapes = ", ".join(sorted({str(m["shape"]) for m in group}))
        grouped.append(f"| {', '.join(str(m['n']) for m in group)} | [{root['dir'].name}]"
                       f"({first.get('link') or root['dir'].name}/REPORT.md) | - | merged: {len(group)} "
                       f"failure{'s' if len(group) > 1 else ''} of the same mechanism as bundle {root['n']} "
                       f"(listed there, its experiment rerun on each) | - | {shapes} | - | - |")
    sections[MERGED] = grouped + sections[MERGED]  # the failures not minimized after them
    lines = [f"# padconf minimize {target} --runtime {runtime}", "",
             "Checks (padconf.minimize.probes.evidence): (a) the repro in the runtime's own API exits 1, (b) the "
             "input is defined or the failure unsafe, (c) a control computing on the same values passes, (d) "
             "coverage ruled out by experiment, (e) no duplicate nor known upstream, (f) the minimal case valid; "
             "✓ passed, ✗ missing, · not needed.", "",
             ", ".join(f"{len(rows)} {name[0].lower() + name[1:]}" for name, rows in sections.items()) + ".", ""]
    for name, rows in sections.items():
        if rows:
            lines += [f"## {name}", "", "| # | bundle | triage | title | checks (a)-(f) | before | after | seconds |",
                      "|---:|---|---|---|---|---|---|---:|", *rows, ""]
    return escape.Markdown("\n".join(lines))  # each line escaped where it is made
