"""A bundle's title, in the runtime's terms: the op and mode, what went wrong, the minimal case's
distinguishing feature and the dtype, e.g. "Pad(reflect) returns wrong values for a negative
begin pad on float16 (opset 19)" or "Pad(edge) crashes (SIGSEGV) on a crop beyond the dimension
on double (opset 18)"."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from padconf.adapters import adapter_class, registry, split_variant
from padconf.cases.case import Case
from padconf.cases.context import Consumer, Producer
from padconf.judging.verdicts import NAN_PAYLOAD_OR_ZERO_SIGN, Difference, Verdict
from padconf.spec.loader import parse_spec_id

# what a must-reject case breaks, as the object of "accepts ..." (padconf/spec/documents' rule names)
_BROKEN = {"modes": "mode {mode} (not in this opset)", "dtypes": "{dtype} data (not in this opset's type list)",
           "pads_length": "pads of the wrong length", "crop_beyond_dim": "a crop beyond the dimension",
           "negative_pads": "a negative pad", "axes_range": "an axis out of range",
           "mirror_beyond_dim": "a {mode} pad beyond what the data can mirror",
           "pads_index_types": "pads of type {pads_type}", "axes_index_types": "axes of type {axes_type}",
           "axes_input": "an axes input (not in this opset)", "output_shape": "a negative output dimension"}
PLACED = {"inputs": "with pads fed at run time", "initializers": "with constant pads",
          "folded": "when folded at compile time"}
# ONNX Pad-1 and Pad-2 take pads as an attribute: the data is fed but where folded
PLACED_ATTRIBUTE_PADS = {**PLACED, "inputs": "with data fed at run time", "initializers": "with data fed at run time"}


def placed(case: Case, placement: str) -> str:
    """Where a placement puts the case's operands, as a title's phrase: every operand the
    placement moves, named (a placement moves pads, axes and the constant value together, so the
    removal experiment that named it cannot tell which of them the failure needs: IREE ignores
    an ``axes`` input fed at run time, whatever the pads are)."""
    domain, version = parse_spec_id(case.spec)
    if domain == "onnx" and version <= 2:
        return PLACED_ATTRIBUTE_PADS[placement]
    if placement in ("inputs", "initializers"):
        moved = ["pads", *(["axes"] if case.axes is not None else []),
                 *(["constant_value"] if case.constant_value is not None else [])]
        names = moved[0] if len(moved) == 1 else ", ".join(moved[:-1]) + " and " + moved[-1]
        return f"with {names} fed at run time" if placement == "inputs" else f"with constant {names}"
    return PLACED[placement]


def op_name(case: Case) -> str:
    """Pad and its mode; for a context case, its neighbourhood too: "Pad(constant) before MaxPool
    (pads from Constant nodes)"."""
    name = f"Pad({case.mode})"
    ctx = case.context
    if ctx is None:
        return name
    if ctx.consumer != Consumer.NONE:
        name += f" before {ctx.consumer}"  # not "->": markdown tables escape ">"
    about = ([f"pads from {_PRODUCED[ctx.producer]}"] if ctx.producer != Producer.INPUTS else []) \
        + (["a static data shape"] if ctx.static_shape else []) + (["no mode attribute"] if not ctx.mode_attr else []) \
        + (["feeding two consumers"] if ctx.fanout else [])
    return f"{name} ({', '.join(about)})" if about else name


_PRODUCED = {Producer.CONSTANT_NODE: "Constant nodes", Producer.CONSTANT_INTS: "Constant nodes' value_ints",
             Producer.SHAPE_CHAIN: "a Shape/Gather/Concat/Sub/Cast chain",
             Producer.TORCH_PAD: "PyTorch's F.pad export chain"}


def _conditions(row: Mapping[str, Any]) -> tuple[str, str]:
    """What of the runtime's own processing the failure needs, before and after the title
    (Adapter.title_conditions); nothing for a row of no registered runtime (a test's)."""
    runtime = row.get("runtime") or ""
    if split_variant(runtime)[0] not in registry():
        return "", ""
    return adapter_class(runtime).title_conditions(runtime, row.get("note"))


def version_text(case: Case) -> str:
    domain, version = parse_spec_id(case.spec)
    return {"onnx": f"opset {version}", "openvino": f"OpenVINO opset{version}"}.get(domain, f"{domain}/Pad-{version}")


def feature(case: Case) -> str:
    """``_feature``, and rank 0 too where the case has it and the feature is another."""
    found = _feature(case)
    return found if case.data.ndim or found == RANK_0 else f"{found} on rank-0 data"


RANK_0 = "a rank-0 input"
NEGATIVE_SIZE = "pads that remove more than the axis holds"
WIDE_PADS = "pads beyond the 32-bit range"


