"""A bundle's label as the conclusion of recorded experiments (``evidence.json``), never of text.

A minimized Pad bug is a "bug to file" only when every check its label needs has passed:

- (a) ``repro``: the repro in the runtime's own API (``repro_<runtime>.py``, else the generic
  checker) exits 1, run as a maintainer runs it, in a child process; a crash in 3 of 3 runs;
- (b) ``defined``: the document defines the input, or the failure is a crash, a hang or
  memory-unsafe (an output that changes from run to run, or holds values the input never held);
- (c) ``control``: controls that compute on the same values pass (the values through
  data-movement ops, a context's consumer alone on the padded data), the data's as well;
- (d) ``coverage``: for a refusal, coverage is ruled out by experiment: the same case with every
  operand constant is refused too, or the documented default written out is answered;
- (e) ``unique``: no known upstream issue covers it, nor does the operation the runtime lowers
  Pad to (or onnx's schema) fail alike, nor is it a variant of another bundle's mechanism;
- (f) ``valid``: the minimal case is valid, unless the failure is a crash, a hang or memory-unsafe.

Anything short of that is "needs a look", naming the missing checks. A failure that is no Pad
bug keeps its triage word (not-pad-specific, other-component, not-a-bug), its checks recorded too.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

from padconf.adapters import split_release
from padconf.cases.case import CaseKind
from padconf.core.dtypes import as_array, bit_equal
from padconf.core.vocabulary import Placement
from padconf.execution.worker_process import isolated, start_process
from padconf.judging.triage import PAD_BUGS, Triage, UpstreamFact, triage
from padconf.judging.verdicts import FAILURES, Verdict, control_fails, control_fails_too, control_ran, judge
from padconf.minimize.probes.experiments import CRASH_TRIES, reads_across_slices
from padconf.minimize.probes.inference import controls_seen
from padconf.minimize.shrink.loop import IsolatedRunner, Shrunk

CHECKS = {"a": "repro", "b": "defined", "c": "control", "d": "coverage", "e": "unique", "f": "valid"}
WHAT = {"a": "the repro in the runtime's own API exits 1", "b": "the input is defined, or the failure is unsafe",
        "c": "a control computing on the same values passes", "d": "coverage ruled out by experiment",
        "e": "not a duplicate nor known upstream", "f": "the minimal case is valid"}
BUG, NEEDS_A_LOOK, KNOWN = "bug to file", "needs a look", "known-upstream"
# a bundle's folder word, by its label (the triage word; a Pad bug short of a check needs a look)
FOLDER_WORDS = {BUG: "bug", NEEDS_A_LOOK: "needs-a-look", "other-component": "other-component",
                KNOWN: "known-upstream", "not-pad-specific": "not-pad-specific", "not-a-bug": "not-a-bug"}
LABELS = tuple(FOLDER_WORDS)  # most evidence first: a merged bundle's root, and the index's order
REPRO_TIMEOUT_S = 300  # a compiler's repro compiles its model; a hang's waits for its child (60 s)
_UNSAFE = (Verdict.CRASH, Verdict.TIMEOUT)
# Case.controls' operands whose control computes on the data's values: one of them must pass; the
# pads' and axes' own values (Case.index_controls) must not fail, but say nothing of the data's
COMPUTING = ("values", "attribute", "consumer")


def _check(needed: bool, passed: bool | None, how: str, **found) -> dict:
    return {"needed": needed, "passed": passed, "how": how, **found}


def run_repro(where: Path, script: str, tries: int) -> list[int | str]:
    """``script``'s exit statuses, each run in a fresh process in the bundle's folder ("timeout":
    it gave no answer within REPRO_TIMEOUT_S)."""
    codes: list[int | str] = []
    for _ in range(tries):
        # under padconf's reaper, in a session of its own: nothing the repro starts (iree-compile,
        # its own child) outlives it, its time limit, or padconf, on every way out
        proc = start_process([*isolated("padconf.execution.reaper"), sys.executable, "-I", script], cwd=where,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            codes.append(proc.wait(timeout=REPRO_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            codes.append("timeout")
        finally:
            end_repro(proc)
    return codes


def end_repro(proc: subprocess.Popen) -> None:
    """The repro's reaper, asked to end its tree (SIGTERM: it kills every descendant), then its
    whole session killed, whatever is left of it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def repro_check(where: Path, runtime: str, api: str | None, verdict: str) -> dict:
    """(a): the runtime's own repro (``api``, its file name) or else the generic checker, run
    as a maintainer runs it; a crash 3 times."""
    script = api or ("repro.py" if (where / "repro.py").exists() else None)
    if script is None:
        return _check(True, False, "no repro script in the bundle")
    if split_release(runtime)[1]:
        return _check(True, None, f"{script} not run here: {runtime} runs in an environment of its own", script=script)
    codes = run_repro(where, script, CRASH_TRIES if verdict == Verdict.CRASH else 1)
    return _check(True, all(c == 1 for c in codes), f"python {script}, in a child process", script=script,
                  exit_codes=codes)


