"""Read results.jsonl rows and tell what they show: the conformance matrix, the distinct
failures (one example each), which interpretation each runtime picks where the spec is silent,
and how many cases each edge class got. Rendered for the terminal (rich), as summary.md and
the short PR-comment markdown here, and as a self-contained HTML page by report_html."""
from __future__ import annotations

import json
import shlex
from collections import Counter, defaultdict

from rich.console import Console
from rich.table import Table

from padconf.adapters import adapter_class, split_variant
from padconf.adapters.preconditions import cell_name, declared_cells
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import reading_of
from padconf.cases.context_cells import covers, features
from padconf.core import escape
from padconf.judging.failure import failure_class, failure_signature
from padconf.judging.records import NOT_COMPILED, ResultRow, shown_list
from padconf.judging.triage import PAD_BUGS, triage
from padconf.judging.verdicts import FAILURES, VERDICTS, Verdict
from padconf.spec.loader import spec_sort_key


def _square_order(key: tuple[str, str, str]) -> tuple:
    """(runtime, spec, mode) with the spec version as a number: Pad-2 before Pad-11."""
    return key[0], spec_sort_key(key[1]), key[2]


def matrix(rows: list[ResultRow]) -> dict[tuple[str, str, str], Counter]:
    """The matrix's squares: (runtime, spec, mode) -> results per verdict; a result is one case
    in one placement."""
    squares: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for row in rows:
        squares[(row["runtime"], row["spec"], row["mode"])][row["verdict"]] += 1
    return dict(sorted(squares.items(), key=lambda item: _square_order(item[0])))


MUST_REJECT_MARK = "†"
MUST_REJECT_NOTE = (f"{MUST_REJECT_MARK} every case of this spec version and mode is one the spec makes an error "
                    "(a mode the version lacks, say): there, pass means the runtime rejected it.")


def must_reject_only(rows: list[ResultRow]) -> set[tuple[str, str]]:
    """(spec, mode) pairs all of whose cases are must-reject: a mode the version lacks, say."""
    kinds: dict[tuple[str, str], set] = defaultdict(set)
    for row in rows:
        kinds[(row["spec"], row["mode"])].add(row.get("kind"))
    return {key for key, seen in kinds.items() if seen == {CaseKind.MUST_REJECT}}


def mode_label(spec: str, mode: str, marked: set[tuple[str, str]]) -> str:
    return mode + (MUST_REJECT_MARK if (spec, mode) in marked else "")


def counts_line(rows: list[ResultRow], drawn: int | None = None) -> str:
    """What the numbers count: results (a case in a placement on a runtime), cases, skips; and
    of the ``drawn`` cases, those no runtime of the run has a result of (a spec family none of
    them runs: the run announced every case it drew, and ended with fewer)."""
    skipped = sum(r["verdict"] == Verdict.SKIPPED for r in rows)
    budget = Counter(r["runtime"] for r in rows
                     if r["verdict"] == Verdict.SKIPPED and (r.get("detail") or "").startswith(NOT_COMPILED))
    skipped -= sum(budget.values())
    cases = len({r['case_id'] for r in rows})
    unrun = (drawn or 0) - cases
    return (f"{len(rows)} results over {cases} cases: a result is one case in one "
            f"placement on one runtime" + (f"; {skipped} of them skipped (the adapter cannot put the case to its "
                                           f"runtime: each row and the notes say why)" if skipped else "")
            + "".join(f"; {n} {name} results {NOT_COMPILED} (--compile-budget all compiles every model)"
                      for name, n in sorted(budget.items()))
            + (f"; {unrun} of the {drawn} cases drawn are of spec families no runtime of the run runs"
               if unrun > 0 else "") + ".")


def failures(rows: list[ResultRow]) -> list[dict]:
    """Distinct failures: one entry per runtime, verdict, error class and triage class, with a
    count, the dtypes / specs it covers and one example row (a spec document's worked example
    if any)."""
    groups: dict[tuple, dict] = {}
    for row in rows:
        if row["verdict"] not in FAILURES:
            continue
        key = failure_signature(row)
        group = groups.get(key)
        if group is None:  # triage's upstream fact, looked up once a group
            group = groups[key] = {"runtime": key[0], "verdict": key[1], "class": key[2], "triage": key[3],
                                   "upstream": triage(row)[1], "count": 0, "dtypes": set(), "specs": set(),
                                   "graphs": set(), "example": row}
        group["count"] += 1
        if row["origin"].startswith("example:") and not group["example"]["origin"].startswith("example:"):
            group["example"] = row  # a worked example of the spec document says most
        group["dtypes"].add(row["dtype"])
        group["specs"].add(row["spec"])
        group["graphs"].add(row.get("graph") if isinstance(row.get("graph"), str) else ONE_NODE)
    return sorted(groups.values(), key=lambda g: (g["runtime"], g["verdict"], -g["count"]))