NEGATIVE_PADS = "negative pads"
_ONE_CROP = ("a negative begin pad", "a negative end pad", NEGATIVE_PADS)


def cause_feature(what: str) -> str:
    """``what`` as two minimized failures are compared for one cause: a negative begin pad, a
    negative end pad and negative pads at both ends are one crop, whichever end a shrink keeps
    (IREE's negative pads fed at run time, read one element off: one bundle kept the begin pad,
    another the end pad)."""
    return NEGATIVE_PADS if what in _ONE_CROP else what


def generic(what: str) -> bool:
    """A feature that says little of the cause: no edge of the spec's but the case's rank, an
    explicit constant or an axes input (``_feature``'s last resorts)."""
    return what.startswith("a rank-") and what != RANK_0 or what in (
        "an explicit constant value", "an axes input", "negative axes")


def _feature(case: Case) -> str:
    """The minimal case's distinguishing feature, as a noun phrase: pads beyond the 32-bit range
    (which shrinking keeps only where the failure needs them), pads removing more than an
    axis holds (a negative size), an empty axis, a crop beyond or down to nothing, a pad beyond
    the dimension, a negative pad, axes or pads of a narrower type, rank 0; else its rank. Rank 0
    comes late: shrinking heads there whatever the bug, so what a rank-0 minimal case still holds
    says more."""
    shape, n, pads = case.data.shape, case.data.ndim, list(case.pads)
    per_axis: list[tuple[int, int, int]] = []  # (dim, begin, end) of each padded axis
    if case.axes is None and len(pads) == 2 * n:
        per_axis = [(shape[i], pads[i], pads[n + i]) for i in range(n)]
    elif case.axes is not None and len(pads) == 2 * len(case.axes):
        k = len(case.axes)
        per_axis = [(shape[a % n], pads[j], pads[k + j]) for j, a in enumerate(case.axes) if -n <= a < n]
    if any(not -2 ** 31 <= int(p) < 2 ** 31 for p in pads):  # what a runtime computing pads in 32 bits loses
        return WIDE_PADS  # (OpenVINO's CPU node: fed [2**32 - 2, ...] pads as [-2, ...]): before what they crop
    if any(d + b + e < 0 for d, b, e in per_axis):
        return NEGATIVE_SIZE
    if 0 in shape:
        return "an empty axis"
    if any(min(b, 0) + min(e, 0) < -d for d, b, e in per_axis):
        return "a crop beyond the dimension"
    if any(d + b + e == 0 for d, b, e in per_axis):
        return "a crop down to zero elements"
    if case.mode != "constant" and any(max(b, e) >= d for d, b, e in per_axis):
        return "a pad as large as the dimension or larger"
    if case.mode != "constant" and any(d >= 2 and max(b, e) == d - 1 for d, b, e in per_axis):
        return "a pad of the dimension minus one"
    begin, end = any(b < 0 for _, b, _ in per_axis), any(e < 0 for _, _, e in per_axis)
    if begin or end:
        return NEGATIVE_PADS if begin and end else f"a negative {'begin' if begin else 'end'} pad"
    if case.axes is not None and case.axes_type != "int64":
        return f"{case.axes_type} axes"
    if case.pads_type != "int64":
        return f"{case.pads_type} pads"
    if case.axes is not None and n:
        return "negative axes" if any(a < 0 for a in case.axes) else "an axes input"
    if n == 0:
        return RANK_0
    special = None if case.constant_value is None else _special(case.constant_value)
    if special:  # in any mode: a frontend reads Pad-1/2's value attribute of inf whatever the mode
        return special
    if case.constant_value is not None and case.mode == "constant":
        return "an explicit constant value"
    return f"a rank-{n} input"


def _special(value) -> str | None:
    """A float constant value that is one of its own kind (inf, NaN, -0.0), as a noun phrase;
    ml_dtypes' floats included."""
    value = np.asarray(value)
    if value.size != 1 or value.dtype.kind in "biucOSU":
        return None
    x = float(value.reshape(-1)[0])
    if np.isnan(x):
        return "a NaN constant value"
    if np.isinf(x) or (x == 0 and np.signbit(x)):
        return f"a constant value of {'-' if np.signbit(x) else ''}{'inf' if np.isinf(x) else '0.0'}"
    return None


def with_positive_pads(case: Case, what: str) -> str:
    """``what`` (a negative pad's feature) with the positive pads the failure needs beside it
    (probes.experiments.positive_pads_needed): "a negative end pad with a positive begin pad"."""
    k = len(case.pads) // 2
    sides = [side for side, pads in (("begin", case.pads[:k]), ("end", case.pads[k:])) if any(p > 0 for p in pads)]
    return f"{what} with a positive {' and '.join(sides)} pad" if sides else what


