"""Context cases: Pad with a consumer after it, a producer of its pads, a static
shape. The oracle is padconf's reference for the Pad and onnx's reference evaluator for the
consumer; these tests check it against values worked out by hand, and the producers' chains
against padconf's reference, on onnx's evaluator."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from padconf.cases.case import KINDS, Case, CaseKind
from padconf.cases.classify import breaks_one_rule, classify
from padconf.cases.context import Consumer, Context, Producer, snap
from padconf.cases.context_draw import applies
from padconf.cases.context_model import shape_offsets, torch_order
from padconf.cases.context_oracle import OracleUnsure, consume, documented_shape
from padconf.cases.onnx_model import build_model, feeds, model_key
from padconf.cases.strategies import draw_cases, foci
from padconf.core.errors import CaseError
from padconf.spec.loader import get_spec, load_specs, parse_spec_id
from padconf.spec.reference import pad
from tests.context_cases import MAX_POOL_2, SPEC, context_case


def test_maxpool_after_a_zero_pad_takes_the_zero_over_negative_data():
    # padded 4x4: a border of zeros round -1s; each 2x2 window but the middle one holds a zero
    case = context_case(-np.ones((1, 1, 2, 2)), [0, 0, 1, 1, 0, 0, 1, 1], Context(Consumer.MAX_POOL, MAX_POOL_2))
    assert case.kind == CaseKind.DEFINED
    want = np.zeros((1, 1, 3, 3), np.float32)
    want[0, 0, 1, 1] = -1
    assert case.expected is not None and case.expected.dtype == np.float32
    np.testing.assert_array_equal(case.expected, want)
    assert case.context is not None and case.context.tolerance is None  # MaxPool: exact


@pytest.mark.parametrize("auto_pad, want", [("SAME_LOWER", [5, 5, 2]), ("SAME_UPPER", [5, 2, 2])])
def test_same_lower_puts_the_odd_pad_at_the_beginning_as_the_pool_documents_say(auto_pad, want):
    """MaxPool's document: "the extra padding is added at the end for SAME_UPPER and at the
    beginning for SAME_LOWER". onnx's reference evaluator adds it at the end for both; the
    oracle hands it explicit pads. [5, 1] padded to [5, 1, 2], a window of 2 along it: SAME_LOWER's
    windows are [pad, 5], [5, 1], [1, 2]. onnxruntime, run on the whole model, agrees."""
    ort = pytest.importorskip("onnxruntime")
    attrs = {"kernel_shape": [1, 2], "strides": [1, 1], "auto_pad": auto_pad, "ceil_mode": 1}
    case = context_case([[[[5, 1]]]], [0, 0, 0, 0, 0, 0, 0, 1], Context(Consumer.MAX_POOL, attrs),
                        constant_value=np.float32(2))
    assert case.kind == CaseKind.DEFINED and case.expected is not None
    assert case.expected.reshape(-1).tolist() == want
    session = ort.InferenceSession(build_model(case, "inputs").SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, feeds(case, "inputs"))[0].reshape(-1).tolist() == want


def test_average_pool_counts_the_pads_zeros_and_carries_a_tolerance():
    attrs = {"kernel_shape": [2], "strides": [1], "auto_pad": "NOTSET", "pads": [0, 0], "ceil_mode": 0,
             "count_include_pad": 0}
    case = context_case([[[4.0, 8.0]]], [0, 0, 1, 0, 0, 1], Context(Consumer.AVERAGE_POOL, attrs))
    # padded [0, 4, 8, 0]: the Pad's zeros are data to AveragePool, whatever count_include_pad says
    np.testing.assert_array_equal(case.expected, np.array([[[2.0, 6.0, 4.0]]], np.float32))
    assert case.context is not None and 0 < case.context.tolerance < 1e-4


def test_conv_weights_sum_over_the_padded_input():
    attrs = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}
    ctx = Context(Consumer.CONV, attrs, weights=np.array([[[1.0, -2.0]]], np.float32))
    case = context_case([[[3.0, 5.0]]], [0, 0, 1, 0, 0, 0], ctx)  # padded [0, 3, 5]
    np.testing.assert_array_equal(case.expected, np.array([[[0 - 6.0, 3 - 10.0]]], np.float32))


def test_slice_and_a_second_pad_after_the_pad():
    data = np.arange(4, dtype=np.float32).reshape(1, 4)
    ctx = Context(Consumer.SLICE, {"starts": [-1], "ends": [-100], "axes": [1], "steps": [-2]})
    case = context_case(data, [0, 1, 0, 0], ctx, mode="edge")  # padded [0, 0, 1, 2, 3], reversed by twos
    np.testing.assert_array_equal(case.expected, np.array([[3, 1, 0]], np.float32))
    second = context_case(data, [0, 1, 0, 0], Context(Consumer.PAD, {"pads": [0, 0, 0, 1], "value": 7}))
    np.testing.assert_array_equal(second.expected, np.array([[0, 0, 1, 2, 3, 7]], np.float32))


def test_every_reading_of_an_undefined_point_is_passed_through_the_consumer():
    spec = get_spec(SPEC)
    plain = classify(Case(spec=SPEC, data=np.arange(3, dtype=np.float32), pads=[-4, 0]), spec)
    assert plain.kind == CaseKind.AMBIGUOUS  # cropping beyond the dimension
    ctx = Context(Consumer.PAD, {"pads": [1, 0], "value": 5})
    case = classify(plain.with_(context=ctx), spec)
    assert case.kind == CaseKind.AMBIGUOUS and case.interpretations.keys() == plain.interpretations.keys()
    for name, out in plain.interpretations.items():
        got = case.interpretations[name]
        assert (got is None) == (out is None)
        if out is not None:
            np.testing.assert_array_equal(got, np.concatenate([[5], out]).astype(np.float32))


def test_torch_order_reverses_the_axes_and_drops_leading_zero_pairs():
    case = Case(spec=SPEC, data=np.zeros((1, 1, 2, 3), np.float32), pads=[0, 0, 1, 2, 0, 0, 3, 4])
    assert torch_order(case).tolist() == [2, 4, 1, 3]
    assert shape_offsets(case).tolist() == [1, 1, 1, 1, 1, 1, -1, -1]


@pytest.mark.parametrize("producer", list(Producer))
@pytest.mark.parametrize("placement", ["inputs", "initializers"])
@pytest.mark.parametrize("static", [False, True])
def test_each_producer_gives_the_pad_its_pads(producer, placement, static):
    """The chains run on onnx's evaluator, their Pad's output compared with padconf's reference."""
    data = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    case = context_case(data, [0, 0, 2, 0, 1, 1], Context(Consumer.NONE, producer=producer, static_shape=static))
    model = build_model(case, placement)
    assert [n.op_type for n in model.graph.node].count("Pad") == 1
    (out,) = ReferenceEvaluator(model).run(None, feeds(case, placement))
    np.testing.assert_array_equal(out, pad(data, [0, 0, 2, 0, 1, 1]))
    np.testing.assert_array_equal(out, case.expected)
    names = {i.name for i in model.graph.input}
    assert names == set(feeds(case, placement))
    dims = [d.dim_value or d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ([1, 2, 3] if static else ["d0", "d1", "d2"])


def test_context_cases_round_trip_and_key_their_models_apart():
    ctx = Context(Consumer.CONV, {"kernel_shape": [1], "strides": [1], "dilations": [1], "auto_pad": "NOTSET",
                                  "pads": [0, 0], "group": 1}, weights=np.ones((1, 1, 1), np.float32))
    case = context_case([[[1.0, 2.0]]], [0, 0, 1, 0, 0, 1], ctx)
    back = Case.from_json(json.loads(json.dumps(case.to_json())))
    assert back.id == case.id and back.same_inputs(case) and back.context is not None
    assert back.context.key() == ctx.key() and back.context.tolerance == case.context.tolerance
    plain = case.with_(context=None)
    assert plain.id != case.id and model_key(plain) != model_key(case)
    assert case.control().context is None  # the control is the data through Identity


@pytest.mark.parametrize("bad", [{"consumer": "Gemm"}, {"producer": "magic"}, {"attrs": {"pads": [1.5]}},
                                 {"attrs": {"x": {"y": 1}}}, {"tolerance": "big"}, {"static_shape": 1}, []])
def test_a_malformed_context_is_a_case_error(bad):
    case = context_case([[[1.0]]], [0, 0, 0, 0, 0, 0], Context(Consumer.SLICE, {"starts": [0], "ends": [1], "axes": [0],
                                                                          "steps": [1]}))
    doc = case.to_json()
    doc["context"] = bad if isinstance(bad, list) else {**doc["context"], **bad}
    with pytest.raises(CaseError):
        Case.from_json(doc)


def test_snap_takes_outputs_within_the_tolerance_and_nothing_else():
    ctx = Context(Consumer.CONV, tolerance=1e-3)
    expected = np.array([1.0, np.inf, np.nan], np.float32)
    assert snap(ctx, expected, np.array([1.0005, np.inf, np.nan], np.float32)) is expected
    for got in ([1.01, np.inf, np.nan], [1.0, -np.inf, np.nan], [1.0, np.inf, 0.0]):
        arr = np.array(got, np.float32)
        assert snap(ctx, expected, arr) is arr
    exact = np.array([1.0005, np.inf, np.nan], np.float32)
    assert snap(Context(Consumer.MAX_POOL), expected, exact) is exact


def test_drawn_context_cases_cover_every_consumer_producer_and_shape_kind():
    spec = get_spec(SPEC)
    context_foci = [f for f in foci(spec) if f.startswith("context:")]
    assert context_foci == [f"context:{c}" for c in Consumer]
    cases = [c for c in draw_cases(spec, 0, seed=0, shares={f: 12 for f in context_foci}) if c.context]
    seen = {tag for c in cases for tag in c.tags}
    assert {f"context:{c}" for c in Consumer} <= seen
    assert {f"producer:{p}" for p in Producer} <= seen and {"static-shape", "symbolic-shape"} <= seen
    for case in cases:
        assert case.kind in KINDS and case.dtype == "float"
        if case.kind == CaseKind.DEFINED:
            assert case.expected is not None
        if case.kind == CaseKind.MUST_REJECT:
            assert breaks_one_rule(case, spec)


def test_consume_refuses_what_the_consumer_refuses():
    too_big = {**MAX_POOL_2, "kernel_shape": [3, 3], "pads": [0, 0, 0, 0]}
    assert consume(Context(Consumer.MAX_POOL, too_big), np.zeros((1, 1, 2, 2), np.float32), 18) is None


def test_maxpool_is_computed_as_its_document_says_where_onnxs_evaluator_fails():
    # onnx 1.23.2's MaxPool over [1, 1, 6] with kernel 3 and pads [1, 2] raises IndexError; the
    # document gives 7 windows (floor((6 + 3 - 2 - 1) / 1 + 1)), each the max of what it covers
    ctx = Context(Consumer.MAX_POOL, {"kernel_shape": [3], "strides": [1], "dilations": [1], "auto_pad": "NOTSET",
                                      "pads": [1, 2], "ceil_mode": 0})
    assert documented_shape(ctx, (1, 1, 6)) == (1, 1, 7)
    out = consume(ctx, np.arange(6, dtype=np.float32).reshape(1, 1, 6), 18)
    np.testing.assert_array_equal(out, np.array([[[1, 2, 3, 4, 5, 5, 5]]], np.float32))
    unpadded = Context(Consumer.MAX_POOL, {**ctx.attrs, "pads": [0, 0], "kernel_shape": [2], "strides": [2]})
    assert documented_shape(unpadded, (1, 1, 6)) == (1, 1, 3)
    out = consume(unpadded, np.arange(6, dtype=np.float32).reshape(1, 1, 6), 18)
    np.testing.assert_array_equal(out, np.array([[[1, 3, 5]]], np.float32))


def test_the_oracle_refuses_a_window_that_covers_no_input():
    # pads of 3 before a kernel of 2: the first window holds padding only, a value no document gives
    ctx = Context(Consumer.MAX_POOL, {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET",
                                      "pads": [3, 0], "ceil_mode": 0})
    with pytest.raises(OracleUnsure):
        consume(ctx, np.zeros((1, 1, 2), np.float32), 18)


def test_minimize_runs_a_context_case_and_says_in_one_line_where_it_does_not_fail(tmp_path, capsys):
    """minimize takes a context case as any case (tests/minimize/test_minimize_contexts.py shrinks them):
    on a runtime that gets it right, one line, exit 2."""
    from padconf.cli import main
    case = context_case(-np.ones((1, 1, 2, 2)), [0, 0, 1, 1, 0, 0, 1, 1],
                        Context(consumer=Consumer.MAX_POOL, attrs=MAX_POOL_2))
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(case.to_json()) + "\n")
    assert main(["minimize", str(path), "--runtime", "onnx-reference", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not fail on onnx-reference when run alone (pass [inputs])" in err


_CONV_1D = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}


@pytest.mark.parametrize("consumer", [Consumer.NONE, Consumer.CONV])
@pytest.mark.parametrize("placement", ["inputs", "initializers"])
def test_a_pad_feeding_two_consumers_is_their_sum_and_one_pad_output_read_twice(consumer, placement):
    weights = np.array([[[1.0, -2.0]]], np.float32) if consumer == Consumer.CONV else None
    ctx = Context(consumer, _CONV_1D if consumer == Consumer.CONV else {}, weights=weights, fanout=True)
    case = context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2], ctx)
    single = context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2], dataclasses.replace(ctx, fanout=False))
    np.testing.assert_array_equal(case.expected, single.expected * 2)
    model = build_model(case, placement)
    (pad_node,) = [n for n in model.graph.node if n.op_type == "Pad"]
    readers = [n for n in model.graph.node for i in n.input if i == pad_node.output[0]]
    assert len(readers) == 2 and model.graph.node[-1].op_type == "Add"
    (out,) = ReferenceEvaluator(model).run(None, feeds(case, placement))
    np.testing.assert_array_equal(snap(case.context, case.expected, out), case.expected)
    assert "context:fanout" in case.context.tags()