PLACEMENT_DEPENDENT = "placement-dependent"
CONFIGURATION_DEPENDENT = "configuration-dependent"


def _answer(row: ResultRow) -> tuple:
    """What a runtime answered, as far as a row tells: verdict, interpretations matched, the
    class of its failure, and its output where the row keeps it."""
    return (row["verdict"], tuple(row.get("matched") or ()),
            failure_class(row) if row["verdict"] in FAILURES else None, json.dumps(row.get("output")))


def _answered_differently(rows: list[ResultRow], label: str, by, pattern) -> list[dict]:
    """Groups of cases answered differently along one dimension: ``by(row)`` -> (who, the same
    case elsewhere, the row's place along the dimension) or None; ``pattern(placed)`` -> the
    group's class and its example row, or None where the answers do not differ as it asks."""
    by_case: dict[tuple, dict] = defaultdict(dict)
    for row in rows:
        found = by(row) if row["verdict"] != Verdict.SKIPPED else None
        if found:
            by_case[found[:2]][found[2]] = row
    groups: dict[tuple, dict] = {}
    for _, placed in sorted(by_case.items()):
        found_pattern = pattern(placed) if len({_answer(r) for r in placed.values()}) > 1 else None
        if found_pattern is None:
            continue
        text, example = found_pattern
        found, fact = triage(example) if example["verdict"] in FAILURES else (None, None)
        group = groups.setdefault((example["runtime"], text), {
            "runtime": example["runtime"], "verdict": label, "class": text, "triage": found, "upstream": fact,
            "count": 0, "dtypes": set(), "specs": set(), "example": example})
        group["count"] += 1
        group["dtypes"].add(example["dtype"])
        group["specs"].add(example["spec"])
    return sorted(groups.values(), key=lambda g: (g["runtime"], -g["count"]))


def placement_dependent(rows: list[ResultRow]) -> list[dict]:
    """Cases one runtime answers differently in two placements (its kernel against its folding
    path, say), even where one answer is right: a user's model can take either path. Grouped
    like ``failures``, one group per runtime and pattern of verdicts."""
    def pattern(placed: dict) -> tuple[str, ResultRow]:
        verdicts = [placed[p]["verdict"] for p in sorted(placed)]
        text = "; ".join(f"{p}: {placed[p]['verdict']}" for p in sorted(placed))
        if len(set(verdicts)) == 1:
            text += " (different answers)"
        # the example, and so the triage, is a failing placement's where one fails: a crash
        # folded beside an ambiguous answer elsewhere was untriaged, named by the ambiguous one
        rows = list(placed.values())
        return text, next((r for r in rows if r["verdict"] in FAILURES),
                          next((r for r in rows if r["verdict"] != Verdict.PASS), rows[0]))
    return _answered_differently(rows, PLACEMENT_DEPENDENT,
                                 lambda row: (row["runtime"], row["case_id"], row["placement"]), pattern)


def configuration_dependent(rows: list[ResultRow]) -> list[dict]:
    """Cases a variant (openvino[threads=1]) answers otherwise than its runtime in its default
    configuration, in the same placement: the variant's finding, named by its configuration. The
    runtime is judged by its default configuration's verdict; one group per variant and pattern."""
    def pattern(ran: dict) -> tuple[str, ResultRow] | None:
        base = next((r for r in ran.values() if split_variant(r["runtime"])[1] == {}), None)
        other = next((r for r in ran.values() if r is not base and (base is None or _answer(r) != _answer(base))),
                     None)
        if base is None or other is None:
            return None
        return f"{base['runtime']}: {base['verdict']}; {other['runtime']}: {other['verdict']}", other
    return _answered_differently(rows, CONFIGURATION_DEPENDENT,
                                 lambda row: (split_variant(row["runtime"])[0],
                                              (row["case_id"], row["placement"]), row["runtime"]), pattern)


