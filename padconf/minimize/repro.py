"""The bundle `padconf minimize` writes for one minimized failure: the model (ONNX, or OpenVINO
IR for the native adapter), the inputs as .npy and .pb, the expected output, the generic checker
``repro.py`` (padconf/minimize/bundle_check.py copied verbatim, its case in ``repro.json``), a short
``repro_<runtime>.py`` in the runtime's own API (padconf.minimize.repro_api) and ``REPORT.md``, ready to
paste into the runtime's issue tracker. Both scripts need numpy and the runtime only."""
from __future__ import annotations

import json
import platform
import re
from pathlib import Path

import numpy as np
from onnx import numpy_helper

from padconf.adapters import adapter_class, get_adapter, registry, split_release, split_variant, without_release
from padconf.adapters.rewriters import RewriterAdapter, exhibited_on
from padconf.cases.case import Case, CaseKind
from padconf.cases.onnx_model import build_model, feeds, ir_version
from padconf.core import escape
from padconf.core.dtypes import SUB_BYTE_BITS, npy_bytes
from padconf.core.versions import package_version
from padconf.core.vocabulary import Placement
from padconf.judging.triage import PAD_BUGS, Triage, UpstreamFact, triage
from padconf.judging.verdicts import FAILURES, Difference, Verdict
from padconf.minimize import bundle_check, repro_api, repro_context, repro_rewriter
from padconf.minimize.bundle_title import title
from padconf.report.report import interpretations, rule_quotes
from padconf.spec.loader import get_spec, parse_spec_id, rule_text

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


def summary_line(row: dict, case: Case, runtime: str) -> str:
    """One line saying what is wrong, with the runtime's own words (the title says it in the
    runtime's terms, padconf.minimize.bundle_title)."""
    detail, error = row.get("detail") or "", short_error(row.get("error"))
    verdict = row["verdict"]
    if verdict == Verdict.MISMATCH:
        difference = row.get("difference")
        what = ("shape" if difference == Difference.SHAPE else
                "element type" if difference == Difference.DTYPE else "values")
        phrase = f"returns wrong {what}: {detail}"
    elif verdict == Verdict.WRONGLY_REJECTED:
        phrase = f"rejects an input the spec defines: {error}"
    elif verdict == Verdict.WRONGLY_ACCEPTED:
        phrase = f"accepts an input the spec forbids ({case.reason})"
    elif verdict == Verdict.NOT_IMPLEMENTED:
        phrase = f"has no implementation: {error}"
    elif verdict == Verdict.CRASH:
        phrase = f"crashes the process ({error})"
    elif verdict == Verdict.TIMEOUT:
        phrase = f"hangs ({error})"
    else:
        phrase = f"{verdict}: {detail or error}"
    return f"{runtime}: {case_text(case)}: {phrase}"


def _array_text(arr) -> str:
    arr = np.asarray(arr)
    with np.printoptions(threshold=SHOWN_ELEMENTS, edgeitems=3, linewidth=100):
        body = np.array2string(arr, separator=", ") if arr.dtype != object else repr(arr.tolist())
    return f"{body}   # {arr.dtype if arr.dtype != object else 'string'}, shape {list(arr.shape)}"


def configuration(runtime: str) -> dict[str, object]:
    """How padconf set ``runtime`` up, in the runtime's own terms ({}: its defaults); a
    module:Class adapter is not imported here, outside its worker."""
    return get_adapter(runtime).configuration() if split_variant(runtime)[0] in registry() else {}


def _versions(runtime: str, runtime_version: str | None) -> list[str]:
    def of(package):
        return package_version(package) or "not installed"
    package = adapter_class(runtime).package
    lines = [f"- runtime: {runtime} {runtime_version or of(package)}" if package else
             f"- runtime: {runtime} "
             f"(a padconf adapter class{', version ' + runtime_version if runtime_version else ''})"]
    lines += [f"- {p}: {of(p)}" for p in ("onnx", "numpy") if p != package]
    lines += [f"- Python: {platform.python_version()}", f"- OS: {platform.platform()}",
              f"- found and minimized by padconf {of('padconf')}"]
    return lines


# ---------------------------------------------------------------- files


def _described(name: str, arr: np.ndarray, file: str) -> dict:
    arr = np.asarray(arr)
    return {"name": name, "file": file, "ml_dtypes": arr.dtype.name if arr.dtype.isbuiltin == 2 else None,
            "string": arr.dtype == object}


