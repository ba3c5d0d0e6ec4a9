"""The ONNX graph a context case runs as (padconf.cases.context): the producer of its pads (graph
inputs, Constant nodes, Constant nodes written with value_ints, a Shape/Gather/Concat/Sub/Cast
chain over the data's shape, PyTorch's F.pad export chain), the Pad (its mode attribute written,
or left to its default), and its consumer (``consumer_graph``, which the oracle runs too), or two
of them whose outputs are added;
``build_context_model(case, placement)`` and ``context_feeds``."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from padconf.cases.case import CONSUMER_OPS, Case
from padconf.cases.context import Consumer, Context, Producer
from padconf.cases.onnx_ir import OUTPUT_NAME, ir_version, opset_version, pad_arrays
from padconf.core.dtypes import dtype_name, onnx_type
from padconf.core.vocabulary import Placement

INT64_MIN = -(2**63)
# Constant's value_ints and value_float came with opset 12 (Constant-12); Constant-11 has only
# value and sparse_value
VALUE_INTS_OPSET = 12


def context_opset(case: Case) -> int:
    """The opset a context case's graph imports: its Pad's, except that a graph whose Constant
    nodes are written with value_ints imports the first opset that has them while its Pad is
    still the case's version (Pad-11 in opset 12, Pad-13 came at 13): a model the opset holds
    whole, not one a strict runtime rightly refuses (which would be padconf's fault judged as
    its verdict)."""
    version = opset_version(case)
    if case.context is None or case.context.producer != Producer.CONSTANT_INTS or version >= VALUE_INTS_OPSET:
        return version
    # an assertion: a case no opset holds is padconf's fault wherever the model is built
    assert onnx.defs.get_schema("Pad", VALUE_INTS_OPSET).since_version == version, case.spec
    return VALUE_INTS_OPSET


def _node_attrs(ctx: Context) -> dict:
    """The consumer's node attributes (Slice's and a second Pad's operands are inputs)."""
    if ctx.consumer in (Consumer.SLICE, Consumer.PAD):
        return {}
    attrs = dict(ctx.attrs)
    if attrs.get("auto_pad", "NOTSET") != "NOTSET":
        attrs.pop("pads", None)
    return attrs


def consumer_graph(ctx: Context, src: str, dst: str, float_type: str) -> tuple[list, list]:
    """The consumer's node(s) and initializers, reading ``src`` and writing ``dst``, in
    ``float_type`` (the model's float32, the oracle's float64)."""
    inits = []
    inputs = [src]
    if ctx.consumer == Consumer.CONV:
        assert ctx.weights is not None
        inits.append(numpy_helper.from_array(ctx.weights.astype(float_type), "ctx_W"))
        inputs.append("ctx_W")
    elif ctx.consumer == Consumer.SLICE:
        for name in ("starts", "ends", "axes", "steps"):
            inits.append(numpy_helper.from_array(np.array(ctx.attrs[name], np.int64), f"ctx_{name}"))
            inputs.append(f"ctx_{name}")
    elif ctx.consumer == Consumer.PAD:
        inits += [numpy_helper.from_array(np.array(ctx.attrs["pads"], np.int64), "ctx_pads"),
                  numpy_helper.from_array(np.array(ctx.attrs["value"], float_type), "ctx_value")]
        inputs += ["ctx_pads", "ctx_value"]
    return [helper.make_node(str(ctx.consumer), inputs, [dst], **_node_attrs(ctx))], inits


def torch_order(case: Case) -> np.ndarray:
    """The case's pads in PyTorch's F.pad order: (begin, end) of the last axis first, over the
    fewest trailing axes that hold every nonzero pad (one at least)."""
    rank = case.data.ndim
    begins, ends = case.pads[:rank], case.pads[rank:]
    k = next((rank - i for i in range(rank) if begins[i] or ends[i]), 1)
    return np.array([p for axis in reversed(range(rank - k, rank)) for p in (begins[axis], ends[axis])], np.int64)


def shape_offsets(case: Case) -> np.ndarray:
    """What the shape chain subtracts from the data's dims to get the pads: dim - pad (int32,
    cast to int64 in the graph, as exporters cast)."""
    rank = case.data.ndim
    targets = [a % rank for a in case.axes] if case.axes is not None else list(range(rank))
    dims = [case.data.shape[t] for t in targets] * 2
    return np.array([d - p for d, p in zip(dims, case.pads)], np.int32)


