"""onnx.reference.ReferenceEvaluator, ONNX's own Python implementation, on the same model."""
from __future__ import annotations

from padconf.adapters import Adapter, Outcome, Refusal, StandaloneRepro, error_text
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, feeds, model_key
from padconf.core.vocabulary import Placement


def standalone_run(model, inputs, configuration):
    """onnx's reference evaluator on a bundle's one-node model:
    copied into a bundle's repro script by its source, it imports nothing of padconf."""
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, inputs)[0]


class OnnxReferenceAdapter(Adapter):
    name, module = "onnx-reference", "onnx.reference"
    package = "onnx"
    evaluates_reference = True
    repro = StandaloneRepro("onnx", standalone_run)
    order_independent = True
    # the evaluator imports its ~200 op modules on first use: in every fresh worker, without this
    preload = (*Adapter.preload, "onnx.reference.ops._op_list")
    placements = (Placement.INPUTS,)  # no compilation step, so baking values in would show nothing new

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            from onnx.reference import ReferenceEvaluator

            evaluator = self.cached(model_key(case, placement),
                                    lambda: ReferenceEvaluator(build_model(case, placement)))
            if isinstance(evaluator, Refusal):
                return evaluator.outcome()
            (out,) = evaluator.run(None, feeds(case, placement))
            return Outcome(output=out)
        except NotImplementedError as exc:
            self.raise_unless_answer(exc)
            return Outcome(error=f"NotImplementedError: {error_text(exc)}", not_implemented=True)
        except Exception as exc:
            self.raise_unless_answer(exc)
            return Outcome(error=f"{type(exc).__name__}: {error_text(exc)}")

    def run_model(self, model: bytes, feeds: dict) -> list:
        import onnx
        from onnx.reference import ReferenceEvaluator
        return list(ReferenceEvaluator(onnx.load_model_from_string(model)).run(None, feeds))
