"""The bundle `padconf minimize` writes for one minimized failure: the model (ONNX, or OpenVINO
IR for the native adapter), the inputs as .npy and .pb, the expected output, the generic checker
``repro.py`` (padconf/minimize/bundle/repro.py copied verbatim, its case in ``repro.json``), a
short ``repro_<runtime>.py`` in the runtime's own API (padconf.minimize.bundle.scripts) and
``REPORT.md`` (padconf.minimize.bundle.report), ready to paste into the runtime's issue tracker.
Both scripts need numpy and the runtime only."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from onnx import numpy_helper

from padconf.adapters import adapter_class, split_release, without_release
from padconf.cases.case import Case, CaseKind
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import npy_bytes
from padconf.core.vocabulary import Placement
from padconf.core.writing import make_folder, write_atomically, write_markdown, write_python
from padconf.judging.verdicts import FAILURES
from padconf.minimize.bundle import model_source
from padconf.minimize.bundle import repro as generic_repro
from padconf.minimize.bundle.report import case_text, report_markdown, summary_line
from padconf.minimize.bundle.scripts import api_script, api_script_name, configuration
from padconf.minimize.bundle.title import title
from padconf.minimize.probes.experiments import lowered_runtime, native_case

# ---------------------------------------------------------------- files


def _described(name: str, arr: np.ndarray, file: str) -> dict:
    arr = np.asarray(arr)
    return {"name": name, "file": file, "ml_dtypes": arr.dtype.name if arr.dtype.isbuiltin == 2 else None,
            "string": arr.dtype == object}


def _write_inputs(where: Path, case: Case, placement: Placement, own, graph) -> tuple[str | None, list[dict]]:
    """The model and its inputs (npy, and ONNX TensorProto .pb in onnx's test-data layout):
    ``own``, the runtime's own model (Adapter.bundle_model), else the ONNX ``graph``; returns the
    model file's name (None: OpenVINO refuses to build the graph at all, the bug itself) and the
    inputs in feed order."""
    data_set = where / "test_data_set_0"
    make_folder(data_set)
    if own is None:
        write_atomically(where / "model.onnx", graph.SerializeToString())
        own = "model.onnx", feeds(case, placement)
    model, inputs = own
    if "data" not in inputs:  # folded: the data is in the model too; repro.py still prints it
        write_atomically(where / "data.npy", npy_bytes(case.data))
    described = []
    for i, (name, arr) in enumerate(inputs.items()):
        write_atomically(where / f"{name}.npy", npy_bytes(arr))
        write_atomically(data_set / f"input_{i}.pb", numpy_helper.from_array(np.asarray(arr), name).SerializeToString())
        described.append(_described(name, arr, f"{name}.npy"))
    return model, described


def _write_expected(where: Path, case: Case, test_data: bool = True) -> dict:
    """The expected outputs (and in onnx's test-data layout, where ``test_data``), and what
    repro.py expects: {"kind", "reason", "outputs": {label: file}}."""
    outputs: dict[str, str | None] = {}
    if case.kind == CaseKind.DEFINED:
        assert case.expected is not None  # a defined case has its output
        write_atomically(where / "expected.npy", npy_bytes(case.expected))
        if test_data:
            write_atomically(where / "test_data_set_0" / "output_0.pb",
                             numpy_helper.from_array(np.asarray(case.expected), "output").SerializeToString())
        outputs["expected"] = "expected.npy"
    elif case.kind == CaseKind.AMBIGUOUS:
        for i, (label, out) in enumerate(sorted(case.interpretations.items())):
            outputs[label] = None if out is None else f"expected_{i}.npy"
            if out is not None:
                write_atomically(where / f"expected_{i}.npy", npy_bytes(out))
    return {"kind": case.kind, "reason": case.reason, "outputs": outputs}


def write_bundle(where: Path, shrunk, placement: Placement, runtime: str, runtime_version: str | None, job) -> str:
    """The bundle for ``shrunk`` (a padconf.minimize.minimize.Shrunk) in ``where``; returns its title."""
    case, row, outcome = shrunk.final.case, shrunk.final.row, shrunk.final.outcome
    make_folder(where)
    own = adapter_class(runtime)().bundle_model(case, placement, where)
    graph = build_model(case, placement) if own is None else None  # the ONNX model, built once for the bundle
    model, inputs = _write_inputs(where, case, placement, own, graph)
    if case.context is not None and graph is not None:  # its constants, which its repro loads where large
        for name, arr in model_source.model_arrays(graph).items():
            if not (where / f"{name}.npy").exists():
                write_atomically(where / f"{name}.npy", npy_bytes(arr))
    expect = _write_expected(where, case)
    if outcome.output is not None:
        write_atomically(where / "actual.npy", npy_bytes(outcome.output))
    needed = getattr(shrunk, "placement_needed", None)  # the minimal case's experiment, else the run's case
    heading = title(row, case, _placement_dependent(job, runtime) if needed is None else needed,
                    bool(shrunk.refused_when_folded), bool(getattr(shrunk, "positive_pads_needed", None)),
                    getattr(shrunk, "features", None))
    data = _described("data", case.data, "data.npy")
    # the checker runs the runtime by its name; a release (onnxruntime@1.23.2) is the version to install
    about = {"title": summary_line(row, case, runtime), "case": case_text(case), "runtime": without_release(runtime),
             "release": split_release(runtime)[1],
             "configuration": configuration(runtime), "model": model,
             "inputs": inputs, "expect": expect,
             "data": data, "output": {"ml_dtypes": data["ml_dtypes"], "string": data["string"]},
             "tolerance": case.context.tolerance if case.context else None,
             "placement": placement}  # with case.json: what `padconf bisect BUNDLE` runs
    write_atomically(where / "case.json", json.dumps(case.to_json()) + "\n")
    if model is not None:
        write_atomically(where / "repro.py", Path(generic_repro.__file__).read_bytes())
        write_atomically(where / "repro.json", json.dumps(about, indent=1) + "\n")
    api = api_script(case, placement, runtime, heading, row, graph)
    if api is not None:
        write_python(where / api_script_name(runtime), api)
    lowered = lowered_runtime(runtime)
    if shrunk.native and lowered is not None and shrunk.native.get("runtime") == lowered[0]:
        _write_native(where, shrunk, placement, heading)
    write_markdown(where / "REPORT.md", report_markdown(heading, shrunk, placement, runtime, runtime_version, job,
                                                        model, api, graph))
    return heading


def _placement_dependent(job, runtime: str) -> bool:
    """The run's original case passed in another placement on this runtime."""
    original = job.recorded["case_id"] if job.recorded else None
    return any(r["case_id"] == original and r["runtime"] == runtime and r["verdict"] not in FAILURES
               and r["placement"] != job.recorded["placement"] for r in job.run_rows)


def _write_native(where: Path, shrunk, placement: Placement, heading: str) -> None:
    """Where the bug is the operation's that the runtime lowers Pad to (native_check: openvino-onnx
    lowers to OpenVINO's Pad-12), that runtime's own repro in ``native/`` with its operands and
    expected outputs, to be filed there even where that runtime never drew the case (OpenVINO's
    CPU Pad turning a -0.0 pad value into +0.0, audit II); its path recorded in ``shrunk.native``."""
    native = shrunk.native
    case = native_case(shrunk.final.case, native["spec"])
    row = {"verdict": native["verdict"], "difference": shrunk.final.row.get("difference")}
    api = api_script(case, placement, native["runtime"], heading, row)
    if api is None:
        return
    folder = where / "native"
    make_folder(folder)
    for name, arr in {"data": case.data, **adapter_class(native["runtime"])().own_operands(case)}.items():
        write_atomically(folder / f"{name}.npy", npy_bytes(arr))
    _write_expected(folder, case, test_data=False)
    write_python(folder / api_script_name(native["runtime"]), api)
    native["repro"] = f"native/{api_script_name(native['runtime'])}"
