"""The fixed suite: which cases it holds and their names.

``suite_cases(specs, seed, per_combo)`` gives, the same for the same padconf, spec files and
seed, every case of the suite as a ``SuiteCase``: a classified case, how its values reach the
model (its placement) and its test directory's name. padconf generate writes them
(testdata_write), the gate runs them, the pytest plugin parametrises over them.
"""
from __future__ import annotations

import hashlib
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from padconf.adapters.openvino import native_model
from padconf.adapters.openvino_tensors import OV_TYPES
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.context import Consumer, Producer
from padconf.cases.edge_classes import edge_classes
from padconf.cases.examples import example_inputs
from padconf.cases.onnx_model import build_model, value_from_attribute
from padconf.cases.strategies import PROFILES, draw_cases
from padconf.core.dtypes import as_array, bit_equal, is_integer, scalar
from padconf.core.errors import PadconfError
from padconf.core.vocabulary import Placement
from padconf.execution.children import map_in_children
from padconf.execution.worker_process import isolated
from padconf.spec.loader import Spec, parse_spec_id

DRAW_BUDGET = PROFILES["default"]["max_examples"]  # drawn cases per spec version, as `padconf run` draws
FOCUS_SHARE = {"large": 4}
SMALL = 1024  # elements (input + largest output): beyond its edge classes, the suite keeps small cases
KIND_DIRS = {
    "onnx": {CaseKind.DEFINED: "onnx", CaseKind.MUST_REJECT: "onnx-invalid", CaseKind.AMBIGUOUS: "onnx-ambiguous"},
    "openvino": {CaseKind.DEFINED: "openvino", CaseKind.MUST_REJECT: "openvino-invalid",
                 CaseKind.AMBIGUOUS: "openvino-ambiguous"},
}
# Context cases (Pad with a consumer, a producer of its pads, a static shape: cases.contexts) in
# folders of their own: their model is a graph, not one Pad node, so `run --cases` leaves them out
CONTEXT_DIRS = {CaseKind.DEFINED: "onnx-context", CaseKind.MUST_REJECT: "onnx-context-invalid",
                CaseKind.AMBIGUOUS: "onnx-context-ambiguous"}
ALL_KIND_DIRS = tuple(d for kinds in KIND_DIRS.values() for d in kinds.values()) + tuple(CONTEXT_DIRS.values())
# A framework's document (torch/Pad-2): its cases are framework calls, which become ONNX graphs only
# through an exporter under test, so its folders hold exported graphs (padconf generate --exporter)
FRAMEWORK_DIRS = {"torch": {CaseKind.DEFINED: "torch", CaseKind.MUST_REJECT: "torch-invalid",
                            CaseKind.AMBIGUOUS: "torch-ambiguous"},
                  "tf": {CaseKind.DEFINED: "tf", CaseKind.MUST_REJECT: "tf-invalid",
                         CaseKind.AMBIGUOUS: "tf-ambiguous"}}
# a test directory's name begins with its operator: ONNX's Pad, OpenVINO's, torch's F.pad, TensorFlow's tf.pad
OPS = {"onnx": "pad", "openvino": "ovpad", "torch": "torchpad", "tf": "tfpad"}

# Short words for a defined case's name, in the order they are used (at most three).
_LABELS = [
    ("rank-0", "scalar"), ("large-output", "large"), ("crop-beyond-dim", "cropall"),
    ("crop-to-zero", "crop0"), ("negative-pads", "crop"), ("mixed-sign-pads", "mixed"),
    ("reflect-pad>dim", "beyond"), ("wrap-pad>dim", "beyond"), ("reflect-pad=dim", "eqdim"),
    ("symmetric-pad=dim", "eqdim"), ("nonconstant-on-empty-axis-unpadded", "emptyaxis"),
    ("zero-size-dim", "empty"), ("nan", "nan"), ("negative-zero", "negzero"),
    ("subnormal", "subnormal"), ("inf", "inf"), ("string-empty", "emptystr"),
    ("string-non-ascii", "unicode"), ("string-long", "longstr"), ("axes-duplicated", "dupaxes"),
    ("axes-empty", "noaxes"), ("axes-negative", "negaxes"), ("axes-given", "axes"),
    ("rank-6", "rank6"), ("rank-5", "rank5"),
]