def distinct_failures(rows: list[ResultRow]) -> list[dict]:
    """Every distinct failure of ``rows``, one group each (``failures``, the placement- and the
    configuration-dependent answers), those not yet triaged (PAD_BUGS' classes) first: the one list, and count, that
    the terminal, summary.md, the HTML page and the PR comment show."""
    found = failures(rows) + placement_dependent(rows) + configuration_dependent(rows)
    return sorted(found, key=lambda g: g["triage"] not in PAD_BUGS)


NOT_YET_TRIAGED = "not yet triaged (padconf minimize tells which are Pad bugs to file)"


def failures_count(groups: list[dict]) -> str:
    """``distinct_failures``' count, as every report says it. Those whose class may be a Pad bug
    (PAD_BUGS) are counted as what they are until minimize has cut them down and looked (its
    controls, its repros in the runtime's own API): failures not yet triaged, not bugs to file."""
    bugs = sum(g["triage"] in PAD_BUGS for g in groups)
    return f"{len(groups)} distinct failures, {bugs} of them {NOT_YET_TRIAGED}"


def interpretations(rows: list[ResultRow]) -> dict[tuple[str, str], Counter]:
    """(undefined point, runtime) -> results per reading of that point the runtime's answer
    matched: one interpretation; several, "a or b", where the answer is what each of them
    gives; or none, "(rejected)" / "(another output)" (an unexplained answer, also listed among
    the failures, unless the document leaves the behaviour undefined). A result that hits
    several undefined points counts under each."""
    picks: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for row in rows:
        if row["verdict"] not in (Verdict.AMBIGUOUS, Verdict.UNEXPLAINED):
            continue
        readings = [reading_of(label) for label in row.get("matched") or []]
        for point in (row.get("reason") or "(not named)").split(","):
            matched = sorted({reading[point] for reading in readings if point in reading})
            picks[(point, row["runtime"])][" or ".join(matched) if matched else "(rejected)"
                                           if row.get("error") is not None else "(another output)"] += 1
    return dict(sorted(picks.items()))


SILENT_WHAT = ("which interpretation of each undefined point each runtime's answer matched, in results "
               "(\"a or b\": the answer is what each of them gives)")


