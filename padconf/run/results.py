"""A run's result rows: their schema, how one is made from a case and its outcome, and the
JSON-lines files of a run directory that hold them (results.jsonl, controls.jsonl; cases.jsonl
is read here too), read bounded since a run directory may come from anyone.

What reads rows (report, gate, baseline, minimize, repro, the pytest plugin) imports this
module, not padconf.run.runner: reading a run needs none of what makes one (Hypothesis, workers).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import reprlib
import stat
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, TypedDict, cast

from padconf.cases.case import Case
from padconf.core.dtypes import dtype_name, encode_array
from padconf.core.errors import CaseError, PadconfError
from padconf.core.untrusted import json_value, read_text
from padconf.core.vocabulary import Placement
from padconf.judging.failure import distinct_failure
from padconf.judging.outcome import Outcome
from padconf.judging.verdicts import FAILURES, Ruling, Verdict, confirm_refusal, judge

MAX_JSONL_BYTES = 1 << 27  # results.jsonl and cases.jsonl
MAX_RUN_JSON_BYTES = 1 << 20  # run.json
RESULTS = "results.jsonl"  # a run directory's rows, one per runtime x placement x case
CONTROLS = "controls.jsonl"  # a run's control experiments, one per distinct failure
# the keys every result row has, checked when a run directory is read
RESULT_KEYS = ("runtime", "placement", "spec", "mode", "dtype", "shape", "pads", "verdict", "case_id", "origin")
_KEY_TYPES = {"shape": list, "pads": list, "data": dict, "failure": list}  # of a required key; the others are text
# keys a row may lack or hold null, and else must hold this type: the report reads them as such
_OPTIONAL_TYPES = {"kind": str, "reason": str, "rule": str, "error": str, "detail": str, "difference": str,
                   "note": str, "matched": list, "output": dict, "tags": list}
# the lists among them that hold text only (a control's failure: its distinct_failure)
_TEXT_LISTS = ("matched", "tags", "failure")
# what a message calls a Python value read from JSON: the file's words, not Python's
_JSON_NAMES = {dict: "an object", list: "an array", str: "text", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}


class _ControlFields(TypedDict):
    failure: list  # failure.distinct_failure of the failure it controls
    verdict: str  # a Verdict
    fails_too: bool  # verdicts.control_fails
    detail: str | None
    error: str | None
    case_id: str
    placement: Placement  # where the control ran


class ControlRow(_ControlFields, total=False):
    """A control experiment (controls.jsonl): a failure's first case's data (or its empty baked
    pads or axes) through Identity, or its data and constant value through Reshape and Concat."""
    operand: str  # what went through: data, values (data and constant value), pads or axes (before it: data)


class _Row(TypedDict):
    runtime: str
    placement: Placement
    spec: str
    mode: str
    dtype: str
    shape: list[int]
    pads: list[int]
    axes: list[int] | None
    constant_value: str | None  # repr of the scalar
    kind: str  # a CaseKind
    reason: str | None
    rule: str | None  # the spec rule a must-reject case breaks (a key of its spec file)
    verdict: str  # a Verdict
    detail: str | None  # only where it says more than ``error``
    matched: list[str] | None  # an ambiguous case: the interpretations its output equals
    difference: str | None  # a mismatch: a Difference
    error: str | None
    note: str | None
    printed: dict | None
    seconds: float | None
    output: dict | None  # the runtime's output where the verdict is about it (encoded array)
    case_id: str
    origin: str
    process: str | None  # the worker process that answered, and how many cases it ran before
    position: int | None


class ResultRow(_Row, total=False):
    """One line of results.jsonl: a runtime x placement x case, judged. The keys are written in
    this order (``target`` first), so a run's file is the same byte for byte."""
    target: str  # a compiler's target (llvm-cpu, cuda ...), for runtimes that have one
    control: ControlRow  # attached on reading (attach_controls), never written
    after: str  # the gate: the case ids after which a failure recurs (its poisoners)
    experiments: dict  # minimize's triage experiments (padconf.minimize.experiments), never written to a run


def _evidence(ruling: Ruling, outcome: Outcome) -> dict | None:
    """The runtime's output where it is what the verdict is about (a wrong or unexpected answer),
    so that a report can show it; None otherwise (a pass is the case's expected output)."""
    if outcome.output is None or ruling.verdict not in (Verdict.MISMATCH, Verdict.WRONGLY_ACCEPTED,
                                                            Verdict.UNEXPLAINED):
        return None
    try:
        return encode_array(outcome.output, dtype_name(outcome.output.dtype))
    except CaseError:  # a dtype padconf has no name for
        return None


