"""Making a baseline (``padconf baseline``): the gate's runs, run again until they show nothing
new, and reruns alone of what a corrupted heap may answer otherwise, written as entries; and
pruning one of the cells the gate, run now, finds fixed."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from padconf.adapters import runtime_packages
from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.core.versions import versions_line
from padconf.core.writing import write_atomically
from padconf.execution.worker import Worker
from padconf.gate.baseline import baseline_entries, dump_baseline, forgiving, parse_baseline, pruned, read_baseline
from padconf.gate.gate import GateConfig, gate, gate_run, work_folder, worker_limits
from padconf.judging.failure import result_outcome
from padconf.judging.records import ResultRow, judged_row
from padconf.judging.verdicts import FAILURES, Verdict
from padconf.run.rundir import jsonl_line

BASELINE_RERUNS = 2  # reruns alone of each suspicious result of a baseline's runs
BASELINE_RUNS = 5  # at most; a baseline runs the suite again until a run shows no failure the earlier ones did not


def prune(config: GateConfig, path: Path, out_dir: Path, jobs: int | None = None, progress=None) -> tuple[str, str]:
    """The baseline at ``path`` as it is, and without the cells where the gate, run now, finds
    its entries fixed (confirmed as the gate confirms)."""
    text, entries = read_baseline(path)
    judgement = gate(config, entries, out_dir, jobs, progress)
    return text, pruned(text, {f.entry: set(f.cells + f.stale) for f in judgement.fixed})


def suspicious(row: ResultRow) -> bool:
    """A failure a runtime with a corrupted heap may answer differently when its case runs
    alone: a wrong output, a crash, a hang (a refusal is the runtime's own check)."""
    return row["verdict"] in FAILURES and (row.get("output") is not None
                                           or row["verdict"] in (Verdict.CRASH, Verdict.TIMEOUT))


def baseline_rows(config: GateConfig, out_dir: Path, jobs: int | None = None,
                  progress=None) -> tuple[list[ResultRow], int, set[tuple[str, str]]]:
    """The rows a baseline is written from, the number of cases, and the unstable results.

    The gate's run, run again (in ``out_dir``/repeats) until a run shows no failure the earlier
    runs had not shown, at least twice and at most BASELINE_RUNS times, plus BASELINE_RERUNS reruns
    alone of every suspicious result: the failures of every run and rerun. A result (a case in
    one placement) is unstable when the runs and reruns answered it differently: a runtime that
    reads memory it never wrote, or whose heap an earlier case corrupted, answers the same case
    now right, now with another wrong value, now with a crash. A baseline made of one run
    would miss what the next run shows, and every gate would fail on it."""
    with work_folder(config, out_dir):
        return _baseline_rows(config, out_dir, jobs, progress)


def _baseline_rows(config: GateConfig, out_dir: Path, jobs: int | None,
                   progress) -> tuple[list[ResultRow], int, set[tuple[str, str]]]:
    runs: list[list[ResultRow]] = []
    outcomes: defaultdict[tuple[str, str], set] = defaultdict(set)  # result -> what the runs and reruns answered
    seen: set[tuple] = set()
    cases: list[Case] = []
    for k in range(BASELINE_RUNS):
        rows, cases = gate_run(config, out_dir if k == 0 else Path(out_dir) / "repeats" / str(k + 1), None, jobs,
                               progress)
        runs.append(rows)
        shown = set()
        for r in rows:
            outcome = result_outcome(r)
            outcomes[(r["case_id"], r["placement"])].add(outcome)
            if r["verdict"] in FAILURES:
                shown.add((r["case_id"], r["placement"], outcome[:2]))
        if k and shown <= seen:
            break
        seen |= shown
    by_id = {c.id: c for c in cases}
    worker = Worker(config.runtime, **worker_limits(config))
    reruns = []
    try:
        for case_id, placement in dict.fromkeys((r["case_id"], r["placement"]) for rows in runs
                                                for r in rows if suspicious(r)):
            reruns += [judged_row(config.runtime, placement, by_id[case_id],
                                  *worker.run_alone(by_id[case_id], placement)) for _ in range(BASELINE_RERUNS)]
    finally:
        worker.close()
    for row in reruns:
        outcomes[(row["case_id"], row["placement"])].add(result_outcome(row))
    unstable = {result for result, seen_there in outcomes.items() if len(seen_there) > 1}
    failing = [r for rows in runs[1:] for r in rows if r["verdict"] in FAILURES]
    failing += [r for r in reruns if r["verdict"] in FAILURES]
    write_atomically(Path(out_dir) / "reruns.jsonl", "".join(map(jsonl_line, failing)))
    return runs[0] + failing, len(cases), unstable


def baseline_text(config: GateConfig, out_dir: Path, by_case: bool = False,
                  progress=None) -> tuple[str, int, int]:
    """A new baseline of ``config.runtime`` (``padconf baseline``), run in ``out_dir``: its text
    (a header saying how it was made, then the entries), its number of entries and of failing
    results. A baseline that would not forgive its own failures is padconf's fault."""
    rows, case_count, unstable = baseline_rows(config, out_dir, progress=progress)
    entries = baseline_entries(rows, by_case=by_case, unstable=unstable)
    failing = [r for r in rows if r["verdict"] in FAILURES]
    results = len({(r["case_id"], r["placement"]) for r in failing})  # a rerun alone is no further result
    header = (f"padconf baseline: {versions_line(runtime_packages())}\n{config.runtime} over {case_count} cases "
              f"(seed {config.seed}, explore {config.explore}): {results} failing results (a case in one placement; "
              f"suspicious ones rerun alone, which counts no result twice) in {len(entries)} entries; "
              f"{len(unstable)} results answered differently from run to run.\n"
              "Review each entry: say why in `why`, add `link` to the upstream report.")
    text = dump_baseline(entries, header)
    reread = parse_baseline(text, "the baseline just written")
    missed = [r for r in failing if forgiving(reread, r) is None]
    if missed:  # a signature that does not match its own failures would gate nothing
        raise PadconfError(f"internal: the baseline written does not forgive {missed[0]['case_id']}")
    return text, len(entries), results
