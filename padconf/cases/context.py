"""A Pad case's neighbourhood: the consumer the Pad feeds, the nodes that produce its
pads, and whether the data's shape is static. Data only: drawing, the oracle and the model are
in padconf.cases.context_oracle.

A case with a context is still a Pad case: its kind, reason and readings are the Pad's
(classify), and its expected output and each reading's output are the Pad's passed through
the consumer (contexts.apply_context)."""
from __future__ import annotations

import functools
import json
import math
import reprlib
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from padconf.core.dtypes import ArrayBudget, decode_array, encode_array
from padconf.core.errors import CaseError
from padconf.core.vocabulary import Word


class Consumer(Word):
    """The node the Pad's output feeds (none: the Pad's output is the model's)."""

    NONE = "none"
    CONV = "Conv"
    MAX_POOL = "MaxPool"
    AVERAGE_POOL = "AveragePool"
    PAD = "Pad"  # a second Pad, constant mode
    SLICE = "Slice"
    SPACE_TO_DEPTH = "SpaceToDepth"  # blocksize; the Pad's spatial dims a multiple of it
    DEPTH_TO_SPACE = "DepthToSpace"  # blocksize and mode (DCR, CRD); channels a multiple of its square


class Producer(Word):
    """Where the Pad's pads (and constant value, axes) come from."""

    # graph inputs or initializers, as the placement says (padconf's one-node model)
    INPUTS = "inputs"
    CONSTANT_NODE = "constant-node"  # Constant nodes, whatever the placement
    # Constant nodes written with value_ints (pads, axes: int64) and value_float (the value), as
    # exporters and hand-written graphs write them, whatever the placement
    CONSTANT_INTS = "constant-value-ints"
    # pads = Cast(Sub(Concat(Gather(Shape(data), axes), ...), offsets)): computed from the data's shape
    SHAPE_CHAIN = "shape-chain"
    # PyTorch's export of F.pad: the pads in torch's order (last axis first, begin/end pairs),
    # extended with ConstantOfShape, Reshape [-1, 2], reversed by Slice, Transpose, Reshape, Cast
    TORCH_PAD = "torch-pad"

    @property
    def is_constant(self) -> bool:
        """Whether the pads come from Constant nodes (constant in every placement)."""
        return self in (Producer.CONSTANT_NODE, Producer.CONSTANT_INTS)


# attributes a context may hold: names and values of the consumer's own attributes and inputs
DTYPE = "float"  # float32: Conv and the pools take floats; float32 is what every runtime implements
POOLS = (Consumer.CONV, Consumer.MAX_POOL, Consumer.AVERAGE_POOL)
BLOCKS = (Consumer.SPACE_TO_DEPTH, Consumer.DEPTH_TO_SPACE)  # rank 4: N, C, H, W
_ATTR_VALUE = (int, str)
MAX_ATTR_ITEMS = 64


# A Slice's and a second Pad's "attrs" are the operands padconf gives them as initializers
_OPERAND_ATTRS = {Consumer.NONE: frozenset(), Consumer.SLICE: frozenset({"starts", "ends", "axes", "steps"}),
                  Consumer.PAD: frozenset({"pads", "value"})}


@functools.cache
def consumer_attribute_names(consumer: Consumer) -> frozenset[str]:
    """The keys a context's ``attrs`` may hold for ``consumer``: the attributes its ONNX schema
    defines (Conv, MaxPool, AveragePool), or the operands padconf feeds it (Slice, Pad); a key
    of a case file is checked against these before it goes anywhere, a generated repro included."""
    if consumer in _OPERAND_ATTRS:
        return _OPERAND_ATTRS[consumer]
    import onnx.defs

    return frozenset(onnx.defs.get_schema(str(consumer)).attributes)