def result_row(runtime: str, placement: Placement, case: Case, outcome: Outcome, status: str,
               placed: tuple[str, int] | None = None, twin=None, target: str | None = None) -> ResultRow:
    """``placed``: the worker process that answered and how many cases it ran before (Worker.placed).
    ``twin``: for a must-reject case the runtime refused, (its repaired twin or why there is
    none, the twin's outcome, status) in the same runtime and placement (verdicts.confirm_refusal).
    ``target``: a compiler's target (llvm-cpu, cuda ...), kept in the rows of runtimes that have one."""
    v = judge(case, outcome, status)
    if twin is not None:
        v = confirm_refusal(v, *twin)
    return cast(ResultRow, ({"target": target} if target else {}) | {
        "runtime": runtime, "placement": placement, "spec": case.spec, "mode": case.mode,
        "dtype": case.dtype, "shape": list(case.data.shape), "pads": list(case.pads), "axes": case.axes,
        "constant_value": None if case.constant_value is None else repr(case.constant_value.reshape(-1)[0]),
        # detail only where it says more than the error text (a refusal's detail is that text)
        "kind": case.kind, "reason": case.reason, "rule": case.rule, "verdict": v.verdict,
        "detail": None if v.detail == outcome.error else v.detail,
        "matched": v.matched, "difference": v.difference, "error": outcome.error, "note": outcome.note,
        "printed": outcome.printed,
        "seconds": outcome.seconds, "output": _evidence(v, outcome),
        "case_id": case.id, "origin": case.origin,  # edge-class tags: cases.jsonl, by case_id
        "process": placed and placed[0], "position": placed and placed[1],
    })


def jsonl_line(row: ResultRow | ControlRow | dict) -> str:
    """One row as its line of a JSON-lines file."""
    return json.dumps(row) + "\n"


def write_atomically(path: Path, text: str) -> None:
    """``text`` as the whole of ``path``, which a reader sees before or after, never half written
    nor empty (a full disk, a kill): a new file of its own in the same folder, synced, renamed
    over ``path``. A link planted at ``path`` is replaced, never written through."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)  # the rename itself survives a power loss
    finally:
        os.close(folder)


def open_to_append(path: Path, mode: str = "a") -> IO:
    """``path`` opened for appending (``mode`` "a" text, "ab" bytes), created if need be; a link
    planted there, or anything but a regular file, is refused (CaseError), never written through."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CaseError(f"{path}: a symbolic link, which padconf does not write through") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CaseError(f"{path}: not a regular file")
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


