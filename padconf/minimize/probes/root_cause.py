"""What makes two minimized failures one bug to file (root_cause): one bundle for them all, the
others listed under it as its variants."""
from __future__ import annotations

from padconf.adapters import adapter_class
from padconf.cases.case import CaseKind
from padconf.core.vocabulary import Placement
from padconf.judging.failure import bug_class
from padconf.judging.triage import PAD_BUGS, Triage
from padconf.judging.verdicts import Difference, Verdict
from padconf.minimize.bundle.title import NEGATIVE_SIZE, RANK_0, cause_feature, feature, generic
from padconf.minimize.shrink.loop import Shrunk, signature_of, unwritten_feature

_MODE_RULES = ("modes", "mirror_beyond_dim")  # the rules whose check depends on the mode


def root_cause(shrunk: Shrunk, placement: Placement) -> tuple:
    """What makes two minimized failures one bug to file: the same failure (verdict; error class
    with numbers and C++ template arguments masked; a mismatch's difference but not its kind of
    wrong value, which garbage changes from run to run; the rule a lenient case breaks; dtype
    names; for an answer no reading gives, not which undefined points the version names) and
    triage class, in the same mode, on minimal inputs with the same distinguishing feature
    (bundle_title.feature: a crop beyond the dimension, rank 0, ...), computed the same way
    (folded at compile time, or run): whatever the dtype, spec version, placement or exact shape
    (onnxruntime's refusal of rank-0 data, found once per dtype). A NaN payload or zero sign lost
    is one whatever the mode (OpenVINO's float8 -0 copied as +0 with zero pads). A refusal is
    one whatever the mode, a crash or hang whether the spec defines the output or not. A missing kernel is one
    per dtype. A Pad bug whose minimal input has a telling feature (bundle_title.generic: not
    just its rank) is one with every other Pad bug of that feature, however it shows: OpenVINO's
    rank-0 data is refused with static shapes, and answered with garbage or a crash when fed. So
    is every Pad bug answered at run time with an empty tensor where the same case folded is
    refused (refused_when_folded): one check the run-time path skips (OpenVINO's
    edge on an empty axis, reflect past its bound), but for pads that remove more than an axis
    holds, whose negative size is a bug of its own. So is every Pad bug on sub-byte data that
    its byte-wide copy does not show (packing), computed the same way (folded, or run):
    OpenVINO's CPU kernel packs uint2 and float4e2m1 wrong, whatever the pads. A failure that is
    not Pad-specific (its control fails too) is one with every other whose control fails alike
    (the same operand, verdict, kind of difference and error class, folded or not, and dtype but
    for a 64-bit type computed in 32 bits; for a check the control misses too, the rule, not the
    dtype): the bug is on the path Pad shares with the control."""
    case, row = shrunk.final.case, shrunk.final.row
    verdict = row["verdict"]
    kind: str | None = row["kind"]
    error_class, reason = bug_class(row, adapter_class(row["runtime"]).type_names)
    mode: str | None = case.mode
    what: str | None = cause_feature(feature(case))
    if verdict in (Verdict.CRASH, Verdict.TIMEOUT):  # whether the spec defines the output or not
        kind, reason = None, None
    if verdict == Verdict.WRONGLY_REJECTED:  # one check, whichever mode reaches it
        mode = None
    if kind == CaseKind.MUST_REJECT:  # "dtype int8 is not in this version's type list": the rule, not the dtype
        reason = case.rule
        if verdict == Verdict.WRONGLY_ACCEPTED:  # a check missing: its error class is that reason, and the
            error_class, what = "", None  # data, or the mode but where the rule is about the mode, no part of it
            mode = mode if case.rule in _MODE_RULES else None
    found = signature_of(shrunk.final)[3]
    control = shrunk.final.control or {}
    if found == Triage.NOT_PAD_SPECIFIC and control.get("fails_too"):  # the path Pad shares with its control:
        # one bug however the Pad case shows it (OpenVINO's frontend folds an empty constant to a scalar)
        # a check missing there too is about its rule, whatever the dtype (onnx's evaluator checks
        # no type list, Identity's neither); narrowed to 32 bits is one bug whatever the 64-bit type
        unchecked = control["verdict"] == Verdict.WRONGLY_ACCEPTED
        narrowed = control.get("difference") == Difference.NARROWED
        return ("not Pad-specific", control.get("operand"), control["verdict"], control.get("difference"),
                bug_class({**control, "kind": None}, adapter_class(row["runtime"]).type_names),
                placement == Placement.FOLDED, None if narrowed or unchecked else case.dtype,
                case.rule if unchecked else None)
    if found in PAD_BUGS and shrunk.refused_when_folded and what != NEGATIVE_SIZE:  # a check the run-time
        return "a Pad bug", "an empty tensor where folded is refused"  # path skips, whatever it checks
    if found in PAD_BUGS and shrunk.packing:  # right on the same values a byte wide: its packing, whatever
        return "a Pad bug", "sub-byte data", placement == Placement.FOLDED  # the sub-byte type and input
    if found in PAD_BUGS and what is not None and not generic(what):  # one bug, whatever it shows as
        # rank 0 says it all but for a refusal, whose error text tells another cause ("int32 axes")
        return "a Pad bug", RANK_0 if case.data.ndim == 0 and verdict != Verdict.WRONGLY_REJECTED else what
    if row.get("difference") == Difference.NAN_PAYLOAD_OR_ZERO_SIGN:  # the copy of a value, in any mode
        mode = None
    return (verdict, error_class, row.get("difference"), kind, reason, found, mode,
            what, placement == Placement.FOLDED, case.dtype if verdict == Verdict.NOT_IMPLEMENTED else None)