@dataclass
class Context:
    consumer: Consumer = Consumer.NONE
    # the consumer's attributes (kernel_shape, strides, pads, ...) and, for Slice and a second
    # Pad, its inputs (starts, ends, axes, steps; pads, value): ints, lists of ints, text
    attrs: dict = field(default_factory=dict)
    weights: np.ndarray | None = None  # Conv's W (float32)
    producer: Producer = Producer.INPUTS
    static_shape: bool = False  # the data input's dims are the data's, not symbolic
    # Conv and AveragePool: the absolute difference allowed from the float64 oracle, per element
    # whose expected value is finite (contexts.tolerance); None: bit for bit
    tolerance: float | None = None
    # the Pad's output feeds two consumers (the consumer twice, the two outputs added; with no
    # consumer, both inputs of one Add): a rewriter may fuse a Pad only into its one consumer
    fanout: bool = False
    # the Pad node writes its mode attribute; False (constant mode only): none, whose default is constant
    mode_attr: bool = True

    def to_json(self) -> dict:
        doc = {"consumer": self.consumer, "attrs": self.attrs, "producer": self.producer,
               "static_shape": self.static_shape, "tolerance": self.tolerance,
               "weights": None if self.weights is None else encode_array(self.weights, "float")}
        return {**doc, **({"fanout": True} if self.fanout else {}), **({} if self.mode_attr else {"mode_attr": False})}

    @classmethod
    def from_json(cls, doc, budget: ArrayBudget | None = None) -> Context:
        """A context from a case document (others' files): every key's type checked, W's size
        counted against ``budget`` before it is decoded."""
        if not isinstance(doc, dict):
            raise CaseError(f"malformed case: context {reprlib.repr(doc)} is not an object")
        if doc.get("consumer", "none") not in tuple(Consumer) or doc.get("producer", "inputs") not in tuple(Producer):
            raise CaseError(f"malformed case: context consumer or producer {reprlib.repr(doc)} unknown")
        attrs = doc.get("attrs") or {}
        if not isinstance(attrs, dict) or len(attrs) > MAX_ATTR_ITEMS or not all(
                isinstance(k, str) and _attr_ok(v) for k, v in attrs.items()):
            raise CaseError(f"malformed case: context attrs {reprlib.repr(attrs)} are not ints, lists of ints or text")
        consumer = Consumer(doc.get("consumer", "none"))
        unknown = sorted(set(attrs) - consumer_attribute_names(consumer))
        if unknown:
            raise CaseError(f"malformed case: context attribute {unknown[0]!r} is none the {consumer} consumer "
                            f"defines")
        tolerance = doc.get("tolerance")
        if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float))):
            raise CaseError(f"malformed case: context tolerance {tolerance!r} is not a number")
        for name, default in (("static_shape", False), ("fanout", False), ("mode_attr", True)):
            if not isinstance(doc.get(name, default), bool):
                raise CaseError(f"malformed case: context {name} is not true or false")
        weights = doc.get("weights")
        return cls(consumer=consumer, attrs=dict(attrs),
                   weights=None if weights is None else decode_array(weights, budget),
                   producer=Producer(doc.get("producer", "inputs")), static_shape=doc.get("static_shape", False),
                   tolerance=None if tolerance is None else float(tolerance), fanout=doc.get("fanout", False),
                   mode_attr=doc.get("mode_attr", True))

    def key(self) -> tuple:
        """What the model built for the context depends on (the cache key's part)."""
        return (self.consumer, json.dumps(self.attrs, sort_keys=True), self.producer, self.static_shape,
                None if self.weights is None else (self.weights.shape, self.weights.tobytes()), self.fanout,
                self.mode_attr)

    def graph(self, mode: str) -> str:
        """The model a context case is, in words, for every report and the gate's lines:
        "Pad(edge) before Slice", "Pad(constant), pads computed from Shape(data), before
        Conv-2d, static shape"; "Pad(edge)" for a context that adds nothing."""
        words = [f"Pad({mode})" if self.mode_attr else "Pad(no mode attribute)"]
        if self.producer != Producer.INPUTS:
            words.append(_PRODUCED[self.producer])
        if self.consumer != Consumer.NONE:
            kernel = self.attrs.get("kernel_shape") if self.consumer in POOLS else None
            second = "(constant)" if self.consumer == Consumer.PAD else ""
            words.append(f"before {'two ' if self.fanout else ''}{self.consumer}{second}"
                         + (f"-{len(kernel)}d" if isinstance(kernel, list) else ""))
        elif self.fanout:
            words.append("before both inputs of an Add")
        if self.static_shape:
            words.append("static shape")
        return words[0] + (" " + words[1] if len(words) == 2 and words[1].startswith("before") else
                           "".join(f", {w}" for w in words[1:]))

    def tags(self) -> list[str]:
        """The context's edge classes (padconf.cases.edge_classes' vocabulary)."""
        a = self.attrs
        tags = [f"context:{self.consumer}", f"producer:{self.producer}",
                "static-shape" if self.static_shape else "symbolic-shape"]
        tags += ["context:fanout"] * self.fanout + ["context:no-mode-attribute"] * (not self.mode_attr)
        if self.consumer in (Consumer.CONV, Consumer.MAX_POOL, Consumer.AVERAGE_POOL):
            tags.append(f"context:{self.consumer}-{len(a['kernel_shape'])}d")
            tags += [f"context:auto_pad={a['auto_pad']}"] * (a.get("auto_pad", "NOTSET") != "NOTSET")
            tags += ["context:own-pads"] * any(a.get("pads", []))
            tags += ["context:ceil_mode"] * bool(a.get("ceil_mode"))
            tags += ["context:strided"] * any(s > 1 for s in a.get("strides", []))
            tags += ["context:dilated"] * any(d > 1 for d in a.get("dilations", []))
        if self.consumer == Consumer.AVERAGE_POOL:
            tags.append(f"context:count_include_pad={a.get('count_include_pad', 0)}")
        if self.consumer == Consumer.CONV and a.get("group", 1) > 1:
            tags.append("context:grouped-conv")
        if self.consumer in BLOCKS:
            tags.append(f"context:blocksize={a['blocksize']}")
            tags += [f"context:{self.consumer}-{a['mode']}"] if "mode" in a else []
        return tags


