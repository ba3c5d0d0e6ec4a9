"""padconf's reference Pad: what the spec says the output must be.

``pad(data, pads, mode, constant_value, axes)`` takes ONNX's pads layout
``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]`` over ``axes`` (all axes when None).
Positive pads add elements, negative pads remove them. Each axis gets an index map (output
position -> source position, or "fill"); the output is the interior copied once and the
borders gathered from it, like numpy.pad, or one gather through all maps when a border reads
elements that the crop removed.

Where the specs leave a point undefined, the keyword of the same name (see specs/FORMAT.md)
selects an interpretation; ``INTERPRETATIONS`` lists them, the first being the default:

- ``mixed_sign_pads``: one axis padded on one side and cropped on the other, non-constant
  mode; or constant mode where the crop alone removes more than the axis holds (the one place
  where the order matters for a constant). ``original_coordinates`` (default: OpenVINO Pad-12's
  mixed-pads examples) indexes the padding in the uncropped tensor; ``crop_first`` crops, then
  pads the cropped tensor.
- ``mirror_beyond_dim``: a reflect pad > 0 and > dim - 1, a symmetric pad > dim (a pad of 0
  adds nothing: ONNX's erratum bounds reflect padding; with ``mirror_bound_every_pad``, as
  OpenVINO's "for any valid D" reads, also a reflect pad of 0 on an empty axis).
  ``iterate`` (default: numpy.pad, and ONNX's Example 2 before upstream withdrew it) keeps
  mirroring; ``reject``.
- ``empty_axis_nonconstant``: edge/reflect/symmetric/wrap must invent values on an axis with
  no elements. ``reject`` (default) or ``constant_fill`` (the dtype's default constant).
- ``crop_beyond_dim``: begin + dim + end < 0; or, cropping first (``mixed_sign_pads``), the
  negative pad alone larger than dim. ``reject`` (default) or ``clamp_to_zero`` (OpenVINO's
  ``max(..., 0)`` of the output's size).
- ``repeated_axes``: ``reject`` (default), ``last_wins`` or ``accumulate``.
- ``negative_pads``: ``crop`` (default: every version that speaks of negative pads crops) or
  ``reject`` (ONNX Pad-1 speaks only of counts, OpenVINO Pad-1 of a "non-negative" type).
- ``pad_value_in_non_constant_mode``: a constant value given with another mode. ``ignore``
  (default) or ``reject``.

Dimensions are exact integers: pads whose sum overflows int64 on the way (``pads_begin +
data.shape``) yet whose total fits give the output the formula gives; a total beyond int64
is ``TooLargeToCheck`` (no tensor has such a dimension).

``float32_constant=True`` says the constant reaches the operator through a 32-bit float
attribute (ONNX Pad-1/2's ``value``), so it is rounded to float32 before taking the data's dtype.

Every refusal is a ``PadError`` with a one-line reason and the rule it breaks; an output over
``max_elements`` is ``TooLargeToCheck``, padconf's limit and no rule. ``consulted``, when given,
collects the undefined points the input reached, in the order reached: each name is looked up
only where its interpretations could differ, so a caller can explore every combination of the
points a case reaches (padconf/cases/classify.py) without a second copy of this logic.
"""
from __future__ import annotations

import math

import numpy as np

from padconf.core.dtypes import default_constant, dtype_name
from padconf.core.errors import PadError, TooLargeToCheck

MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
INTERPRETATIONS: dict[str, tuple[str, ...]] = {
    "mixed_sign_pads": ("original_coordinates", "crop_first"),
    "mirror_beyond_dim": ("iterate", "reject"),
    "empty_axis_nonconstant": ("reject", "constant_fill"),
    "crop_beyond_dim": ("reject", "clamp_to_zero"),
    "repeated_axes": ("reject", "last_wins", "accumulate"),
    "negative_pads": ("crop", "reject"),
    "pad_value_in_non_constant_mode": ("ignore", "reject"),
}
DEFAULTS = {name: values[0] for name, values in INTERPRETATIONS.items()}
# Refuse before allocating more output elements than this (2**27 = 134M, 0.5 GB of float32).
MAX_ELEMENTS = 2**27
# The work bounded, not only the output: the output (twice, where a mode gathers it through
# index maps), and each axis's int64 index maps with their temporaries, at most this many bytes.
# A 1-D output just under MAX_ELEMENTS built index arrays of 1 GiB each (a MemoryError).
MAX_WORK_BYTES = 2**30
INDEX_BYTES_PER_POSITION = 6 * 8  # an axis's index map, its shifted and folded copies, its border positions
INT64_MAX = 2**63 - 1  # pads are int64 tensors (or attributes), and so are a tensor's dimensions


