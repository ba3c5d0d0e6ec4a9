"""A repro script is Python the maintainer runs: data from a case file or a model appears in it
only as ``repr()`` of validated literals, and a name is written only after it is checked
against the operator's ONNX schema (docs/reliability.md)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from padconf.cases.context import Consumer, Context
from padconf.cases.onnx_model import build_model, feeds
from padconf.cli import main
from padconf.core.errors import CaseError
from padconf.minimize.bundle.model_source import model_lines
from padconf.minimize.bundle.scripts import _literal
from tests.context_cases import context_case

INJECTED = "x=__import__('os').system('touch PWNED'), y"
CONV = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}


def conv_case(attrs=CONV):
    ctx = Context(Consumer.CONV, dict(attrs), weights=np.array([[[1.0, -2.0]]], np.float32))
    return context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2], ctx)


def test_a_context_attribute_no_schema_defines_is_refused_where_the_case_is_read(tmp_path, capsys):
    doc = conv_case().to_json()
    doc["context"]["attrs"][INJECTED] = 1
    with pytest.raises(CaseError, match="context attribute .* is none the Conv consumer defines"):
        Context.from_json(doc["context"])
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    assert main(["minimize", str(path), "--runtime", "onnxruntime", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "none the Conv consumer defines" in err, err
    assert not list(tmp_path.rglob("repro*")) and not list(tmp_path.rglob("PWNED"))


def test_a_models_attribute_name_is_checked_against_the_schema_before_it_is_spelled_as_code():
    case = conv_case()
    model = build_model(case, "inputs")
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    conv.attribute.append(helper.make_attribute(INJECTED, 1))
    with pytest.raises(CaseError, match="not an attribute Conv-.* defines"):
        model_lines(model, feeds(case, "inputs"), _literal)


def test_names_from_a_model_are_written_as_literals_and_build_the_same_graph():
    """Quotes, backslashes and newlines in tensor, node-output and graph names stay data."""
    case = conv_case()
    model = build_model(case, "inputs")
    hostile = {'y"); import os; os.system("x") #', "a\\nb\n", "'''"}
    model.graph.name = "g\"\n__import__('os')"
    renames = dict(zip(sorted({o for n in model.graph.node for o in n.output} - {model.graph.output[0].name}),
                       sorted(hostile)))
    for node in model.graph.node:
        node.input[:] = [renames.get(i, i) for i in node.input]
        node.output[:] = [renames.get(o, o) for o in node.output]
    arrays, build, names = model_lines(model, feeds(case, "inputs"), _literal)
    scope: dict = {"np": np, "helper": helper, "numpy_helper": numpy_helper, "TensorProto": TensorProto,
                   "AttributeProto": AttributeProto}
    exec("\n".join([*arrays, *build, f"fed = {names}"]), scope)  # noqa: S102 -- what the repro script runs
    assert scope["model"].graph.SerializeToString() == model.graph.SerializeToString()


def test_an_own_api_repros_model_declares_the_output_of_the_datas_rank_as_model_onnx_does():
    """IREE built another program for an unranked output (a tensor.cast to rank 0, or a buffer it
    could not map) than for model.onnx's, whose output has the data's rank: the repro showed
    another failure than the bundle's. Its model now declares the output as model.onnx does."""
    import numpy as np
    import onnx
    from onnx import AttributeProto, TensorProto, helper, numpy_helper

    from padconf.minimize.bundle.repro_runtime import onnx_model_lines
    operands = {"data": np.ones((2, 17), np.float32), "pads": np.array([-1, 0, 0, 0], np.int64)}
    source = "\n".join(onnx_model_lines(operands, ["data", "pads"], ["data", "pads"], {}, 19, 9))
    scope = {"helper": helper, "TensorProto": TensorProto, "numpy_helper": numpy_helper,
             "AttributeProto": AttributeProto, **operands}
    exec(source, scope)  # noqa: S102 -- padconf's own generated source, the repro's lines
    output = scope["model"].graph.output[0].type.tensor_type
    assert output.HasField("shape") and len(output.shape.dim) == 2
    onnx.checker.check_model(scope["model"])


def test_a_complex_nan_or_inf_is_written_as_source_that_names_only_what_a_script_has():
    """repr of complex NaN is "(nan+0j)", whose eval raised NameError inside padconf and lost the
    bundle (audit C, seed 45212: three IREE failures of complex data with value=nan/inf skipped)."""
    import numpy as np

    from padconf.minimize.bundle.scripts import _literal
    for arr in (np.array([complex("nan"), 1 + 2j], np.complex64), np.array([complex(float("inf"), -1)], np.complex128),
                np.array(complex("nan"), np.complex64)):
        text = _literal(arr, "x.npy")
        back = eval(text, {"np": np})  # noqa: S307 -- the literal under test
        assert "np.load" not in text and back.dtype == arr.dtype and back.tobytes() == arr.tobytes(), text


def test_a_non_finite_float_attribute_is_written_as_a_float_call():
    from onnx import helper

    from padconf.minimize.bundle.model_source import _attribute
    node = helper.make_node("Pad", ["x"], ["y"], value=float("nan"), pads=[1, 1])
    text = _attribute(node, next(a for a in node.attribute if a.name == "value"), 2)
    assert text == "value=float('nan')", text


def test_tensor_names_no_identifier_holds_or_one_spelling_joins_are_variables_of_their_own():
    """A user's model names its tensors: "t²" ("²" is a digit to Python, no identifier's) was
    written as a variable the script could not compile, and "x.y" beside "x_y" would share one,
    building a model of other values (attack round V)."""
    names = ["t\u00b2", "t\u00b3", "x.y", "x_y", "2d"]
    inits = [numpy_helper.from_array(np.full(1, k, np.float32), name) for k, name in enumerate(names)]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [len(names)])
    graph = helper.make_graph([helper.make_node("Concat", names, ["out"], axis=0)], "g", [], [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    arrays, build, names_ = model_lines(model, {}, _literal)
    scope: dict = {"np": np, "helper": helper, "numpy_helper": numpy_helper, "TensorProto": TensorProto,
                   "AttributeProto": AttributeProto}
    exec("\n".join([*arrays, *build, f"fed = {names_}"]), scope)  # noqa: S102 -- what the repro script runs
    assert scope["model"].graph.SerializeToString() == model.graph.SerializeToString()