_PRODUCED = {Producer.CONSTANT_NODE: "pads from Constant nodes",
             Producer.CONSTANT_INTS: "pads from Constant nodes' value_ints",
             Producer.SHAPE_CHAIN: "pads computed from Shape(data)",
             Producer.TORCH_PAD: "pads as torch.onnx exports F.pad"}
CONSTANT_PADS_WORDS = tuple(_PRODUCED[p] for p in Producer if p.is_constant)  # in Case.graph: pads no placement feeds


# Bounds on a context read from a file (padconf draws kernels, strides and dilations of at most 3,
# a second Pad's pads of at most 2, on outputs of a few hundred elements): the oracle's MaxPool
# visits every window in Python, so the Pad's output a consumer takes is bounded as well.
MAX_CONTEXT_ELEMENTS = 1 << 16  # of the Pad's output, where it feeds a consumer
MAX_WINDOW = 1 << 10  # a kernel side, a stride, a dilation, a pool's own pad, a second Pad's pad
MAX_SLICE_INDEX = 1 << 62  # Slice's starts and ends (int64; INT64_MAX means "to the end" too)
AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
_FLAGS = ("ceil_mode", "count_include_pad", "storage_order")  # 0 or 1
_BLOCK_MODES = ("DCR", "CRD")
_ATTR_TYPES = {"INT": "an integer", "INTS": "a list of integers", "STRING": "text"}


def _schema(consumer: Consumer, opset: int):
    import onnx.defs

    try:
        return onnx.defs.get_schema(str(consumer), opset)
    except onnx.defs.SchemaError:
        raise CaseError(f"malformed case: no {consumer} operator at opset {opset}") from None


