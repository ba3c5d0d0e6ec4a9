"""A one-node ONNX model for a Pad case, shared by every adapter that runs ONNX.

Two placements: ``"inputs"`` feeds pads / constant_value / axes at run time, so one model serves
every case of the same spec, mode, dtype and rank (data has a static rank and symbolic dims);
``"initializers"`` bakes them into the model, which lets a runtime constant-fold them. Pad-1 and
Pad-2 take pads and value as attributes, so their model always holds the values.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from padconf.cases.case import CONSUMER_OPS, Case, movement_opset
from padconf.cases.context import Producer
from padconf.cases.context_model import (
    VALUE_INTS_OPSET,
    build_context_model,
    constant_ints_node,
    constant_node,
    context_feeds,
)
from padconf.cases.onnx_ir import OUTPUT_NAME, ir_version, opset_version, pad_arrays
from padconf.core.dtypes import dtype_name, onnx_type, scalar
from padconf.core.vocabulary import Placement
from padconf.spec.loader import parse_spec_id


def _attribute_value(case: Case) -> float:
    # Pad-1/2's `value` is a float attribute whatever T is; a value with no float reading
    # (a string) raises here and the adapter reports it. A complex value's imaginary part has no
    # float to go to (Pad-1/2 define no complex T): it is dropped without numpy's warning, which
    # would reach the runtime's stream.
    value = np.asarray(case.constant_value)
    return float((value.real if np.iscomplexobj(value) else value).astype(np.float64))


def value_from_attribute(value: float, dtype: str) -> np.ndarray:
    """The constant value a Pad-1/2 ``value`` attribute gives data of ``dtype``: the float32 it
    holds, as that dtype (the inverse of the float the model is written with)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return scalar(np.float32(value).item() if dtype != "string" else str(value), dtype)


def build_model(case: Case, placement: Placement = Placement.INPUTS) -> onnx.ModelProto:
    if case.context is not None and case.op in ("Pad", *CONSUMER_OPS):  # Pad in its neighbourhood (cases.contexts),
        return build_context_model(case, placement)  # or its consumer alone (Case.consumer_control)
    version = opset_version(case)
    elem = onnx_type(case.dtype)
    rank = case.data.ndim
    if placement == Placement.FOLDED:  # every input constant: the runtime may evaluate Pad while compiling
        inputs, initializers = [], [numpy_helper.from_array(np.asarray(case.data), "data")]
    else:
        inputs, initializers = [helper.make_tensor_value_info("data", elem, [f"d{i}" for i in range(rank)])], []
    output = helper.make_tensor_value_info(OUTPUT_NAME, elem, [None] * rank)
    if case.op == "Identity":  # the control: the same data through a model with no Pad
        graph = helper.make_graph([helper.make_node("Identity", ["data"], [OUTPUT_NAME])], "identity", inputs,
                                  [output], initializer=initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)],
                                 ir_version=ir_version(version, case.dtype), producer_name="padconf")
    if case.op == "Concat":  # the control: the data and constant value, flattened, concatenated, tiled
        return _movement_model(case, placement, inputs, initializers, movement_opset(version))
    if case.op == "LeakyRelu":  # the control: Pad-1/2's value attribute as LeakyRelu's alpha
        node = helper.make_node("LeakyRelu", ["data"], [OUTPUT_NAME])
        node.attribute.append(helper.make_attribute("alpha", _attribute_value(case),
                                                    attr_type=onnx.AttributeProto.FLOAT))
        graph = helper.make_graph([node], "attribute", inputs, [output], initializer=initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)],
                                 ir_version=ir_version(version, case.dtype), producer_name="padconf")
    if version <= 2:
        if case.axes is not None:
            raise ValueError(f"{case.spec} has no axes")
        attrs: dict[str, list[int] | float] = {"paddings" if version == 1 else "pads": [int(p) for p in case.pads]}
        if case.constant_value is not None:
            attrs["value"] = _attribute_value(case)
        node_inputs = ["data"]
    else:
        arrays = pad_arrays(case)
        attrs = {}
        # An omitted optional input in the middle is spelled "" (constant_value before axes).
        node_inputs = ["data", "pads", "constant_value" if "constant_value" in arrays else ""]
        if "axes" in arrays:
            node_inputs.append("axes")
        while node_inputs[-1] == "":
            node_inputs.pop()
        for name, arr in arrays.items():
            if placement in (Placement.INITIALIZERS, Placement.FOLDED):
                initializers.append(numpy_helper.from_array(arr, name))
            else:  # symbolic dims so that pads/axes of any length reuse the session
                shape = [f"{name}_{i}" for i in range(arr.ndim)]
                inputs.append(helper.make_tensor_value_info(name, onnx_type(dtype_name(arr.dtype)), shape))
    node = helper.make_node("Pad", node_inputs, [OUTPUT_NAME], mode=case.mode)
    # explicit types: make_attribute cannot infer one from an empty pads list (rank-0 data)
    node.attribute.extend(helper.make_attribute(name, value, attr_type=onnx.AttributeProto.INTS
                                                if isinstance(value, list) else onnx.AttributeProto.FLOAT)
                          for name, value in attrs.items())
    graph = helper.make_graph([node], "pad", inputs, [output], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)],
                             ir_version=ir_version(version, case.dtype), producer_name="padconf")


