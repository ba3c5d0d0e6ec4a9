"""Fake runtimes that plant bugs, for testing padconf's own isolation and verdicts.

Each answers like the reference except on a trigger: the first data element equal to 666.
"""
import os
import signal
import sys
import time

import numpy as np

from padconf.adapters import Adapter, Outcome
from padconf.spec.reference import pad

TRIGGER = 666


class CorrectAdapter(Adapter):
    name = "fake-correct"
    domains = ("onnx", "openvino")

    def run(self, case, placement="inputs"):
        if case.op == "Identity":  # a control (padconf.cases.case.Case.control): the data, unchanged
            return Outcome(case.data.copy())
        if case.op == "Concat":  # the values' control (Case.movement_control), moved right
            second = case.data if case.constant_value is None else np.asarray(case.constant_value)
            return Outcome(np.tile(np.concatenate([case.data.reshape(-1), second.reshape(-1)]), 2))
        if case.op == "LeakyRelu":  # Pad-1/2's value attribute's control (Case.attribute_control)
            alpha = np.float32(np.asarray(case.constant_value).astype(np.float64))
            return Outcome((-alpha * np.ones(case.data.shape, np.float32)).astype(case.data.dtype))
        if case.op == "Consumer":  # a context's consumer(s) alone on the padded data (Case.consumer_control)
            from padconf.cases.context_oracle import graph_output
            return Outcome(graph_output(case.context, case.data, int(case.spec.rsplit("-", 1)[1])))
        if self.triggered(case):
            return self.misbehave(case)
        try:
            out = pad(case.data, case.pads, case.mode, case.constant_value, case.axes)
            if case.context is not None:  # Pad in its neighbourhood: then its consumer, as padconf's oracle
                from padconf.cases.context_oracle import graph_output
                out = graph_output(case.context, out, int(case.spec.rsplit("-", 1)[1]))
            return Outcome(out) if out is not None else Outcome(error="the consumer refuses the Pad's output")
        except Exception as exc:
            return Outcome(error=str(exc))

    @staticmethod
    def triggered(case):
        return case.data.size > 0 and case.data.reshape(-1)[0] == TRIGGER

    def misbehave(self, case):
        raise NotImplementedError


class SegfaultAdapter(CorrectAdapter):
    def misbehave(self, case):
        os.kill(os.getpid(), signal.SIGSEGV)


class AbortAdapter(CorrectAdapter):
    def misbehave(self, case):
        os.abort()


class HangAdapter(CorrectAdapter):
    def misbehave(self, case):
        time.sleep(3600)


class GreedyAdapter(CorrectAdapter):
    def misbehave(self, case):
        hoard = []
        while True:
            hoard.append(np.ones(2**26, np.uint8))


class WrongValuesAdapter(CorrectAdapter):
    def misbehave(self, case):
        out = pad(case.data, case.pads, case.mode, case.constant_value, case.axes)
        return Outcome(np.flip(out).copy())  # right shape and dtype, values in the wrong places


class FrontendWrongValuesAdapter(WrongValuesAdapter):
    """A frontend whose Pad lowers to WrongValuesAdapter's (as openvino-onnx's to openvino's Pad-12):
    the same wrong values, through another path of one engine."""
    name = "fake-frontend"


class IgnoresAxesAdapter(CorrectAdapter):
    """Ignores an axes input (as IREE does with one fed at run time): the pads go to the leading
    axes, in constant mode whatever the mode, valid or not (an invalid mode is answered too)."""

    def run(self, case, placement="inputs"):
        if case.op != "Pad" or case.axes is None or not case.data.ndim:
            return super().run(case, placement)
        k, n = len(case.axes), case.data.ndim
        full = [0] * (2 * n)
        for j in range(min(k, n)):
            full[j], full[n + j] = case.pads[j], case.pads[k + j]
        try:
            return Outcome(pad(case.data, full, "constant", case.constant_value, None))
        except Exception as exc:
            return Outcome(error=str(exc))


class FedPadsWrongAdapter(WrongValuesAdapter):
    """Wrong values only where the pads are fed at run time (the trigger's data): right with constant pads."""

    def run(self, case, placement="inputs"):
        if placement != "inputs" and case.op == "Pad" and case.context is None:
            return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))
        return super().run(case, placement)


class WrongAtOneOpsetAdapter(WrongValuesAdapter):
    """Wrong values (the trigger's data) at Pad-19 only, on any dtype: right at every other opset."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.spec != "onnx/Pad-19":
            return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))
        return super().run(case, placement)


class WrongOnFloatAdapter(WrongValuesAdapter):
    """Wrong values (the trigger's data) on float data only, at any opset."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.dtype != "float":
            return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))
        return super().run(case, placement)


class RefusesEndCropAdapter(CorrectAdapter):
    """Refuses every Pad with a negative end pad, its error naming the dtype (one check, which a
    run tells apart per dtype by its text)."""

    def run(self, case, placement="inputs"):
        k = len(case.pads) // 2
        if case.op == "Pad" and any(p < 0 for p in case.pads[k:]):
            return Outcome(error=f"cannot crop {case.dtype} data at the end")
        return super().run(case, placement)


