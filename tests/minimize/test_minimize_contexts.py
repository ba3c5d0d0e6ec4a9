"""`padconf minimize` on context cases, with the real rewriters and control runtimes:
a fusion bug keeps its consumer and its bundle's repro uses the rewriter's own call; a bug that
shows without the consumer becomes a plain Pad bundle; a context graph's source lines build the
very model padconf runs. Expected outputs are padconf's (its reference for the Pad, onnx's
evaluator for the consumer)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from padconf.cases.context import Consumer, Context, Producer
from padconf.cases.onnx_model import build_model, feeds
from padconf.cli import main
from padconf.minimize.bundle.model_source import model_lines
from padconf.minimize.bundle.scripts import _literal
from padconf.minimize.shrink.context import simpler_context
from tests.context_cases import MAX_POOL_2, context_case

pytest.importorskip("onnxoptimizer")


def _minimize(tmp_path, case, runtime="onnxoptimizer"):
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(case.to_json()) + "\n")
    out = tmp_path / "bundle"
    assert main(["minimize", str(path), "--runtime", runtime, "--out", str(out), "--time-limit", "20"]) == 0
    return out


@pytest.mark.slow
def test_the_maxpool_fusion_keeps_its_consumer_and_its_repro_is_onnxoptimizers_own_call(tmp_path):
    """Zeros padded round negative data, then MaxPool: fuse_pad_into_pool moves the pads into
    MaxPool, whose padding never wins a max, so the border turns negative."""
    case = context_case(-np.arange(1, 10).reshape(1, 1, 3, 3), [0, 0, 1, 1, 0, 0, 1, 1],
                        Context(Consumer.MAX_POOL, MAX_POOL_2, producer=Producer.CONSTANT_NODE))
    out = _minimize(tmp_path, case)
    report = (out / "REPORT.md").read_text()
    assert report.startswith("# after onnxoptimizer's fuse_pad_into_pool, Pad(constant) before MaxPool")
    assert "Pad in its neighbourhood:" in report and "MaxPool" in report
    assert [n.op_type for n in onnx.load(out / "model.onnx").graph.node][-2:] == ["Pad", "MaxPool"]
    script = (out / "repro_onnxoptimizer.py").read_text()
    assert "onnxoptimizer.optimize(model, configuration[\"passes\"])" in script
    assert "{'passes': ['fuse_pad_into_pool']}" in script
    assert "padconf" not in script.split('"""', 2)[2]  # imports nothing of padconf
    done = subprocess.run([sys.executable, "repro_onnxoptimizer.py"], cwd=out, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # the bug shows
    assert "the rewritten model:" in done.stdout
    data = np.load(out / "data.npy")
    assert data.min() < 0  # shrinking kept what the bug needs: a negative value under a window with a pad


@pytest.mark.slow
def test_a_bug_that_shows_without_the_consumer_gets_a_plain_bundle(tmp_path):
    """A planted rewriter bug (constant mode turned edge) that a Pad alone shows: the consumer
    and the Constant nodes go, and the bundle is the one-node Pad's."""
    attrs = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}
    ctx = Context(Consumer.CONV, attrs, weights=np.array([[[1.0, -2.0]]], np.float32), producer=Producer.CONSTANT_NODE)
    case = context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2], ctx)
    out = _minimize(tmp_path, case, "tests.context_cases:EdgeForConstant")
    assert [n.op_type for n in onnx.load(out / "model.onnx").graph.node] == ["Pad"]
    report = (out / "REPORT.md").read_text()
    assert "one Pad node" in report and "Pad(constant) returns wrong values" in report