def _write_inputs(where: Path, case: Case, placement: Placement, runtime: str) -> tuple[str | None, list[dict]]:
    """The model and its inputs (npy, and ONNX TensorProto .pb in onnx's test-data layout);
    returns the model file's name (None: OpenVINO refuses to build the graph at all, the bug
    itself) and the inputs in feed order."""
    data_set = where / "test_data_set_0"
    data_set.mkdir(parents=True)
    own = adapter_class(runtime)().bundle_model(case, placement, where)
    if own is None:
        (where / "model.onnx").write_bytes(build_model(case, placement).SerializeToString())
        own = "model.onnx", feeds(case, placement)
    model, inputs = own
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
    if case.kind == CaseKind.DEFINED:
        assert case.expected is not None  # a defined case has its output
        (where / "expected.npy").write_bytes(npy_bytes(case.expected))
        (where / "test_data_set_0" / "output_0.pb").write_bytes(
            numpy_helper.from_array(np.asarray(case.expected), "output").SerializeToString())
        outputs["expected"] = "expected.npy"
    elif case.kind == CaseKind.AMBIGUOUS:
        for i, (label, out) in enumerate(sorted(case.interpretations.items())):
            outputs[label] = None if out is None else f"expected_{i}.npy"
            if out is not None:
                (where / f"expected_{i}.npy").write_bytes(npy_bytes(out))
    return {"kind": case.kind, "reason": case.reason, "outputs": outputs}


def write_bundle(where: Path, shrunk, placement: Placement, runtime: str, runtime_version: str | None, job) -> str:
    """The bundle for ``shrunk`` (a padconf.minimize.minimize.Shrunk) in ``where``; returns its title."""
    case, row, outcome = shrunk.final.case, shrunk.final.row, shrunk.final.outcome
    where.mkdir(parents=True, exist_ok=True)
    model, inputs = _write_inputs(where, case, placement, runtime)
    if case.context is not None:  # the graph's constants, which its repro loads where they are large
        for name, arr in repro_context.model_arrays(build_model(case, placement)).items():
            if not (where / f"{name}.npy").exists():
                (where / f"{name}.npy").write_bytes(npy_bytes(arr))
    expect = _write_expected(where, case)
    if outcome.output is not None:
        (where / "actual.npy").write_bytes(npy_bytes(outcome.output))
    heading = title(row, case, _placement_dependent(job, runtime), bool(shrunk.refused_when_folded))
    data = _described("data", case.data, "data.npy")
    # the checker runs the runtime by its name; a release (onnxruntime@1.23.2) is the version to install
    about = {"title": summary_line(row, case, runtime), "case": case_text(case), "runtime": without_release(runtime),
             "release": split_release(runtime)[1],
             "configuration": configuration(runtime), "model": model,
             "inputs": inputs, "expect": expect,
             "data": data, "output": {"ml_dtypes": data["ml_dtypes"], "string": data["string"]},
             "tolerance": case.context.tolerance if case.context else None}
    about["placement"] = placement  # with case.json: what `padconf bisect BUNDLE` runs
    (where / "case.json").write_text(json.dumps(case.to_json()) + "\n", encoding="utf-8")
    if model is not None:
        (where / "repro.py").write_bytes(Path(bundle_check.__file__).read_bytes())
        (where / "repro.json").write_text(json.dumps(about, indent=1) + "\n", encoding="utf-8")
    api = api_script(case, placement, runtime, heading, row)
    if api is not None:
        (where / api_script_name(runtime)).write_text(api, encoding="utf-8")
    (where / "REPORT.md").write_text(report_markdown(heading, shrunk, placement, runtime, runtime_version, job, model,
                                                     api), encoding="utf-8")
    return heading


def _placement_dependent(job, runtime: str) -> bool:
    """The run's original case passed in another placement on this runtime."""
    original = job.recorded["case_id"] if job.recorded else None
    return any(r["case_id"] == original and r["runtime"] == runtime and r["verdict"] not in FAILURES
               and r["placement"] != job.recorded["placement"] for r in job.run_rows)


# ---------------------------------------------------------------- repro_<runtime>.py

SHOWN_INLINE = 24  # elements: larger arrays are read from the bundle's .npy files


