"""`padconf minimize`: shrink a failing case to its smallest form while the same failure
persists, and write a bundle ready to file upstream (padconf.minimize.bundle.writer writes it).

"The same failure": the same verdict and failure class (padconf.judging.failure.failure_class: the
error text with its numbers masked, or for a mismatch the kind of difference), the reference
still classifies the case alike (its kind, and the rule or ambiguity with numbers masked), and
the same distinct failure of the run (padconf.judging.failure.failure_signature: with its triage class,
which the candidate's own control decides), never another one of the run's: a runtime with two
bugs (OpenVINO garbles rank-0 data, through Pad and Identity alike) must not have one bug's case
shrink into the other's.
Shrinking is a small deterministic greedy pass in the manner of delta debugging: every
simplification below is tried in turn and kept when the failure persists, round after round
until none helps or the time limit is reached. Each attempt runs alone in a fresh worker process
(Worker.run_alone), so a runtime that corrupted its heap on one attempt cannot confuse the next.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from padconf.adapters import split_variant, unknown_runtime
from padconf.cases.case import Case
from padconf.core import escape
from padconf.core.errors import CaseError, PadconfError, SpecError
from padconf.core.vocabulary import PLACEMENTS, Placement
from padconf.core.writing import FolderLock, make_folder, open_to_append, write_atomically, write_markdown
from padconf.execution.worker import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, Worker, WorkerClosed, check_memory_cap
from padconf.judging.failure import failure_signature
from padconf.judging.verdicts import FAILURES
from padconf.minimize import DEFAULT_TIME_LIMIT_S
from padconf.minimize.bundle.index import index_markdown
from padconf.minimize.bundle.report import bundle_triage
from padconf.minimize.bundle.scripts import api_script_name, configuration
from padconf.minimize.bundle.title import title
from padconf.minimize.bundle.writer import write_bundle
from padconf.minimize.probes.evidence import (
    CHECKS,
    FOLDER_WORDS,
    LABELS,
    NEEDS_A_LOOK,
    WHAT,
    a_control_fails,
    evidence,
    fails_again,
    how_it_shows,
    mechanism,
    variant_experiment,
)
from padconf.minimize.probes.experiments import (
    beyond_policy,
    default_configuration,
    defined_at,
    explicit_default,
    features_needed,
    known_hang,
    lowered_runtime,
    native_check,
    operand_twin,
    packing,
    placement_needed,
    positive_pads_needed,
    record,
    refused_when_folded,
    schema_check,
)
from padconf.minimize.probes.root_cause import mechanism_key, root_cause
from padconf.minimize.shrink.loop import Attempt, IsolatedRunner, Shrunk, constants_as_initializers, shrink, size_text
from padconf.minimize.shrink.simplify import SIMPLER_DTYPES
from padconf.minimize.targets import Job, model_jobs, resolve
from padconf.spec.loader import get_spec


def reproduce(isolated: IsolatedRunner, job: Job, placements: list[str]) -> tuple[Attempt, Placement]:
    """The job's case run alone (in its recorded placement, or in the placement of the user's
    model it came from, or else in the first that fails); CaseError when it does not fail. A
    context case too: its bundle holds its whole graph (padconf.minimize.bundle.model_source)."""
    tried = []
    chosen = job.placement or job.preferred
    if chosen and (job.placement or chosen in placements):  # a failure in another placement is another bug
        placements = [chosen]
    for placement in map(_placement, placements):
        got = isolated.attempt(job.case, placement)
        if got.row["verdict"] in FAILURES:
            got.control = isolated.control(got, placement)
            return got, placement
        tried.append(f"{got.row['verdict']} [{placement}]")
    raise CaseError(f"case {job.case.id} does not fail on {isolated.runtime} when run alone ({', '.join(tried)})")


def _placement(text: str) -> Placement:
    """A recorded or declared placement as the vocabulary's word; one that is none is bad input."""
    try:
        return Placement(text)
    except ValueError:
        raise CaseError(f"placement {text!r} is not one of {', '.join(PLACEMENTS)}") from None


