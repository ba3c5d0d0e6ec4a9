"""Exported graphs as test data: the fixed suite's cases of a framework's document (torch/Pad-2),
each exported by an exporter under test (``padconf generate --exporter torch-export``), written
in onnx's node-test layout beside the rest of the suite::

    out/exported/<exporter>/torch/test_<name>/           model.onnx (the exporter's graph),
                                                         test_data_set_0/input_0.pb, output_0.pb
    out/exported/<exporter>/torch-ambiguous/test_<name>/ model.onnx, test_data_set_0/input_0.pb,
                                                         output_<interpretation>.pb, expect.json

The expected outputs are the framework's document's (padconf's reference under the readings it
gives), never the exporter's or a runtime's: the graph is test data for the runtimes that run
exported models. Each case the exporter ran has a row in MANIFEST.yaml's ``exported_cases``:
its call, the exporter's answer and its verdict (a graph whose meaning ONNX leaves open is
``wrongly-rejected``: the graph is written, and its row says so). A call the document forbids
(must-reject) or the exporter refuses has a row and no folder: there is no graph to hold.

The exporter runs in padconf's own workers, as in a run (each variant in workers of its own:
torch's two exporters abort a process that ran the other); the graphs are read back from the
export cache those workers filled, through the adapter's ``bundle_model``, as minimize reads them.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import onnx

from padconf.adapters import get_adapter, unknown_runtime
from padconf.adapters.exporters import torch_call
from padconf.cases.case import CaseKind
from padconf.core.errors import PadconfError
from padconf.core.versions import package_version
from padconf.core.vocabulary import Placement
from padconf.execution.worker import Worker
from padconf.generate.files import interpretation_file, json_bytes, tensor_bytes
from padconf.judging.verdicts import judge
from padconf.suite.fixed import FRAMEWORK_DIRS, SuiteCase

EXPORTED = "exported"  # the folder below generate's output that holds every exporter's graphs


def exporter_dir(runtime: str) -> str:
    """A runtime's folder name: ``torch-export[dynamo=false]`` is ``torch-export.dynamo=false``."""
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", runtime.replace("[", ".").replace("]", "").replace(",", "."))


def check_exporters(runtimes: list[str]) -> None:
    """Each of ``runtimes`` one padconf knows, once: else one line."""
    for runtime in runtimes:
        why = unknown_runtime(runtime)
        if why:
            raise PadconfError(f"--exporter {runtime}: {why}")
    if len(set(map(exporter_dir, runtimes))) != len(runtimes):
        raise PadconfError(f"--exporter: one named twice ({', '.join(runtimes)})")


def write_exported(entries: list[SuiteCase], runtimes: list[str], root: Path) -> list[dict]:
    """Every framework case of ``entries`` exported by each of ``runtimes`` and written below
    ``root``/exported; the MANIFEST rows, one per case and exporter."""
    entries = [e for e in entries if e.domain in FRAMEWORK_DIRS]
    rows: list[dict] = []
    for runtime in runtimes:
        adapter = get_adapter(runtime)
        own = [e for e in entries if e.domain in adapter.domains]  # its framework's calls, not another's
        worker = Worker(runtime)
        try:
            answers = list(worker.run([e.case for e in own], Placement.INPUTS))
        finally:
            worker.close()
        packages = getattr(adapter, "framework_packages", ("torch", "onnxscript", "onnx"))
        versions = {p: package_version(p) for p in packages}
        for entry, (outcome, status) in zip(own, answers):
            rows.append(_write_one(entry, runtime, adapter, outcome, status, versions, root))
    return rows


def _write_one(entry: SuiteCase, runtime: str, adapter, outcome, status, versions: dict, root: Path) -> dict:
    case = entry.case
    ruling = judge(case, outcome, status)
    row: dict[str, Any] = {"exporter": runtime, "versions": versions, "spec": case.spec, "case_id": case.id,
                           "name": entry.name, "mode": case.mode, "dtype": case.dtype, "kind": case.kind,
                           "call": getattr(adapter, "framework_call", torch_call)(case), "verdict": str(ruling.verdict)}
    if ruling.detail:
        row["detail"] = ruling.detail[:500]
    if case.kind == CaseKind.MUST_REJECT:  # the document forbids the call: no graph is test data of it
        row.update(rule=case.rule, dir=None)
        return row
    where = root / EXPORTED / exporter_dir(runtime) / entry.path
    with tempfile.TemporaryDirectory() as scratch:
        name, _ = adapter.bundle_model(case, Placement.INPUTS, Path(scratch))
        if name is None:  # the exporter refused the call, or its graph is not in the cache: nothing to write
            row["dir"] = None
            return row
        model = onnx.load_model_from_string((Path(scratch) / name).read_bytes())
    data_set = where / "test_data_set_0"
    data_set.mkdir(parents=True)
    (where / "model.onnx").write_bytes(model.SerializeToString())
    (data_set / "input_0.pb").write_bytes(tensor_bytes(case.data, model.graph.input[0].name))
    row["dir"] = (Path(EXPORTED) / exporter_dir(runtime) / entry.path).as_posix()
    if case.kind == CaseKind.DEFINED:
        assert case.expected is not None  # a defined case has its output
        (data_set / "output_0.pb").write_bytes(tensor_bytes(case.expected, model.graph.output[0].name))
        return row
    outputs = {}
    for key, out in sorted(case.interpretations.items()):
        if out is not None:
            outputs[key] = f"test_data_set_0/output_{interpretation_file(key)}.pb"
            (where / outputs[key]).write_bytes(tensor_bytes(out, model.graph.output[0].name))
    row.update(ambiguity=case.reason, interpretations={key: outputs.get(key) for key in case.interpretations})
    (where / "expect.json").write_bytes(json_bytes({key: row[key] for key in (
        "spec", "mode", "dtype", "kind", "case_id", "call", "exporter", "ambiguity", "interpretations")}))
    return row
