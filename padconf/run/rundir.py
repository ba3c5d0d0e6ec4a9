"""The run directory: every file a run writes, the lock, the readers and the writers. A run
directory may come from anyone, so each file is read bounded and held to its record type
(padconf.judging.records); report, gate, minimize and the command line read runs through here.

- ``run.json``: what was asked (RunConfig), how many cases were drawn and, once every case has
  its rows, how many results of each runtime were written (``RESULTS_WRITTEN``);
- ``cases.jsonl``: every case, classified, written whole before anything runs;
- ``results.jsonl``: one row per runtime x placement x case, appended and flushed as each
  finishes, rewritten in plan order at the end;
- ``controls.jsonl``: one control experiment per distinct failure;
- ``stats.json``: the session's figures; ``summary.md``: what the run found, for a person;
- ``gate.json``: in a gate's run directory, which gate (and shard) it is;
- ``<file>.torn``: a last line cut short by a kill, set aside on resume.
"""
from __future__ import annotations

import errno
import json
import os
import reprlib
import stat
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from padconf.adapters import Adapter, registered_adapter
from padconf.cases.case import Case, InputBudget
from padconf.cases.classify import classify
from padconf.core.dtypes import bit_equal
from padconf.core.errors import CaseError, PadconfError, SpecError
from padconf.core.untrusted import SURROGATE_ESCAPE, json_value, read_text
from padconf.core.vocabulary import Placement
from padconf.core.writing import FolderLock, open_to_append
from padconf.judging.failure import distinct_failure
from padconf.judging.records import (
    MAX_ROW_TEXT,
    NOT_COMPILED,
    RESULT_KEYS,
    ControlRow,
    ResultRow,
    Rows,
    RunData,
    bounded_row,
    check_row,
    rederive_control,
    rederive_rows,
    row_key,
    strict_result_row,
    strict_row,
)
from padconf.judging.verdicts import FAILURES, Verdict
from padconf.run.compile_budget import left_out, not_compiled_why, plan_order
from padconf.run.config import RESULTS_WRITTEN, checked_run_json
from padconf.run.signature import SIGNATURE, Signature, signature_of
from padconf.spec.loader import get_spec

MAX_JSONL_BYTES = 1 << 27  # results.jsonl and cases.jsonl
MAX_RUN_JSON_BYTES = 1 << 20  # run.json, gate.json
DEFAULT_RUN_DIR = "padconf-results"  # where padconf run writes, and what padconf report reads, unless told
RUN_JSON = "run.json"
CASES = "cases.jsonl"
RESULTS = "results.jsonl"  # a run directory's rows, one per runtime x placement x case
CONTROLS = "controls.jsonl"  # a run's control experiments, one per distinct failure
STATS = "stats.json"
SUMMARY = "summary.md"
GATE_JSON = "gate.json"
TORN = ".torn"  # the suffix of a file's torn last line, set aside
# what a new run (or --force) replaces: nothing of an earlier run stays beside it
RUN_FILES = (RESULTS, RESULTS + TORN, CASES, CASES + TORN, SUMMARY, STATS, CONTROLS, SIGNATURE)
SIGNED = (RUN_JSON, CASES, RESULTS, CONTROLS, GATE_JSON)  # what padconf reads back of a run: run.sig's


