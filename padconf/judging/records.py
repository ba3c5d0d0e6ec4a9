"""The records a run is made of: a result row (one case in one placement on one runtime, judged),
a control row (a distinct failure's control experiment), and the run as read back (``RunData``).
Their fields and types are declared here once; ``check_row`` holds a row read from a file to
them. The row factory, ``result_row``, takes a ruling (padconf.judging.verdicts'): it formats
and does not judge; ``judged_row`` asks verdicts.judge first.

Rows are JSON objects (TypedDicts), so that results.jsonl stays plain JSON for jq; vocabulary
fields hold a ``Word`` (Verdict, Placement, CaseKind ...), which is its own text in JSON."""
from __future__ import annotations

import functools
import json
import reprlib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict, cast

import msgspec
import numpy as np

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind, check_mode
from padconf.cases.context import snap
from padconf.core.dtypes import ArrayBudget, array_digest, decode_array, dtype_name, encode_array
from padconf.core.errors import CaseError
from padconf.core.vocabulary import Placement, Status
from padconf.judging.verdicts import (
    CONTROL_OUTPUT_VERDICTS,
    FAILURES,
    OWN_FAULT,
    Ruling,
    Verdict,
    confirm_refusal,
    control_fails_too,
    judge,
)

# A skipped row's detail starts so where an ahead-of-time compiler's budget left the case's
# model out (padconf.run.compile_budget)
NOT_COMPILED = "not compiled: budget"


class _ControlFields(TypedDict):
    failure: list  # failure.distinct_failure of the failure it controls
    verdict: Verdict
    fails_too: bool  # verdicts.control_fails_too
    detail: str | None
    error: str | None
    case_id: str
    placement: Placement  # where the control ran


class ControlRow(_ControlFields, total=False):
    """A control experiment (controls.jsonl): a failure's first case's data (or its empty baked
    pads or axes) through Identity, or its data and constant value through Reshape and Concat."""
    operand: str  # what went through: data, values (data and constant value), pads or axes (before it: data)
    difference: str | None
    output: dict[str, Any] | None  # the control's output where its verdict is about it (verdicts.control_evidence)
    elided: dict[str, Annotated[int, msgspec.Meta(ge=0)]]  # as a result row's


class _Row(TypedDict):
    runtime: str
    placement: Placement
    spec: str
    mode: str
    dtype: str
    shape: list[int]
    pads: list[int]
    axes: list[int] | None
    constant_value: str | None  # the scalar as text (scalar_text)
    kind: str  # a CaseKind
    reason: str | None
    rule: str | None  # the spec rule a must-reject case breaks (a key of its spec file)
    verdict: Verdict
    detail: str | None  # only where it says more than ``error``
    matched: list[str] | None  # an ambiguous case: the interpretations its output equals
    difference: str | None  # a mismatch: a Difference
    error: str | None
    note: str | None
    printed: dict[str, Any] | None
    seconds: Annotated[float, msgspec.Meta(ge=0, le=1e9)] | None  # a row of -5 or NaN seconds was read
    output: dict[str, Any] | None  # the runtime's output where the verdict is about it (encoded array)
    case_id: str
    origin: str
    process: str | None  # the worker process that answered, and how many cases it ran before
    position: Annotated[int, msgspec.Meta(ge=0)] | None


class ResultRow(_Row, total=False):
    """One line of results.jsonl: a runtime x placement x case, judged. The keys are written in
    this order (``target`` first), so a run's file is the same byte for byte."""
    target: str  # a compiler's target (llvm-cpu, cuda ...), for runtimes that have one
    graph: str  # a context case's model in words (Case.graph: "Pad(edge) before Slice"), written for those only
    control: ControlRow  # attached on reading (rundir.attach_controls), never written
    after: str  # the gate: the case ids after which a failure recurs (its poisoners)
    experiments: dict  # minimize's triage experiments (padconf.minimize.probes.experiments), never written to a run
    elided: dict[str, Annotated[int, msgspec.Meta(ge=0)]]  # key -> how many entries (a list) or characters
    # (a text) it had, where the row holds fewer
    tags: list[str]  # a case's edge classes, where a row carries them (cases.jsonl holds them, by case_id)
    # SHA-256 of the runtime's output as its verdict compared it (judged_output), null where it
    # returned none: what a pass, which records no output, is derived again from (rederive_rows)
    output_digest: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")] | None