def check_context(ctx: Context, rank: int, opset: int, padded: list[int] | None, exact: bool) -> None:
    """Refuse, in one line, a context whose consumer's graph is not valid for a Pad output of
    rank ``rank`` (shape ``padded``, where known: its size is bounded; with ``exact``, a defined
    case's, the channels and blocks are checked against it too) at ``opset``: every attribute of a Conv, pool,
    SpaceToDepth or DepthToSpace one the operator's ONNX schema at that opset defines, of the
    type it declares, its required ones (and Conv's W) present; and the value rules the
    documents give (strides, dilations and kernel sides >= 1, each list of the spatial rank,
    auto_pad and mode of their words, W's shape the kernel's and the channels'; Slice's
    operands of one length on distinct axes, steps not 0; a second Pad's pads for every axis).
    A case file's context reaches the oracle, the model and the repro only past this
    (Case.from_json): a pool with no strides or a Conv without W stopped minimize with exit 3."""
    def bad(what: str) -> CaseError:
        return CaseError(f"malformed case: context {ctx.consumer}: {what}")

    a, consumer = ctx.attrs, ctx.consumer
    if consumer == Consumer.NONE:
        if a or ctx.weights is not None:
            raise bad("a context without a consumer holds attributes or weights")
        return
    if padded is not None and math.prod(padded) > MAX_CONTEXT_ELEMENTS:
        raise bad(f"the Pad's output {reprlib.repr(padded)} feeding it holds more than {MAX_CONTEXT_ELEMENTS} elements")
    if (ctx.weights is not None) != (consumer == Consumer.CONV):
        raise bad("Conv takes its W, and no other consumer weights" if consumer == Consumer.CONV
                  else "weights are Conv's alone")
    if consumer in _OPERAND_ATTRS:
        _check_operands(ctx, rank, bad)
        return
    schema = _schema(consumer, opset)
    for name, value in a.items():
        if name not in schema.attributes:
            raise bad(f"attribute {name[:40]!r} is none the operator defines at opset {opset}")
        kind = str(schema.attributes[name].type).rsplit(".", 1)[-1]
        ok = {"INT": type(value) is int, "INTS": isinstance(value, list), "STRING": isinstance(value, str)}.get(kind)
        if not ok:
            raise bad(f"attribute {name!r} is {_ATTR_TYPES.get(kind, kind)} in its schema, not {reprlib.repr(value)}")
    required = [name for name, attr in schema.attributes.items() if attr.required]
    if consumer in POOLS:
        required.append("kernel_shape")  # Conv's too: padconf's oracle and W are built from it
    missing = [name for name in required if name not in a]
    if missing:
        raise bad(f"attribute {missing[0]!r} is required")
    if consumer in BLOCKS:
        if rank != 4:
            raise bad(f"takes a rank 4 input, not rank {rank}")
        block = a["blocksize"]
        if not 1 <= block <= MAX_WINDOW or a.get("mode", "DCR") not in _BLOCK_MODES:
            raise bad(f"blocksize {block} is not in [1, {MAX_WINDOW}], or mode {a.get('mode')!r} not DCR or CRD")
        if exact and padded is not None and (padded[1] % (block * block) if consumer == Consumer.DEPTH_TO_SPACE
                                   else padded[2] % block or padded[3] % block):
            raise bad(f"blocksize {block} does not divide the Pad's output {padded}")
        return
    spatial = rank - 2
    if spatial < 1:
        raise bad(f"takes a rank >= 3 input (N, C, spatial ...), not rank {rank}")
    for name, length, low in (("kernel_shape", spatial, 1), ("strides", spatial, 1), ("dilations", spatial, 1),
                              ("pads", 2 * spatial, 0)):
        values = a.get(name)
        if values is not None and (len(values) != length or not all(low <= v <= MAX_WINDOW for v in values)):
            raise bad(f"{name} {reprlib.repr(values)} is not {length} values in [{low}, {MAX_WINDOW}] "
                      f"(the input's spatial rank is {spatial})")
    if a.get("auto_pad", "NOTSET") not in AUTO_PADS:
        raise bad(f"auto_pad {a['auto_pad'][:40]!r} is not one of {', '.join(AUTO_PADS)}")
    for flag in _FLAGS:
        if a.get(flag, 0) not in (0, 1):
            raise bad(f"{flag} {a[flag]} is not 0 or 1")
    if math.prod(a["kernel_shape"]) > MAX_CONTEXT_ELEMENTS:
        raise bad(f"kernel_shape {a['kernel_shape']} covers more than {MAX_CONTEXT_ELEMENTS} elements")
    if consumer == Consumer.CONV:
        assert ctx.weights is not None
        group, w = a.get("group", 1), ctx.weights
        channels = padded[1] if exact and padded is not None else None
        if w.dtype != np.float32 or w.ndim != rank or list(w.shape[2:]) != list(a["kernel_shape"]) \
                or not 1 <= group <= w.shape[0] or w.shape[0] % group \
                or (channels is not None and channels != w.shape[1] * group):
            raise bad(f"W of {w.dtype} shape {list(w.shape)} is not float32 (M, C / group, *kernel_shape) for "
                      f"kernel_shape {a['kernel_shape']}, group {group} and {channels} channels")