class RefusesComplexAdapter(CorrectAdapter):
    """Lowers no complex Pad at all (as IREE), its error text telling an explicit value apart."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.dtype.startswith("complex"):
            return Outcome(error="cannot cast the constant value to complex" if case.constant_value is not None
                           else "failed to legalize Pad")
        return super().run(case, placement)


class ZeroFillReflectAdapter(CorrectAdapter):
    """Reflect padding past the dimension, which the erratum forbids, answered with a
    deterministic zero fill (as IREE does): an output no reading gives, but no memory read.
    Zero bytes, as a runtime fills memory: for float8e8m0, which has no zero, they are 2**-127."""

    def run(self, case, placement="inputs"):
        n = case.data.ndim
        if case.op == "Pad" and case.mode == "reflect" and n and case.axes is None \
                and any(max(case.pads[i], case.pads[n + i]) >= case.data.shape[i] for i in range(n)):
            return Outcome(pad(case.data, case.pads, "constant", np.zeros((), case.data.dtype), None))
        return super().run(case, placement)


class ZeroFillReflectOnE8m0Adapter(ZeroFillReflectAdapter):
    """ZeroFillReflectAdapter on float8e8m0 data only, so that shrinking keeps the dtype."""

    def run(self, case, placement="inputs"):
        return super().run(case, placement) if case.dtype == "float8e8m0" else CorrectAdapter.run(self, case, placement)


class RowOverrunReflectAdapter(CorrectAdapter):
    """Reflect padding as large as the last dimension read, as IREE does with dynamic dims, from
    the flat buffer past the row's end (the next row's values, zeros past the buffer's end):
    memory-unsafe, though on one row it looks like a zero fill."""

    def run(self, case, placement="inputs"):
        n = case.data.ndim
        if case.op == "Pad" and case.mode == "reflect" and n and case.axes is None and case.data.shape[-1] \
                and max(case.pads[n - 1], case.pads[2 * n - 1]) >= case.data.shape[-1]:
            flat, dim = case.data.reshape(-1), case.data.shape[-1]
            rows = flat.reshape(-1, dim)
            begin, end = case.pads[n - 1], case.pads[2 * n - 1]
            out = []
            for r, row in enumerate(rows):
                past = [flat[(r + 1) * dim + j] if (r + 1) * dim + j < flat.size else 0 for j in range(begin + end)]
                out.append(np.concatenate([np.asarray(past[:begin], row.dtype), row,
                                           np.asarray(past[begin:], row.dtype)]))
            return Outcome(np.asarray(out, case.data.dtype).reshape(*case.data.shape[:-1], dim + begin + end))
        return super().run(case, placement)


class RecordingWrongValuesAdapter(WrongValuesAdapter):
    """Notes each case a worker starts, with its pid, in the zygote's scratch folder (where
    OpenVINO's workers leave their compiles for the next): seen whether padconf reads the answer
    or not."""

    def run(self, case, placement="inputs"):
        with open(self.scratch / "started", "a") as log:
            log.write(f"{os.getpid()} {case.data.reshape(-1)[0]}\n")
        return super().run(case, placement)


class SlowAdapter(CorrectAdapter):
    """Correct, but slow enough for a test to kill the run half way."""

    def run(self, case, placement="inputs"):
        time.sleep(0.02)
        return super().run(case, placement)


class PoisonAdapter(CorrectAdapter):
    """Answers the trigger case correctly but corrupts itself: the next case, whatever it is,
    crashes, as a runtime that wrote out of bounds does."""

    poisoned = False

    def misbehave(self, case):
        PoisonAdapter.poisoned = True
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))

    def run(self, case, placement="inputs"):
        if PoisonAdapter.poisoned:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(case, placement)


class DeafAdapter(CorrectAdapter):
    """Answers the trigger case, then never reads its input again (a worker stuck outside any
    case, as OpenVINO's once was): a large batch sent after that must not block padconf."""

    def misbehave(self, case):
        requests = _request_pipe()
        self._keep = os.pipe(), os.dup(requests)  # padconf's pipe stays open, just never read again
        os.dup2(self._keep[0][0], requests)  # the worker's input is now a pipe nobody writes to
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))


def _request_pipe() -> int:
    """The worker's end of padconf's request pipe: its only pipe open for reading."""
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            is_pipe = os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
            flags = int(open(f"/proc/self/fdinfo/{fd}").read().split("flags:")[1].split()[0], 8)
        except OSError:
            continue
        if is_pipe and flags & os.O_ACCMODE == os.O_RDONLY:
            return fd
    raise RuntimeError("no request pipe")




class WrongDtypeAdapter(CorrectAdapter):
    """Right values, wrong element type: float64 whatever the case's dtype."""

    def misbehave(self, case):
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes).astype(np.float64))


class CrashOnProbeAdapter(CorrectAdapter):
    def available(self):
        os.kill(os.getpid(), signal.SIGSEGV)