def short_name(case: Case) -> str:
    domain, version = case.spec.split("/Pad-")
    return f"{'ov-' if domain == 'openvino' else ''}pad{version}-{case.mode}-{case.dtype}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def minimize(target: str, runtime: str, out: Path | str, time_limit: float = DEFAULT_TIME_LIMIT_S,
             progress=None, timeout: float = DEFAULT_TIMEOUT_S, specs_dir: str | None = None,
             memory_mb: int = DEFAULT_MEMORY_MB) -> list[dict]:
    """Minimize what TARGET names on ``runtime`` into ``out``; one summary dict per failure
    ({"dir", "title", "shrunk" | "error"}). A case target's bundle is ``out`` itself. Every
    worker it starts is capped at ``memory_mb``, as a run's are."""
    if unknown_runtime(runtime):
        raise PadconfError(unknown_runtime(runtime))
    check_memory_cap(memory_mb)  # before the folder is made: a cap no worker can set is one line
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PadconfError(f"--out {out}: exists and is not an empty directory")
    make_folder(out)  # no link on the way
    with FolderLock(out, exclusive=True):  # one process writes a bundle folder at a time
        return _minimize_into(target, runtime, out, time_limit, progress, timeout, specs_dir, memory_mb)


def _minimize_into(target: str, runtime: str, out: Path, time_limit: float, progress, timeout: float,
                   specs_dir: str | None, memory_mb: int) -> list[dict]:
    kind, jobs = resolve(target, runtime, specs_dir)
    # a run's failures of common dtypes first: where several are one mechanism, the bundle is the
    # first one's, and a common dtype has every control (onnxruntime's Concat lacks bfloat16, so
    # a bfloat16 root could not show check (c) for a refusal every dtype shares)
    jobs = sorted(jobs, key=lambda j: j.case.dtype not in SIMPLER_DTYPES)
    for job in jobs:  # a case of a version the spec folder lacks: one line, before any worker sees it
        try:
            get_spec(job.case.spec, Path(job.specs_dir) if job.specs_dir else None)
        except SpecError as exc:
            raise CaseError(f"case {job.case.id}: {exc}") from None
    worker = Worker(runtime, memory_mb, timeout=timeout)
    # the runtime Pad lowers to (native_check), set up as a variant's own: one worker for every
    # bundle, started on first use; and for a variant, the runtime in its default configuration
    lowered = lowered_runtime(runtime)
    lowered_to = Worker(lowered[0], memory_mb, timeout=timeout) if lowered else None
    base, settings = split_variant(runtime)
    default = Worker(base, memory_mb, timeout=timeout) if settings else None
    summaries: list[dict[str, Any]] = []
    runners: list[IsolatedRunner] = []  # each job's, for the count of runs said at the end
    answers: dict = {}  # every job's runs of a case with the full timeout, shared: jobs ask alike cases
    roots: dict[tuple, dict] = {}  # root_cause(shrunk) -> the summary of the bundle written for it
    others = frozenset(failure_signature(r) for j in jobs[:1] for r in j.run_rows
                       if r["runtime"] == runtime and r["verdict"] in FAILURES)  # the run's distinct failures
    try:
        if kind == "model":
            jobs = model_jobs(Path(target), worker, progress)
        about = worker.describe(sorted({(j.case.spec, j.case.dtype) for j in jobs}))
        if about["unavailable"]:
            raise PadconfError(f"runtime {runtime} unavailable: {about['unavailable']}")
        for n, job in enumerate(jobs, 1):
            example = job.example
            isolated = IsolatedRunner(worker, runtime, job.specs_dir, example and example["interpretation"], answers)
            runners.append(isolated)
            label = job.case.id if kind == "case" else f"{n}/{len(jobs)}"
            try:
                start, placement = reproduce(isolated, job, about["placements"])
                def say(text: str, label: str = label, verdict: str = start.row["verdict"]) -> None:
                    _say(progress, f"minimize {label} {verdict}: {text}")

                say(f"start: {size_text(start.case)}")
                if known_hang(start):  # a known hang: every candidate would wait the whole timeout
                    say("a hang a known upstream issue covers: not shrunk")
                    shrunk = Shrunk(start, start, 0, 0.0, False)
                else:
                    shrunk = shrink(isolated, start, placement, time_limit, say, others)
                    shrunk, placement = constants_as_initializers(isolated, shrunk, placement, about["placements"],
                                                                  time_limit, say, others)
                triage_by_experiment(isolated, shrunk, placement, default)
                shrunk.native = native_check(shrunk, runtime, placement, lowered_to) \
                    or schema_check(shrunk, runtime, placement)
                shrunk.refused_when_folded = refused_when_folded(isolated, shrunk.final, placement,
                                                                     about["placements"])
                shrunk.packing = packing(isolated, shrunk.final, placement)
                cause = root_cause(shrunk, placement)
                root = roots.get(cause)
                tried = None
                if root is not None and kind != "case":  # the bundle's own experiment rerun on this one
                    tried = variant_experiment(isolated, shrunk, placement)
                    if not _one_mechanism(isolated, shrunk, placement, root, tried):
                        # the root's experiment does not show this one: another mechanism, a bundle of its own
                        cause = (*cause, tuple(tried["mechanism"]))
                        root = roots.get(cause)
                if root is not None and tried is not None \
                        and _one_mechanism(isolated, shrunk, placement, root, tried):  # the same mechanism: a variant
                    text = variant_text(shrunk, placement) + _twin_text(tried)
                    root["variants"].append(text)
                    root["variant_experiments"].append({"variant": text, **tried})
                    summaries.append({"n": n, "dir": None, "recorded": job.recorded, "merged_into": root,
                                      "error": f"the same root cause as bundle {root['n']} ({root['dir'].name})",
                                      "shape": list(job.case.data.shape)})
                    _say(progress, f"minimize {label}: the same root cause as bundle {root['n']}", end=True)
                    continue
                # the removal experiments a title rests on, for a bundle's own title only (a variant
                # is listed by its case; each is a few more runs, a compile each on a compiler)
                shrunk.placement_needed = placement_needed(isolated, shrunk.final, placement, about["placements"])
                shrunk.positive_pads_needed = positive_pads_needed(isolated, shrunk.final, placement)
                shrunk.features = features_needed(isolated, shrunk.final, placement)
                verdict = shrunk.final.row['verdict']
                name = f"{_safe(runtime)}-{verdict}-{short_name(shrunk.final.case)}"
                where = out if kind == "case" else out / f"{n:02d}{PENDING}{name}"
                title = write_bundle(where, shrunk, placement, runtime, about.get("version"), job)
                found = evidence(isolated, shrunk, placement, where, bundle_triage(shrunk, job),
                                 api_script_name(runtime) if (where / api_script_name(runtime)).exists() else None)
                write_evidence(where, found)
                if kind != "case":  # named by its label, which the evidence concludes
                    where = where.rename(out / f"{n:02d}-{FOLDER_WORDS[found['label']]}-{name}")
            except Exception as exc:  # noqa: BLE001 -- one failure that cannot be minimized must not lose the rest
                if kind == "case" or isinstance(exc, WorkerClosed):  # closed: padconf is ending
                    raise
                why = str(exc) if isinstance(exc, CaseError) else f"{type(exc).__name__}: {exc}"
                settled = settle_pending(out, f"padconf could not finish its experiments: {why}")
                if settled:
                    why += f" (its folder {', '.join(settled)} needs a look)"
                summaries.append({"n": n, "dir": None, "recorded": job.recorded, "error": why,
                                  "shape": list(job.case.data.shape)})
                _say(progress, f"minimize {label}: skipped: {why}", end=True)
                continue
            _say(progress, f"minimize {label}: {title} ({size_text(shrunk.final.case)}; {shrunk.seconds:.1f} s, "
                           f"{shrunk.tries} tries) -> {where}", end=True)
            summaries.append({"n": n, "dir": where, "title": title, "shrunk": shrunk, "recorded": job.recorded,
                              "variants": [variant_text(shrunk, placement)], "evidence": found, "cause": cause,
                              "runtime": runtime, "placement": placement, "variant_experiments": [],
                              "isolated": isolated})
            roots[cause] = summaries[-1]
        if kind != "case":  # after labelling, across labels: one mechanism, one bundle
            merge_across_labels(summaries, out, progress)
        _say(progress, f"minimize: {sum(r.tries for r in runners)} runs, each in a fresh worker; "
                       f"{sum(r.reused for r in runners)} asked again and answered by an earlier run", end=True)
    finally:
        for opened in (worker, lowered_to, default):
            if opened is not None:
                opened.close()
        # on every way out (an error, Ctrl-C): no folder stays unlabelled
        settle_pending(out, "minimize ended before the bundle's experiments concluded")
    if kind == "model" and not any(s["dir"] for s in summaries):
        raise CaseError(f"{target}: no Pad node of the model fails alone on {runtime}: "
                        + "; ".join(s["error"] for s in summaries))
    if kind != "case":
        for s in summaries:  # a bundle that stands for several failures of the run lists them
            if s.get("variant_experiments"):  # and records its experiment rerun on each
                s["evidence"]["variants"] = s["variant_experiments"]
                write_atomically(s["dir"] / "evidence.json", json.dumps(s["evidence"], indent=1) + "\n")
            if len(s.get("variants", ())) > 1:
                with open_to_append(s["dir"] / "REPORT.md") as report:
                    report.write("\n## Variants\n\nThe same root cause, found for each of these failures of the "
                                 "run (one bundle for them all):\n\n" + "".join(f"- {v}\n" for v in s["variants"]))
        write_markdown(out / "INDEX.md", index_markdown(target, runtime, summaries))
    return summaries


