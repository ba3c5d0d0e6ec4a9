"""Hypothesis strategies for Pad cases, driven by the spec files.

Every choice (dtypes, modes, whether axes exist, index types, the constant value's form, the
rules that decide must-reject) is read from the ``Spec``: a new spec file gets generation for
free. Pads are drawn relative to each dimension (dim - 1, dim, multiples of dim, crops to and
beyond zero), because that is where runtimes disagree.

- ``cases(spec, kind="any")``: classified ``Case`` objects (kind: "defined", "must-reject",
  "ambiguous" or "any"); each case's edge classes are in ``case.tags`` and reported through
  ``hypothesis.event`` so that ``--hypothesis-show-statistics`` shows coverage.
- ``draw_cases(spec, max_examples, seed)``: a list of cases outside a test, for ``padconf run``.
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, Phase, assume, event, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

from padconf.cases import context_draw as _contexts
from padconf.cases.case import KINDS, Case, CaseKind
from padconf.cases.classify import breaks_one_rule, classify
from padconf.cases.context_draw import context_cases
from padconf.cases.edge_classes import edge_classes
from padconf.cases.hypothesis_isolation import isolated_drawing
from padconf.cases.plain import INDEX_TYPES, PLAIN_TAG, WIDE_TAG, fixed_cases
from padconf.cases.profiles import PROFILES
from padconf.core.dtypes import ALL_DTYPES, as_array, is_float_like, is_integer, numpy_dtype, scalar
from padconf.spec.loader import Spec
from padconf.spec.reference import MODES

MAX_OUTPUT_ELEMENTS = 100_000  # generated outputs stay below this, yet cross runtimes' block sizes
MAX_RANK = 6
# drawn as often as all the others together: the kinds kernels most often lack or get wrong
NOTABLE_DTYPES = ("string", "bool", "complex64", "float16", "bfloat16", "float8e4m3fn", "float8e5m2fnuz",
                  "float8e8m0", "float4e2m1", "int4", "uint4", "int2", "uint2", "uint64")



def register_profiles() -> None:
    """Make PROFILES Hypothesis settings profiles, for tests run with HYPOTHESIS_PROFILE or
    --hypothesis-profile (padconf run reads only their max_examples)."""
    for name, opts in PROFILES.items():
        settings.register_profile(name, deadline=None, print_blob=True,
                                  suppress_health_check=list(HealthCheck), **opts)

# ---------------------------------------------------------------- values


def special_values(dtype: str) -> list:
    """The values of ``dtype`` where kernels go wrong, the rarest in ordinary data first: NaN,
    -0.0, +-inf, the smallest subnormal, the extremes; empty, non-ASCII and long strings;
    integer limits."""
    if dtype == "string":
        return ["", "äß漢字🙂", "ab" * 100]
    if dtype == "bool":
        return [False, True]
    np_dtype = numpy_dtype(dtype)
    if is_integer(dtype):
        info = ml_dtypes.iinfo(np_dtype)
        return [int(info.min), int(info.max), 0]
    finfo = ml_dtypes.finfo({"complex64": np.float32, "complex128": np.float64}.get(dtype, np_dtype))
    floats = [float("nan"), -0.0, float("inf"), float("-inf"), float(finfo.smallest_subnormal),
              0.0, 1.0, -1.5, float(finfo.max), -float(finfo.max)]
    return [complex(v, -v) for v in floats] if dtype.startswith("complex") else floats


_TEXT = st.one_of(
    st.text(alphabet="abcxyz", max_size=4),
    st.text(alphabet="äß漢字🙂é", min_size=1, max_size=4),  # non-ASCII, including astral plane
    st.text(alphabet="ab", min_size=100, max_size=300),  # long
)


def elements(dtype: str):  # not cached: reusing its strategies changes what a seed draws
    """Python values for one element of ``dtype``, the special values drawn half the time."""
    ordinary: st.SearchStrategy
    if dtype == "string":
        ordinary = _TEXT
    elif dtype == "bool":
        return st.booleans()
    elif is_integer(dtype):
        info = ml_dtypes.iinfo(numpy_dtype(dtype))
        ordinary = st.integers(max(int(info.min), -50), min(int(info.max), 50))
    else:
        ordinary = st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 2))
        if dtype.startswith("complex"):
            ordinary = st.builds(complex, ordinary, ordinary)
    return st.one_of(st.sampled_from(special_values(dtype)), ordinary)


DRAWN_ELEMENTS = 24  # elements Hypothesis draws one by one; larger arrays arrange these
SPREAD_STRING_CHARS = 8  # longer drawn strings appear once each in a large array (see arrays)


def _sampled_from(values) -> st.SearchStrategy:
    """st.sampled_from(values), built once for each distinct tuple of values: for names and
    ints only (the cache takes 0.0 for -0.0, and 1 for True)."""
    return _sampled_from_tuple(tuple(values))


@functools.lru_cache(maxsize=4096)  # a strategy built anew is validated anew, in every draw
def _sampled_from_tuple(values: tuple) -> st.SearchStrategy:
    return st.sampled_from(values)


@functools.lru_cache(maxsize=4096)  # as _sampled_from
def arrays(dtype: str, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Arrays of ``dtype`` and ``shape``. Elements are drawn as Python values and cast (ml_dtypes
    kinds have no Hypothesis element strategy). Past DRAWN_ELEMENTS, the drawn values (each at
    least once, so a drawn NaN or empty string is in the array) are spread over the array in a
    random order from a drawn seed: drawing every element is slow, and a repeated run would hide
    index errors of its period. Strings longer than SPREAD_STRING_CHARS are not spread (the
    shortest value fills in when all are long): copies of long strings over a large array make
    cases of megabytes, while one long string already tests what long strings test."""
    size = math.prod(shape)
    drawn = min(size, DRAWN_ELEMENTS)

    def build(args):
        vals, seed = args
        pool = as_array(vals, dtype).reshape(drawn)
        if size <= drawn:
            return pool.reshape(shape)
        rng = np.random.default_rng(seed)
        spread = np.arange(drawn)
        if dtype == "string":
            short = [i for i, v in enumerate(vals) if len(v) <= SPREAD_STRING_CHARS]
            spread = np.array(short or [min(range(drawn), key=lambda i: len(vals[i]))])
        where = rng.permutation(np.concatenate([np.arange(drawn), spread[rng.integers(0, len(spread), size - drawn)]]))
        return pool[where].reshape(shape)

    return st.tuples(st.lists(elements(dtype), min_size=drawn, max_size=drawn),
                     st.integers(0, 2**32 - 1) if size > drawn else st.just(0)).map(build)


