"""torch's own document as a spec (specs/torch/Pad-2.yaml), torch's eager F.pad and
torch.onnx.export (dynamo and TorchScript) as implementations under test, on the real torch
(padconf.adapters.exporters). The findings below are torch 2.13.0's (docs/findings.md): when
torch fixes one, its test fails, and the finding moves to the passing list."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from padconf.adapters import get_adapter
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify, last_dim_first_pairs
from padconf.cases.strategies import draw_cases
from padconf.execution.worker import Worker
from padconf.judging.verdicts import Verdict, judge
from padconf.spec.loader import get_spec

pytestmark = pytest.mark.slow  # every test here exports with torch in a worker

pytest.importorskip("torch")
SPEC = "torch/Pad-2"


@pytest.fixture(autouse=True)
def _own_export_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PADCONF_COMPILE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PADCONF_COMPILE_CACHE_KEY", str(tmp_path / "cache.key"))


@pytest.fixture(scope="module")
def workers():
    """One worker per runtime, as a run has: the dynamo and TorchScript exporters abort a process
    that ran the other (each variant is a runtime of its own, in its own workers)."""
    found: dict[str, Worker] = {}
    yield found
    for worker in found.values():
        worker.close()


def _run(workers, runtime: str, case: Case):
    worker = workers.setdefault(runtime, Worker(runtime))
    outcome, status = worker.run_alone(case, "inputs")
    assert status == "ok", (status, outcome)
    return outcome


def _case(data, pads, mode="constant", value=None) -> Case:
    data = np.asarray(data, dtype=np.float32)
    return classify(Case(spec=SPEC, data=data, pads=pads, mode=mode,
                         constant_value=None if value is None else np.float32(value).reshape(())), get_spec(SPEC))


def _arange(*shape) -> np.ndarray:
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)


def test_torch_documents_pads_last_axis_first_and_its_bounds():
    """The layout (``(padding_left, padding_right)`` of the last axis first), the modes and ranks
    the document implements, reflect's "less than", circular's "less than or equal to" and
    replicate's "must remain positive"."""
    case = _case(_arange(1, 2, 3), [0, 1, 2, 0, 3, 4])
    assert last_dim_first_pairs(case) == [2, 4, 1, 3]
    assert _case(_arange(1, 2, 3), [0, 0, 2, 0, 0, 2], "reflect").kind == CaseKind.DEFINED
    assert _case(_arange(1, 2, 3), [0, 0, 3, 0, 0, 0], "reflect").rule == "pad_bound"
    assert _case(_arange(1, 2, 3), [0, 0, 3, 0, 0, 0], "wrap").kind == CaseKind.DEFINED
    assert _case(_arange(1, 2, 3), [0, 0, 4, 0, 0, 0], "wrap").rule == "pad_bound"
    assert _case(_arange(1, 2, 3), [0, 0, -3, 0, 0, 0], "edge").rule == "output_dims_positive"
    assert _case(_arange(3), [1, 1], "reflect").rule == "padded_dims"  # 1-D: not implemented
    assert _case(_arange(2, 3), [1, 1, 1, 1], "reflect").rule == "padded_dims"  # 2 dims of a 2-D input
    assert _case(_arange(1, 1, 1, 1, 1, 2), [0] * 5 + [1] + [0] * 5 + [1]).kind == CaseKind.DEFINED


def test_the_drawing_gives_torch_cases_the_document_defines_in_every_mode():
    cases = draw_cases(get_spec(SPEC), 250, seed=1)
    defined = {c.mode for c in cases if c.kind == CaseKind.DEFINED}
    assert defined == {"constant", "reflect", "edge", "wrap"}
    assert all(c.data.ndim in (2, 3, 4, 5) for c in cases if c.kind == CaseKind.DEFINED and c.mode != "constant")


@pytest.mark.parametrize("runtime", ["torch", "torch-export", "torch-export[dynamo=false]",
                                     "torch-export[call=module]"])
@pytest.mark.parametrize("mode, pads", [("constant", [0, 0, 1, 0, 0, 2]), ("reflect", [0, 0, 2, 0, 0, 1]),
                                        ("edge", [0, 0, 3, 0, 0, 1]), ("wrap", [0, 1, 1, 0, 1, 2]),
                                        ("constant", [0, 0, -1, 0, 0, -2])])
def test_plain_pads_pass_on_eager_torch_and_both_exporters(workers, runtime, mode, pads):
    case = _case(_arange(1, 2, 4), pads, mode)
    assert case.kind == CaseKind.DEFINED
    if (runtime, mode) == ("torch-export[dynamo=false]", "wrap"):  # a finding: the next test
        return
    outcome = _run(workers, runtime, case)
    assert judge(case, outcome).verdict == Verdict.PASS, outcome


def test_the_torchscript_exporter_aborts_on_circular_padding_of_two_dimensions(workers):
    """torch.onnx.export(dynamo=False) of F.pad(x, (1, 2, 1, 1), "circular") on a 3-D input:
    glibc's "free(): invalid pointer" kills the process; padconf's worker reports the crash."""
    case = _case(_arange(1, 2, 4), [0, 1, 1, 0, 1, 2], "wrap")
    worker = workers.setdefault("torch-export[dynamo=false]", Worker("torch-export[dynamo=false]"))
    outcome, status = worker.run_alone(case, "inputs")
    assert status == "crash" and "SIGABRT" in outcome.error, (status, outcome)