def edge_class_counts(cases_rows: list[dict]) -> dict[str, Counter]:
    """edge class -> cases per spec version that exercise it."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in cases_rows:
        for tag in row.get("tags") or ():
            counts[tag][row["spec"]] += 1
    return dict(sorted(counts.items()))


def graph_or_mode(row: ResultRow) -> str:
    """What a row's case is, as its reports and the gate's lines name it: a context case's model
    in words ("Pad(edge) before Slice": a plain Pad shows no crash), else its mode."""
    graph = row.get("graph")
    return graph if isinstance(graph, str) else str(row["mode"])


def _example(row: ResultRow, with_id: bool = True) -> str:
    return (f"{row['spec']} {graph_or_mode(row)} {row['dtype']} shape={shown_list(row, 'shape')} "
            f"pads={shown_list(row, 'pads')}"
            + (f" axes={shown_list(row, 'axes')}" if row.get("axes") is not None else "")
            + (f" value={row['constant_value']}" if row.get("constant_value") else "")
            + f" [{row['placement']}]" + (f" id={row['case_id']}" if with_id else "")
            + (f" ({row['origin'].replace(':', ' ', 1)} of the spec document)"
               if row["origin"].startswith("example:") else ""))


MATRIX_TITLE = "Conformance matrix (results per verdict: each case once per placement)"


# the verdicts a square may hold alone and be folded on the terminal: no result there judges the
# runtime (the adapter cannot put the case, the runtime has no kernel: coverage, or a refusal
# that proves nothing)
UNJUDGED = (Verdict.SKIPPED, Verdict.NOT_IMPLEMENTED, Verdict.INCONCLUSIVE)
UNJUDGED_TITLE = "Squares holding only skipped, not-implemented or inconclusive results, one line per runtime"


def unjudged_squares(rows: list[ResultRow]) -> dict[str, dict]:
    """runtime -> the matrix squares (spec, mode) all of whose results are skipped or
    not-implemented, with what their results were and why (``failure_class`` of each: the
    skip's reason, the refusal's text, their particulars blanked) counted: the terminal shows
    them as one line per runtime, summary.md and the HTML page square by square."""
    squares = matrix(rows)
    unjudged = {key for key, counts in squares.items() if set(counts) <= set(UNJUDGED)}
    out: dict[str, dict] = {}
    for row in rows:
        key = (row["runtime"], row["spec"], row["mode"])
        if key not in unjudged:
            continue
        entry = out.setdefault(row["runtime"], {"squares": [], "results": 0, "why": Counter()})
        entry["results"] += 1
        entry["why"][(row["verdict"], failure_class(row))] += 1
    for runtime, spec, mode in squares:  # matrix order: specs by version
        if (runtime, spec, mode) in unjudged:
            out[runtime]["squares"].append((spec, mode))
    return out


def unjudged_line(runtime: str, entry: dict, marked: set[tuple[str, str]], reasons: int = 3) -> str:
    """One runtime's ``unjudged_squares`` in one line: which squares, how many results, and the
    ``reasons`` most frequent whys with their counts."""
    by_spec: dict[str, list[str]] = defaultdict(list)
    for spec, mode in entry["squares"]:
        by_spec[spec].append(mode_label(spec, mode, marked))
    where = "; ".join(f"{spec} {', '.join(modes)}" for spec, modes in by_spec.items())
    why = entry["why"].most_common()
    said = "; ".join(f"{verdict} x{n}: {text}" for (verdict, text), n in why[:reasons])
    more = len(why) - reasons
    return (f"{runtime}: {len(entry['squares'])} squares, {entry['results']} results ({where}): {said}"
            + (f"; and {more} other reasons (summary.md)" if more > 0 else ""))


def matrix_table(rows: list[ResultRow], fold: bool = False) -> Table:
    """One row per runtime, spec version and mode, one column per verdict; ``fold``: without the
    squares ``unjudged_squares`` holds (the terminal says them in a line per runtime)."""
    used = used_verdicts(rows)
    marked = must_reject_only(rows)
    folded = _folded(rows) if fold else set()
    t = Table(title=MATRIX_TITLE)
    for col in ("runtime", "spec", "mode"):
        t.add_column(col, no_wrap=True)
    for v in used:
        t.add_column(v, justify="right", no_wrap=True)
    for (runtime, spec, mode), counts in matrix(rows).items():
        if (runtime, spec, mode) not in folded:
            t.add_row(*map(escape.terminal, (runtime, spec, mode_label(spec, mode, marked))),
                      *[_count_markup(v, counts[v]) for v in used])
    return t


def _folded(rows: list[ResultRow]) -> set[tuple[str, str, str]]:
    return {(runtime, spec, mode) for runtime, entry in unjudged_squares(rows).items()
            for spec, mode in entry["squares"]}


def matrix_lines(rows: list[ResultRow], fold: bool = False) -> list[str]:
    """The matrix as lines, for a width the table does not fit (a CI log has 80 columns):
    each runtime, then one line per spec version and mode with its counts; ``fold``: as
    ``matrix_table``'s. One line per runtime and spec version, its modes in it one after another."""
    marked, used = must_reject_only(rows), used_verdicts(rows)
    folded = _folded(rows) if fold else set()
    lines, last = [MATRIX_TITLE + ", one line per spec version, its modes apart by '|'"], None
    for (runtime, spec, mode), counts in matrix(rows).items():
        if (runtime, spec, mode) in folded:
            continue
        if runtime != last:
            lines.append(runtime)
            last = runtime
        said = f"{mode_label(spec, mode, marked)} " + ", ".join(f"{counts[v]} {v}" for v in used if counts[v])
        if lines[-1].startswith(f"  {spec}: "):
            lines[-1] += f" | {said}"
        else:
            lines.append(f"  {spec}: {said}")
    return lines


