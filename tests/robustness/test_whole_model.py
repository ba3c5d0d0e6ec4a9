"""A model padconf did not write is walked whole before any runtime sees it
(``padconf.suite.folders.load_model``): the external data of every tensor it holds (graph
initializers, Constant nodes' values, sparse tensors, subgraphs' and functions' tensors) is read
from inside its folder or refused, and no reference to a path is left for a runtime to resolve
against its working directory (docs/reliability.md)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from padconf.cli import main
from padconf.core.errors import CaseError
from padconf.suite.folders import load_model, model_tensors

SECRET = np.array([7, 7], np.int64)  # "a credential": what must never reach a bundle


def external(name: str, location: str, dims=(2,), data_type=TensorProto.INT64) -> TensorProto:
    tensor = TensorProto(name=name, data_type=data_type, dims=list(dims))
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location
    return tensor


def pad_model_with_constant_pads(where, pads_tensor: TensorProto):
    """A Pad-19 model folder whose pads come from a Constant node holding ``pads_tensor``."""
    (where / "test_data_set_0").mkdir(parents=True)
    nodes = [helper.make_node("Constant", [], ["pads"], value=pads_tensor),
             helper.make_node("Pad", ["data", "pads"], ["out"], mode="constant")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (where / "model.onnx").write_bytes(model.SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.zeros(3, np.float32), "data").SerializeToString())


@pytest.mark.parametrize("location", [".env", "/abs/.env", "../.env"])
def test_a_constant_nodes_external_data_is_read_inside_the_folder_or_refused(tmp_path, monkeypatch, capsys, location):
    """``location: .env`` was resolved by onnxruntime and onnx's evaluator against the working
    directory, and by OpenVINO at any absolute path: the secret landed in the bundle's data."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / ".env").write_bytes(SECRET.tobytes())
    (tmp_path / ".env").write_bytes(SECRET.tobytes())
    location = location.replace("/abs/", f"{cwd}/")
    where = tmp_path / "model"
    pad_model_with_constant_pads(where, external("pads", location))
    monkeypatch.chdir(cwd)
    code = main(["minimize", str(where), "--runtime", "onnxruntime", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "external data" in err[0], err
    found = [p for p in (tmp_path / "m").rglob("*") if p.is_file() and SECRET.tobytes() in p.read_bytes()]
    assert not found


def test_external_data_inside_the_folder_is_read_in_and_its_reference_removed(tmp_path):
    where = tmp_path / "model"
    pad_model_with_constant_pads(where, external("pads", "pads.bin"))
    (where / "pads.bin").write_bytes(np.array([1, 1], np.int64).tobytes())
    model = load_model(where / "model.onnx")
    tensors = list(model_tensors(model))
    assert tensors and all(t.data_location == TensorProto.DEFAULT and not t.external_data for t in tensors)
    assert numpy_helper.to_array(model.graph.node[0].attribute[0].t).tolist() == [1, 1]


def _places(location: str):
    """A model holding an external tensor in each place a tensor may be, one place at a time."""
    tensor = external("t", location)
    yield "initializer", helper.make_graph([], "g", [], [], [tensor])
    sparse = helper.make_sparse_tensor(external("v", location), numpy_helper.from_array(np.array([0, 1], np.int64)),
                                       [4])
    graph = helper.make_graph([], "g", [], [])
    graph.sparse_initializer.append(sparse)
    yield "sparse initializer", graph
    yield "Constant sparse_value", helper.make_graph(
        [helper.make_node("Constant", [], ["c"], sparse_value=sparse)], "g", [], [])
    body = helper.make_graph([helper.make_node("Constant", [], ["c"], value=tensor)], "body", [], [])
    yield "If branch", helper.make_graph(
        [helper.make_node("If", ["cond"], ["o"], then_branch=body, else_branch=body)], "g", [], [])
    yield "nested subgraph", helper.make_graph([helper.make_node(
        "If", ["cond"], ["o"], then_branch=helper.make_graph(
            [helper.make_node("If", ["c2"], ["o2"], then_branch=body, else_branch=body)], "mid", [], []),
        else_branch=body)], "g", [], [])


@pytest.mark.parametrize("place", ["initializer", "sparse initializer", "Constant sparse_value", "If branch",
                                   "nested subgraph", "function"])
def test_every_tensor_of_a_model_is_walked_wherever_it_is(tmp_path, place):
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "secret").write_bytes(SECRET.tobytes())
    if place == "function":
        function = helper.make_function("local", "f", [], ["c"], [helper.make_node(
            "Constant", [], ["c"], value=external("t", "../cwd/secret"))], [helper.make_opsetid("", 19)])
        model = helper.make_model(helper.make_graph([], "g", [], []), functions=[function],
                                  opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid("local", 1)])
    else:
        graph = dict(_places("../cwd/secret"))[place]
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (tmp_path / "model").mkdir()
    onnx.save(model, tmp_path / "model" / "model.onnx")
    with pytest.raises(CaseError, match="external data '../cwd/secret' leads outside"):
        load_model(tmp_path / "model" / "model.onnx")


