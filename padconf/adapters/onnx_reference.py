"""onnx.reference.ReferenceEvaluator, ONNX's own Python implementation, on the same model."""
from __future__ import annotations

from . import Adapter, Outcome, spec_domain_version
from ..cases import Case


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:1000]}"


class OnnxReferenceAdapter(Adapter):
    name = "onnx-reference"
    placements = ("inputs",)  # no compilation step, so baking values in would show nothing new

    def __init__(self):
        self._evaluators: dict = {}  # signature -> ReferenceEvaluator

    def available(self) -> str | None:
        try:
            from onnx.reference import ReferenceEvaluator  # noqa: F401
        except Exception as exc:
            return f"onnx.reference cannot be imported: {error_text(exc)}"
        return None

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if spec_domain_version(spec_id)[0] != "onnx":
            return f"{self.name} runs ONNX models only, not {spec_id}"
        return None

    def run(self, case: Case, placement: str = "inputs") -> Outcome:
        try:
            from onnx.reference import ReferenceEvaluator
            from ..onnx_model import build_model, feeds, model_signature
            key = model_signature(case, placement)
            if key not in self._evaluators:
                self._evaluators[key] = ReferenceEvaluator(build_model(case, placement))
            (out,) = self._evaluators[key].run(None, feeds(case, placement))
            return Outcome(output=out)
        except NotImplementedError as exc:
            return Outcome(error=error_text(exc), not_implemented=True)
        except Exception as exc:
            return Outcome(error=error_text(exc))