def api_script_name(runtime: str) -> str:
    return f"repro_{re.sub(r'[^A-Za-z0-9_]+', '_', runtime).strip('_')}.py"  # a variant's brackets too


def _scalar_literal(v) -> str:
    if isinstance(v, float) and not np.isfinite(v):
        return 'float("nan")' if np.isnan(v) else ('-' if v < 0 else '') + 'float("inf")'
    return repr(v)


def _literal(arr, file: str) -> str:
    """Source text giving ``arr``: inline when small and exact (every bit, NaN payloads too), else
    read from the bundle's ``file``."""
    arr = np.asarray(arr)
    if arr.size <= SHOWN_INLINE:
        flat = ", ".join(_scalar_literal(v) for v in arr.reshape(-1).tolist())
        text = f'np.array([{flat}], dtype="{arr.dtype.name}").reshape({list(arr.shape)})'
        back = eval(text, {"np": np})  # noqa: S307 -- padconf's own text of numbers, checked bit for bit
        if back.dtype == arr.dtype and back.tobytes() == arr.tobytes():
            return text
    return f'np.load(os.path.join(HERE, "{file}"))'


def _expected_file(case: Case, i: int) -> str:
    """The .npy file of the ``i``-th allowed output, as _write_expected names it."""
    return "expected.npy" if case.kind == CaseKind.DEFINED else f"expected_{i}.npy"


def _bitwise(row: dict | None) -> bool:
    """Whether a repro compares bit for bit: the failure is a changed NaN payload or zero sign."""
    return (row or {}).get("difference") == Difference.NAN_PAYLOAD_OR_ZERO_SIGN


def _allowed(case: Case) -> list[np.ndarray | None]:
    """The outputs the specification allows (None: an error)."""
    if case.kind == CaseKind.DEFINED:
        return [case.expected]
    if case.kind == CaseKind.MUST_REJECT:
        return [None]
    return [out for _, out in sorted(case.interpretations.items())]


def api_script(case: Case, placement: Placement, runtime: str, heading: str, row: dict | None = None) -> str | None:
    """repro_<runtime>.py for ``case`` (padconf.minimize.repro_api), or None where the runtime has
    no short one here (its adapter supplies none: Adapter.repro) or numpy's own dtypes cannot
    carry the data (bfloat16, float8, int4 ...: the generic checker handles those). ``row``, the
    failure's: a crash or hang runs in a child process; a NaN payload's is compared bit for bit."""
    adapter = adapter_class(runtime)()
    repro = adapter.repro
    sub_byte = case.dtype in SUB_BYTE_BITS and repro is not None and repro.sub_byte is not None and repro.own_graph
    if repro is None or (case.data.dtype.isbuiltin != 1 and not sub_byte):
        return None
    setup = repro_setup(runtime, case, row)
    if repro.rewrites:
        return _rewriter_script(repro, case, placement, runtime, heading, row, setup)
    if case.context is not None:
        return _context_script(repro, case, placement, runtime, heading, row, setup)
    domain, version = parse_spec_id(case.spec)
    own = repro.own_graph
    if own:
        operands = adapter.own_operands(case)
    else:
        operands = dict(feeds(case, Placement.INPUTS))
    fed = {"inputs": list(operands), "initializers": ["data"], "folded": []}[placement]
    allowed = _allowed(case)

    def literal(name: str, arr: np.ndarray) -> str:
        if sub_byte and arr.dtype == case.data.dtype:  # the runtime's own tensor (numpy has no such type)
            assert repro is not None and repro.sub_byte is not None
            return repro.sub_byte(arr, case.dtype)
        return _literal(arr, f"{name}.npy" if name in fed or name == "data" else "")

    arrays = [*(repro.imports if sub_byte else ()),
              *(f"{name} = {literal(name, arr)}" for name, arr in operands.items())]
    if sub_byte:  # compared as the codes of the elements, which the runtime's run gives back
        allowed = [None if out is None else out.view(np.uint8) & ((1 << SUB_BYTE_BITS[case.dtype]) - 1)
                   for out in allowed]
    arrays.append(_expected_line(case, allowed, f"; {case.dtype} elements as their codes" if sub_byte else ""))
    names = "{" + ", ".join(f'"{name}": {name}' for name in (operands if own else fed)) + "}"
    if own:
        build: list[str] = []
        call = f"standalone_run({names}, {fed!r}, {case.mode!r}, {version}, {setup!r})"
    else:
        if version <= 2:
            attributes: dict = {"mode": case.mode, "paddings" if version == 1 else "pads": [int(p) for p in case.pads]}
            if case.constant_value is not None:
                attributes["value"] = float(np.asarray(case.constant_value).astype(np.float64))
            inputs = ["data"]
        else:
            attributes = {"mode": case.mode}
            inputs = ["data", "pads", "constant_value" if "constant_value" in operands else "",
                      *(["axes"] if "axes" in operands else [])]
            while inputs[-1] == "":
                inputs.pop()
        # stamped with the opset a policy supports, where the experiment showed the bug there too
        opset = ((row or {}).get("experiments") or {}).get("beyond_policy", {}).get("opset", version)
        build = repro_api.onnx_model_lines(operands, inputs, fed,
                                           {k: _scalar_literal(v) for k, v in attributes.items()}, opset,
                                           ir_version(opset, case.dtype))
        call = f"{repro.run.__name__}(model, {names}, {setup!r})"
    verdict = (row or {}).get("verdict")
    return repro_api.script(repro, runtime, heading, arrays, build, call, allowed,
                            bitwise=_bitwise(row),
                            in_child=verdict in (Verdict.CRASH, Verdict.TIMEOUT))