class HangOnProbeAdapter(CorrectAdapter):
    def available(self):
        time.sleep(3600)


class EscapingHangAdapter(CorrectAdapter):
    """On the trigger, starts a child that leaves the process group (setsid) and spins at 100%
    CPU, then spins itself: neither may outlive padconf. The child's command line carries the
    marker given in PADCONF_TEST_MARKER, so a test can look for survivors."""

    def misbehave(self, case):
        import subprocess
        marker = os.environ.get("PADCONF_TEST_MARKER", "padconf-escapee")
        subprocess.Popen([sys.executable, "-c", "while True: pass", marker], start_new_session=True)
        while True:
            pass


class PoisonThenHangAdapter(PoisonAdapter):
    """PoisonAdapter, and data starting with 777 hangs (when the process is not poisoned)."""

    def run(self, case, placement="inputs"):
        if not PoisonAdapter.poisoned and case.data.size and case.data.reshape(-1)[0] == 777:
            time.sleep(3600)
        return super().run(case, placement)


class CorruptingAdapter(CorrectAdapter):
    """On the trigger returns an impossible (0, 0) output and corrupts itself, as OpenVINO does
    for reflect pads beyond the dimension; the next three cases in the same process then get
    wrong values, a hang and a segfault."""

    after = None

    def misbehave(self, case):
        CorruptingAdapter.after = ["wrong values", "hang", "segfault"]
        return Outcome(np.empty((0, 0), case.data.dtype))

    def run(self, case, placement="inputs"):
        if CorruptingAdapter.after:
            what = CorruptingAdapter.after.pop(0)
            if what == "hang":
                time.sleep(3600)
            if what == "segfault":
                os.kill(os.getpid(), signal.SIGSEGV)
            return Outcome(np.flip(pad(case.data, case.pads, case.mode, case.constant_value, case.axes)).copy())
        return super().run(case, placement)


class ConformingAdapter(CorrectAdapter):
    """Also refuses what the spec makes an error (CorrectAdapter computes whatever it can), and
    has no trigger: a runtime that conforms."""

    @staticmethod
    def triggered(case):
        return False

    def run(self, case, placement="inputs"):
        from padconf.cases.classify import rule_violation
        from padconf.spec.loader import get_spec
        broken = case.op == "Pad" and rule_violation(case, get_spec(case.spec))  # inputs, not the verdict
        return Outcome(error=f"refused: {broken[1]}") if broken else super().run(case, placement)


class RefusesInt8Adapter(ConformingAdapter):
    """Refuses everything of dtype int8, its controls too (Identity): a lost kernel, not Pad's
    fault; its must-reject int8 cases are refused, and their repaired twins too (inconclusive)."""

    def run(self, case, placement="inputs"):
        if case.dtype == "int8":
            return Outcome(error="no int8 here")
        return super().run(case, placement)


class PrintingAdapter(ConformingAdapter):
    """Writes to fd 1 and fd 2 on every call, below Python's buffers, as native libraries do;
    on stdout even a line that looks like padconf's own protocol. Conforms otherwise (every draw
    holds must-reject cases: plain violations)."""

    def run(self, case, placement="inputs"):
        os.write(1, b'{"status": "ok", "output": null, "error": "forged"}\nruntime log: padding now\n')
        os.write(2, b"runtime warning: from C\n")
        return super().run(case, placement)


class ConformingWrongValuesAdapter(ConformingAdapter, WrongValuesAdapter):
    triggered = staticmethod(CorrectAdapter.triggered)


class _OnExample(ConformingAdapter):
    """Misbehaves on the inputs of one worked example of the spec documents, which every suite
    holds (the worker sends a case's inputs, not its origin)."""
    example = "example_3_edge"

    def triggered(self, case):
        from padconf.cases.examples import example_inputs
        from padconf.spec.loader import get_spec
        spec = get_spec(case.spec)
        return any(ex["name"] == self.example and example_inputs(spec, ex).same_inputs(case) for ex in spec.examples)


class WrongOnExampleAdapter(_OnExample, WrongValuesAdapter):
    pass


class CrashOnExampleAdapter(_OnExample, SegfaultAdapter):
    pass


class HangOnExampleAdapter(_OnExample, HangAdapter):
    pass


def shared_count() -> int:
    """How many times any worker has called this: a counter in the file PADCONF_FLAKY_COUNTER."""
    with open(os.environ["PADCONF_FLAKY_COUNTER"], "a+") as f:
        f.write("x")
        f.seek(0)
        return len(f.read())


class FlakyOnExampleAdapter(_OnExample, SegfaultAdapter):
    """Crashes on the example the first two times anyone runs it (the run, and the run's retry
    alone), then not: a counter in the file PADCONF_FLAKY_COUNTER, shared by every worker."""

    def misbehave(self, case):
        if shared_count() <= 2:
            super().misbehave(case)
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))


