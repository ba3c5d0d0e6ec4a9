"""Cases every draw holds, whatever the seed and profile.

- ``plain_violations(spec)``: for each rule of the version, must-reject cases that break that
  rule alone on a plain base (the version's worked example, or a small float32 case: nonzero
  rank, no zero-size axis, no complex data, no crop), whose repaired twin is a plain defined
  case. A drawn must-reject case often carries rank 0, a zero-size axis, complex data or a crop
  as well, so that a runtime's refusal of it proves nothing (it may refuse for another cause)
  and its acceptance may hide behind another failure; these leave the violation alone.
- ``wide_pads(spec)``: pads beyond 32 bits that cancel to a small output (the reference checks
  them), pads of 2**31 (negative when cut to 32 bits), pads whose running sum overflows int64
  while the total fits (the output is what the formula gives: no document bounds the
  arithmetic of "dim + begin + end"), and pads whose total overflows int64 on an empty tensor
  (no tensor has such a dimension: too large to check, where a crash or a hang still fails).
- ``upstream_triggers(spec)``: the smallest known inputs of the compilers' upstream Pad bugs
  and of the exporters' findings (docs/findings.md), which every run's cases hold
  (padconf.run.drawing; not the generated suite's) and a run's compile budget
  (padconf.run.compile_budget) takes first.
"""
from __future__ import annotations

import numpy as np

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify, repaired_twin
from padconf.core.dtypes import ALL_DTYPES, as_array, scalar
from padconf.spec.loader import Spec
from padconf.spec.reference import MODES

INDEX_TYPES = ("int32", "int64")
PLAIN_DATA = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
PLAIN_PADS = [1, 0, 0, 1]  # within every mode's bounds on a 2x3 tensor (reflect: <= dim - 1)
# a dtype a version lacks, in the order runtimes most often implement them (a runtime with no
# kernel for the type refuses for that reason, which the repaired twin's control tells apart)
WRONG_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "int64", "uint32", "uint64", "double",
                "float16", "bfloat16", "bool")
PLAIN_TAG = "plain-violation"
WIDE_TAG = "wide-pads"
TRIGGER_TAG = "upstream-trigger"
TOTAL_OVERFLOW = 2**62  # twice this on an axis of 3: a dimension of 2**63 + 3, beyond int64


def plain(case: Case) -> bool:
    """Nonzero rank, no zero-size axis, no complex or string data, no negative pad."""
    return (case.data.ndim > 0 and 0 not in case.data.shape and case.data.dtype.kind not in "cOUS"
            and all(p >= 0 for p in case.pads))


def plain_base(spec: Spec) -> Case:
    """The version's first worked example that prints float32 data padded in constant mode with
    no crop and no axes (its constant left to the default), or else PLAIN_DATA: a defined case."""
    for ex in spec.examples:
        pads = ex.get("pads") or list(ex.get("pads_begin", [])) + list(ex.get("pads_end", []))
        if ex.get("dtype") == "float" and "data" in ex and ex.get("mode", "constant") == "constant" \
                and "axes" not in ex and "correction" not in ex and all(p >= 0 for p in pads):
            base = Case(spec=spec.id, data=as_array(ex["data"], "float"), pads=[int(p) for p in pads],
                        origin=f"plain:example:{ex['name']}")
            if plain(base) and classify(base, spec).kind == CaseKind.DEFINED:
                return base
    return Case(spec=spec.id, data=PLAIN_DATA, pads=list(PLAIN_PADS), origin="plain:float32")


def _attempts(spec: Spec, base: Case) -> list[tuple[str, Case]]:
    """(the rule meant to be broken, the case breaking it) for each way to break one rule."""
    rank, data, pads = base.data.ndim, base.data, list(base.pads)
    out = [("modes", base.with_(mode=m)) for m in MODES if m not in spec.modes]
    wrong = [d for d in WRONG_DTYPES if d not in spec.dtypes] \
        or [d for d in ALL_DTYPES if d not in spec.dtypes and not d.startswith("complex") and d != "string"]
    if wrong:
        values = as_array(np.arange(data.size) % 7, wrong[0]).reshape(data.shape)
        out.append(("dtypes", base.with_(data=values)))
    if spec.operands["pads"]["via"] == "input":
        out += [("pads_index_types", base.with_(pads_type=t)) for t in INDEX_TYPES if t not in spec.pads_index_types]
    out += [("pads_length", base.with_(pads=pads + [0])), ("pads_length", base.with_(pads=pads[:-1]))]
    if spec.has_axes:
        out.append(("axes_range", base.with_(axes=[0, rank], pads=[pads[0], 1, pads[rank], 1])))
        out += [("axes_index_types", base.with_(axes=list(range(rank)), axes_type=t))
                for t in INDEX_TYPES if t not in spec.axes_index_types]
    else:
        out.append(("axes_input", base.with_(axes=list(range(rank)))))
    if "constant_value" not in spec.operands:
        out.append(("constant_value_input", base.with_(constant_value=scalar(1, base.dtype))))
    elif "constant_value" in spec.doc["rules"]:  # "A scalar value": two values are not one
        out.append(("constant_value", base.with_(constant_value=as_array([7, 8], base.dtype))))
    if spec.rule("negative_pads") == "forbidden":
        out.append(("negative_pads", base.with_(pads=[-1] + pads[1:])))
    if spec.rule("mirror_beyond_dim") not in (None, "unstated"):
        # a bound the document states: a reflect pad of the dimension, a symmetric one past it, on the
        # first axis, or the last where the document pads only trailing axes in those modes (torch)
        # (a framework's pad_bound, checked first, names the same bound where it covers the mode)
        axis = rank - 1 if spec.rule("padded_dims") else 0
        out += [("pad_bound" if m in spec.rule("pad_bound", {}) else "mirror_beyond_dim",
                 base.with_(mode=m, pads=[*pads[:axis], data.shape[axis] + extra, *pads[axis + 1:]]))
                for m, extra in (("reflect", 0), ("symmetric", 1)) if m in spec.modes]
    return out