@dataclass
class SuiteCase:
    """One test directory: a classified case, how its values reach the model, and its name."""
    case: Case
    placement: str  # a Placement, or "attributes" (ONNX Pad-1/2: the pads are attributes)
    name: str = ""

    @property
    def domain(self) -> str:
        return parse_spec_id(self.case.spec)[0]

    @property
    def kind_dir(self) -> str:
        if self.case.context:
            return CONTEXT_DIRS[self.case.kind]
        return {**KIND_DIRS, **FRAMEWORK_DIRS}[self.domain][self.case.kind]

    @property
    def path(self) -> str:
        return f"{self.kind_dir}/{self.name}"


# ---------------------------------------------------------------- choosing the cases


def _combo_values(dtype: str, n: int):
    """``n`` small, exactly representable, distinct-looking values of ``dtype``."""
    if dtype == "string":
        return [s for s, _ in zip(["a", "bc", "def", "g", "hi", "jkl"] * n, range(n))]
    if dtype == "bool":
        return [i % 3 == 0 for i in range(n)]
    if dtype in ("int2", "uint2"):
        return [i % 2 for i in range(n)]
    if dtype in ("int4", "uint4"):
        return [i % 8 for i in range(n)]
    if dtype == "float8e8m0":  # powers of two only, no zero
        return [2.0 ** (i % 4) for i in range(n)]
    if dtype == "float4e2m1":
        return [[0.5, 1.0, 1.5, 2.0, 3.0, 4.0][i % 6] for i in range(n)]
    if dtype.startswith("complex"):
        return [complex(i + 1, -i) for i in range(n)]
    if is_integer(dtype):
        return [i + 1 for i in range(n)]
    return [(i + 1) * 0.5 for i in range(n)]


def combo_case(spec: Spec, mode: str, dtype: str) -> Case:
    """A small defined case of ``mode`` and ``dtype``: 2x3 data, pads [1, 1, 1, 2] (within every
    mirror bound, the same under both of Pad-1's paddings layouts), a constant value in constant
    mode where the version takes one. A document whose non-constant modes pad two dimensions of
    3-D data at least (torch's ``padded_dims``) gets the same on 1x2x3 data."""
    value = None
    if mode == "constant" and "constant_value" in spec.operands:
        value = scalar(_combo_values(dtype, 2)[1] if dtype != "bool" else True, dtype)
    data = as_array(_combo_values(dtype, 6), dtype).reshape(2, 3)
    case = classify(Case(spec=spec.id, data=data, pads=[1, 1, 1, 2], mode=mode, constant_value=value,
                         origin="generate:combo"), spec)
    if case.kind == CaseKind.MUST_REJECT and case.rule == "padded_dims":
        case = classify(Case(spec=spec.id, data=data.reshape(1, 2, 3), pads=[0, 1, 1, 0, 1, 2], mode=mode,
                             constant_value=value, origin="generate:combo"), spec)
    if case.kind != CaseKind.DEFINED:
        raise PadconfError(f"{spec.id} {mode} {dtype}: the combination case is {case.kind} ({case.reason})")
    case.tags = edge_classes(case, spec)
    return case


def _size(case: Case) -> int:
    outs = [case.expected] + list(case.interpretations.values())
    return case.data.size + max([o.size for o in outs if o is not None] or [0])


def select(pool: list[Case], per_combo: int) -> list[Case]:
    """From drawn cases: the smallest case of every edge class, then up to ``per_combo`` small
    cases per (mode, dtype, kind), smallest first (ties by content id)."""
    pool = sorted(pool, key=lambda c: (_size(c), c.id))
    chosen: dict[str, Case] = {}
    for tag in sorted({t for c in pool for t in c.tags}):
        if not any(tag in c.tags for c in chosen.values()):
            first = next(c for c in pool if tag in c.tags)
            chosen[first.id] = first
    counts = Counter((c.mode, c.dtype, c.kind) for c in chosen.values())
    for c in pool:
        key = (c.mode, c.dtype, c.kind)
        if c.id not in chosen and counts[key] < per_combo and _size(c) <= SMALL:
            chosen[c.id] = c
            counts[key] += 1
    return list(chosen.values())


