"""`padconf minimize RUN` without --runtime: every runtime of the run that failed is minimized,
each into a folder of its own, then its bundles are merged by mechanism across the runtimes
that reach one engine: one bug, one bundle.

Which paths reach one engine is the adapters' data (Adapter.lowered_to, which a plugin sets as
padconf's own adapters do): OpenVINO's ONNX frontend lowers ONNX Pad to OpenVINO's Pad-12, so
openvino-onnx's bundles merge into openvino's; a runtime that declares none is its own engine.
Two bundles are one mechanism when their root causes are equal (probes.root_cause), or when the
operation the frontend lowers Pad to fails the frontend's minimal case alike (native_check) with
the verdict, mode and telling feature of an engine's own bundle; and then only where each one's
own experiment showed alike (how it shows, its computing control passing or not). A merged bundle's folder moves
under its root's ``variants/``, listed in its REPORT.md; INDEX.md lists each root with its
variants beneath it, grouped by mechanism. A frontend's bundle whose lowered operation fails alike
and that meets no bundle of the engine's own (the engine's draw never met it: OpenVINO's CPU Pad
passing an int32 pad value through float32 showed only through the frontend) is the engine's
bug to file, with the engine's own repro (native/): no bug stays filed nowhere."""
from __future__ import annotations

import os
import shutil
import threading
from collections import Counter
from pathlib import Path

from padconf.adapters import adapter_class, registry, split_variant, unknown_runtime
from padconf.core import escape
from padconf.core.errors import PadconfError
from padconf.core.writing import FolderLock, make_folder, open_to_append, write_markdown
from padconf.execution.worker import DEFAULT_MEMORY_MB, check_memory_cap, close_all
from padconf.judging.verdicts import FAILURES
from padconf.minimize import DEFAULT_TIME_LIMIT_S
from padconf.minimize.bundle.index import index_markdown
from padconf.minimize.bundle.scripts import api_script_name
from padconf.minimize.bundle.title import feature
from padconf.minimize.minimize import _safe, minimize, variant_text, write_evidence
from padconf.minimize.probes.evidence import BUG, FOLDER_WORDS, LABELS, a_control_fails, how_it_shows
from padconf.run.rundir import RESULTS, read_results

LANE_END_S = 30.0  # how long an interrupt waits for a lane to settle its folders


def engine(runtime: str) -> str:
    """The engine ``runtime``'s Pad reaches: the runtime its adapter lowers Pad to, else itself."""
    lowered = adapter_class(runtime).lowered_to
    return lowered[0] if lowered else split_variant(runtime)[0]


def failures(run_dir: Path) -> Counter[str]:
    """How many failing results each runtime has in the run directory (results.jsonl, read once)."""
    return Counter(r["runtime"] for r in read_results(run_dir / RESULTS) if r["verdict"] in FAILURES)


def failing_runtimes(run_dir: Path, failed: Counter[str], named: list[str] | None = None) -> list[str]:
    """The runtimes with a failure in the run (``failed``: failures), each engine's own runtime
    before its other paths: those ``named``, else every one; a module:Class is imported only when
    the user names it (run.json and results.jsonl are files anyone may have written)."""
    names = set(failed)
    if named is not None:
        names &= set(named)
    elif unnamed := sorted(n for n in names if split_variant(n)[0] not in registry()):
        raise PadconfError(f"{run_dir}: minimize imports the module:Class runtime {unnamed[0]!r} of this run only "
                           f"when you name it: --runtime {' '.join(sorted(names))}")
    known = sorted(n for n in names if not unknown_runtime(n))
    return sorted(known, key=lambda n: (engine(n), n != engine(n), n))


def _engine_fails_alike(s: dict, runtime: str) -> bool:
    """Whether the operation ``runtime`` lowers Pad to, on its engine, failed the bundle's minimal
    case alike (experiments.native_check: Shrunk.native)."""
    native = s["shrunk"].native
    return bool(native and native.get("runtime")) and split_variant(native["runtime"])[0] == engine(runtime)


