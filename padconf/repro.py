"""The bundle `padconf minimize` writes for one minimised failure: the model (ONNX, or OpenVINO
IR for the native adapter), the inputs as .npy and .pb, the expected output, a standalone
``repro.py`` (numpy and the runtime only) and ``REPORT.md``, ready to paste into the runtime's
issue tracker."""
from __future__ import annotations

import json
import platform
import re
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np
from onnx import numpy_helper

from .cases import AMBIGUOUS, DEFINED, MUST_REJECT, Case
from .dtypes import npy_bytes
from .onnx_model import build_model, feeds
from .report import interpretations, rule_quotes
from .specs import parse_spec_id
from .triage import PAD_BUGS, triage
from .verdicts import CRASH, FAILURES, MISMATCH, NOT_IMPLEMENTED, TIMEOUT, WRONGLY_ACCEPTED, WRONGLY_REJECTED

PACKAGES = {"onnxruntime": "onnxruntime", "openvino-onnx": "openvino", "openvino": "openvino", "onnx-reference": "onnx"}
SHOWN_ELEMENTS = 60  # arrays larger than this are abridged in REPORT.md and by repro.py


# ---------------------------------------------------------------- words


def short_error(text: str | None, limit: int = 110) -> str:
    """The part of a runtime's error that says what went wrong: without ORT's status prefix and
    the source path and C++ signature some of its messages start with."""
    text = " ".join((text or "").split())
    text = text.split("Status Message: ", 1)[-1]
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    text = re.sub(r"^/\S+:\d+ .*?\] (?=\w)", "", text)  # /src/pad.cc:441 Status PadImpl(...) [with T = ...]
    if text.startswith("Exception from src/"):  # OpenVINO: wrappers "Exception from src/x.cpp:105:", "Check '...'
        text = re.split(r"(?:Exception from |failed at )src/\S+:\d+:\s*", text)[-1]  # failed at src/y.hpp:94:"
        text = re.sub(r"While validating (node|ONNX node) '.*?'( with friendly_name '.*?')?:\s*", "", text)
        text = re.sub(r"Shape inference input shapes \{.*?\}\s*", "", text).split(" Summary:")[0]
    return text if len(text) <= limit else text[:limit - 3] + "..."


def spec_label(spec_id: str) -> str:
    domain, version = parse_spec_id(spec_id)
    return f"{'ONNX' if domain == 'onnx' else 'OpenVINO'} Pad-{version}"


def case_text(case: Case) -> str:
    return f"{spec_label(case.spec)} {case.mode} {case.dtype}, shape {list(case.data.shape)}, pads {case.pads}"


def title(row: dict, case: Case, runtime: str) -> str:
    """One line saying what is wrong."""
    detail, error = row.get("detail") or "", short_error(row.get("error"))
    verdict = row["verdict"]
    if verdict == MISMATCH:
        what = "shape" if detail.startswith("shape") else "element type" if detail.startswith("dtype") else "values"
        phrase = f"returns wrong {what}: {detail}"
    elif verdict == WRONGLY_REJECTED:
        phrase = f"rejects an input the spec defines: {error}"
    elif verdict == WRONGLY_ACCEPTED:
        phrase = f"accepts an input the spec forbids ({case.reason})"
    elif verdict == NOT_IMPLEMENTED:
        phrase = f"has no implementation: {error}"
    elif verdict == CRASH:
        phrase = f"crashes the process ({error})"
    elif verdict == TIMEOUT:
        phrase = f"hangs ({error})"
    else:
        phrase = f"{verdict}: {detail or error}"
    return f"{runtime}: {case_text(case)}: {phrase}"


def _array_text(arr) -> str:
    arr = np.asarray(arr)
    with np.printoptions(threshold=SHOWN_ELEMENTS, edgeitems=3, linewidth=100):
        body = np.array2string(arr, separator=", ") if arr.dtype != object else repr(arr.tolist())
    return f"{body}   # {arr.dtype if arr.dtype != object else 'string'}, shape {list(arr.shape)}"


