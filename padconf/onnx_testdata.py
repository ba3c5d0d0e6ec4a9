"""padconf's conformance suite as ONNX backend test data (and OpenVINO IR), and back.

``generate(out, specs, seed, per_combo)`` writes, byte for byte the same for the same padconf,
spec files and seed::

    out/onnx/test_<name>/model.onnx, test_data_set_0/input_<i>.pb, output_0.pb      defined
    out/onnx-invalid/test_<name>/   model.onnx, test_data_set_0/input_<i>.pb, expect.json
    out/onnx-ambiguous/test_<name>/ model.onnx, test_data_set_0/input_<i>.pb,
                                    output_<interpretation>.pb (one per interpretation that gives
                                    an output), expect.json
    out/openvino[-invalid|-ambiguous]/test_<name>/ model.xml + model.bin (OpenVINO IR),
                                    input_<i>.npy, output_0.npy (defined), expect.json
    out/MANIFEST.yaml, out/README.md

``onnx/`` is exactly the layout of onnx's node tests, so ``onnx.backend.test.loader.
load_model_tests(data_dir=out, kind="onnx")`` loads it. Expected outputs come from padconf's
reference through ``classify``, never from a runtime.

``read_cases(path, specs)`` reads any directory in that layout (padconf's or onnx's own node
tests) back into classified Cases, for ``padconf run --cases``.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import json
import math
import multiprocessing
import os
import re
import shutil
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import yaml
from google.protobuf.message import DecodeError
from onnx import external_data_helper, helper, numpy_helper

from .cases import AMBIGUOUS, DEFINED, MUST_REJECT, Case
from .classify import classify
from .dtypes import MAX_ARRAY_BYTES, as_array, bit_equal, dtype_name, is_integer, numpy_dtype, scalar
from .errors import CaseError, PadconfError
from .examples import example_inputs
from .onnx_model import build_model, fed_input_names, feeds
from .specs import Spec, parse_spec_id
from .strategies import draw_cases, edge_classes
from .untrusted import inside, read_bytes

PRODUCER = ("padconf", "testdata-1")  # fixed: no padconf or library version in the files
DRAW_BUDGET = 250  # drawn cases per spec version, as `padconf run`'s default profile
FOCUS_SHARE = {"large": 4}
SMALL = 1024  # elements (input + largest output): beyond its edge classes, the suite keeps small cases
KIND_DIRS = {
    "onnx": {DEFINED: "onnx", MUST_REJECT: "onnx-invalid", AMBIGUOUS: "onnx-ambiguous"},
    "openvino": {DEFINED: "openvino", MUST_REJECT: "openvino-invalid", AMBIGUOUS: "openvino-ambiguous"},
}
ALL_KIND_DIRS = tuple(d for kinds in KIND_DIRS.values() for d in kinds.values())
OV_DEFAULT_PAD_VALUE = "pad_value_default"  # the friendly name of the zero Constant for an omitted pad_value

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
class Entry:
    """One test directory: a classified case, how its values reach the model, and its name."""
    case: Case
    placement: str  # "inputs" | "initializers" | "attributes" (ONNX Pad-1/2)
    name: str = ""

    @property
    def domain(self) -> str:
        return parse_spec_id(self.case.spec)[0]

    @property
    def kind_dir(self) -> str:
        return KIND_DIRS[self.domain][self.case.kind]

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
    mode where the version takes one."""
    data = as_array(_combo_values(dtype, 6), dtype).reshape(2, 3)
    value = None
    if mode == "constant" and "constant_value" in spec.operands:
        value = scalar(_combo_values(dtype, 2)[1] if dtype != "bool" else True, dtype)
    case = classify(Case(spec=spec.id, data=data, pads=[1, 1, 1, 2], mode=mode, constant_value=value,
                         origin="generate:combo"), spec)
    if case.kind != DEFINED:
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
    placement = ("inputs", "initializers")[int(hashlib.sha1(case.id.encode()).hexdigest(), 16) % 2]
    if placement == "initializers" and spec.domain == "onnx" and case.kind != MUST_REJECT:
        try:
            onnx.checker.check_model(build_model(case, placement), full_check=True)
        except Exception:
            return "inputs"
    return placement


def _attribute_roundtrip(case: Case, spec: Spec) -> Case:
    """Pad-1/2 carry the value in a float attribute: the case the files hold has the value as
    read back from it (so reading the directory gives this very case)."""
    if case.constant_value is None or spec.operands["constant_value"]["via"] != "attribute":
        return case
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(np.float32(float(np.asarray(case.constant_value).astype(np.float64))))
        back = _value_from_attribute(value, case.dtype)
    except (TypeError, ValueError, OverflowError):
        return case
    if bit_equal(back, case.constant_value):
        return case
    out = classify(case.with_(constant_value=back), spec)
    out.tags = edge_classes(out, spec)
    return out


def _buildable(entry: Entry) -> bool:
    case = entry.case
    try:
        if entry.domain == "onnx":
            build_model(case, "inputs" if entry.placement == "attributes" else entry.placement)
        else:
            from .adapters.openvino import native_model
            from .adapters.openvino_tensors import OV_TYPES
            if case.axes is not None or case.dtype not in OV_TYPES or case.dtype == "string":
                return False
            native_model(case, entry.placement, default_pad_value=True)  # e.g. no "wrap" enum
    except Exception:  # whatever the builders refuse cannot be written as a model
        return False
    return True


def _draw(spec: Spec, seed: int) -> list[Case]:
    """strategies.draw_cases, except that the "large" focus (the slowest to draw and classify;
    one large case per version is all the suite keeps) gets a share of FOCUS_SHARE["large"]."""
    return draw_cases(spec, DRAW_BUDGET, seed, shares=FOCUS_SHARE)