def _placement(case: Case, spec: Spec) -> str:
    """Derived from the content: half the cases feed pads / value / axes, half bake them in,
    except that a defined or ambiguous case whose initializer model onnx's own checker refuses
    is fed (int32 axes initializers: "ParseData type mismatch for tensor: axes"; repeated axes:
    "Axis 0 is referred to more than once"), so every model in onnx/ and onnx-ambiguous/ passes
    ``onnx.checker.check_model(full_check=True)``."""
    if spec.domain == "onnx" and spec.operands["pads"]["via"] == "attribute":
        return "attributes"
    if spec.domain in FRAMEWORK_DIRS:  # a framework call: the data is its one input, the pads its arguments
        return "inputs"
    placement = ("inputs", "initializers")[int(hashlib.sha1(case.id.encode()).hexdigest(), 16) % 2]
    if placement == "initializers" and aborts_onnx_checker(case, placement):
        return "inputs"
    if placement == "initializers" and spec.domain == "onnx" and case.kind != CaseKind.MUST_REJECT:
        try:
            onnx.checker.check_model(build_model(case, Placement(placement)), full_check=True)
        except Exception:
            return "inputs"
    return placement


def _attribute_roundtrip(case: Case, spec: Spec) -> Case:
    """Pad-1/2 carry the value in a float attribute: the case the files hold has the value as
    read back from it (so reading the directory gives this very case)."""
    if case.constant_value is None or spec.operands["constant_value"]["via"] != "attribute" \
            or spec.domain in FRAMEWORK_DIRS:  # a framework's value is the call's own Python number
        return case
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(np.float32(float(np.asarray(case.constant_value).astype(np.float64))))
        back = value_from_attribute(value, case.dtype)
    except (TypeError, ValueError, OverflowError):
        return case
    if bit_equal(back, case.constant_value):
        return case
    out = classify(case.with_(constant_value=back), spec)
    out.tags = edge_classes(out, spec)
    return out


def aborts_onnx_checker(case: Case, placement: str) -> bool:
    """Whether onnx 1.23.2's shape inference aborts the process on ``case``'s model (its
    std::clamp assertion, SIGABRT, docs/findings.md): a Slice after a Pad whose pads it knows (not
    fed at run time) and which crops a static dimension past zero. Such a model cannot be checked,
    so the suite leaves it out (the run's rewriters meet it in a worker)."""
    ctx = case.context
    return ctx is not None and ctx.consumer == Consumer.SLICE and ctx.static_shape \
        and "crop-beyond-dim" in case.tags and (placement != "inputs" or ctx.producer != Producer.INPUTS)


def _buildable(entry: SuiteCase) -> bool:
    case = entry.case
    if aborts_onnx_checker(case, entry.placement):
        return False
    if entry.domain in FRAMEWORK_DIRS:  # a call, not a model: whatever the framework's API can be asked
        return case.axes is None and not case.context
    try:
        if entry.domain == "onnx":
            build_model(case, Placement.INPUTS if entry.placement == "attributes" else Placement(entry.placement))
        else:
            if case.axes is not None or case.dtype not in OV_TYPES or case.dtype == "string":
                return False
            native_model(case, Placement(entry.placement), default_pad_value=True)  # e.g. no "wrap" enum
    except Exception:  # whatever the builders refuse cannot be written as a model
        return False
    return True


def _draw(spec: Spec, seed: int) -> list[Case]:
    """strategies.draw_cases, except that the "large" focus (the slowest to draw and classify;
    one large case per version is all the suite keeps) gets a share of FOCUS_SHARE["large"]."""
    return draw_cases(spec, DRAW_BUDGET, seed, shares=FOCUS_SHARE)