def terminal_output(rows: list[ResultRow], width: int, run_dir=None, summary=None) -> list:
    """What `padconf run` prints, short enough to read whole (summary.md and the HTML page keep
    every detail): the matrix as a table where it fits ``width``, else as lines, without the
    squares that hold only skipped or not-implemented results (one line per runtime says which
    and why); the distinct failures not yet triaged one line each, with its case id, at most
    MAX_UNTRIAGED_LINES (shown_untriaged; one line counts the rest); the
    triaged ones one line per triage class, with a count and where they are listed
    (``summary``, the run's summary.md); the interpretations picked. Lines are printed without wrapping
    (soft_wrap): no name is cut and no case id split, so `padconf minimize RUN_DIR:<case id>`
    takes the id as printed."""
    table = matrix_table(rows, fold=True)
    fits = Console(width=10_000).measure(table).maximum <= width
    out: list = [table] if fits else ["\n".join(map(escape.plain, matrix_lines(rows, fold=True)))]
    marked = must_reject_only(rows)
    lines: list[str] = []
    if marked:
        lines.append(MUST_REJECT_NOTE)
    unjudged = unjudged_squares(rows)
    if unjudged:
        lines += ["", f"{UNJUDGED_TITLE} (not in the matrix above; summary.md has each square):"]
        lines += [f"- {unjudged_line(runtime, entry, marked)}" for runtime, entry in unjudged.items()]
    groups = distinct_failures(rows)
    untriaged = [g for g in groups if g["triage"] in PAD_BUGS]
    lines += ["", f"{failures_count(groups)}."]
    if untriaged:
        lines.append("Not yet triaged, one line each (runtime, verdict, results, triage class, what, the case id of "
                     f"one example; padconf report {shlex.quote(str(run_dir or 'RUN_DIR'))} --bugs adds its example "
                     "and the command that minimizes it):")
        shown = shown_untriaged(untriaged)
        lines += [untriaged_line(g) for g in untriaged if id(g) in shown]
        left = Counter(g["runtime"] for g in untriaged if id(g) not in shown)
        if left:
            lines.append(f"- and {sum(left.values())} more not yet triaged ("
                         + ", ".join(f"{name} {n}" for name, n in left.items())
                         + f"): padconf report {shlex.quote(str(run_dir or 'RUN_DIR'))} --bugs lists every one")
    triaged = triaged_classes(groups[len(untriaged):])
    if triaged:
        where = "summary.md" if summary is None else str(summary)
        lines.append(f"The {len(groups) - len(untriaged)} triaged already, one line per triage class (each with its "
                     f"example and case id: {where}; padconf report "
                     f"{shlex.quote(str(run_dir or 'RUN_DIR'))} --html FILE):")
        lines += [f"- {line}" for line in triaged]
    picks = interpretations(rows)
    if picks:  # one line per undefined point, its runtimes apart by '|'
        lines += ["", f"Where the spec is silent: {SILENT_WHAT}; one line per undefined point"]
        by_point: dict[str, list[str]] = defaultdict(list)
        for (point, runtime), counts in picks.items():
            by_point[point].append(f"{runtime}: " + ", ".join(f"{k} ({n})" for k, n in counts.most_common()))
        lines += [f"- {point} on " + " | ".join(said) for point, said in by_point.items()]
    # printed as they are (no markup), each line with its control characters shown as text
    return out + ["\n".join(map(escape.plain, lines))]


def folded_notes(notes: list[str], runtimes) -> list[str]:
    """A run's notes for the terminal, one line per runtime: those starting "RUNTIME: " (a runtime
    of ``runtimes``) joined in their order by "; ", the others as they are, after them.
    summary.md lists each note alone."""
    by_runtime: dict[str, list[str]] = {}
    rest = []
    for note in notes:
        name, sep, said = note.partition(": ")
        if sep and name in runtimes:
            by_runtime.setdefault(name, []).append(said)
        else:
            rest.append(note)
    return [f"{name}: " + "; ".join(said) for name, said in by_runtime.items()] + rest


MAX_UNTRIAGED_LINES = 30  # a first run's list read whole; report --bugs and summary.md list every one


def shown_untriaged(untriaged: list[dict], most: int = MAX_UNTRIAGED_LINES) -> set[int]:
    """Which distinct failures not yet triaged the terminal lists (their id()s), at most ``most``:
    each runtime's in turn, the one with most results first, so that every runtime's largest
    failures are read and none crowds out another's."""
    by_runtime: dict[str, list[dict]] = defaultdict(list)
    for g in untriaged:
        by_runtime[g["runtime"]].append(g)
    queues = [sorted(mine, key=lambda g: -g["count"]) for mine in by_runtime.values()]
    shown: set[int] = set()
    while len(shown) < most and any(queues):
        for queue in queues:
            if queue and len(shown) < most:
                shown.add(id(queue.pop(0)))
    return shown


def untriaged_line(group: dict) -> str:
    """A distinct failure not yet triaged in one line: who, what, how many, the graphs it was
    seen in where one is no one-node Pad, and its example's case id last (whole: `padconf
    minimize RUN:<id>` takes it)."""
    graphs = sorted(group.get("graphs") or set())
    seen = f"; graphs: {GRAPHS_APART.join(graphs)}" if set(graphs) - {ONE_NODE} else ""
    return (f"- {group['runtime']} {group['verdict']} x{group['count']} [{triage_text(group)}]: {group['class']}"
            f"{seen}; case id: {group['example']['case_id']}")


