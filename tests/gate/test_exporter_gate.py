"""`padconf gate` of a framework exporter (a framework team's CI): the gate's suite holds the
framework document's cases (torch/Pad-2) when the gated runtime reads that document or --spec names
it, and a regression planted in an exporter plugin's graphs fails the gate."""
import pytest

from padconf.cases.case import CaseKind
from padconf.cli import main
from padconf.gate.gate import framework_domains, reads_framework
from padconf.gate.selection import gate_cases
from padconf.run.rundir import read_jsonl
from padconf.spec.loader import get_spec

FAKE = "tests.fake_adapters:"
TORCH = ["--spec", "torch/Pad-2", "--mode", "reflect", "--dtype", "float"]


def test_the_suite_holds_a_framework_document_only_for_a_gate_that_asks_for_it():
    torch = get_spec("torch/Pad-2")
    assert gate_cases([torch]) == []  # ONNX's and OpenVINO's runtimes never see torch's calls
    cases = gate_cases([torch], frameworks=True)
    assert {c.spec for c in cases} == {"torch/Pad-2"}
    assert {c.mode for c in cases if c.kind == CaseKind.DEFINED} == {"constant", "reflect", "edge", "wrap"}
    assert reads_framework("torch-export") and reads_framework("torch[call=module]")
    assert not reads_framework("onnxruntime") and not reads_framework(FAKE + "ConformingAdapter")
    # each exporter reads its own framework's document only: a gate of one puts no other's calls to it
    assert framework_domains("torch-export") == {"torch"} and framework_domains("tf-export[opset=18]") == {"tf"}
    assert framework_domains("tf") == {"tf"} and framework_domains("onnxruntime") == set()


@pytest.mark.slow
def test_a_regression_planted_in_an_exporter_plugin_fails_the_gate_the_real_exporter_passes(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("[]\n")

    def gate(runtime, work):
        return main(["gate", "--runtime", runtime, "--baseline", str(baseline), "--work", str(tmp_path / work), *TORCH])

    assert gate("torch-export", "real") == 0
    assert "passed: nothing new" in capsys.readouterr().out
    real = read_jsonl(tmp_path / "real" / "results.jsonl")
    assert real and {r["spec"] for r in real} == {"torch/Pad-2"} and any(r["verdict"] == "pass" for r in real)

    assert gate(FAKE + "ReflectAsEdgeExporter", "planted") == 1
    out = capsys.readouterr().out
    planted = read_jsonl(tmp_path / "planted" / "results.jsonl")
    bad = [r for r in planted if r["verdict"] == "mismatch"]
    # every case the real exporter passes, the planted one fails: on distinct values, edge repeats
    # the border where reflect mirrors past it
    assert {r["case_id"] for r in bad} == {r["case_id"] for r in real if r["verdict"] == "pass"}
    for row in bad:
        assert f"new: {row['case_id']} [inputs]: mismatch: " in out
    assert "FAILED: " in out
