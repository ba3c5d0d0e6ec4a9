"""The edge classes a case exercises (``edge_classes``): the features of a case the drawing aims
at (negative pads, rank 0, mirror beyond the dimension ...), stored in a case's ``tags``
(cases.jsonl, the generated test data) and counted in a run's summary."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from padconf.cases.case import Case
from padconf.core.dtypes import is_float_like
from padconf.spec.loader import Spec
from padconf.spec.reference import INT64_MAX

LARGE_OUTPUT = 8192  # elements: past the 4 KiB .. 32 KiB blocks kernels split their work into
INT32_MAX = 2**31 - 1  # a pad past it changes when cut to 32 bits


def edge_classes(case: Case, spec: Spec) -> list[str]:
    """The named edge classes ``case`` exercises (the vocabulary of coverage reports)."""
    tags = _pads_tags(case) + _shape_tags(case) + _value_tags(case) + _axes_tags(case)
    tags += [f"kind:{case.kind}", f"pads-{case.pads_type}"] + (case.context.tags() if case.context else [])
    tags += (["dtype-not-allowed"] * (case.dtype not in spec.dtypes)
             + ["mode-not-allowed"] * (case.mode not in spec.modes))
    return sorted(set(tags))


def _pads_tags(case: Case) -> list[str]:
    """Pads against their axis: wrong length, negative, mixed signs, crops to and beyond zero,
    mirror pads at and beyond the dimension, non-constant modes on an empty axis."""
    rank, shape = case.data.ndim, case.data.shape
    axes = list(range(rank)) if case.axes is None else case.axes
    n_axes = len(axes)
    if len(case.pads) != 2 * n_axes:
        return ["pads-wrong-length"]
    tags = []
    for i, axis in enumerate(axes):
        if not rank or not -rank <= axis < rank:
            continue
        n, b, e = shape[axis], case.pads[i], case.pads[n_axes + i]
        if b < 0 or e < 0:
            tags.append("negative-pads")
        if b * e < 0:
            tags.append("mixed-sign-pads")
        if n + b + e == 0 and (b < 0 or e < 0):
            tags.append("crop-to-zero")
        if n + b + e < 0:
            tags.append("crop-beyond-dim")
        if max(abs(b), abs(e)) > INT32_MAX:
            tags.append("pads-beyond-int32")
        if not all(-INT64_MAX - 1 <= v <= INT64_MAX for v in (b + n, n + b + e)):
            tags.append("pads-sum-overflows-int64")
        for p in (b, e):
            if p <= 0:
                continue
            if case.mode == "reflect" and n:
                tags += ["reflect-pad=dim-1"] * (p == n - 1) + ["reflect-pad=dim"] * (p == n) \
                    + ["reflect-pad>dim"] * (p > n) + ["reflect-pad-multiple-of-dim"] * (p % n == 0 and p >= 2 * n)
            if case.mode == "symmetric" and p == n:
                tags.append("symmetric-pad=dim")
            if case.mode == "wrap" and p > n > 0:
                tags.append("wrap-pad>dim")
        if n == 0 and case.mode != "constant":
            tags.append("nonconstant-on-empty-axis-" + ("padded" if b > 0 or e > 0 else "unpadded"))
    return tags


def _shape_tags(case: Case) -> list[str]:
    """Rank, empty dimensions, and an output past the large-output size."""
    tags = [f"rank-{case.data.ndim}"] + [f"zero-size-dim-at-{i}" for i, n in enumerate(case.data.shape) if n == 0]
    out = case.expected if case.expected is not None else next(
        (c for c in case.interpretations.values() if c is not None), None)
    return tags + ["large-output"] * (out is not None and out.size >= LARGE_OUTPUT)


def _value_tags(case: Case) -> list[str]:
    """Notable element values in data and constant (strings, bool, complex, float specials),
    and whether the constant is given."""
    tags = []
    if case.data.dtype == object:
        strings = case.data.reshape(-1).tolist()
        tags += ["string-empty"] * any(s == "" for s in strings) \
            + ["string-non-ascii"] * any(not s.isascii() for s in strings) \
            + ["string-long"] * any(len(s) >= 100 for s in strings)
    if case.dtype in ("bool",) or case.dtype.startswith("complex"):
        tags.append(case.dtype.rstrip("0123456789"))
    for where, arr in (("data", case.data), ("constant", case.constant_value)):
        if arr is not None and is_float_like(case.dtype) and arr.size:
            tags += [f"{name}-in-{where}" for name in _float_specials(arr)]
    tags.append("constant-value-given" if case.constant_value is not None else "constant-value-omitted")
    return tags


def _axes_tags(case: Case) -> list[str]:
    """How the axes input is given: empty, negative, out of range, repeated, unordered."""
    if case.axes is None:
        return []
    rank = case.data.ndim
    return ["axes-given"] + ["axes-empty"] * (not case.axes) + ["axes-negative"] * any(a < 0 for a in case.axes) \
        + ["axes-out-of-range"] * any(not -rank <= a < rank for a in case.axes) \
        + ["axes-duplicated"] * (len({a % rank for a in case.axes if rank}) < len(case.axes)) \
        + ["axes-unordered"] * (case.axes != sorted(case.axes))


def _float_specials(arr: np.ndarray) -> list[str]:
    flat = arr.reshape(-1)
    if flat.dtype.kind == "c":
        flat = np.concatenate([flat.real, flat.imag])
    f = flat.astype(np.float64)
    tiny = ml_dtypes.finfo(flat.dtype).smallest_normal
    out = []
    with np.errstate(invalid="ignore"):
        if np.isnan(f).any():
            out.append("nan")
        if np.isinf(f).any():
            out.append("inf")
        if ((f == 0) & np.signbit(f)).any():
            out.append("negative-zero")
        if ((f != 0) & (np.abs(f) < float(tiny))).any():
            out.append("subnormal")
    return out


# ---------------------------------------------------------------- outside a test


