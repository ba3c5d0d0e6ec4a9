"""What a spec version says of a case: defined (one expected output), must-reject (the rule it
breaks), ambiguous (the undefined points it hits, and its output under every combination of
their interpretations) or too large to check (past the reference's allocation bound).

Ambiguities are found by asking the reference, not by a second copy of its logic: the reference
reports the undefined points a case reaches (``consulted``), and the case is padded once per
branch of every point reached, under the interpretations already chosen. So a case that reaches
a point only under another point's non-default reading (OpenVINO's Pad-1 crops negative pads
only if negative pads are read as crops, and only then can the crop go beyond the dimension)
has both points found, which asking one point at a time misses.
"""
from __future__ import annotations

import itertools

import numpy as np

from padconf.cases.case import Case, CaseKind
from padconf.cases.context_oracle import apply_context
from padconf.core.dtypes import as_array, bit_equal, scalar
from padconf.core.errors import PadError, TooLargeToCheck
from padconf.spec.loader import MirrorBoundScope, Spec, get_spec
from padconf.spec.reference import INTERPRETATIONS, pad


def rule_violation(case: Case, spec: Spec) -> tuple[str, str] | None:
    """(rule, reason) for the rule of ``spec`` that ``case`` breaks before any padding is
    computed, or None. The rule is a key of the spec file (or of its operands' lists)."""
    if case.dtype not in spec.dtypes:
        return "dtypes", f"dtype {case.dtype} is not in this version's type list"
    if case.mode not in spec.modes:
        return "modes", f"mode {case.mode!r} is not one of this version's modes {list(spec.modes)}"
    if spec.operands["pads"]["via"] == "input" and case.pads_type not in spec.pads_index_types:
        return "pads_index_types", (f"pads of type {case.pads_type} "
                                    f"(this version takes {', '.join(spec.pads_index_types)})")
    if case.axes is not None:
        if not spec.has_axes:
            return "axes_input", "this version has no axes input"
        if case.axes_type not in spec.axes_index_types:
            return "axes_index_types", (f"axes of type {case.axes_type} "
                                        f"(this version takes {', '.join(spec.axes_index_types)})")
    if case.constant_value is not None and "constant_value" not in spec.operands:
        return "constant_value_input", "this version takes no constant value"
    if spec.rule("negative_pads") == "forbidden" and any(p < 0 for p in case.pads):
        return "negative_pads", "negative pads are not allowed by this version"
    return _padded_dims_violation(case, spec)


def padded_dims(case: Case) -> int:
    """How many trailing axes a framework's pad tuple covers (layout ``last_dim_first_pairs``):
    the fewest that hold every non-zero pad, and at least the last axis of data of rank >= 1."""
    rank = case.data.ndim
    nonzero = [axis for axis in range(rank) if case.pads[axis] or case.pads[rank + axis]]
    return rank - nonzero[0] if nonzero else min(rank, 1)


def last_dim_first_pairs(case: Case) -> list[int]:
    """A case's pads as a framework's pad tuple (torch's F.pad): (begin, end) of the last axis,
    then of the one before, over ``padded_dims`` axes; pads of another length than 2 * rank
    as given (the framework is to refuse them)."""
    rank = case.data.ndim
    if case.axes is not None or len(case.pads) != 2 * rank:
        return [int(p) for p in case.pads]
    return [int(p) for axis in reversed(range(rank - padded_dims(case), rank))
            for p in (case.pads[axis], case.pads[rank + axis])]