def test_a_pad_with_no_mode_attribute_is_constant_and_the_model_writes_none():
    ctx = Context(Consumer.NONE, mode_attr=False)
    case = context_case([[[1.0, 2.0]]], [0, 0, 1, 0, 0, 1], ctx, constant_value=np.float32(7).reshape(()))
    model = build_model(case, "inputs")
    (pad_node,) = [n for n in model.graph.node if n.op_type == "Pad"]
    assert not [a for a in pad_node.attribute if a.name == "mode"]
    (out,) = ReferenceEvaluator(model).run(None, feeds(case, "inputs"))
    np.testing.assert_array_equal(out, [[[7.0, 1.0, 2.0, 7.0]]])
    back = Case.from_json(json.loads(json.dumps(case.to_json())))
    assert back.context.mode_attr is False and back.id == case.id and back.context.key() != Context().key()
    assert case.id != context_case([[[1.0, 2.0]]], [0, 0, 1, 0, 0, 1], Context(Consumer.NONE),
                                   constant_value=np.float32(7).reshape(())).id


def test_constant_nodes_written_with_value_ints_and_value_float():
    ctx = Context(Consumer.NONE, producer=Producer.CONSTANT_INTS)
    case = context_case([[1.0, 2.0]], [1, 0], ctx, constant_value=np.float32(-1.5).reshape(()), axes=[1])
    model = build_model(case, "inputs")
    consts = {n.output[0]: n.attribute[0].name for n in model.graph.node if n.op_type == "Constant"}
    assert consts == {"pads": "value_ints", "constant_value": "value_float", "axes": "value_ints"}
    assert set(feeds(case, "inputs")) == {"data"}  # constant in every placement
    (out,) = ReferenceEvaluator(model).run(None, feeds(case, "inputs"))
    np.testing.assert_array_equal(out, [[-1.5, 1.0, 2.0]])