def spec_entries(spec: Spec, seed: int = 0, per_combo: int = 1) -> list[Entry]:
    """The cases of one spec version (unnamed): its worked examples, one small defined case per
    (mode, dtype), and a selection of drawn cases; cases no model can express are left out."""
    cases = []
    for ex in spec.examples:  # the documents' worked examples, judged by the reference
        case = classify(example_inputs(spec, ex), spec)
        case.tags = edge_classes(case, spec)
        cases.append(case)
    cases += [combo_case(spec, mode, dtype) for mode in spec.modes for dtype in spec.dtypes]
    pool = _draw(spec, seed)
    # only what a model can hold: OpenVINO's IR has no axes, no "wrap", no unequal pads halves
    cases += select([c for c in pool if _buildable(Entry(c, _placement(c, spec)))], per_combo)
    entries, seen = [], set()
    for case in cases:
        if case.axes is None and case.axes_type != "int64":  # no axes: its type is in no file
            case = case.with_(axes_type="int64")
        case = _attribute_roundtrip(case, spec)
        entry = Entry(case, _placement(case, spec))
        if case.id not in seen and _buildable(entry):
            seen.add(case.id)
            entries.append(entry)
    return entries


def _spec_entries_job(args) -> list[Entry]:
    return spec_entries(*args)


def suite_entries(specs: list[Spec], seed: int = 0, per_combo: int = 1, jobs: int | None = None) -> list[Entry]:
    """Every case of the suite, named and in directory order. Spec versions are drawn in
    ``jobs`` processes (default: up to 2); each is independent of the others, so the result
    does not depend on ``jobs``."""
    jobs = min(jobs or 2, os.cpu_count() or 1, len(specs))
    args = [(spec, seed, per_combo) for spec in specs]
    if jobs > 1:
        # spawn, not fork: the caller may hold runtime threads (onnxruntime, OpenVINO)
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            per_spec = list(pool.map(_spec_entries_job, args))
    else:
        per_spec = [_spec_entries_job(a) for a in args]
    entries = [e for group in per_spec for e in group]
    _name(entries)
    return sorted(entries, key=lambda e: e.path)


def _label(entry: Entry) -> str:
    case = entry.case
    if case.origin.startswith("example:"):
        return "ex_" + case.origin.split(":", 1)[1].removeprefix("test_")
    if case.kind == MUST_REJECT:
        return str(case.rule)
    if case.kind == AMBIGUOUS:
        return "_".join(str(case.reason).split(","))
    words = []
    for prefix, word in _LABELS:
        if (any(t == prefix or t.startswith((prefix + "-at-", prefix + "-in-")) for t in case.tags)
                and word not in words):
            words.append(word)
    return "_".join(words[:3]) or "basic"


def _name(entries: list[Entry]) -> None:
    """test_<op><version>_<mode>_<dtype>_<label>_<n>, n counting cases of the same prefix in
    content order."""
    groups = defaultdict(list)
    for e in entries:
        domain, version = parse_spec_id(e.case.spec)
        op = "pad" if domain == "onnx" else "ovpad"
        prefix = re.sub(r"[^A-Za-z0-9_]+", "_", f"test_{op}{version}_{e.case.mode}_{e.case.dtype}_{_label(e)}")
        groups[(e.kind_dir, prefix)].append(e)
    for (_, prefix), group in groups.items():
        for n, e in enumerate(sorted(group, key=lambda e: (e.case.id, e.placement))):
            e.name = f"{prefix}_{n}"


# ---------------------------------------------------------------- rules and their texts


def rule_text(spec: Spec, rule: str | None) -> dict:
    """Where ``rule`` (a must-reject case's ``Case.rule``) stands in the spec file, and its
    quoted text."""
    rules = spec.doc.get("rules", {})
    if rule in rules:
        return {"spec_key": f"rules.{rule}", "text": rules[rule]["text"]}
    if rule in spec.ambiguities:
        return {"spec_key": f"ambiguities.{rule}", "text": spec.ambiguities[rule].text}
    sig = spec.operands
    listed = {
        "dtypes": ("dtypes", "T in (" + ", ".join(spec.dtypes) + ")"),
        "modes": ("modes", "mode in (" + ", ".join(spec.modes) + ")"),
        "pads_index_types": ("operands.pads.index_types", "pads: " + ", ".join(spec.pads_index_types)),
        "axes_index_types": ("operands.axes.index_types", "axes: " + ", ".join(spec.axes_index_types)),
        "axes_input": ("operands",
                       "inputs: " + ", ".join(n for k in sig for n in sig[k]["names"] if sig[k]["via"] == "input")
                       + "; attributes: "
                       + ", ".join(n for k in sig for n in sig[k]["names"] if sig[k]["via"] == "attribute")),
    }
    if rule in listed:
        key, text = listed[rule]
        return {"spec_key": key, "text": text,
                "note": "the spec file's own list (the document gives it as a type or attribute constraint)"}
    return {"spec_key": None, "text": None, "note": "a refusal of padconf's reference that no single rule names"}


def _ambiguity_doc(case: Case, spec: Spec) -> dict:
    names = str(case.reason).split(",")
    return {name: {"text": spec.ambiguities[name].text, "interpretations": list(spec.ambiguities[name].interpretations),
                   "default": spec.ambiguities[name].default} for name in names}


# ---------------------------------------------------------------- writing


def _json(doc) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _tensor_bytes(arr: np.ndarray, name: str) -> bytes:
    return numpy_helper.from_array(np.asarray(arr), name).SerializeToString()


def _interp_file(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_=,.+-]", "_", key)


def _expect_doc(entry: Entry, spec: Spec, outputs: dict[str, str]) -> dict:
    case = entry.case
    doc: dict[str, Any] = {"spec": case.spec, "mode": case.mode, "dtype": case.dtype, "kind": case.kind,
           "placement": entry.placement, "case_id": case.id}
    if case.kind == MUST_REJECT:
        doc.update(expect="reject", reason=case.reason, rule=case.rule, spec_text=rule_text(spec, case.rule))
    else:
        doc.update(expect="one of the interpretations", ambiguity=case.reason,
                   ambiguities=_ambiguity_doc(case, spec),
                   interpretations={key: outputs.get(key) for key in case.interpretations})
    return doc