def _versions(runtime: str, runtime_version: str | None) -> list[str]:
    def of(package):
        try:
            return package_version(package)
        except PackageNotFoundError:
            return "not installed"
    lines = [f"- runtime: {runtime} {runtime_version or of(PACKAGES[runtime])}" if runtime in PACKAGES else
             f"- runtime: {runtime} "
             f"(a padconf adapter class{', version ' + runtime_version if runtime_version else ''})"]
    lines += [f"- {p}: {of(p)}" for p in ("onnx", "numpy") if p != PACKAGES.get(runtime)]
    lines += [f"- Python: {platform.python_version()}", f"- OS: {platform.platform()}",
              f"- found and minimised by padconf {of('padconf')}"]
    return lines


# ---------------------------------------------------------------- files


def _described(name: str, arr: np.ndarray, file: str) -> dict:
    arr = np.asarray(arr)
    return {"name": name, "file": file, "ml_dtypes": arr.dtype.name if arr.dtype.isbuiltin == 2 else None,
            "string": arr.dtype == object}


def _write_inputs(where: Path, case: Case, placement: str, runtime: str) -> tuple[str, list[dict]]:
    """The model and its inputs (npy, and ONNX TensorProto .pb in onnx's test-data layout);
    returns the model file's name and the inputs in feed order."""
    data_set = where / "test_data_set_0"
    data_set.mkdir(parents=True)
    if runtime == "openvino":
        import openvino as ov

        from .adapters.openvino import native_model, split_pads
        ov.save_model(native_model(case, placement, default_pad_value=True), str(where / "model.xml"),
                      compress_to_fp16=False)
        inputs = {"data": case.data, **(split_pads(case) if placement == "inputs" else {})}
        model = "model.xml"
    else:
        (where / "model.onnx").write_bytes(build_model(case, placement).SerializeToString())
        inputs, model = feeds(case, placement), "model.onnx"
    if "data" not in inputs:  # folded: the data is in the model too; repro.py still prints it
        (where / "data.npy").write_bytes(npy_bytes(case.data))
    described = []
    for i, (name, arr) in enumerate(inputs.items()):
        (where / f"{name}.npy").write_bytes(npy_bytes(arr))
        (data_set / f"input_{i}.pb").write_bytes(numpy_helper.from_array(np.asarray(arr), name).SerializeToString())
        described.append(_described(name, arr, f"{name}.npy"))
    return model, described


def _write_expected(where: Path, case: Case) -> dict:
    """The expected outputs, and what repro.py expects: {"kind", "reason", "outputs": {label: file}}."""
    outputs: dict[str, str | None] = {}
    if case.kind == DEFINED:
        assert case.expected is not None  # a defined case has its output
        (where / "expected.npy").write_bytes(npy_bytes(case.expected))
        (where / "test_data_set_0" / "output_0.pb").write_bytes(
            numpy_helper.from_array(np.asarray(case.expected), "output").SerializeToString())
        outputs["expected"] = "expected.npy"
    elif case.kind == AMBIGUOUS:
        for i, (label, out) in enumerate(sorted(case.interpretations.items())):
            outputs[label] = None if out is None else f"expected_{i}.npy"
            if out is not None:
                (where / f"expected_{i}.npy").write_bytes(npy_bytes(out))
    return {"kind": case.kind, "reason": case.reason, "outputs": outputs}


def write_bundle(where: Path, shrunk, placement: str, runtime: str, runtime_version: str | None, job) -> str:
    """The bundle for ``shrunk`` (a padconf.minimise.Shrunk) in ``where``; returns its title."""
    case, row, outcome = shrunk.final.case, shrunk.final.row, shrunk.final.outcome
    where.mkdir(parents=True, exist_ok=True)
    model, inputs = _write_inputs(where, case, placement, runtime)
    expect = _write_expected(where, case)
    if outcome.output is not None:
        (where / "actual.npy").write_bytes(npy_bytes(outcome.output))
    heading = title(row, case, runtime)
    data = _described("data", case.data, "data.npy")
    about = {"title": heading, "case": case_text(case), "runtime": runtime, "model": model, "inputs": inputs,
             "expect": expect,
             "data": data, "output": {"ml_dtypes": data["ml_dtypes"], "string": data["string"]}}
    (where / "repro.py").write_text(REPRO.replace("@ABOUT@", json.dumps(about, indent=1)), encoding="utf-8")
    (where / "REPORT.md").write_text(report_markdown(heading, shrunk, placement, runtime, runtime_version, job, model),
                                     encoding="utf-8")
    return heading