def test_a_bug_that_needs_the_node_after_the_pad_keeps_it(tmp_path):
    """onnxoptimizer's eliminate_nop_pad removes a Pad of all-zero pads one short of twice the
    rank, which every runtime refuses, where a node reads the Pad's output (a graph output it
    leaves alone): the Slice stays, the data shrinks."""
    ctx = Context(Consumer.SLICE, {"starts": [0], "ends": [2], "axes": [0], "steps": [1]})
    out = _minimize(tmp_path, context_case([[1.0, 2.0], [3.0, 4.0]], [0, 0, 0], ctx))
    assert [n.op_type for n in onnx.load(out / "model.onnx").graph.node] == ["Pad", "Slice"]
    assert "eliminate_nop_pad, Pad(constant) before Slice accepts pads of the wrong length" in \
        (out / "REPORT.md").read_text()
    assert np.load(out / "data.npy").size == 1


def test_simpler_contexts_come_first_the_pad_alone_before_all():
    ctx = Context(Consumer.MAX_POOL, {**MAX_POOL_2, "strides": [2, 2], "ceil_mode": 1}, producer=Producer.TORCH_PAD,
                  static_shape=True)
    case = context_case(np.zeros((1, 1, 4, 4)), [0, 0, 1, 1, 0, 0, 1, 1], ctx)
    found = [c.context for c in simpler_context(case)]
    assert found[0] is None
    assert found[1].consumer == Consumer.NONE and found[1].producer == Producer.TORCH_PAD
    assert found[2].producer == Producer.INPUTS and found[3].static_shape is False
    assert {"strides": [1, 1]}.items() <= found[4].attrs.items() and found[5].attrs["ceil_mode"] == 0


@pytest.mark.parametrize("producer", list(Producer))
def test_a_context_graphs_source_lines_build_the_model_padconf_runs(producer):
    attrs = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}
    ctx = Context(Consumer.CONV, attrs, weights=np.array([[[1.0, -2.0]]], np.float32), producer=producer,
                  static_shape=producer == Producer.SHAPE_CHAIN)
    case = context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2], ctx)
    for placement in ("inputs", "initializers"):
        model = build_model(case, placement)
        arrays, build, names = model_lines(model, feeds(case, placement), _literal)
        scope: dict = {"np": np, "helper": helper, "numpy_helper": numpy_helper, "TensorProto": TensorProto,
                       "AttributeProto": AttributeProto}
        exec("\n".join([*arrays, *build, f"fed = {names}"]), scope)  # noqa: S102 -- padconf's own source
        built = scope["model"]
        assert built.graph.SerializeToString() == model.graph.SerializeToString()
        assert (built.opset_import, built.ir_version) == (model.opset_import, model.ir_version)
        assert scope["fed"].keys() == feeds(case, placement).keys()


def test_a_consumer_that_fails_on_the_pads_output_alone_is_not_the_pads_bug(tmp_path):
    """onnx's reference evaluator raises on a MaxPool of kernel 1 with auto_pad SAME_UPPER over
    [[[1.]]]. After a Pad of zero pads that is a failure of the context case, but the consumer
    control (the MaxPool on the Pad's output, the Pad a no-op) fails alike: not Pad-specific."""
    from tests.context_cases import context_case
    attrs = {"kernel_shape": [1], "strides": [1], "dilations": [1], "auto_pad": "SAME_UPPER", "ceil_mode": 0}
    case = context_case([[[1.0]]], [0, 0, 0, 0, 0, 0], Context(Consumer.MAX_POOL, attrs))
    assert case.kind == "defined" and case.consumer_control() is not None
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(case.to_json()) + "\n")
    out = tmp_path / "b"
    assert main(["minimize", str(path), "--runtime", "onnx-reference", "--out", str(out), "--time-limit", "3"]) == 0
    report = (out / "REPORT.md").read_text()
    assert "Triage: **not Pad-specific**" in report and "consumer" in report.split("Controls")[1][:800]


def test_one_consumer_of_two_and_a_written_mode_are_simpler_contexts():
    ctx = Context(Consumer.NONE, fanout=True, mode_attr=False)
    case = context_case(np.zeros((1, 1, 2)), [0, 0, 1, 0, 0, 1], ctx)
    found = [c.context for c in simpler_context(case)][1:]
    assert [(c.fanout, c.mode_attr) for c in found] == [(False, False), (True, True)]