def write_onnx(entry: Entry, spec: Spec, root: Path) -> None:
    case, where = entry.case, root / entry.path
    placement = "inputs" if entry.placement == "attributes" else entry.placement
    model = build_model(case, placement)
    model.graph.name = entry.name
    model.producer_name, model.producer_version = PRODUCER
    data_set = where / "test_data_set_0"
    data_set.mkdir(parents=True)
    (where / "model.onnx").write_bytes(model.SerializeToString())
    for i, (name, arr) in enumerate(feeds(case, placement).items()):
        (data_set / f"input_{i}.pb").write_bytes(_tensor_bytes(arr, name))
    if case.kind == DEFINED:
        assert case.expected is not None  # a defined case has its output
        (data_set / "output_0.pb").write_bytes(_tensor_bytes(case.expected, "output"))
        return
    outputs = {}
    for key, out in sorted(case.interpretations.items()):
        if out is not None:
            outputs[key] = f"test_data_set_0/output_{_interp_file(key)}.pb"
            (where / outputs[key]).write_bytes(_tensor_bytes(out, "output"))
    (where / "expect.json").write_bytes(_json(_expect_doc(entry, spec, outputs)))


def _npy_bytes(arr: np.ndarray) -> bytes:
    import io
    arr = np.asarray(arr)
    # user-defined: ml_dtypes' kinds (bfloat16, float8, int4 ...): numpy cannot load them; store the bits
    if arr.dtype.isbuiltin == 2:
        arr = arr.view({1: np.uint8, 2: np.uint16}[arr.dtype.itemsize])
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def write_openvino(entry: Entry, spec: Spec, root: Path) -> None:
    import openvino as ov

    from .adapters.openvino import native_model, split_pads
    case, where = entry.case, root / entry.path
    where.mkdir(parents=True)
    model = native_model(case, entry.placement, default_pad_value=True)
    ov.save_model(model, str(where / "model.xml"), compress_to_fp16=False)
    # The one line that names the OpenVINO build: drop it, so other versions write the same bytes.
    xml = (where / "model.xml").read_text(encoding="utf-8")
    (where / "model.xml").write_text(re.sub(r'\n\s*<info name="OpenVINO Runtime" value="[^"]*" />', "", xml),
                                     encoding="utf-8")
    inputs = {"data": case.data}
    if entry.placement == "inputs":
        inputs.update(split_pads(case))
    for i, arr in enumerate(inputs.values()):
        (where / f"input_{i}.npy").write_bytes(_npy_bytes(arr))
    if case.kind == DEFINED:
        assert case.expected is not None  # a defined case has its output
        (where / "output_0.npy").write_bytes(_npy_bytes(case.expected))
        return
    outputs = {}
    for key, out in sorted(case.interpretations.items()):
        if out is not None:
            outputs[key] = f"output_{_interp_file(key)}.npy"
            (where / outputs[key]).write_bytes(_npy_bytes(out))
    (where / "expect.json").write_bytes(_json(_expect_doc(entry, spec, outputs)))


def manifest(entries: list[Entry]) -> list[dict]:
    rows = []
    for e in entries:
        c = e.case
        row: dict[str, Any] = {"dir": e.path, "spec": c.spec, "mode": c.mode, "dtype": c.dtype, "kind": c.kind,
               "placement": e.placement, "tags": list(c.tags), "origin": c.origin, "case_id": c.id}
        if c.kind == MUST_REJECT:
            row.update(rule=c.rule, reason=c.reason)
        elif c.kind == AMBIGUOUS:
            row["ambiguity"] = c.reason
        rows.append(row)
    return rows


def coverage(entries: list[Entry], specs: list[Spec]) -> dict[str, dict[str, tuple[int, int]]]:
    """spec id -> mode -> (dtypes with a defined case, dtypes allowed)."""
    have = {(e.case.spec, e.case.mode, e.case.dtype) for e in entries if e.case.kind == DEFINED}
    return {s.id: {m: (sum((s.id, m, d) in have for d in s.dtypes), len(s.dtypes)) for m in s.modes} for s in specs}


GENERATED_NAMES = ALL_KIND_DIRS + ("MANIFEST.yaml", "README.md")


def generate(out: Path | str, specs: list[Spec], seed: int = 0, per_combo: int = 1,
             jobs: int | None = None) -> list[Entry]:
    """Write the suite as the folder ``out``, which must be empty, absent or a previous output
    (it holds nothing else). The suite is written beside it, in a hidden folder, then swapped
    in by one rename: an interrupted generate leaves the previous output whole."""
    if not specs:
        raise PadconfError("no spec selected: nothing to generate")
    if per_combo < 0:
        raise PadconfError(f"--per-combo must be >= 0, not {per_combo}")
    out = Path(out).absolute()
    if out.exists() and not out.is_dir():
        raise PadconfError(f"--out {out}: not a folder")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in GENERATED_NAMES
                     and not p.name.startswith(".padconf-generate-")) if out.is_dir() else []
    if foreign:  # the swap replaces the whole folder
        raise PadconfError(f"--out {out}: holds {foreign[0]!r}, which padconf generate did not write: "
                           "name an empty folder or a previous output")
    entries = suite_entries(specs, seed, per_combo, jobs)
    by_id = {s.id: s for s in specs}
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.padconf-generate-*"):  # an interrupted generate's
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.padconf-generate-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # mkdtemp's 0700 would become the output's
    try:
        for e in entries:
            (write_onnx if e.domain == "onnx" else write_openvino)(e, by_id[e.case.spec], staging)
        (staging / "MANIFEST.yaml").write_text(
            yaml.safe_dump({"seed": seed, "per_combo": per_combo, "specs": [s.id for s in specs],
                            "cases": manifest(entries)}, sort_keys=True, allow_unicode=True, width=120),
            encoding="utf-8")
        (staging / "README.md").write_text(readme(entries, specs, seed, per_combo), encoding="utf-8")
        if (staging / "openvino").is_dir():
            (staging / "openvino" / "run_openvino.py").write_text(OPENVINO_RUNNER, encoding="utf-8")
        if out.exists():
            _exchange(staging, out)  # staging now holds the previous output, removed below
        else:
            staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return entries


