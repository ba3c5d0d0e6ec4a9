"""Judging a gate's rows against a baseline (judge_rows): new failures, known ones, fixed cells;
then confirming what would fail the gate by rerunning it (confirm): a new failure alone in a
fresh worker, or after the cases its worker ran before it (its poisoner), a fixed cell's
results alone."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.execution.worker import Worker
from padconf.gate.baseline import BaselineEntry, Cell, forgiving, runtime_matches
from padconf.judging.failure import failure_class
from padconf.judging.records import ResultRow, judged_row
from padconf.judging.verdicts import FAILURES, Verdict

# reruns of a new failure, each alone in a fresh worker, until one shows it: a failure half of
# the time goes unseen by all five with odds 1 in 32 (and then a replay after its history)
CONFIRMATIONS = 5
MAX_RECHECKS = 40  # cells of a fixed-looking entry rerun to see whether its failure comes back
RECHECKS_PER_CELL = 8  # results of such a cell rerun, once each


@dataclass
class Fixed:
    """Cells of an entry where it forgives nothing any more."""
    entry: BaselineEntry
    cells: list[Cell]  # its cells whose results all pass now
    stale: list[Cell] = field(default_factory=list)  # its cells that hold no case of the suite
    gave: str = ""  # what the results of those cells were

    def line(self) -> str:
        e, shown = self.entry, ", ".join(map(str, self.cells[:6])) + (" ..." if len(self.cells) > 6 else "")
        said = [f"{len(self.cells)} cells now pass: {shown} (they gave {self.gave})" if self.cells else "",
                f"{len(self.stale)} cells hold no case of the suite" if self.stale else ""]
        what = "; ".join(filter(None, said))
        return f"fixed: {e.where}: {what} ({e.verdict}: {e.why[:80]}); remove them from the baseline " \
               "(padconf baseline --prune FILE)"


@dataclass
class Judgement:
    runtime: str
    rows: list[ResultRow]
    new: list[ResultRow] = field(default_factory=list)  # failures no entry forgives
    known: list[tuple[ResultRow, BaselineEntry]] = field(default_factory=list)
    fixed: list[Fixed] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)  # what the confirming reruns did not reproduce
    unjudged: list[BaselineEntry] = field(default_factory=list)  # entries with cells this selection cannot judge
    # (case_id, placement) -> the verdict a new failure recurred with alone, where it is not the run's (a case that
    # timed out on a loaded machine and gives a wrong value alone)
    recurred_as: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def counts(self) -> Counter:
        return Counter(r["verdict"] for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 1 if self.new or self.fixed else 0

    @property
    def judged_nothing(self) -> str | None:
        """Why the gate passed on nothing, where no result concluded (every one inconclusive or
        skipped: a selection of refusals that prove nothing passed, attack round III); else None."""
        if self.exit_code or any(r["verdict"] not in (Verdict.INCONCLUSIVE, Verdict.SKIPPED) for r in self.rows):
            return None
        return (f"nothing judged: none of its {len(self.rows)} results concludes (each is inconclusive or "
                "skipped): a gate passes on results that conclude")


def judge_rows(rows: list[ResultRow], entries: list[BaselineEntry], runtime: str, covered: set[str]) -> Judgement:
    """Rows of one runtime against a baseline. ``covered``: the spec versions whose whole suite
    the rows hold (none for one shard). An entry's cell where it forgives nothing is fixed when
    its results are in: where its case ran (a case-id entry), or where the cell's version is
    covered; else it waits for a run that is (``unjudged``)."""
    if not rows:
        raise PadconfError(f"no result of {runtime} to judge: a gate never passes on nothing")
    judgement = Judgement(runtime, rows)
    for row in rows:
        if row["verdict"] in FAILURES:
            entry = forgiving(entries, row)
            if entry is not None:
                judgement.known.append((row, entry))
            else:
                judgement.new.append(row)
    by_cell = defaultdict(list)
    for row in rows:
        by_cell[Cell.of(row)].append(row)
    placements = {r["placement"] for r in rows}
    for entry in entries:
        if not runtime_matches(entry.runtime, runtime) or entry.unstable:
            continue  # an unstable failure may not show in one run: its absence fixes nothing
        scope = {c: [r for r in by_cell.get(c, ()) if entry.in_scope(r)] for c in entry.cells}
        # fixed where nothing fails any more: a case that fails otherwise now (OpenVINO answers one
        # case with garbage or a crash from run to run) may still fail this entry's way
        open_cells = sorted((c for c, rs in scope.items() if not any(r["verdict"] in FAILURES for r in rs)),
                            key=Cell.sort_key)
        fixed = Fixed(entry, [], [])
        for cell in open_cells:
            if cell.placement not in placements:
                continue  # a cell of another runtime the entry speaks of
            if scope[cell] and (entry.case is not None or cell.spec in covered):
                fixed.cells.append(cell)
            elif not scope[cell] and cell.spec in covered:
                fixed.stale.append(cell)
            else:
                judgement.unjudged.append(entry)
        if fixed.cells or fixed.stale:
            fixed.gave = _verdicts(r for c in fixed.cells for r in scope[c])
            judgement.fixed.append(fixed)
    judgement.unjudged = list(dict.fromkeys(judgement.unjudged))
    return judgement


def confirm(judgement: Judgement, entries: list[BaselineEntry], cases: list[Case], worker: Worker,
            history: list[ResultRow] | None = None) -> None:
    """Rerun what would fail the gate. A new failure stays new when it recurs alone in a fresh
    worker process (any of CONFIRMATIONS tries; or when another new failure of its cell and
    class did: a broad regression costs one rerun a cell), or when it recurs after the cases its
    worker ran before it (``history``, default the judged rows): then the case that makes it recur,
    the poisoner, is found by bisecting them and kept in the row as ``after``, and a baseline
    entry may list that pair. A failure that recurs neither way is moved to ``flaky``: reported,
    not failing the gate (a hang on a loaded machine); so is one whose case fails alone as an
    entry forgives (OpenVINO crashes on a case alone and answers it after other cases). A fixed
    cell whose failure comes back alone is not fixed (OpenVINO corrupts its heap on some cases
    and then answers the same case differently from run to run)."""
    by_id = {c.id: c for c in cases}
    history = judgement.rows if history is None else history

    def unforgiven(row) -> bool:
        return row["verdict"] in FAILURES and forgiving(entries, row) is None

    def alone(row):
        """Up to CONFIRMATIONS reruns of ``row``'s case alone, until one fails."""
        case, reruns = by_id[row["case_id"]], []
        while len(reruns) < CONFIRMATIONS and not (reruns and reruns[-1]["verdict"] in FAILURES):
            reruns.append(judged_row(judgement.runtime, row["placement"], case,
                                     *worker.run_alone(case, row["placement"])))
        return reruns

    recurred = set()  # (cell, verdict, class) of failures that recurred alone: their like need no rerun
    for row in list(judgement.new):
        kind = (Cell.of(row), row["verdict"], failure_class(row))
        if kind in recurred:
            continue
        reruns = alone(row)
        if unforgiven(reruns[-1]):
            recurred.add(kind)
            if reruns[-1]["verdict"] != row["verdict"]:
                judgement.recurred_as[(row["case_id"], row["placement"])] = reruns[-1]["verdict"]
            continue
        known = forgiving(entries, reruns[-1])
        if known is not None:  # the case fails alone as the baseline knows; its answer after others is its state's
            judgement.new.remove(row)
            judgement.flaky.append(f"{row['case_id']} [{row['placement']}]: {row['verdict']} in the run; alone it "
                                   f"fails as {known.where} forgives ({', '.join(r['verdict'] for r in reruns)}): "
                                   "a known failing case, whose answer depends on what its worker ran before")
            continue
        poisoners = _poisoners(row, history, by_id, worker, judgement.runtime, unforgiven)
        if poisoners:
            row["after"] = " ".join(poisoners)
            entry = forgiving(entries, row)
            if entry is not None:  # a known pair
                judgement.new.remove(row)
                judgement.known.append((row, entry))
            continue
        judgement.new.remove(row)
        judgement.flaky.append(f"{row['case_id']} [{row['placement']}]: {row['verdict']} in the run, "
                               f"{', '.join(r['verdict'] for r in reruns)} alone, and not after the "
                               "cases its worker ran before it")
    for fixed in list(judgement.fixed):
        for cell in fixed.cells[:MAX_RECHECKS]:
            scope = [r for r in judgement.rows if Cell.of(r) == cell and fixed.entry.in_scope(r)]
            for row in scope[:RECHECKS_PER_CELL]:  # once each: which of them failed before is not known
                case = by_id[row["case_id"]]
                back = judged_row(judgement.runtime, row["placement"], case, *worker.run_alone(case, row["placement"]))
                if fixed.entry.matches(back):
                    fixed.cells.remove(cell)
                    judgement.flaky.append(f"{fixed.entry.where} still fails in {cell}: {row['case_id']} gave "
                                           f"{row['verdict']} in the run, {back['verdict']} alone")
                    break
        if not fixed.cells and not fixed.stale:
            judgement.fixed.remove(fixed)