def plain_violations(spec: Spec) -> list[Case]:
    """One must-reject case per way to break each of ``spec``'s rules on ``plain_base(spec)``,
    kept where it breaks that rule alone and its repaired twin is a plain defined case."""
    base, out = plain_base(spec), []
    for rule, attempt in _attempts(spec, base):
        case = classify(attempt.with_(origin=f"{base.origin}:{rule}"), spec)
        twin = repaired_twin(case, spec) if case.kind == CaseKind.MUST_REJECT and case.rule == rule else None
        if isinstance(twin, Case) and twin.kind == CaseKind.DEFINED and plain(twin):
            out.append(case)
    return out


def wide_pads(spec: Spec) -> list[Case]:
    """Pads beyond 32 bits that cancel to a small output on [1, 2, 3], and their overflow."""
    if "int64" not in spec.pads_index_types:
        return []
    data, empty = np.array([1.0, 2.0, 3.0], np.float32), np.zeros((0, 3), np.float32)
    inputs = [
        (data, [2**32 + 1, -(2**32)], "constant"),  # cut to 32 bits: begin 1, end 0
        (data, [-(2**32), 2**32 + 1], "constant"),  # cut to 32 bits: begin 0, end 1
        (data, [2**32 + 1, -(2**32)], "edge"),
        (data, [2**31, -(2**31)], "constant"),  # cut to 32 bits: both -2**31
        (data, [2**63 - 1, -(2**63 - 1)], "constant"),  # begin + dim overflows int64, the total is 3
        (empty, [0, TOTAL_OVERFLOW, 0, TOTAL_OVERFLOW], "constant"),  # the total overflows int64
    ]
    return [classify(Case(spec=spec.id, data=d, pads=p, mode=m, origin=f"{WIDE_TAG}"), spec)
            for d, p, m in inputs if m in spec.modes]


def upstream_triggers(spec: Spec) -> list[Case]:
    """The inputs that show the compilers' known Pad bugs, where ``spec`` can express them; each
    differs from every worked example (an equal case would share its id)."""
    inputs: list[tuple[str, np.ndarray, list[int], str, list[int] | None, bool]] = [
        # (what it shows, data, pads, mode, axes, whether the version can express it)
        # iree-org/iree#19935: negative pads fed at run time shift rows
        ("negative-fed", np.arange(10, dtype=np.float32).reshape(2, 5), [0, 1, 0, -2], "constant", None,
         spec.rule("negative_pads") != "forbidden" and spec.operands["pads"]["via"] == "input"),
        # IREE returns an unsigned Pad's output as signed
        ("unsigned", np.array([1, 2, 60000], np.uint16), [1, 0], "constant", None, "uint16" in spec.dtypes),
        # llvm/torch-mlir#3468: axes fed at run time are ignored
        ("axes-fed", np.arange(6, dtype=np.float32).reshape(2, 3), [1, 1], "constant", [1], spec.has_axes),
        # iree-org/iree#24585: iree-compile hangs on wrap pads given as constants (test_wrap_pad in float32)
        ("wrap-hang", np.arange(60, dtype=np.float32).reshape(1, 3, 4, 5), [0, 0, 1, 1, 0, 0, 1, 1], "wrap",
         None, True),
        # apache/tvm#11687: reflect pads as long as the axis read outside the input
        ("reflect-outside", np.arange(1, 7, dtype=np.float32).reshape(3, 2), [0, 2, 0, 0], "reflect", None, True),
        # torch.onnx.export (both exporters) writes F.pad(x, (-3, 2), "reflect") as one ONNX Pad
        # whose meaning ONNX leaves open, which onnxruntime refuses (docs/findings.md)
        ("torch-reflect-mixed-sign", np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4), [0, 0, -3, 0, 0, 2],
         "reflect", None, spec.id.startswith("torch/")),
        # F.pad(x, (-1, 2), "circular"): eager torch crops first, the document pads the input; the
        # TorchScript exporter's graph has the wrong shape, the dynamo one writes an undefined Pad
        ("torch-circular-negative", np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5), [0, 0, -1, 0, 0, 2], "wrap",
         None, spec.id.startswith("torch/")),
        # tf2onnx converts a SYMMETRIC padding beyond the dimension, which TensorFlow refuses, into a
        # graph that answers (zeros where the mirror runs out); a REFLECT one on an empty dimension too
        ("tf2onnx-symmetric-beyond-dim", np.arange(1, 3, dtype=np.float32), [3, 0], "symmetric", None,
         spec.id.startswith("tf/")),
        ("tf2onnx-reflect-empty-dim", np.zeros((0, 3), np.float32), [0, 1, 0, 1], "reflect", None,
         spec.id.startswith("tf/")),
        # onnx/tensorflow-onnx#2337: tf2onnx declares a bfloat16 function's input and output as ONNX float16
        ("tf2onnx-bfloat16", as_array([1, 2, 3], "bfloat16"), [1, 1], "constant", None, spec.id.startswith("tf/")),
    ]
    return [classify(Case(spec=spec.id, data=d, pads=p, mode=m, axes=a, origin=f"{TRIGGER_TAG}:{what}"), spec)
            for what, d, p, m, a, expressible in inputs if expressible and m in spec.modes]


def fixed_cases(spec: Spec) -> list[Case]:
    """The cases every draw of ``spec`` starts with: plain violations, then wide pads."""
    return plain_violations(spec) + wide_pads(spec)