@pytest.mark.parametrize("consumer, attrs, data", [
    (Consumer.SPACE_TO_DEPTH, {"blocksize": 2}, np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)),
    (Consumer.DEPTH_TO_SPACE, {"blocksize": 2, "mode": "CRD"}, np.arange(8, dtype=np.float32).reshape(1, 4, 1, 2)),
])
def test_space_to_depth_and_depth_to_space_after_the_pad(consumer, attrs, data):
    """SpaceToDepth of [1, 1, 2, 3] padded to [1, 1, 2, 4] gives [1, 4, 1, 2]; DepthToSpace of
    [1, 4, 1, 2] padded to [1, 4, 2, 2] gives [1, 1, 4, 4]; each computed on onnxruntime too."""
    import onnxruntime as ort
    pads = [0, 0, 0, 1, 0, 0, 0, 0] if consumer == Consumer.SPACE_TO_DEPTH else [0, 0, 1, 0, 0, 0, 0, 0]
    case = context_case(data, pads, Context(consumer, attrs))
    assert case.kind == CaseKind.DEFINED
    assert case.expected.shape == ((1, 4, 1, 2) if consumer == Consumer.SPACE_TO_DEPTH else (1, 1, 4, 4))
    for placement in ("inputs", "initializers"):
        model = build_model(case, placement)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(session.run(None, feeds(case, placement))[0], case.expected)
    assert "context:blocksize=2" in case.context.tags()
    odd = context_case(data, [0, 0, 0, 0, 0, 0, 0, 0], Context(Consumer.SPACE_TO_DEPTH, {"blocksize": 2}))
    assert consumer != Consumer.SPACE_TO_DEPTH or (odd.kind == CaseKind.MUST_REJECT and odd.rule == "context")