def repro_setup(runtime: str, case: Case, row: dict | None) -> dict[str, object]:
    """What the repro passes the runtime's StandaloneRepro.run: the runtime's set-up as padconf
    ran it ({}: its defaults); for a graph rewriter, the passes (or conversion) this case's
    failure needs (RewriterAdapter.repro_configuration: the pass its note names)."""
    adapter = get_adapter(runtime) if split_variant(runtime)[0] in registry() else None
    if isinstance(adapter, RewriterAdapter):
        return adapter.repro_configuration(case, (row or {}).get("note"))
    return configuration(runtime)


def _expected_line(case: Case, allowed: list[np.ndarray | None], note: str = "") -> str:
    return ("expected = [" + ", ".join("None" if out is None else _literal(out, _expected_file(case, i))
                                       for i, out in enumerate(allowed))
            + "]  # what the specification allows (None: an error)" + note)


def _rewriter_script(repro, case: Case, placement: Placement, runtime: str, heading: str, row: dict | None,
                     setup: dict) -> str:
    """repro_<rewriter>.py (padconf.minimize.repro_rewriter): the case's model, plain or with its
    context, rewritten by the rewriter's own call, both models run on the control runtime
    whose answer the failure is."""
    arrays, build, names = repro_context.model_lines(build_model(case, placement), feeds(case, placement), _literal)
    allowed = _allowed(case)
    arrays.append(_expected_line(case, allowed))
    return repro_rewriter.script(repro, runtime, heading, arrays, build, names, setup,
                                 exhibited_on((row or {}).get("note")), allowed,
                                 bitwise=_bitwise(row),
                                 tolerance=case.context.tolerance if case.context else None)


def _context_script(repro, case: Case, placement: Placement, runtime: str, heading: str, row: dict | None,
                    setup: dict) -> str:
    """repro_<runtime>.py for a context case: its whole graph spelled with onnx's helper
    (padconf.minimize.repro_context), run as padconf ran it; a Conv or AveragePool consumer's
    output compared within the case's tolerance."""
    arrays, build, names = repro_context.model_lines(build_model(case, placement), feeds(case, placement), _literal)
    allowed = _allowed(case)
    arrays.append(_expected_line(case, allowed))
    verdict = (row or {}).get("verdict")
    assert case.context is not None
    return repro_api.script(repro, runtime, heading, arrays, build, f"{repro.run.__name__}(model, {names}, {setup!r})",
                            allowed, bitwise=_bitwise(row),
                            in_child=verdict in (Verdict.CRASH, Verdict.TIMEOUT), tolerance=case.context.tolerance)


# ---------------------------------------------------------------- REPORT.md