def _keys(s: dict, runtime: str) -> list[tuple]:
    """What identifies the bundle's mechanism on its engine: its root cause, and for a bundle
    whose lowered operation fails alike (or an engine's own bundle), its verdict, mode and feature."""
    shrunk = s["shrunk"]
    case = shrunk.final.case
    keys: list[tuple] = [(engine(runtime), "cause", s["cause"])]
    if _engine_fails_alike(s, runtime):
        keys.append((engine(runtime), "lowered", shrunk.native["verdict"], case.mode, feature(case)))
    elif runtime == engine(runtime):
        keys.append((engine(runtime), "lowered", shrunk.final.row["verdict"], case.mode, feature(case)))
    return keys


def _experiment(s: dict) -> tuple:
    """What the bundle's own experiment showed of its minimal case (how it shows, whether a control
    computing on the same values failed too): a bundle of another path merges only where its own
    showed alike (a compile error on a valid input is no variant of a wrong value on an invalid one)."""
    return how_it_shows(s["shrunk"]), a_control_fails(s["evidence"]["checks"]["c"])


def merge_across(done: list[tuple[str, list[dict]]], covered: set[str] | frozenset[str] = frozenset()) -> None:
    """Merge each runtime's bundles (in ``done`` order: an engine's own runtime first) into the
    first bundle of the same mechanism on the same engine (_keys): its folder moved under the
    root's variants/, listed in the root's REPORT.md, its summary marked ``merged_into``. Then,
    for the engines in ``covered`` (each minimized here, or with no failure in the run), a
    frontend's bundle that the engine fails alike and that met none of the engine's own is filed
    against the engine (file_on_engine)."""
    roots: dict[tuple, dict] = {}
    for runtime, summaries in done:
        for s in summaries:
            if not s.get("dir") or s.get("merged_into"):
                continue
            keys = _keys(s, runtime)
            root = next((roots[k] for k in keys if k in roots and roots[k]["runtime"] != runtime
                         and _experiment(roots[k]) == _experiment(s)), None)
            if root is None:
                for k in keys:
                    roots.setdefault(k, s)
                continue
            moved = root["dir"] / "variants" / f"{_safe(runtime)}-{s['dir'].name}"
            make_folder(moved.parent)
            shutil.move(str(s["dir"]), str(moved))
            text = f"{runtime}: {variant_text(s['shrunk'], s['placement'])}, in variants/{moved.name}"
            with open_to_append(root["dir"] / "REPORT.md") as report:
                if not root.get("paths"):
                    report.write("\n## Through other paths of the same engine\n\nThe same mechanism, minimized on "
                                 "another runtime that reaches this engine (one bundle for them all):\n\n")
                report.write(f"- {escape.markdown(text)}\n")
            root.setdefault("paths", []).append(text)
            s.update({"dir": moved, "merged_into": root, "merged_runtime": runtime,
                      "shape": list(s["shrunk"].original.case.data.shape),
                      "link": os.path.relpath(root["dir"], moved.parent.parent.parent)})
    for runtime, summaries in done:
        for s in summaries:
            if s.get("dir") and not s.get("merged_into") and engine(runtime) in covered \
                    and not any(roots.get(k, {}).get("runtime") == engine(runtime) for k in _keys(s, runtime)):
                file_on_engine(s, runtime)


def file_on_engine(s: dict, runtime: str) -> None:
    """The frontend bundle ``s`` as its engine's bug to file, where the engine's Pad fails its
    minimal case alike (native_check, its repro in native/) and no check but (e), which that
    very failure failed, is missing: its label, evidence and folder name say so."""
    found, native, eng = s["evidence"], s["shrunk"].native, engine(runtime)
    if found["label"] != "other-component" or not _engine_fails_alike(s, runtime) or set(found["missing"]) - {"e"}:
        return
    unique = {**found["checks"]["e"], "passed": True,
              "how": f"no upstream fact or bundle explains it, and none of {eng}'s own bundles has it: its "
                     f"draws never met this case, so this bundle is {eng}'s"}
    found = {**found, "label": BUG, "filed_against": eng, "missing": [], "missing_text": [],
             "why": f"{native['spec']} on {eng} fails alike and no bundle of {eng}'s has it: a bug to file "
                    f"against {eng}, its repro native/{api_script_name(eng)}",
             "checks": {**found["checks"], "e": unique}}
    write_evidence(s["dir"], found)
    words = f"-{FOLDER_WORDS['other-component']}-"
    moved = s["dir"].with_name(s["dir"].name.replace(words, f"-{FOLDER_WORDS[BUG]}-", 1))
    s.update({"dir": s["dir"].rename(moved), "evidence": found})


