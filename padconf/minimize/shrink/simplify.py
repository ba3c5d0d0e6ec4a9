"""Simpler cases than a given one: the simplifications padconf.minimize.minimize tries, in the order of
PASSES, each a generator of candidate cases (unclassified). Pure case transformations: what
a candidate does on a runtime is minimize's business."""
from __future__ import annotations

import numpy as np

from padconf.cases.case import Case
from padconf.core.dtypes import as_array, bit_equal, is_float_like, scalar

SIMPLER_DTYPES = ("float", "int64", "int32", "uint8")  # tried in this order, where the failure still shows
ELEMENTWISE_UP_TO = 64  # elements: beyond this, values are simplified in blocks only


def _small_values(shape, dtype: str) -> np.ndarray:
    """1, 2, 3 ... in the dtype (strings "a", "b" ...; bools alternating): distinct where the
    dtype allows, so that a wrong index shows in the output."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "string":
        return np.array([chr(ord("a") + i % 26) for i in range(n)], dtype=object).reshape(shape)
    if dtype == "bool":
        return (np.arange(n) % 2 == 0).reshape(shape)
    return as_array(np.arange(1, n + 1).reshape(shape), dtype)


def _axis_pad_slots(case: Case, axis: int) -> list[int]:
    """The indices into pads of ``axis``'s begin and end pads (none when pads are malformed)."""
    n = case.data.ndim
    if case.axes is None:
        return [axis, n + axis] if len(case.pads) == 2 * n else []
    k = len(case.axes)
    if len(case.pads) != 2 * k:
        return []
    return [s for j, a in enumerate(case.axes) if -n <= a < n and a % n == axis for s in (j, k + j)]


def _without_axis(case: Case, i: int) -> Case:
    n = case.data.ndim
    shape = case.data.shape[:i] + case.data.shape[i + 1:]
    # a list index, so that a string element stays in an object array (a bare 0 gives a str)
    data = np.take(case.data, [0], axis=i).reshape(shape) if case.data.shape[i] else _small_values(shape, case.dtype)
    pads, axes = list(case.pads), case.axes
    if case.axes is None and len(pads) == 2 * n:
        pads = pads[:i] + pads[i + 1:n] + pads[n:n + i] + pads[n + i + 1:]
    elif case.axes is not None and len(pads) == 2 * len(case.axes):
        k, kept = len(case.axes), []
        for j, a in enumerate(case.axes):
            if not -n <= a < n:
                kept.append((j, a))  # out of range: a broken rule the failure may be about
            elif a % n != i:
                r = a % n - (a % n > i)
                kept.append((j, r if a >= 0 else r - (n - 1)))
        pads = [pads[j] for j, _ in kept] + [pads[k + j] for j, _ in kept]
        axes = [a for _, a in kept]
    # reshape: np.ascontiguousarray alone turns the scalar np.take leaves of rank-1 data into shape (1,)
    return case.with_(data=np.ascontiguousarray(data).reshape(shape), pads=pads, axes=axes)


def fewer_dims(case: Case):
    for i in range(case.data.ndim):
        yield _without_axis(case, i)


def rank_one(case: Case) -> Case | None:
    """A rank-0 case as rank 1: its one element as shape [1], padded by nothing on the
    new axis (with axes, the same pads on the same axes); None where the rank-0 pads are not
    empty (the wrong length for rank 0, a rule of their own) or the case is not rank 0."""
    if case.data.ndim or (case.axes is None and list(case.pads)):
        return None
    return case.with_(data=case.data.reshape(1), pads=list(case.pads) if case.axes is not None else [0, 0])