def read_jsonl(path: Path, required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file. A last line cut short by a killed run (no newline after it) is
    left out; any other malformed line, or a ``required`` key missing or of another type
    (records.check_row), is a CaseError naming file and line."""
    if not path.exists() and not path.is_symlink():
        return []
    lines = read_text(path, MAX_JSONL_BYTES, follow=False).split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or number == len(lines):  # the last piece has no newline: torn or empty
            continue
        rows.append(check_row(json_value(line, f"{path}:{number}"), f"{path}:{number}", required))
    return rows


def jsonl_line(row: ResultRow | ControlRow | dict) -> str:
    """One row as its line of a JSON-lines file."""
    return json.dumps(row) + "\n"


MAX_ROW_TEXT_PAST_HALF = 1 << 9  # characters of a row's texts once its file holds half of MAX_JSONL_BYTES


class RowsFile:
    """The lines of a JSON-lines file of rows that padconf reads back whole (results.jsonl,
    controls.jsonl), ``written`` bytes of it there already. Once the file holds half of
    MAX_JSONL_BYTES a row keeps MAX_ROW_TEXT_PAST_HALF characters of each text and no output
    (``elided`` says so), and a row that would take it past MAX_JSONL_BYTES is refused: padconf
    never writes a run it cannot read (a runtime printing 40 KB a case wrote 149 MB of rows,
    which report and --resume then refused: attack round IV)."""

    def __init__(self, path: Path, written: int = 0):
        self.path, self.written = path, written

    def line(self, row: ResultRow | ControlRow) -> str:
        text = jsonl_line(row)  # JSON is ASCII: a byte a character
        if SURROGATE_ESCAPE.search(text):  # a lone surrogate (a runtime's bytes decoded leniently),
            # which the reader refuses as no text: written as "?", so that the row is read back
            whole = json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8", "replace").decode("utf-8")
            row = json.loads(whole)  # the row the cuts below start from, too
            text = jsonl_line(row)
        if self.written + len(text) > MAX_JSONL_BYTES // 2:
            text = jsonl_line(bounded_row(cast(ResultRow, dict(row)), MAX_ROW_TEXT_PAST_HALF, 0))
        elif len(text) > MAX_ROW_TEXT:  # a control's texts, as a result's are when its row is made
            text = jsonl_line(bounded_row(cast(ResultRow, dict(row))))
        if self.written + len(text) > MAX_JSONL_BYTES:
            raise PadconfError(f"{self.path}: its rows reach the {MAX_JSONL_BYTES} bytes padconf reads back of a "
                               "run; run fewer cases or runtimes (--max-examples, --runtime, -k), or a gate in shards")
        self.written += len(text)
        return text


def read_case_file(path: Path, follow: bool = True) -> Case:
    """The case a case file holds: its first line, a line of a run's cases.jsonl; with
    ``follow=False`` (a file of a folder given: a bundle's case.json) never through a link."""
    lines = [ln for ln in read_text(path, MAX_JSONL_BYTES, follow=follow).splitlines() if ln.strip()]
    if not lines:
        raise CaseError(f"{path}: empty; expected one line of a run's cases.jsonl")
    doc = json_value(lines[0], str(path))
    if not isinstance(doc, dict):
        raise CaseError(f"{path}: not a cases.jsonl line (a JSON object)")
    try:
        return Case.from_json(doc)
    except CaseError as exc:
        raise CaseError(f"{path}: {exc}") from None


def read_json(path: Path, error=CaseError) -> Any:
    """A run directory's JSON file (run.json, gate.json), bounded, never through a link."""
    return json_value(read_text(path, MAX_RUN_JSON_BYTES, error, follow=False), str(path))


def read_run_json(path: Path, error=CaseError) -> dict[str, Any]:
    """run.json, read bounded, held to its strict record (padconf.run.config.run_record: every
    key declared, typed and bounded there; any other refused)."""
    return checked_run_json(read_json(path, error), str(path))


def read_results(path: Path) -> Rows:
    """The rows of a results.jsonl (or a file of rows like it), each with RESULT_KEYS; a row
    of a (runtime, placement, case id) read before is left out and counted, and one whose verdict
    differs from that row's is a CaseError: padconf never judges one case twice apart (two
    processes writing one folder write the same verdict), so which row is the run's is unknown."""
    rows = Rows()
    seen: dict[tuple, str] = {}  # key -> verdict
    for number, row in enumerate(read_jsonl(path, RESULT_KEYS), 1):
        strict_result_row(row, f"{path}: row {number}")
        key = row_key(row)
        if key in seen:
            if seen[key] != row["verdict"]:
                raise CaseError(f"{path}: row {number}: a second result of runtime {row['runtime']!r}, placement "
                                f"{row['placement']!r}, case {row['case_id']!r}, with another verdict "
                                f"({row['verdict']}, not {seen[key]})")
            rows.duplicates += 1
        else:
            seen[key] = row["verdict"]
            rows.append(cast(ResultRow, row))
    return rows


class RunDirLock(FolderLock):
    """``FolderLock`` on a run directory: exclusive for what writes it (``padconf run``,
    ``--resume``, ``--force``), shared for what reads it (``report``, ``gate --results``)."""

    def __init__(self, run_dir: Path, exclusive: bool):
        super().__init__(run_dir, exclusive, "run directory")


def read_controls(run_dir: Path) -> list[ControlRow]:
    """controls.jsonl's rows, each held to ControlRow's strict record (``attach_controls`` holds
    them to what can be derived again of them); minimize runs its own controls and labels only
    from those."""
    path = Path(run_dir) / CONTROLS
    rows = read_jsonl(path, ("failure",))
    for number, row in enumerate(rows, 1):
        strict_row(row, ControlRow, f"{path}: row {number}")
    return cast("list[ControlRow]", rows)


def attach_controls(rows: list[ResultRow], run_dir: Path, cases: dict[str, dict]) -> list[ResultRow]:
    """``rows`` with each failing row's control (from the run directory's controls.jsonl) as
    its ``control``; a control is the run's only where it can be derived again
    (records.rederive_control): of a failure the rows hold, run on that failure's first case
    (``cases``: cases.jsonl by id), its verdict and ``fails_too`` its own. A forged control would
    otherwise triage a failure away (not Pad-specific)."""
    path = Path(run_dir) / CONTROLS
    firsts: dict[tuple, ResultRow] = {}
    for row in rows:
        if row["verdict"] in FAILURES:
            firsts.setdefault(distinct_failure(row), row)
    controls: dict[tuple, ControlRow] = {}
    for number, control in enumerate(read_controls(run_dir), 1):
        failure, where = tuple(control["failure"]), f"{path}: row {number}"
        if failure in controls:
            raise CaseError(f"{where}: a second control of failure {reprlib.repr(list(failure))}")
        first = firsts.get(failure)
        if first is None:
            raise CaseError(f"{where}: the control of failure {reprlib.repr(list(failure))}, which no failing row "
                            f"of {RESULTS} is: not a control of this run")
        if rederive_control(control, first, cases.get(first["case_id"]), where):
            controls[failure] = control
    if controls:
        for row in rows:
            if row["verdict"] in FAILURES and distinct_failure(row) in controls:
                row["control"] = controls[distinct_failure(row)]
    return rows


def set_torn_line_aside(path: Path) -> bool:
    """Move a last line cut short (no newline after it) to ``<path>.torn`` and cut the file
    back to its last whole line, so that appending goes on cleanly. True if there was one."""
    if not path.exists() and not path.is_symlink():
        return False
    try:  # never a link (cutting it would cut a file elsewhere), a FIFO or a device (would hang or fail)
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise CaseError(f"{path}: {'a symbolic link' if exc.errno == errno.ELOOP else exc.strerror}: "
                        "not a file padconf cuts") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CaseError(f"{path}: not a regular file")
    with os.fdopen(fd, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        tail_start = max(0, size - (1 << 22))
        f.seek(tail_start)
        tail = f.read()
        if not tail or tail.endswith(b"\n"):
            return False
        cut = tail_start + tail.rfind(b"\n") + 1 if b"\n" in tail else 0
        f.seek(cut)
        torn = f.read()
        with open_to_append(Path(f"{path}.torn"), "ab") as aside:
            aside.write(torn + b"\n")
        f.truncate(cut)
    return True


def unfinished(run_doc: Any, rows: list[ResultRow], run_json: Path) -> str | None:
    """Why the ``rows`` read from a run directory are not its whole run, by its run.json
    (``run_doc``, None where there is none): a run killed part way, or a directory copied or
    edited in part (a runtime's rows taken out, the count in all edited to match); None when they
    are. run.json counts each runtime's rows, those of a runtime that ran no case as 0."""
    if run_doc is None:
        return f"it has no {run_json.name}, which counts the results of a run that finished"
    written = run_doc.get(RESULTS_WRITTEN) if isinstance(run_doc, dict) else None
    if written is None:
        return f"its {run_json.name} counts no results: the run did not finish (or an older padconf wrote it)"
    if not isinstance(written, dict):
        return (f"its {run_json.name} counts {written} results in all, not each runtime's (an older padconf wrote "
                "it): a runtime's rows missing would not show")
    if set(written) != set(run_doc["runtimes"]):
        return f"its {run_json.name} counts the results of other runtimes than it ran"
    held = Counter(r["runtime"] for r in rows)
    short = [f"{held[name]} results of {name} where its run wrote {n}" for name, n in written.items()
             if held[name] != n]
    return "it holds " + ", ".join(short) if short else None


def named_again(recorded_specs_dir: str | None, named_specs_dir: str | None, run_json: Path) -> str | None:
    """The spec folder a run directory's run.json names, which padconf reads only when the user
    names it too (--specs-dir): a run directory from anyone must not point padconf at files
    elsewhere (whose values a schema error would print)."""
    if recorded_specs_dir is not None and (named_specs_dir is None
                                           or Path(named_specs_dir).resolve() != Path(recorded_specs_dir).resolve()):
        raise PadconfError(f"{run_json}: the run read its spec files from {recorded_specs_dir}, which padconf reads "
                           f"only when you name it again: --specs-dir {recorded_specs_dir}")
    return recorded_specs_dir


def cases_dirs_named_again(recorded: list[str] | None, named: list[str] | None, run_json: Path) -> None:
    """The test folders run.json's ``cases_dir`` names, which ``--resume`` reads only when the
    user names each again (--cases), as ``named_again`` the spec folder: run.json's every field
    that names a path is gated so (``"/"`` would walk the file system)."""
    if recorded is None:
        return
    given = {Path(d).resolve() for d in named or ()}
    unnamed = [d for d in recorded if Path(d).resolve() not in given]
    if unnamed:
        raise PadconfError(f"{run_json}: the run read its cases from {unnamed[0]}, which padconf reads only when "
                           f"you name it again: --cases {' '.join(recorded)}")


def check_rows_of_cases(rows: list[ResultRow], case_ids: set[str] | dict, results: Path) -> None:
    """Every row of a run directory is a result of one of its cases (cases.jsonl holds every
    case of a run before any row is written): a row of a case it lacks was added by someone
    else (a fabricated mismatch counted in the report, and carried on by ``--resume``)."""
    foreign = next((r for r in rows if r["case_id"] not in case_ids), None)
    if foreign is not None:
        raise CaseError(f"{results}: a result of case {reprlib.repr(foreign['case_id'])}, which {CASES} does not "
                        "hold: not a row of this run")


def check_rows_of_run(rows: list[ResultRow], run_doc: dict[str, Any], results: Path,
                      run_cases: list[Case]) -> None:
    """Every row of a run directory is a result of a runtime and a spec version its run.json
    (``run_doc``) names: a row of another was added by someone else (a failure, or a pass, of a
    runtime the run never started; a report of spec versions run.json does not name). Each is
    one its runtime's adapter writes (``_not_its_row``), and a compiler's skip for the compile
    budget is of a case the run's budget leaves out of ``run_cases``."""
    named, specs = set(run_doc["runtimes"]), run_doc.get("specs")
    foreign = next((r for r in rows if r["runtime"] not in named), None)
    if foreign is not None:
        raise CaseError(f"{results}: a result of runtime {reprlib.repr(foreign['runtime'])}, which {RUN_JSON} does "
                        "not name: not a row of this run")
    if specs is not None and (other := next((r for r in rows if r["spec"] not in specs), None)) is not None:
        raise CaseError(f"{results}: a result of spec version {reprlib.repr(other['spec'])}, which {RUN_JSON}'s "
                        "specs do not name: not a row of this run")
    adapters = {name: registered_adapter(name) for name in named}
    for number, row in enumerate(rows, 1):
        adapter = adapters[row["runtime"]]
        why = None if adapter is None else _not_its_row(adapter, row)
        if why:
            raise CaseError(f"{results}: row {number}: a result of {reprlib.repr(row['runtime'])} that it never "
                            f"writes: {why}: not a row of this run")
    _check_budget_rows(rows, run_doc.get("compile_budget"), adapters, results, run_cases)


def _check_budget_rows(rows: list[ResultRow], budget: Any, adapters: dict[str, Adapter | None], results: Path,
                       run_cases: list[Case]) -> None:
    """Each "not compiled: budget" row is one the run's budget writes: its reason word for word,
    of a (placement, case) the budget's choice (compile_budget.left_out) over the run's cases
    leaves out, in the placements the runtime ran. The choice is the whole run's, so a skip
    forged onto a compiled case (a failure hidden) is refused."""
    skips: dict[str, list[tuple[int, ResultRow]]] = {}
    for number, row in enumerate(rows, 1):
        if row["verdict"] == Verdict.SKIPPED and (row.get("detail") or "").startswith(NOT_COMPILED):
            skips.setdefault(row["runtime"], []).append((number, row))
    if not skips:
        return
    if type(budget) is not int:
        number, row = next(iter(skips.values()))[0]
        raise CaseError(f"{results}: row {number}: skipped for a compile budget, in a run that compiles every "
                        "model: not a row of this run")
    cases = plan_order(run_cases)
    for name, skipped in skips.items():
        adapter = adapters[name]
        if adapter is None:
            continue  # a runtime not registered here: its rows cannot be held to it
        placements = {r["placement"] for r in rows if r["runtime"] == name}
        expressed = {Placement(p): [c for c in cases if adapter.supports(c.spec, c.dtype) is None]
                     for p in adapter.placements if p in placements}
        out = left_out(expressed, budget)[0]
        for number, row in skipped:
            if row.get("detail") != not_compiled_why(budget) or (row["placement"], row["case_id"]) not in out:
                raise CaseError(f"{results}: row {number}: a skip of {reprlib.repr(name)} for the compile budget "
                                f"that the run's budget ({budget} models) does not write: not a row of this run")


def _not_its_row(adapter: Adapter, row: ResultRow) -> str | None:
    """Why ``row`` is no result ``adapter``'s runs write (None: it may be one): a placement it
    lacks; an answer to a case it cannot express; a skip of one it can, where it skips nothing
    at run time and no compile budget left the case out."""
    if row["placement"] not in adapter.placements:
        return f"placement {row['placement']}, which it lacks"
    why_not = adapter.supports(row["spec"], row["dtype"])
    if row["verdict"] != Verdict.SKIPPED:
        return None if why_not is None else f"{row['verdict']} on {row['spec']} {row['dtype']}, which it skips"
    if why_not is not None:
        return None if row.get("detail") == why_not else f"skipped for another reason than its own ({why_not})"
    budget = adapter.compiles_ahead and (row.get("detail") or "").startswith(NOT_COMPILED)
    return None if budget or adapter.skips_at_run_time else \
        f"skipped on {row['spec']} {row['dtype']}, which it runs and never skips at run time"


def decoded_cases(docs: Iterable[dict], where: Path, specs_dir: str | None,
                  spec_ids: set[str] | None = None) -> list[Case]:
    """The cases of a run's cases.jsonl (``docs``) decoded, their arrays and the work they imply
    bounded together (InputBudget), each under its content's id, once, each of one of the run's
    ``spec_ids`` where given (no runtime would claim another, and a resumed run would end short of
    nothing), and each as the reference classifies it under the spec folder ``specs_dir`` (None:
    padconf's own): a defined case relabelled must-reject, or an expected output edited, would
    turn a failure into a pass."""
    budget, cases, seen = InputBudget(str(where)), [], set()
    for number, doc in enumerate(docs, 1):
        line = f"{where}:{number}"
        try:
            case = Case.from_json(doc, budget)
        except CaseError as exc:
            raise CaseError(f"{line}: {exc}") from None
        if case.id in seen:
            raise CaseError(f"{line}: case {case.id} again: a case is drawn once")
        if spec_ids is not None and case.spec not in spec_ids:
            raise CaseError(f"{line}: spec {case.spec} is not one of the run's spec versions")
        try:
            derived = classify(case, get_spec(case.spec, specs_dir))
        except (CaseError, SpecError) as exc:
            raise CaseError(f"{line}: {exc}") from None
        if (edited := _not_as_derived(case, derived)) is not None:
            raise CaseError(f"{line}: case {case.id}: its {edited} is not what padconf's reference "
                            "derives of its input: not a case padconf wrote")
        seen.add(case.id)
        cases.append(case)
    return cases


def _not_as_derived(case: Case, derived: Case) -> str | None:
    """The first field of ``case``'s classification (kind, reason, rule, expected output and
    readings, bit for bit) that ``derived`` (classify's of its input) holds otherwise; None."""
    for name in ("kind", "reason", "rule", "any_answer_conforms"):
        if getattr(case, name) != getattr(derived, name):
            return name
    if not _same(case.expected, derived.expected):
        return "expected output"
    mine, theirs = case.interpretations, derived.interpretations
    if mine.keys() != theirs.keys() or not all(_same(mine[k], theirs[k]) for k in mine):
        return "readings' outputs"
    return None


def _same(a: Any, b: Any) -> bool:
    return (a is None) == (b is None) and (a is None or bit_equal(a, b))


def read_run_cases(path: Path, specs_dir: str | None) -> tuple[dict[str, dict], list[Case]]:
    """A run's cases.jsonl: its documents by case id, and the cases they decode to
    (``decoded_cases``: each under its content's id, so that a copy under a made-up id, or in
    another shard, is refused, and as the reference classifies it)."""
    docs = read_jsonl(path, ("id", "spec", "data", "pads", "mode"))
    return {doc["id"]: doc for doc in docs}, decoded_cases(docs, path, specs_dir)


def load_run(run_dir: Path | str, specs_dir: str | None = None) -> RunData:
    """A run directory's results (each failing row with its control) and cases; a missing or
    empty one is an error (a report on nothing would look like a clean run). ``specs_dir``: the
    spec folder the user named (None: padconf's own), which must be the one the run recorded."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise PadconfError(f"{run_dir}: no such run directory")
    results = run_dir / RESULTS
    if not results.is_file():
        raise PadconfError(f"{run_dir}: no {RESULTS} (not a run directory of `padconf run --out`?)")
    with RunDirLock(run_dir, exclusive=False):  # not while a run writes it
        signature = signature_of(run_dir, SIGNED)  # a changed run is no worse than one whose run.sig is deleted
        rows = read = read_results(results)
        if not rows:
            raise PadconfError(f"{results}: holds no result: nothing to report")
        run_json = run_dir / RUN_JSON
        if not run_json.exists() and not run_json.is_symlink():
            raise PadconfError(f"{run_dir}: no {RUN_JSON}, which names the runtimes the run ran: its rows cannot "
                               "be held to them (not a run directory of `padconf run --out`?)")
        doc = read_run_json(run_json)
        specs_dir = named_again(doc.get("specs_dir"), specs_dir, run_json)
        cases, decoded = read_run_cases(run_dir / CASES, specs_dir)
        check_rows_of_cases(rows, cases, results)
        check_rows_of_run(rows, doc, results, decoded)
        rederive_rows(rows, cases, str(results))
        attach_controls(rows, run_dir, cases)
    why = [unfinished(doc, rows, run_json),
           f"{read.duplicates} rows repeat a runtime, placement and case read before (two processes wrote "
           "the folder at once) and are left out" if read.duplicates else None]
    unsigned = None if signature == Signature.SIGNED else (
        f"{signature.value}: its results are the folder's word, not padconf's (a failure can be relabelled a pass)")
    return RunData(run_dir, rows, cases, specs_dir, "; ".join(w for w in why if w) or None, unsigned)