def memory_unsafe(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement) -> dict | None:
    """Where the minimal case's output holds values its input never held, or changes when the
    case runs again in a fresh process: what showed it, and whether it changes (``varies``: the
    mark of memory never written, which a deterministic wrong value lacks, unless its values come
    from nowhere and no conversion explains them). Else None."""
    final = shrunk.final
    output = final.outcome.output
    if output is None:
        return None
    again = isolated.attempt_if_it_can(final.case, placement, fresh=True)
    varies = again is not None and again.outcome.output is not None and not (
        again.outcome.output.shape == output.shape and again.outcome.output.dtype == output.dtype
        and bit_equal(again.outcome.output, output))
    if final.nonzero_from_nowhere:
        return {"how": "the output holds nonzero values that neither the input nor any reading's output holds",
                "varies": varies or final.unwritten}
    across = reads_across_slices(isolated, final, placement)
    if across is not None:
        return {"how": across, "varies": varies}
    if varies:
        return {"how": "the output changes from run to run (run again in a fresh process)", "varies": True}
    return None


def computing_controls(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement) -> dict:
    """(c): every control of the minimal case (Case.controls) run alone, and where the runtime's
    shape inference gives its Pad's output no rank, its consumer on a tensor of no rank
    (Case.unranked_consumer_control); passed where those that compute on the values (not the
    data's Identity alone) ran and none failed as the Pad did (verdicts.control_fails_too: a
    control through other ops that fails otherwise shows that op's flaw, not the Pad's: TVM
    refuses an int64 Constant feeding Concat, "ShapeExpr", beside a Pad that read past its input)."""
    ran = []
    verdict = shrunk.final.row["verdict"]
    for operand, control, where in controls_seen(shrunk.final.case, isolated.runtime, placement):
        outcome, status = isolated.run_alone(control, where)  # once a bundle and its variant experiments
        ruling = judge(control, outcome, status)
        # a control the runtime refuses as unsupported, or cannot be given, did not run: no control
        ran.append({"operand": operand, "op": control.op, "placement": where, "verdict": ruling.verdict,
                    "ran": control_ran(ruling.verdict),
                    "fails": control_fails_too(control.op, operand, ruling.verdict, verdict),
                    "error": outcome.error})
    computing = [r for r in ran if r["operand"] in COMPUTING and r["verdict"] == Verdict.PASS]
    failing = [r for r in ran if r["fails"]]
    if failing:
        how = "a control fails too: " + ", ".join(f"{r['operand']} ({r['op']}: {r['verdict']})" for r in failing)
    elif not computing:
        tried = [r for r in ran if r["operand"] in COMPUTING]
        how = ("needs a look: no control ran (" + ", ".join(f"{r['operand']} ({r['op']}: {r['verdict']})"
                                                           for r in tried) + ")"
               if tried and not any(r["ran"] for r in tried) else
               "no control computing on the values passed: " + ", ".join(
                   f"{r['operand']} ({r['op']}: {r['verdict']})" for r in tried)
               if tried else
               "no control computing on the values could be built for this case (its data's Identity only)")
    else:
        how = "passed: " + ", ".join(f"{r['operand']} through {r['op']}" for r in ran if r["verdict"] == Verdict.PASS)
        otherwise = [r for r in ran if control_fails(str(r["verdict"])) and not r["fails"]]
        if otherwise:
            how += "; failing otherwise than the Pad, which says nothing of it: " + ", ".join(
                f"{r['operand']} ({r['op']}: {r['verdict']})" for r in otherwise)
    return _check(True, bool(computing) and not failing, how, controls=ran)