def _check_operands(ctx: Context, rank: int, bad) -> None:
    """A Slice's starts, ends, axes and steps, or a second Pad's pads and value."""
    a = ctx.attrs
    if ctx.consumer == Consumer.PAD:
        pads, value = a.get("pads"), a.get("value")
        if not isinstance(pads, list) or len(pads) != 2 * rank or not all(0 <= p <= MAX_WINDOW for p in pads):
            raise bad(f"pads {reprlib.repr(pads)} are not {2 * rank} values in [0, {MAX_WINDOW}]")
        if type(value) is not int or abs(value) > 1 << 24:
            raise bad(f"value {reprlib.repr(value)} is not an integer of at most 2**24")
        return
    # padconf's model gives all four as initializers (context_model.consumer_graph)
    operands = [a.get(name) for name in ("starts", "ends", "axes", "steps")]
    if not all(isinstance(v, list) for v in operands):
        raise bad("starts, ends, axes and steps are each a list of integers")
    starts, ends, axes, steps = cast(list[list[int]], operands)
    count = len(starts)
    if not 1 <= count <= rank or any(len(v) != count for v in (ends, axes, steps)):
        raise bad(f"starts, ends, axes and steps are not of one length in [1, {rank}]")
    if not all(-rank <= x < rank for x in axes) or len({x % rank for x in axes}) != count:
        raise bad(f"axes {axes} are not distinct axes of a rank {rank} input")
    if 0 in steps or not all(abs(v) <= MAX_SLICE_INDEX for v in starts + ends + steps):
        raise bad(f"steps {steps} hold 0, or starts, ends or steps lie beyond +-2**62")


def _attr_ok(value) -> bool:
    if isinstance(value, list):
        return len(value) <= MAX_ATTR_ITEMS and all(type(v) is int for v in value)
    return isinstance(value, _ATTR_VALUE) and not isinstance(value, bool)


def snap(context: Context | None, expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """``got``, or ``expected`` where ``got`` is within the context's tolerance of it (a Conv or
    AveragePool context: contexts.tolerance): same dtype and shape, every element whose
    expected value is finite within the tolerance, every other element the same number (NaN
    for NaN, the same infinity). Judging then compares bit for bit, as for any case."""
    if context is None or context.tolerance is None or got.dtype != expected.dtype or got.shape != expected.shape \
            or expected.dtype.kind != "f":
        return got
    e, g = expected.astype(np.float64), got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(e)
        close = np.where(finite, np.abs(g - e) <= context.tolerance, (e == g) | (np.isnan(e) & np.isnan(g)))
    return expected if bool(close.all()) else got