def read_jsonl(path: Path, required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file. A last line cut short by a killed run (no newline after it) is
    left out; any other malformed line, or a ``required`` key missing or of another type, is a
    CaseError naming file and line."""
    if not path.exists() and not path.is_symlink():
        return []
    lines = read_text(path, MAX_JSONL_BYTES, follow=False).split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or number == len(lines):  # the last piece has no newline: torn or empty
            continue
        row = json_value(line, f"{path}:{number}")
        if not isinstance(row, dict):
            raise CaseError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        missing = [k for k in required if k not in row]
        if missing:
            raise CaseError(f"{path}:{number}: row lacks {', '.join(missing)}")
        expected = ([(k, _KEY_TYPES.get(k, str), "") for k in required]
                    + [(k, kind, " or null") for k, kind in _OPTIONAL_TYPES.items() if row.get(k) is not None])
        mistyped = [(k, kind, or_null) for k, kind, or_null in expected if not isinstance(row[k], kind)]
        if mistyped:
            key, kind, or_null = mistyped[0]
            raise CaseError(f"{path}:{number}: {key!r} is {_JSON_NAMES[type(row[key])]}, "
                            f"not {_JSON_NAMES[kind]}{or_null}")
        for key in _TEXT_LISTS:
            if not all(isinstance(item, str) for item in row.get(key) or ()):
                raise CaseError(f"{path}:{number}: {key!r} holds something other than text")
        rows.append(row)
    return rows


def row_key(row: ResultRow | dict) -> tuple[str, str, str]:
    """What a run computes once: (runtime, placement, case id)."""
    return row["runtime"], row["placement"], row["case_id"]


class Rows(list["ResultRow"]):
    """Result rows as read, each (runtime, placement, case id) once; ``duplicates`` counts the
    rows read again and left out (a folder two processes wrote at once, before the run lock)."""
    duplicates = 0


def read_results(path: Path) -> Rows:
    """The rows of a results.jsonl (or a file of rows like it), each with RESULT_KEYS; a row
    of a (runtime, placement, case id) read before is left out and counted."""
    rows, seen = Rows(), set()
    for row in read_jsonl(path, RESULT_KEYS):
        key = row_key(row)
        if key in seen:
            rows.duplicates += 1
        else:
            seen.add(key)
            rows.append(cast(ResultRow, row))
    return rows


class RunDirLock:
    """An advisory lock on a run directory (flock on the folder itself): exclusive for what
    writes it (``padconf run``, ``--resume``, ``--force``), shared for what reads it (``report``,
    ``gate --results``), so that no two processes write one folder at once and nothing reads it
    half written. The kernel drops it when the process ends, kill -9 included: it is never
    stale, and nothing is written into the folder for it. A conflict is one line, never a wait.
    Within one process the locks of a folder are one (a library user's objects may outlive
    their use): held until the last is released."""

    _held: dict[tuple[int, int], list] = {}  # (device, inode) -> [fd, holders, exclusive]
    _guard = threading.Lock()

    def __init__(self, run_dir: Path, exclusive: bool):
        self.key: tuple[int, int] | None = None
        with RunDirLock._guard:
            info = os.stat(run_dir)
            key = (info.st_dev, info.st_ino)
            held = RunDirLock._held.get(key)
            if held is None:
                held = [os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY), 0, False]
            if held[1] == 0 or (exclusive and not held[2]):
                try:
                    fcntl.flock(held[0], (fcntl.LOCK_EX if exclusive or held[2] else fcntl.LOCK_SH) | fcntl.LOCK_NB)
                except BlockingIOError:
                    if held[1] == 0:
                        os.close(held[0])
                    raise PadconfError(f"{run_dir}: another padconf process is "
                                       f"{'using' if exclusive else 'writing'} this run directory; "
                                       "run again once it has finished") from None
                held[2] = held[2] or exclusive
            held[1] += 1
            RunDirLock._held[key] = held
            self.key = key

    def release(self) -> None:
        with RunDirLock._guard:
            if self.key is None:
                return
            held = RunDirLock._held[self.key]
            held[1] -= 1
            if held[1] == 0:
                os.close(held[0])
                del RunDirLock._held[self.key]
            self.key = None

    def __del__(self) -> None:
        self.release()

    def __enter__(self) -> RunDirLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def read_controls(run_dir: Path) -> list[ControlRow]:
    return cast("list[ControlRow]", read_jsonl(Path(run_dir) / CONTROLS, ("failure",)))


def attach_controls(rows: list[ResultRow], run_dir: Path) -> list[ResultRow]:
    """``rows`` with each failing row's control (from the run directory's controls.jsonl) as
    its ``control``."""
    controls = {tuple(r["failure"]): r for r in read_controls(run_dir)}
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


# run.json's count of results.jsonl's rows, written (padconf.run.runner) once every case has its rows
RESULTS_WRITTEN = "results"


def unfinished(run_doc: Any, rows: int, run_json: Path) -> str | None:
    """Why the ``rows`` read from a run directory are not its whole run, by its run.json
    (``run_doc``, None where there is none): a run killed part way, or a directory copied in
    part; None when they are."""
    if run_doc is None:
        return f"it has no {run_json.name}, which counts the results of a run that finished"
    written = run_doc.get(RESULTS_WRITTEN) if isinstance(run_doc, dict) else None
    if written is None:
        return f"its {run_json.name} counts no results: the run did not finish (or an older padconf wrote it)"
    if type(written) is not int:
        raise CaseError(f"{run_json}: malformed: {RESULTS_WRITTEN} {reprlib.repr(written)} is not a count")
    return None if written == rows else f"it holds {rows} results where its run wrote {written}"


def named_again(recorded_specs_dir: str | None, named_specs_dir: str | None, run_json: Path) -> str | None:
    """The spec folder a run directory's run.json names, which padconf reads only when the user
    names it too (--specs-dir): a run directory from anyone must not point padconf at files
    elsewhere (whose values a schema error would print)."""
    if recorded_specs_dir is not None and (named_specs_dir is None
                                           or Path(named_specs_dir).resolve() != Path(recorded_specs_dir).resolve()):
        raise PadconfError(f"{run_json}: the run read its spec files from {recorded_specs_dir}, which padconf reads "
                           f"only when you name it again: --specs-dir {recorded_specs_dir}")
    return recorded_specs_dir