def coverage_check(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement) -> dict:
    """(d), for a refusal: the same case with every operand constant (folded) refused too, or the
    documented default written out answered (experiments.explicit_default). Not needed otherwise."""
    row = shrunk.final.row
    if row["verdict"] != Verdict.WRONGLY_REJECTED:
        return _check(False, None, "not a refusal: coverage does not come into it")
    if (row.get("experiments") or {}).get("explicit_default"):
        return _check(True, True, "the documented default written out is answered: the default is what it refuses")
    # whatever the placement shows, the runtime must take the dtype and mode at all: a plain case
    # of them (plain_twin) refused too, with whatever text, is coverage (IREE lowers no complex Pad)
    plain = isolated.attempt_if_it_can(plain_twin(shrunk.final.case), placement)
    if plain is None or plain.row["verdict"] != Verdict.PASS:
        return _check(True, False, f"a plain case of the same dtype, mode and operands is "
                                   f"{plain.row['verdict'] if plain else 'not built'} too: the runtime lacks "
                                   f"{shrunk.final.case.dtype} {shrunk.final.case.mode} Pads here (coverage)",
                      plain=plain.row["verdict"] if plain else None)
    if placement == Placement.FOLDED:
        return _check(True, True, "refused with every operand constant already (folded); a plain case of the same "
                                  "dtype and mode is answered right", plain=plain.row["verdict"])
    folded = isolated.attempt_if_it_can(shrunk.final.case, Placement.FOLDED)
    if folded is None:
        return _check(True, None, "the case cannot be built with every operand constant")
    if folded.row["verdict"] in (Verdict.WRONGLY_REJECTED, Verdict.NOT_IMPLEMENTED):
        return _check(True, True, "refused with every operand constant too (folded); a plain case of the same dtype "
                                  "and mode is answered right", folded=folded.row["verdict"],
                      plain=plain.row["verdict"])
    # answered folded: the runtime takes these operands so placed (the plain case passed)
    where = "fed at run time" if placement == Placement.INPUTS else "as initializers"
    return _check(True, True, f"answered with every operand constant ({folded.row['verdict']}), and a plain case "
                              f"with the same operands {where} is answered right: the refusal is this input's",
                  folded=folded.row["verdict"], plain=plain.row["verdict"])


def plain_twin(case):
    """The simplest case with ``case``'s operands: three small values of its dtype (float where
    the dtype has none), one pad at the start, its constant value (zero) and axes ([0]) where it
    has them, the same spec and mode."""
    try:
        data = as_array(np.array([1, 2, 3]), case.dtype)
    except (TypeError, ValueError, OverflowError):
        data = np.array([1, 2, 3], np.float32)
    value = None if case.constant_value is None else np.zeros((), data.dtype)
    return case.with_(data=data, pads=[1, 0], constant_value=value, axes=None if case.axes is None else [0],
                      context=None)