# ---------------------------------------------------------------- pads and axes


@functools.lru_cache(maxsize=4096)  # as arrays
def _pad_amount(n: int, sign: int = 0, mirror: bool = False):
    """One pad for an axis of n elements, biased to the boundaries that matter; ``sign`` +1 or
    -1 keeps it strictly positive or negative; ``mirror`` keeps to the reflect / symmetric /
    wrap boundaries (dim - 1, dim, dim + 1, multiples of dim)."""
    if mirror and n:
        return st.sampled_from(sorted({n - 1, n, n + 1, 2 * n, 3 * n} - {0}))
    relative = {0, 1, 2, n - 1, n, n + 1, 2 * n, 3 * n, -1, -n, -(n + 1), -(n - 1)}
    if sign:
        return st.sampled_from(sorted({abs(v) for v in relative if v} | {1})).map(lambda v: sign * v)
    return st.one_of(st.sampled_from(sorted(relative)), st.integers(-3, 6))


# Each draw first picks what to stress, so that every edge class turns up within a few hundred
# cases instead of waiting for a lucky combination of independent choices.
FOCI = ("plain", "special-floats", "strings", "notable-dtype", "large", "high-rank", "empty-axis",
        "mirror-beyond", "mixed-sign", "axes")


def foci(spec: Spec) -> list[str]:
    """What generation for ``spec`` stresses in turn: FOCI that apply, then each way to break
    its rules ("reject:<rule>")."""
    applies = {"strings": "string" in spec.dtypes, "axes": spec.has_axes,
               "special-floats": any(is_float_like(d) for d in spec.dtypes)}
    return [f for f in FOCI if applies.get(f, True)] + [f"reject:{v}" for v in _violations(spec)] \
        + _contexts.foci(spec)