def _padded_dims_violation(case: Case, spec: Spec) -> tuple[str, str] | None:
    """A framework document's rules on the dimensions its pad tuple covers (``padded_dims``: the
    input ranks each mode implements for each count of padded trailing dimensions; ``pad_bound``:
    each pad of those dimensions against its size; ``output_dims_positive``: the modes whose
    padded dimensions must keep an element)."""
    rank = case.data.ndim
    if spec.rule("pads_layout") != "last_dim_first_pairs" or case.axes is not None or len(case.pads) != 2 * rank:
        return None
    k = padded_dims(case)
    ranks = (spec.rule("padded_dims") or {}).get(case.mode)
    if ranks is not None and rank not in ranks.get(str(k), ()):
        return "padded_dims", f"{case.mode} padding of the last {k} dimensions of a {rank}-D input is not implemented"
    sides = [(case.data.shape[axis], case.pads[axis], case.pads[rank + axis]) for axis in range(rank - k, rank)]
    bound = (spec.rule("pad_bound") or {}).get(case.mode)
    for n, b, e in sides:
        if bound == "pad < dim" and max(b, e) >= n or bound == "pad <= dim" and max(b, e) > n:
            return "pad_bound", f"{case.mode} pads ({b}, {e}) break '{bound}' on a dimension of {n}"
    if case.mode in (spec.rule("output_dims_positive") or ()):
        for n, b, e in sides:
            if n + b + e < 1:
                return "output_dims_positive", f"pads ({b}, {e}) leave a dimension of {n} with {n + b + e} elements"
    return None


def reference_call(case: Case, spec: Spec, interpretations: dict[str, str],
                   consulted: list | None = None) -> np.ndarray:
    """The reference output of ``case`` under ``interpretations`` (ambiguity -> interpretation);
    PadError when they reject it."""
    return pad(case.data, case.pads, case.mode, case.constant_value, case.axes,
               float32_constant=spec.operands.get("constant_value", {}).get("attribute_type") == "float",
               mirror_bound_every_pad=spec.rule("mirror_bound_scope") == MirrorBoundScope.EVERY_PAD,
               consulted=consulted, **interpretations)


def base_interpretations(spec: Spec) -> dict[str, str]:
    """The interpretations a spec's rules fix, then its ambiguities' defaults."""
    fixed = {}
    if spec.rule("crop_beyond_dim") == "clamp_to_zero":
        fixed["crop_beyond_dim"] = "clamp_to_zero"
    if spec.rule("mixed_sign_pads") == "original_coordinates":
        fixed["mixed_sign_pads"] = "original_coordinates"
    if spec.rule("mirror_beyond_dim") not in (None, "unstated"):
        fixed["mirror_beyond_dim"] = "reject"
    return {**fixed, **{a.name: a.default for a in spec.ambiguities.values()}}


def _outcome(case, spec, interpretations, consulted=None):
    try:
        return reference_call(case, spec, interpretations, consulted)
    except PadError as exc:
        return exc


def _same(a, b) -> bool:
    if isinstance(a, PadError) or isinstance(b, PadError):
        return isinstance(a, PadError) and isinstance(b, PadError)
    return bit_equal(a, b)


def readings(case: Case, spec: Spec) -> list[tuple[dict[str, str], np.ndarray | PadError]]:
    """Every branch of the spec's undefined points that ``case`` reaches: (the interpretations
    chosen on that branch, the outcome). Points not on a branch keep the spec's base reading."""
    base, points = base_interpretations(spec), spec.ambiguities
    branches = []

    def explore(chosen):
        consulted = []
        outcome = _outcome(case, spec, {**base, **chosen}, consulted)
        open_point = next((n for n in consulted if n in points and n not in chosen), None)
        if open_point is None:
            branches.append((chosen, outcome))
            return
        for interpretation in points[open_point].interpretations:
            explore({**chosen, open_point: interpretation})
    explore({})
    return branches