def constant_node(name: str, value) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def constant_ints_node(name: str, value: np.ndarray) -> onnx.NodeProto:
    """A Constant node written with value_ints (a 1-D int64 tensor) or value_float (a float32
    scalar); other operands (int32 pads, a float32 scalar's bits aside) as a tensor."""
    if value.dtype == np.int64 and value.ndim == 1:
        return helper.make_node("Constant", [], [name], value_ints=[int(v) for v in value])
    if value.dtype == np.float32 and value.ndim == 0:
        return helper.make_node("Constant", [], [name], value_float=float(value))
    return constant_node(name, value)


def _chain(case: Case) -> list[onnx.NodeProto]:
    """The nodes that compute "pads" from the producer's operand."""
    ctx = case.context
    assert ctx is not None
    node = helper.make_node
    if ctx.producer == Producer.SHAPE_CHAIN:
        rank = case.data.ndim
        targets = case.axes if case.axes is not None else list(range(rank))
        return [constant_node("sc_axes", np.array(targets, np.int64)), node("Shape", ["data"], ["sc_shape"]),
                node("Gather", ["sc_shape", "sc_axes"], ["sc_dims"], axis=0),
                node("Concat", ["sc_dims", "sc_dims"], ["sc_dims2"], axis=0),
                node("Cast", ["pad_offsets"], ["sc_offsets"], to=TensorProto.INT64),
                node("Sub", ["sc_dims2", "sc_offsets"], ["sc_pads"]),
                node("Cast", ["sc_pads"], ["pads"], to=TensorProto.INT64)]
    if ctx.producer == Producer.TORCH_PAD:  # torch.onnx's _prepare_onnx_paddings, node for node
        return [node("Shape", ["torch_pads"], ["tp_shape"]), constant_node("tp_zero", np.array(0, np.int64)),
                node("Gather", ["tp_shape", "tp_zero"], ["tp_len"], axis=0),
                constant_node("tp_rank2", np.array(2 * case.data.ndim, np.int64)),
                node("Sub", ["tp_rank2", "tp_len"], ["tp_ext"]), constant_node("tp_one", np.array([1], np.int64)),
                node("Reshape", ["tp_ext", "tp_one"], ["tp_ext1"]),
                node("ConstantOfShape", ["tp_ext1"], ["tp_zeros"],
                     value=numpy_helper.from_array(np.array([0], np.int64))),
                node("Cast", ["torch_pads"], ["tp_cast"], to=TensorProto.INT64),
                node("Concat", ["tp_cast", "tp_zeros"], ["tp_all"], axis=0),
                constant_node("tp_pairs_shape", np.array([-1, 2], np.int64)),
                node("Reshape", ["tp_all", "tp_pairs_shape"], ["tp_pairs"]),
                constant_node("tp_starts", np.array([-1], np.int64)),
                constant_node("tp_ends", np.array([INT64_MIN], np.int64)),
                constant_node("tp_axes", np.array([0], np.int64)), constant_node("tp_steps", np.array([-1], np.int64)),
                node("Slice", ["tp_pairs", "tp_starts", "tp_ends", "tp_axes", "tp_steps"], ["tp_flipped"]),
                node("Transpose", ["tp_flipped"], ["tp_t"], perm=[1, 0]),
                constant_node("tp_flat_shape", np.array([-1], np.int64)),
                node("Reshape", ["tp_t", "tp_flat_shape"], ["tp_flat"]),
                node("Cast", ["tp_flat"], ["pads"], to=TensorProto.INT64)]
    return []


def _pad_operands(case: Case) -> dict[str, np.ndarray]:
    """The operands the producer takes: the pads themselves, or what its chain starts from,
    then the constant value and axes."""
    ctx = case.context
    assert ctx is not None
    arrays = pad_arrays(case)
    pads = arrays.pop("pads")
    if ctx.producer == Producer.SHAPE_CHAIN:
        return {"pad_offsets": shape_offsets(case), **arrays}
    if ctx.producer == Producer.TORCH_PAD:
        return {"torch_pads": torch_order(case), **arrays}
    return {"pads": pads, **arrays}