def _exchange(a: Path, b: Path) -> None:
    """Swap the folders ``a`` and ``b`` in one step (Linux's renameat2 RENAME_EXCHANGE); where
    the file system cannot, ``b`` is moved aside to ``a``'s name and ``a`` put in its place."""
    libc = ctypes.CDLL(None, use_errno=True)
    rename_exchange, at_fdcwd = 2, -100
    if libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return
    errno = ctypes.get_errno()
    if errno not in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: no exchange here
        raise OSError(errno, os.strerror(errno), str(b))
    aside = a.with_name(a.name + ".old")
    b.rename(aside)
    a.rename(b)
    aside.rename(a)


# ---------------------------------------------------------------- README


def readme(entries: list[Entry], specs: list[Spec], seed: int, per_combo: int) -> str:
    cov = coverage(entries, specs)
    kinds = Counter((e.domain, e.case.kind) for e in entries)
    lines = ["# generated/: padconf's Pad conformance suite as test data", "",
             f"Written by `padconf generate --seed {seed} --per-combo {per_combo}`"
             + (f" for {', '.join(s.id for s in specs)}" if len(specs) < 12 else "")
             + "; do not edit: regenerate. The same padconf, spec files and seed write the same bytes "
             "(`tests/test_generate.py` fails when this directory is stale).", "",
             "Every expected output comes from padconf's reference (`padconf/reference.py`, through "
             "`padconf/classify.py`), judged against the spec files in `padconf/specs/`; none comes from a runtime.",
             "",
             "| directory | what | cases |", "|---|---|---:|",
             "| `onnx/` | defined cases: `model.onnx`, `test_data_set_0/input_<i>.pb`, `output_0.pb` "
             f"(onnx's node-test layout) | {kinds['onnx', DEFINED]} |",
             "| `onnx-invalid/` | must-reject cases: model, inputs, `expect.json` "
             f"(the rule broken, quoting the spec) | {kinds['onnx', MUST_REJECT]} |",
             "| `onnx-ambiguous/` | ambiguous cases: model, inputs, `output_<interpretation>.pb` per interpretation, "
             f"`expect.json` | {kinds['onnx', AMBIGUOUS]} |",
             "| `openvino/` | OpenVINO Pad-1 / Pad-12 defined cases: IR `model.xml` + `model.bin`, "
             f"`input_<i>.npy`, `output_0.npy` | {kinds['openvino', DEFINED]} |",
             f"| `openvino-invalid/` | OpenVINO must-reject cases, `expect.json` | {kinds['openvino', MUST_REJECT]} |",
             "| `openvino-ambiguous/` | OpenVINO ambiguous cases, `output_<interpretation>.npy`, "
             f"`expect.json` | {kinds['openvino', AMBIGUOUS]} |",
             "", "An ambiguous case's `expect.json` maps each interpretation (`ambiguity=interpretation`, several "
             "joined by commas when the case hits more than one undefined point) to its output file, or to `null` "
             "where that interpretation rejects the case; a runtime conforms if it matches any of them.",
             "", "`MANIFEST.yaml` lists every case: directory, spec id, mode, dtype, kind, placement of "
             "pads / constant value / axes (`inputs`: fed at run time; `initializers`: baked into the "
             "model; `attributes`: Pad-1/2), edge-class tags, and the rule or ambiguity.", "",
             "Names: `test_<op><version>_<mode>_<dtype>_<what>_<n>`, `op` `pad` (ONNX) or `ovpad` "
             "(OpenVINO); `what` is the worked example (`ex_...`), the rule broken, the ambiguity hit, or "
             "the edge classes (`crop` negative pads, `mixed` mixed-sign pads, `beyond` mirror/wrap pads "
             "beyond the dimension, `empty` a zero-size dim, `scalar` rank 0, `nan`, `negzero`, "
             "`subnormal`, `emptystr`, `unicode`, `longstr`, `axes` ...); `basic` is the small case that "
             "covers its (version, mode, dtype) combination.", ""]
    for domain, title in (("onnx", "ONNX"), ("openvino", "OpenVINO")):
        rows = [s for s in specs if s.domain == domain]
        if not rows:
            continue
        modes = sorted({m for s in rows for m in s.modes},
                       key=["constant", "reflect", "edge", "wrap", "symmetric"].index)
        lines += [f"## Coverage: {title} (dtypes with a defined case / dtypes allowed)", "",
                  "| version | " + " | ".join(modes) + " | total |", "|---|" + "---:|" * (len(modes) + 1)]
        got = allowed = 0
        for s in rows:
            cells = []
            for m in modes:
                if m in cov[s.id]:
                    g, a = cov[s.id][m]
                    got, allowed = got + g, allowed + a
                    cells.append(f"{g}/{a}")
                else:
                    cells.append("-")
            total = [cov[s.id][m] for m in cov[s.id]]
            lines.append(f"| {s.id} | " + " | ".join(cells)
                         + f" | {sum(g for g, _ in total)}/{sum(a for _, a in total)} |")
        lines += ["", f"**{got}/{allowed} {title}** (version x mode x dtype) combinations have a defined case.", ""]
    lines += ["## Placements (defined cases per version)", "",
              "How pads / constant value / axes reach the model: `inputs` (graph inputs fed from "
              "`input_<i>.pb`), `initializers` (baked in), `attributes` (Pad-1/2). A case whose "
              "initializer model onnx's own checker refuses is fed instead: int32 `axes` initializers "
              "(onnx's shape inference: \"ParseData type mismatch for tensor: axes\") and repeated axes "
              "(\"Axis 0 is referred to more than once\"); `padconf run` still tries both placements.", "",
              "| version | placement | cases | with constant value | with axes |", "|---|---|---:|---:|---:|"]
    per_placement: dict[tuple, Counter] = defaultdict(Counter)
    for e in entries:
        if e.case.kind == DEFINED:
            counts = per_placement[e.case.spec, e.placement]
            counts["cases"] += 1
            counts["value"] += e.case.constant_value is not None
            counts["axes"] += e.case.axes is not None
    for s in specs:
        for placement in ("inputs", "initializers", "attributes"):
            c = per_placement.get((s.id, placement))
            if c:
                lines.append(f"| {s.id} | {placement} | {c['cases']} | {c['value']} | {c['axes']} |")
    lines.append("")
    tag_counts: dict[str, Counter] = defaultdict(Counter)
    for e in entries:
        for t in e.case.tags:
            tag_counts[t][e.case.spec] += 1
    lines += ["## Edge classes (cases per version)", "",
              "| edge class | "
              + " | ".join(s.id.replace("onnx/", "").replace("openvino/", "ov/") for s in specs) + " |",
              "|---|" + "---:|" * len(specs)]
    for tag in sorted(tag_counts):
        lines.append(f"| {tag} | " + " | ".join(str(tag_counts[tag][s.id] or "") for s in specs) + " |")
    lines += ["", RUNNING]
    return "\n".join(lines) + "\n"


