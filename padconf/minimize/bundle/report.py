"""REPORT.md of a bundle: the title and one line in the runtime's words, the triage and what
decided it (controls, experiments, the operation Pad lowers to), the specification's sentences,
the input, the expected and actual output, how to reproduce it and the environment."""
from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import onnx

from padconf.adapters import adapter_class, registry, split_variant
from padconf.cases.case import Case, CaseKind
from padconf.core import escape
from padconf.core.versions import package_version
from padconf.core.vocabulary import Placement
from padconf.judging.triage import PAD_BUGS, Triage, UpstreamFact, triage
from padconf.judging.verdicts import FAILURES, Difference, Verdict
from padconf.minimize.bundle import model_source
from padconf.minimize.bundle import repro as generic_repro
from padconf.minimize.bundle.scripts import api_script_name
from padconf.report.quotes import rule_quotes
from padconf.report.report import interpretations
from padconf.spec.loader import get_spec, parse_spec_id, rule_text

SHOWN_ELEMENTS = 60  # arrays larger than this are abridged in REPORT.md and by repro.py


# ---------------------------------------------------------------- words


def short_error(text: str | None, limit: int = 110, runtime: str | None = None) -> str:
    """The part of ``runtime``'s error that says what went wrong (Adapter.error_core: without
    the wrappers its messages come in), on one line of at most ``limit`` characters."""
    text = " ".join((text or "").split())
    if runtime is not None and split_variant(runtime)[0] in registry():
        text = adapter_class(runtime).error_core(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# a spec family's document
FAMILY_NAMES = {"onnx": "ONNX", "openvino": "OpenVINO", "torch": "PyTorch F.pad", "tf": "TensorFlow tf.pad"}


def spec_label(spec_id: str) -> str:
    domain, version = parse_spec_id(spec_id)
    return f"{FAMILY_NAMES.get(domain, domain)} Pad-{version}"


def case_text(case: Case) -> str:
    return f"{spec_label(case.spec)} {case.mode} {case.dtype}, shape {list(case.data.shape)}, pads {case.pads}"


def summary_line(row: dict, case: Case, runtime: str) -> str:
    """One line saying what is wrong, with the runtime's own words (the title says it in the
    runtime's terms, padconf.minimize.bundle.title)."""
    detail, error = row.get("detail") or "", short_error(row.get("error"), runtime=runtime)
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


# ---------------------------------------------------------------- REPORT.md


def _spec_words(row: dict, case: Case, job) -> list[str]:
    out, example = [], job.example
    if example:  # the document's own print fixes the reading of a point its text leaves open
        spec = get_spec(case.spec, Path(job.specs_dir) if job.specs_dir else None)
        code = escape.markdown_code
        for name, reading in example["interpretation"].items():
            out += [f"{code(f'ambiguities.{name}')}:", "",
                    *[f"> {escape.markdown(line)}" for line in spec.ambiguities[name].text.splitlines()], "",
                    "The text leaves this open, but the document's own worked example "
                    f"({escape.markdown(example.get('source', example['name']))}) "
                    f"settles it as {code(reading)}: data {code(example.get('data'))}, pads "
                    f"{code(example.get('pads'))}, mode {code(example.get('mode', 'constant'))}, printed output "
                    f"{code(example.get('output'))}. The input below is judged by that same reading.", ""]
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
    for quote in quotes:  # a spec file's words are another's (--specs-dir): each line escaped
        if quote.get("text"):
            out += [f"{escape.markdown_code(quote['spec_key'])}:", "",
                    *[f"> {escape.markdown(line)}" for line in str(quote["text"]).splitlines()], ""]
            if quote.get("note"):
                out += [f"({escape.markdown(quote['note'])})", ""]
        elif quote.get("note"):
            out += [escape.markdown(quote["note"]), ""]
    return out


ERROR_LINES = 12  # of a runtime's error in the report's first part; the appendix has the rest
FIRST_PART_LINES = 80  # REPORT.md before its appendix, read once; the specification's words move past it
EVIDENCE_LINES = 10  # the evidence section write_evidence puts before the appendix


def _others(job, case: Case, runtime: str) -> list[str]:
    """What the run's other runtimes did with the original case, and, for an undefined point,
    which interpretation each runtime of the run matched."""
    if not job.run_rows:
        return []
    original = job.recorded["case_id"] if job.recorded else job.case.id
    # only where they ran it: a case skipped (or left uncompiled by the budget) says nothing of a runtime
    others = [r for r in job.run_rows if r["case_id"] == original and r["runtime"] != runtime
              and r["verdict"] not in (Verdict.SKIPPED, Verdict.INCONCLUSIVE)]
    out = []
    if others:
        out += [f"The same run's other runtimes on the original case {escape.markdown_code(original)} "
                "(before minimizing):", ""]
        out += [escape.markdown(f"- {r['runtime']} [{r['placement']}]: {r['verdict']}")
                + (f" ({escape.markdown(short_error(r.get('detail') or r.get('error'), 160, r['runtime']))})"
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
    # one entry per distinct answer, the readings that give it together (twelve readings, two answers)
    answers: dict[str, tuple[np.ndarray | None, list[str]]] = {}
    for label, out in sorted(case.interpretations.items()):
        shown = "an error" if out is None else _array_text(out)
        answers.setdefault(shown, (out, []))[1].append(label)
    for shown, (out, labels) in answers.items():
        lines += [f"- {'; '.join(labels)}:" + (" an error" if out is None else ""),
                  *([] if out is None else ["", "  ```", "  " + shown, "  ```"])]
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
                            f"{placement}): {native['verdict']}{forbidden}: "
                            f"{short_error(native['detail'], 200, native['runtime'])}. "
                            + native["why"]
                            + (f" Its own repro: {native['repro']}." if native.get("repro") else "")), ""]


def _control_lines(control: dict | None, whose: str, runtime: str) -> list[str]:
    """What a control (the same data through an Identity model, or the data and constant value
    through Reshape, Concat and Tile, a value attribute through LeakyRelu, a context's consumer
    alone, same runtime and placement) did; ``whose``: whose data it was."""
    if not control:
        return []
    if control["verdict"] == "pass":  # a must-reject control (Case.control) passes by refusing
        model = {"values": "Reshape, Concat and Tile model", "attribute": "LeakyRelu model",
                 "consumer": "consumer-only model", "pads values": "Reshape, Concat and Tile model",
                 "axes values": "Reshape, Concat and Tile model"}.get(control.get("operand") or "data",
                                                                      "Identity model")
        did = (f"passed: it refuses the {model} too ({short_error(control['error'], 200, runtime)})"
               if control.get("error") else "passed: the data comes back unchanged without the Pad")
    else:
        said = short_error(control.get("detail") or control.get("error"), 200, runtime)
        did = f"{control['verdict']}: {said}".rstrip(": ")
    operand = control.get("operand", "data")
    where = control["placement"] + {"data": "", "values": ", data and constant value through Reshape, Concat and Tile",
                                     "attribute": ", the value attribute as LeakyRelu's alpha",
                                     "consumer": ", the consumer alone on the padded data, no Pad",
                                     "pads values": ", the pads' own values through Reshape, Concat and Tile",
                                     "axes values": ", the axes' own values through Reshape, Concat and Tile"}.get(
        operand, f", its empty {operand} through Identity")
    return [f"- {whose} ({where}): {escape.markdown(did)}"
            + (". The failure is not Pad-specific." if control["fails_too"] else "")]


def _experiment_lines(tried: dict, runtime: str) -> list[str]:
    """What padconf.minimize.probes.experiments ran before triaging, and what it showed."""
    lines = []
    if tried.get("defined_at"):
        lines.append(f"Found at {spec_label(tried['defined_at'])}, whose document leaves this input undefined; "
                     "judged here, at the version that defines it, where it fails too.")
    if tried.get("beyond_policy"):
        got = tried["beyond_policy"]
        lines.append(f"Not {runtime}'s opset policy: stamped with opset {got['opset']}, which it supports "
                     f"({spec_label(got['spec'])} in force), the same model fails alike: {got['verdict']}"
                     + (f" ({short_error(got['detail'], 200, runtime)})" if got.get("detail") else "") + ".")
    if tried.get("default_configuration"):
        got = tried["default_configuration"]
        lines.append(f"In its default configuration ({got['runtime']}) the same case is answered as the "
                     f"specification allows ({got['verdict']}"
                     + (f": {short_error(got['detail'], 200, got['runtime'])}" if got.get("detail") else "")
                     + f"): the failure is {runtime}'s configuration's ({got['configuration']}).")
    if tried.get("explicit_default"):
        got = tried["explicit_default"]
        lines.append(f"With constant_value written out as its documented default ({got['constant_value']!r}), "
                     f"{runtime} answers as the specification says ({got['verdict']}): what it refuses is the "
                     "omitted input's default.")
    return [line for text in lines for line in (escape.markdown(text), "")]


def triage_with_fact(shrunk, recorded: dict | None) -> tuple[Triage | None, UpstreamFact | None]:
    """The minimal case's triage, decided by the control minimize ran, never by the run's
    (``recorded``'s, a row of a file anyone may have edited: a forged "pass" in controls.jsonl
    made a failure Pad-specific); REPORT.md shows the run's as the run recorded it."""
    row = shrunk.final.row
    return triage({**row, "control": shrunk.final.control}) if row["verdict"] in FAILURES else (None, None)


def bundle_triage(shrunk, job) -> Triage | None:
    """What a bundle is, as REPORT.md and INDEX.md say: its triage class."""
    return triage_with_fact(shrunk, job.recorded)[0]


def report_markdown(heading: str, shrunk, placement: Placement, runtime: str, runtime_version, job, model: str | None,
                    api: str | None = None, graph: onnx.ModelProto | None = None) -> escape.Markdown:
    """REPORT.md: ``model`` is the bundle's model file (None: the runtime refuses to build it),
    ``api`` its repro in the runtime's own API, ``graph`` its ONNX model."""
    case, row, outcome = shrunk.final.case, shrunk.final.row, shrunk.final.outcome
    original = shrunk.original.case
    inputs = [f"- data: `{_array_text(case.data)}`" if case.data.size <= 12 else
              f"- data:\n\n  ```\n  {_array_text(case.data)}\n  ```", f"- pads: `{case.pads}` ({case.pads_type})",
              f"- mode: {escape.markdown_code(case.mode)}"]
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
    controls = [*_control_lines(shrunk.final.control, "the minimal case's control", runtime),
                *_control_lines(recorded, "the run's control of this distinct failure, on its first case "
                                          f"{escape.markdown_code((recorded or {}).get('case_id'))}", runtime)]
    spec_section = ["## What the specification says", "", *_spec_words(row, case, job)]
    lines = [f"# {escape.markdown(heading)}", "",
             escape.markdown(summary_line(row, case, runtime)), "",
             f"Specification: **{spec_label(case.spec)}** (padconf spec file `{case.spec}`); this input is {kind}.", "",
             *([f"Triage: **{found.label}**" + ("" if found in PAD_BUGS else ": not a Pad bug to file")
                + (f"; {fact.why} Upstream: {fact.link} (\"{fact.quote}\")" if fact else ""), ""] if found else []),
             *_native_lines(shrunk.native, runtime, placement),
             *([escape.markdown(f"Folded at compile time (every input a constant), {runtime} refuses this input: "
                                f"{short_error(shrunk.refused_when_folded, 200, runtime)}. At run time it returns an "
                                "empty tensor instead: the run-time path skips that check."), ""]
               if shrunk.refused_when_folded else []),
             *([escape.markdown(f"The same values as {shrunk.packing} pass on {runtime} ({placement}): the "
                                f"failure is about how it packs {case.dtype}, narrower than a byte."),
                ""] if shrunk.packing else []),
             *_experiment_lines(row.get("experiments") or {}, runtime),
             *spec_section,
             "## Input", "", *inputs, *model_source.context_lines(case),
             f"- model: `{model}` ({model_source.graph_text(case, graph)}; {where})" if model else
             f"- model: none: OpenVINO refuses to build this graph ({where}); `{api_script_name(runtime)}` builds "
             "it and shows the refusal", "",
             "## Expected", "", *_expected_lines(case), "", "## Actual", ""]
    if outcome.output is not None:
        lines += ["```", _array_text(outcome.output), "```", ""]
        if row.get("detail"):
            lines += [f"({escape.markdown(row['detail'])})", ""]
    error_lines = escape.markdown_block(row.get("error") or "")[1:-1]
    if error_lines:
        fence = escape.markdown_block(row["error"])[0]
        lines += ["The runtime's error" + (f" (its first {ERROR_LINES} lines; the appendix has it whole)"
                                           if len(error_lines) > ERROR_LINES else "") + ":", "",
                  fence, *error_lines[:ERROR_LINES], fence, ""]
    needs = " ml_dtypes" if case.data.dtype.isbuiltin == 2 else ""
    adapter = adapter_class(runtime)
    lines += ["## Reproduce", ""]
    if api is not None and adapter.repro is not None:
        lines += [f"In {runtime}'s own API (`{api_script_name(runtime)}` beside this report, listed in the appendix; "
                  f"`pip install numpy {adapter.repro.pip}`; exit 1 while the bug shows):", "",
                  "```", f"python {api_script_name(runtime)}", "```", ""]
        lines += ["The generic checker:", ""] if model else []
    else:
        lines += [f"No short repro in {runtime}'s own API here "
                  + ("(its data needs numpy's ml_dtypes or strings): " if adapter.repro else
                     "(its adapter supplies none): ")
                  + "the generic checker only.", ""]
    if model:  # else there is no model file for the generic checker to run
        lines += [f"Standalone: the files next to this report and `pip install numpy {generic_repro.INSTALL[runtime]}"
                  f"{needs}` only."
                  if runtime in generic_repro.RUNTIMES else
                  f"{runtime} is a graph rewriter: `python repro.py --runtime onnxruntime|onnx-reference` runs the "
                  "model it was given, not rewritten (the control, which passes)."
                  if adapter.repro is not None and adapter.repro.rewrites else
                  f"{runtime} is a padconf adapter class, which repro.py cannot import: "
                  "`python repro.py --runtime onnxruntime|openvino-onnx|onnx-reference` "
                  "runs the model on a runtime instead.", "",
                  "```",
                  "python repro.py   # prints expected and actual; exit 1 while the bug is there, 0 once fixed",
                  "```", ""]
    moved: list[str] = []
    if len(lines) + EVIDENCE_LINES > FIRST_PART_LINES and len(spec_section) > 3:  # read once: the words go last
        at = lines.index(spec_section[0])
        lines[at:at + len(spec_section)] = ["## What the specification says", "",
                                            "Its sentences on this input: in the appendix.", ""]
        moved = ["### What the specification says", "", *spec_section[2:]]
    lines += ["## Appendix", "", *moved,
              *(["Controls (the same data through an Identity model, the data and constant value through Reshape, "
                 "Concat and Tile, a value attribute through LeakyRelu, a consumer alone on the padded data, or "
                 "empty pads or axes baked into the model through Identity, instead of Pad, on the same "
                 "runtime and placement):", "", *controls, ""] if controls else []),
              *(["### Found in", "", *job.found_in, ""] if job.found_in else []),
              *_others(job, case, runtime),
              *(["### The runtime's error, whole", "", *escape.markdown_block(row["error"]), ""]
                if len(error_lines) > ERROR_LINES else []),
              *([f"### {api_script_name(runtime)}", "", "```python", api.rstrip(), "```", ""]
                if api is not None and adapter.repro is not None else []),
              "### Environment", "", *_versions(runtime, runtime_version), "",
              f"Minimized by `padconf minimize` from case {escape.markdown_code(shrunk.original.case.id)} "
              f"(shape {list(original.data.shape)}, {original.data.size} elements, pads {original.pads}) in "
              f"{shrunk.seconds:.1f} s and {shrunk.tries} runs, each in a fresh process"
              + (" (stopped at the time limit)." if shrunk.out_of_time else ".")]
    return escape.Markdown("\n".join(lines) + "\n")  # each line escaped where it is made