def _movement_model(case: Case, placement: Placement, inputs: list, initializers: list,
                    version: int) -> onnx.ModelProto:
    """Case.movement_control's model: Reshape each of data and constant_value (placed as the
    Pad's are) to [-1], Concat them (the data twice where there is no constant value), then Tile
    the result twice."""
    names = ["data"]
    nodes = []
    if case.context is not None and case.context.producer.is_constant:  # the values of a Constant node
        inputs[:], initializers[:] = [], []  # (Case.index_controls: written as the Pad's pads are)
        ints = case.context.producer == Producer.CONSTANT_INTS
        nodes.append((constant_ints_node if ints else constant_node)("data", np.asarray(case.data)))
        version = max(version, VALUE_INTS_OPSET) if ints else version
    if case.constant_value is not None:
        names.append("constant_value")
        value = np.asarray(case.constant_value)
        if placement == Placement.INPUTS:
            inputs.append(helper.make_tensor_value_info("constant_value", onnx_type(case.dtype),
                                                        [f"constant_value_{i}" for i in range(value.ndim)]))
        else:
            initializers.append(numpy_helper.from_array(value, "constant_value"))
    initializers.append(numpy_helper.from_array(np.array([-1], np.int64), "flat"))
    nodes += [helper.make_node("Reshape", [name, "flat"], [f"{name}_flat"]) for name in names]
    initializers.append(numpy_helper.from_array(np.array([2], np.int64), "twice"))
    parts = [f"{name}_flat" for name in names] if len(names) > 1 else ["data_flat", "data_flat"]
    nodes.append(helper.make_node("Concat", parts, ["joined"], axis=0))
    nodes.append(helper.make_node("Tile", ["joined", "twice"], [OUTPUT_NAME]))
    output = helper.make_tensor_value_info(OUTPUT_NAME, onnx_type(case.dtype), [None])
    graph = helper.make_graph(nodes, "movement", inputs, [output], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)],
                             ir_version=ir_version(version, case.dtype), producer_name="padconf")


def _value_key(arr) -> tuple | None:
    if arr is None:
        return None
    arr = np.asarray(arr)
    # Bytes, not values: -0.0 and 0.0 (or two NaN payloads) must not share a baked-in model.
    body = tuple(arr.reshape(-1).tolist()) if arr.dtype == object else arr.tobytes()
    return arr.shape, body


def model_key(case: Case, placement: Placement = Placement.INPUTS) -> tuple:
    """The cache key of the model a case runs on: cases with equal keys share one compiled model.
    A framework's case (not ONNX's) is a call whose graph holds everything but the data's values."""
    if parse_spec_id(case.spec)[0] != "onnx":
        return (case.op, case.spec, case.mode, case.dtype, case.data.shape, placement,
                tuple(int(p) for p in case.pads), _value_key(case.constant_value))
    version = opset_version(case)
    key: tuple = (case.op, case.spec, case.mode, case.dtype, case.data.ndim, placement,
           case.constant_value is not None, case.axes is not None, case.pads_type, case.axes_type,
           None if case.constant_value is None else np.ndim(case.constant_value))
    if placement in (Placement.INITIALIZERS, Placement.FOLDED) or version <= 2:
        key += (tuple(int(p) for p in case.pads), _value_key(case.constant_value),
                None if case.axes is None else tuple(int(a) for a in case.axes))
    if placement == Placement.FOLDED:
        key += (_value_key(case.data),)
    if case.context is not None and case.op in ("Pad", *CONSUMER_OPS):  # the whole graph: every operand, the shape
        key += (case.context.key(), case.data.shape, tuple(int(p) for p in case.pads),
                _value_key(case.constant_value), None if case.axes is None else tuple(int(a) for a in case.axes))
    return key


def fed_input_names(model: onnx.ModelProto) -> list[str]:
    """The graph inputs a runtime is fed, in graph order: those that are not initializers."""
    constants = {init.name for init in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in constants]


def feeds(case: Case, placement: Placement = Placement.INPUTS) -> dict[str, np.ndarray]:
    """The graph inputs of ``build_model(case, placement)``, in the case's own dtypes."""
    if case.context is not None and case.op in ("Pad", *CONSUMER_OPS):
        return context_feeds(case, placement)
    if placement == Placement.FOLDED:
        return {}
    out = {} if case.context is not None and case.context.producer.is_constant else {"data": case.data}
    if placement == Placement.INPUTS and opset_version(case) > 2 and case.op == "Pad":
        out.update(pad_arrays(case))
    if placement == Placement.INPUTS and case.op == "Concat" and case.constant_value is not None:
        out["constant_value"] = np.asarray(case.constant_value)
    return out