def test_drawn_context_cases_hold_each_new_graph_shape():
    spec = get_spec("onnx/Pad-19")
    shares = {f"context:{c}": 16 for c in Consumer}
    cases = [c for c in draw_cases(spec, 0, seed=0, shares=shares) if c.context]
    seen = {tag for c in cases for tag in c.tags}
    assert {"context:fanout", "context:no-mode-attribute", "producer:constant-value-ints",
            "context:SpaceToDepth", "context:DepthToSpace"} <= seen
    assert all(c.mode == "constant" for c in cases if not c.context.mode_attr)


@pytest.mark.slow
def test_every_drawn_context_model_is_one_its_opset_holds():
    """onnx's checker passes every context model of every ONNX version, each producer and
    consumer drawn, in each placement: a node or attribute the opset lacks (Constant's value_ints
    at Pad-11, before Constant-12) is a model strict runtimes rightly refuse, padconf's fault
    judged as their verdict. The Pad in it is still the case's version."""
    checked = set()
    for spec in (s for s in load_specs() if s.domain == "onnx" and applies(s)):
        cases = [c for c in draw_cases(spec, 0, seed=0, shares={f"context:{c}": 4 for c in Consumer}) if c.context]
        for case in cases:
            for placement in ("inputs", "initializers", "folded"):
                model = build_model(case, placement)
                onnx.checker.check_model(model)
                opset = next(o.version for o in model.opset_import if o.domain == "")
                assert onnx.defs.get_schema("Pad", opset).since_version == parse_spec_id(spec.id)[1], case.id
            checked.add((spec.id, case.context.producer))
    assert ("onnx/Pad-11", Producer.CONSTANT_INTS) in checked  # the version before Constant-12, drawn


def test_a_pad_11_graph_with_value_ints_imports_opset_12_whose_pad_is_pad_11():
    ctx = Context(Consumer.NONE, producer=Producer.CONSTANT_INTS)
    case = classify(Case(spec="onnx/Pad-11", data=np.array([[1.0, 2.0]], np.float32), pads=[0, 1, 0, 0], context=ctx),
                    get_spec("onnx/Pad-11"))
    model = build_model(case, "inputs")
    onnx.checker.check_model(model, full_check=True)
    assert [o.version for o in model.opset_import if o.domain == ""] == [12]
    (out,) = ReferenceEvaluator(model).run(None, feeds(case, "inputs"))
    np.testing.assert_array_equal(out, [[0.0, 1.0, 2.0]])
    plain = dataclasses.replace(ctx, producer=Producer.CONSTANT_NODE)
    assert [o.version for o in build_model(case.with_(context=plain), "inputs").opset_import] == [11]
