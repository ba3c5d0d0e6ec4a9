"""The oracle of a context case (padconf.cases.context): what the Pad's output becomes through its
consumer, by the consumer's own document (``apply_context``).

padconf's reference computes the Pad (classify, as for any case); onnx's reference evaluator
computes the consumer alone, applied to the reference's Pad output in float64, and the result
is rounded to float32 once (``auto_pad`` SAME written out as pads). A second Pad and MaxPool are
computed by padconf itself (onnx's MaxPool contradicts its document: docs/contexts.md). Each
reading of an undefined point is passed through the consumer on its own, so the readings carry
through (a reading whose output the consumer refuses becomes a refusal).

SpaceToDepth and DepthToSpace are onnx's evaluator's (a reshape and a transpose: exact). With two
consumers (``fanout``) the output is the sum of the two consumers' outputs, each computed alone.

Tolerance: MaxPool, Slice, Pad, SpaceToDepth and DepthToSpace are exact (a max, a copy and a Pad
of float32 values is the float32 value itself). Conv and AveragePool are sums: a runtime sums float32 products in some
order, each step rounding by at most 2^-24 relatively, so |got - exact| <= n * 2^-23 * S, with n
the terms summed and S the same consumer over |x| (and |W|). padconf allows (n + 2) * 2^-23 * max
S over the output, elements whose expected value is finite only; a non-finite expected value must
be matched exactly (context.snap).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import onnx
from onnx import TensorProto, helper

from padconf.cases.case import Case, CaseKind
from padconf.cases.context import POOLS, Consumer, Context
from padconf.cases.context_model import consumer_graph
from padconf.core.errors import CaseError
from padconf.spec.loader import parse_spec_id
from padconf.spec.reference import pad as reference_pad

EPS32 = 2.0 ** -23


class OracleUnsure(CaseError):
    """onnx's reference evaluator gives a consumer output whose shape is not the one the
    consumer's document gives (its pools with their own pads: an IndexError, or a window too
    few): padconf has no oracle for the case, which is then not drawn (or read: a CaseError)."""


def documented_shape(ctx: Context, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The output shape the ONNX documents of Conv, MaxPool and AveragePool give for an input of
    ``shape`` (None for the other consumers): explicit pads, "output_spatial_shape[i] =
    floor((input_spatial_shape[i] + pad_shape[i] - dilation[i] * (kernel_shape[i] - 1) - 1) /
    strides_spatial_shape[i] + 1)", ceil with ``ceil_mode``, where "Sliding windows that would
    start in the right padded region are ignored"; ``auto_pad`` SAME: ceil(input / stride);
    VALID: floor (ceil with ``ceil_mode``) of (input - ((kernel - 1) * dilation + 1) + 1) / stride."""
    if ctx.consumer not in POOLS:
        return None
    a = ctx.attrs
    rank = len(a["kernel_shape"])
    dilations, auto = a.get("dilations", [1] * rank), a.get("auto_pad", "NOTSET")
    pads = a.get("pads", [0] * 2 * rank) if auto == "NOTSET" else [0] * 2 * rank
    rounding = math.ceil if a.get("ceil_mode") else math.floor
    out = []
    for i, (n, k, s, d) in enumerate(zip(shape[2:], a["kernel_shape"], a.get("strides", [1] * rank), dilations)):
        if auto.startswith("SAME"):
            out.append(math.ceil(n / s))
        elif auto == "VALID":
            out.append(rounding((n - ((k - 1) * d + 1) + 1) / s))
        else:
            size = rounding((n + pads[i] + pads[rank + i] - d * (k - 1) - 1) / s + 1)
            if a.get("ceil_mode") and (size - 1) * s >= n + pads[i]:
                size -= 1
            out.append(size)
    channels = ctx.weights.shape[0] if ctx.consumer == Consumer.CONV and ctx.weights is not None else shape[1]
    return (shape[0], channels, *out)


