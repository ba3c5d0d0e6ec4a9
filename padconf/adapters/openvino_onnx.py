"""The ONNX model padconf.onnx_model builds, read by OpenVINO's ONNX frontend, run on CPU."""
from __future__ import annotations

from . import Adapter, Outcome, spec_domain_version
from .openvino import CACHE_SIZE, COMPILE_CONFIG, OV_TYPES, error_text, failure, from_tensor, to_tensor
from ..cases import Case


class OpenVinoOnnxAdapter(Adapter):
    name = "openvino-onnx"

    def __init__(self):
        self._models: dict = {}  # signature -> (compiled model, infer request, input names), or error text
        self._core = None

    def available(self) -> str | None:
        try:
            import openvino  # noqa: F401
        except Exception as exc:  # ImportError, or a broken shared library
            return f"openvino cannot be imported: {error_text(exc)}"
        return None

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if spec_domain_version(spec_id)[0] != "onnx":
            return f"{self.name} runs ONNX models only, not {spec_id}"
        if dtype not in OV_TYPES:
            return f"OpenVINO has no element type for {dtype}"
        return None

    def _compile(self, case: Case, placement: str):
        import openvino as ov
        from ..onnx_model import build_model
        if self._core is None:
            self._core = ov.Core()
        # Bytes in, no file: read_model picks the ONNX frontend from the content. The data input
        # has a static rank (symbolic dims), which the CPU plugin needs to compile.
        model = self._core.read_model(build_model(case, placement).SerializeToString(), b"")
        compiled = self._core.compile_model(model, "CPU", COMPILE_CONFIG)
        names = [port.get_any_name() for port in compiled.inputs]
        return compiled, compiled.create_infer_request(), names

    def run(self, case: Case, placement: str = "inputs") -> Outcome:
        try:
            from ..onnx_model import feeds, model_signature
            key = model_signature(case, placement)
            if key not in self._models:
                if len(self._models) >= CACHE_SIZE:
                    self._models.pop(next(iter(self._models)))
                try:
                    self._models[key] = self._compile(case, placement)
                except Exception as exc:  # fails the same way for the whole signature
                    self._models[key] = error_text(exc)
            if isinstance(self._models[key], str):
                return failure(self._models[key])
            _, request, names = self._models[key]
            inputs = feeds(case, placement)
            types = {"pads": case.pads_type, "axes": case.axes_type}
            # By position in the compiled model's order; the frontend keeps the ONNX input names.
            request.infer([to_tensor(inputs[n], types.get(n, case.dtype)) for n in names])
            return Outcome(output=from_tensor(request.get_output_tensor(0)))
        except Exception as exc:
            return failure(error_text(exc))
