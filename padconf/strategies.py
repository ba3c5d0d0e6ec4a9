"""Hypothesis strategies for Pad cases, driven by the spec files.

Every choice (dtypes, modes, whether axes exist, index types, the constant value's form, the
rules that decide must-reject) is read from the ``Spec``: a new spec file gets generation for
free. Pads are drawn relative to each dimension (dim - 1, dim, multiples of dim, crops to and
beyond zero), because that is where runtimes disagree.

- ``cases(spec, kind="any")``: classified ``Case`` objects (kind: "defined", "must-reject",
  "ambiguous" or "any"); each case's edge classes are in ``case.tags`` and reported through
  ``hypothesis.event`` so that ``--hypothesis-show-statistics`` shows coverage.
- ``draw_cases(spec, max_examples, seed)``: a list of cases outside a test, for ``padconf run``.
- ``edge_classes(case, spec)``: the named edge classes a case exercises.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, Phase, assume, event, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .cases import AMBIGUOUS, DEFINED, KINDS, MUST_REJECT, Case
from .classify import classify
from .dtypes import ALL_DTYPES, as_array, is_float_like, is_integer, numpy_dtype, scalar
from .reference import MODES
from .specs import Spec

MAX_OUTPUT_ELEMENTS = 100_000  # generated outputs stay below this, yet cross runtimes' block sizes
MAX_RANK = 6
INDEX_TYPES = ("int32", "int64")

PROFILES = {  # cases drawn per spec version by `padconf run --profile NAME`, and pytest's budget
    "ci": dict(max_examples=40, derandomize=True),
    "default": dict(max_examples=250, derandomize=False),
    "thorough": dict(max_examples=2500, derandomize=False),
}
for _name, _opts in PROFILES.items():
    settings.register_profile(_name, deadline=None, print_blob=True,
                              suppress_health_check=list(HealthCheck), **_opts)

# ---------------------------------------------------------------- values


def _float_elements(dtype: str):
    finfo = ml_dtypes.finfo(numpy_dtype(dtype))
    specials = [0.0, -0.0, 1.0, -1.5, float("nan"), float("inf"), float("-inf"),
                float(finfo.smallest_subnormal), float(finfo.max), -float(finfo.max)]
    return st.one_of(st.sampled_from(specials), st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 2)))


_TEXT = st.one_of(
    st.just(""),
    st.text(alphabet="abcxyz", max_size=4),
    st.text(alphabet="äß漢字🙂é", min_size=1, max_size=4),  # non-ASCII, including astral plane
    st.text(alphabet="ab", min_size=200, max_size=300),  # long
)


def elements(dtype: str):
    """Python values for one element of ``dtype``, edge values (NaN, +-inf, -0.0, subnormals,
    empty and non-ASCII strings, integer extremes) drawn often."""
    if dtype == "string":
        return _TEXT
    if dtype == "bool":
        return st.booleans()
    if is_integer(dtype):
        info = ml_dtypes.iinfo(numpy_dtype(dtype))
        lo, hi = int(info.min), int(info.max)
        return st.one_of(st.sampled_from([lo, hi, 0]), st.integers(max(lo, -50), min(hi, 50)))
    if dtype.startswith("complex"):
        part = _float_elements("float" if dtype == "complex64" else "double")
        return st.builds(complex, part, part)
    return _float_elements(dtype)


def arrays(dtype: str, shape) -> st.SearchStrategy[np.ndarray]:
    # drawn as Python values then cast: ml_dtypes kinds have no Hypothesis element strategy
    return st.lists(elements(dtype), min_size=math.prod(shape), max_size=math.prod(shape)).map(
        lambda vals: as_array(vals, dtype).reshape(shape) if dtype != "string"
        else _object_array(vals, shape))


def _object_array(vals, shape):
    arr = np.empty(len(vals), dtype=object)
    arr[:] = vals
    return arr.reshape(shape)


# ---------------------------------------------------------------- pads and axes


def _pad_amount(n: int):
    """One pad for an axis of n elements, biased to the boundaries that matter."""
    relative = sorted({0, 1, 2, n - 1, n, n + 1, 2 * n, 3 * n, -1, -n, -(n + 1), -(n - 1)})
    return st.one_of(st.sampled_from(relative), st.integers(-3, 6))


@st.composite
def cases(draw, spec: Spec, kind: str = "any") -> Case:
    """A classified Pad case for ``spec``; ``kind`` keeps only cases of that classification."""
    if kind not in KINDS + ("any",):
        raise ValueError(f"kind must be one of {KINDS + ('any',)}")
    violate = kind == MUST_REJECT or (kind == "any" and draw(st.integers(0, 9)) == 0)
    wrong = draw(st.sampled_from(["dtype", "mode", "pads_length", "pads_type", "axes_range", "axes_absent"])) \
        if violate else None

    dtype = draw(st.sampled_from([d for d in ALL_DTYPES if d not in spec.dtypes] or list(spec.dtypes))) \
        if wrong == "dtype" else draw(st.sampled_from(spec.dtypes))
    mode = draw(st.sampled_from([m for m in MODES if m not in spec.modes])) \
        if wrong == "mode" else draw(st.sampled_from(spec.modes))

    rank = draw(st.one_of(st.integers(0, 3), st.integers(0, MAX_RANK)))
    big = draw(st.integers(0, 15)) == 0  # now and then an output large enough to cross block sizes
    shape = tuple(draw(st.integers(0, 5) if not big else st.integers(1, 64)) for _ in range(rank))
    assume(math.prod(shape) <= 4096)

    axes = None
    if spec.has_axes and rank and draw(st.booleans()) or wrong == "axes_absent" and not spec.has_axes:
        axes = _axes(draw, rank, out_of_range=wrong == "axes_range")
    elif wrong == "axes_range" and spec.has_axes:
        axes = _axes(draw, max(rank, 1), out_of_range=True)
    targets = list(range(rank)) if axes is None else [a % rank if rank and -rank <= a < rank else 0 for a in axes]
    amounts = [_pad_amount(shape[t] if rank else 0) for t in targets]
    if spec.rule("negative_pads") == "forbidden" and not violate:
        amounts = [a.map(abs) for a in amounts]
    begins = [draw(a) for a in amounts]
    ends = [draw(a) for a in amounts]
    pads = begins + ends
    if wrong == "pads_length":
        pads = pads + [draw(st.integers(0, 2))] if draw(st.booleans()) or not pads else pads[:-1]
    grown = list(shape)  # an upper bound of the output shape, whatever reading of repeated axes
    for t, b, e in zip(targets, begins, ends):
        if rank:
            grown[t] += max(b, 0) + max(e, 0)
    assume(math.prod(grown) <= MAX_OUTPUT_ELEMENTS)

    index_types = spec.pads_index_types
    pads_type = draw(st.sampled_from([t for t in INDEX_TYPES if t not in index_types] or list(index_types))) \
        if wrong == "pads_type" else draw(st.sampled_from(index_types))
    axes_type = draw(st.sampled_from(spec.axes_index_types)) if spec.has_axes else "int64"

    constant_value = None
    if "constant_value" in spec.signature and draw(st.booleans()):
        constant_value = scalar(draw(elements(dtype)), dtype)
    data = draw(arrays(dtype, shape))

    case = classify(Case(spec=spec.id, data=data, pads=pads, mode=mode, constant_value=constant_value,
                         axes=axes, pads_type=pads_type, axes_type=axes_type, origin="hypothesis"), spec)
    if kind != "any":
        assume(case.kind == kind)
    case.tags = edge_classes(case, spec)
    for tag in case.tags:
        event(tag)
    return case


def _axes(draw, rank: int, out_of_range: bool) -> list[int]:
    if out_of_range:
        return [draw(st.sampled_from([rank, -rank - 1, rank + 3]))]
    if rank == 0:
        return []
    return draw(st.lists(st.sampled_from(range(-rank, rank)), max_size=rank + 1))


# ---------------------------------------------------------------- edge classes


def edge_classes(case: Case, spec: Spec) -> list[str]:
    """The named edge classes ``case`` exercises (the vocabulary of coverage reports)."""
    tags = [f"kind:{case.kind}", f"rank-{case.data.ndim}"]
    rank, shape = case.data.ndim, case.data.shape
    axes = list(range(rank)) if case.axes is None else case.axes
    n_axes = len(axes)
    if len(case.pads) != 2 * n_axes:
        tags.append("pads-wrong-length")
    else:
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
    tags += [f"zero-size-dim-at-{i}" for i, n in enumerate(shape) if n == 0]
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
    if case.axes is not None:
        tags.append("axes-given")
        tags += ["axes-empty"] * (not case.axes) + ["axes-negative"] * any(a < 0 for a in case.axes) \
            + ["axes-out-of-range"] * any(not -rank <= a < rank for a in case.axes) \
            + ["axes-duplicated"] * (len({a % rank for a in case.axes if rank}) < len(case.axes)) \
            + ["axes-unordered"] * (case.axes != sorted(case.axes))
    tags.append(f"pads-{case.pads_type}")
    if case.dtype not in spec.dtypes:
        tags.append("dtype-not-allowed")
    if case.mode not in spec.modes:
        tags.append("mode-not-allowed")
    out = case.expected if case.expected is not None else next(
        (c for c in case.candidates.values() if c is not None), None)
    if out is not None and out.size > 4096:
        tags.append("large-output")
    return sorted(set(tags))


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


def draw_cases(spec: Spec, max_examples: int, seed: int = 0, kind: str = "any") -> list[Case]:
    """Up to ``max_examples`` distinct cases, the same ones for the same seed and spec files."""
    found: dict[str, Case] = {}

    @settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(cases(spec, kind))
    def collect(case):
        found.setdefault(case.id, case)

    collect()
    return list(found.values())


__all__ = ["cases", "draw_cases", "edge_classes", "elements", "arrays", "PROFILES", "DEFINED",
           "MUST_REJECT", "AMBIGUOUS"]
