"""Runtimes run in worker subprocesses, so that a segfault, an abort, a runaway allocation, a hang
or a runtime that writes all over stdout costs one case (verdict crash / timeout), not the run.

Each runtime gets a *zygote*: a process that imports the adapter and its runtime once, and then
forks a fresh worker in milliseconds whenever one is needed (at the start, and after every
crash or hang: a restart used to cost a second of imports). This module is the pool padconf
uses (``Worker``): it feeds a worker batches of cases, gives each case its answer, its crash or
its hang, forks a new worker and resends the rest after one, retries a case that failed after
others alone, and retires a worker that returned an output no reading of the spec gives. The
processes themselves are ``padconf.execution.worker_process`` (padconf's handles on them) and
``padconf.execution.worker_child`` (what runs inside them); what they say, ``padconf.execution.worker_protocol``.
"""
from __future__ import annotations

import atexit
import base64
import json
import math
import resource
import time
import weakref
from collections.abc import Callable, Iterator
from typing import TypeVar

from padconf.adapters import Outcome, split_release
from padconf.cases.case import Case, CaseKind
from padconf.core.dtypes import bit_equal, decode_array, dtype_name, encode_array, from_raw
from padconf.core.errors import InternalFault, PadconfError
from padconf.core.vocabulary import Placement
from padconf.execution.compile_limits import CompileLimits
from padconf.execution.env_worker import Elsewhere
from padconf.execution.worker_process import START_TIMEOUT_S, WorkerProcess, Zygote
from padconf.execution.worker_protocol import BUILDING, Ended, Op, Status, decode_line

DEFAULT_MEMORY_MB = 4096
DEFAULT_TIMEOUT_S = 5.0  # small cases take milliseconds and a first OpenVINO compile ~0.1 s: longer is a hang
MIN_TIMEOUT_S = 0.1  # below a worker's own round trip every case would be a "timeout" charged to the runtime
MAX_TIMEOUT_S = 86400.0  # a day; select() refuses a timeout near 1e308
MAX_MEMORY_MB = 1 << 20  # a worker's cap: 1 TiB
DEFAULT_COMPILE_TIMEOUT_S = 120.0  # an ahead-of-time compiler's build of one Pad model (IREE, TVM)
MAX_ZYGOTE_DEATHS = 5  # a zygote that keeps dying is the runtime's fault, and the run's end


_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()
Ruled = TypeVar("Ruled")  # what a run_judged judgement rules (judging's Ruling: execution imports no judging)


@atexit.register
def close_all() -> None:
    """End every worker still running: called at exit and by padconf's signal handlers."""
    for worker in list(_LIVE):
        worker.close()


class WorkerClosed(PadconfError):
    """The worker was closed (padconf is ending) while a case was being run."""


class RuntimeUnavailable(PadconfError):
    """The runtime cannot be used here (it does not import, or its zygote died or hung
    starting): ``why``, in one line."""

    def __init__(self, runtime: str, why: str):
        super().__init__(f"runtime {runtime} unavailable: {why}")
        self.why = why


def impossible_output(case: Case, output) -> bool:
    """An output no reading of the spec gives (wrong values, another shape or rank, an invalid
    case accepted): what a runtime returns after writing out of bounds, and often dies of, or
    answers differently after, on a later case (OpenVINO's (0, 0) answer to reflect pads beyond
    the dimension; its garbage for mixed-sign edge pads)."""
    if output is None:
        return False
    if case.kind == CaseKind.MUST_REJECT:
        return True
    allowed = ([case.expected] if case.expected is not None
               else [c for c in case.interpretations.values() if c is not None])
    if not allowed and not case.interpretations:  # not classified: nothing to tell it by
        return False
    return not any(a.shape == output.shape and a.dtype == output.dtype and _same_bits(a, output) for a in allowed)


def _same_bits(a, b) -> bool:
    """bit_equal, its answer taken from the bytes where they are identical (every conforming
    answer: one comparison of memory instead of one per element); object arrays (strings) hold
    pointers, not values, and differing bytes may still be NaNs of other payloads: bit_equal."""
    if a.dtype != object and a.tobytes() == b.tobytes():
        return True
    return bit_equal(a, b)