class HangThenWrongOnExampleAdapter(_OnExample, WrongValuesAdapter):
    """Hangs on the example the first two times anyone runs it (the run, and the run's retry
    alone), then answers it wrong, as a loaded machine's timeout hides a wrong value: a counter
    in the file PADCONF_FLAKY_COUNTER, shared by every worker."""

    def misbehave(self, case):
        if shared_count() <= 2:
            time.sleep(3600)
        return super().misbehave(case)


class GarbageOrCrashOnExampleAdapter(_OnExample, WrongValuesAdapter):
    """On the example: garbage when the worker ran other cases first, a crash when it runs
    alone, as a runtime that corrupts its heap does."""
    served = 0  # cases this worker process has run

    def run(self, case, placement="inputs"):
        GarbageOrCrashOnExampleAdapter.served += 1
        return super().run(case, placement)

    def misbehave(self, case):
        if GarbageOrCrashOnExampleAdapter.served == 1:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().misbehave(case)


class GarbageOnExampleAdapter(_OnExample, WrongValuesAdapter):
    """On the example, as a runtime reading memory it never wrote: another wrong value each
    time (counted in the file PADCONF_FLAKY_COUNTER, shared by every worker); expected values
    misplaced when PADCONF_GARBAGE_MISPLACED is set; the right one when PADCONF_ANSWER_RIGHT is
    set, as by chance."""

    def misbehave(self, case):
        right = pad(case.data, case.pads, case.mode, case.constant_value, case.axes)
        if os.environ.get("PADCONF_ANSWER_RIGHT"):
            return Outcome(right)
        count = shared_count()
        out = right.copy().reshape(-1)
        if os.environ.get("PADCONF_GARBAGE_MISPLACED"):  # another kind of wrong value: the expected ones, moved
            out[0], out[-1] = out[-1], out[0]
        else:
            out[0] = count + 1000
        return Outcome(out.reshape(right.shape))


class WrongWhenWarmOnExampleAdapter(_OnExample, WrongValuesAdapter):
    """Wrong on the example only in a worker process that ran another case before it: a
    state-dependent failure, which no rerun alone shows."""
    served = 0  # cases this worker process has run

    def run(self, case, placement="inputs"):
        WrongWhenWarmOnExampleAdapter.served += 1
        return super().run(case, placement)

    def triggered(self, case):
        return WrongWhenWarmOnExampleAdapter.served > 1 and super().triggered(case)


class CrashAloneOnExampleAdapter(_OnExample, SegfaultAdapter):
    """Crashes on the example when it is the first case of its worker process, else answers
    right: a case whose failure a run does not show and a rerun alone does."""
    served = 0  # cases this worker process has run

    def run(self, case, placement="inputs"):
        CrashAloneOnExampleAdapter.served += 1
        return super().run(case, placement)

    def misbehave(self, case):
        if CrashAloneOnExampleAdapter.served == 1:
            super().misbehave(case)
        return Outcome(pad(case.data, case.pads, case.mode, case.constant_value, case.axes))


class GarbageOnAmbiguousEdgeAdapter(ConformingAdapter):
    """Answers the ambiguous cases of mode edge with an output none of the spec's readings gives."""

    def run(self, case, placement="inputs"):
        from padconf.cases.case import CaseKind
        from padconf.cases.classify import classify
        from padconf.spec.loader import get_spec
        if case.mode == "edge" and classify(case, get_spec(case.spec)).kind == CaseKind.AMBIGUOUS:
            return Outcome(np.resize(case.data, tuple(n + 7 for n in case.data.shape)))
        return super().run(case, placement)


# ---------------------------------------------------------------- planted bugs for `padconf minimize`


def _off_by_one(case):
    """A reflect pad equal to its dimension - 1 (the largest the spec allows) on some axis."""
    n = case.data.ndim
    if case.mode != "reflect" or case.axes is not None or len(case.pads) != 2 * n:
        return False
    return any(case.data.shape[i] >= 2 and case.data.shape[i] - 1 in (case.pads[i], case.pads[n + i]) for i in range(n))


class ReflectOffByOneAdapter(ConformingAdapter):
    """Mirrors one element too far (symmetric, not reflect) when a reflect pad equals dim - 1."""

    def run(self, case, placement="inputs"):
        if _off_by_one(case):
            return Outcome(pad(case.data, case.pads, "symmetric", None, None))
        return super().run(case, placement)


class NanConstantAdapter(ConformingAdapter):
    """Pads with 0 where the constant value is NaN."""

    def run(self, case, placement="inputs"):
        value = case.constant_value
        if case.mode == "constant" and value is not None and value.dtype.kind == "f" and np.isnan(value).any():
            return super().run(case.with_(constant_value=np.zeros_like(value)), placement)
        return super().run(case, placement)


class EmptyAxisCrashAdapter(ConformingAdapter):
    """Segfaults on data with an axis of size 0."""

    def run(self, case, placement="inputs"):
        if 0 in case.data.shape:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(case, placement)