def _spec_words(row: dict, case: Case, job) -> list[str]:
    out, example = [], job.example
    if example:  # the document's own print fixes the reading of a point its text leaves open
        spec = get_spec(case.spec, Path(job.specs_dir) if job.specs_dir else None)
        for name, reading in example["interpretation"].items():
            out += [f"`ambiguities.{name}`:", "", f"> {spec.ambiguities[name].text}", "",
                    "The text leaves this open, but the document's own worked example "
                    f"({example.get('source', example['name'])}) "
                    f"settles it as `{reading}`: data `{example.get('data')}`, pads `{example.get('pads')}`, mode "
                    f"`{example.get('mode', 'constant')}`, printed output `{example.get('output')}`. The input below "
                    "is judged by that same reading.", ""]
    quotes = rule_quotes({**row, "kind": case.kind, "reason": case.reason}, job.specs_dir)
    if case.kind == CaseKind.DEFINED and not any(q.get("text") for q in quotes):  # refused or failed on a valid input:
        spec = get_spec(case.spec, Path(job.specs_dir) if job.specs_dir else None)
        rules = ["dtypes", "modes", "output_shape"] + (["axes_index_types", "axes_range"]
                                                       if case.axes is not None else [])
        quotes = [q for q in (rule_text(spec, r) for r in rules) if q.get("text")]
    if case.kind == CaseKind.DEFINED:  # and the sentence that says what the mode computes
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
        out += [f"The same run's other runtimes on the original case `{original}` (before minimizing):", ""]
        out += [f"- {r['runtime']} [{r['placement']}]: {r['verdict']}"
                + (f" ({short_error(r.get('detail') or r.get('error'), 160)})"
                   if r.get("detail") or r.get("error") else "")
                for r in others]
        out.append("")
    if case.kind == CaseKind.AMBIGUOUS:
        picks = interpretations([r for r in job.run_rows if r.get("reason") == case.reason and r["spec"] == case.spec])
        if picks:
            out += [f"Where the document leaves `{case.reason}` undefined ({case.spec}), the run's runtimes matched "
                    "(results: a case in one placement; \"a or b\": the answer is what each of them gives):", ""]
            out += [f"- {rt}, `{point}`: " + ", ".join(f"{k} ({n})" for k, n in counts.most_common())
                    for (point, rt), counts in sorted(picks.items(), key=lambda item: (item[0][1], item[0][0]))]
            out.append("")
    return out


def _expected_lines(case: Case) -> list[str]:
    if case.kind == CaseKind.DEFINED:
        return ["```", _array_text(case.expected), "```"]
    if case.kind == CaseKind.MUST_REJECT:
        return [f"An error: the input breaks the rule \"{case.reason}\"."]
    lines = [f"The document leaves this undefined ({case.reason}); each reading gives:", ""]
    for label, out in sorted(case.interpretations.items()):
        lines += [f"- {label}:" + (" an error" if out is None else ""),
                  *([] if out is None else ["", "  ```", "  " + _array_text(out), "  ```"])]
    return lines


def _native_lines(native: dict | None, runtime: str, placement: Placement) -> list[str]:
    """Where the minimal case fails alike through the operation the runtime lowers Pad to, or
    through onnx's shape inference (padconf.minimize.minimize.native_check, schema_check): the bug is
    that one's, to be filed once."""
    if not native:
        return []
    forbidden = " (an input that operation's own document forbids, answered alike)" \
        if native["verdict"] == Verdict.WRONGLY_ACCEPTED else ""
    return [escape.markdown(f"The same input fails through {native['spec']} itself too (runtime {native['runtime']}, "
                            f"{placement}): {native['verdict']}{forbidden}: {short_error(native['detail'], 200)}. "
                            + native["why"]), ""]


def _control_lines(control: dict | None, whose: str) -> list[str]:
    """What a control (the same data through an Identity model, or the data and constant value
    through Reshape and Concat, same runtime and placement) did; ``whose``: whose data it was."""
    if not control:
        return []
    if control["verdict"] == "pass":  # a must-reject control (Case.control) passes by refusing
        model = "Reshape and Concat model" if control.get("operand") == "values" else "Identity model"
        did = (f"passed: it refuses the {model} too ({short_error(control['error'], 200)})"
               if control.get("error") else "passed: the data comes back unchanged without the Pad")
    else:
        did = f"{control['verdict']}: {short_error(control.get('detail') or control.get('error'), 200)}".rstrip(": ")
    operand = control.get("operand", "data")
    where = control["placement"] + {"data": "", "values": ", data and constant value through Reshape and Concat"}.get(
        operand, f", its empty {operand} through Identity")
    return [f"- {whose} ({where}): {escape.markdown(did)}"
            + (". The failure is not Pad-specific." if control["fails_too"] else "")]