def minimize_run(target: str, out: Path | str, time_limit: float = DEFAULT_TIME_LIMIT_S, progress=None,
                 specs_dir: str | None = None, named: list[str] | None = None, **kw) -> list[dict]:
    """Minimize every failing runtime of the run directory ``target`` (of those ``named``, where
    given: failing_runtimes) into ``out``/<runtime>, merge across runtimes, and write
    ``out``/INDEX.md; the summaries of every runtime."""
    run_dir, out = Path(target), Path(out)
    check_memory_cap(kw.get("memory_mb", DEFAULT_MEMORY_MB))  # every runtime's: not one skipped after another
    if not (run_dir.is_dir() and (run_dir / RESULTS).exists()):
        raise PadconfError(f"{target}: not a run directory (results.jsonl): with no --runtime, or several, minimize "
                           "takes a run directory and minimizes its runtimes")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PadconfError(f"--out {out}: exists and is not an empty directory")
    failed = failures(run_dir)
    runtimes = failing_runtimes(run_dir, failed, named)
    if not runtimes:
        raise PadconfError(f"{run_dir}: no runtime {'named ' if named else ''}has a failure in this run: "
                           "nothing to minimize")
    make_folder(out)  # no link on the way
    with FolderLock(out, exclusive=True):  # from the first runtime's bundles to the merged INDEX.md
        return _minimize_runtimes(target, runtimes, failed, out, time_limit, progress, specs_dir, **kw)


def minimize_lanes(jobs: int | None) -> int:
    """How many runtimes minimize side by side: ``jobs``, else one per core."""
    return max(1, jobs if jobs is not None else (os.cpu_count() or 1))


def slowest_first(failed: Counter[str], runtimes: list[str]) -> list[str]:
    """``runtimes`` in the order their minimizing starts: the ahead-of-time compilers first (each
    run of theirs costs a compile, so they take longest), then by how many failing results each
    has (``failed``: failures), most first, so that the last to start is the shortest and no
    runtime waits behind them all."""
    return sorted(runtimes, key=lambda n: (not adapter_class(n).compiles_ahead, -failed[n], runtimes.index(n)))


