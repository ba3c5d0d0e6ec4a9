"""A Pad case's neighbourhood: the consumer the Pad feeds, the nodes that produce its
pads, and whether the data's shape is static. Data only: drawing, the oracle and the model are
in padconf.cases.context_oracle.

A case with a context is still a Pad case: its kind, reason and readings are the Pad's
(classify), and its expected output and each reading's output are the Pad's passed through
the consumer (contexts.apply_context)."""
from __future__ import annotations

import functools
import json
import reprlib
from dataclasses import dataclass, field

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