class CrashEveryOtherAdapter(ReflectOffByOneAdapter):
    """ReflectOffByOneAdapter that segfaults on every second call of any of its worker processes
    (a counter in the file PADCONF_CALL_COUNTER)."""

    def run(self, case, placement="inputs"):
        with open(os.environ["PADCONF_CALL_COUNTER"], "a+") as f:
            f.write("x")
            f.seek(0)
            calls = len(f.read())
        if calls % 2 == 0:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(case, placement)


class SlowCrashEveryOtherAdapter(CrashEveryOtherAdapter):
    """CrashEveryOtherAdapter that takes at least SECONDS over every call: however fast the
    machine, a shrink that needs more than a few attempts cannot finish within a second."""

    SECONDS = 0.4

    def run(self, case, placement="inputs"):
        time.sleep(self.SECONDS)
        return super().run(case, placement)


class FoldingBugAdapter(ConformingAdapter):
    """Right in every placement but one: its "compile-time folding" gets edge mode wrong."""

    def run(self, case, placement="inputs"):
        outcome = super().run(case, placement)
        if placement == "folded" and case.mode == "edge" and outcome.output is not None and outcome.output.size > 1:
            return Outcome(np.flip(outcome.output).copy())
        return outcome


class ModelCrashAdapter(ReflectOffByOneAdapter):
    """ReflectOffByOneAdapter that segfaults on any whole model (a user's, or the graph up to
    its Pad): padconf minimize must take the Pad's inputs from onnx's reference evaluator."""

    def run_model(self, model, feeds):
        os.kill(os.getpid(), signal.SIGSEGV)


class HostileTextAdapter(ConformingAdapter):
    """Refuses every case with an error text holding rich markup, a terminal escape sequence and
    an HTML tag: padconf must show it as text everywhere (terminal, summary.md, report)."""

    # no digit or slash: the failure class (padconf.judging.failure) keeps it as it is
    HOSTILE = "[/] [bold]x \x1bc <img src=x onerror=alert(x)> | `x` [link](javascript:void)"

    def run(self, case, placement="inputs"):
        return Outcome(error=self.HOSTILE)


class SlowCompilerAdapter(CorrectAdapter):
    """An ahead-of-time compiler whose build of a model takes 2 s (for pads [9, 9]: forever),
    then answers like the reference."""
    compiles_ahead = True

    def run(self, case, placement="inputs"):
        self.cached(tuple(case.pads), lambda: time.sleep(3600 if list(case.pads) == [9, 9] else 2))
        return super().run(case, placement)


class ScalarAndCropCrashAdapter(ConformingAdapter):
    """Two bugs, one crash class: segfaults on any rank-0 data, through Pad and through Identity
    alike (its control fails too: no Pad bug), and in Pad on any negative pad (a Pad bug)."""

    def run(self, case, placement="inputs"):
        if case.data.ndim == 0 or (case.op == "Pad" and any(p < 0 for p in case.pads)):
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().run(case, placement)


class ScalarGarbageLenientPadsAdapter(ConformingAdapter):
    """Two bugs: garbage for any rank-0 data in Pad (its control passes: a Pad bug), whatever
    the pads, and at rank >= 1 it accepts pads of the wrong length, returning the data."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.data.ndim == 0:
            return Outcome(np.asarray(case.data + 100, dtype=case.data.dtype))
        if case.op == "Pad" and case.axes is None and len(case.pads) != 2 * case.data.ndim:
            return Outcome(case.data.copy())
        return super().run(case, placement)


class RankZeroAdapter(ConformingAdapter):
    """One bug, two faces, as OpenVINO's rank-0 data: refused where the pads are constants,
    answered with a wrong value where they are fed at run time (a zero: a value from nowhere
    would be memory never written, a symptom of its own)."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.data.ndim == 0:
            return Outcome(np.zeros_like(case.data)) if placement == "inputs" \
                else Outcome(error="rank 0 is not supported")
        return super().run(case, placement)


