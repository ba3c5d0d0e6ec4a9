"""Shrinking a context case: simpler neighbourhoods first, then the data and pads with
the neighbourhood kept. Pure case transformations, as padconf.minimize.shrink.simplify's; minimize's
greedy loop keeps a candidate only where the same failure shows.

The first candidate is the Pad alone (no context at all): where the failure shows without the
consumer and the nodes producing its pads, it is a plain Pad bug and its bundle a plain one.
Then the consumer alone is dropped (the producer's chain kept), the producer made plain inputs,
the shape symbolic, one consumer of two, the mode attribute written, and the consumer's own
attributes made their defaults one at a time."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from padconf.cases.case import Case
from padconf.cases.context import POOLS, Consumer, Producer
from padconf.judging.failure import failure_key, failure_pattern
from padconf.minimize.shrink.simplify import PASSES, fewer_dims, simpler_types

# a pool's or Conv's attribute -> the value that does least (the document's default)
_PLAIN = {"strides": 1, "dilations": 1}


def simpler_context(case: Case):
    ctx = case.context
    if ctx is None:
        return
    yield case.with_(context=None)
    if ctx.consumer != Consumer.NONE and (ctx.producer != Producer.INPUTS or ctx.static_shape):
        yield case.with_(context=dataclasses.replace(ctx, consumer=Consumer.NONE, attrs={}, weights=None,
                                                     tolerance=None))
    if ctx.producer != Producer.INPUTS:
        yield case.with_(context=dataclasses.replace(ctx, producer=Producer.INPUTS))
    if ctx.static_shape:
        yield case.with_(context=dataclasses.replace(ctx, static_shape=False))
    if ctx.fanout:
        yield case.with_(context=dataclasses.replace(ctx, fanout=False))
    if not ctx.mode_attr:
        yield case.with_(context=dataclasses.replace(ctx, mode_attr=True))
    if ctx.consumer not in POOLS:
        return
    attrs = ctx.attrs
    for name, one in _PLAIN.items():
        if any(v != one for v in attrs.get(name, [])):
            yield case.with_(context=dataclasses.replace(ctx, attrs={**attrs, name: [one] * len(attrs[name])}))
    if any(attrs.get("pads", [])):
        yield case.with_(context=dataclasses.replace(ctx, attrs={**attrs, "pads": [0] * len(attrs["pads"])}))
    for name in ("ceil_mode", "count_include_pad"):
        if attrs.get(name):
            yield case.with_(context=dataclasses.replace(ctx, attrs={**attrs, name: 0}))
    if attrs.get("auto_pad", "NOTSET") != "NOTSET":
        yield case.with_(context=dataclasses.replace(ctx, attrs={**attrs, "auto_pad": "NOTSET"}))


def passes(case: Case) -> tuple:
    """The simplifications to try on ``case``: simplify's for a case without a consumer; for a
    Conv or pool, the context's first and none that changes the data's rank or dtype (the
    consumer's kernel fixes the rank; Conv and the pools take float32, the only dtype drawn)."""
    if case.context is None:
        return PASSES
    kept = tuple(p for p in PASSES if not (case.context.consumer in POOLS and p in (fewer_dims, simpler_types)))
    return (simpler_context, *kept)


def consumer_changed(before: Case, after: Case) -> bool:
    """Whether ``after`` has another consumer than ``before`` (simpler_context dropped it)."""
    def consumer(case: Case) -> str:
        return case.context.consumer if case.context is not None else Consumer.NONE
    return consumer(before) != consumer(after)


def same_across_consumers(start: Mapping[str, Any], got: Mapping[str, Any], start_signature: tuple,
                          got_signature: tuple) -> bool:
    """The same failure with and without a consumer: the verdict, the case's kind and reason,
    the failure class but for a mismatch's kind of wrong value (a Conv's sum of wrong values is
    a value the expected output lacks, the Pad's own wrong value may be one misplaced), and the
    triage class (failure_signature's last)."""
    return (failure_key(start)[::2] == failure_key(got)[::2]
            and failure_pattern(start, kind=False) == failure_pattern(got, kind=False)
            and start_signature[-1] == got_signature[-1])