RUNNING = ("""## Running it

**onnx's backend test runner** (`onnx.backend.test.runner.Runner`), unchanged, with any backend
(here onnxruntime's). The runner's constructor collects onnx's own tests; give it this suite as
its node tests instead:

```python
import unittest
from unittest import mock
import onnx.backend.test.runner as onnx_runner
from onnx.backend.test.loader import load_model_tests
import onnxruntime.backend as backend

suite = load_model_tests(data_dir="generated", kind="onnx")
with mock.patch.object(onnx_runner, "load_model_tests", lambda kind=None, **_: suite if kind == "node" else []):
    runner = onnx_runner.Runner(backend)
unittest.TextTestRunner(verbosity=1).run(runner.test_suite)
```

(`python -m padconf.cli run --cases generated/onnx --runtime onnxruntime` runs the same cases
through padconf, with its verdicts: bit-exact floats, where onnx's runner allows rtol 1e-3.)

**onnxruntime's `onnx_test_runner`** reads the same layout: `onnx_test_runner -e cpu generated/onnx`.
The binary is not in the `onnxruntime` pip wheel (it has no `onnx_test_runner`): it is the C++
program in onnxruntime's source tree (`onnxruntime/test/onnx/`, usage in its `README.txt`),
built with onnxruntime from source (`./build.sh --config Release` leaves it in
`build/Linux/Release/`). Point it at `generated/onnx` only: `onnx-invalid/` and
`onnx-ambiguous/` have no single `output_0.pb` on purpose (and onnx's own checker refuses many
models of `onnx-invalid/`: they break the spec).

**OpenVINO** (nothing but openvino and numpy): `python generated/openvino/run_openvino.py
generated/openvino` reads each `model.xml`, feeds `input_<i>.npy` in Parameter order and
compares the output with `output_0.npy` bit for bit (NaN equal to NaN). Tensors of the kinds
numpy lacks (bfloat16, the float8 kinds, int4 ...) are stored as their bit patterns (uint16 or
uint8); the Parameter's element type in `model.xml` says which. """
           """An omitted pad_value appears in the IR as the zero Constant named
`pad_value_default` (OpenVINO's own default).

**padconf** reads any directory in this layout back (its own or onnx's node tests) and judges
the runtimes on it: `python -m padconf.cli run --cases generated`. A directory's model gives the
spec version (ONNX: the Pad version in force at its opset; OpenVINO: the Pad op's opset) and
the inputs; padconf's reference classifies the case again. onnx's own Pad node tests are not
in the onnx wheel (no `onnx/backend/test/data/node/`); write them from the installed onnx's
case definitions and replay them:

```
padconf export-onnx-tests --out onnx-pad-tests
padconf run --cases onnx-pad-tests --runtime onnxruntime
```
""")