def pad(data, pads, mode="constant", constant_value=None, axes=None, *,
        max_elements=MAX_ELEMENTS, float32_constant=False, mirror_bound_every_pad=False,
        consulted: list | None = None, **interpretations) -> np.ndarray:
    chosen = _Chosen(_interpretations(interpretations), consulted)
    data = np.asarray(data)
    if mode not in MODES:
        raise PadError(f"mode {mode!r} is not one of {', '.join(MODES)}", "modes")
    pads = [int(p) for p in np.asarray(pads).reshape(-1)]
    if any(p < 0 for p in pads) and chosen["negative_pads"] == "reject":
        raise PadError(f"pads {pads} hold a negative value", "negative_pads")
    if constant_value is not None and mode != "constant" \
            and chosen["pad_value_in_non_constant_mode"] == "reject":
        raise PadError(f"a constant value is given with mode {mode!r}", "pad_value_in_non_constant_mode")
    widths = _pad_widths(data.ndim, pads, axes, chosen)
    fill = _constant(data, constant_value, float32_constant)

    shape = _output_shape(data.shape, widths, chosen)
    if any(size > INT64_MAX for size in shape):
        raise TooLargeToCheck(f"output shape {shape} has a dimension beyond int64 (pads whose sum overflows): "
                              f"no tensor holds it, and no document says what happens", "max_elements")
    if math.prod(shape) > max_elements:
        raise TooLargeToCheck(f"output shape {shape} has more than {max_elements} elements: too large "
                              f"for padconf's reference to check", "max_elements")
    work = _work(data.shape, shape, data.dtype.itemsize, mode)
    if work > MAX_WORK_BYTES:
        raise TooLargeToCheck(f"output shape {shape} ({mode}) needs about {work} bytes of padconf's reference "
                              f"(its output and index maps), more than {MAX_WORK_BYTES}: too large to check",
                              "max_elements")

    out = np.empty(shape, dtype=data.dtype)
    axes_plan = [_AxisPlan(n, b, e, size, mode, chosen, mirror_bound_every_pad)
                 for n, (b, e), size in zip(data.shape, widths, shape)]
    # after the plans, whose bounds hold for an empty output too; and an axis that must take
    # padding from no elements is the undefined point even where another axis empties the output
    if any(plan.empty_source for plan in axes_plan):
        if chosen["empty_axis_nonconstant"] == "reject":
            raise PadError(f"mode {mode!r} has no elements to take its padding from on an empty axis",
                           "empty_axis_nonconstant")
        out[...] = default_constant(dtype_name(data.dtype))
        return out
    if out.size == 0:
        return out
    if mode != "constant" and not all(plan.borders_read_interior for plan in axes_plan):
        return data[np.ix_(*[plan.source_map() for plan in axes_plan])]

    out[tuple(p.out_interior for p in axes_plan)] = data[tuple(p.src_interior for p in axes_plan)]
    for k, plan in enumerate(axes_plan):
        # axes before k are already whole; axes after k hold only their interior so far
        region = [slice(None)] * k + [None] + [p.out_interior for p in axes_plan[k + 1:]]
        for border in plan.border_positions():
            region[k] = _compact(border)
            if mode == "constant":
                out[tuple(region)] = fill
            else:
                source = region[:k] + [_compact(plan.output_position_of(border))] + region[k + 1:]
                out[tuple(region)] = out[tuple(source)]
    return out


def _output_shape(data_shape, widths, chosen) -> list[int]:
    """The output's size on each axis: the data's, padded by ``widths`` (exact integers)."""
    shape = []
    for n, (b, e) in zip(data_shape, widths):
        size = n + b + e
        # cropping first, a crop can remove more than the axis holds though the padding makes up
        # for it: in constant mode too, where the order matters only there (else both orders agree)
        if size < 0 or (b * e < 0 and n + min(b, 0) + min(e, 0) < 0
                        and chosen["mixed_sign_pads"] == "crop_first"):
            if chosen["crop_beyond_dim"] == "reject":
                raise PadError(f"pads ({b}, {e}) crop more than the dimension {n} holds", "crop_beyond_dim")
            size = max(size, 0)
        shape.append(size)
    return shape


def _work(data_shape, shape, itemsize: int, mode: str) -> int:
    """The bytes the reference takes to pad ``data_shape`` to ``shape``: the output (twice where
    a mode gathers it through index maps), and each axis's index maps."""
    return (math.prod(shape) * max(itemsize, 1) * (1 if mode == "constant" else 2)
            + sum(max(size, n) for size, n in zip(shape, data_shape)) * INDEX_BYTES_PER_POSITION)


