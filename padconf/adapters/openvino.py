"""OpenVINO's own Pad (opset1 / opset12) built with the Python graph API, run on CPU."""
from __future__ import annotations

from pathlib import Path

import numpy as np

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
    ov_type,
    packed,
    shared_core,
    to_tensor,
    without_telemetry,
)
from padconf.cases.case import Case
from padconf.core.dtypes import numpy_dtype
from padconf.core.vocabulary import Placement
from padconf.spec.loader import parse_spec_id

# The friendly name of the zero Constant an omitted pad_value is written as (padconf.suite.folders finds it by it).
OV_DEFAULT_PAD_VALUE = "pad_value_default"


def split_pads(case: Case) -> dict[str, np.ndarray]:
    """ONNX-layout pads -> the inputs OpenVINO's Pad takes, in feed order."""
    if len(case.pads) % 2:
        raise ValueError(f"{len(case.pads)} pads do not split into pads_begin and pads_end")
    pads = np.array(case.pads, dtype=numpy_dtype(case.pads_type))
    out = {"pads_begin": pads[:len(pads) // 2], "pads_end": pads[len(pads) // 2:]}
    if case.constant_value is not None:
        out["pad_value"] = np.asarray(case.constant_value)
    return out


def native_model(case: Case, placement: Placement = Placement.INPUTS, default_pad_value: bool = False):
    """OpenVINO's own Pad (opset1 or opset12, from the case's spec) as an ov.Model: data, then
    pads_begin / pads_end / pad_value as Parameters ("inputs") or Constants ("initializers").
    Every node gets a fixed friendly name, so a saved IR does not depend on OpenVINO's global
    node counters. ``default_pad_value``: spell an omitted pad_value as the zero Constant
    "pad_value_default" (the serializer would otherwise add an anonymous one)."""
    import openvino as ov
    import openvino.opset1 as opset1
    import openvino.opset12 as opset12
    ops = opset1 if parse_spec_id(case.spec)[1] == 1 else opset12
    if placement == Placement.FOLDED:  # every input a Constant: compiling may evaluate the Pad (ConstantFolding)
        data = ov.op.Constant(to_tensor(case.data, case.dtype), shared_memory=False)
        data.set_friendly_name("data")
        params = []
    else:  # static rank, dynamic dims: one compiled model serves every shape of that rank
        data = ops.parameter(ov.PartialShape([-1] * case.data.ndim), ov_type(case.dtype), name="data")
        params = [data]
    if case.op == "Identity":  # the control: OpenVINO's own trivial graph, data straight to the output
        data.output(0).get_tensor().set_names({"output"})
        model = ov.Model([ov.op.Result(data.output(0))], params, "identity")
        model.get_results()[0].set_friendly_name("output")
        return model
    if case.op == "Concat":  # the control: data and pad_value (placed as the Pad's) flattened, concatenated, tiled
        parts = [data]
        if case.constant_value is not None:
            value = np.asarray(case.constant_value)
            if placement == Placement.INPUTS:
                params.append(ops.parameter(ov.PartialShape([-1] * value.ndim), ov_type(case.dtype), name="pad_value"))
                parts.append(params[-1])
            else:
                parts.append(ov.op.Constant(to_tensor(value, case.dtype), shared_memory=False))
                parts[-1].set_friendly_name("pad_value")
        flat = [opset1.reshape(part, opset1.constant(np.array([-1], np.int64), name=f"flat_{i}"), special_zero=False,
                               name=f"{part.get_friendly_name()}_flat") for i, part in enumerate(parts)]
        joined = opset1.concat(flat if len(flat) > 1 else flat * 2, 0, name="concat")  # a second operand always
        node = opset1.tile(joined, opset1.constant(np.array([2], np.int64), name="twice"), name="tile")
        node.output(0).get_tensor().set_names({"output"})
        model = ov.Model([node], params, "movement")
        model.get_results()[0].set_friendly_name("output")
        return model
    args = []
    for name, arr in split_pads(case).items():
        dtype = case.dtype if name == "pad_value" else case.pads_type
        if placement in (Placement.INITIALIZERS, Placement.FOLDED):
            # Copy: a Constant sharing the Tensor's memory does not keep that memory alive.
            args.append(ov.op.Constant(to_tensor(arr, dtype), shared_memory=False))
            args[-1].set_friendly_name(name)
        else:
            shape = [-1] * arr.ndim  # any pads length reuses the model
            params.append(ops.parameter(ov.PartialShape(shape), ov_type(dtype), name=name))
            args.append(params[-1])
    if default_pad_value and case.constant_value is None:
        zero = np.zeros((), dtype=numpy_dtype(case.dtype))
        args.append(ov.op.Constant(to_tensor(zero, case.dtype), shared_memory=False))
        args[-1].set_friendly_name(OV_DEFAULT_PAD_VALUE)
    node = ops.pad(data, args[0], args[1], case.mode, *args[2:])
    node.set_friendly_name("pad")
    node.output(0).get_tensor().set_names({"output"})
    model = ov.Model([node], params, "pad")
    model.get_results()[0].set_friendly_name("output")
    return model


def standalone_run(operands, fed, mode, opset, configuration):
    """OpenVINO's own Pad (opset1 or opset12: data, pads_begin, pads_end[, pad_value]) built in its
    graph API: copied into a bundle's repro script by its source, it imports nothing of padconf.
    The data (and pad value) may be an ov.Tensor of its bits, for a type numpy lacks (bfloat16,
    float8, sub-byte types packed); then the output comes back as its elements' codes, sub-byte
    ones unpacked lowest bits first."""
    import openvino as ov
    import openvino.opset1
    import openvino.opset12
    ops = openvino.opset1 if opset == 1 else openvino.opset12
    tensors = {name: arr if isinstance(arr, ov.Tensor) else ov.Tensor(arr) for name, arr in operands.items()}
    nodes = {name: ops.parameter(ov.PartialShape([-1] * len(operands[name].shape)), t.element_type, name=name)
             if name in fed else ov.op.Constant(t, shared_memory=False) for name, t in tensors.items()}
    pad = ops.pad(nodes["data"], nodes["pads_begin"], nodes["pads_end"], mode, nodes.get("pad_value"))
    model = ov.Model([pad], [nodes[name] for name in fed])
    compiled = ov.Core().compile_model(model, "CPU", configuration)  # {}: OpenVINO's defaults
    if not isinstance(operands["data"], ov.Tensor):  # a numpy dtype
        return compiled([operands[name] for name in fed])[0]
    request = compiled.create_infer_request()
    request.infer([operands[name] for name in fed])
    out = request.get_output_tensor(0)
    bits, raw = out.element_type.bitwidth, np.asarray(out.data).reshape(-1).view(np.uint8)
    if bits >= 8:
        return raw.view(f"uint{bits}").reshape(list(out.shape))
    codes = (raw[:, None] >> np.arange(0, 8, bits, dtype=np.uint8)) & ((1 << bits) - 1)
    return codes.reshape(-1)[:out.size].reshape(list(out.shape))


def own_tensor_literal(arr: np.ndarray, dtype: str) -> str:
    """Source text of an ov.Tensor holding the bits of ``arr`` of ``dtype`` (one numpy lacks),
    packed as OpenVINO packs it."""
    return (f"ov.Tensor(np.array({packed(arr, ov_type(dtype).bitwidth).tolist()}, dtype=\"uint8\"), "
            f"ov.Shape({list(np.shape(arr))}), ov.Type.{OV_TYPES[dtype]})")


class OpenVinoAdapter(Adapter):
    name = module = package = "openvino"
    type_names = tuple(OV_TYPES.values())
    repro = StandaloneRepro("openvino", standalone_run, own_graph=True, own_tensor=own_tensor_literal,
                            imports=("import openvino as ov",))
    domains = ("openvino",)
    cache_size = OV_CACHE_SIZE
    options = OV_OPTIONS
    lacks_kernel = staticmethod(lacks_kernel)
    error_core = staticmethod(error_core)
    blocked_modules = ("openvino_telemetry",)  # what without_telemetry() does in padconf's own workers

    preload = ()  # builds ov.Model objects, not ONNX models

    def available(self) -> str | None:
        without_telemetry()
        return super().available() or load_cpu_plugin()

    def configuration(self) -> dict[str, object]:
        return ov_properties(self.settings)

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if super().supports(spec_id, dtype):
            return super().supports(spec_id, dtype)
        if parse_spec_id(spec_id)[1] not in (1, 12):
            return f"{self.name} builds openvino/Pad-1 and openvino/Pad-12 only, not {spec_id}"
        if dtype not in OV_TYPES:
            return f"OpenVINO has no element type for {dtype}"
        return None

    def _build(self, graph, key: tuple):
        compiled = compile_shared(shared_core(), graph, key, self.scratch, self.configuration())
        return compiled, compiled.create_infer_request()

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        if case.axes is not None:  # checked per case: a cached build error must not stand for it
            return Outcome(error="OpenVINO Pad has no axes input")
        try:
            graph = native_model(case, placement)
            key = graph_key(graph)
            model = self.cached(key, lambda: self._build(graph, key))
            if isinstance(model, Refusal):
                return model.outcome()
            _, request = model
            inputs = {} if placement == Placement.FOLDED else {"data": case.data}
            if placement == Placement.INPUTS and case.op == "Pad":
                inputs.update(split_pads(case))
            if placement == Placement.INPUTS and case.op == "Concat" and case.constant_value is not None:
                inputs["pad_value"] = np.asarray(case.constant_value)
            # Positional, in Parameter order (data, pads_begin, pads_end, pad_value). The tensors
            # live until the output is read: a Parameter wired to the Result (the control's graph)
            # hands back the input's own memory.
            tensors = [to_tensor(v, case.dtype if k in ("data", "pad_value") else case.pads_type)
                       for k, v in inputs.items()]
            request.infer(tensors)
            return Outcome(output=from_tensor(request.get_output_tensor(0)))
        except Exception as exc:
            return self.refusal(exc).outcome()

    def bundle_model(self, case: Case, placement: Placement, where: Path) -> tuple[str | None, dict[str, np.ndarray]]:
        """The case's graph as OpenVINO IR (model.xml, model.bin); None for the model where its shape
        inference refuses constant inputs while the graph is built (the bug itself)."""
        import openvino as ov

        inputs = {"data": case.data, **(split_pads(case) if placement == Placement.INPUTS else {})}
        try:
            ov.save_model(native_model(case, placement, default_pad_value=True), str(where / "model.xml"),
                          compress_to_fp16=False)
        except RuntimeError:
            return None, inputs
        return "model.xml", inputs

    def own_operands(self, case: Case) -> dict[str, np.ndarray]:
        return {"data": case.data, **split_pads(case)}