def build_context_model(case: Case, placement: Placement) -> onnx.ModelProto:
    ctx = case.context
    assert ctx is not None
    elem, rank = onnx_type(case.dtype), case.data.ndim
    version = opset_version(case) if case.op in CONSUMER_OPS else context_opset(case)
    nodes: list = []
    if placement == Placement.FOLDED:
        inputs, inits = [], [numpy_helper.from_array(np.asarray(case.data), "data")]
    else:
        dims: list = list(case.data.shape) if ctx.static_shape else [f"d{i}" for i in range(rank)]
        inputs, inits = [helper.make_tensor_value_info("data", elem, dims)], []
    if case.op in CONSUMER_OPS:  # Case.consumer_control: the padded data into the consumer(s), no Pad
        src, more = "data", []
        if case.op == "UnrankedConsumer":  # through a Reshape to a shape fed at run time: no rank to inference
            src, more = "unranked", [helper.make_node("Reshape", ["data", "shape"], ["unranked"])]
            inputs.append(helper.make_tensor_value_info("shape", TensorProto.INT64, ["shape_0"]))
        consumers, inits_more = _consumers(ctx, src)
        graph = helper.make_graph(more + consumers, f"consumer-{ctx.consumer}", inputs,
                                  [helper.make_tensor_value_info(OUTPUT_NAME, elem, [None] * rank)],
                                  initializer=inits + inits_more)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)],
                                 ir_version=ir_version(version, case.dtype), producer_name="padconf")
    for name, arr in _pad_operands(case).items():
        if ctx.producer == Producer.CONSTANT_NODE:
            nodes.append(constant_node(name, arr))
        elif ctx.producer == Producer.CONSTANT_INTS:
            nodes.append(constant_ints_node(name, arr))
        elif placement in (Placement.INITIALIZERS, Placement.FOLDED):
            inits.append(numpy_helper.from_array(arr, name))
        else:
            inputs.append(helper.make_tensor_value_info(name, onnx_type(dtype_name(arr.dtype)),
                                                        [f"{name}_{i}" for i in range(arr.ndim)]))
    nodes += _chain(case)
    pad_inputs = ["data", "pads", "constant_value" if case.constant_value is not None else ""]
    pad_inputs += ["axes"] if case.axes is not None else []
    while pad_inputs[-1] == "":
        pad_inputs.pop()
    padded = OUTPUT_NAME if ctx.consumer == Consumer.NONE and not ctx.fanout else "padded"
    nodes.append(helper.make_node("Pad", pad_inputs, [padded], **({"mode": case.mode} if ctx.mode_attr else {})))
    if padded != OUTPUT_NAME:
        more, more_inits = _consumers(ctx, padded)
        nodes += more
        inits += more_inits
    graph = helper.make_graph(nodes, f"pad-{ctx.consumer}", inputs,
                              [helper.make_tensor_value_info(OUTPUT_NAME, elem, [None] * rank)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)],
                             ir_version=ir_version(version, case.dtype), producer_name="padconf")


def _consumers(ctx: Context, src: str) -> tuple[list, list]:
    """What reads the Pad's output ``src`` and writes the model's: the consumer; with ``fanout``
    the consumer twice on the same tensor and initializers, the two added (two Adds' inputs of
    ``src`` itself where there is no consumer)."""
    if not ctx.fanout:
        return consumer_graph(ctx, src, OUTPUT_NAME, "float32")
    if ctx.consumer == Consumer.NONE:
        return [helper.make_node("Add", [src, src], [OUTPUT_NAME])], []
    nodes, inits = consumer_graph(ctx, src, "branch_a", "float32")
    second = onnx.NodeProto()
    second.CopyFrom(nodes[-1])
    second.output[0] = "branch_b"
    return [*nodes, second, helper.make_node("Add", ["branch_a", "branch_b"], [OUTPUT_NAME])], inits


def context_feeds(case: Case, placement: Placement) -> dict[str, np.ndarray]:
    ctx = case.context
    assert ctx is not None
    if placement == Placement.FOLDED:
        return {}
    out = {"data": case.data}
    if placement == Placement.INPUTS and not ctx.producer.is_constant and case.op == "Pad":
        out.update(_pad_operands(case))
    if case.op == "UnrankedConsumer":
        out["shape"] = np.array(case.data.shape, np.int64)
    return out
