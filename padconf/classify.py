"""What a spec version says of a case: defined (one expected output), must-reject (the rule it
breaks) or ambiguous (the undefined point it hits, and its output under every interpretation).

Ambiguities are found by asking the reference, not by a second copy of its logic: the case is
padded under the spec's default interpretations, then once per other interpretation of each
ambiguity the spec lists; an ambiguity whose interpretations change the outcome is hit.
"""
from __future__ import annotations

import itertools

import numpy as np

from .cases import AMBIGUOUS, DEFINED, MUST_REJECT, Case
from .dtypes import bit_equal
from .errors import PadError
from .reference import pad
from .specs import Spec, get_spec

def rule_violation(case: Case, spec: Spec) -> str | None:
    """The rule of ``spec`` that ``case`` breaks before any padding is computed, or None."""
    if case.dtype not in spec.dtypes:
        return f"dtype {case.dtype} is not in this version's type list"
    if case.mode not in spec.modes:
        return f"mode {case.mode!r} is not one of this version's modes {list(spec.modes)}"
    if spec.signature["pads"]["via"] == "input" and case.pads_type not in spec.pads_index_types:
        return f"pads of type {case.pads_type} (this version takes {', '.join(spec.pads_index_types)})"
    if case.axes is not None:
        if not spec.has_axes:
            return "this version has no axes input"
        if case.axes_type not in spec.axes_index_types:
            return f"axes of type {case.axes_type} (this version takes {', '.join(spec.axes_index_types)})"
    if case.constant_value is not None and "constant_value" not in spec.signature:
        return "this version takes no constant value"
    if spec.rule("negative_pads") == "forbidden" and any(p < 0 for p in case.pads):
        return "negative pads are not allowed by this version"
    return None


def reference_call(case: Case, spec: Spec, interpretations: dict[str, str]) -> np.ndarray:
    """The reference output of ``case`` under ``interpretations`` (ambiguity -> interpretation);
    PadError when they reject it."""
    return pad(case.data, case.pads, case.mode, case.constant_value, case.axes,
               float32_constant=spec.signature.get("constant_value", {}).get("attribute_type") == "float",
               **interpretations)


def base_interpretations(spec: Spec) -> dict[str, str]:
    """The interpretations a spec's rules fix, then its ambiguities' defaults."""
    fixed = {}
    if spec.rule("crop_beyond_dim") == "clamp_to_zero":
        fixed["crop_beyond_dim"] = "clamp_to_zero"
    if spec.rule("mixed_sign") == "original_coordinates":
        fixed["mixed_sign_pads"] = "original_coordinates"
    if spec.rule("mirror_bounds") not in (None, "unstated"):
        fixed["mirror_beyond_dim"] = "reject"
    return {**fixed, **{a.name: a.default for a in spec.ambiguities.values()}}


def _outcome(case, spec, interpretations):
    try:
        return reference_call(case, spec, interpretations)
    except PadError as exc:
        return exc


def _same(a, b) -> bool:
    if isinstance(a, PadError) or isinstance(b, PadError):
        return isinstance(a, PadError) and isinstance(b, PadError)
    return bit_equal(a, b)


def classify(case: Case, spec: Spec | None = None) -> Case:
    """``case`` with kind, expected, reason and interpretations filled in from its spec."""
    spec = spec or get_spec(case.spec)
    broken = rule_violation(case, spec)
    if broken:
        return case.with_(kind=MUST_REJECT, reason=broken, expected=None, interpretations={})
    base = base_interpretations(spec)
    default = _outcome(case, spec, base)
    hit = [a for a in spec.ambiguities.values()
           if any(not _same(default, _outcome(case, spec, {**base, a.name: i}))
                  for i in a.interpretations if i != base[a.name])]
    if not hit:
        if isinstance(default, PadError):
            return case.with_(kind=MUST_REJECT, reason=str(default), expected=None, interpretations={})
        return case.with_(kind=DEFINED, expected=default, reason=None, interpretations={})
    outputs = {}
    for combo in itertools.product(*[a.interpretations for a in hit]):
        out = _outcome(case, spec, {**base, **{a.name: i for a, i in zip(hit, combo)}})
        key = ",".join(f"{a.name}={i}" for a, i in zip(hit, combo))
        outputs[key] = None if isinstance(out, PadError) else out
    return case.with_(kind=AMBIGUOUS, expected=None, reason=",".join(a.name for a in hit),
                      interpretations=outputs)