def _poisoners(row: ResultRow, history: list[ResultRow], by_id: dict, worker: Worker, runtime: str,
               recurs) -> list[str]:
    """The earlier cases of ``row``'s worker process after which its failure recurs, narrowed
    by bisection (one case, unless it takes cases of both halves); [] if it does not recur
    after all of them."""
    earlier = sorted((r for r in history if r.get("process") and r.get("process") == row.get("process")
                      and (r["position"] or 0) < (row["position"] or 0) and r["case_id"] in by_id),
                     key=lambda r: r["position"] or 0)  # a row with a process has its position
    case = by_id[row["case_id"]]

    def after(rows) -> bool:
        return recurs(judged_row(runtime, row["placement"], case,
                                 *worker.replay([(by_id[r["case_id"]], r["placement"]) for r in rows], case,
                                                row["placement"])))

    if not earlier or not after(earlier):
        return []
    while len(earlier) > 1:
        half = len(earlier) // 2
        if after(earlier[half:]):
            earlier = earlier[half:]
        elif after(earlier[:half]):
            earlier = earlier[:half]
        else:
            break
    return [r["case_id"] for r in earlier]


def _verdicts(rows) -> str:
    return ", ".join(f"{n} {v}" for v, n in Counter(r["verdict"] for r in rows).most_common())