def mechanism_key(shrunk: Shrunk, placement: Placement) -> tuple:
    """What two bundles of one runtime share where they are one mechanism whatever their labels
    say (minimize merges them after labelling, across labels, where the root's own experiment
    rerun on the other shows alike): root_cause without what a label concludes (the triage
    class, its fact, the control's verdict): the verdict, the error class, a mismatch's
    difference, the mode (a refusal's whichever mode), the distinguishing feature, folded or not,
    and for a feature that says little of the cause (bundle_title.generic) the dtype too; for a
    NaN payload or zero sign lost, neither mode nor dtype. Where every mode fails alike (the
    bundle's removal experiment), no mode, and the feature is the case's in constant mode: IREE
    ignoring axes fed at run time shrank to "a pad of the dimension minus one" in reflect mode
    and to "an axes input" in constant mode. Memory corrupted (a crash, or an output of memory
    never written: Shrunk.memory_unsafe) is one symptom in any mode, whatever its signal or values:
    the feature the case has in constant mode, folded or not, and a generic feature's dtype. A Pad
    answered by its input unchanged (Attempt.pads_ignored) is one of any feature or difference, per
    placement and whether the case has axes, and in any mode unless another mode was answered
    right: IREE ignoring a dynamic-length axes input shrank to a wrong shape for a crop to nothing
    in one bundle and to wrong values in another, where no other mode's case was alike (audit V)."""
    case, row = shrunk.final.case, shrunk.final.row
    if shrunk.final.pads_ignored:
        return ("pads ignored", placement, case.axes is not None,
                case.mode if (shrunk.features or {}).get("modes_right") else None)
    verdict = row["verdict"]
    # every other mode fails alike (experiments.features_needed): no mode's, nor a mirror bound's
    any_mode = (shrunk.features or {}).get("modes") == []
    what = cause_feature(feature(case.with_(mode="constant") if any_mode else case))
    copied = row.get("difference") == Difference.NAN_PAYLOAD_OR_ZERO_SIGN  # a value's bits lost, any mode, any float
    if shrunk.corrupts_memory:  # one corruption: a crash here, garbage there
        what = unwritten_feature(case)  # in any mode: no mode's feature
        return ("memory", what, placement == Placement.FOLDED, case.dtype if generic(what) else None)
    error_class, _ = bug_class(row, adapter_class(row["runtime"]).type_names)
    return (verdict, error_class, row.get("difference"),
            None if verdict == Verdict.WRONGLY_REJECTED or copied or any_mode else case.mode,
            what, placement == Placement.FOLDED, case.dtype if generic(what) and not copied else None,
            None if verdict == Verdict.TIMEOUT else row["kind"])