# ---------------------------------------------------------------- REPORT.md


def _spec_words(row: dict, case: Case, job) -> list[str]:
    out, example = [], job.example
    if example:  # the document's own print fixes the reading of a point its text leaves open
        from .specs import get_spec
        spec = get_spec(case.spec, Path(job.specs_dir) if job.specs_dir else None)
        for name, reading in example["interpretation"].items():
            out += [f"`ambiguities.{name}`:", "", f"> {spec.ambiguities[name].text}", "",
                    "The text leaves this open, but the document's own worked example "
                    f"({example.get('source', example['name'])}) "
                    f"settles it as `{reading}`: data `{example.get('data')}`, pads `{example.get('pads')}`, mode "
                    f"`{example.get('mode', 'constant')}`, printed output `{example.get('output')}`. The input below "
                    "is judged by that same reading.", ""]
    quotes = rule_quotes({**row, "kind": case.kind, "reason": case.reason}, job.specs_dir)
    if case.kind == DEFINED and not any(q.get("text") for q in quotes):  # refused or failed on a valid input:
        from .specs import get_spec, rule_text  # rule_text: the sentences that make it valid and fix its output
        spec = get_spec(case.spec, Path(job.specs_dir) if job.specs_dir else None)
        rules = ["dtypes", "modes", "output_shape"] + (["axes_index_types", "axes_range"]
                                                       if case.axes is not None else [])
        quotes = [q for q in (rule_text(spec, r) for r in rules) if q.get("text")]
    if case.kind == DEFINED:  # and the sentence that says what the mode computes
        from .specs import get_spec
        spec = get_spec(case.spec, Path(job.specs_dir) if job.specs_dir else None)
        mode_rule = next((key for key, rule in spec.doc.get("rules", {}).items()
                          if f"`{case.mode}`" in str(rule.get("text", ""))), None)
        if mode_rule and all(q.get("spec_key") != f"rules.{mode_rule}" for q in quotes):
            quotes = quotes + [{"spec_key": f"rules.{mode_rule}", "text": spec.doc["rules"][mode_rule]["text"]}]
    for quote in quotes:
        if quote.get("text"):
            out += [f"`{quote['spec_key']}`:", "", *[f"> {line}" for line in quote["text"].splitlines()], ""]
            if quote.get("note"):
                out += [f"({quote['note']})", ""]
        elif quote.get("note"):
            out += [quote["note"], ""]
    return out


def _others(job, case: Case, runtime: str) -> list[str]:
    """What the run's other runtimes did with the original case, and, for an undefined point,
    which interpretation each runtime of the run matched."""
    if not job.run_rows:
        return []
    original = job.recorded["case_id"] if job.recorded else job.case.id
    others = [r for r in job.run_rows if r["case_id"] == original and r["runtime"] != runtime]
    out = []
    if others:
        out += [f"The same run's other runtimes on the original case `{original}` (before minimising):", ""]
        out += [f"- {r['runtime']} [{r['placement']}]: {r['verdict']}"
                + (f" ({short_error(r.get('detail') or r.get('error'), 160)})"
                   if r.get("detail") or r.get("error") else "")
                for r in others]
        out.append("")
    if case.kind == AMBIGUOUS:
        picks = interpretations([r for r in job.run_rows if r["reason"] == case.reason and r["spec"] == case.spec])
        if picks:
            out += [f"Where the document leaves `{case.reason}` undefined ({case.spec}), the run's runtimes matched:",
                    ""]
            out += [f"- {rt}: " + ", ".join(f"{k} ({n} cases)" for k, n in counts.most_common())
                    for (_, rt), counts in picks.items()]
            out.append("")
    return out