OPENVINO_RUNNER = ('''"""Run generated/openvino/test_*/ with nothing but openvino and numpy.

usage: python run_openvino.py DIR [DIR ...]   (a test_* directory or a folder of them)
Each test: read model.xml, feed input_<i>.npy in Parameter order, compare the output with
output_0.npy bit for bit (any NaN equals any NaN). Kinds numpy lacks (bf16, f8...) are stored as bits.
The tests run in a child process; when OpenVINO kills it (it corrupts its heap on some pads),
that test is reported as CRASH and a new child goes on with the next one.
Exit 0 when every test passed, 1 otherwise.
"""
import glob
import os
import subprocess
import sys

import numpy as np


def tensor(arr, element_type):
    """An ov.Tensor of the array's bytes, with the Parameter's element type (bf16 from uint16 ...);
    sub-byte kinds (int4, uint2 ...), one element a byte in the .npy, packed lowest bits first."""
    import openvino as ov
    raw = np.frombuffer(arr.tobytes(), dtype=np.uint8).copy()
    bits = element_type.bitwidth
    if bits < 8:
        per_byte = 8 // bits
        raw = np.concatenate([raw & ((1 << bits) - 1), np.zeros(-raw.size % per_byte, np.uint8)])
        raw = (raw.reshape(-1, per_byte) << (np.arange(per_byte, dtype=np.uint8) * bits)).sum(1).astype(np.uint8)
    return ov.Tensor(raw, ov.Shape(list(arr.shape)), element_type)


def values(out, dtype):
    """The output tensor's elements as ``dtype`` (sub-byte kinds unpacked, lowest bits first)."""
    raw = np.frombuffer(np.asarray(out.data).tobytes(), dtype=np.uint8)
    bits = out.element_type.bitwidth
    if bits < 8:
        shifts = np.arange(8 // bits, dtype=np.uint8) * bits
        raw = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:int(np.prod(tuple(out.shape)))]
    return raw.copy().view(dtype).reshape(tuple(out.shape))


def same(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
        fa, fb = a.reshape(-1), b.reshape(-1)
        if a.dtype.kind == "c":
            fa, fb = fa.view(fa.real.dtype), fb.view(fb.real.dtype)
        nan = np.isnan(fa) & np.isnan(fb)
        return bool(np.all((fa.view(bits[fa.itemsize]) == fb.view(bits[fb.itemsize])) | nan))
    return bool(np.array_equal(a, b))


def run(test_dir, core):
    model = core.read_model(os.path.join(test_dir, "model.xml"))
    compiled = core.compile_model(model, "CPU", {"EXECUTION_MODE_HINT": "ACCURACY"})
    feeds = [tensor(np.load(os.path.join(test_dir, f"input_{i}.npy"), allow_pickle=False), p.get_element_type())
             for i, p in enumerate(model.inputs)]
    request = compiled.create_infer_request()
    request.infer(feeds)
    out = request.get_output_tensor(0)
    expected = np.load(os.path.join(test_dir, "output_0.npy"), allow_pickle=False)
    return same(values(out, expected.dtype), expected)


def child(dirs):
    import openvino as ov
    core = ov.Core()
    for d in dirs:
        try:
            ok, why = run(d, core), "output differs"
        except Exception as exc:  # the runtime refused the model or the inputs
            ok, why = False, " ".join(str(exc).split())[:200]
        print(("PASS " if ok else "FAIL ") + os.path.basename(d) + ("" if ok else ": " + why), flush=True)


def main(argv):
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    dirs = []
    for arg in argv:
        dirs += [arg] if os.path.exists(os.path.join(arg, "model.xml")) else '''
                   '''sorted(glob.glob(os.path.join(arg, "test_*")))
    lines = []
    while dirs:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *dirs],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        done = [line for line in proc.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
        if done:
            print("\\n".join(done), flush=True)
        lines += done
        if len(done) < len(dirs):  # the child died on the next test
            lines.append(f"CRASH {os.path.basename(dirs[len(done)])}: exit status {proc.returncode}")
            print(lines[-1], flush=True)
        dirs = dirs[len(done) + 1:]
    passed = sum(line.startswith("PASS") for line in lines)
    print(f"{passed} passed, {len(lines) - passed} failed of {len(lines)}")
    return 1 if passed < len(lines) or not lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
''')


# ---------------------------------------------------------------- reading back


def _value_from_attribute(value: float, dtype: str) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return scalar(np.float32(value).item() if dtype != "string" else str(value), dtype)


MAX_MODEL_BYTES = 1 << 28  # a file of a test folder (model, weights, tensor): padconf did not write it


def load_tensor(path: Path, root: Path | None = None) -> np.ndarray:
    """The array of a TensorProto file inside ``root`` (default: its own folder)."""
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(read_bytes(inside(path, root or path.parent), MAX_MODEL_BYTES, name=str(path)))
    except DecodeError as exc:
        raise CaseError(f"{path}: malformed tensor: {' '.join(str(exc).split()) or type(exc).__name__}") from None
    return tensor_array(tensor, path, root or path.parent)


def tensor_array(tensor: onnx.TensorProto, where: Path, root: Path) -> np.ndarray:
    """``tensor``'s array, read from the file ``where``: its element type and dims checked
    before anything is allocated, and its external data (if any) read from beside ``where``,
    from a regular file that stays inside ``root``."""
    label = f"{where}: tensor {tensor.name!r}" if tensor.name else str(where)
    try:
        dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
    except (KeyError, ValueError, TypeError):
        raise CaseError(f"{label}: unknown element type {tensor.data_type}") from None
    if any(d < 0 for d in tensor.dims) or len(tensor.dims) > 32:
        raise CaseError(f"{label}: dims {list(tensor.dims)[:33]} are not sizes >= 0")
    size = math.prod(tensor.dims) * max(dtype.itemsize, 1)
    if size > MAX_ARRAY_BYTES:
        raise CaseError(f"{label}: dims {list(tensor.dims)} ({size} bytes) exceed {MAX_ARRAY_BYTES} bytes")
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        if not location or Path(location).is_absolute():
            raise CaseError(f"{label}: external data location {location!r} is not a path relative to its file")
        data = (where.parent / location).resolve()
        if not data.is_relative_to(root.resolve()):
            raise CaseError(f"{label}: external data {location!r} leads outside {root}")
        try:
            offset, length = int(info.get("offset") or 0), int(info.get("length") or 0)
            available = data.stat().st_size - offset
        except (ValueError, OSError) as exc:
            raise CaseError(f"{label}: external data {location!r}: {exc}") from None
        if not data.is_file() or offset < 0 or length < 0 or min(length or available, available) > MAX_ARRAY_BYTES:
            raise CaseError(f"{label}: external data {location!r} is not a regular file of at most "
                            f"{MAX_ARRAY_BYTES} bytes from offset {offset}")
        try:
            external_data_helper.load_external_data_for_tensor(tensor, str(where.parent))
        except Exception as exc:  # onnx's own refusals: ValidationError, OSError, ValueError
            raise CaseError(f"{label}: external data {location!r}: {' '.join(str(exc).split())[:200]}") from None
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError) as exc:
        raise CaseError(f"{label}: malformed tensor: {' '.join(str(exc).split()) or type(exc).__name__}") from None


