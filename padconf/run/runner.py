"""The differential run: cases -> adapters (in worker subprocesses) -> verdicts -> the run
directory (padconf.run.rundir: its files, how they are read and written).

``run_cases`` is a whole run as every front end makes one (the command line, the gate, a
library user): its cases drawn or read back, planned, run, their controls, and summary.md.
``Run`` is the same in steps: ``prepare`` writes or reloads the cases, ``plan`` asks each
runtime's worker what it can run, ``execute`` runs it. Results are appended and flushed as each
finishes, so a killed run loses nothing and ``--resume`` skips what is done; a line cut short by
a kill or a full disk is set aside on resume and its case is run again.
"""
from __future__ import annotations

import itertools
import json
import os
import resource
import threading
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from padconf.adapters import registry, split_variant
from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case
from padconf.cases.classify import repaired_twin
from padconf.core.errors import CaseError, PadconfError, phase
from padconf.core.vocabulary import Placement, Status
from padconf.core.writing import MARK, claim_folder, claimed, make_folder, open_to_append, write_atomically
from padconf.execution.compile_limits import CompileLimits
from padconf.execution.worker import Worker, WorkerClosed
from padconf.judging.judged import judged_batch
from padconf.judging.records import judged_row, row_key
from padconf.run.compile_budget import left_out, not_compiled_why, plan_order
from padconf.run.config import CASE_COUNT, RunConfig
from padconf.run.controls import run_controls
from padconf.run.drawing import build_cases
from padconf.run.rundir import (
    CASES,
    MAX_JSONL_BYTES,
    RESULTS,
    RESULTS_WRITTEN,
    RUN_FILES,
    RUN_JSON,
    SIGNED,
    STATS,
    RowsFile,
    RunDirLock,
    cases_dirs_named_again,
    check_rows_of_cases,
    check_rows_of_run,
    decoded_cases,
    named_again,
    read_jsonl,
    read_results,
    read_run_json,
    set_torn_line_aside,
)
from padconf.run.signature import SIGNATURE, Signature, sign, signature_of
from padconf.spec.loader import get_spec, load_specs, parse_spec_id

BATCH_SIZE = 64  # cases sent at once; also the unit lanes share a runtime in


def runtime_scope(cases: list[Case], pairs: list[tuple[str, str]], about: dict) -> list[tuple[Case, str | None]]:
    """The cases of the spec families a runtime runs, from its worker's describe answer ``about``
    for ``pairs``, each with why its adapter cannot express it (None: it can; else a skipped row)."""
    why_not = dict(zip(pairs, about["supports"]))
    return [(c, why_not[(c.spec, c.dtype)]) for c in cases if parse_spec_id(c.spec)[0] in about["domains"]]