def _experiment_lines(tried: dict, runtime: str) -> list[str]:
    """What padconf.minimize.experiments ran before triaging, and what it showed."""
    lines = []
    if tried.get("defined_at"):
        lines.append(f"Found at {spec_label(tried['defined_at'])}, whose document leaves this input undefined; "
                     "judged here, at the version that defines it, where it fails too.")
    if tried.get("beyond_policy"):
        got = tried["beyond_policy"]
        lines.append(f"Not {runtime}'s opset policy: stamped with opset {got['opset']}, which it supports "
                     f"({spec_label(got['spec'])} in force), the same model fails alike: {got['verdict']}"
                     + (f" ({short_error(got['detail'], 200)})" if got.get("detail") else "") + ".")
    if tried.get("default_configuration"):
        got = tried["default_configuration"]
        lines.append(f"In its default configuration ({got['runtime']}) the same case is answered as the "
                     f"specification allows ({got['verdict']}"
                     + (f": {short_error(got['detail'], 200)}" if got.get("detail") else "")
                     + f"): the failure is {runtime}'s configuration's ({got['configuration']}).")
    if tried.get("explicit_default"):
        got = tried["explicit_default"]
        lines.append(f"With constant_value written out as its documented default ({got['constant_value']!r}), "
                     f"{runtime} answers as the specification says ({got['verdict']}): what it refuses is the "
                     "omitted input's default.")
    return [line for text in lines for line in (escape.markdown(text), "")]


def triage_with_fact(shrunk, recorded: dict | None) -> tuple[Triage | None, UpstreamFact | None]:
    """The minimal case's triage, decided by its own control where minimize ran one, else by the
    run's control of its distinct failure (``recorded``, the run's row)."""
    row = shrunk.final.row
    control = shrunk.final.control or (recorded or {}).get("control")
    return triage({**row, "control": control}) if row["verdict"] in FAILURES else (None, None)


def bundle_triage(shrunk, job) -> Triage | None:
    """What a bundle is, as REPORT.md and INDEX.md say: its triage class."""
    return triage_with_fact(shrunk, job.recorded)[0]


