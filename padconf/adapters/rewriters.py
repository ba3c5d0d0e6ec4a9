"""Graph rewriters as implementations under test (issue 44): onnxoptimizer's Pad passes.

A rewriter takes the model padconf builds for a case (a context case's whole graph: Pad and its
consumer, its pads' producer) and returns a model. Its verdict:

- it raises: its crash, reported as a refusal of the case (``<name> raised: ...``);
- it returns the model unchanged: a refusal to rewrite, which is fine: skipped, saying so;
- its model fails ``onnx.checker.check_model(full_check=True)`` where the input passes: an
  invalid model, reported as a refusal (``onnx.checker rejects the rewritten model: ...``);
- else the rewritten and the unrewritten model run on the same two runtimes, onnx's reference
  evaluator and onnxruntime with its graph optimizer disabled (neither rewrites the graph
  again). The unrewritten model on the same runtime is the control: where the two differ on a
  runtime (an output for a refusal, another shape, other values beyond the context's
  tolerance) on both, the rewriter changed what the model computes, and the outcome is the
  rewritten model's on onnx's reference, with a note naming the pass that changes it alone;
  judged against padconf's expected output as any outcome is. Where only one of them changes,
  the difference may be that runtime's on a graph it meets only rewritten (onnx's reference
  evaluator fails on some pools with their own pads): skipped, saying so. Where they agree on both runtimes the rewrite
  kept the model's meaning: the outcome is the rewritten model's on onnx's reference, unless
  the two runtimes disagree on the unrewritten model, which leaves no control (skipped).
"""
from __future__ import annotations

import numpy as np

from padconf.adapters import Adapter, Outcome, error_text
from padconf.cases.case import Case
from padconf.cases.context import snap
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import bit_equal
from padconf.core.vocabulary import Placement

# the dtypes both control runtimes take through numpy (no ml_dtypes kinds, no complex in ORT)
_FED = {"float", "double", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "bool", "string"}
REFERENCE, ORT_NO_OPT = "onnx-reference", "onnxruntime (optimizations disabled)"


def _run(runtime: str, model: bytes, inputs: dict) -> tuple[np.ndarray | None, str | None]:
    """(output, None), or (None, the runtime's refusal)."""
    try:
        if runtime == REFERENCE:
            import onnx
            from onnx.reference import ReferenceEvaluator
            (out, *_) = ReferenceEvaluator(onnx.load_model_from_string(model)).run(None, inputs)
            return np.asarray(out), None
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 4
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return np.asarray(session.run(None, inputs)[0]), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {error_text(exc)}"


def _same(case: Case, a: tuple, b: tuple) -> bool:
    """Two answers are the same: both refusals, or outputs equal bit for bit (NaN for NaN),
    within the context's tolerance for Conv and AveragePool."""
    if a[0] is None or b[0] is None:
        return a[0] is None and b[0] is None
    return bit_equal(a[0], snap(case.context, a[0], b[0]))


def _shown(answer: tuple) -> str:
    out, err = answer
    return f"refuses it ({err})" if out is None else f"gives shape {list(out.shape)} {out.reshape(-1)[:6].tolist()}"


def _check(model) -> str | None:
    import onnx
    try:
        onnx.checker.check_model(model, full_check=True)
        return None
    except Exception as exc:
        return error_text(exc)


class RewriterAdapter(Adapter):
    """A graph rewriter under test; subclasses say what ``rewrite`` does and its passes."""

    placements = (Placement.INPUTS, Placement.INITIALIZERS)  # pads fed at run time, or constant (fusable)
    preload = (*Adapter.preload, "onnx.reference.ops._op_list", "onnxruntime")
    passes: tuple[str, ...] = ()

    def rewrite(self, model, passes: tuple[str, ...]):
        raise NotImplementedError

    def supports(self, spec_id: str, dtype: str) -> str | None:
        return super().supports(spec_id, dtype) or (
            None if dtype in _FED else f"the control runtimes' Python APIs take no {dtype} tensors through numpy")

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            model = build_model(case, placement)
        except Exception as exc:  # what the model cannot hold (a string value in a float attribute)
            return Outcome(error=f"{type(exc).__name__}: {error_text(exc)}")
        try:
            rewritten = self.rewrite(model, self.passes)
        except Exception as exc:
            return Outcome(error=f"{self.name} raised: {type(exc).__name__}: {error_text(exc)}")
        if rewritten.graph.SerializeToString() == model.graph.SerializeToString():
            return Outcome(skipped=f"{self.name} left the model as it was (a refusal to rewrite, which is fine)")
        invalid = _check(rewritten)
        if invalid and not _check(model):
            return Outcome(error=f"onnx.checker (full_check) rejects the model {self.name} rewrote, not the one "
                                 f"it was given: {invalid}")
        before, after = model.SerializeToString(), rewritten.SerializeToString()
        inputs = feeds(case, placement)
        answers = {runtime: (_run(runtime, before, inputs), _run(runtime, after, inputs))
                   for runtime in (REFERENCE, ORT_NO_OPT)}
        changed = [runtime for runtime, (control, answer) in answers.items() if not _same(case, control, answer)]
        if changed:
            # the exhibit: onnx's reference's answer, unless it refuses the rewritten model where
            # onnxruntime computes one (the evaluator fails on some pools with their own pads)
            runtime = ORT_NO_OPT if len(changed) == 2 and answers[REFERENCE][1][0] is None \
                and answers[ORT_NO_OPT][1][0] is not None else changed[0]
            control, answer = answers[runtime]
            other = ORT_NO_OPT if runtime == REFERENCE else REFERENCE
            said = f"on {runtime} the rewritten model {_shown(answer)}, the model it was given {_shown(control)}"
            if len(changed) == 1:  # the other control runtime computes what it computed before the rewrite
                return Outcome(skipped=f"{said}; on {other} it computes what the model it was given computes: "
                                       "the difference may be that runtime's, on a graph it meets only rewritten")
            note = f"{said}{self._culprit(case, model, runtime, inputs, control)}; on {other} it changes too"
            return Outcome(output=answer[0], error=answer[1], note=note)
        (ref, ref_rewritten), (ort, _) = answers[REFERENCE], answers[ORT_NO_OPT]
        if not _same(case, ref, ort):
            return Outcome(skipped=f"{REFERENCE} and {ORT_NO_OPT} disagree on the model {self.name} was given: "
                                   "no control to judge the rewrite against")
        return Outcome(output=ref_rewritten[0], error=ref_rewritten[1],
                       note=f"{self.name} rewrote the model; it computes what the model it was given computes on "
                            f"{REFERENCE} and {ORT_NO_OPT}")

    def _culprit(self, case: Case, model, runtime: str, inputs: dict, control: tuple) -> str:
        """'; pass X changes it alone' for each of the passes that does."""
        if len(self.passes) < 2:
            return ""
        found = []
        for one in self.passes:
            try:
                alone = self.rewrite(model, (one,)).SerializeToString()
            except Exception:
                continue
            if not _same(case, control, _run(runtime, alone, inputs)):
                found.append(one)
        return f"; alone, {', '.join(found)} changes it" if found else ""


class OnnxOptimizerAdapter(RewriterAdapter):
    """onnxoptimizer (onnx/optimizer): its three passes that rewrite Pad."""

    name = "onnxoptimizer"
    module = package = "onnxoptimizer"
    passes = ("fuse_pad_into_conv", "fuse_pad_into_pool", "eliminate_nop_pad")

    def rewrite(self, model, passes: tuple[str, ...]):
        import onnxoptimizer
        return onnxoptimizer.optimize(model, list(passes))