def triage_by_experiment(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement,
                         default: Worker | None) -> None:
    """padconf.minimize.probes.experiments on the minimal case: judged at the version that defines its
    input where the runtime fails there too, and its row told what the policy, default value
    and (for a variant, on ``default``) default configuration experiments showed."""
    found_at = shrunk.final.case.spec
    defined = defined_at(isolated, shrunk.final, placement)
    if defined is not None:
        defined.control = isolated.control(defined, placement)
        shrunk.final = defined
    record(shrunk.final, {"defined_at": found_at if defined is not None else None,
                          "beyond_policy": beyond_policy(isolated, shrunk.final, placement),
                          "explicit_default": explicit_default(isolated, shrunk.final, placement),
                          "default_configuration": default_configuration(default, shrunk.final, placement,
                                                                         configuration(isolated.runtime))})


def _mechanism_of(root: dict) -> tuple:
    """The bundle's mechanism (probes.evidence.mechanism), its repro rerun as a variant's is, once."""
    if "mechanism" not in root:
        shrunk = root["shrunk"]
        again = fails_again(root["isolated"], shrunk, root["placement"])
        root["mechanism"] = mechanism(how_it_shows(shrunk), a_control_fails(root["evidence"]["checks"]["c"]), again)
        root["evidence"]["fails_again"] = again
    return root["mechanism"]