def triaged_classes(groups: list[dict]) -> list[str]:
    """The triaged distinct failures (lenient, coverage, policy, known upstream, not
    Pad-specific) folded, one line per triage class: how many distinct failures and results,
    on which runtimes."""
    by_class: dict[str, list[dict]] = defaultdict(list)
    for g in groups:
        by_class[g["triage"].label if g.get("triage") is not None
                 else f"{g['verdict']}, no answer among them a failure"].append(g)
    out = []
    for label, mine in by_class.items():
        runtimes = Counter(g["runtime"] for g in mine)
        out.append(f"{label}: {len(mine)} distinct failure{'s' * (len(mine) != 1)}, "
                   f"{sum(g['count'] for g in mine)} results ("
                   + ", ".join(f"{r} {n}" for r, n in sorted(runtimes.items())) + ")")
    return out


def bug_lines(rows: list[ResultRow], run_dir, unfinished: str | None = None,
              unsigned: str | None = None) -> list[str]:
    """``padconf report RUN --bugs``: only the distinct failures not yet triaged (PAD_BUGS'
    classes: those padconf minimize may find to file), each with its example's case id and the
    command that minimizes it; how many others there are, in one line; first, where the rows
    are not the whole run (``unfinished``: why), that they are not, as summary.md says it, and
    where they are not known to be padconf's (``unsigned``: why), that they are not."""
    groups = distinct_failures(rows)
    bugs = [g for g in groups if g["triage"] in PAD_BUGS]
    lines = [f"Part of a run only: {unfinished}."] if unfinished else []
    lines += [f"Not verified: {unsigned}."] if unsigned else []
    lines += [f"{len(bugs)} of {len(groups)} distinct failures {NOT_YET_TRIAGED}"
              + (":" if bugs else "")]
    for g in bugs:
        case_id = g["example"]["case_id"]
        lines += [f"- {g['runtime']} {g['verdict']} x{g['count']} [{triage_text(g)}]: {g['class']}",
                  f"  {_seen_on(g)}", f"  example: {_example(g['example'], with_id=False)}",
                  f"  case id: {case_id}",
                  f"  padconf minimize {shlex.quote(f'{run_dir}:{case_id}')} --runtime {shlex.quote(g['runtime'])}"]
    others = len(groups) - len(bugs)
    if others:
        lines.append(f"{others} others (lenient, coverage, policy, known upstream, not Pad-specific) are in the full "
                     f"report: padconf report {shlex.quote(str(run_dir))} --html FILE")
    return [escape.plain(line) for line in lines]


def _count_markup(verdict: str, n: int) -> str:
    if not n:
        return ""
    colour = "green" if verdict == Verdict.PASS else "yellow" if verdict == Verdict.AMBIGUOUS else "red"
    return f"[{colour}]{n}[/]"


ONE_NODE = "one-node Pad"  # a failure's graphs: a plain case's
# between a failure's graphs: a graph in words holds commas ("Pad(edge), before Slice, static shape")
GRAPHS_APART = " | "


def _seen_on(group: dict) -> str:
    graphs = group.get("graphs") or set()
    return (f"dtypes: {', '.join(sorted(group['dtypes']))}; "
            f"specs: {', '.join(sorted(group['specs'], key=spec_sort_key))}"
            + (f"; graphs: {GRAPHS_APART.join(sorted(graphs))}" if graphs - {ONE_NODE} else ""))


def triage_text(group: dict) -> str:
    """A group's triage class, with the upstream link it rests on."""
    if group.get("triage") is None:
        return "-"
    return group["triage"].label + (f" ({group['upstream'].link})" if group["upstream"] else "")


def triage_markdown(group: dict) -> escape.Markdown:
    """``triage_text`` for markdown: the label escaped, the link (padconf's own: judging.triage's
    upstream facts) left live."""
    if group.get("triage") is None or not group["upstream"]:
        return escape.Markdown(escape.markdown(triage_text(group)))
    return escape.Markdown(f"{escape.markdown(group['triage'].label)} ({group['upstream'].link})")


def _what(group: dict) -> str:
    return f"{group['class']}  — {_seen_on(group)}"