def _expected_lines(case: Case) -> list[str]:
    if case.kind == DEFINED:
        return ["```", _array_text(case.expected), "```"]
    if case.kind == MUST_REJECT:
        return [f"An error: the input breaks the rule \"{case.reason}\"."]
    lines = [f"The document leaves this undefined ({case.reason}); each reading gives:", ""]
    for label, out in sorted(case.interpretations.items()):
        lines += [f"- {label}:" + (" an error" if out is None else ""),
                  *([] if out is None else ["", "  ```", "  " + _array_text(out), "  ```"])]
    return lines


def _control_lines(control: dict | None) -> list[str]:
    """What the run's control (the same data through an Identity model, same runtime and
    placement) did."""
    if not control:
        return []
    did = "passed: the data comes back unchanged without the Pad" if control["verdict"] == "pass" else \
        f"{control['verdict']}: {control.get('detail') or control.get('error') or ''}".rstrip(": ")
    return [f"Control (the original case's data through an Identity model, {control['placement']}): {did}"
            + (" The failure is not Pad-specific." if control["same_failure"] else ""), ""]


def report_markdown(heading: str, shrunk, placement: str, runtime: str, runtime_version, job, model: str) -> str:
    case, row, outcome = shrunk.final.case, shrunk.final.row, shrunk.final.outcome
    original = shrunk.original.case
    inputs = [f"- data: `{_array_text(case.data)}`" if case.data.size <= 12 else
              f"- data:\n\n  ```\n  {_array_text(case.data)}\n  ```", f"- pads: `{case.pads}` ({case.pads_type})",
              f"- mode: `{case.mode}`"]
    if case.constant_value is not None:
        inputs.append(f"- constant_value: `{np.asarray(case.constant_value).tolist()!r}` ({case.dtype})")
    if case.axes is not None:
        inputs.append(f"- axes: `{case.axes}` ({case.axes_type})")
    where = {"inputs": "pads and the other operands fed at run time as graph inputs",
             "initializers": "pads and the other operands baked into the model as constants",
             "folded": "every input, data included, baked into the model as constants: the runtime may "
                       "evaluate the Pad while compiling"}[placement]
    kind = {DEFINED: "defined: the document fixes one output", MUST_REJECT: "invalid: the document requires an error",
            AMBIGUOUS: "undefined: the document leaves it open"}[case.kind]
    control = (job.recorded or {}).get("control")  # the run's control of the original case
    found, fact = triage({**row, "control": control}) if row["verdict"] in FAILURES else (None, None)
    lines = [f"# {heading}", "",
             f"Specification: **{spec_label(case.spec)}** (padconf spec file `{case.spec}`); this input is {kind}.", "",
             *([f"Triage: **{found.label}**" + ("" if found in PAD_BUGS else ": not a Pad bug to file")
                + (f"; {fact.why} Upstream: {fact.link} (\"{fact.quote}\")" if fact else ""), ""] if found else []),
             *_control_lines(control),
             *(["## Found in", "", *job.found_in, ""] if job.found_in else []),
             "## What the specification says", "", *_spec_words(row, case, job), *_others(job, case, runtime),
             "## Input", "", *inputs, f"- model: `{model}` (one Pad node; {where})", "",
             "## Expected", "", *_expected_lines(case), "", "## Actual", ""]
    if outcome.output is not None:
        lines += ["```", _array_text(outcome.output), "```", ""]
        if row.get("detail"):
            lines += [f"({row['detail']})", ""]
    if row.get("error"):
        lines += ["The runtime's error:", "", "```", row["error"].strip(), "```", ""]
    needs = " ml_dtypes" if case.data.dtype.isbuiltin == 2 else ""
    lines += ["## Reproduce", "",
              f"Standalone: the files next to this report and `pip install numpy {PACKAGES[runtime]}{needs}` only."
              if runtime in PACKAGES else f"{runtime} is a padconf adapter class, which repro.py cannot import: "
              "`python repro.py --runtime onnxruntime|openvino-onnx|onnx-reference` "
              "runs the model on a runtime instead.", "",
              "```",
              "python repro.py   # prints expected and actual; exit 1 while the bug is there, 0 once fixed",
              "```", "",
              "## Environment", "", *_versions(runtime, runtime_version), "",
              f"Minimised by `padconf minimize` from case `{shrunk.original.case.id}` "
              f"(shape {list(original.data.shape)}, {original.data.size} elements, pads {original.pads}) in "
              f"{shrunk.seconds:.1f} s and {shrunk.tries} runs, each in a fresh process"
              + (" (stopped at the time limit)." if shrunk.out_of_time else ".")]
    return "\n".join(lines) + "\n"