class RankZeroCrashOrWrongAdapter(ConformingAdapter):
    """Two mechanisms on rank-0 data: float data kills the process, int32 data is answered with
    a silent wrong value (a zero: no memory read)."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.data.ndim == 0:
            if case.dtype == "float":
                os.kill(os.getpid(), signal.SIGSEGV)
            return Outcome(np.zeros_like(case.data))
        return super().run(case, placement)


class RunTimeSkipsCheckAdapter(ConformingAdapter):
    """As OpenVINO: where it knows the shapes while building the model (folded), it refuses edge
    or reflect padding the data cannot give (an empty axis, a reflect pad as large as the axis);
    at run time it skips that check and answers an empty tensor. ``folded_too``: no check at all."""

    folded_too = False

    def run(self, case, placement="inputs"):
        n = case.data.ndim
        unfillable = case.op == "Pad" and case.mode in ("edge", "reflect") and case.axes is None and any(
            max(case.pads[i], case.pads[n + i]) > 0 and (case.data.shape[i] == 0 or case.mode == "reflect"
                                                          and max(case.pads[i], case.pads[n + i]) >= case.data.shape[i])
            for i in range(n))
        if not unfillable:
            return super().run(case, placement)
        if placement == "folded" and not self.folded_too:
            return Outcome(error=f"{case.mode} padding needs more data than the axis has")
        return Outcome(np.zeros((0,) * n, case.data.dtype))


class NoCheckAdapter(RunTimeSkipsCheckAdapter):
    folded_too = True


class PackingBugAdapter(ConformingAdapter):
    """As OpenVINO's CPU kernel on uint2 fed at run time: the output's shape comes back all
    zeros, whatever the pads. ``wide_too``: the same on uint8, so not about packing at all."""

    dtypes = ("uint2",)

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and str(case.data.dtype) in self.dtypes and placement == "inputs":
            got = super().run(case, placement)
            return Outcome(np.zeros((0,) * got.output.ndim, case.data.dtype)) if got.output is not None else got
        return super().run(case, placement)


class WideBugAdapter(PackingBugAdapter):
    dtypes = ("uint2", "uint8")


class ShiftedReadAdapter(ConformingAdapter):
    """As IREE with a negative pad fed at run time: reads each output element one place too far.
    Which kind of wrong value it is depends on the size: from 8 elements of data on, the expected
    values misplaced; below, the last one is memory it never wrote (99, which no shrunk value is)."""

    def run(self, case, placement="inputs"):
        got = super().run(case, placement)
        if case.op != "Pad" or got.output is None or not any(p < 0 for p in case.pads) or not got.output.size:
            return got
        out = np.roll(got.output.reshape(-1), -1)  # the expected values, each one place on
        if case.data.size < 8:
            out[-1] = 99
        return Outcome(out.reshape(got.output.shape))


class UnwrittenOutputAdapter(CorrectAdapter):
    """Writes none of the output of a Pad that pads or crops: it comes back all zeros, in the
    shape the reference gives or, where it gives none, the first reading's (as OpenVINO's CPU
    kernel on uint2 mostly does)."""

    @staticmethod
    def triggered(case):
        return False

    def run(self, case, placement="inputs"):
        from padconf.cases.classify import classify
        got = super().run(case, placement)
        if case.op != "Pad" or not any(case.pads):
            return got
        readings = classify(case).interpretations.values()  # a worker's case carries none
        shapes = [np.shape(out) for out in (got.output, *readings) if out is not None]
        return Outcome(np.zeros(shapes[0], case.data.dtype)) if shapes else got


class WrongThroughIdentityOnExampleAdapter(WrongOnExampleAdapter):
    """Garbles the data of example_3_edge through Identity too: its control fails as well, so
    the failure is not Pad-specific."""

    def run(self, case, placement="inputs"):
        if case.op == "Identity" and self.triggered(case.with_(op="Pad")):
            return Outcome(case.data + 1)
        return super().run(case, placement)


class NegativeZeroConstantAdapter(ConformingAdapter):
    """As OpenVINO's CPU plugin with pads fed at run time: pads with +0.0 where the constant
    value is -0.0, whatever the pads' signs."""

    def run(self, case, placement="inputs"):
        value = case.constant_value
        if case.op == "Pad" and case.mode == "constant" and value is not None and value.dtype.kind == "f" \
                and np.all(value == 0) and np.signbit(value).any():
            return super().run(case.with_(constant_value=np.zeros_like(value)), placement)
        return super().run(case, placement)


class EmptyConstantToScalarAdapter(ConformingAdapter):
    """As OpenVINO's ONNX frontend: a folded constant with a zero-size axis becomes a scalar,
    before any op sees it (Pad, Identity and Concat alike): an edge Pad then refuses it."""

    def run(self, case, placement="inputs"):
        if placement != "folded" or 0 not in case.data.shape:
            return super().run(case, placement)
        if case.op == "Pad" and case.mode == "edge":
            return Outcome(error="edge padding needs rank 1 or more")
        got = super().run(case, placement)
        return Outcome(np.zeros((), got.output.dtype)) if got.output is not None else got


class InstantCompilerAdapter(ConformingAdapter):
    """An ahead-of-time compiler whose builds take no time (one a model key), and that answers
    like the reference: what a compile budget chooses, without a compiler's wait."""
    compiles_ahead = True

    def run(self, case, placement="inputs"):
        from padconf.cases.onnx_model import model_key
        self.cached(model_key(case, placement), lambda: None)
        return super().run(case, placement)


# ---------------------------------------------------------------- padconf's own faults in an adapter's code

from padconf.adapters.iree import IreeAdapter  # noqa: E402  (neither imports its runtime until used)
from padconf.adapters.tvm import TvmAdapter  # noqa: E402

BREAK_AFTER = 2  # cases the workers of a run start (PADCONF_FLAKY_COUNTER) before one's imports break


class _ImportsBreakMidRun:
    """The real runtime, in a worker whose imports break after BREAK_AFTER cases of the run, as an
    import cut short by a MemoryError under the worker's cap leaves them: ``broken`` (a module the
    adapter's conversion imports from) is None in sys.modules, so that the adapter's next import
    of it raises ImportError in padconf's frame. Only that worker's: its successors fork from the
    zygote, whose imports are whole."""
    placements = ("folded",)  # each case a model of its own: each is converted, none taken from a worker's cache
    broken = ""

    def run(self, case, placement="inputs"):
        if shared_count() == BREAK_AFTER + 1:
            sys.modules[self.broken] = None
        return super().run(case, placement)


