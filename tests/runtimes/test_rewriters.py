"""Graph rewriters under test: onnxoptimizer on context cases, judged as the module
padconf.adapters.rewriters says. Each test runs the real onnxoptimizer and the real control
runtimes (onnx's reference evaluator, onnxruntime with its optimizer off); the expected outputs
are padconf's (its reference for the Pad, onnx's evaluator for the consumer)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest

from padconf.adapters import get_adapter
from padconf.adapters.rewriters import OnnxOptimizerAdapter, RewriterAdapter
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.context import Consumer, Context, Producer
from padconf.cases.onnx_model import build_model
from padconf.judging.verdicts import Verdict, judge
from padconf.spec.loader import get_spec
from tests.context_cases import MAX_POOL_2, SPEC, context_case

pytest.importorskip("onnxoptimizer")


def _maxpool_case(producer=Producer.INPUTS) -> Case:
    return context_case(-np.ones((1, 1, 2, 2)), [0, 0, 1, 1, 0, 0, 1, 1], Context(Consumer.MAX_POOL, MAX_POOL_2,
                                                                             producer=producer))


@pytest.mark.parametrize("producer", [Producer.INPUTS, Producer.CONSTANT_NODE])
def test_fuse_pad_into_pool_changes_maxpool_over_negative_data(producer):
    """The Pad's zeros win a max over negative data; MaxPool's own padding never does. Fused,
    the border of the output is -1 where the specification says 0 (onnx/optimizer#269 class).
    When onnxoptimizer fixes it, this test fails: then move it to the passing list below."""
    case = _maxpool_case(producer)
    outcome = OnnxOptimizerAdapter().run(case, "initializers")
    ruling = judge(case, outcome)
    assert ruling.verdict == Verdict.MISMATCH, (ruling, outcome)
    assert outcome.note and "fuse_pad_into_pool changes it" in outcome.note
    assert outcome.output is not None and outcome.output[0, 0, 0, 0] != case.expected[0, 0, 0, 0]


def test_a_pad_fed_at_run_time_is_left_alone_which_is_fine():
    outcome = OnnxOptimizerAdapter().run(_maxpool_case(), "inputs")
    assert outcome.skipped and "left the model as it was" in outcome.skipped


def test_a_rewrite_that_keeps_the_meaning_passes():
    attrs = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}
    ctx = Context(Consumer.CONV, attrs, weights=np.array([[[1.0, -2.0]]], np.float32))
    case = context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2], ctx)
    outcome = OnnxOptimizerAdapter().run(case, "initializers")
    assert outcome.note and "rewrote the model" in outcome.note  # fuse_pad_into_conv did fuse it
    assert judge(case, outcome).verdict == Verdict.PASS


class _DropsThePad(RewriterAdapter):
    """A rewriter that bypasses the Pad: its output model computes the consumer on the raw data."""

    name = "drops-the-pad"
    passes = ("drop",)

    def rewrite(self, model, passes):
        out = onnx.ModelProto()
        out.CopyFrom(model)
        graph = out.graph
        (pad,) = [n for n in graph.node if n.op_type == "Pad"]
        for node in graph.node:
            node.input[:] = [pad.input[0] if i == pad.output[0] else i for i in node.input]
        graph.node.remove(pad)
        return out


class _Breaks(RewriterAdapter):
    name = "breaks"

    def rewrite(self, model, passes):
        out = onnx.ModelProto()
        out.CopyFrom(model)
        out.graph.node[-1].input[0] = "nowhere"
        return out


class _Raises(RewriterAdapter):
    name = "raises"

    def rewrite(self, model, passes):
        raise RuntimeError("boom")


def test_changed_values_invalid_models_and_crashes_are_the_rewriters():
    case = _maxpool_case()
    dropped = _DropsThePad().run(case, "initializers")
    assert judge(case, dropped).verdict == Verdict.MISMATCH  # shape [1, 1, 1, 1] for [1, 1, 3, 3]
    assert dropped.note and "on onnx-reference the rewritten model gives shape [1, 1, 1, 1]" in dropped.note
    broken = _Breaks().run(case, "initializers")
    assert broken.output is None and broken.error and broken.error.startswith("onnx.checker (full_check) rejects")
    assert judge(case, broken).verdict == Verdict.WRONGLY_REJECTED
    raised = _Raises().run(case, "initializers")
    assert raised.error == "raises raised: RuntimeError: boom"


def test_onnxruntime_with_and_without_its_optimizer_agree_on_a_context_case():
    case = _maxpool_case(Producer.CONSTANT_NODE)
    for adapter in (get_adapter("onnxruntime"), get_adapter("onnxruntime[optimization=disabled]")):
        outcome = adapter.run(case, "initializers")
        assert judge(case, outcome).verdict == Verdict.PASS
        assert outcome.note is None  # no difference for the optimizer's note to attribute


@pytest.mark.slow
def test_a_run_carries_the_rewriters_skips_and_notes_through_its_workers(tmp_path):
    """padconf run with the rewriter by module:Class: a skip or a note the adapter returns from
    run() reaches results.jsonl (the worker's answer carries them)."""
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "padconf.cli", "run", "--runtime",
                           "padconf.adapters.rewriters:OnnxOptimizerAdapter", "--spec", SPEC, "--max-examples", "60",
                           "--jobs", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert any(r["verdict"] == "skipped" and "left the model as it was" in (r["detail"] or "") for r in rows)
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert any(c.get("context") for c in cases)
    assert all(c["kind"] in tuple(CaseKind) for c in cases)


def _plain(spec, **kw) -> Case:
    return classify(Case(spec=spec, **kw), get_spec(spec))


_CONV = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}


@pytest.mark.parametrize("name", ["onnxscript", "onnxslim", "onnxsim"])
def test_each_rewriter_fuses_a_zero_pad_into_conv_keeping_its_meaning(name):
    """Each fuses constant zero pads into Conv's own pads (seen in their outputs: one Conv node)."""
    ctx = Context(Consumer.CONV, _CONV, weights=np.array([[[1.0, -2.0]]], np.float32))
    case = context_case([[[3.0, 5.0, -1.0, 2.0]]], [0, 0, 1, 0, 0, 1], ctx)
    adapter = get_adapter(name)
    assert [n.op_type for n in adapter.rewrite(build_model(case, "initializers"), adapter.passes).graph.node] == \
        ["Conv"]
    outcome = adapter.run(case, "initializers")
    assert outcome.note and "rewrote the model" in outcome.note
    assert judge(case, outcome).verdict == Verdict.PASS


def test_a_rewrite_of_a_model_the_control_runtimes_answer_wrongly_is_not_the_rewriters():
    """onnx's reference pads string data with the integer 0 where the specification says "":
    a rewrite keeping that answer is no verdict on the rewriter (skipped, saying so)."""
    case = _plain("onnx/Pad-13", data=np.array(["a", "b"], dtype=object), pads=[1, 0])
    outcome = get_adapter("onnxscript").run(case, "initializers")
    assert outcome.skipped and "which the specification does not allow: no verdict on the rewrite" in outcome.skipped


def test_the_version_converter_up_down_refusing_and_converting_into_an_invalid_model():
    up, down = get_adapter("onnx-version-converter"), get_adapter("onnx-version-converter[direction=down]")
    assert up.supports("onnx/Pad-21", "float") and down.supports("onnx/Pad-2", "float")  # no such conversion
    wrap_up = _plain("onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 1], mode="wrap")
    assert judge(wrap_up, up.run(wrap_up, "initializers")).verdict == Verdict.PASS  # 19 -> 21 keeps wrap
    pad2 = _plain("onnx/Pad-2", data=np.arange(3, dtype=np.float32), pads=[1, 1])
    assert judge(pad2, up.run(pad2, "initializers")).verdict == Verdict.PASS  # pads attribute -> input, at 11
    pad11 = _plain("onnx/Pad-11", data=np.arange(3, dtype=np.float32), pads=[1, 1])
    refused = down.run(pad11, "initializers")
    assert refused.skipped and "No Adapter From Version $11 for Pad" in refused.skipped
    wrap = _plain("onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 1], mode="wrap")
    invalid = down.run(wrap, "initializers")  # onnx's converter keeps mode wrap at opset 18
    assert invalid.error and "opset 18, whose Pad forbids it (mode 'wrap'" in invalid.error
    assert judge(wrap, invalid).verdict == Verdict.WRONGLY_REJECTED


def test_onnxruntimes_pass_is_named_by_disabling_it_alone(tmp_path):
    """PadFusion (the rule Pad_Fusion) is what turns Pad+Conv into Conv: disabled alone, the
    optimized model keeps its Pad."""
    import onnxruntime as ort

    from padconf.adapters.onnxruntime import _new_session, culprit_pass, optimizer_pass
    ctx = Context(Consumer.CONV, _CONV, weights=np.array([[[1.0, -2.0]]], np.float32))
    model = build_model(context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 1], ctx), "initializers").SerializeToString()

    def optimized_ops(disabled=None) -> list[str]:
        _new_session(ort, model, save_to=str(tmp_path / "optimized.onnx"), disabled=disabled)
        return [n.op_type for n in onnx.load(tmp_path / "optimized.onnx").graph.node]

    assert optimized_ops() == ["Conv"]
    assert culprit_pass(lambda disabled: "Pad" in optimized_ops(disabled)) == "Pad_Fusion"
    assert optimizer_pass("...; with only Pad_Fusion disabled it gives what the unoptimized model gives: ...") == \
        "fuses Pad into its consumer (PadFusion)"