def address_space_mb() -> float:
    """The hard address-space limit workers inherit (``ulimit -v``), in MB; inf when none."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    return math.inf if hard == resource.RLIM_INFINITY else hard // 2**20


def check_memory_cap(memory_mb: int) -> None:
    """A workers' cap above the address-space limit padconf runs under: a worker could not set
    it and would not start (padconf's fault, exit 3, before): one line naming the cap to ask."""
    if memory_mb > address_space_mb():
        raise PadconfError(f"the workers' memory cap of {memory_mb} MB is above this process's address-space limit "
                           f"(ulimit -v: {address_space_mb():.0f} MB): name --memory-mb {address_space_mb():.0f} "
                           "or less")


def run_request(cases: list[Case], placement: Placement, compile_timeout: float | None) -> bytes:
    """The request that has a worker run ``cases`` in ``placement``: a line, its cases in
    Case.wire's form, then their raw bytes in order (worker_protocol)."""
    texts, raws = zip(*(c.wire for c in cases))
    raw = b"".join(raws)
    head = json.dumps({"op": Op.RUN, "placement": placement, "compile_timeout": compile_timeout, "raw": len(raw)})
    return (head[:-1] + ', "cases": [' + ", ".join(texts) + "]}\n").encode() + raw


def _reply(proc: WorkerProcess, line: bytes, deadline: float, decode: bool) -> dict | Ended:
    """A worker's answer to a case: its line read as JSON and, where ``decode`` (not a worker
    elsewhere: Elsewhere.outcome reads env_child's), its output as an array: raw_array's header
    in the line and its bytes after it (read here: CRASH or TIMEOUT where they do not come), or
    encode_array's form (strings)."""
    reply = decode_line(line)
    output = reply.get("output")
    if not decode or not isinstance(output, dict):
        return reply
    if "raw" in output:
        raw = proc.read(output["raw"] if type(output["raw"]) is int else 0, deadline)
        if not isinstance(raw, bytes):
            return raw
        reply["output"] = from_raw(output, lambda n: raw)
    else:
        reply["output"] = decode_array(output)
    return reply


class Worker:
    """One adapter in worker subprocesses; ``describe`` says what it can run, ``run`` yields
    ``(outcome, status)`` per case, in order."""

    def __init__(self, adapter: str, memory_mb: int = DEFAULT_MEMORY_MB, timeout: float = DEFAULT_TIMEOUT_S,
                 start_timeout: float = START_TIMEOUT_S, compile_timeout: float = DEFAULT_COMPILE_TIMEOUT_S):
        check_memory_cap(memory_mb)
        self.adapter, self.memory_mb, self.timeout, self.start_timeout = adapter, memory_mb, timeout, start_timeout
        self.compile_timeout = compile_timeout
        # a compiler's lanes share one: each build's limit, adapted to its graph; None: compile_timeout
        self.compile_limits: CompileLimits | None = None
        self.builds = 0  # models its workers announced building (compiled, or taken from the compile cache)
        self.zygote: Zygote | None = None
        self.proc: WorkerProcess | None = None
        self._closed = False
        self.restarts = 0  # workers that died or hung
        self.zygote_deaths = 0  # zygotes found gone: not a case's doing
        self.recycles = 0  # workers ended after an impossible output, before their next case
        self.hang_wait = 0.0  # seconds spent waiting on cases that then timed out
        # where the last answer came from: its process and how many cases that process ran
        # before it, so that a state-dependent failure can be replayed (padconf.gate.compare)
        self.placed: tuple[str, int] | None = None
        # a release other than the installed one ("onnxruntime@1.24.4"): its workers run in an
        # environment of their own, padconf building what each case is sent as
        self.elsewhere = Elsewhere(adapter) if split_release(adapter)[1] else None
        _LIVE.add(self)

    @property
    def closed(self) -> bool:
        return self._closed

    def spawn(self) -> None:
        """Start the runtime's zygote if need be, without waiting for it to import the runtime;
        a dead one is counted and replaced (from any thread: worker_process.start_process)."""
        if self.zygote is None or not self.zygote.alive:
            if self.zygote is not None:
                self.zygote_deaths += 1
                self.zygote.close()  # dead: its socket, pidfd and scratch folder go with it
            self.zygote = Zygote(self.adapter, self.memory_mb, self.start_timeout,
                                 self.elsewhere.command if self.elsewhere else None)

    def _zygote(self) -> Zygote:
        """The runtime's zygote, started if need be; RuntimeUnavailable if it cannot be."""
        self.spawn()
        zygote = self.zygote
        assert zygote is not None  # spawn() started one
        try:
            why = zygote.ready["unavailable"]
        except PadconfError as exc:
            zygote.close()
            self.zygote = None
            raise RuntimeUnavailable(self.adapter, str(exc)) from None
        if why:
            raise RuntimeUnavailable(self.adapter, why)
        return zygote

    @property
    def order_independent(self) -> bool:
        """Adapter.order_independent of its runtime, as its zygote says (RuntimeUnavailable if
        it cannot be started). Such a runtime gets its cases a batch at a time; any other gets
        the next case only once padconf has judged its last answer, so that a worker ended after
        an impossible answer has computed nothing on that heap, not even a build a later worker
        takes up (OpenVINO's exports to the zygote's scratch folder, a compiler's compile cache)."""
        return bool(self._zygote().ready.get("order_independent"))

    def start(self) -> None:
        """A fresh worker process, forked from the zygote; a zygote found gone (killed, or out of
        memory) is started again, up to MAX_ZYGOTE_DEATHS times over the worker's life."""
        while True:
            self._check_open()
            try:
                self.proc = WorkerProcess(self._zygote(), self.start_timeout)
                return
            except RuntimeUnavailable:
                raise
            except PadconfError as exc:
                if not self._zygote_died():
                    raise InternalFault(f"runtime {self.adapter}: {exc}") from None

    def _zygote_died(self) -> bool:
        """Whether the zygote is gone and may be started again (spawn counts it): False once it
        has died MAX_ZYGOTE_DEATHS times."""
        return (not self._closed and self.zygote is not None and not self.zygote.alive
                and self.zygote_deaths < MAX_ZYGOTE_DEATHS)

    def describe(self, pairs: list[tuple[str, str]]) -> dict:
        """``{"unavailable", "version", "placements", "supports"}``, asked of the zygote: a plugin
        that segfaults or hangs while loading or answering is "unavailable", never padconf's end."""
        try:
            answer = self._zygote().ask({"op": Op.DESCRIBE, "pairs": [list(p) for p in pairs]},
                                        timeout=self.start_timeout, doing="describing itself")
            if self.elsewhere is not None:  # its zygote knows its version; padconf's side, the rest
                answer = self.elsewhere.describe(answer, pairs)
            return {"unavailable": None, **answer}
        except PadconfError as exc:  # unavailable, or its zygote died or hung answering
            why = exc.why if isinstance(exc, RuntimeUnavailable) else str(exc)
            return {"unavailable": why, "version": None, "placements": [], "domains": [], "supports": []}

    def close(self) -> None:
        self._closed = True
        proc, zygote, self.proc, self.zygote = self.proc, self.zygote, None, None  # another thread may close too
        if proc:
            proc.kill()
        if zygote:
            zygote.close()
        _LIVE.discard(self)

    def run(self, cases: list[Case], placement: Placement) -> Iterator[tuple[Outcome, Status]]:
        """Yield ``(outcome, status)`` per case. A case that crashes or hangs a worker which had
        already run other cases is retried alone in a fresh worker: a runtime that corrupted its
        memory on an earlier case must not have its crash pinned on an innocent one. A case
        whose answer was padconf's own fault (Outcome.fault: the worker has ended) runs again in
        a fresh worker, once: what it does there is its result, a fault again included."""
        for outcome, status, _ in self.run_judged(cases, placement):
            yield outcome, status

    def run_judged(self, cases: list[Case], placement: Placement,
                   judgement: Callable[[Case, Outcome, Status], tuple[Ruled, bool]] | None = None
                   ) -> Iterator[tuple[Outcome, Status, Ruled | None]]:
        """``run``'s, with each case's judgement: ``(outcome, status, judgement(...)[0])`` per case,
        ``judgement`` returning what it rules and whether the output is one no reading gives
        (impossible_output's question, answered from the same comparison), which retires the
        worker; without one, impossible_output asks it and the ruling is None."""
        for case, (outcome, status, fresh) in zip(cases, self._raw(cases, placement)):
            if outcome.fault:
                (retry, retry_status, _), = self._raw([case], placement)
                retry.note = "; ".join(filter(None, (f"padconf's own fault in the worker that ran it first "
                                                     f"({outcome.fault}); run again in a fresh worker", retry.note)))
                outcome, status, fresh = retry, retry_status, True
            if status != Status.OK and not fresh:  # what it does alone is its own verdict, whatever it is
                (retry, retry_status, _), = self._raw([case], placement)
                if retry_status != status:
                    retry.note = f"{status} when run after other cases ({outcome.error}); alone: " \
                                 + ("it ran" if retry_status == Status.OK else retry_status)
                outcome, status = retry, retry_status
            ruling, impossible = (judgement(case, outcome, status) if judgement is not None
                                  else (None, status == Status.OK and impossible_output(case, outcome.output)))
            if impossible and self.proc is not None:
                self.end_process()  # a runtime that returns this has often corrupted its memory:
                self.recycles += 1  # the next case gets a fresh worker, not its heap
            yield outcome, status, ruling

    def run_alone(self, case: Case, placement: Placement) -> tuple[Outcome, Status]:
        """``(outcome, status)`` of ``case`` in a worker process of its own, ended after it."""
        self.end_process()  # nothing ran there before it
        (outcome, status, _), = self._raw([case], placement)
        self.end_process()  # nothing runs on its heap after it
        return outcome, status

    def replay(self, history: list[tuple[Case, Placement]], case: Case, placement: Placement) -> tuple[Outcome, Status]:
        """``(outcome, status)`` of ``case`` run in a fresh worker process right after the
        ``(case, placement)`` pairs of ``history``, in order, ended after it."""
        self.end_process()
        for earlier, earlier_placement in history:
            for _ in self._raw([earlier], earlier_placement):
                pass
        (outcome, status, _), = self._raw([case], placement)
        self.end_process()
        return outcome, status

    def run_model(self, model: bytes, feeds: dict,
                  timeout: float | None = None) -> tuple[list | None, str | None, Status]:
        """``(outputs, error, status)`` of a whole ONNX model run alone in a worker process of its
        own: outputs in graph order, or the runtime's error; its status OK, CRASH or TIMEOUT
        (after ``timeout`` seconds, default the worker's). An answer that was padconf's own fault
        (adapters.faults) is asked again of a fresh worker, once; a second is InternalFault,
        never the runtime's error."""
        if self.elsewhere is not None:
            raise PadconfError(f"{self.adapter} runs Pad cases in an environment of its own, not a user's whole model")
        for _ in range(2):
            outputs, error, status, fault = self._model_once(model, feeds, timeout)
            if not fault:
                return outputs, error, status
        raise InternalFault(f"runtime {self.adapter}: padconf's own fault running a whole model, not the "
                            f"runtime's answer: {fault}")

    def _model_once(self, model: bytes, feeds: dict,
                    timeout: float | None) -> tuple[list | None, str | None, Status, str | None]:
        self.end_process()
        self.start()
        timeout = timeout or self.timeout
        proc, deadline = self.proc, time.monotonic() + timeout
        assert proc is not None  # start() forked it
        payload = json.dumps({"op": Op.MODEL, "model": base64.b64encode(model).decode(),
                              "feeds": {k: encode_array(v, dtype_name(v.dtype)) for k, v in feeds.items()}})
        sent = proc.send(payload.encode() + b"\n", deadline)
        line, limit, _ = (self._answer(proc, max(0.0, deadline - time.monotonic())) if sent == Status.OK
                          else (sent, f"{timeout:g} s", None))
        try:
            if line is Status.TIMEOUT:
                return None, f"no answer within {limit}", Status.TIMEOUT, None
            if line is Status.CRASH:
                return None, proc.death(), Status.CRASH, None
            reply = decode_line(line)
            outputs = None if reply["outputs"] is None else [decode_array(a) for a in reply["outputs"]]
            # a compile that died is TIMEOUT or CRASH
            return outputs, reply["error"], Status(reply["status"]), reply.get("fault")
        finally:
            self.end_process()

    def _answer(self, proc: WorkerProcess, timeout: float,
                compile_timeout: float | None = None) -> tuple[bytes | Ended, str, float | None]:
        """The worker's next answer (or CRASH / TIMEOUT) within ``timeout`` seconds, how long it
        had, in words, and how long since it announced a build (None: it built nothing): a
        build adds the compile time limit (``compile_timeout``, default the worker's)."""
        compile_timeout = compile_timeout or self.compile_timeout
        limit, built = f"{timeout:g} s", None
        line = proc.readline(time.monotonic() + timeout)
        while line == BUILDING.encode():
            self.builds += 1
            built = time.monotonic()
            limit = f"{compile_timeout:g} s of compiling (the compile time limit) and {timeout:g} s"
            line = proc.readline(time.monotonic() + compile_timeout + timeout)
        return line, limit, None if built is None else time.monotonic() - built

    def end_process(self) -> None:
        """End its worker process, if any, keeping its zygote: the next case forks a fresh one."""
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()

    def _check_open(self) -> None:
        if self._closed:  # closed from another thread: what its process "answered" since is not its own
            raise WorkerClosed(f"worker for {self.adapter} closed")

    def _raw(self, cases: list[Case], placement: Placement) -> Iterator[tuple[Outcome, Status, bool]]:
        """``(outcome, status, fresh)`` per case; ``fresh`` is true when the case was the first
        one its worker process ran."""
        try:
            yield from self._answers(cases, placement)
        except (OSError, ValueError):  # its pipes closed under it, from another thread: not a fault
            if self._closed:
                raise WorkerClosed(f"worker for {self.adapter} closed") from None
            raise

    def _answers(self, cases: list[Case], placement: Placement) -> Iterator[tuple[Outcome, Status, bool]]:
        pending = list(cases)
        while pending:
            self._check_open()
            if self.proc is None or not self.proc.alive:
                if self.proc is not None:
                    self.restarts += 1
                    self.proc.kill()
                self.start()
            proc = self.proc
            assert proc is not None  # start() forked it
            batch = pending[:] if self.order_independent else pending[:1]  # a copy: answers pop pending
            compile_timeout = (self.compile_limits.for_case(batch[0], placement)
                               if self.compile_limits is not None and len(batch) == 1 else self.compile_timeout)
            payload = (self.elsewhere.payload(batch, placement) if self.elsewhere is not None else
                       run_request(batch, placement, compile_timeout))
            sent = proc.send(payload, time.monotonic() + self.timeout)
            self._check_open()
            if sent != Status.OK:  # a worker that stops reading its input is hung or dead
                self.placed = (proc.name, proc.served)
                if sent is Status.TIMEOUT:
                    proc.kill()
                    pending.pop(0)
                    yield (Outcome(error=f"stopped reading its input for {self.timeout:g} s"), Status.TIMEOUT,
                           proc.served == 0)
                else:
                    death = proc.death()
                    if not self._zygote_died():  # else it died with its zygote: the case runs again
                        pending.pop(0)
                        yield Outcome(error=death), Status.CRASH, proc.served == 0
                continue
            for _ in batch:
                if proc is not self.proc:  # recycled by run(): the rest goes to a fresh worker
                    break
                asked = time.monotonic()
                line, limit, built = self._answer(proc, self.timeout, compile_timeout)
                reply = (_reply(proc, line, time.monotonic() + self.timeout, self.elsewhere is None)
                         if isinstance(line, bytes) else line)
                self._check_open()
                case = pending.pop(0)
                if built is not None and self.compile_limits is not None:
                    timed_out = reply is Status.TIMEOUT or (
                        isinstance(reply, dict) and reply["status"] == Status.TIMEOUT)
                    self.compile_limits.record(case, placement, built, timed_out)
                shortened = (f"the compile time limit was {compile_timeout:g} s, not {self.compile_timeout:g} s: "
                             "a graph of its family (op, mode, pads constant or fed) ran out of the whole limit "
                             "before") if compile_timeout < self.compile_timeout else None
                fresh = proc.served == 0
                self.placed = (proc.name, proc.served)
                proc.served += 1
                if reply is Status.TIMEOUT:  # alive but silent: a hang
                    self.hang_wait += time.monotonic() - asked
                    proc.kill()
                    yield Outcome(error=f"no answer within {limit}", note=shortened), Status.TIMEOUT, fresh
                    break  # restart and resend the rest
                if reply is Status.CRASH:
                    death = proc.death()
                    if self._zygote_died():  # the worker died with its zygote: the case did not end it
                        pending.insert(0, case)  # run again in a worker of the zygote started anew
                        break
                    yield Outcome(error=death), Status.CRASH, fresh
                    break
                assert isinstance(reply, dict)  # neither CRASH nor TIMEOUT
                if reply["status"] != Status.OK:  # it reported its own end (out of memory) and exits
                    proc.kill()
                    # (a time-out the compile cache kept from an earlier, longer limit says so itself)
                    yield (Outcome(error=reply["error"], note=shortened if f"within {compile_timeout:g} s"
                                   in (reply["error"] or "") else None), Status(reply["status"]), fresh)
                    break
                if reply.get("fault"):  # padconf's own fault, not the runtime's answer: the worker ends itself
                    self.end_process()  # not a restart: no case of the runtime's ended it
                    yield Outcome(fault=reply["fault"], printed=reply.get("printed"), seconds=reply.get("seconds")), \
                        Status.OK, fresh
                    break
                if self.elsewhere is not None:
                    yield self.elsewhere.outcome(reply), Status.OK, fresh
                    continue
                yield Outcome(reply["output"], reply.get("error"), bool(reply.get("not_implemented")),
                              printed=reply.get("printed"), seconds=reply.get("seconds"), skipped=reply.get("skipped"),
                              note=reply.get("note")), Status.OK, fresh