def smaller_dims(case: Case):
    """Each dimension cut to 1, 2, half, one less (its first slices); also with that axis's pads
    shrunk by as much, which keeps a pad's distance to the dimension (pad == dim - 1 ...)."""
    for i, size in enumerate(case.data.shape):
        for n in sorted({1, 2, size // 2, size - 1} - {0}):
            if n >= size:
                continue
            data = np.ascontiguousarray(case.data[(slice(None),) * i + (slice(0, n),)])
            yield case.with_(data=data)
            pads = list(case.pads)
            for s in _axis_pad_slots(case, i):
                pads[s] = int(np.sign(pads[s])) * max(abs(pads[s]) - (size - n), 0)
            if pads != case.pads:
                yield case.with_(data=data, pads=pads)


def _toward_zero(p: int) -> list[int]:
    s = 1 if p > 0 else -1
    return sorted({0, s, s * (abs(p) // 2), p - s} - {p}, key=abs)


def smaller_pads(case: Case):
    if any(case.pads):
        yield case.with_(pads=[0] * len(case.pads))
        yield case.with_(pads=[int(np.sign(p)) * (abs(p) // 2) for p in case.pads])
    for j, p in enumerate(case.pads):
        for q in _toward_zero(p) if p else []:
            yield case.with_(pads=case.pads[:j] + [q] + case.pads[j + 1:])


def fewer_axes(case: Case):
    if case.axes is None:
        return
    n, k = case.data.ndim, len(case.axes)
    if len(case.pads) == 2 * k:
        normal = [a % n for a in case.axes if -n <= a < n]
        if len(normal) == k and len(set(normal)) == k:  # no axes input at all, the same pads
            full = [0] * (2 * n)
            for j, a in enumerate(normal):
                full[a], full[n + a] = case.pads[j], case.pads[k + j]
            yield case.with_(axes=None, pads=full)
        for j in range(k):
            yield case.with_(axes=case.axes[:j] + case.axes[j + 1:],
                             pads=case.pads[:j] + case.pads[j + 1:k] + case.pads[k:k + j] + case.pads[k + j + 1:])
    if n and any(a < 0 for a in case.axes):
        yield case.with_(axes=[a % n if -n <= a < 0 else a for a in case.axes])


def simpler_values(case: Case):
    """Blocks of elements, then single ones, replaced by small integers; a float element that
    must stay special (NaN, inf) stays, a finite one is also tried truncated."""
    flat, size = case.data.reshape(-1), case.data.size
    target = _small_values(case.data.shape, case.dtype).reshape(-1)
    smallest = 1 if size <= ELEMENTWISE_UP_TO else max(1, size // 16)
    block = size
    while block >= smallest and size:
        for start in range(0, size, block):
            if not bit_equal(flat[start:start + block], target[start:start + block]):
                new = flat.copy()
                new[start:start + block] = target[start:start + block]
                yield case.with_(data=new.reshape(case.data.shape))
        block //= 2
    if is_float_like(case.dtype) and size <= ELEMENTWISE_UP_TO and np.dtype(case.data.dtype).kind != "c":
        with np.errstate(invalid="ignore", over="ignore"):
            wide = flat.astype(np.float64)
        for i, v in enumerate(wide):
            if np.isfinite(v) and v != np.trunc(v):
                new = flat.copy()
                new[i] = scalar(np.trunc(v), case.dtype)
                yield case.with_(data=new.reshape(case.data.shape))


def simpler_constant(case: Case):
    value = case.constant_value
    if value is None:
        return
    yield case.with_(constant_value=None)
    if np.ndim(value) and value.size:  # a scalar of its first value (a case file's may hold several, or none)
        yield case.with_(constant_value=value.reshape(-1)[:1].reshape(()))
    if case.dtype == "string":
        yield case.with_(constant_value=scalar("", "string"))
        return
    for v in (0, 1):
        yield case.with_(constant_value=np.broadcast_to(scalar(v, case.dtype), np.shape(value)).copy())


def simpler_types(case: Case):
    if case.pads_type != "int64":
        yield case.with_(pads_type="int64")
    if case.axes is not None and case.axes_type != "int64":
        yield case.with_(axes_type="int64")
    if case.dtype == "string":
        return
    rank = SIMPLER_DTYPES.index(case.dtype) if case.dtype in SIMPLER_DTYPES else len(SIMPLER_DTYPES)
    value = case.constant_value
    with np.errstate(invalid="ignore", over="ignore"):
        values = case.data.astype(np.complex128).real
        simpler = [case.with_(data=as_array(values, dtype), constant_value=None if value is None
                              else as_array(value.astype(np.complex128).real, dtype))
                   for dtype in SIMPLER_DTYPES[:rank]]  # only simpler ones: greedy acceptance must not cycle
    yield from simpler


VALID_MODES = ("constant", "edge", "reflect")  # every Pad version's


def valid_parts(case: Case):
    """The invalid or undefined parts of a case shed, each in turn: repeated axes (the first of
    each kept, with its pads; undefined, or invalid where the version forbids them), and of a
    must-reject case a mode every version has for one it lacks, a common dtype for one its type
    list lacks. Tried first: a wrong value that survives them is a report on a valid
    input (IREE ignoring a fed ``axes`` shows on a valid mode and dtype too); minimize's loop
    takes such a candidate as the failure from then on (shrink.loop: ``repaired``)."""
    n = case.data.ndim
    if case.axes is not None and n and len(case.pads) == 2 * len(case.axes):  # repeated axes: undefined, or
        k, seen, kept = len(case.axes), set(), []  # invalid where the version forbids them
        for j, a in enumerate(case.axes):
            if -n <= a < n and a % n in seen:
                continue
            seen.add(a % n if -n <= a < n else a)
            kept.append(j)
        if len(kept) < k:
            yield case.with_(axes=[case.axes[j] for j in kept],
                             pads=[case.pads[j] for j in kept] + [case.pads[k + j] for j in kept])
    if case.kind != "must-reject":
        return
    if case.mode not in VALID_MODES:
        for mode in VALID_MODES:
            yield case.with_(mode=mode)
    if case.dtype not in SIMPLER_DTYPES and case.dtype != "string":
        value = case.constant_value
        # built inside errstate, yielded outside it (as simpler_types): a generator abandoned
        # inside the block is closed by whichever thread collects it, and numpy's context token
        # then fails to reset ("created in a different Context", audit VI's minimize log)
        with np.errstate(invalid="ignore", over="ignore"):
            simpler = [case.with_(data=as_array(case.data.astype(np.complex128).real, dtype),
                                  constant_value=None if value is None else
                                  as_array(np.asarray(value).astype(np.complex128).real, dtype))
                       for dtype in SIMPLER_DTYPES]
        yield from simpler


PASSES = (valid_parts, fewer_dims, smaller_pads, smaller_dims, fewer_axes, simpler_values, simpler_constant,
          simpler_types)