def how_it_shows(shrunk: Shrunk) -> tuple[str, bool | None]:
    """What a bundle's experiment shows of its minimal case: whether the runtime dies (a crash,
    a hang) or answers (an output or a refusal), and for an answer whether the input is valid (a
    crash is a bug on any input: OpenVINO's heap corruption on a crop beyond the dimension, which
    Pad-12 forbids and Pad-1 leaves undefined, is one). A variant merged into a bundle must show
    alike: a silent wrong value is no variant of a crash, nor a refusal of a valid input one of a
    wrong value on an invalid one (a refusal with constant pads and a wrong value with fed ones,
    both on valid rank-0 data, are one check's two faces). An output of memory the runtime never
    wrote, other bits run to run (Shrunk.memory_unsafe), shows memory corruption as a crash does:
    OpenVINO's crop past the axis beside a pad crashed in one bundle and answered uninitialised
    values in another (audit IV)."""
    if shrunk.corrupts_memory:
        return "corrupts memory", None
    if shrunk.final.row["verdict"] in _UNSAFE:
        return "dies", None
    return "answers", shrunk.final.case.kind != CaseKind.MUST_REJECT


def fails_again(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement) -> bool:
    """The repro's experiment on the minimal case: run again in a fresh process, it fails as it
    showed (answers wrong where it answered; dies where it died, in one of CRASH_TRIES runs: a
    corrupted heap does not kill every process, and check (a) holds the label to 3 of 3, not the
    mechanism). A hang is not waited for again (its timeout was the experiment)."""
    verdict = shrunk.final.row["verdict"]
    if verdict == Verdict.TIMEOUT:
        return True
    for _ in range(CRASH_TRIES if verdict == Verdict.CRASH else 1):
        again = isolated.attempt_if_it_can(shrunk.final.case, placement, fresh=True)
        if again is not None and again.row["verdict"] in FAILURES \
                and (again.row["verdict"] in _UNSAFE) == (verdict in _UNSAFE):
            return True
    return False


def mechanism(shows: tuple[str, bool | None], control_fails: bool, repro_fails: bool) -> tuple:
    """What a bundle's experiment (repro and controls) concludes of its minimal case: how it shows,
    whether a control computing on the same values fails too (a control op lacking a kernel for
    the dtype fails nothing: it shows no other mechanism), whether it fails again when rerun.
    Two minimized failures are one bundle only where their mechanisms are equal."""
    return (*shows, bool(control_fails), bool(repro_fails))


def a_control_fails(control: dict) -> bool:
    """Whether a control of computing_controls' record failed (not merely none ran)."""
    return any(r["fails"] for r in control.get("controls") or ())


def variant_experiment(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement) -> dict:
    """The bundle's own experiment rerun on a variant's minimal case: the repro (fails_again) and
    the controls computing on its values (computing_controls). Its ``mechanism`` must equal the
    bundle's (the same experiment on the bundle's minimal case) for the variant to be listed under it."""
    control = computing_controls(isolated, shrunk, placement) if shrunk.final.row["verdict"] != Verdict.TIMEOUT \
        else _check(True, None, "a hang: no control run")
    again = fails_again(isolated, shrunk, placement)
    return {"case_id": shrunk.final.case.id, "placement": placement, "verdict": shrunk.final.row["verdict"],
            "fails_again": again, "control": control["how"],
            "mechanism": list(mechanism(how_it_shows(shrunk), a_control_fails(control), again))}