def title(row: Mapping[str, Any], case: Case, placement_dependent: bool = False,
          refused_when_folded: bool = False, positive_pads: bool = False,
          features: Mapping[str, Any] | None = None) -> str:
    """One line a runtime's maintainer would file: op(mode), what goes wrong, on what, dtype.
    ``refused_when_folded``: the runtime answered an empty tensor at run time, and refuses the
    same case folded at compile time (padconf.minimize.minimize.refused_when_folded);
    ``positive_pads``: the failure needs the case's positive pads beside its negative ones (a
    removal experiment), so the trigger names them; ``features``: whether the opset and the
    dtype are needed (experiments.features_needed): one that another opset or dtype fails alike
    without is not named."""
    verdict, what = row["verdict"], feature(case)
    features = features or {}
    if positive_pads and what in ("a negative begin pad", "a negative end pad", "negative pads"):
        what = with_positive_pads(case, what)
    dtype_named = features.get("dtype", True)
    # a rank but 0 says nothing of the cause: a case has one, whether the failure needs it or not
    # (what else shrinking leaves, it could not take away)
    if what.startswith("a rank-") and what != RANK_0:
        on = f"{case.dtype} data" if dtype_named else "its data"
    else:
        on = f"{what} on {case.dtype}" if dtype_named else what
    # an acceptance breaks a rule of its version ("mode wrap (not in this opset)"): it names its version
    version = f" ({version_text(case)})" if features.get("opset", True) or verdict == Verdict.WRONGLY_ACCEPTED else ""
    modes = features.get("modes")
    op = op_name(case)
    if modes is not None:  # the modes failing alike ("Pad(edge, reflect, wrap)"), none where every mode does
        op = op.replace(f"Pad({case.mode})", f"Pad({', '.join(modes)})" if modes else "Pad", 1)
    setup = (row.get("experiments") or {}).get("default_configuration")  # padconf.minimize.probes.experiments
    only = ""
    if setup:
        settings = ", ".join(f"{k}={v}" for k, v in setup["configuration"].items()) or row["runtime"]
        only = f" only with {settings} (by default: {setup['verdict']})"
    before, after = _conditions(row)
    only += after
    if refused_when_folded:
        return f"{op} returns an empty tensor at run time for {on}, which it refuses " \
               f"when folded at compile time{only}{version}"
    if (row.get("experiments") or {}).get("explicit_default"):  # padconf.minimize.probes.experiments
        return f"{op} rejects an omitted constant_value (the documented default, which works " \
               f"written out) on {case.dtype}{version}"
    if verdict == Verdict.MISMATCH:
        difference = row.get("difference")
        wrong = ("the wrong output shape" if difference == Difference.SHAPE else
                 "the wrong element type" if difference == Difference.DTYPE else "wrong values")
        phrase = (f"changes a NaN payload or the sign of zero for {on}" if difference == NAN_PAYLOAD_OR_ZERO_SIGN else
                  f"rounds integers to float32 precision for {on}" if difference == Difference.THROUGH_FLOAT32 else
                  f"ignores its pads, returning its input unchanged, for {on}" if features.get("pads_ignored") else
                  f"returns {wrong} for {on}")
    elif verdict == Verdict.WRONGLY_REJECTED:
        phrase = f"rejects {on}"
    elif verdict == Verdict.WRONGLY_ACCEPTED:
        broken = _BROKEN.get(case.rule or "", "an input the specification forbids ({rule})")
        phrase = "accepts " + broken.format(mode=case.mode, dtype=case.dtype, pads_type=case.pads_type,
                                            axes_type=case.axes_type, rule=case.reason)
        phrase += f" on {case.dtype}" if case.rule != "dtypes" else ""
        if row.get("difference") == Difference.NO_READING:
            phrase += ", returning an output no reading gives"
    elif verdict == Verdict.NOT_IMPLEMENTED:
        phrase = f"has no implementation for {case.dtype}"
    elif verdict == Verdict.CRASH:
        signal = re.search(r"SIG[A-Z]+", row.get("error") or "")
        phrase = f"crashes{f' ({signal[0]})' if signal else ''} on {on}"
    elif verdict == Verdict.TIMEOUT:
        phrase = f"hangs on {on}"
    elif verdict == Verdict.UNEXPLAINED:
        phrase = f"answers {on} as no reading of the specification does"  # the readings: in REPORT.md
    else:
        phrase = f"{verdict} on {on}"
    where = f" {placed(case, row['placement'])}" if placement_dependent and row.get("placement") in PLACED else ""
    return f"{before}{op} {phrase}{where}{only}{version}"
