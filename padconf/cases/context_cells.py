"""The features of a context case that a graph rewriter's Pad pass looks at before it rewrites
(``features``): the Pad's mode (or no mode attribute), its constant value, where its pads come
from, its axes, its amounts, how many consumers it feeds, and the consumer and its attributes.
A rewriter declares the preconditions of its passes in these words (padconf.adapters.rewriters:
``Precondition``), and a run builds a case for each declared cell no drawn case covers
(``cell_case``): whether a fusion's precondition holds is then a choice, not a draw's chance.

A cell is a dict of some features; a (case, placement) covers it where ``features`` gives every
one of them that value."""
from __future__ import annotations

import numpy as np

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.context import POOLS, Consumer, Context, Producer
from padconf.cases.context_oracle import OracleUnsure
from padconf.core.vocabulary import Placement
from padconf.spec.loader import Spec, parse_spec_id

# feature -> the values it takes (a cell names some of them)
FEATURES: dict[str, tuple[str, ...]] = {
    "consumer": tuple(str(c) for c in Consumer),
    "mode": ("constant", "reflect", "edge", "wrap", "absent"),  # absent: no mode attribute (constant)
    "value": ("absent", "zero", "nonzero"),
    # fed: a graph input; initializer; constant-node: a Constant node's tensor; constant-ints: a
    # Constant node's value_ints; computed: a chain of nodes over the data's shape or torch's pads
    "pads": ("fed", "initializer", "constant-node", "constant-ints", "computed"),
    "axes": ("absent", "ordered", "reordered"),
    "amounts": ("zero", "growing", "cropping"),  # every pad 0; none negative; some negative
    "consumers": ("one", "two"),
    "auto_pad": ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"),
    "own_pads": ("none", "given"),  # the consumer's own pads attribute, nonzero
    "group": ("1", "grouped"),
    "count_include_pad": ("0", "1"),
}


def features(case: Case, placement: Placement) -> dict[str, str]:
    """The rewriter-facing features of context case ``case`` run in ``placement``."""
    ctx = case.context or Context()
    a = ctx.attrs
    if ctx.producer == Producer.CONSTANT_NODE:
        pads = "constant-node"
    elif ctx.producer == Producer.CONSTANT_INTS:
        pads = "constant-ints"
    elif ctx.producer == Producer.INPUTS:
        pads = "fed" if placement == Placement.INPUTS else "initializer"
    else:
        pads = "computed"
    value = "absent" if case.constant_value is None else \
        "zero" if float(np.asarray(case.constant_value, np.float64)) == 0 else "nonzero"
    axes = "absent" if case.axes is None else "ordered" if list(case.axes) == sorted(case.axes) else "reordered"
    found = {"consumer": str(ctx.consumer), "mode": case.mode if ctx.mode_attr else "absent", "value": value,
             "pads": pads, "axes": axes, "consumers": "two" if ctx.fanout else "one",
             "amounts": "cropping" if any(p < 0 for p in case.pads) else "growing" if any(case.pads) else "zero"}
    if ctx.consumer in POOLS:
        found.update(auto_pad=a.get("auto_pad", "NOTSET"),
                     own_pads="given" if a.get("auto_pad", "NOTSET") == "NOTSET" and any(a.get("pads", [])) else "none")
    if ctx.consumer == Consumer.CONV:
        found["group"] = "grouped" if a.get("group", 1) > 1 else "1"
    if ctx.consumer == Consumer.AVERAGE_POOL:
        found["count_include_pad"] = str(a.get("count_include_pad", 0))
    return found


def covers(found: dict[str, str], cell: dict[str, str]) -> bool:
    return all(found.get(k) == v for k, v in cell.items())


def expressible(spec: Spec, cell: dict[str, str]) -> bool:
    """Whether a context case of ``spec`` can have ``cell``'s features."""
    mode = cell.get("mode", "constant")
    return (mode == "absent" or mode in spec.modes) and (cell.get("axes", "absent") == "absent" or spec.has_axes) \
        and (cell.get("value", "absent") == "absent" or "constant_value" in spec.operands)


def _attrs(cell: dict[str, str], consumer: Consumer) -> dict:
    auto = cell.get("auto_pad", "NOTSET")
    attrs: dict = {"kernel_shape": [2, 2], "strides": [1, 1], "auto_pad": auto}
    if consumer != Consumer.AVERAGE_POOL:
        attrs["dilations"] = [1, 1]
    if auto == "NOTSET":
        attrs["pads"] = [1, 0, 0, 1] if cell.get("own_pads") == "given" else [0, 0, 0, 0]
    if consumer != Consumer.CONV:
        attrs["ceil_mode"] = 0
    if consumer == Consumer.AVERAGE_POOL:
        attrs["count_include_pad"] = int(cell.get("count_include_pad", "0"))
    if consumer == Consumer.CONV:
        attrs["group"] = 2 if cell.get("group") == "grouped" else 1
    return attrs


def cell_case(spec: Spec, cell: dict[str, str], origin: str) -> Case | None:
    """A defined context case of ``spec`` with ``cell``'s features (each feature it does not
    name at its plainest): data [1, 2, 4, 4], pads on the two spatial axes, a Conv, a pool or no
    consumer; None where ``spec`` cannot express the cell, for another consumer, or where the
    case is not defined."""
    if not expressible(spec, cell) or parse_spec_id(spec.id)[0] != "onnx":
        return None
    consumer = Consumer(cell.get("consumer", "none"))
    if consumer not in (Consumer.NONE, *POOLS):  # the consumers the rewriters' passes fuse into
        return None
    mode = cell.get("mode", "constant")
    data = ((np.arange(32, dtype=np.float32) % 7) - 3.0).reshape(1, 2, 4, 4) * np.float32(0.5)
    amounts = {"zero": ([0, 0], [0, 0]), "cropping": ([1, 0], [0, -1])}
    begin, end = amounts.get(cell.get("amounts", ""), ([1, 0], [0, 2]))
    axes = {"ordered": [2, 3], "reordered": [3, 2]}.get(cell.get("axes", "absent"))
    if axes is None:
        pads = [0, 0, *begin, 0, 0, *end]
    else:  # the same pads, spelled for the axes in their order
        order = [a - 2 for a in axes]
        pads = [begin[i] for i in order] + [end[i] for i in order]
    value = {"zero": np.float32(0), "nonzero": np.float32(1.5)}.get(cell.get("value", "absent"))
    producer = {"constant-node": Producer.CONSTANT_NODE, "constant-ints": Producer.CONSTANT_INTS,
                "computed": Producer.SHAPE_CHAIN}.get(cell.get("pads", ""), Producer.INPUTS)
    ctx = Context(consumer=consumer, producer=producer, fanout=cell.get("consumers") == "two",
                  mode_attr=mode != "absent")
    if consumer in POOLS:
        ctx.attrs = _attrs(cell, consumer)
    if consumer == Consumer.CONV:
        group = ctx.attrs["group"]
        ctx.weights = ((np.arange(2 * (2 // group) * 4) % 5 - 2) * 0.5).astype(np.float32).reshape(2, 2 // group, 2, 2)
    try:  # classified with its context: the Pad's output passed through the consumer
        case = classify(Case(spec=spec.id, data=data, pads=pads, mode="constant" if mode == "absent" else mode,
                             constant_value=None if value is None else np.array(value), axes=axes, origin=origin,
                             context=ctx), spec)
    except OracleUnsure:
        return None
    return case if case.kind == CaseKind.DEFINED else None