def spec_cases(spec: Spec, seed: int = 0, per_combo: int = 1) -> list[SuiteCase]:
    """The cases of one spec version (unnamed): its worked examples, one small defined case per
    (mode, dtype), and a selection of drawn cases; cases no model can express are left out."""
    cases = []
    for ex in spec.examples:  # the documents' worked examples, judged by the reference
        case = classify(example_inputs(spec, ex), spec)
        case.tags = edge_classes(case, spec)
        cases.append(case)
    cases += [combo_case(spec, mode, dtype) for mode in spec.modes for dtype in spec.dtypes]
    pool = [c for c in _draw(spec, seed) if c.kind != CaseKind.TOO_LARGE]  # no folder holds what padconf cannot check
    # only what a model can hold: OpenVINO's IR has no axes, no "wrap", no unequal pads halves
    pool = [c for c in pool if _buildable(SuiteCase(c, _placement(c, spec)))]
    # context cases chosen apart, by their own edge classes only: the one-node selection stays as it was
    cases += select([c for c in pool if not c.context], per_combo) + select([c for c in pool if c.context], 0)
    entries, seen = [], set()
    for case in cases:
        if case.axes is None and case.axes_type != "int64":  # no axes: its type is in no file
            case = case.with_(axes_type="int64")
        case = _attribute_roundtrip(case, spec)
        entry = SuiteCase(case, _placement(case, spec))
        if case.id not in seen and _buildable(entry):
            seen.add(case.id)
            entries.append(entry)
    return entries


def spec_cases_json(request: list) -> list:
    """``spec_cases`` of a spec sent as JSON (``[id, path, document, seed, per_combo]``), its
    entries as ``[case, placement]`` JSON: what an isolated child (padconf.suite.suite_child) answers."""
    spec_id, path, doc, seed, per_combo = request
    return [[e.case.to_json(), e.placement] for e in spec_cases(Spec(spec_id, Path(path), doc), seed, per_combo)]


def suite_cases(specs: list[Spec], seed: int = 0, per_combo: int = 1, jobs: int | None = None,
                frameworks: bool = False) -> list[SuiteCase]:
    """Every case of the suite, named and in directory order. Spec versions are drawn in
    ``jobs`` processes (default: up to 2); each is independent of the others, so the result
    does not depend on ``jobs``. A framework's document (torch/Pad-2) has no ONNX or OpenVINO
    test data of its own: its cases are in the suite only when asked (``frameworks``: a gate of
    an exporter, generate's exported graphs)."""
    specs = [spec for spec in specs if spec.domain in KIND_DIRS or frameworks and spec.domain in FRAMEWORK_DIRS]
    if not specs:
        return []
    jobs = max(1, min(jobs or 2, os.cpu_count() or 1, len(specs)))
    if jobs > 1:
        # isolated children of padconf's own (python -I, JSON both ways), not multiprocessing's
        # spawn pool, whose children import the working directory's modules; not fork either:
        # the caller may hold runtime threads (onnxruntime, OpenVINO)
        requests = [[spec.id, str(spec.path), spec.doc, seed, per_combo] for spec in specs]
        answers = map_in_children(lambda: isolated("padconf.suite.suite_child"), requests, jobs, "drawing the suite")
        per_spec = [[SuiteCase(Case.from_json(case), placement) for case, placement in answer] for answer in answers]
    else:
        per_spec = [spec_cases(spec, seed, per_combo) for spec in specs]
    entries = [e for group in per_spec for e in group]
    _name(entries)
    return sorted(entries, key=lambda e: e.path)


def _label(entry: SuiteCase) -> str:
    case = entry.case
    if case.origin.startswith("example:"):
        return "ex_" + case.origin.split(":", 1)[1].removeprefix("test_")
    if case.context:  # its consumer and producer; the kind is its folder's
        return f"{case.context.consumer}_{case.context.producer}".lower()
    if case.kind == CaseKind.MUST_REJECT:
        return str(case.rule)
    if case.kind == CaseKind.AMBIGUOUS:
        return "_".join(str(case.reason).split(","))
    words = []
    for prefix, word in _LABELS:
        if (any(t == prefix or t.startswith((prefix + "-at-", prefix + "-in-")) for t in case.tags)
                and word not in words):
            words.append(word)
    return "_".join(words[:3]) or "basic"


def _name(entries: list[SuiteCase]) -> None:
    """test_<op><version>_<mode>_<dtype>_<label>_<n>, n counting cases of the same prefix in
    content order."""
    groups = defaultdict(list)
    for e in entries:
        domain, version = parse_spec_id(e.case.spec)
        prefix = re.sub(r"[^A-Za-z0-9_]+", "_", f"test_{OPS[domain]}{version}_{e.case.mode}_{e.case.dtype}_{_label(e)}")
        groups[(e.kind_dir, prefix)].append(e)
    for (_, prefix), group in groups.items():
        for n, e in enumerate(sorted(group, key=lambda e: (e.case.id, e.placement))):
            e.name = f"{prefix}_{n}"