# What padconf writes, padconf reads back: a row is small whatever its case holds, so that a run's
# results.jsonl stays within what rundir reads (MAX_JSONL_BYTES). A case's lists are kept whole
# once, in cases.jsonl (by case_id); a row keeps their first entries and says how many there were.
MAX_ROW_LIST = 64  # entries of a row's shape, pads, axes
MAX_ROW_TEXT = 1 << 14  # characters of a row's error, detail, note (a runtime may say megabytes)
MAX_ROW_EVIDENCE = 1 << 20  # characters of a row's encoded output; a larger one is left out (cases.jsonl
# and the case rerun show it)
MAX_ROWS_EVIDENCE = 1 << 29  # the bytes of every row's output decoded, when a run is read back (rederive_rows)


# the keys every result row has, checked when a run directory is read
RESULT_KEYS = ("runtime", "placement", "spec", "mode", "dtype", "shape", "pads", "verdict", "case_id", "origin")
_KEY_TYPES = {"shape": list, "pads": list, "data": dict, "failure": list}  # of a required key; the others are text
# keys a row may lack or hold null, and else must hold this type: the report reads them as such
_OPTIONAL_TYPES = {"kind": str, "reason": str, "rule": str, "error": str, "detail": str, "difference": str,
                   "note": str, "matched": list, "output": dict, "tags": list, "elided": dict}
# the lists among them that hold text only (a control's failure: its distinct_failure)
_TEXT_LISTS = ("matched", "tags", "failure")
# what a message calls a Python value read from JSON: the file's words, not Python's
_JSON_NAMES = {dict: "an object", list: "an array", str: "text", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}
_VOCABULARIES = {"verdict": Verdict, "placement": Placement}  # a row's words, held to their vocabulary


# keys a row holds in memory only (attached on reading, or minimize's): a file's row holding one is refused
NOT_WRITTEN = ("control", "experiments")


@functools.cache
def strict_record(declared: type) -> type[msgspec.Struct]:
    """The strict record (msgspec, chosen by benchmarks/bench_records.py) of the rows the
    TypedDict ``declared`` describes, derived from it: its keys, their types and bounds are
    declared there, once. Every key a file's row may hold (NOT_WRITTEN left out) with its
    declared type; those RESULT_KEYS names (or the TypedDict requires, for other rows) required,
    the others optional or null; any other key refused."""
    hints = typing.get_type_hints(declared, include_extras=True)
    required = set(RESULT_KEYS) if declared is ResultRow else set(declared.__required_keys__)  # type: ignore[attr-defined]
    fields: list = []
    for name, kind in hints.items():
        if name in NOT_WRITTEN:
            continue
        fields.append((name, kind) if name in required else (name, kind | None, None))
    fields.sort(key=lambda f: len(f) == 3)  # required first, as a Struct's fields must be
    return msgspec.defstruct(f"{declared.__name__}Record", fields, forbid_unknown_fields=True)


def strict_row(row: dict[str, Any], declared: type, where: str) -> None:
    """``row`` (check_row's) held to ``declared``'s strict record: a CaseError naming ``where`` otherwise."""
    try:
        msgspec.convert(row, strict_record(declared), strict=True)
    except msgspec.ValidationError as exc:
        raise CaseError(f"{where}: {exc}") from None


def strict_result_row(row: dict[str, Any], where: str) -> None:
    """``row`` held to ResultRow's strict record."""
    strict_row(row, ResultRow, where)