def _minimize_runtimes(target: str, runtimes: list[str], failed: Counter[str], out: Path, time_limit: float, progress,
                       specs_dir: str | None, jobs: int | None = None, **kw) -> list[dict]:
    # each runtime minimized in a lane of its own, ``jobs`` at a time, each into its own folder
    # with its own workers; they meet only below, in ``runtimes``' order, whichever ended first
    finished: dict[str, list[dict] | BaseException] = {}
    lock = threading.Lock()
    queue = iter(slowest_first(failed, runtimes))
    ending = threading.Event()  # an interrupt: the lanes stop, and say nothing more

    def said(runtime: str):
        def say(text: str, end: bool = False) -> None:
            if progress and not ending.is_set():
                with lock:
                    progress(f"{runtime}: {text}", end)
        return say

    def lane() -> None:
        while not ending.is_set():
            with lock:
                runtime = next(queue, None)
            if runtime is None:
                return
            got: list[dict] | BaseException
            try:
                got = minimize(target, runtime, out / _safe(runtime), time_limit, said(runtime),
                               specs_dir=specs_dir, **kw)
            except BaseException as exc:  # noqa: BLE001 -- handed to the main thread, which raises it
                got = exc
            with lock:
                finished[runtime] = got

    lanes = [threading.Thread(target=lane, daemon=True) for _ in range(min(minimize_lanes(jobs), len(runtimes)))]
    for thread in lanes:
        thread.start()
    try:
        for thread in lanes:
            while thread.is_alive():
                thread.join(0.2)  # short waits: Ctrl-C and SIGTERM reach the main thread
    except BaseException:
        # each lane's runs end at their next answer (WorkerClosed), its folders settled, before
        # the command says it was interrupted: no lane writes or speaks after that line
        ending.set()
        close_all()
        for thread in lanes:
            thread.join(LANE_END_S)
        raise
    done: list[tuple[str, list[dict]]] = []
    skipped: list[str] = []
    for runtime in runtimes:
        got = finished[runtime]
        if isinstance(got, PadconfError):  # that runtime is not here, say: the others go on
            skipped.append(f"{runtime}: {got}")
        elif isinstance(got, BaseException):
            raise got
        else:
            done.append((runtime, got))
    if not done:  # nothing minimized is never a result: the first reason, in one line
        raise PadconfError(skipped[0] + (f" (and {len(skipped) - 1} more runtimes not minimized)"
                                         if len(skipped) > 1 else ""))
    merge_across(done, {engine(r) for r, _ in done} - (set(failed) - {r for r, _ in done}))
    for runtime, summaries in done:  # each runtime's own index, its merged bundles linked where they went
        write_markdown(out / _safe(runtime) / "INDEX.md", index_markdown(target, runtime, summaries))
    write_markdown(out / "INDEX.md", merged_index(target, done, skipped, out))
    return [s for _, summaries in done for s in summaries]


def merged_index(target: str, done: list[tuple[str, list[dict]]], skipped: list[str],
                 out: Path) -> escape.Markdown:
    """INDEX.md over every runtime: each bundle's label section, each root followed by the bundles
    merged into it (its mechanism through other paths and failures), grouped by mechanism."""
    order = list(LABELS)
    rows: dict[str, list[str]] = {label: [] for label in order}
    for runtime, summaries in done:
        for s in summaries:
            if not s.get("dir") or s.get("merged_into"):
                continue
            label = (s.get("evidence") or {}).get("label", "not-a-bug")
            proof = s.get("evidence") or {}
            missing = ", ".join(proof.get("missing") or []) or "-"
            link = s["dir"].relative_to(out).as_posix()
            filed = f"{proof['filed_against']} (through {runtime})" if proof.get("filed_against") else runtime
            rows[label].append(f"| {escape.markdown(filed)} | [{escape.markdown(s['dir'].name)}]({link}/REPORT.md) | "
                               f"{escape.markdown(s['title'])} | {missing} |")
            merged = [m for _, ms in done for m in ms if m.get("merged_into") is s]
            for m in merged:  # the other paths' bundles, each a row
                if not m.get("dir"):
                    continue
                where = m["dir"].relative_to(out).as_posix()
                rows[label].append(f"| ↳ {escape.markdown(m.get('merged_runtime') or runtime)} | "
                                   f"[{escape.markdown(Path(where).name)}]({where}/REPORT.md) | "
                                   f"{escape.markdown(m.get('title') or '')} | same mechanism |")
            alike = [m for m in merged if not m.get("dir")]  # this runtime's own failures: one row for them all
            if alike:
                rows[label].append(f"| ↳ {escape.markdown(runtime)} | - | {len(alike)} more failure"
                                   f"{'s' if len(alike) > 1 else ''} of the run, the same mechanism (listed in the "
                                   "bundle's Variants) | same mechanism |")
    lines = [f"# padconf minimize {target} (every runtime)", "",
             ", ".join(f"{len([r for r in rs if not r.startswith('| ↳')])} {label}" for label, rs in rows.items())
             + ". Each runtime's own INDEX.md (in its folder) has every failure and the checks of each bundle.", ""]
    for label, rs in rows.items():
        if rs:
            lines += [f"## {label}", "", "| runtime | bundle | title | missing checks |", "|---|---|---|---|", *rs, ""]
    if skipped:
        lines += ["## Not minimized", "", *(f"- {escape.markdown(s)}" for s in skipped), ""]
    return escape.Markdown("\n".join(lines))  # each line escaped where it is made
