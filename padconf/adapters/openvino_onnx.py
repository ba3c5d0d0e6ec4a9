"""The ONNX model padconf.onnx_model builds, read by OpenVINO's ONNX frontend, run on CPU."""
from __future__ import annotations

from . import Adapter, Outcome, error_text, failure
from .openvino_tensors import COMPILE_CONFIG, NOT_IMPLEMENTED, OV_CACHE_SIZE, OV_TYPES, from_tensor, to_tensor
from ..cases import Case


class OpenVinoOnnxAdapter(Adapter):
    name, module = "openvino-onnx", "openvino"
    package = "openvino"
    cache_size = OV_CACHE_SIZE

    def __init__(self):
        super().__init__()
        self._core = None

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if super().supports(spec_id, dtype):
            return super().supports(spec_id, dtype)
        if dtype not in OV_TYPES:
            return f"OpenVINO has no element type for {dtype}"
        return None

    def _compiled(self, model: bytes):
        import openvino as ov
        if self._core is None:
            self._core = ov.Core()
        # Bytes in, no file: read_model picks the ONNX frontend from the content.
        return self._core.compile_model(self._core.read_model(model, b""), "CPU", COMPILE_CONFIG)

    def _compile(self, case: Case, placement: str):
        from ..onnx_model import build_model
        # The data input has a static rank (symbolic dims), which the CPU plugin needs to compile.
        compiled = self._compiled(build_model(case, placement).SerializeToString())
        names = [port.get_any_name() for port in compiled.inputs]
        return compiled, compiled.create_infer_request(), names

    def run_model(self, model: bytes, feeds: dict) -> list:
        from ..dtypes import dtype_name
        compiled = self._compiled(model)
        request = compiled.create_infer_request()
        arrays = [feeds[port.get_any_name()] for port in compiled.inputs]
        request.infer([to_tensor(a, dtype_name(a.dtype)) for a in arrays])
        return [from_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]

    def run(self, case: Case, placement: str = "inputs") -> Outcome:
        try:
            from ..onnx_model import feeds, model_signature
            model = self.cached(model_signature(case, placement), lambda: self._compile(case, placement))
            if isinstance(model, str):
                return failure(model, NOT_IMPLEMENTED)
            _, request, names = model
            inputs = feeds(case, placement)
            types = {"pads": case.pads_type, "axes": case.axes_type}
            # By position in the compiled model's order; the frontend keeps the ONNX input names.
            request.infer([to_tensor(inputs[n], types.get(n, case.dtype)) for n in names])
            return Outcome(output=from_tensor(request.get_output_tensor(0)))
        except Exception as exc:
            return failure(error_text(exc), NOT_IMPLEMENTED)
