"""A context case's model as source lines: the repro of a bundle whose case holds Pad
in its neighbourhood spells the whole graph padconf.cases.context_oracle builds (the producer's nodes,
the Pad, its consumer) with onnx's helper, node for node, read back from the ModelProto itself,
so that the script builds exactly the model the bundle's ``model.onnx`` holds."""
from __future__ import annotations

import hashlib
import keyword
import re
from collections.abc import Callable

import numpy as np
import onnx
import onnx.defs
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from padconf.cases.case import Case
from padconf.cases.context import Consumer, Producer
from padconf.core.errors import CaseError

# names the script itself uses (padconf.minimize.bundle.repro_runtime.script): a tensor of such a name gets "_"
_TAKEN = {"model", "expected", "actual", "e", "exc", "np", "helper", "numpy_helper", "TensorProto",
          "AttributeProto", "sys", "os", "HERE", "node", "subprocess", "done"}


def variable(name: str) -> str:
    """The script's variable holding the tensor ``name``."""
    found = re.sub(r"\W", "_", name, flags=re.ASCII)  # a Unicode digit or letter is no identifier's, "²"
    if found != name:  # two names made one ("x.y", "x_y") would share a tensor
        found += "_" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    if not found or found[0].isdigit():
        found = f"t_{found}"
    return f"{found}_" if found in _TAKEN or keyword.iskeyword(found) else found


def model_arrays(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Every constant tensor of ``model`` by its variable's name: initializers and Constant nodes'
    values (the bundle writes the large ones as .npy files for the script to load)."""
    found = {variable(t.name): numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.type == AttributeProto.TENSOR:
                found[variable(node.output[0])] = numpy_helper.to_array(attr.t)
    return found


def _value_info(info: onnx.ValueInfoProto) -> str:
    kind = TensorProto.DataType.Name(info.type.tensor_type.elem_type)
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
            for d in info.type.tensor_type.shape.dim]
    return f"helper.make_tensor_value_info({info.name!r}, TensorProto.{kind}, {dims!r})"


def attribute_name(op_type: str, name: str, opset: int) -> str:
    """``name`` as the script spells a keyword argument of ``helper.make_node(op_type, ...)``:
    only an attribute ``op_type``'s ONNX schema at ``opset`` defines, never text of the model's
    or a case file's spelled as code (CaseError otherwise)."""
    try:
        defined = onnx.defs.get_schema(op_type, opset).attributes
    except onnx.defs.SchemaError:
        raise CaseError(f"the repro cannot build a {op_type[:64]!r} node: no ONNX operator of that name") from None
    if name not in defined or not name.isidentifier() or keyword.iskeyword(name):
        raise CaseError(f"the repro cannot build {op_type} with attribute {name[:64]!r}: "
                        f"not an attribute {op_type}-{opset} defines")
    return name


def _attribute(node: onnx.NodeProto, attr: AttributeProto, opset: int) -> str:
    name = attribute_name(node.op_type, attr.name, opset)
    if attr.type == AttributeProto.TENSOR:
        return f"{name}=numpy_helper.from_array({variable(node.output[0])}, {attr.t.name!r})"
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        value = value.decode()
    elif isinstance(value, list):
        value = [v.decode() if isinstance(v, bytes) else v for v in value]
    if isinstance(value, float) and not np.isfinite(value):  # repr gives "nan", which names nothing
        return f"{name}=float({str(value)!r})"
    if isinstance(value, list) and any(isinstance(v, float) and not np.isfinite(v) for v in value):
        return f"{name}=[" + ", ".join(f"float({str(v)!r})" if isinstance(v, float) else repr(v) for v in value) + "]"
    return f"{name}={value!r}"


def model_lines(model: onnx.ModelProto, fed: dict[str, np.ndarray],
                literal: Callable[[np.ndarray, str], str]) -> tuple[list[str], list[str], str]:
    """(lines assigning each array, lines assigning ``model``, the feeds as source): ``fed`` the
    arrays fed at run time by name; ``literal(array, file)`` the source giving an array (inline,
    or loaded from ``file``, a .npy file of the bundle)."""
    arrays = {**{variable(name): arr for name, arr in fed.items()}, **model_arrays(model)}
    assigned = [f"{name} = {literal(arr, f'{name}.npy')}" for name, arr in arrays.items()]
    graph = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    nodes = ",\n".join(f"    helper.make_node({n.op_type!r}, {list(n.input)!r}, {list(n.output)!r}"
                       + "".join(f", {_attribute(n, a, opset)}" for a in n.attribute) + ")" for n in graph.node)
    inits = ", ".join(f"numpy_helper.from_array({variable(t.name)}, {t.name!r})" for t in graph.initializer)
    build = ["model = helper.make_model(helper.make_graph([", nodes + "],",
             f'    {graph.name!r}, [{", ".join(_value_info(i) for i in graph.input)}],',
             f"    [{', '.join(_value_info(o) for o in graph.output)}],",
             f"    [{inits}]),",
             f'    opset_imports=[helper.make_opsetid("", {opset})], '
             f"ir_version={model.ir_version})"]
    names = "{" + ", ".join(f"{name!r}: {variable(name)}" for name in fed) + "}"
    return assigned, build, names


def graph_text(case: Case, graph: onnx.ModelProto | None) -> str:
    """What the bundle's model (``graph``) holds, for REPORT.md: "one Pad node", or a context
    case's nodes."""
    if case.context is None or graph is None:
        return "one Pad node"
    return f"Pad in its neighbourhood: {' -> '.join(n.op_type for n in graph.graph.node)}"


def context_lines(case: Case) -> list[str]:
    """REPORT.md's lines on a context case's neighbourhood (none for a one-node case)."""
    ctx = case.context
    if ctx is None:
        return []
    lines = []
    if ctx.consumer != Consumer.NONE:
        weights = "" if ctx.weights is None else f", weights of shape {list(ctx.weights.shape)} (`ctx_W.npy`)"
        lines.append(f"- consumer: `{ctx.consumer}` {ctx.attrs}{weights}")
        within = f", compared within {ctx.tolerance:.3g} (a sum in any order)" if ctx.tolerance else ", exactly"
        by = ("padconf's own MaxPool after it, as its document gives it" if ctx.consumer == Consumer.MAX_POOL else
              f"onnx's reference evaluator for the {ctx.consumer} after it (in float64, rounded once)")
        lines.append(f"- expected: padconf's reference for the Pad, {by}{within}")
    if ctx.producer != Producer.INPUTS:
        lines.append(f"- pads produced by: `{ctx.producer}` (docs/contexts.md)")
    if ctx.static_shape:
        lines.append(f"- the data input's shape is static: {list(case.data.shape)}")
    if ctx.fanout:
        lines.append("- the Pad's output feeds two consumers, whose outputs are added")
    if not ctx.mode_attr:
        lines.append("- the Pad node has no mode attribute (its default: constant)")
    return lines