def consumer_readings(case: Case, spec: Spec | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """An ambiguous context case's (Pad output, consumer output) under each reading that gives
    both, each pair once: the values ``Case.consumer_control`` runs its consumer alone on."""
    if case.context is None or case.kind != CaseKind.AMBIGUOUS:
        return []
    found: list[tuple[np.ndarray, np.ndarray]] = []
    alone = readings(case.with_(context=None), spec or get_spec(case.spec))
    for label, after in case.interpretations.items():
        # the Pad alone may consult fewer points than with its consumer: its reading is a part of the label's
        chosen = reading_of(label).items()
        given = next((g for reading, g in alone if reading.items() <= chosen), None)
        if isinstance(given, np.ndarray) and after is not None and \
                not any(bit_equal(given, g) and bit_equal(after, a) for g, a in found):
            found.append((given, after))
    return found


def reading_label(reading: dict[str, str]) -> str:
    """An ambiguous case's name for one reading (its ``interpretations`` key): each undefined
    point the case hits with the interpretation chosen, ``point=interpretation`` joined by commas."""
    return ",".join(f"{point}={interpretation}" for point, interpretation in reading.items())


def reading_of(label: str) -> dict[str, str]:
    """The reading a ``reading_label`` names; parts that are not ``point=interpretation`` (a
    label from another's results file) name nothing."""
    parts = [part.partition("=") for part in label.split(",")]
    return {point: interpretation for point, sep, interpretation in parts if sep}


def classify(case: Case, spec: Spec | None = None) -> Case:
    """``case`` with kind, expected, reason, rule and interpretations filled in from its spec."""
    spec = spec or get_spec(case.spec)
    if case.context is not None:  # the Pad's classification, passed through its consumer
        return apply_context(classify(case.with_(context=None), spec).with_(context=case.context))
    cleared: dict = dict(expected=None, reason=None, rule=None, interpretations={}, any_answer_conforms=False)
    broken = rule_violation(case, spec)
    if broken:
        return case.with_(**{**cleared, "kind": CaseKind.MUST_REJECT, "rule": broken[0], "reason": broken[1]})
    branches = readings(case, spec)
    too_large = next((out for _, out in branches if isinstance(out, TooLargeToCheck)), None)
    if too_large is not None:
        return case.with_(**{**cleared, "kind": CaseKind.TOO_LARGE, "reason": str(too_large)})
    base = base_interpretations(spec)
    reached = list(dict.fromkeys(name for chosen, _ in branches for name in chosen))

    def outcome_of(combo: dict):
        return next(out for chosen, out in branches if all(combo[k] == v for k, v in chosen.items()))

    combos = [dict(zip(reached, values))
              for values in itertools.product(*[spec.ambiguities[n].interpretations for n in reached])]
    hit = [n for n in reached
           if any(not _same(outcome_of(c), outcome_of({**c, n: other}))
                  for c in combos for other in spec.ambiguities[n].interpretations if other != c[n])]
    if not hit:
        outcome = branches[0][1]
        if isinstance(outcome, PadError):
            return case.with_(**{**cleared, "kind": CaseKind.MUST_REJECT, "rule": outcome.rule, "reason": str(outcome)})
        return case.with_(**{**cleared, "kind": CaseKind.DEFINED, "expected": outcome})
    outputs = {}
    for values in itertools.product(*[spec.ambiguities[n].interpretations for n in hit]):
        combo = {**{n: base[n] for n in reached}, **dict(zip(hit, values))}
        out = outcome_of(combo)
        outputs[reading_label(dict(zip(hit, values)))] = None if isinstance(out, PadError) else out
    return case.with_(**{**cleared, "kind": CaseKind.AMBIGUOUS, "reason": ",".join(hit), "interpretations": outputs,
                         "any_answer_conforms": any(spec.ambiguities[n].any_answer_conforms for n in hit)})


def _repaired(case: Case, spec: Spec) -> Case | None:
    """``case`` with the one rule it breaks (``case.rule``) undone and nothing else changed, or
    None when padconf has no repair for that rule."""
    rank, rule = case.data.ndim, case.rule
    axes = list(range(rank)) if case.axes is None else list(case.axes)
    if rule == "dtypes":
        dtype = "float" if "float" in spec.dtypes else spec.dtypes[0]
        data = as_array(np.arange(case.data.size) % 7, dtype).reshape(case.data.shape)
        value = None if case.constant_value is None else scalar(1, dtype)
        return case.with_(data=data, constant_value=value)
    if rule == "modes":
        return case.with_(mode="constant")  # every version has it, and it reaches no undefined point
    if rule == "pads_index_types":
        return case.with_(pads_type="int64" if "int64" in spec.pads_index_types else spec.pads_index_types[0])
    if rule == "axes_index_types":
        return case.with_(axes_type=spec.axes_index_types[0])
    if rule in ("constant_value_input", "constant_value"):
        return case.with_(constant_value=None)
    if rule == "negative_pads":
        return case.with_(pads=[abs(p) for p in case.pads])
    if rule == "pads_length":
        need = 2 * len(axes)
        return case.with_(pads=(list(case.pads) + [0] * need)[:need])
    if rule == "axes_input" and len(case.pads) == 2 * len(axes):
        begins, ends = [0] * rank, [0] * rank
        for i, axis in enumerate(axes):
            if -rank <= axis < rank:
                begins[axis % rank], ends[axis % rank] = case.pads[i], case.pads[len(axes) + i]
        return case.with_(axes=None, pads=begins + ends)
    if rule == "axes_range" and len(case.pads) == 2 * len(axes):
        keep = [i for i, a in enumerate(axes) if -rank <= a < rank]
        return case.with_(axes=[axes[i] for i in keep],
                          pads=[case.pads[i] for i in keep] + [case.pads[len(axes) + i] for i in keep])
    if rule == "padded_dims":
        return case.with_(mode="constant")  # constant padding "is implemented for arbitrary dimensions"
    if rule in ("pad_bound", "output_dims_positive"):
        k, shape, pads = padded_dims(case), case.data.shape, list(case.pads)
        for axis in range(rank - k, rank):
            for i in (axis, rank + axis):
                pads[i] = max(pads[i], 0) if rule == "output_dims_positive" \
                    else min(pads[i], shape[axis] - (case.mode == "reflect"))
        return case.with_(pads=pads)
    if rule == "mirror_beyond_dim":
        reach = [n - (case.mode == "reflect") for n in case.data.shape]  # -1: reflect on an empty axis
        if case.axes is None:
            return case.with_(pads=[min(p, reach[i % rank]) for i, p in enumerate(case.pads)])
    return None


def _twin(case: Case, spec: Spec) -> Case | str:
    repaired = _repaired(case, spec)
    if repaired is None:
        return f"padconf has no repair for rule {case.rule!r}"
    twin = classify(repaired.with_(origin=f"twin:{case.id}", tags=[]), spec)
    if twin.kind not in (CaseKind.DEFINED, CaseKind.AMBIGUOUS):
        return f"the case breaks more than one rule: with {case.rule} undone it is still {twin.kind} ({twin.reason})"
    return twin


def breaks_one_rule(case: Case, spec: Spec) -> bool:
    """A must-reject case whose one broken rule, undone, leaves a case the spec does not reject."""
    return isinstance(_twin(case, spec), Case)


def repaired_twin(case: Case, spec: Spec) -> Case | str:
    """The control of a must-reject case: the same case with its one violation undone, which the
    spec accepts (defined, or undefined with an output under every reading); or why there is
    none. A runtime's refusal of the case counts only if it accepts the twin (in the same
    placement): else the refusal may have another cause (no kernel for the dtype, another rule
    broken)."""
    twin = _twin(case, spec)
    if isinstance(twin, Case) and any(out is None for out in twin.interpretations.values()):
        return f"with {case.rule} undone the case reaches {twin.reason}, where a refusal conforms"
    return twin


# Rules on the model's structure (its inputs, their types and lengths, the axes named): the
# document forbids such a model outright, and gives no reading of what it would compute
STRUCTURAL_RULES = frozenset({"pads_length", "axes_range", "pads_index_types", "axes_index_types", "axes_input",
                              "constant_value_input", "constant_value"})


def as_if_allowed(case: Case, spec: Spec) -> list[np.ndarray]:
    """The outputs a must-reject case's inputs get with its broken rule set aside: every reading
    of the spec's undefined points the reference can compute (it checks no type list, no
    version's modes), and where the rule is one the reference itself checks (a reflect pad past
    the axis, edge on an empty axis), its every other interpretation of it. None for a rule on
    the model's structure (STRUCTURAL_RULES). A runtime that accepts the case and answers one of
    these is lenient; any other answer (an empty tensor, memory never written) no reading gives."""
    if case.rule in STRUCTURAL_RULES:
        return []
    found = [out for _, out in readings(case, spec) if isinstance(out, np.ndarray)]
    if case.rule in INTERPRETATIONS:
        base = base_interpretations(spec)
        for option in INTERPRETATIONS[case.rule]:
            if option != "reject":
                outcome = _outcome(case, spec, {**base, case.rule: option})
                if isinstance(outcome, np.ndarray):
                    found.append(outcome)
    return found