class Run:
    """One run directory. ``prepare`` writes or reloads the cases; ``plan`` asks each runtime's
    worker what it can run; ``execute`` runs it."""

    def __init__(self, out_dir: Path, config: RunConfig | None = None, resume: bool = False, force: bool = False,
                 jobs: int | None = None, named_runtimes: tuple[str, ...] | list[str] = (),
                 named_specs_dir: str | None = None, named_cases_dirs: list[str] | None = None):
        self.dir = Path(out_dir)
        self.jobs = jobs or os.cpu_count() or 1  # lanes, and processes drawing cases: not part of the run's identity
        self.results_path = self.dir / RESULTS
        self.cases_path = self.dir / CASES
        self.run_json = self.dir / RUN_JSON
        self.notes: list[str] = []  # one line per runtime or combination that could not run
        self.targets: dict[str, str | None] = {}  # runtime -> its compiler's target, as its worker says
        self._order_independent: dict[str, bool] = {}  # runtime -> Adapter.order_independent, as its worker says
        self._compiles_ahead: set[str] = set()  # runtimes whose worker says Adapter.compiles_ahead
        self._compile_limits: dict[str, CompileLimits] = {}  # such a runtime -> its lanes' build limits
        self.workers: dict[str, Worker] = {}
        self._starting: dict[str, Worker] = {}  # zygotes started before plan() asks what they can run
        self._case_rank: dict[str, int] = {}  # case id -> its place in the plan's order
        self._twins: dict[str, Case | str] = {}  # case id -> its repaired twin, or why it has none
        self._lane_workers: set[Worker] = set()
        # runtime -> a lane's worker, its process ended, whose zygote the controls fork from: a
        # fresh zygote would import the runtime again
        self._spares: dict[str, Worker] = {}
        self._stats_lock = threading.Lock()
        self.stats: dict = {"draw_seconds": 0.0, "runtimes": {}}  # this session's figures: stats.json
        self._scheduled: tuple | None = None  # (cases, _schedule's answer) of a new run, from prepare() for plan()
        self.resume, self.force = resume, force
        self.unvouched: str | None = None  # why a resumed run's folder is no run padconf can sign
        if self.dir.exists() and not self.dir.is_dir():
            raise PadconfError(f"{self.dir}: not a directory")
        # held while this Run lives; a new run's folder is locked once prepare() makes it
        self.lock = RunDirLock(self.dir, exclusive=True) if self.dir.is_dir() else None
        if resume:
            # the run resumed is signed as a whole when it ends, but only one padconf made in this
            # folder, unchanged since any signature of it: a copied run, its failures relabelled
            # passes and its run.sig removed, was resumed and signed as padconf's (attack rounds VI
            # and VII). Any other is continued, and left unsigned, saying why
            if self.dir.is_dir() and claimed(self.dir, "run") is False:
                self.unvouched = (f"no run padconf made in this folder (its {MARK} is missing, of another folder "
                                  "or another command's)")
            elif (self.dir / SIGNATURE).exists() and signature_of(self.dir, SIGNED) != Signature.SIGNED:
                self.unvouched = f"changed since padconf signed it ({SIGNATURE})"
            self.config = self._recorded_config()
            # run.json is a file in a folder anyone may have written: it may ask for registered
            # runtimes, but a module:Class is imported, and a spec folder read, only when the user
            # names it again
            named_again(self.config.specs_dir, named_specs_dir, self.run_json)
            cases_dirs_named_again(self.config.cases_dir, named_cases_dirs, self.run_json)
            # a registered runtime's variant (openvino[threads=1]) imports nothing but padconf's own adapter
            unnamed = [r for r in self.config.runtimes
                       if split_variant(r)[0] not in registry() and r not in named_runtimes]
            if unnamed:
                raise PadconfError(f"--resume continues {self.dir} as its run.json records it, and imports the "
                                   f"module:Class runtime {unnamed[0]!r} it names only when you name it again: "
                                   f"--runtime {' '.join(self.config.runtimes)}")
        else:
            if (self.run_json.exists() or self.results_path.exists()) and not force:
                raise PadconfError(f"{self.dir} holds a run already: --resume continues it, --force replaces it")
            self.config = config or RunConfig()

    def _recorded_config(self) -> RunConfig:
        if not self.run_json.exists():
            raise PadconfError(f"{self.dir}: nothing to resume (no run.json)")
        doc = self._run_doc()
        try:
            return RunConfig(**{k: v for k, v in doc.items() if k not in (CASE_COUNT, RESULTS_WRITTEN)})
        except PadconfError as exc:
            raise CaseError(f"{self.run_json}: malformed: {exc}") from None

    def _run_doc(self):
        return read_run_json(self.run_json)

    def prepare(self, cases: list[Case] | None = None) -> list[Case]:
        """The run's cases: drawn and written (a new run), or read back (a resumed one). A
        cases.jsonl that is missing, torn or short of run.json's count is drawn again: the
        same config draws the same cases. ``cases``, when given, are the new run's instead.
        A new run writes nothing until its cases are drawn and some runtime can run some of
        them: a misspelt spec id or an unavailable runtime leaves the directory as it was."""
        self._spawn_runtimes()  # they import their runtimes while the cases are drawn
        if self.resume:
            (self.dir / SIGNATURE).unlink(missing_ok=True)  # what it signed changes from here on
            if set_torn_line_aside(self.results_path):
                self.notes.append(f"{self.results_path.name}: a torn last line was set aside in "
                                  f"{self.results_path.name}.torn; its case runs again")
            doc = self._run_doc()
            recorded = doc.get("case_count")
            if doc.pop(RESULTS_WRITTEN, None) is not None:  # under way again, until execute counts its rows
                write_atomically(self.run_json, json.dumps(doc, indent=2))
            if set_torn_line_aside(self.cases_path):
                self.notes.append(f"{self.cases_path.name}: torn; its cases were drawn again")
            else:
                cases = decoded_cases(read_jsonl(self.cases_path), self.cases_path, self.config.specs_dir,
                                      {s.id for s in load_specs(self.config.specs_dir, self.config.specs)})
                if cases and recorded == len(cases):
                    return cases
                if cases:
                    self.notes.append(f"{self.cases_path.name}: {len(cases)} of {recorded} cases; drawn again")
        started = time.monotonic()
        if cases is not None and not self.resume:
            lines = [json.dumps(c.to_json()) for c in cases]
        else:  # the drawn lines are written as they are, not encoded again
            lines = build_cases(self.config, self.jobs)
            cases = [Case.from_json(json.loads(line)) for line in lines]
        chosen = self.config.case_filter()  # --mode, --dtype, -k: cases.jsonl holds the cases taken
        if chosen.active and cases:
            taken = {id(c) for c in chosen.apply(cases)}
            lines, cases = map(list, zip(*[(line, c) for line, c in zip(lines, cases) if id(c) in taken]))
        self.stats["draw_seconds"] = round(time.monotonic() - started, 2)
        if (size := sum(len(line) + 1 for line in lines)) > MAX_JSONL_BYTES:  # JSON is ASCII: a byte a character
            raise PadconfError(f"{self.cases_path}: the cases take {size} bytes written, more than the "
                               f"{MAX_JSONL_BYTES} padconf reads back of a run (report, --resume): fewer or smaller "
                               "test folders")
        if not self.resume:
            self._scheduled = (cases, self._schedule(cases, done=set()))  # raises where nothing can run
            try:
                if (self.run_json.exists() or self.results_path.exists()) and not self.force:
                    raise PadconfError(f"{self.dir} holds a run already: --resume continues it, "
                                       "--force replaces it")
                make_folder(self.dir)  # no link on the way
                if self.lock is None:  # made meanwhile by another padconf, which may have written a run
                    self.lock = RunDirLock(self.dir, exclusive=True)
                    if (self.run_json.exists() or self.results_path.exists()) and not self.force:
                        raise PadconfError(f"{self.dir} holds a run already: --resume continues it, "
                                           "--force replaces it")
                claim_folder(self.dir, self.force, kind="run")  # a user's files in it are not replaced
                for stale in RUN_FILES:  # --force: nothing of the run replaced stays
                    (self.dir / stale).unlink(missing_ok=True)
            except OSError as exc:
                raise PadconfError(f"{self.dir}: cannot write the run directory: {exc.strerror}") from None
        write_atomically(self.cases_path, "".join(line + "\n" for line in lines))
        write_atomically(self.run_json, json.dumps({**asdict(self.config), "case_count": len(cases)}, indent=2))
        return cases

    def _spawn_runtimes(self) -> None:
        """Start every runtime's zygote, not waiting for any: their imports run side by side and
        alongside the drawing (which forks this process: it starts no thread here)."""
        for name in self.config.runtimes:
            if name not in self._starting:
                self._starting[name] = Worker(name, self.config.memory_mb, self.config.timeout,
                                              compile_timeout=self.config.compile_timeout)
                self._starting[name].spawn()

    def plan(self, cases: list[Case]) -> list[tuple[str, str, list[Case]]]:
        """(runtime, placement, [cases]) batches still to run, cases with one model key
        kept together; what cannot run goes to ``notes``, and every case a runtime's adapter
        cannot express gets its skipped row now. Never empty for a run that has not finished:
        a run that would execute nothing is an error."""
        scheduled, self._scheduled = self._scheduled, None
        if scheduled is not None and scheduled[0] is cases:  # prepare() scheduled this new run
            batches, skipped = scheduled[1]
        else:
            done = read_results(self.results_path)
            check_rows_of_cases(done, {c.id for c in cases}, self.results_path)
            check_rows_of_run(done, {"runtimes": self.config.runtimes, "specs": self.config.specs,
                                     "compile_budget": self.config.compile_budget}, self.results_path, cases)
            batches, skipped = self._schedule(cases, {row_key(r) for r in done})
        with open_to_append(self.results_path) as out:  # every case in scope gets its row
            rows = RowsFile(self.results_path, out.tell())
            for name, placement, case, why in skipped:
                out.write(rows.line(judged_row(name, placement, case, Outcome(skipped=why), Status.OK,
                                                target=self.targets.get(name))))
        return batches

    def _schedule(self, cases: list[Case], done: set) -> tuple[list, list]:
        """The batches to run and the (runtime, placement, case, why) rows to skip, for the
        cases not ``done``, from what each runtime's worker says it can run."""
        order = plan_order(cases)
        self._case_rank = {c.id: i for i, c in enumerate(order)}
        pairs = sorted({(c.spec, c.dtype) for c in cases})
        batches, skipped = [], []
        self._spawn_runtimes()
        for name in self.config.runtimes:
            worker = self._starting.pop(name)
            about = worker.describe(pairs)
            if about["unavailable"]:
                self.notes.append(f"runtime {name} unavailable: {about['unavailable']}")
                worker.close()
                continue
            self.workers[name] = worker
            self.targets[name] = about.get("target")
            self.notes += [f"{name}: {note}" for note in about.get("notes", [])]
            self._order_independent[name] = worker.order_independent
            mine = runtime_scope(order, pairs, about)
            if len(mine) < len(order):  # an OpenVINO-only runtime and ONNX cases: not its cases at all
                self.notes.append(f"{name}: {len(order) - len(mine)} cases of spec families it does not run "
                                  f"(it runs {', '.join(about['domains'])})")
            unsupported = Counter(why for _, why in mine if why)
            self.notes += [f"{name}: {n} cases skipped: {why}" for why, n in unsupported.items()]
            placements = list(map(Placement, about["placements"]))
            expressed = {placement: [c for c, why in mine if not why] for placement in placements}
            over_budget: set[tuple[Placement, str]] = set()
            why_over = ""
            if about.get("compiles_ahead"):
                self._compiles_ahead.add(name)
                if isinstance(self.config.compile_budget, int):  # else ALL
                    over_budget = self._over_budget(name, expressed, self.config.compile_budget)
                    why_over = not_compiled_why(self.config.compile_budget)
            todo: dict[Placement, list[Case]] = {}
            for placement in placements:
                pending = [(c, why) for c, why in mine if (name, placement, c.id) not in done]
                skipped += [(name, placement, c, why) for c, why in pending if why]
                skipped += [(name, placement, c, why_over) for c, why in pending
                            if not why and (placement, c.id) in over_budget]
                todo[placement] = [c for c, why in pending if not why and (placement, c.id) not in over_budget]
            for placement, cases_todo in todo.items():
                batches += [(name, placement, cases_todo[i:i + BATCH_SIZE])
                            for i in range(0, len(cases_todo), BATCH_SIZE)]
        if not batches and not done:
            self.close()
            raise PadconfError("nothing to run: " + ("; ".join(self.notes) or f"{len(cases)} cases selected"))
        return batches, skipped

    def _over_budget(self, name: str, expressed: dict[Placement, list[Case]],
                     budget: int) -> set[tuple[Placement, str]]:
        """The (placement, case id) pairs the compile budget (padconf.run.compile_budget) leaves
        out for compiler ``name``, of every case it can express (``expressed``), a resumed run's
        done ones included: a resumed run makes the uninterrupted run's choice."""
        out, chosen, models = left_out(expressed, budget)
        self.stats["runtimes"].setdefault(name, {"results": 0, "seconds": 0.0}).update(
            models_chosen=chosen, models_in_all=models)
        if out:
            self.notes.append(f"{name}: {len(out)} results not compiled: budget ({chosen} of "
                              f"{models} models compiled; --compile-budget all compiles every one)")
        return out

    def execute(self, plan, progress=None, jobs: int | None = None) -> None:
        """Run every batch of ``plan``, appending a row to results.jsonl as each case finishes.
        ``jobs`` lanes (default: one per core) share the batches of every runtime but the
        ahead-of-time compilers, each of which runs its batches, in plan order, in a lane of its
        own beside them. Those of a runtime whose answers depend on what its process ran before
        are dealt out first, batch i to lane i mod jobs, and a lane runs them in plan order, one
        worker alive at a time, so
        each lane shows such a runtime the same sequence of cases in every run; then the lanes
        take the order-independent runtimes' batches as each is free, which evens out when they
        end. Once all is done, results.jsonl is rewritten in plan order: the same run gives the
        same file, however the lanes interleaved."""
        # an ahead-of-time compiler's batches: a lane of its own, beside the others' (its builds
        # take seconds, and its adapted compile limits follow the plan's order)
        compilers = [name for name in self.config.runtimes if name in self._compiles_ahead
                     and any(b[0] == name for b in plan)]
        others = [b for b in plan if b[0] not in compilers]
        jobs = max(1, min(jobs or self.jobs, len(others))) if others else 0
        lock = threading.Lock()
        failures: list[BaseException] = []
        dealt = [b for b in others if not self._order_independent.get(b[0])]
        shared = iter([b for b in others if self._order_independent.get(b[0])])

        def take():  # the next shared batch, for whichever lane is free
            while True:
                with lock:
                    batch = next(shared, None)
                if batch is None:
                    return
                yield batch

        def lane(k: int):
            batches = (itertools.chain(dealt[k::jobs], take()) if k < jobs
                       else (b for b in plan if b[0] == compilers[k - jobs]))
            try:
                self._run_lane(k, batches, out, rows, lock, progress)
            except WorkerClosed:
                pass
            except BaseException as exc:  # re-raised in the main thread
                failures.append(exc)
                self.close()  # stop the other lanes too

        lanes = [threading.Thread(target=lane, args=(k,), daemon=True) for k in range(jobs + len(compilers))]
        try:
            with phase("running the cases"), open_to_append(self.results_path) as out:
                rows = RowsFile(self.results_path, out.tell())
                try:
                    for thread in lanes:
                        thread.start()
                    for thread in lanes:
                        while thread.is_alive():
                            thread.join(0.2)  # short waits: Ctrl-C and SIGTERM reach the main thread
                finally:
                    self._close_running()  # on an interrupt: the lanes stop at their next answer
                    for thread in lanes:
                        if thread.ident is not None:
                            thread.join(10)
                if failures:
                    raise failures[0]
            then = getattr(progress, "then", None)  # a front end's Advance: what runs once the results are in
            if then is not None:  # a busy machine's default run spent minutes here, saying nothing
                then(f"writing {RESULTS} in plan order and finding the distinct failures, whose controls run next")
            written = self._sort_results()
            with phase("running the controls"):  # said by then, while they run
                self.notes += run_controls(self.dir, self.config, self.jobs, self._spares, then)
            doc = self._run_doc() if self.run_json.exists() else asdict(self.config)  # prepare() writes it
            write_atomically(self.run_json, json.dumps({**doc, RESULTS_WRITTEN: written}, indent=2))
            if self.unvouched is not None:  # what padconf did not write is never signed as its own
                (self.dir / SIGNATURE).unlink(missing_ok=True)
                self.notes.append(f"not signed: {self.dir} holds {self.unvouched}; its results are the folder's "
                                  "word, not padconf's (run it again into a new folder for a signed run)")
            elif (unsigned := sign(self.dir, SIGNED)) is not None:
                self.notes.append(unsigned)
            self.notes += [f"{name}: worker restarted {f['restarts']} times"
                           for name, f in self.stats["runtimes"].items()
                           if f.get("restarts")]  # one line per runtime, its lanes together
        finally:
            self.close()
            self.stats["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
            write_atomically(self.dir / STATS, json.dumps(self.stats, indent=2))

    def _run_lane(self, k: int, batches, out, rows: RowsFile, lock, progress) -> None:
        worker = None
        try:
            for name, placement, batch in batches:
                if worker is None or worker.adapter != name:
                    self._retire(worker)
                    with lock:  # lane 0 and a compiler's lane take the worker that answered describe
                        worker = self.workers.pop(name, None) if k == 0 or name in self._compiles_ahead else None
                        if worker is None:
                            worker = Worker(name, self.config.memory_mb, self.config.timeout,
                                            compile_timeout=self.config.compile_timeout)
                        if name in self._compiles_ahead:
                            worker.compile_limits = self._compile_limits.setdefault(
                                name, CompileLimits(self.config.compile_timeout))
                        self._lane_workers.add(worker)
                figures = self.stats["runtimes"].setdefault(name, {"results": 0, "seconds": 0.0})
                started = time.monotonic()

                def write(row, figures=figures, name=name):  # bound: the loop moves on
                    with lock:
                        out.write(rows.line(row))
                        out.flush()
                        figures["results"] += 1
                    if progress:
                        progress(name)
                for row in judged_batch(name, placement, batch, worker, self._twin, self.targets.get(name)):
                    write(row)
                with lock:
                    figures["seconds"] = round(figures["seconds"] + time.monotonic() - started, 2)
        finally:
            self._retire(worker)

    def _twin(self, case: Case) -> Case | str:
        """classify.repaired_twin of ``case``, worked out once for all its runtimes and placements."""
        if case.id not in self._twins:  # two lanes may both work it out: the same answer
            self._twins[case.id] = repaired_twin(case, get_spec(case.spec, self.config.specs_dir))
        return self._twins[case.id]

    def _sort_results(self) -> dict[str, int]:
        """results.jsonl in plan order (runtime as configured, placement, case order), each
        (runtime, placement, case) once; how many rows it holds of each runtime (0: none)."""
        lines: dict[tuple, str] = {}
        for line in self.results_path.read_text(encoding="utf-8").splitlines(keepends=True):
            row = json.loads(line)
            lines.setdefault(row_key(row), line)
        runtimes = {name: i for i, name in enumerate(self.config.runtimes)}

        def key(item):
            runtime, placement, case_id = item[0]
            return (runtimes.get(runtime, len(runtimes)), placement != Placement.INPUTS, placement,
                    self._case_rank.get(case_id, len(self._case_rank)))
        write_atomically(self.results_path, "".join(line for _, line in sorted(lines.items(), key=key)))
        held = Counter(runtime for runtime, _, _ in lines)
        return {name: held[name] for name in self.config.runtimes}

    def _retire(self, worker: Worker | None) -> None:
        if worker is None:
            return
        with self._stats_lock:
            self._lane_workers.discard(worker)
            spare = not worker.closed and worker.adapter not in self._spares
            if spare:
                self._spares[worker.adapter] = worker
            figures = self.stats["runtimes"].setdefault(worker.adapter, {"results": 0, "seconds": 0.0})
            figures["restarts"] = figures.get("restarts", 0) + worker.restarts
            figures["recycles"] = figures.get("recycles", 0) + worker.recycles
            figures["hang_wait_seconds"] = round(figures.get("hang_wait_seconds", 0) + worker.hang_wait, 2)
            if worker.builds:
                figures["models_built"] = figures.get("models_built", 0) + worker.builds
            worker.builds = 0  # a spare worker's builds are counted here once
        if spare:
            worker.end_process()
        else:
            worker.close()

    def _close_running(self) -> None:
        """End the workers that answered describe and those the lanes run."""
        for worker in list(self.workers.values()) + list(self._lane_workers) + list(self._starting.values()):
            worker.close()
        self.workers.clear()
        self._starting.clear()

    def release(self) -> None:
        """Close the run and give up its directory's lock: what a command does when it is done,
        rather than leave the lock to the Run's collection (a reference cycle would hold it on)."""
        self.close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def close(self) -> None:
        """End every worker: those ``_close_running`` ends and those kept for the controls."""
        self._close_running()
        for worker in list(self._spares.values()):
            worker.close()
        self._spares.clear()