def markdown(rows: list[ResultRow], cases_rows: list[dict], notes: list[str]) -> escape.Markdown:
    """summary.md: every line a ``Markdown``, padconf's own fixed text named so and every text
    from runs, runtimes and files passed through ``escape.markdown`` (a table: ``_md_row``)."""
    M, md = escape.Markdown, escape.markdown
    used = used_verdicts(rows)
    marked = must_reject_only(rows)
    out = [M("# padconf run summary"), M(""), md(counts_line(rows, len(cases_rows))), M("")]
    if notes:
        out += [M("## Notes"), M("")] + [M(f"- {md(n)}") for n in notes] + [M("")]
    out += [M("## Conformance matrix"), M(""), M("Results per verdict: each case once per placement of each runtime."),
            M(""), _md_row("runtime", "spec", "mode", *used), M("|---|---|---|" + "---:|" * len(used))]
    for (runtime, spec, mode), counts in matrix(rows).items():
        out.append(_md_row(runtime, spec, mode_label(spec, mode, marked), *[counts[v] or "" for v in used]))
    if marked:
        out += [M(""), md(MUST_REJECT_NOTE)]
    distinct = distinct_failures(rows)
    out += [M(""), M("## Distinct failures"), M(""),
            md(f"{failures_count(distinct)} (triage: "
               + ", ".join(t.label for t in PAD_BUGS) + "); the others are lenient (the runtime accepts what "
               "the spec forbids, where the documents constrain the model and require no error), coverage, "
               "documented policy, known upstream or not Pad-specific."), M(""),
            M("| runtime | verdict | triage | n | what | example |"), M("|---|---|---|---:|---|---|")]
    for g in distinct:
        out.append(_md_row(g["runtime"], g["verdict"], triage_markdown(g), g["count"], _what(g),
                           _example(g["example"])))
    out += [M(""), M("## Not implemented (coverage: runtime x spec version x dtype)"), M(""),
            M("| runtime | spec | dtypes without a kernel |"), M("|---|---|---|")]
    for (runtime, spec), dtypes in support_gaps(rows).items():
        out.append(_md_row(runtime, spec, ", ".join(sorted(dtypes))))
    out += [M(""), M("## Where the spec is silent"), M(""), md(f"Each row: {SILENT_WHAT}."), M(""),
            M("| undefined point | runtime | matched (results) |"), M("|---|---|---|")]
    for (point, runtime), counts in interpretations(rows).items():
        out.append(_md_row(point, runtime, ", ".join(f"{k} ({n})" for k, n in counts.most_common())))
    cells = precondition_coverage(rows, cases_rows)
    if cells:
        out += [M(""), M("## Rewriter precondition cells covered"), M(""),
                M("Each declared cell of each rewriter's Pad passes (`padconf.adapters.preconditions`): the results "
                  "that ran a graph with its features (0: not covered by this run)."), M(""),
                M("| runtime | covered | not covered |"), M("|---|---:|---|")]
        for runtime in dict.fromkeys(c[0] for c in cells):
            mine = [c for c in cells if c[0] == runtime]
            missing = "; ".join(f"{p}: {name}" for _, p, name, n in mine if not n) or "none"
            out.append(_md_row(runtime, f"{sum(1 for c in mine if c[3])} of {len(mine)}", missing))
        out += [M(""), M("| runtime | pass | cell | results |"), M("|---|---|---|---:|")]
        out += [_md_row(runtime, p, name, n) for runtime, p, name, n in cells]
    specs = sorted({row["spec"] for row in cases_rows}, key=spec_sort_key)
    out += [M(""), M("## Edge classes drawn (cases per spec version)"), M(""),
            _md_row("edge class", *specs), M("|---|" + "---:|" * len(specs))]
    for tag, per_spec in edge_class_counts(cases_rows).items():
        out.append(_md_row(tag, *[per_spec[s] or "" for s in specs]))
    return escape.markdown_lines(out)


def precondition_coverage(rows: list[ResultRow], cases_rows: list[dict]) -> list[tuple[str, str, str, int]]:
    """(runtime, pass, cell, results) for each declared precondition cell
    (padconf.adapters.preconditions) of each rewriter in ``rows``: how many of its results ran a
    case, in the result's placement, that has that cell's features (0: the run did not cover it).
    A result it skipped covers nothing: the rewriter never saw the graph."""
    by_id = {c.get("id"): c for c in cases_rows if c.get("context")}
    found: list[tuple[str, str, str, int]] = []
    for runtime in sorted({r["runtime"] for r in rows}):
        try:
            declared = declared_cells(adapter_class(runtime).preconditions)
        except Exception:  # noqa: BLE001  an unknown or unloadable runtime declares nothing here
            continue
        if not declared:
            continue
        seen: dict[tuple[str, str], dict[str, str]] = {}
        for r in rows:
            key = (r["case_id"], r["placement"])
            if r["runtime"] == runtime and r["verdict"] != Verdict.SKIPPED and r["case_id"] in by_id \
                    and key not in seen:
                seen[key] = features(Case.from_json(by_id[r["case_id"]]), r["placement"])
        for pass_name, cell in declared:
            found.append((runtime, pass_name, cell_name(cell), sum(covers(f, cell) for f in seen.values())))
    return found