def test_a_model_of_many_pad_nodes_is_one_line_before_any_runs(tmp_path, capsys):
    """Each Pad node of a model costs a run of the graph up to it and a minimization: 10,000 of
    them ran for hours."""
    from padconf.minimize.model_cut import MAX_PAD_NODES
    where = tmp_path / "model"
    (where / "test_data_set_0").mkdir(parents=True)
    n = MAX_PAD_NODES + 1
    nodes = [helper.make_node("Pad", [f"x{i}", "pads"], [f"x{i + 1}"], mode="constant") for i in range(n)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info(f"x{n}", TensorProto.FLOAT, None)],
                              [helper.make_tensor("pads", TensorProto.INT64, [2], [0, 0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (where / "model.onnx").write_bytes(model.SerializeToString())
    (where / "test_data_set_0" / "input_0.pb").write_bytes(
        numpy_helper.from_array(np.zeros(1, np.float32), "x0").SerializeToString())
    code = main(["minimize", str(where), "--runtime", "onnxruntime", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"{n} Pad nodes" in err[0], err


def _tensor_paths(descriptor=onnx.ModelProto.DESCRIPTOR, seen=()):
    """Every path of message fields from a ModelProto to a TensorProto field, each message type
    at most once on a path, found from onnx's own descriptors: the places a tensor can be,
    including those no reader lists (training_info, a function's attribute defaults)."""
    for field in descriptor.fields:
        kind = field.message_type
        if kind is None or kind.GetOptions().map_entry or kind in seen:
            continue
        if kind is TensorProto.DESCRIPTOR:
            yield (field.name,)
        else:
            yield from ((field.name, *rest) for rest in _tensor_paths(kind, (*seen, descriptor)))


def _plant(model, path, tensor):
    message = model
    for name in path[:-1]:
        field = message.DESCRIPTOR.fields_by_name[name]
        message = getattr(message, name).add() if field.is_repeated else getattr(message, name)
    field = message.DESCRIPTOR.fields_by_name[path[-1]]
    (getattr(message, path[-1]).add() if field.is_repeated else getattr(message, path[-1])).CopyFrom(tensor)


PATHS = sorted(_tensor_paths())


def test_the_descriptors_name_the_places_no_reader_listed():
    """The walk's instances below include what the listed walk missed."""
    assert ("training_info", "initialization", "initializer") in PATHS
    assert ("training_info", "algorithm", "node", "attribute", "t") in PATHS
    assert ("functions", "attribute_proto", "t") in PATHS
    assert len(PATHS) > 20


@pytest.mark.parametrize("path", PATHS, ids=".".join)
def test_a_tensor_in_any_field_of_a_model_is_walked(tmp_path, path):
    """``training_info`` was not walked: its graphs' external data reached a runtime unread.
    Every field path onnx's descriptors allow, each holding an external tensor leading out."""
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "secret").write_bytes(SECRET.tobytes())
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 19)])
    _plant(model, path, external("t", "../cwd/secret"))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.onnx").write_bytes(model.SerializeToString())
    with pytest.raises(CaseError, match="external data '../cwd/secret' leads outside"):
        load_model(tmp_path / "model" / "model.onnx")
    inside = tmp_path / "in"
    inside.mkdir()
    (inside / "t.bin").write_bytes(np.array([1, 1], np.int64).tobytes())
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 19)])
    _plant(model, path, external("t", "t.bin"))
    (inside / "model.onnx").write_bytes(model.SerializeToString())
    tensors = list(model_tensors(load_model(inside / "model.onnx")))
    assert len(tensors) == 1 and numpy_helper.to_array(tensors[0]).tolist() == [1, 1]
    assert tensors[0].data_location == TensorProto.DEFAULT and not tensors[0].external_data


def test_graphs_nested_past_the_bound_through_training_info_are_one_line(tmp_path):
    from padconf.suite.folders import MAX_GRAPH_DEPTH
    leaf = body = helper.make_graph([], "leaf", [], [])
    for _ in range(MAX_GRAPH_DEPTH + 1):  # one branch deeper each time: the model grows linearly, not twice a level
        body = helper.make_graph([helper.make_node("If", ["c"], ["o"], then_branch=body, else_branch=leaf)],
                                 "g", [], [])
    model = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 19)])
    model.training_info.add().algorithm.CopyFrom(body)
    (tmp_path / "model.onnx").write_bytes(model.SerializeToString())
    with pytest.raises(CaseError, match="nested more than|MaxDepth"):  # protobuf's own bound may come first
        load_model(tmp_path / "model.onnx")
