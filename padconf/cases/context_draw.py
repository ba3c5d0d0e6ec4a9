"""Drawing context cases (padconf.cases.context) with Hypothesis: which spec versions get them
(``applies``), their foci and share of a draw, a consumer's attributes drawn for the Pad's
output shape, a producer, a static or symbolic shape. ``strategies``
hands in its own element and pad strategies (``arrays``, ``pad_amount``), so that this module
imports nothing that imports it."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import breaks_one_rule, classify
from padconf.cases.context import BLOCKS, DTYPE, POOLS, Consumer, Context, Producer
from padconf.cases.context_oracle import OracleUnsure, apply_context
from padconf.spec.loader import Spec, parse_spec_id

BIG = 1e4  # drawn data is clipped to +-BIG (infinities kept): S stays finite, the tolerance meaningful


def applies(spec: Spec) -> bool:
    """Whether ``spec`` gets context cases: ONNX Pad whose pads is an input (Pad-11 and later)
    and whose type list holds float32."""
    return parse_spec_id(spec.id)[0] == "onnx" and spec.operands["pads"]["via"] == "input" and DTYPE in spec.dtypes


def foci(spec: Spec) -> list[str]:
    """The context foci, one a consumer, after strategies.foci's own (so that theirs keep their
    seeds): ``strategies.draw_cases`` draws them, ``strategies.cases`` only when asked to."""
    return [f"context:{c}" for c in Consumer] if applies(spec) else []


def is_context(focus: str) -> bool:
    return focus.startswith("context:")


def share(focus: str, i: int, max_examples: int, chosen: list[str]) -> int:
    """A focus's share of ``max_examples`` in draw_cases: the other foci share the budget as
    before contexts came (each seed draws the cases it drew then), and each context focus
    draws a quarter of a share on top (a context case costs the runtimes a model of its own:
    more would add over a quarter to a default run, docs/performance.md)."""
    plain = [f for f in chosen if not is_context(f)]
    if not plain:
        return max_examples // max(len(chosen), 1)
    if is_context(focus):
        return max_examples // len(plain) // 4
    return max_examples // len(plain) + (i < max_examples % len(plain))


def _spatial(draw, ctx_consumer: Consumer) -> tuple[int, ...]:
    if ctx_consumer in POOLS:
        s = draw(st.integers(1, 3))
        channels = draw(st.sampled_from([1, 2, 4])) if ctx_consumer == Consumer.CONV else draw(st.integers(1, 3))
        return (draw(st.integers(1, 2)), channels, *[draw(st.integers(1, 5 if s < 3 else 3)) for _ in range(s)])
    if ctx_consumer in BLOCKS:  # DepthToSpace: channels a multiple of a blocksize's square
        channels = draw(st.sampled_from([4, 8, 9] if ctx_consumer == Consumer.DEPTH_TO_SPACE else [1, 2, 3]))
        return (draw(st.integers(1, 2)), channels, draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    return tuple(draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 4))))


def _data(draw, arrays, shape: tuple[int, ...], consumer: Consumer) -> np.ndarray:
    data = draw(arrays(DTYPE, shape)).copy()
    with np.errstate(invalid="ignore"):
        big = np.isfinite(data) & (np.abs(data) > BIG)
        data[big] = np.sign(data[big]) * BIG
        if consumer in (Consumer.CONV, Consumer.AVERAGE_POOL):
            # a sum with infinities: inf or NaN as the order of the terms has it, which neither
            # document fixes: finite data only
            data[np.isnan(data)] = 0.0
            data[np.isinf(data)] = np.sign(data[np.isinf(data)]) * BIG
        if consumer == Consumer.MAX_POOL:
            # ONNX's MaxPool says nothing of NaN, nor of which zero a max of -0.0 and 0.0 is; and
            # onnxruntime's and OpenVINO's start a max at the lowest finite float, so that a window
            # of -inf gives -3.4e38: MaxPool's, not Pad's (docs/findings.md)
            data[np.isnan(data)] = 1.0
            data[data == 0] = 0.0
            data[np.isneginf(data)] = -BIG
    return data


def _pool_attrs(draw, consumer: Consumer, sides: list[int], opset: int) -> dict:
    """kernel_shape, strides, own pads or auto_pad, dilations (Conv, MaxPool), ceil_mode and
    count_include_pad (the pools), each no larger than ``sides`` (the Pad's output) allows."""
    kernel = [draw(st.integers(1, max(1, min(3, n)))) for n in sides]
    auto = draw(st.sampled_from(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    # SAME with a stride past the kernel makes ONNX's pad formula negative, which onnxruntime
    # refuses ("padding values must be non-negative") and the document does not clamp: not Pad's
    attrs: dict = {"kernel_shape": kernel, "strides": [draw(st.integers(1, 2 if k > 1 or not auto.startswith("SAME")
                                                                        else 1)) for k in kernel]}
    if consumer != Consumer.AVERAGE_POOL:  # SAME with dilations: onnxruntime refuses it (Conv) or mis-sizes
        # it (MaxPool), neither Pad's business, so it is left out
        attrs["dilations"] = [draw(st.integers(1, 2)) if (k - 1) * 2 + 1 <= n and not auto.startswith("SAME") else 1
                              for k, n in zip(kernel, sides)]
    attrs["auto_pad"] = auto
    if auto == "NOTSET":  # own pads smaller than the kernel, as the pools require
        attrs["pads"] = [draw(st.integers(0, k - 1)) for k in kernel] + [draw(st.integers(0, k - 1)) for k in kernel]
    if consumer != Consumer.CONV:
        attrs["ceil_mode"] = draw(st.integers(0, 1))
    if consumer == Consumer.AVERAGE_POOL:
        attrs["count_include_pad"] = draw(st.integers(0, 1))
    return attrs


def _consumer(draw, consumer: Consumer, out_shape: tuple[int, ...], opset: int) -> Context:
    """The consumer's attributes (and W), drawn for the Pad's output shape."""
    ctx = Context(consumer=consumer)
    if consumer in POOLS:
        ctx.attrs = _pool_attrs(draw, consumer, list(out_shape[2:]), opset)
        if consumer == Consumer.CONV:
            channels = out_shape[1]
            group = draw(st.sampled_from([g for g in (1, 2, 4) if channels % g == 0]))
            ctx.attrs["group"] = group
            shape = (group * draw(st.integers(1, 2)), channels // group, *ctx.attrs["kernel_shape"])
            rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
            ctx.weights = rng.choice(np.array([-2, -1, -0.5, 0, 0.5, 1, 2], np.float32), size=shape)
    elif consumer == Consumer.SLICE:
        rank = len(out_shape)
        axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
        steps = [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in axes]
        ctx.attrs = {"axes": axes, "steps": steps,
                     "starts": [draw(st.integers(-out_shape[a] - 1, out_shape[a] + 1)) for a in axes],
                     "ends": [draw(st.sampled_from([-out_shape[a] - 1, -1, 0, 1, out_shape[a], out_shape[a] + 2]))
                              for a in axes]}
    elif consumer == Consumer.SPACE_TO_DEPTH:  # a blocksize that divides the Pad's output (1: always)
        ctx.attrs = {"blocksize": draw(st.sampled_from([b for b in (2, 3, 1) if out_shape[2] % b == out_shape[3] % b
                                                        == 0]))}
    elif consumer == Consumer.DEPTH_TO_SPACE:
        ctx.attrs = {"blocksize": draw(st.sampled_from([b for b in (2, 3, 1) if out_shape[1] % (b * b) == 0])),
                     "mode": draw(st.sampled_from(["DCR", "CRD"]))}
    elif consumer == Consumer.PAD:
        ctx.attrs = {"pads": [draw(st.integers(0, 2)) for _ in range(2 * len(out_shape))],
                     "value": draw(st.integers(-3, 3))}
    return ctx


@st.composite
def context_cases(draw, spec: Spec, arrays, pad_amount, kind: str = "any", focus: str | None = None) -> Case:
    """A classified context case for ``spec`` (``applies(spec)``); ``focus`` ("context:Conv" ...)
    names its consumer, drawn when None."""
    opset = parse_spec_id(spec.id)[1]
    consumer = Consumer(focus.split(":", 1)[1]) if focus else draw(st.sampled_from(list(Consumer)))
    # one drawn number picks producer and shape kind: the few cases of a focus still spread over
    # all of them (sampled_from's first draws cluster on its first members)
    pick = draw(st.integers(0, 2**31))
    producer = list(Producer)[pick % len(Producer)]
    static = bool(pick // len(Producer) % 2)
    fanout = pick // len(Producer) // 2 % 4 == 0  # a quarter feed two consumers
    shape = _spatial(draw, consumer)
    rank = len(shape)
    fixed = {0, 1} if consumer in POOLS + BLOCKS else set()  # spatial axes only, as exporters pad before a Conv or pool
    axes = None
    if spec.has_axes and producer != Producer.TORCH_PAD and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from([a for a in range(rank) if a not in fixed]), min_size=1, unique=True))
        axes = [a - rank if draw(st.booleans()) else a for a in chosen]
    targets = [a % rank for a in axes] if axes is not None else list(range(rank))
    grow = draw(st.integers(0, 2)) > 0  # mostly growing only: the pads exporters emit
    amount = [st.integers(0, 2) if grow else pad_amount(n) for n in shape]
    begins = [0 if t in fixed else draw(amount[t]) for t in targets]
    ends = [0 if t in fixed else draw(amount[t]) for t in targets]
    grown = list(shape)
    for t, b, e in zip(targets, begins, ends):
        grown[t] += max(b, 0) + max(e, 0)
    pads = begins + ends
    if producer in (Producer.INPUTS, Producer.CONSTANT_NODE) and draw(st.integers(0, 9)) == 0:
        # the one way to break the Pad's rules a context keeps: a pads list of the wrong length
        pads = pads[:-1] if draw(st.booleans()) else pads + [0]
    assume(math.prod(grown) <= 4096)
    constant_value = None
    mode = draw(st.sampled_from(list(spec.modes)))
    if "constant_value" in spec.operands and mode == "constant" and draw(st.booleans()):
        special: dict[Consumer, list[float]] = {Consumer.MAX_POOL: [], Consumer.CONV: [], Consumer.AVERAGE_POOL: []}
        pool = [0.0, -1.5, 2.0] + special.get(consumer, [float("-inf"), float("nan")])
        constant_value = np.array(draw(st.sampled_from(pool)), np.float32)
    data = _data(draw, arrays, shape, consumer)
    case = classify(Case(spec=spec.id, data=data, pads=pads, mode=mode, constant_value=constant_value, axes=axes,
                         origin="hypothesis:context"), spec)
    assume(case.kind != CaseKind.TOO_LARGE)
    outs = [case.expected] if case.expected is not None else [o for o in case.interpretations.values() if o is not None]
    out_shape = outs[0].shape if outs else shape
    assume(consumer not in POOLS + BLOCKS or (len(out_shape) == rank and all(n > 0 for n in out_shape)))
    ctx = _consumer(draw, consumer, tuple(out_shape), opset)
    ctx.producer, ctx.static_shape, ctx.fanout = producer, static, fanout
    # a constant Pad with no mode attribute at all (its default), one in eight
    ctx.mode_attr = mode != "constant" or pick // len(Producer) // 8 % 8 != 0
    try:  # the case, and its repaired twin (breaks_one_rule), passed through the consumer
        case = apply_context(case.with_(context=ctx))
        assume(case.rule != "context")  # the consumer refuses the Pad's output: a case of the consumer's rules
        if kind != "any":
            assume(case.kind == kind)
        assume(case.kind != CaseKind.MUST_REJECT or breaks_one_rule(case, spec))
    except OracleUnsure:  # no oracle for this consumer on this input: drawn anew
        assume(False)
    return case