@st.composite
def cases(draw, spec: Spec, kind: str = "any", focus: str | None = None) -> Case:
    """A classified Pad case for ``spec``; ``kind`` keeps only cases of that classification,
    ``focus`` (one of FOCI; drawn when None) says what to stress."""
    if kind not in KINDS + ("any",):
        raise ValueError(f"kind must be one of {KINDS + ('any',)}")
    if focus is None:
        choices = [f for f in foci(spec) if not _contexts.is_context(f)]  # draw_cases draws contexts
        focus = draw(_sampled_from([f for f in choices if f.startswith("reject:")] if kind == CaseKind.MUST_REJECT
                                     else choices))
    if _contexts.is_context(focus):  # Pad in its neighbourhood: padconf.cases.context_draw draws it
        case = draw(context_cases(spec, arrays, _pad_amount, kind, focus))
        case.tags = edge_classes(case, spec)
        for tag in case.tags:
            event(tag)
        return case
    wrong = focus.split(":")[1] if focus.startswith("reject:") else None
    # The draws happen in this order; changing it changes every seed's cases.
    dtype, mode = _dtype_and_mode(draw, spec, focus, wrong)
    shape, empty_axis = _shape(draw, focus, _framework_ranks(spec, mode, wrong))
    axes = _axes_for(draw, spec, len(shape), focus, wrong)
    pads = _framework_trailing(draw, spec, mode, shape, axes, wrong, _pads(draw, spec, shape, axes, focus, wrong,
                                                                           empty_axis))
    fits = [t for t in spec.pads_index_types  # a type that holds the pads (no negative uint8)
            if all(np.iinfo(t).min <= p <= np.iinfo(t).max for p in pads)] or ["int64"]
    pads_type = draw(_sampled_from([t for t in INDEX_TYPES if t not in spec.pads_index_types])) \
        if wrong == "pads_type" else draw(_sampled_from(fits))
    axes_type = draw(_sampled_from(spec.axes_index_types)) if spec.has_axes else "int64"
    constant_value = _constant(draw, spec, dtype, focus)
    data = draw(arrays(dtype, shape))

    case = classify(Case(spec=spec.id, data=data, pads=pads, mode=mode, constant_value=constant_value,
                         axes=axes, pads_type=pads_type, axes_type=axes_type, origin="hypothesis"), spec)
    if kind != "any":
        assume(case.kind == kind)
    # a must-reject case breaks exactly one rule: with it undone the spec does not reject it
    # (classify.repaired_twin, which a runtime's refusal is checked against)
    assume(case.kind != CaseKind.MUST_REJECT or breaks_one_rule(case, spec))
    case.tags = edge_classes(case, spec)
    for tag in case.tags:
        event(tag)
    return case


def _dtype_and_mode(draw, spec: Spec, focus: str, wrong: str | None) -> tuple[str, str]:
    """One of the version's dtypes and modes (one it lacks when that is the rule to break),
    from the pool the focus stresses."""
    dtype_pool = {
        "notable-dtype": [d for d in NOTABLE_DTYPES if d in spec.dtypes],
        "special-floats": [d for d in spec.dtypes if is_float_like(d)],
        "strings": ["string"],
    }.get(focus) or list(spec.dtypes)
    dtype = draw(_sampled_from([d for d in ALL_DTYPES if d not in spec.dtypes] if wrong == "dtype" else dtype_pool))
    mode_pool = {
        "mirror-beyond": [m for m in ("reflect", "symmetric", "wrap") if m in spec.modes],
        "empty-axis": [m for m in spec.modes if m != "constant"],
    }.get(focus) or list(spec.modes)
    mode = draw(_sampled_from([m for m in MODES if m not in spec.modes] if wrong == "mode" else mode_pool))
    return dtype, mode