def _spec_for(domain: str, version: int, specs: list[Spec], where: Path) -> Spec:
    """The spec version in force at ``version``: the largest one <= it."""
    fits = [s for s in specs if s.domain == domain and s.version <= version]
    if not fits:
        raise CaseError(f"{where}: no {domain} Pad spec for opset {version}")
    return max(fits, key=lambda s: s.version)


def opset_of(model: onnx.ModelProto, where: Path) -> int:
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise CaseError(f"{where}: the model imports no ai.onnx opset")
    return opset


def load_model(path: Path, root: Path | None = None) -> onnx.ModelProto:
    """The model in ``path``, a file inside ``root`` (default: its folder), with the external
    data of its initializers read in (from beside it, inside ``root``)."""
    data = read_bytes(inside(path, root or path.parent), MAX_MODEL_BYTES, name=str(path))
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, ValueError) as exc:
        raise CaseError(f"{path}: malformed model: {' '.join(str(exc).split())}") from None
    for init in model.graph.initializer:  # external data read into the model, checked
        if init.data_location == onnx.TensorProto.EXTERNAL:
            tensor_array(init, path, root or path.parent)
    return model


def initializers(model: onnx.ModelProto, where: Path) -> dict[str, np.ndarray]:
    """The arrays of the initializers of ``model`` (from ``load_model``), read from ``where``."""
    return {init.name: tensor_array(init, where, where.parent) for init in model.graph.initializer}


def fed_inputs(model: onnx.ModelProto, where: Path, root: Path | None = None) -> dict[str, np.ndarray]:
    """The graph inputs that are not initializers, from ``test_data_set_0/input_<i>.pb``."""
    out = {}
    for i, name in enumerate(fed_input_names(model)):
        path = where / "test_data_set_0" / f"input_{i}.pb"
        if not path.is_file():
            raise CaseError(f"{where}: input {name!r} has no {path.relative_to(where)}")
        out[name] = load_tensor(path, root or where)
    return out


def pad_node_case(node: onnx.NodeProto, opset: int, values: dict[str, np.ndarray], constants: set[str],
                  specs: list[Spec], where: Path) -> tuple[Case, str]:
    """The case a Pad node of an ai.onnx ``opset`` model runs, given the arrays reaching its inputs
    (``values``, by name), and its placement: which of them are constants (``constants``)."""
    spec = _spec_for("onnx", opset, specs, where)

    def value(index: int):
        if index >= len(node.input) or node.input[index] == "":
            return None
        if node.input[index] not in values:
            raise CaseError(f"{where}: Pad input {node.input[index]!r} is neither fed nor an initializer")
        return values[node.input[index]]

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    data = value(0)
    if data is None:
        raise CaseError(f"{where}: the Pad node has no data input")
    if data.dtype.kind in "SU":
        data = as_array(data.astype(str).tolist(), "string")
    dtype = dtype_name(data.dtype)
    pads_type = axes_type = "int64"
    if spec.operands["pads"]["via"] == "attribute":
        pads = attrs.get("paddings", attrs.get("pads"))
        if pads is None:
            raise CaseError(f"{where}: Pad-{opset} node has no pads attribute")
        constant = None if "value" not in attrs else _value_from_attribute(attrs["value"], dtype)
        axes, placement = None, "attributes"
    else:
        pads_arr = value(1)
        if pads_arr is None:
            raise CaseError(f"{where}: the Pad node has no pads input")
        for name, arr in (("pads", pads_arr), ("axes", value(3))):
            if arr is not None and arr.dtype.kind not in "iu":  # int(NaN) would be a traceback
                raise CaseError(f"{where}: the Pad node's {name} are {arr.dtype}, not integers")
        pads, pads_type = pads_arr.reshape(-1).tolist(), dtype_name(pads_arr.dtype)
        constant = value(2)
        if constant is not None and constant.dtype.kind in "SU":
            constant = as_array(constant.astype(str).tolist(), "string")
        axes_arr = value(3)
        axes = None if axes_arr is None else [int(a) for a in axes_arr.reshape(-1)]
        if axes_arr is not None:
            axes_type = dtype_name(axes_arr.dtype)
        placement = ("inputs" if node.input[1] not in constants else
                     "folded" if node.input[0] in constants else "initializers")
    case = Case(spec=spec.id, data=data, pads=[int(p) for p in pads], mode=mode, constant_value=constant,
                axes=axes, pads_type=pads_type, axes_type=axes_type)
    return case, placement


def _onnx_case(where: Path, specs: list[Spec], root: Path) -> tuple[Case, str]:
    model = load_model(where / "model.onnx", root)
    graph = model.graph
    if len(graph.node) != 1 or graph.node[0].op_type != "Pad" or graph.node[0].domain not in ("", "ai.onnx"):
        raise NotPadModel(f"{where}: not a one-node Pad model ({', '.join(n.op_type for n in graph.node)})")
    constants = initializers(model, where / "model.onnx")
    values = {**constants, **fed_inputs(model, where, root)}
    return pad_node_case(graph.node[0], opset_of(model, where), values, set(constants), specs, where)