# The readings under which an output is largest: what a runtime that checks nothing computes
_PERMISSIVE = {"negative_pads": "crop", "crop_beyond_dim": "clamp_to_zero", "repeated_axes": "accumulate",
               "mixed_sign_pads": "original_coordinates", "pad_value_in_non_constant_mode": "ignore"}


def implied_shape(data_shape, pads, axes=None) -> list[int] | None:
    """The output shape under the most permissive reading (what a runtime that checks nothing
    gives), from the shapes alone; None where the pads fit no axis."""
    chosen = _Chosen(_interpretations(_PERMISSIVE), None)
    try:
        return _output_shape(data_shape, _pad_widths(len(data_shape), [int(p) for p in pads], axes, chosen), chosen)
    except (PadError, TypeError, ValueError):
        return None


def implied_work(data_shape, itemsize: int, pads, mode: str, axes=None) -> int:
    """The bytes a case implies, computed from its shapes alone, allocating nothing: its output
    under the most permissive reading (what a runtime computes, whatever the case's kind) and,
    where padconf's reference checks it, the reference's work too (``_work``: the output again
    and the index maps). An output no tensor can hold (a dimension beyond int64) implies none:
    a runtime must refuse it; nor do pads that fit no axis (a runtime can only refuse them).
    A whole input's cases are bounded by the sum (padconf.cases.case.InputBudget)."""
    shape = implied_shape(data_shape, pads, axes)
    if shape is None:
        return math.prod(data_shape) * max(itemsize, 1)
    if any(size > INT64_MAX for size in shape):
        return 0
    output = math.prod(shape) * max(itemsize, 1)
    work = _work(data_shape, shape, itemsize, mode)
    checked = math.prod(shape) <= MAX_ELEMENTS and work <= MAX_WORK_BYTES
    return work if checked else output


class _Chosen(dict):
    """The interpretations in force; records each name looked up in ``consulted``."""

    def __init__(self, values: dict, consulted: list | None):
        super().__init__(values)
        self.consulted = consulted

    def __getitem__(self, name):
        if self.consulted is not None and name not in self.consulted:
            self.consulted.append(name)
        return super().__getitem__(name)


def _interpretations(given: dict) -> dict:
    for name, value in given.items():
        if name not in INTERPRETATIONS:
            raise PadError(f"unknown keyword {name!r}; interpretations are {', '.join(INTERPRETATIONS)}")
        if value not in INTERPRETATIONS[name]:
            raise PadError(f"{name}={value!r} is not one of {', '.join(INTERPRETATIONS[name])}")
    return {**DEFAULTS, **given}


def _pad_widths(rank: int, pads: list[int], axes, chosen) -> list[tuple[int, int]]:
    """(begin, end) for every axis of the data."""
    if axes is None:
        axes = list(range(rank))
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    if len(pads) != 2 * len(axes):
        raise PadError(f"pads has {len(pads)} values; {len(axes)} axes need {2 * len(axes)}", "pads_length")
    widths = [(0, 0)] * rank
    seen = set()
    for i, axis in enumerate(axes):
        if not -rank <= axis < rank:
            raise PadError(f"axis {axis} is outside [-{rank}, {rank - 1}]", "axes_range")
        axis %= rank
        b, e = pads[i], pads[len(axes) + i]
        if axis in seen:
            if chosen["repeated_axes"] == "reject":
                raise PadError(f"axis {axis} is repeated in axes {axes}", "repeated_axes")
            if chosen["repeated_axes"] == "accumulate":
                b, e = b + widths[axis][0], e + widths[axis][1]
        seen.add(axis)
        widths[axis] = (b, e)
    return widths


def _constant(data: np.ndarray, value, float32_constant: bool):
    name = dtype_name(data.dtype)
    if value is None:
        return default_constant(name)
    value = np.asarray(value)
    if value.size != 1:
        raise PadError(f"constant_value must be one value, got shape {list(value.shape)}", "constant_value")
    if name == "string":
        if not isinstance(value.reshape(-1)[0], str):
            raise PadError(f"constant_value {value.reshape(-1)[0]!r} is not a string for string data", "constant_value")
        return value.reshape(-1)[0]
    if float32_constant:  # overflow to inf is what the attribute does, not an error
        # a float attribute holds no imaginary part (cases.onnx_model writes the real one)
        with np.errstate(over="ignore", invalid="ignore"):
            value = (value.real if np.iscomplexobj(value) else value).astype(np.float32).astype(data.dtype)
    try:
        return value.reshape(()).astype(data.dtype)
    except (TypeError, ValueError) as exc:
        raise PadError(f"constant_value {value!r} cannot be {name}: {exc}", "constant_value") from None