def _framework_ranks(spec: Spec, mode: str, wrong: str | None) -> list[int] | None:
    """The input ranks a framework document implements ``mode`` for (its rule ``padded_dims``),
    for a draw that breaks no rule; None: any rank (every ONNX and OpenVINO version)."""
    allowed = (spec.rule("padded_dims") or {}).get(mode)
    return None if allowed is None or wrong else sorted({r for ranks in allowed.values() for r in ranks})


def _framework_trailing(draw, spec: Spec, mode: str, shape, axes, wrong: str | None, pads: list[int]) -> list[int]:
    """``pads`` with those of the leading axes made 0 where a framework document implements
    ``mode`` only for some trailing dimensions (``padded_dims``); unchanged (nothing drawn) for
    every other spec."""
    allowed = (spec.rule("padded_dims") or {}).get(mode)
    rank = len(shape)
    if allowed is None or wrong or axes is not None or len(pads) != 2 * rank:
        return pads
    counts = sorted(int(k) for k, ranks in allowed.items() if rank in ranks)
    if not counts:
        return pads
    k = draw(_sampled_from(counts))
    return [0 if i % rank < rank - k else p for i, p in enumerate(pads)]


def _shape(draw, focus: str, ranks: list[int] | None = None) -> tuple[tuple[int, ...], int | None]:
    """The data's shape, and the axis made empty when the focus is empty axes (else None);
    ``ranks``: the ranks a framework document implements the drawn mode for."""
    empty_axis = None
    if focus == "large":  # an output big enough to cross runtimes' block sizes: >= 91*91 elements
        shape = (draw(st.integers(91, 128)), draw(st.integers(91, 128))) if draw(st.booleans()) \
            else tuple(draw(st.integers(21, 32)) for _ in range(3))
    else:
        rank = draw(_sampled_from([MAX_RANK, MAX_RANK - 1]) if focus == "high-rank" else st.integers(0, 4)) \
            if ranks is None else draw(_sampled_from(ranks))
        # small sides at high rank keep the whole tensor small
        sides = [draw(st.integers(0, 3 if rank > 4 else 5)) for _ in range(rank)]
        if focus == "empty-axis" and rank:
            empty_axis = draw(st.integers(0, rank - 1))
            sides[empty_axis] = 0
        shape = tuple(sides)
    assume(math.prod(shape) <= (MAX_OUTPUT_ELEMENTS // 3 if focus == "large" else 4096))
    return shape, empty_axis


def _axes_for(draw, spec: Spec, rank: int, focus: str, wrong: str | None) -> list[int] | None:
    """The axes input: None (all axes), or a list (out of range when that is the rule to break)."""
    if wrong == "axes_range":
        return _axes(draw, rank, out_of_range=True)
    if wrong == "axes_absent" or (spec.has_axes and rank and draw(st.booleans() if focus != "axes" else st.just(True))):
        return _axes(draw, rank, out_of_range=False)
    return None


def _pads(draw, spec: Spec, shape, axes, focus: str, wrong: str | None, empty_axis: int | None) -> list[int]:
    """Pads in ONNX's layout, each relative to its axis's dimension; signs and sizes as the
    focus asks, negative only where the version allows it or that is the rule to break."""
    rank = len(shape)
    targets = list(range(rank)) if axes is None else [a % rank if rank and -rank <= a < rank else 0 for a in axes]
    signs = (1, -1) if focus == "mixed-sign" and draw(st.booleans()) else (-1, 1) if focus == "mixed-sign" else (0, 0)
    mirror = focus == "mirror-beyond"
    begins = [draw(_pad_amount(shape[t] if rank else 0, signs[0], mirror)) for t in targets]
    ends = [draw(_pad_amount(shape[t] if rank else 0, signs[1], mirror)) for t in targets]
    if empty_axis is not None and draw(st.booleans()):  # leave the empty axis unpadded
        begins = [0 if t == empty_axis else b for t, b in zip(targets, begins)]
        ends = [0 if t == empty_axis else e for t, e in zip(targets, ends)]
    if spec.rule("negative_pads") == "forbidden" and wrong != "negative_pads":
        begins, ends = [abs(b) for b in begins], [abs(e) for e in ends]
    pads = begins + ends
    if wrong == "pads_length":
        pads = pads + [draw(st.integers(0, 2))] if draw(st.booleans()) or not pads else pads[:-1]
    grown = list(shape)  # an upper bound of the output shape, whatever interpretation of repeated axes
    for t, b, e in zip(targets, begins, ends):
        if rank:
            grown[t] += max(b, 0) + max(e, 0)
    assume(math.prod(grown) <= MAX_OUTPUT_ELEMENTS)
    return pads


def _constant(draw, spec: Spec, dtype: str, focus: str):
    """The constant value as a 0-d array, or None (omitted) half the time; always a special
    value when the focus is special values."""
    special = focus in ("special-floats", "strings")
    if "constant_value" in spec.operands and (special or draw(st.booleans())):
        values = st.sampled_from(special_values(dtype)[:3]) if special else elements(dtype)
        return scalar(draw(values), dtype)
    return None


def _violations(spec: Spec) -> list[str]:
    """The ways an input can break this version's rules (each must come out must-reject)."""
    out = ["pads_length", "axes_range" if spec.has_axes else "axes_absent"]
    if set(ALL_DTYPES) - set(spec.dtypes):
        out.append("dtype")
    if set(MODES) - set(spec.modes):
        out.append("mode")
    if spec.operands["pads"]["via"] == "input" and set(INDEX_TYPES) - set(spec.pads_index_types):
        out.append("pads_type")
    if spec.rule("negative_pads") == "forbidden":
        out.append("negative_pads")
    return out


def _axes(draw, rank: int, out_of_range: bool) -> list[int]:
    if out_of_range:
        return [draw(_sampled_from([rank, -rank - 1, rank + 3]))]
    if rank == 0:
        return []
    return draw(st.lists(_sampled_from(range(-rank, rank)), max_size=rank + 1))


# ---------------------------------------------------------------- edge classes


def draw_cases(spec: Spec, max_examples: int, seed: int = 0, kind: str = "any",
               shares: dict[str, int] | None = None) -> list[Case]:
    """``plain.fixed_cases(spec)`` (of ``kind``), then up to ``max_examples`` distinct drawn
    cases, the budget shared equally among ``foci(spec)`` so that every edge class turns up
    (``shares`` sets some foci's budget instead); the same cases for the same seed and spec
    files, whatever else the process has imported."""
    # the plain violations and wide pads first: every draw holds them, whatever the seed
    found = {c.id: c for c in fixed_cases(spec) if kind in ("any", c.kind)}
    for case in found.values():
        fixed_tag = PLAIN_TAG if case.origin.startswith("plain:") else WIDE_TAG
        case.tags = sorted(set(edge_classes(case, spec) + [fixed_tag]))
    chosen = [f for f in foci(spec) if f.startswith("reject:") or kind != CaseKind.MUST_REJECT]
    with isolated_drawing():
        for i, focus in enumerate(chosen):
            share = (shares or {}).get(focus, _contexts.share(focus, i, max_examples, chosen))
            if not share:
                continue

            @settings(max_examples=share, database=None, deadline=None, derandomize=False,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            @hseed(seed * 1000 + i)
            @given(cases(spec, kind, focus))
            def collect(case):
                found.setdefault(case.id, case)

            collect()
    return list(found.values())