def report_markdown(heading: str, shrunk, placement: Placement, runtime: str, runtime_version, job, model: str | None,
                    api: str | None = None) -> str:
    case, row, outcome = shrunk.final.case, shrunk.final.row, shrunk.final.outcome
    original = shrunk.original.case
    inputs = [f"- data: `{_array_text(case.data)}`" if case.data.size <= 12 else
              f"- data:\n\n  ```\n  {_array_text(case.data)}\n  ```", f"- pads: `{case.pads}` ({case.pads_type})",
              f"- mode: `{case.mode}`"]
    if case.constant_value is not None:
        inputs.append(f"- constant_value: `{np.asarray(case.constant_value).tolist()!r}` ({case.dtype})")
    if case.axes is not None:
        inputs.append(f"- axes: `{case.axes}` ({case.axes_type})")
    domain, version = parse_spec_id(case.spec)
    data_fed = "the data fed at run time as a graph input, pads an attribute"  # ONNX Pad-1 and Pad-2
    attribute = domain == "onnx" and version <= 2
    where = {"inputs": data_fed if attribute else "pads and the other operands fed at run time as graph inputs",
             "initializers": data_fed if attribute else "pads and the other operands baked into the model as constants",
             "folded": "every input, data included, baked into the model as constants: the runtime may "
                       "evaluate the Pad while compiling"}[placement]
    kind = {CaseKind.DEFINED: "defined: the document fixes one output",
            CaseKind.MUST_REJECT: "invalid: the document requires an error",
            CaseKind.AMBIGUOUS: "undefined: the document leaves it open"}[case.kind]
    recorded = (job.recorded or {}).get("control")  # the run's, one per distinct failure: of its first case
    found, fact = triage_with_fact(shrunk, job.recorded)
    controls = [*_control_lines(shrunk.final.control, "the minimal case's control"),
                *_control_lines(recorded, "the run's control of this distinct failure, on its first case "
                                          f"`{(recorded or {}).get('case_id')}`")]
    lines = [f"# {escape.markdown(heading)}", "",
             escape.markdown(summary_line(row, case, runtime)), "",
             f"Specification: **{spec_label(case.spec)}** (padconf spec file `{case.spec}`); this input is {kind}.", "",
             *([f"Triage: **{found.label}**" + ("" if found in PAD_BUGS else ": not a Pad bug to file")
                + (f"; {fact.why} Upstream: {fact.link} (\"{fact.quote}\")" if fact else ""), ""] if found else []),
             *_native_lines(shrunk.native, runtime, placement),
             *([escape.markdown(f"Folded at compile time (every input a constant), {runtime} refuses this input: "
                                f"{short_error(shrunk.refused_when_folded, 200)}. At run time it returns an "
                                "empty tensor instead: the run-time path skips that check."), ""]
               if shrunk.refused_when_folded else []),
             *([escape.markdown(f"The same values as {shrunk.packing} pass on {runtime} ({placement}): the "
                                f"failure is about how it packs {case.dtype}, narrower than a byte."),
                ""] if shrunk.packing else []),
             *_experiment_lines(row.get("experiments") or {}, runtime),
             *(["Controls (the same data through an Identity model, the data and constant value through Reshape "
                "and Concat, or empty pads or axes baked into the model through Identity, instead of Pad, on the same "
                "runtime and placement):", "",
                *controls, ""] if controls else []),
             *(["## Found in", "", *job.found_in, ""] if job.found_in else []),
             "## What the specification says", "", *_spec_words(row, case, job), *_others(job, case, runtime),
             "## Input", "", *inputs, *repro_context.context_lines(case),
             f"- model: `{model}` ({repro_context.graph_text(case, placement)}; {where})" if model else
             f"- model: none: OpenVINO refuses to build this graph ({where}); `{api_script_name(runtime)}` builds "
             "it and shows the refusal", "",
             "## Expected", "", *_expected_lines(case), "", "## Actual", ""]
    if outcome.output is not None:
        lines += ["```", _array_text(outcome.output), "```", ""]
        if row.get("detail"):
            lines += [f"({row['detail']})", ""]
    if row.get("error"):
        lines += ["The runtime's error:", "", "```", row["error"].strip(), "```", ""]
    needs = " ml_dtypes" if case.data.dtype.isbuiltin == 2 else ""
    adapter = adapter_class(runtime)
    lines += ["## Reproduce", ""]
    if api is not None and adapter.repro is not None:
        lines += [f"In {runtime}'s own API (`{api_script_name(runtime)}` beside this report; "
                  f"`pip install numpy {adapter.repro.pip}`; exit 1 while the bug shows):", "",
                  "```python", api.rstrip(), "```", ""]
        lines += ["The generic checker:", ""] if model else []
    else:
        lines += [f"No short repro in {runtime}'s own API here "
                  + ("(its data needs numpy's ml_dtypes or strings): " if adapter.repro else
                     "(its adapter supplies none): ")
                  + "the generic checker only.", ""]
    if model:  # else there is no model file for the generic checker to run
        lines += [f"Standalone: the files next to this report and `pip install numpy {adapter.package}{needs}` only."
                  if runtime in bundle_check.RUNTIMES else
                  f"{runtime} is a graph rewriter: `python repro.py --runtime onnxruntime|onnx-reference` runs the "
                  "model it was given, not rewritten (the control, which passes)."
                  if issubclass(adapter, RewriterAdapter) else
                  f"{runtime} is a padconf adapter class, which repro.py cannot import: "
                  "`python repro.py --runtime onnxruntime|openvino-onnx|onnx-reference` "
                  "runs the model on a runtime instead.", "",
                  "```",
                  "python repro.py   # prints expected and actual; exit 1 while the bug is there, 0 once fixed",
                  "```", ""]
    lines += ["## Environment", "", *_versions(runtime, runtime_version), "",
              f"Minimized by `padconf minimize` from case `{shrunk.original.case.id}` "
              f"(shape {list(original.data.shape)}, {original.data.size} elements, pads {original.pads}) in "
              f"{shrunk.seconds:.1f} s and {shrunk.tries} runs, each in a fresh process"
              + (" (stopped at the time limit)." if shrunk.out_of_time else ".")]
    return "\n".join(lines) + "\n"