def evidence(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement, where: Path, found: Triage | None,
             api: str | None, duplicate_of: str | None = None) -> dict:
    """evidence.json of the bundle in ``where``: each check (a)-(f), and the label they conclude."""
    final, runtime = shrunk.final, isolated.runtime
    verdict = final.row["verdict"]
    unsafe = memory_unsafe(isolated, shrunk, placement) if verdict in FAILURES and verdict not in _UNSAFE else None
    shrunk.memory_unsafe = unsafe["how"] if unsafe and unsafe["varies"] else None  # for how_it_shows
    forgiven = verdict in _UNSAFE or unsafe is not None  # a crash, hang or unsafe output on any input
    kind = final.case.kind
    checks = {"a": repro_check(where, runtime, api, verdict),
              "b": _check(True, kind == CaseKind.DEFINED or forgiven,
                          "the document defines the input" if kind == CaseKind.DEFINED else
                          (f"{verdict} on an input the document leaves {kind}" if forgiven and not unsafe else
                           f"memory-unsafe: {unsafe['how']}" if unsafe else
                           f"the input is {kind} ({final.case.reason}) and the failure is no crash, hang or "
                           "unsafe output")),
              "c": computing_controls(isolated, shrunk, placement),
              "d": coverage_check(isolated, shrunk, placement),
              "e": _unique(shrunk, found, duplicate_of),
              "f": _check(True, kind != CaseKind.MUST_REJECT or forgiven,
                          "valid" if kind != CaseKind.MUST_REJECT else
                          f"invalid ({final.case.reason})" + ("; a crash, hang or unsafe output" if forgiven else ""))}
    missing = [k for k, c in checks.items() if c["needed"] and not c["passed"]]
    if shrunk.native or found == Triage.OTHER_COMPONENT:
        label = "other-component"
    elif found in PAD_BUGS:
        label = NEEDS_A_LOOK if missing else BUG
    elif found == Triage.NOT_PAD_SPECIFIC and not a_control_fails(checks["c"]):
        # the control that made it not Pad-specific passed when rerun for (c): the label rests on nothing
        label = NEEDS_A_LOOK
        checks["c"] = {**checks["c"], "passed": False,
                       "how": "the control the triage rests on failed once, but no control fails when rerun: "
                              + checks["c"]["how"]}
        missing = sorted({*missing, "c"})
    elif found == Triage.NOT_PAD_SPECIFIC:
        label = "not-pad-specific"
    elif found == Triage.KNOWN_UPSTREAM:  # an issue upstream knows, matched by the case's features
        label = KNOWN
    else:
        label = "not-a-bug"
    why = (f"{found.label}: a Pad bug to file only when each check passed" if found in PAD_BUGS else
           f"{Triage.NOT_PAD_SPECIFIC.label}, by a control that passed when rerun: needs a look"
           if label == NEEDS_A_LOOK else
           f"{found.label if found else 'no failure'}: not a Pad bug to file, whatever the checks"
           + (" (coverage: the runtime lacks this kernel or operand placement)" if found == Triage.NOT_IMPLEMENTED
              else ""))
    if shrunk.native:
        why = f"{shrunk.native['spec']} fails alike: another component's bug, to file there"
    known = _known_issue(final) if label == KNOWN else None
    if known is not None:
        why = f"known upstream: {known.link} ({known.why})"
    return {"label": label, **({"known_issue": known.link} if known is not None else {}),
            "why": why, "triage": found.value if found else None, "missing": missing,
            "missing_text": [f"({k}) {WHAT[k]}: {checks[k]['how']}" for k in missing],
            "checks": {k: {"name": CHECKS[k], "what": WHAT[k], **c} for k, c in checks.items()}}


def _known_issue(final) -> UpstreamFact | None:
    """The upstream fact that covers the minimal case (its row's fields and the case's features,
    the control as the triage read it), where that fact is a known issue."""
    found, fact = triage({**final.row, "control": final.control})
    return fact if found == Triage.KNOWN_UPSTREAM else None


def _unique(shrunk: Shrunk, found: Triage | None, duplicate_of: str | None) -> dict:
    if found == Triage.KNOWN_UPSTREAM:
        known = _known_issue(shrunk.final)
        return _check(True, False, f"a known upstream issue covers it: {known.link if known else 'upstream.yaml'}")
    if shrunk.native:
        return _check(True, False, f"{shrunk.native['spec']} on {shrunk.native['runtime']} fails alike: its bug")
    if duplicate_of:
        return _check(True, False, f"the same mechanism as {duplicate_of}")
    return _check(True, True, "no upstream fact, lowered operation or other bundle of the run explains it")


def checks_text(doc: dict) -> str:
    """The checks in one INDEX.md cell: a✓ passed, a✗ failed or not run, a· not needed."""
    marks = []
    for k, c in doc["checks"].items():
        marks.append(k + ("·" if not c["needed"] else "✓" if c["passed"] else "✗"))
    return " ".join(marks)