def _openvino_case(where: Path, specs: list[Spec], root: Path) -> tuple[Case, str]:
    try:
        import openvino as ov

        from .adapters.openvino_tensors import from_tensor
    except ImportError as exc:
        raise CaseError(f"{where}: reading OpenVINO IR needs openvino: {exc}") from None
    # read here, checked, and handed to OpenVINO from memory: it never opens a file itself
    xml = read_bytes(inside(where / "model.xml", root), MAX_MODEL_BYTES, name=str(where / "model.xml"))
    weights = (read_bytes(inside(where / "model.bin", root), MAX_MODEL_BYTES, name=str(where / "model.bin"))
               if (where / "model.bin").exists() else b"")
    try:
        model = ov.Core().read_model(xml.decode("utf-8"), ov.Tensor(np.frombuffer(weights, np.uint8).copy()))
    except Exception as exc:
        raise CaseError(f"{where / 'model.xml'}: malformed IR: {' '.join(str(exc).split())[:200]}") from None
    pads_ops = [op for op in model.get_ordered_ops() if op.get_type_name() == "Pad"]
    if len(pads_ops) != 1:
        raise NotPadModel(f"{where}: not a one-Pad OpenVINO model")
    pad = pads_ops[0]
    version = int(pad.get_type_info().version_id.removeprefix("opset"))
    spec = _spec_for("openvino", version, specs, where)
    params = list(model.get_parameters())
    inputs = []
    placement = "inputs"
    for i in range(pad.get_input_size()):
        src = pad.input_value(i).get_node()
        etype = src.get_element_type().to_string()
        if src.get_type_name() == "Parameter":
            path = where / f"input_{params.index(src)}.npy"
            try:
                arr = np.load(io.BytesIO(read_bytes(inside(path, root), MAX_MODEL_BYTES, name=str(path))),
                              allow_pickle=False)
            except (OSError, ValueError, EOFError) as exc:
                raise CaseError(f"{path}: malformed .npy: {exc}") from None
            from .adapters.openvino_tensors import OV_TYPES
            name = {v: k for k, v in OV_TYPES.items()}.get(etype)
            if name is None:
                raise CaseError(f"{where}: element type {etype} has no padconf name")
            if arr.dtype != numpy_dtype(name):  # ml_dtypes' kinds kept as their bits
                arr = arr.view(numpy_dtype(name))
            inputs.append(arr)
        elif src.get_type_name() == "Constant":
            if i == 3 and src.get_friendly_name() == OV_DEFAULT_PAD_VALUE:
                continue
            if i in (1, 2):
                placement = "initializers"
            inputs.append(from_tensor(src.get_tensor_view()))
        else:
            raise CaseError(f"{where}: Pad input {i} comes from a {src.get_type_name()}, not a Parameter or Constant")
    data, begin, end = inputs[:3]
    case = Case(spec=spec.id, data=data, pads=[int(p) for p in np.concatenate([begin.reshape(-1), end.reshape(-1)])],
                mode=pad.get_attributes()["pad_mode"],
                constant_value=inputs[3].reshape(()) if len(inputs) > 3 else None,
                pads_type=dtype_name(begin.dtype))
    return case, placement


def case_dirs(path: Path | str) -> list[Path]:
    """Every test directory (holding model.onnx or model.xml) at or below ``path``, sorted."""
    path = Path(path)
    if not path.exists():
        raise CaseError(f"{path}: no such directory")
    if (path / "model.onnx").is_file() or (path / "model.xml").is_file():
        return [path]
    # a hidden folder is left out: an interrupted `generate`'s staging, a .git
    found = sorted({p.parent for name in ("model.onnx", "model.xml") for p in path.rglob(name)
                    if not any(part.startswith(".") for part in p.relative_to(path).parts)})
    if not found:
        raise CaseError(f"{path}: no test_* directory with a model.onnx or model.xml")
    return found


def read_case_dir(where: Path | str, specs: list[Spec], root: Path | str | None = None) -> tuple[Case, str]:
    """The case one test directory holds, classified by its spec, and its placement. Its origin
    is ``testdata:<the directory, relative to root>``."""
    where = Path(where)
    case, placement = (_onnx_case if (where / "model.onnx").is_file() else _openvino_case)(where, specs,
                                                                                           Path(root or where))
    spec = next(s for s in specs if s.id == case.spec)
    case = classify(case, spec)
    case.origin = f"testdata:{where.relative_to(root).as_posix() if root and where != Path(root) else where.name}"
    case.tags = edge_classes(case, spec)
    return case, placement


class NotPadModel(CaseError):
    """A well-formed test directory whose model is not one Pad node (read_cases skips it)."""


def read_cases(paths, specs: list[Spec]) -> list[Case]:
    """Every case at or below ``paths`` (a directory or a list of them: e.g. a shell glob of
    onnx's test_*pad* directories), one per distinct input set (the same case in both
    placements is one case), classified with padconf's reference. Models other than one Pad
    node are skipped; none left is an error."""
    out: dict[str, Case] = {}
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    skipped = 0
    for path in paths:
        for where in case_dirs(path):
            try:
                case, _ = read_case_dir(where, specs, root=path)
            except NotPadModel:
                skipped += 1
                continue
            out.setdefault(case.id, case)
    if not out:
        raise CaseError(f"{', '.join(map(str, paths))}: no one-node Pad model among {skipped} test directories")
    return list(out.values())


def export_onnx_node_tests(out: Path | str, op_type: str = "Pad") -> list[Path]:
    """onnx's own node tests of ``op_type`` written in onnx's layout, from the installed onnx's
    case definitions (onnx.backend.test.case.node; the wheel ships no data/node folder), the way
    onnx's ``backend-test-tools generate-data`` writes them."""
    import importlib
    import warnings

    from onnx.backend.test.case import node as node_cases
    out, written = Path(out), []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # importing an op's case module runs its exports (seeded), which register its cases
            importlib.import_module(f"onnx.backend.test.case.node.{op_type.lower()}")
            collected = list(node_cases._NodeTestCases)
        except (ImportError, AttributeError):  # another layout: collect every op's cases
            collected = node_cases.collect_testcases(op_type)
    for case in collected:
        if case.model is None or [n.op_type for n in case.model.graph.node] != [op_type]:
            continue
        where = out / case.name
        data_set = where / "test_data_set_0"
        data_set.mkdir(parents=True, exist_ok=True)
        (where / "model.onnx").write_bytes(case.model.SerializeToString())
        inputs, outputs = case.data_sets[0]
        for j, arr in enumerate(inputs):
            (data_set / f"input_{j}.pb").write_bytes(_tensor_bytes(arr, case.model.graph.input[j].name))
        for j, arr in enumerate(outputs):
            (data_set / f"output_{j}.pb").write_bytes(_tensor_bytes(arr, case.model.graph.output[j].name))
        written.append(where)
    return written