def _one_mechanism(isolated: IsolatedRunner, shrunk: Shrunk, placement: Placement, root: dict, tried: dict) -> bool:
    """Whether the variant whose experiment is ``tried`` is the root's mechanism: that experiment
    shows alike, or the variant's operand twin fails as the root's minimal case does (one bug
    whose symptom the operands' index type or placement chooses, operand_twin: recorded in ``tried``)."""
    if tuple(tried["mechanism"]) == _mechanism_of(root):
        return True
    if "operand_twin" not in tried:
        tried["operand_twin"] = operand_twin(isolated, shrunk.final, placement, root["shrunk"].final,
                                             root["placement"])
    return tried["operand_twin"] is not None


def _twin_text(tried: dict) -> str:
    """What a variant's operand twin showed, for its line in the root's REPORT.md."""
    twin = tried.get("operand_twin")
    if not twin:
        return ""
    forms = [f"{twin[k]} {k.removesuffix('_type')}" for k in ("pads_type", "axes_type") if k in twin]
    forms += [f"in placement {twin['placement']}"] if "placement" in twin else []
    return (f"; with {' and '.join(forms)} it fails as this bundle's case does ({twin['verdict']}): "
            "one bug, two symptoms")


def write_evidence(where: Path, found: dict) -> None:
    """evidence.json, and REPORT.md's lines saying what the label rests on (before its appendix)."""
    write_atomically(where / "evidence.json", json.dumps(found, indent=1) + "\n")
    missing = " (missing: " + ", ".join(f"({k})" for k in found["missing"]) + ")" if found["missing"] else ""
    why = escape.markdown(found.get("why") or "")
    lines = ["", "## Evidence", "",
             f"Label: **{found['label']}**{missing} ({why}); evidence.json holds each check.", ""]
    for k, check in found["checks"].items():
        state = "not needed" if not check["needed"] else "passed" if check["passed"] else "missing"
        lines.append(f"- ({k}) {escape.markdown(check['what'])}: {state}; {escape.markdown(check['how'])}")
    report = where / "REPORT.md"
    head, appendix = (report.read_text(encoding="utf-8").split("\n## Appendix\n", 1) + [""])[:2]
    head = head.split("\n\n## Evidence\n", 1)[0]  # written again where a label changes (across.file_on_engine)
    text = head.rstrip("\n") + "\n" + "\n".join(lines) + "\n" + ("\n## Appendix\n" + appendix if appendix else "")
    write_atomically(report, text)