@pytest.mark.parametrize("runtime", ["torch-export", "torch-export[dynamo=false]"])
def test_both_exporters_write_a_mixed_sign_reflect_pad_onnx_leaves_open(workers, runtime):
    """F.pad(x, (-3, 2), "reflect") on 4 elements: torch's document pads the input's own
    coordinates (eager torch computes it); both exporters write one ONNX Pad with pads
    [-3, 2], which ONNX's mixed_sign_pads leaves open, and which onnxruntime refuses."""
    case = _case(_arange(1, 1, 4), [0, 0, -3, 0, 0, 2], "reflect")
    assert case.kind == CaseKind.DEFINED
    assert _run(workers, "torch", case).output.tolist() == case.expected.tolist()
    outcome = _run(workers, runtime, case)
    assert judge(case, outcome).verdict == Verdict.WRONGLY_REJECTED, outcome
    assert "leaves open (mixed_sign_pads" in outcome.error
    assert "onnxruntime refuses it" in outcome.note


def test_circular_negative_pads_eager_crops_first_the_document_pads_the_input(workers):
    """CircularPad: "Tensor values at the beginning of the dimension are used to pad the end";
    eager torch wraps the cropped tensor instead; the TorchScript exporter's Slice/Concat graph
    has the wrong shape; the dynamo exporter writes a Pad(wrap) ONNX leaves open."""
    case = _case(_arange(1, 1, 5), [0, 0, -1, 0, 0, 2], "wrap")
    assert case.expected.reshape(-1).tolist() == [2, 3, 4, 5, 1, 2]
    eager = _run(workers, "torch", case)
    assert eager.output.reshape(-1).tolist() == [2, 3, 4, 5, 2, 3]
    assert judge(case, eager).verdict == Verdict.MISMATCH
    script = _run(workers, "torch-export[dynamo=false]", case)
    assert judge(case, script).verdict == Verdict.MISMATCH and script.output.shape != case.expected.shape, script
    dynamo = _run(workers, "torch-export", case)
    assert judge(case, dynamo).verdict == Verdict.WRONGLY_REJECTED and "leaves open" in dynamo.error, dynamo


def test_the_onnxruntime_variant_judges_the_pipeline_a_user_runs(workers):
    case = _case(_arange(1, 1, 4), [0, 0, -3, 0, 0, 2], "reflect")
    outcome = _run(workers, "torch-export[on=onnxruntime]", case)
    assert outcome.error and outcome.error.startswith("onnxruntime:"), outcome


def test_an_export_is_cached_by_its_call(tmp_path):
    """Cases of one call (shape, dtype, pads, mode, value) share one export; a second adapter
    (a new worker) reads it from the cache on disk, and the bundle gets the exported graph."""
    adapter = get_adapter("torch-export")
    case = _case(_arange(1, 2, 3), [0, 0, 1, 0, 0, 1], "reflect")
    first = adapter.exported(case)
    other = get_adapter("torch-export")
    other._export = None  # an export now would raise: the cache must answer
    assert other.exported(case.with_(data=case.data * 2)) == first
    name, fed = other.bundle_model(case, "inputs", tmp_path)
    assert name == "model.onnx" and (tmp_path / name).read_bytes() == first and list(fed) == ["x"]


def test_a_run_finds_the_exporters_findings_through_its_workers(tmp_path):
    """padconf run --runtime torch-export on the document's cases reaches results.jsonl through
    its workers; the examples of the document pass."""
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "padconf.cli", "run", "--runtime", "torch-export", "--spec", SPEC,
                           "--max-examples", "40", "--jobs", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    examples = [r for r in rows if r["case_id"].startswith(SPEC) and r["verdict"] in ("pass", "mismatch")
                and "example" in json.dumps(r)]
    assert rows and all(r["runtime"] == "torch-export" for r in rows)
    assert any(r["verdict"] == "pass" for r in rows), examples


def test_every_run_holds_the_exporters_findings_and_minimize_bundles_each_with_a_torch_repro(tmp_path):
    """The findings' triggers (padconf.cases.plain.upstream_triggers) are in every torch run,
    however few cases it draws; torch-export fails on both, and `padconf minimize RUN:<id>
    --runtime torch-export` writes a bundle whose repro (torch.onnx.export, then onnxruntime)
    exits 1 and whose report names torch's document."""
    out = tmp_path / "run"
    run = [sys.executable, "-m", "padconf.cli", "run", "--runtime", "torch-export", "--spec", SPEC,
           "--max-examples", "4", "--jobs", "1", "--out", str(out)]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    found = {r["origin"]: r for r in rows if r["origin"].startswith("upstream-trigger:torch-")}
    assert set(found) == {"upstream-trigger:torch-reflect-mixed-sign", "upstream-trigger:torch-circular-negative"}
    for origin, row in found.items():
        assert row["verdict"] == "wrongly-rejected" and "leaves open" in row["error"], row
        bundle = tmp_path / origin.split(":")[1]
        proc = subprocess.run([sys.executable, "-m", "padconf.cli", "minimize", f"{out}:{row['case_id']}",
                               "--runtime", "torch-export", "--time-limit", "20", "--out", str(bundle)],
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
        repro = (bundle / "repro_torch_export.py").read_text()
        assert "torch.onnx.export(" in repro and "onnxruntime.InferenceSession" in repro
        report = (bundle / "REPORT.md").read_text()
        assert "PyTorch F.pad Pad-2" in report and "OpenVINO" not in report.splitlines()[0]
        ran = subprocess.run([sys.executable, "repro_torch_export.py"], cwd=bundle, capture_output=True, text=True,
                             timeout=600)
        assert ran.returncode == 1, ran.stdout[-2000:]