def _md_row(*cells) -> escape.Markdown:
    """A markdown table row of text from runtimes and files: escaped, never markup."""
    return escape.markdown_row(*cells)


def support_gaps(rows: list[ResultRow]) -> dict[tuple[str, str], set[str]]:
    """(runtime, spec) -> the dtypes it answered not-implemented for: coverage, not bugs."""
    gaps: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        if row["verdict"] == Verdict.NOT_IMPLEMENTED:
            gaps[(row["runtime"], row["spec"])].add(row["dtype"])
    return dict(sorted(gaps.items(), key=lambda kv: (kv[0][0], spec_sort_key(kv[0][1]))))


def totals(rows: list[ResultRow]) -> dict[str, Counter]:
    """runtime -> results per verdict."""
    out: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        out[row["runtime"]][row["verdict"]] += 1
    return dict(sorted(out.items()))


def used_verdicts(rows: list[ResultRow]) -> list[str]:
    used = {r["verdict"] for r in rows}
    return [v for v in VERDICTS if v in used]


def square_findings(rows: list[ResultRow]) -> dict[tuple[str, str, str], dict]:
    """(runtime, spec, mode) -> that matrix square's distinct failures and interpretation picks."""
    by_square: dict[tuple, list[ResultRow]] = defaultdict(list)
    for row in rows:
        by_square[(row["runtime"], row["spec"], row["mode"])].append(row)
    return {key: {"failures": failures(square), "picks": interpretations(square)}
            for key, square in sorted(by_square.items(), key=lambda item: _square_order(item[0]))}


def short_markdown(rows: list[ResultRow], html_name: str | None = None, top: int = 10,
                   unfinished: str | None = None, unsigned: str | None = None) -> escape.Markdown:
    """A few dozen lines for a pull-request comment: totals per runtime and verdict, the most
    frequent distinct failures, and where the full report is; first, where the rows are not the
    whole run (``unfinished``: why), or not known to be padconf's (``unsigned``: why), that they
    are not. Every line a ``Markdown``, as ``markdown``'s."""
    M, md = escape.Markdown, escape.markdown
    used = used_verdicts(rows)
    found = distinct_failures(rows)
    picks = interpretations(rows)
    out = [escape.markdown_concat(M("### "), md(f"padconf: {len(rows)} results, {len({r['case_id'] for r in rows})} "
                                                f"cases, {failures_count(found)}")), M(""),
           *([M(f"**Part of a run only:** {md(unfinished)}."), M("")] if unfinished else []),
           *([M(f"**Not verified:** {md(unsigned)}."), M("")] if unsigned else []),
           _md_row("runtime", *used), M("|---|" + "---:|" * len(used))]
    for runtime, counts in totals(rows).items():
        out.append(_md_row(runtime, *[counts[v] or "" for v in used]))
    if found:
        shown = sorted(found, key=lambda g: (g["triage"] not in PAD_BUGS, -g["count"]))[:top]
        out += [M(""), md(f"Distinct failures, those not yet triaged first ({len(shown)} of {len(found)}):"
                          if len(shown) < len(found) else
                          f"Distinct failures, those not yet triaged first ({len(found)}):"), M(""),
                M("| runtime | verdict | triage | n | what |"), M("|---|---|---|---:|---|")]
        out += [_md_row(g["runtime"], g["verdict"], triage_markdown(g), g["count"], _short(_what(g), 160))
                for g in shown]
    if picks:
        silent = sum(r["verdict"] in (Verdict.AMBIGUOUS, Verdict.UNEXPLAINED) for r in rows)
        out += [M(""), md(f"Where the spec is silent: {len({point for point, _ in picks})} undefined points hit, "
                          f"{silent} results; see the full report.")]
    if html_name:
        out += [M(""), escape.markdown_concat(M("Full report (matrix, every failure with its arrays, spec rules "
                                                "quoted): "), escape.markdown_code(html_name))]
    return escape.markdown_lines(out)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