def check_row(row: Any, where: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """``row``, a JSON value read from a file at ``where`` (``path:line``), held to the row types
    above: an object with every ``required`` key, each key of a declared type of the type it
    declares, and a verdict or placement that is one of its vocabulary's words (converted to it).
    Anything else is a CaseError naming ``where``."""
    if not isinstance(row, dict):
        raise CaseError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [k for k in required if k not in row]
    if missing:
        raise CaseError(f"{where}: row lacks {', '.join(missing)}")
    expected = ([(k, _KEY_TYPES.get(k, str), "") for k in required]
                + [(k, kind, " or null") for k, kind in _OPTIONAL_TYPES.items() if row.get(k) is not None])
    mistyped = [(k, kind, or_null) for k, kind, or_null in expected if not isinstance(row[k], kind)]
    if mistyped:
        key, kind, or_null = mistyped[0]
        raise CaseError(f"{where}: {key!r} is {_JSON_NAMES[type(row[key])]}, not {_JSON_NAMES[kind]}{or_null}")
    for key in _TEXT_LISTS:
        if not all(isinstance(item, str) for item in row.get(key) or ()):
            raise CaseError(f"{where}: {key!r} holds something other than text")
    if "mode" in required:
        check_mode(row["mode"], row.get("kind"), where)
    for key, words in _VOCABULARIES.items():
        if key in required:
            try:
                row[key] = words(row[key])
            except ValueError:
                raise CaseError(f"{where}: {key} {row[key]!r} is not one of {', '.join(words)}") from None
    return row


# verdicts about an output: a row holding one records the output it is about (_evidence)
OUTPUT_VERDICTS = (Verdict.MISMATCH, Verdict.WRONGLY_ACCEPTED, Verdict.UNEXPLAINED)


def rederive_rows(rows: list[ResultRow], cases: dict[str, dict], where: str) -> None:
    """Hold every row whose verdict can be derived again to the verdict derived again: a row
    about an output (a mismatch, a wrong acceptance, an unexplained answer), or any row holding
    one, is judged afresh (verdicts.judge) on the output it records against padconf's reference
    of its case (cases.jsonl, ``cases``); a row claiming such a verdict without its output (and
    neither recording a refusal, as an unexplained rejection does, nor saying it left the output
    out, ``elided``), or whose verdict the output does not give, is a
    CaseError naming ``where``. A pass or a matched ambiguity records no output but its digest
    (``output_digest``), held to the digest of the reading it claims (``_check_conforming``). A
    verdict on no output at all (a crash, a timeout, a refusal) cannot be derived again here:
    minimize reruns such a case, and the gate reruns every change against its baseline before it
    concludes (gate.confirm)."""
    budget = ArrayBudget(MAX_ROWS_EVIDENCE, f"{where}'s recorded outputs")
    readings: dict[tuple[str, str | None], str | None] = {}  # (case id, reading) -> its output's digest
    for number, row in enumerate(rows, 1):
        doc = cases.get(row["case_id"])
        if doc is None:
            continue  # rundir.check_rows_of_cases says so
        at = f"{where}: row {number}"
        _check_case_fields(row, doc, at)
        recorded = row.get("output")
        if recorded is None:
            if (row["verdict"] in OUTPUT_VERDICTS and row.get("error") is None
                    and "output" not in (row.get("elided") or {})):
                raise CaseError(f"{at}: verdict {row['verdict']} records no output to derive it from")
            if row["verdict"] == Verdict.INCONCLUSIVE and not _inconclusive_grounds(row, doc):
                raise CaseError(f"{at}: inconclusive on no grounds a {doc.get('kind')} case can have "
                                "(padconf's own fault, a case too large to check, a refusal its twin cannot confirm)")
            _check_conforming(row, doc, at, readings)
            continue
        case = Case.from_json(doc)
        try:
            output = decode_array(recorded, budget)
        except (CaseError, KeyError, TypeError, ValueError) as exc:
            raise CaseError(f"{at}: its output: {str(exc)[:200]}") from None
        ruling = judge(case, Outcome(output=output), Status.OK)
        if ruling.verdict != row["verdict"]:
            raise CaseError(f"{at}: verdict {row['verdict']}, but the output it records is "
                            f"{ruling.verdict} against padconf's reference of case {row['case_id']!r}")
        if "output_digest" in row and row["output_digest"] != array_digest(judged_output(case, output, ruling)):
            raise CaseError(f"{at}: its output_digest is not the digest of the output it records")


def _check_conforming(row: ResultRow, doc: dict, where: str, readings: dict) -> None:
    """A conforming verdict on no recorded output (a pass, a matched ambiguity) derived again
    from the digest of the output it was given on (``output_digest``): it must be the digest of
    the reading the verdict says the output equals (the case's expected output, the matched
    reading's), and a verdict only a case of another kind gets is refused. A failure relabelled
    a pass (a crash, a refusal: no output) so has no digest to show; one whose digest was
    forged too holds only until its case is run again (the gate's reruns, minimize)."""
    verdict, kind = row["verdict"], doc.get("kind", CaseKind.DEFINED)
    if verdict not in (Verdict.PASS, Verdict.AMBIGUOUS):
        return
    if verdict == Verdict.PASS and kind == CaseKind.MUST_REJECT:
        if row.get("output_digest") is not None:  # a must-reject case passes by a refusal: no output
            raise CaseError(f"{where}: verdict pass of a must-reject case, which passes only refused, "
                            "records an output")
        return
    if (kind, verdict) not in ((CaseKind.DEFINED, Verdict.PASS), (CaseKind.AMBIGUOUS, Verdict.AMBIGUOUS)):
        raise CaseError(f"{where}: verdict {verdict}, which padconf gives no {kind} case")
    matched = row.get("matched") or []
    if verdict == Verdict.AMBIGUOUS and not matched:
        if not doc.get("any_answer_conforms"):  # no reading matched: an unexplained answer
            raise CaseError(f"{where}: verdict ambiguous matching no reading, of a case whose document leaves "
                            "no behaviour undefined")
        return
    name = matched[0] if verdict == Verdict.AMBIGUOUS else None
    key = (row["case_id"], name)
    if key not in readings:
        case = Case.from_json(doc)
        if name is not None and any(m not in case.interpretations for m in matched):
            raise CaseError(f"{where}: matched {reprlib.repr(matched)}: not its case's readings")
        reading = case.expected if name is None else case.interpretations[name]
        readings[key] = None if reading is None else array_digest(reading)
    if "output_digest" not in row:
        raise CaseError(f"{where}: verdict {verdict} records no output_digest to derive it from (written by a "
                        "padconf 0.1.0 from before output digests: run it again)")
    if row["output_digest"] is None and readings[key] is not None:
        raise CaseError(f"{where}: verdict {verdict} on no output (its output_digest is null): the runtime returned "
                        "nothing to pass on")
    if row["output_digest"] != readings[key]:
        said = "the case's expected output" if name is None else f"reading {name}'s output"
        raise CaseError(f"{where}: verdict {verdict}, but the output it was given on (its output_digest) is not "
                        f"{said}")


def rederive_control(control: ControlRow, first: ResultRow, doc: dict | None, where: str) -> bool:
    """Hold a control read from controls.jsonl to what can be derived of it again: it is the
    control of its failure's first failing row (``first``: its case, from cases.jsonl, ``doc``),
    one of the experiments that case's controls are in that row's placement (Case.controls);
    its ``fails_too`` is the one control_record gives for its verdict, its op and its failure's
    verdict; a verdict about an output is judged again on the output it records; a verdict on no
    output (a crash, a refusal) says why in its error. Anything else is a CaseError naming
    ``where``. False for a control about an output that records none (too large to keep): it
    cannot be derived again, and is not attached (its failure stays untriaged)."""
    if control["case_id"] != first["case_id"]:
        raise CaseError(f"{where}: a control of case {reprlib.repr(control['case_id'])}, not of its failure's first "
                        f"case {first['case_id']!r}")
    if doc is None:
        raise CaseError(f"{where}: its case {first['case_id']!r} is not in cases.jsonl")
    case = Case.from_json(doc)
    experiments = {(operand, str(placed)): ctl for operand, ctl, placed in case.controls(first["placement"])}
    ctl = experiments.get((control.get("operand", "data"), str(control["placement"])))
    if ctl is None:
        raise CaseError(f"{where}: operand {reprlib.repr(control.get('operand'))} in "
                        f"{reprlib.repr(control['placement'])} is none of case {case.id!r}'s controls")
    verdict = control["verdict"]
    fails_too = control_fails_too(ctl.op, control.get("operand", "data"), verdict, first["verdict"])
    if control["fails_too"] != fails_too:
        raise CaseError(f"{where}: fails_too {control['fails_too']} with verdict {verdict} of a {ctl.op} control "
                        f"of a {first['verdict']} failure")
    if verdict in CONTROL_OUTPUT_VERDICTS:
        recorded = control.get("output")
        if recorded is None:
            return False
        try:
            output = decode_array(recorded, ArrayBudget(MAX_ROW_EVIDENCE, f"{where}'s output"))
        except (CaseError, KeyError, TypeError, ValueError) as exc:
            raise CaseError(f"{where}: its output: {str(exc)[:200]}") from None
        derived = judge(ctl, Outcome(output=output), Status.OK).verdict
        if derived != verdict:
            raise CaseError(f"{where}: verdict {verdict}, but the output it records is {derived} through its "
                            f"{ctl.op} control")
    elif control.get("output") is not None:
        raise CaseError(f"{where}: verdict {verdict} records an output, which no such verdict is about")
    elif verdict in FAILURES and not control.get("error"):
        raise CaseError(f"{where}: verdict {verdict} on no output says no error")
    return True


def _check_case_fields(row: ResultRow, doc: dict, where: str) -> None:
    """A row's copy of its case (what result_row writes of it) must be its case's, as
    cases.jsonl holds it: a row relabelled with another dtype, mode or kind showed a failure
    under another cell, or none."""
    data: dict = doc["data"] if isinstance(doc.get("data"), dict) else {}
    given = {"spec": doc.get("spec"), "mode": doc.get("mode"), "dtype": data.get("dtype"),
             "shape": list(data.get("shape") or [])[:MAX_ROW_LIST], "pads": list(doc.get("pads") or [])[:MAX_ROW_LIST],
             "kind": doc.get("kind", CaseKind.DEFINED), "rule": doc.get("rule"),
             "origin": doc.get("origin", "generated")}
    differ = next((k for k, v in given.items() if row.get(k) != v), None)
    if differ is not None:
        raise CaseError(f"{where}: its {differ} {reprlib.repr(row.get(differ))} is not its case's "
                        f"({reprlib.repr(given[differ])}, cases.jsonl)")


def _inconclusive_grounds(row: ResultRow, doc: dict) -> bool:
    """Whether an inconclusive row states a ground verdicts.judge gives one on."""
    detail = row.get("detail") or row.get("error") or ""
    return (detail.startswith(OWN_FAULT) or doc.get("kind") == CaseKind.TOO_LARGE
            or (doc.get("kind") == CaseKind.MUST_REJECT and detail.startswith("refused")))


def judged_output(case: Case, output: Any, ruling: Ruling) -> np.ndarray:
    """``output`` as ``ruling`` compared it: a context's tolerance snaps an output within it to
    the reading's (context.snap), so that a pass's is its case's expected output bit for bit,
    and a matched ambiguity's the first reading's it matched; any other output as it came."""
    output = np.asarray(output)
    reading = (case.expected if ruling.verdict == Verdict.PASS
               else case.interpretations.get(ruling.matched[0]) if ruling.verdict == Verdict.AMBIGUOUS
               and ruling.matched else None)
    return output if reading is None else snap(case.context, reading, output)


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


def result_row(runtime: str, placement: Placement, case: Case, outcome: Outcome, ruling: Ruling,
               placed: tuple[str, int] | None = None, target: str | None = None) -> ResultRow:
    """The row of ``case`` run on ``runtime`` in ``placement``: what it was, what the runtime
    did (``outcome``) and the verdict on it (``ruling``: padconf.judging.verdicts.judge's, or
    confirm_refusal's). ``placed``: the worker process that answered and how many cases it ran
    before (Worker.placed). ``target``: a compiler's target (llvm-cpu, cuda ...), kept in the
    rows of runtimes that have one."""
    where = ({"target": target} if target else {}) | ({"graph": case.graph} if case.graph else {})
    return bounded_row(cast(ResultRow, where | {
        "runtime": runtime, "placement": placement, "spec": case.spec, "mode": case.mode,
        "dtype": case.dtype, "shape": list(case.data.shape), "pads": list(case.pads), "axes": case.axes,
        "constant_value": None if case.constant_value is None or not case.constant_value.size
        else scalar_text(case.constant_value.reshape(-1)[0]),
        # detail only where it says more than the error text (a refusal's detail is that text)
        "kind": case.kind, "reason": case.reason, "rule": case.rule, "verdict": ruling.verdict,
        "detail": None if ruling.detail == outcome.error else ruling.detail,
        "matched": ruling.matched, "difference": ruling.difference, "error": outcome.error, "note": outcome.note,
        "printed": outcome.printed,
        "seconds": outcome.seconds, "output": _evidence(ruling, outcome),
        "output_digest": None if outcome.output is None else array_digest(judged_output(case, outcome.output,
                                                                                         ruling)),
        "case_id": case.id, "origin": case.origin,  # edge-class tags: cases.jsonl, by case_id
        "process": placed and placed[0], "position": placed and placed[1],
    }))


def bounded_row(row: ResultRow, text: int = MAX_ROW_TEXT, evidence: int = MAX_ROW_EVIDENCE) -> ResultRow:
    """``row`` within MAX_ROW_LIST, ``text`` characters of each text and ``evidence`` of its
    encoded output, what it cut counted in ``elided`` (as the case had it: a row cut twice keeps
    the first count)."""
    doc = cast(dict[str, Any], row)
    elided: dict[str, int] = dict(doc.get("elided") or {})
    for key in ("shape", "pads", "axes"):
        values = doc.get(key)
        if values is not None and len(values) > MAX_ROW_LIST:
            elided[key] = len(values)
            doc[key] = list(values[:MAX_ROW_LIST])
    for key in ("error", "detail", "note"):
        value = doc.get(key)
        if isinstance(value, str) and len(value) > text:
            elided.setdefault(key, len(value))
            doc[key] = value[:text]
    if doc.get("output") is not None and len(json.dumps(doc["output"])) > evidence:
        elided["output"] = 1
        doc["output"] = None
    if elided:
        doc["elided"] = elided
    return row


def scalar_text(value) -> str:
    """A scalar as a reader writes it: ``nan``, ``-0.0``, ``(1+2j)``, ``'a'`` (numpy's repr wrote
    ``np.float64(nan)`` into rows, and so into every report)."""
    if isinstance(value, (str, bytes)):  # numpy's str_ and bytes_ too, whose repr names them
        return repr(str(value) if isinstance(value, str) else bytes(value))
    return str(value)


def shown_list(row, key: str) -> str:
    """A row's list (shape, pads, axes) as text, saying where it holds only the first entries."""
    values = row.get(key)
    total = (row.get("elided") or {}).get(key)
    if values is None or not isinstance(total, int):
        return str(values)
    return f"{str(list(values))[:-1]}, ... ({total} in all: cases.jsonl holds them)]"


def judged_row(runtime: str, placement: Placement, case: Case, outcome: Outcome, status: str,
               placed: tuple[str, int] | None = None, twin=None, target: str | None = None) -> ResultRow:
    """``result_row`` with the verdict judged here: ``outcome`` and the worker's ``status`` on
    ``case`` (verdicts.judge); for a must-reject case the runtime refused, ``twin`` is (its
    repaired twin or why there is none, the twin's outcome, status) in the same runtime and
    placement (verdicts.confirm_refusal)."""
    ruling = judge(case, outcome, status)
    if twin is not None:
        ruling = confirm_refusal(ruling, *twin)
    return result_row(runtime, placement, case, outcome, ruling, placed, target)


def row_key(row: ResultRow | dict) -> tuple[str, str, str]:
    """What a run computes once: (runtime, placement, case id)."""
    return row["runtime"], row["placement"], row["case_id"]


class Rows(list["ResultRow"]):
    """Result rows as read, each (runtime, placement, case id) once; ``duplicates`` counts the
    rows read again and left out (a folder two processes wrote at once, before the run lock)."""
    duplicates = 0


@dataclass
class RunData:
    """A run directory as read back (padconf.run.rundir.load_run), which reports render."""
    dir: Path
    rows: list[ResultRow]  # results.jsonl, each failing row with its control
    cases: dict[str, dict]  # cases.jsonl by case id, still JSON (decoded only where shown)
    specs_dir: str | None  # run.json's: where the run's spec files are
    unfinished: str | None = None  # why the rows are not the whole run (rundir.unfinished)
    unsigned: str | None = None  # why its rows are not known to be padconf's (run.signature)

    @property
    def cases_rows(self) -> list[dict]:
        return list(self.cases.values())