class _AxisPlan:
    """One axis: which input elements survive the crop, where they land in the output, and
    where each border element of the output takes its value from."""

    def __init__(self, n, begin, end, size, mode, chosen, bound_every_pad=False):
        self.n, self.begin, self.end, self.size, self.mode = n, begin, end, size, mode
        self.crop_first = begin * end < 0 and mode != "constant" and chosen["mixed_sign_pads"] == "crop_first"
        # the input range [lo, hi) that the crop keeps, and where it starts in the output
        self.lo, hi = max(-begin, 0), n - max(-end, 0)
        self.kept = max(hi - self.lo, 0)
        self.out_lo = min(max(begin, 0), size)  # a crop at the end may eat into the begin padding
        self.out_interior = slice(self.out_lo, self.out_lo + self.kept)
        self.src_interior = slice(self.lo, self.lo + self.kept)
        # the tensor the padding mirrors / wraps / extends: the cropped one, or the original
        self.mirror_len = self.kept if self.crop_first else n
        needs_values = size > self.kept
        # "an axis with no elements ... that gets a pad > 0", whether or not a crop leaves room for it
        self.empty_source = mode != "constant" and self.mirror_len == 0 and (needs_values or max(begin, end) > 0)
        if mode in ("reflect", "symmetric"):
            # the bound holds for pads that add elements (ONNX's erratum, PR #7700: "reflect
            # padding must be strictly less than the input dimension size"): a pad of 0, or an
            # axis ``axes`` leaves out, adds nothing. With ``bound_every_pad`` it holds for every
            # pad, as OpenVINO writes it ("must be not greater than data.shape[D] – 1 for any
            # valid D"): on an empty axis even a reflect pad of 0
            reach = self.mirror_len - (mode == "reflect")
            widest = max(begin, end)
            if (widest > 0 or bound_every_pad) and widest > reach and chosen["mirror_beyond_dim"] == "reject":
                raise PadError(f"{mode} pad {max(begin, end)} exceeds what the dimension "
                               f"{self.mirror_len} can mirror ({reach})", "mirror_beyond_dim")
        self.borders_read_interior = mode == "constant" or self.empty_source or not needs_values or all(
            np.all(self._in_interior(self._source_of(border))) for border in self.border_positions())

    def _source_of(self, j: np.ndarray) -> np.ndarray:
        """Input index for output positions j (outside the interior for non-constant modes)."""
        if self.crop_first:
            return self.lo + _fold(j - self.out_lo, self.kept, self.mode)
        return _fold(j - self.begin, self.n, self.mode)

    def source_map(self) -> np.ndarray:
        return self._source_of(np.arange(self.size))

    def border_positions(self) -> list[np.ndarray]:
        before = np.arange(0, self.out_lo)
        after = np.arange(self.out_lo + self.kept, self.size)
        return [b for b in (before, after) if b.size]

    def _in_interior(self, src: np.ndarray) -> np.ndarray:
        return (src >= self.lo) & (src < self.lo + self.kept)

    def output_position_of(self, border: np.ndarray) -> np.ndarray:
        """Where in the output (inside its interior) the source of each border position lies."""
        return self._source_of(border) - self.lo + self.out_lo


def _compact(index: np.ndarray):
    """``index`` as a slice when it is a run with step 1, -1 or 0 (copying a slice is several
    times faster than gathering through an index array; step 0 broadcasts one element)."""
    if index.size == 1:
        return slice(int(index[0]), int(index[0]) + 1)
    step = int(index[1] - index[0])
    if step not in (1, -1, 0) or not np.all(np.diff(index) == step):
        return index
    if step == 0:
        return slice(int(index[0]), int(index[0]) + 1)
    stop = int(index[-1]) + step
    return slice(int(index[0]), None if stop < 0 else stop, step)


def _fold(s: np.ndarray, n: int, mode: str) -> np.ndarray:
    """Map positions s (any integers) into [0, n) as ``mode`` pads an axis of n elements."""
    if mode == "edge":
        return np.clip(s, 0, n - 1)
    if mode == "wrap":
        return np.mod(s, n)
    if mode == "reflect":
        if n == 1:
            return np.zeros_like(s)
        t = np.mod(s, 2 * (n - 1))
        return np.where(t < n, t, 2 * (n - 1) - t)
    if mode == "symmetric":
        t = np.mod(s, 2 * n)
        return np.where(t < n, t, 2 * n - 1 - t)
    return s  # constant: in-range positions only; the border is filled, never gathered