def consume(ctx: Context, x: np.ndarray, opset: int) -> np.ndarray | None:
    """The consumer's output for the Pad's output ``x`` (float32), or None where the consumer
    refuses it (a kernel larger than its padded input ...). A second Pad: padconf's reference."""
    if ctx.consumer == Consumer.NONE:
        return x
    if ctx.consumer == Consumer.PAD:
        return reference_pad(x, ctx.attrs["pads"], "constant", np.float32(ctx.attrs["value"]))
    if ctx.consumer == Consumer.MAX_POOL:
        return _max_pool(ctx, x)
    out = _evaluate(ctx, x.astype(np.float64), opset)
    want = documented_shape(ctx, x.shape)
    if want is not None and all(n > 0 for n in want) and (out is None or out.shape != want):
        raise OracleUnsure(f"onnx's reference evaluator's {ctx.consumer} gives "
                           f"{'an error' if out is None else 'shape ' + str(list(out.shape))} where its document "
                           f"gives shape {list(want)}, for input shape {list(x.shape)} and {ctx.attrs}")
    return out


def explicit_pads(attrs: dict, shape: tuple[int, ...]) -> dict:
    """A Conv or pool's attributes with ``auto_pad`` SAME_UPPER or SAME_LOWER written out as the
    ``pads`` its documents give for an input of ``shape``: "pad the input so that
    output_shape[i] = ceil(input_shape[i] / strides[i]) ... In case the padding is an odd
    number, the extra padding is added at the end for SAME_UPPER and at the beginning for
    SAME_LOWER", the total "(output_spatial_shape[i] - 1) * strides_spatial_shape[i] +
    ((kernel_spatial_shape[i] - 1) * dilations[i] + 1) - input_spatial_shape[i]" (ceil_mode
    0: those pads give that output shape exactly). onnx's reference evaluator puts SAME_LOWER's
    extra padding at the end, as SAME_UPPER's: padconf hands it the pads instead. Other
    attributes are returned as they are."""
    auto = attrs.get("auto_pad", "NOTSET")
    if not auto.startswith("SAME"):
        return attrs
    rank = len(attrs["kernel_shape"])
    dilations, strides = attrs.get("dilations", [1] * rank), attrs.get("strides", [1] * rank)
    begin, end = [], []
    for n, k, s, d in zip(shape[2:], attrs["kernel_shape"], strides, dilations):
        total = max(0, (math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n)
        small, big = total // 2, total - total // 2
        begin.append(big if auto == "SAME_LOWER" else small)
        end.append(small if auto == "SAME_LOWER" else big)
    return {**{k: v for k, v in attrs.items() if k != "auto_pad"}, "pads": begin + end,
            **({"ceil_mode": 0} if "ceil_mode" in attrs else {})}


def _max_pool(ctx: Context, x: np.ndarray) -> np.ndarray | None:
    """MaxPool as its document gives it, on the Pad's float32 output ``x``: each output element
    the largest input element its window covers (the window's positions ``o * stride - pad_begin
    + j * dilation``, those inside the input), over documented_shape's output. padconf computes
    it, not onnx's reference evaluator, whose MaxPool puts SAME_LOWER's odd pad at the end in
    3-D and fails on some explicit pads (docs/contexts.md). A window that covers no input
    element is a point the document leaves open: OracleUnsure."""
    attrs = explicit_pads(ctx.attrs, x.shape)
    rank = len(attrs["kernel_shape"])
    pads = attrs.get("pads", [0] * 2 * rank) if attrs.get("auto_pad", "NOTSET") == "NOTSET" else [0] * 2 * rank
    strides, dilations = attrs.get("strides", [1] * rank), attrs.get("dilations", [1] * rank)
    shape = documented_shape(ctx, x.shape)
    assert shape is not None  # a pool's
    if not all(n > 0 for n in shape):  # a kernel larger than the padded input: MaxPool refuses it
        return None
    y = np.empty(shape, x.dtype)
    for out in np.ndindex(*shape[2:]):
        covered = []
        for i, o in enumerate(out):
            at = (o * strides[i] - pads[i] + j * dilations[i] for j in range(attrs["kernel_shape"][i]))
            covered.append([p for p in at if 0 <= p < x.shape[2 + i]])
        if not all(covered):
            raise OracleUnsure(f"MaxPool's window at {list(out)} covers no element of input shape {list(x.shape)} "
                               f"({ctx.attrs}): its document gives no value")
        window = x[(slice(None), slice(None)) + np.ix_(*covered)]
        y[(slice(None), slice(None)) + out] = window.reshape(*x.shape[:2], -1).max(axis=-1)
    return y


def _evaluate(ctx: Context, x64: np.ndarray, opset: int, weights_abs: bool = False) -> np.ndarray | None:
    from onnx.reference import ReferenceEvaluator
    if ctx.consumer == Consumer.CONV and weights_abs:
        assert ctx.weights is not None
        ctx = Context(ctx.consumer, ctx.attrs, np.abs(ctx.weights), ctx.producer, ctx.static_shape)
    if ctx.consumer in POOLS:
        ctx = dataclasses.replace(ctx, attrs=explicit_pads(ctx.attrs, x64.shape))
    nodes, inits = consumer_graph(ctx, "x", "y", "float64")
    graph = helper.make_graph(nodes, "consumer", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x64.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [None] * x64.ndim)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(model)  # a model padconf built wrong is padconf's fault: it raises
    try:
        with np.errstate(all="ignore"):
            (y,) = ReferenceEvaluator(model).run(None, {"x": x64})
            return np.asarray(y) if weights_abs else np.asarray(y).astype(np.float32)
    except Exception:  # the consumer refuses this input (its own rules, not Pad's)
        return None


def _terms(ctx: Context) -> int:
    k = math.prod(ctx.attrs["kernel_shape"])
    if ctx.consumer == Consumer.CONV:
        assert ctx.weights is not None
        return k * ctx.weights.shape[1]
    return k


def tolerance(ctx: Context, pad_outputs: list[np.ndarray], opset: int) -> float | None:
    """The absolute tolerance of a Conv or AveragePool context (the module's docstring)."""
    if ctx.consumer not in (Consumer.CONV, Consumer.AVERAGE_POOL):
        return None
    worst = 0.0
    for x in pad_outputs:
        with np.errstate(all="ignore"):
            s = _evaluate(ctx, np.abs(x.astype(np.float64)), opset, weights_abs=True)
        if s is not None and np.isfinite(s).any():
            worst = max(worst, float(np.max(s[np.isfinite(s)])))
    return (_terms(ctx) + 2) * EPS32 * worst


def graph_output(ctx: Context, x: np.ndarray, opset: int) -> np.ndarray | None:
    """The graph's output for the Pad's output ``x``: the consumer's, or with two consumers
    (``fanout``) the sum of the two, each the consumer's (twice a float32 is exact)."""
    out = consume(ctx, x, opset)
    return out if out is None or not ctx.fanout else out + out


def _tolerance(ctx: Context, pad_outputs: list[np.ndarray], opset: int) -> float | None:
    found = tolerance(ctx, pad_outputs, opset)
    return found if found is None or not ctx.fanout else 2 * found  # each of the two sums within it


def apply_context(case: Case) -> Case:
    """``case``, classified as a Pad alone, with its expected output and each reading's passed
    through its context's consumer (or two: ``fanout``). Where the consumer refuses the Pad's
    defined output the case is must-reject by the consumer's rule ("context"); where every
    reading's consumer output is the same, the case is defined."""
    ctx = case.context
    if ctx is None or (ctx.consumer == Consumer.NONE and not ctx.fanout) \
            or case.kind in (CaseKind.MUST_REJECT, CaseKind.TOO_LARGE):
        return case
    opset = parse_spec_id(case.spec)[1]
    if case.kind == CaseKind.DEFINED:
        assert case.expected is not None
        out = graph_output(ctx, case.expected, opset)
        if out is None:
            return case.with_(kind=CaseKind.MUST_REJECT, expected=None, rule="context",
                              reason=f"{ctx.consumer} refuses the Pad's output of shape {list(case.expected.shape)}")
        tol = _tolerance(ctx, [case.expected], opset)
        return case.with_(expected=out, context=dataclasses.replace(ctx, tolerance=tol))
    mapped = {name: None if out is None else graph_output(ctx, out, opset)
              for name, out in case.interpretations.items()}
    tol = _tolerance(ctx, [o for o in case.interpretations.values() if o is not None], opset)
    return case.with_(interpretations=mapped, context=dataclasses.replace(ctx, tolerance=tol))


