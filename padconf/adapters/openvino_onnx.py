"""The ONNX model padconf.cases.onnx_model builds, read by OpenVINO's ONNX frontend, run on CPU."""
from __future__ import annotations

from padconf.adapters import Adapter, Outcome, Refusal, StandaloneRepro
from padconf.adapters.openvino_tensors import (
    OV_CACHE_SIZE,
    OV_OPTIONS,
    OV_TYPES,
    compile_shared,
    error_core,
    from_tensor,
    graph_key,
    lacks_kernel,
    load_cpu_plugin,
    ov_properties,
    shared_core,
    to_tensor,
    without_telemetry,
)
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import dtype_name
from padconf.core.vocabulary import Placement


def standalone_run(model, inputs, configuration):
    """OpenVINO's ONNX frontend on a bundle's one-node model:
    copied into a bundle's repro script by its source, it imports nothing of padconf."""
    import openvino as ov
    core = ov.Core()
    read = core.read_model(model.SerializeToString(), b"")
    compiled = core.compile_model(read, "CPU", configuration)  # {}: OpenVINO's defaults
    return compiled(list(inputs.values()))[0]


class OpenVinoOnnxAdapter(Adapter):
    name, module = "openvino-onnx", "openvino"
    package = "openvino"
    lowered_to = ("openvino", "openvino/Pad-12")  # its frontend converts ONNX Pad to OpenVINO's Pad-12
    type_names = tuple(OV_TYPES.values())
    repro = StandaloneRepro("onnx openvino", standalone_run)
    cache_size = OV_CACHE_SIZE
    options = OV_OPTIONS
    lacks_kernel = staticmethod(lacks_kernel)
    error_core = staticmethod(error_core)
    blocked_modules = ("openvino_telemetry",)  # what without_telemetry() does in padconf's own workers

    def available(self) -> str | None:
        without_telemetry()
        return super().available() or load_cpu_plugin(onnx_frontend=True)

    def configuration(self) -> dict[str, object]:
        return ov_properties(self.settings)

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if super().supports(spec_id, dtype):
            return super().supports(spec_id, dtype)
        if dtype not in OV_TYPES:
            return f"OpenVINO has no element type for {dtype}"
        return None

    def _read(self, model: bytes):
        # Bytes in, no file: read_model picks the ONNX frontend from the content.
        return shared_core().read_model(model, b"")

    def _compile(self, graph, key: tuple | None = None):
        core = shared_core()
        compiled = (core.compile_model(graph, "CPU", self.configuration()) if key is None
                    else compile_shared(core, graph, key, self.scratch, self.configuration()))
        names = [port.get_any_name() for port in compiled.inputs]
        return compiled, compiled.create_infer_request(), names

    def run_model(self, model: bytes, feeds: dict) -> list:
        compiled, request, _ = self._compile(self._read(model))
        arrays = [feeds[port.get_any_name()] for port in compiled.inputs]
        tensors = [to_tensor(a, dtype_name(a.dtype)) for a in arrays]  # alive until the outputs are read
        request.infer(tensors)
        return [from_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            # Every case is read (the frontend's conversion is under test); a graph is
            # compiled once. The data input has a static rank (symbolic dims), which the CPU
            # plugin needs to compile.
            graph = self._read(build_model(case, placement).SerializeToString())
            key = graph_key(graph)
            model = self.cached(key, lambda: self._compile(graph, key))
            if isinstance(model, Refusal):
                return model.outcome()
            _, request, names = model
            inputs = feeds(case, placement)
            types = {"pads": case.pads_type, "axes": case.axes_type}
            # By position in the compiled model's order; the frontend keeps the ONNX input names.
            # alive until the output is read: Identity (the control) hands back the input's memory
            # (a context's chain operands, torch_pads and pad_offsets, are of their own integer type)
            tensors = [to_tensor(inputs[n], types.get(n, case.dtype if n in ("data", "constant_value")
                                                  else dtype_name(inputs[n].dtype))) for n in names]
            request.infer(tensors)
            return Outcome(output=from_tensor(request.get_output_tensor(0)))
        except Exception as exc:
            return self.refusal(exc).outcome()