class IreeImportsBreakMidRun(_ImportsBreakMidRun, IreeAdapter):
    broken = "iree.compiler.extras"  # _import's `from iree.compiler.extras import onnx_importer`


class TvmImportsBreakMidRun(_ImportsBreakMidRun, TvmAdapter):
    broken = "tvm.relax.frontend.onnx"  # _build's `from tvm.relax.frontend.onnx import from_onnx`


class _SlipOnTrigger:
    """The real runtime, with a slip in the adapter's own code where it builds the trigger case's
    model (data starting 666): it reads an attribute it does not have, in every worker, inside the
    adapter's try (which turns the runtime's exceptions into refusals)."""
    placements = ("folded",)
    _building_trigger = False

    def run(self, case, placement="inputs"):
        self._building_trigger = CorrectAdapter.triggered(case)
        return super().run(case, placement)

    def _slip(self):
        if self._building_trigger:
            return self.session_options  # no such attribute: the slip


class IreeSlipOnTrigger(_SlipOnTrigger, IreeAdapter):
    def _load(self, model):
        self._slip()
        return super()._load(model)


class TvmSlipOnTrigger(_SlipOnTrigger, TvmAdapter):
    def _build(self, model):
        self._slip()
        return super()._build(model)


class BatchPrintingAdapter(PrintingAdapter):
    """PrintingAdapter sent its cases a batch at a time."""
    order_independent = True


class RankZeroTwoWaysAdapter(ConformingAdapter):
    """Two mechanisms that show alike through Pad (a silent wrong value on rank-0 data, float and
    int32, the latter as a rank-1 tensor): float's is Pad's alone, while int32's values go wrong
    through the data-movement ops too (its Concat refuses them), which only the controls computing
    on the values show."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.data.ndim == 0:
            return Outcome(np.asarray(case.data + 1).reshape([1] * (case.dtype == "int32")))
        if case.op == "Concat" and case.dtype == "int32":
            return Outcome(error="int32 buffers cannot be moved")
        return super().run(case, placement)


class MixedSignWrongAdapter(ConformingAdapter):
    """Wrong values where an axis is cropped at one end and padded at the other (mixed signs),
    right on a crop alone: the trigger is both pads, not the negative one."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and any(p < 0 for p in case.pads) and any(p > 0 for p in case.pads):
            got = super().run(case, placement)
            return Outcome(got.output + 1) if got.output is not None else got
        return super().run(case, placement)


class NegativeEndWrongAdapter(ConformingAdapter):
    """Wrong values on any negative end pad, whatever the begin pads."""

    def run(self, case, placement="inputs"):
        k = len(case.pads) // 2
        if case.op == "Pad" and any(p < 0 for p in case.pads[k:]):
            got = super().run(case, placement)
            return Outcome(got.output + 1) if got.output is not None else got
        return super().run(case, placement)


class NoWrapAdapter(ConformingAdapter):
    """No wrap kernel at all, whatever the input: coverage that shows on any wrap case."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.mode == "wrap":
            return Outcome(error="wrap padding is not implemented", not_implemented=True)
        return super().run(case, placement)


# ---------------------------------------------------------------- a planted exporter regression (padconf gate)


from padconf.adapters.exporters import TorchExportAdapter  # noqa: E402  (imports no torch until it exports)


class ReflectAsEdgeExporter(TorchExportAdapter):
    """torch.onnx.export with a regression planted in the graph it writes: every Pad(reflect)
    becomes Pad(edge), as an exporter that maps torch's modes wrongly would write. Its exports
    are cached under a key of its own, so the real exporter never reads its graphs."""

    def export_key(self, call):
        from padconf.adapters.compile_cache import cache_key
        return cache_key("planted: reflect as edge", super().export_key(call))

    def _export(self, call):
        import onnx
        model = onnx.load_model_from_string(super()._export(call))
        for node in model.graph.node:
            for attribute in node.attribute:
                if node.op_type == "Pad" and attribute.name == "mode" and attribute.s == b"reflect":
                    attribute.s = b"edge"
        return model.SerializeToString()


class SurrogateTextAdapter(ConformingAdapter):
    """Refuses every case with an error text holding a lone surrogate (what a runtime's message
    decoded with surrogateescape holds), which no UTF-8 writer can write as it is."""

    TEXT = "bad byte \udc80 in \u2028 the model é"

    def run(self, case, placement="inputs"):
        return Outcome(error=self.TEXT)


class RankZeroFedPadsByIndexTypeAdapter(ConformingAdapter):
    """One bug, two symptoms the pads' index type chooses (OpenVINO's Pad on rank-0 data with
    empty pads fed at run time, audit II): int64 pads refused ("ptr is Null"), int32 pads a
    segfault."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.data.ndim == 0 and placement == "inputs":
            if case.pads_type == "int32":
                os.kill(os.getpid(), signal.SIGSEGV)
            return Outcome(error="Check 'ptr' failed: ptr is Null")
        return super().run(case, placement)