def index_markdown(target: str, runtime: str, summaries: list[dict]) -> str:
    lines = [f"# padconf minimize {target} --runtime {runtime}", "",
             "| # | bundle | title | before | after | seconds |", "|---:|---|---|---|---|---:|"]
    for s in summaries:
        if s.get("merged_into"):
            root = s["merged_into"]
            lines.append(f"| {s['n']} | [{root['dir'].name}]({root['dir'].name}/REPORT.md) | merged: the same minimal "
                         f"failure as bundle {root['n']} (listed there under Variants) | {s['shape']} | - | - |")
            continue
        if s.get("dir") is None:
            rec = s["recorded"]
            lines.append(f"| {s['n']} | - | {rec['verdict'] + ' in the run, not alone' if rec else 'skipped'}: "
                         f"{s['error']} | {s['shape']} | - | - |")
            continue
        sh = s["shrunk"]
        a, b = sh.original.case.data, sh.final.case.data
        lines.append(f"| {s['n']} | [{s['dir'].name}]({s['dir'].name}/REPORT.md) | {s['title'].replace('|', '/')} | "
                     f"{list(a.shape)} ({a.size}) | {list(b.shape)} ({b.size}) | {sh.seconds:.1f} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- repro.py

REPRO = (r'''"""Reproducer written by padconf minimize. Standalone: needs numpy and the runtime only
(and ml_dtypes for bfloat16, float8, float4, int4 and int2 data).

usage: python repro.py [--runtime onnxruntime|openvino-onnx|openvino|onnx-reference]

Runs the model next to this file on its inputs (*.npy), in a child process (a runtime that
crashes or hangs is reported, not this script's end), and compares the output with what the
specification says, bit for bit (any NaN equals any NaN). Prints expected and actual.
Exit 1 while the bug is there, 0 once it is fixed.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("cannot run: numpy is not installed (pip install numpy)")
    sys.exit(2)

ABOUT = json.loads(r"""@ABOUT@""")
HERE = os.path.dirname(os.path.abspath(__file__))
HANG_SECONDS = 120
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SUB_BYTE = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}


def load(spec, file=None):
    arr = np.load(os.path.join(HERE, file or spec["file"]), allow_pickle=False)
    if spec.get("string"):
        return arr.astype(object)
    if spec.get("ml_dtypes"):  # bfloat16, float8, int4 ... are stored as their bits
        import ml_dtypes
        arr = arr.view(getattr(ml_dtypes, spec["ml_dtypes"]))
    return arr


def raw_bytes(arr):
    """The array's bytes as ONNX and OpenVINO lay them out: sub-byte kinds packed, low bits first."""
    bits = SUB_BYTE.get(arr.dtype.name)
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    if not bits:
        return raw
    per = 8 // bits
    raw = np.pad(raw & ((1 << bits) - 1), (0, -raw.size % per)).reshape(-1, per)
    return np.bitwise_or.reduce(raw << (np.arange(per, dtype=np.uint8) * bits), axis=1).astype(np.uint8)


def from_raw(raw, dtype, shape):
    raw = np.frombuffer(raw, dtype=np.uint8)
    bits = SUB_BYTE.get(dtype.name)
    if bits:
        shifts = np.arange(8 // bits, dtype=np.uint8) * bits
        raw = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:int(np.prod(shape))]
    return raw.copy().view(dtype).reshape(shape)


def run_onnxruntime(inputs, data_dtype):
    import ctypes
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 4  # the error comes back as the exception; no second copy on stderr
    session = ort.InferenceSession(os.path.join(HERE, ABOUT["model"]), options, providers=["CPUExecutionProvider"])
    quiet = ort.RunOptions()
    quiet.log_severity_level = 4
    if data_dtype.isbuiltin == 1 and all(a.dtype.isbuiltin == 1 for a in inputs.values()):
        return session.run(None, inputs, quiet)[0]
    # numpy kinds ORT's binding cannot map (ml_dtypes'): OrtValues built from the raw bytes
    types = {i.name: i.type for i in session.get_inputs()}
    values = {}
    for name, arr in inputs.items():
        if arr.dtype.isbuiltin == 1:
            values[name] = ort.OrtValue.ortvalue_from_numpy(arr)
            continue
        code = ONNX_TYPES[types[name]]
        value = ort.OrtValue.ortvalue_from_shape_and_type(list(arr.shape), code)
        raw = raw_bytes(arr).tobytes()
        ctypes.memmove(value.data_ptr(), raw, min(len(raw), value.tensor_size_in_bytes()))
        values[name] = value
    out = session.run_with_ort_values(None, values, quiet)[0]
    return from_raw(ctypes.string_at(out.data_ptr(), out.tensor_size_in_bytes()), data_dtype, tuple(out.shape()))


ONNX_TYPES = {"tensor(bfloat16)": 16, "tensor(float8e4m3fn)": 17, "tensor(float8e4m3fnuz)": 18,
              "tensor(float8e5m2)": 19, "tensor(float8e5m2fnuz)": 20, "tensor(uint4)": 21, "tensor(int4)": 22,
              "tensor(float4e2m1)": 23, "tensor(float8e8m0)": 24, "tensor(uint2)": 25, "tensor(int2)": 26}


def run_openvino(inputs, data_dtype):
    import openvino as ov
    core = ov.Core()
    model = core.read_model(os.path.join(HERE, ABOUT["model"]))
    compiled = core.compile_model(model, "CPU", {"EXECUTION_MODE_HINT": "ACCURACY", "INFERENCE_NUM_THREADS": 1})
    arrays = list(inputs.values())
    if ABOUT["model"].endswith(".onnx"):  # the ONNX frontend keeps the ONNX input names
        arrays = [inputs[port.get_any_name()] for port in compiled.inputs]
    tensors = []
    for arr, port in zip(arrays, compiled.inputs):
        if arr.dtype == object:
            tensors.append(ov.Tensor(np.asarray(arr, dtype=str)))
        else:
            tensors.append(ov.Tensor(raw_bytes(arr).copy(), ov.Shape(list(arr.shape)), port.get_element_type()))
    request = compiled.create_infer_request()
    request.infer(tensors)
    out = request.get_output_tensor(0)
    if data_dtype == object:
        return np.asarray(out.str_data, dtype=object).reshape(tuple(out.shape))
    if compiled.inputs and out.element_type != compiled.inputs[0].get_element_type():
        raise TypeError(f"output element type {out.element_type} instead of {compiled.inputs[0].get_element_type()}")
    raw = np.ascontiguousarray(out.data).reshape(-1).view(np.uint8).tobytes()
    return from_raw(raw, data_dtype, tuple(out.shape))


def run_onnx_reference(inputs):
    from onnx.reference import ReferenceEvaluator
    return np.asarray(ReferenceEvaluator(os.path.join(HERE, ABOUT["model"])).run(None, inputs)[0])


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist()
    fa, fb = a.reshape(-1), b.reshape(-1)
    if fa.dtype.kind == "c":
        fa, fb = fa.view(fa.real.dtype), fb.view(fb.real.dtype)
    try:
        nan = np.isnan(fa) & np.isnan(fb)
    except TypeError:  # integers
        nan = np.zeros(fa.shape, dtype=bool)
    return bool(np.all((fa.view(BITS[fa.itemsize]) == fb.view(BITS[fb.itemsize])) | nan))


def show(arr):
    arr = np.asarray(arr)
    with np.printoptions(threshold=60, edgeitems=3, linewidth=100):
        body = repr(arr.tolist()) if arr.dtype == object else np.array2string(arr, separator=", ")
    return f"{body}   ({arr.dtype if arr.dtype != object else 'string'}, shape {list(arr.shape)})"


def child(runtime):
    try:
        inputs = {spec["name"]: load(spec) for spec in ABOUT["inputs"]}
        data = load(ABOUT["data"])
        expect = ABOUT["expect"]
        expected = {label: None if f is None else load(ABOUT["output"], f) for label, f in expect["outputs"].items()}
    except ImportError as exc:  # bfloat16, float8, int4 ... need numpy's ml_dtypes extension
        print(f"cannot read the inputs: {exc} (pip install ml_dtypes)")
        return 2
    for name, arr in {"data": data, **inputs}.items():
        print(f"{name}: {show(arr)}" + ("" if name in inputs else "   (in the model: every input is a constant)"))
    if expect["kind"] == "must-reject":
        print(f"expected: an error ({expect['reason']})")
    for label, arr in expected.items():
        print(f"expected{'' if label == 'expected' else ' if ' + label}: " + ("an error" if arr is None else show(arr)))
    module = {"onnxruntime": "onnxruntime", "openvino": "openvino", "openvino-onnx": "openvino",
              "onnx-reference": "onnx"}.get(runtime)
    if module is None:
        print(f"no standalone runner for {runtime!r}: pass --runtime onnxruntime, openvino-onnx, '''
         r'''openvino or onnx-reference")
        return 2
    try:
        __import__(module)
    except ImportError as exc:  # not the bug: the runtime is missing
        print(f"cannot run: {exc} (pip install {module})")
        return 2
    try:
        if runtime == "onnxruntime":
            actual = run_onnxruntime(inputs, data.dtype)
        elif runtime in ("openvino", "openvino-onnx"):
            actual = run_openvino(inputs, data.dtype)
        else:
            actual = run_onnx_reference(inputs)
    except Exception as exc:  # the runtime refused the model or the inputs
        print(f"actual: an error: {' '.join(str(exc).split())[:2000]}")
        if expect["kind"] == "must-reject" or any(arr is None for arr in expected.values()):
            print("OK: the runtime rejects it, as the specification allows")
            return 0
        print("BUG: the runtime rejects an input the specification defines")
        return 1
    print(f"actual: {show(actual)}")
    if expect["kind"] == "must-reject":
        print(f"BUG: the runtime accepts an input the specification forbids ({expect['reason']})")
        return 1
    matched = [label for label, arr in expected.items() if arr is not None and same(arr, actual)]
    if matched:
        print("OK: the output is " + ("the expected one" if matched == ["expected"] else '''
         r'''"what " + " | ".join(matched) + " gives"))
        return 0
    print("BUG: the output differs from " + ("the expected one" if expect["kind"] == "defined" else "every reading"))
    return 1


def main(argv):
    import argparse
    usage, about = __doc__.split("\n\n", 2)[1:]
    parser = argparse.ArgumentParser(usage=usage.split("usage: ", 1)[1], description=about,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=ABOUT["runtime"],
                        help=f"the runtime to run the model on (default: {ABOUT['runtime']}, where padconf found this)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # the child process that runs it
    args = parser.parse_args(argv)
    runtime = args.runtime
    if args.child:
        return child(runtime)
    if runtime == ABOUT["runtime"]:
        print(ABOUT["title"], flush=True)
    else:  # what padconf found is another runtime's answer: this one's is below
        print(f"{runtime}: {ABOUT['case']}\n(padconf found this on {ABOUT['title']})", flush=True)
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--runtime", runtime],
                              timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"BUG: the runtime gave no answer within {HANG_SECONDS} s")
        return 1
    if proc.returncode in (0, 1, 2):
        return proc.returncode
    print(f"BUG: the runtime killed the process (exit status {proc.returncode})")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
''')