LABEL_ORDER = LABELS  # a merged bundle's root first


def merge_across_labels(summaries: list[dict], out: Path, progress=None) -> None:
    """The bundles of one mechanism (root_cause.mechanism_key) that labelling left apart, under
    two labels or two root causes, merged into one: the one with the label of most evidence (a
    bug to file first) is the root; each other is rerun through the root's own experiment
    (variant_experiment) and merged only where that shows alike, its folder moved under the
    root's variants/, its own variants with it, listed in the root's REPORT.md."""
    bundles = sorted((s for s in summaries if s.get("dir") and not s.get("merged_into")),
                     key=lambda s: (LABEL_ORDER.index(s["evidence"]["label"]), s["n"]))
    roots: dict[tuple, dict] = {}
    for s in bundles:
        key = mechanism_key(s["shrunk"], s["placement"])
        root = roots.setdefault(key, s)
        if root is s:
            continue
        tried = variant_experiment(s["isolated"], s["shrunk"], s["placement"])
        if not _one_mechanism(s["isolated"], s["shrunk"], s["placement"], root, tried):  # another after all
            continue
        label = s["evidence"]["label"]
        moved = root["dir"] / "variants" / s["dir"].name
        make_folder(moved.parent)
        shutil.move(str(s["dir"]), str(moved))
        text = (f"{variant_text(s['shrunk'], s['placement'])}{_twin_text(tried)}, labelled {label} alone "
                f"(variants/{moved.name})")
        root["variants"] += [text, *s["variants"][1:]]
        root["variant_experiments"] += [{"variant": text, "label_alone": label, **tried}, *s["variant_experiments"]]
        for m in summaries:
            if m.get("merged_into") is s:
                m["merged_into"] = root
        s.update({"dir": None, "merged_into": root, "variants": [], "variant_experiments": [],
                  "shape": list(s["shrunk"].original.case.data.shape),
                  "error": f"the same mechanism as bundle {root['n']} ({root['dir'].name}), labelled {label} alone"})
        _say(progress, f"minimize {s['n']}: the same mechanism as bundle {root['n']} ({label} alone)", end=True)


PENDING = "-pending-"  # a bundle folder's word until its evidence concludes a label


def settle_pending(out: Path, why: str) -> list[str]:
    """Every folder in ``out`` still named pending (its experiments never concluded) renamed by
    the label "needs a look", its evidence.json saying why, no check passed; their new names."""
    settled = []
    for folder in sorted(out.iterdir()) if out.is_dir() else ():
        if PENDING not in folder.name or not folder.is_dir():
            continue
        found: dict[str, Any] = {"label": NEEDS_A_LOOK, "why": why, "triage": None, "missing": list(CHECKS),
                 "missing_text": [f"({k}) {WHAT[k]}: not concluded" for k in CHECKS], "checks": {}}
        write_atomically(folder / "evidence.json", json.dumps(found, indent=1) + "\n")
        moved = folder.with_name(folder.name.replace(PENDING, f"-{FOLDER_WORDS[NEEDS_A_LOOK]}-", 1))
        folder.rename(moved)
        settled.append(moved.name)
    return settled


def variant_text(shrunk: Shrunk, placement: Placement) -> str:
    case = shrunk.final.case
    heading = title(shrunk.final.row, case, refused_when_folded=bool(shrunk.refused_when_folded),
                    positive_pads=bool(shrunk.positive_pads_needed), features=shrunk.features)
    return f"{heading} [{placement}] (from case {shrunk.original.case.id})"


def _say(progress, text: str, end: bool = False) -> None:
    if progress:
        progress(text, end)