class RankZeroByPlacementAndIndexTypeAdapter(RankZeroFedPadsByIndexTypeAdapter):
    """RankZeroFedPadsByIndexTypeAdapter whose constant pads are refused otherwise again (audit
    VII's openvino 18 and 34): "incorrect number of input/output dimensions"."""

    def run(self, case, placement="inputs"):
        if case.op == "Pad" and case.data.ndim == 0 and placement != "inputs":
            return Outcome(error="Pad node has incorrect number of input/output dimensions!")
        return super().run(case, placement)


class CropPastAxisCorruptsAdapter(ConformingAdapter):
    """One heap corruption, two symptoms (as OpenVINO's crop past an axis beside a pad, pads fed at
    run time, audit IV; here any crop beside a pad): the process dies in constant mode, and edge
    mode answers memory it never wrote, other values each time."""

    def run(self, case, placement="inputs"):
        n = case.data.ndim
        if case.op == "Pad" and placement == "inputs" and n and any(
                case.pads[d] * case.pads[d + n] < 0 for d in range(n)):  # a crop beside a pad
            if case.mode == "constant":
                os.kill(os.getpid(), signal.SIGSEGV)
            right = super().run(case, placement).output
            if right is not None:
                return Outcome(np.full(right.shape, self.garbage(), right.dtype))
        return super().run(case, placement)

    def garbage(self) -> int:
        return os.getpid()  # another in each process


class CropPastAxisCorruptsAlikeAdapter(CropPastAxisCorruptsAdapter):
    """CropPastAxisCorruptsAdapter whose memory never written holds the same bits in every
    process (audit V's openvino 34: 4.5e-44 each time)."""

    def garbage(self) -> int:
        return 32


class CropPastAxisCorruptsAtRankAdapter(ConformingAdapter):
    """One heap corruption of a crop beside a pad, pads fed at run time, whose face the rank
    chooses (audit VI's openvino-onnx 38 and openvino 01): rank 1 dies, a higher rank answers
    values from nowhere, the same bits each time."""

    def run(self, case, placement="inputs"):
        n = case.data.ndim
        if case.op == "Pad" and placement == "inputs" and n and any(
                case.pads[d] * case.pads[d + n] < 0 for d in range(n)):
            if n == 1:
                os.kill(os.getpid(), signal.SIGSEGV)
            right = super().run(case, placement).output
            if right is not None:
                return Outcome(np.full(right.shape, 126, np.int32).view(np.float32).astype(right.dtype))
        return super().run(case, placement)


class ValueIntsRefusedAdapter(ConformingAdapter):
    """A converter that reads no Constant node written with value_ints, whatever op it feeds (as
    TVM's Relax frontend: "no value in Constant", audit VI's tvm 05)."""

    def run(self, case, placement="inputs"):
        from padconf.cases.context import Producer
        if case.context is not None and case.context.producer == Producer.CONSTANT_INTS:
            return Outcome(error="no value in Constant")
        return super().run(case, placement)


class ConstantNodeZeroFillReflectAdapter(ZeroFillReflectAdapter):
    """ZeroFillReflectAdapter only where its pads come from Constant nodes, and refusing any int64
    Constant node that feeds another op (as TVM's Relax frontend: "Node cannot handle ShapeExpr
    inputs"): the pads' values control fails, otherwise than the Pad."""

    def run(self, case, placement="inputs"):
        from padconf.cases.context import Producer
        constant_node = case.context is not None and case.context.producer == Producer.CONSTANT_NODE
        if case.op == "Concat" and constant_node:
            return Outcome(error="Node cannot handle ShapeExpr inputs.")
        return super().run(case, placement) if constant_node else CorrectAdapter.run(self, case, placement)


class LoudAdapter(ConformingAdapter):
    """Refuses every case with 40,000 characters of error, as a runtime that dumps its state."""

    def run(self, case, placement="inputs"):
        return Outcome(error=f"{case.id}: " + "state " * 8000)


class SlowWrongValuesAdapter(WrongValuesAdapter):
    """WrongValuesAdapter at a fifth of a second a case: a minimize long enough to interrupt."""

    def run(self, case, placement="inputs"):
        time.sleep(0.2)
        return super().run(case, placement)


class OtherSlowWrongValuesAdapter(SlowWrongValuesAdapter):
    """A second runtime of the same bug, for a minimize of two lanes."""


class ConstantPadsZeroFillReflectAdapter(ZeroFillReflectAdapter):
    """ZeroFillReflectAdapter where its pads are constants, initializers or Constant nodes alike,
    and refusing pads fed at run time, as TVM's Relax frontend does."""

    def run(self, case, placement="inputs"):
        constant = placement != "inputs" or (case.context is not None and case.context.producer.is_constant)
        if case.op == "Pad" and not constant:
            return Outcome(error="pads must be constant")
        return super().run(case, placement)
