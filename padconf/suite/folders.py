"""Reading test data back: a folder of test directories (padconf generate's, or onnx's own
node tests) as classified Cases, for ``padconf run --cases``, model_cut and minimize.

Every file read may come from anyone: sizes, element types and paths are checked before
anything is allocated or opened.
"""
from __future__ import annotations

import math
import os
import stat
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import external_data_helper, helper, numpy_helper

from padconf.adapters.openvino import OV_DEFAULT_PAD_VALUE
from padconf.adapters.openvino_tensors import FROM_OV, from_tensor
from padconf.cases.case import Case, InputBudget, check_operand_lengths
from padconf.cases.classify import classify
from padconf.cases.edge_classes import edge_classes
from padconf.cases.onnx_model import fed_input_names, value_from_attribute
from padconf.core.dtypes import MAX_ARRAY_BYTES, OverBudget, as_array, dtype_name, numpy_dtype
from padconf.core.errors import CaseError
from padconf.core.untrusted import inside, npy_array, read_bytes
from padconf.spec.loader import Spec
from padconf.suite.fixed import CONTEXT_DIRS

MAX_MODEL_BYTES = 1 << 28  # a file of a test folder (model, weights, tensor): padconf did not write it


def load_tensor(path: Path, root: Path | None = None) -> np.ndarray:
    """The array of a TensorProto file inside ``root`` (default: its own folder)."""
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(read_bytes(inside(path, root or path.parent), MAX_MODEL_BYTES, name=str(path)))
    except DecodeError as exc:
        raise CaseError(f"{path}: malformed tensor: {' '.join(str(exc).split()) or type(exc).__name__}") from None
    return tensor_array(tensor, path, root or path.parent)


def tensor_array(tensor: onnx.TensorProto, where: Path, root: Path) -> np.ndarray:
    """``tensor``'s array, read from the file ``where``: its element type and dims checked
    before anything is allocated, and its external data (if any) read from beside ``where``,
    from a regular file that stays inside ``root``."""
    label = f"{where}: tensor {tensor.name!r}" if tensor.name else str(where)
    try:
        dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
    except (KeyError, ValueError, TypeError):
        raise CaseError(f"{label}: unknown element type {tensor.data_type}") from None
    if any(d < 0 for d in tensor.dims) or len(tensor.dims) > 32:
        raise CaseError(f"{label}: dims {list(tensor.dims)[:33]} are not sizes >= 0")
    size = math.prod(tensor.dims) * max(dtype.itemsize, 1)
    if size > MAX_ARRAY_BYTES:
        raise CaseError(f"{label}: dims {list(tensor.dims)} ({size} bytes) exceed {MAX_ARRAY_BYTES} bytes")
    if tensor.data_location == onnx.TensorProto.EXTERNAL or tensor.external_data:
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        if not location or "\0" in location or Path(location).is_absolute():  # a NUL: no path at all
            raise CaseError(f"{label}: external data location {location!r} is not a path relative to its file")
        data = (where.parent / location).resolve()
        if not data.is_relative_to(root.resolve()):
            raise CaseError(f"{label}: external data {location!r} leads outside {root}")
        try:
            offset, length = int(info.get("offset") or 0), int(info.get("length") or 0)
            available = data.stat().st_size - offset
        except (ValueError, OSError) as exc:
            raise CaseError(f"{label}: external data {location!r}: {exc}") from None
        if not data.is_file() or offset < 0 or length < 0 or min(length or available, available) > MAX_ARRAY_BYTES:
            raise CaseError(f"{label}: external data {location!r} is not a regular file of at most "
                            f"{MAX_ARRAY_BYTES} bytes from offset {offset}")
        try:
            external_data_helper.load_external_data_for_tensor(tensor, str(where.parent))
        except Exception as exc:  # onnx's own refusals: ValidationError, OSError, ValueError
            raise CaseError(f"{label}: external data {location!r}: {' '.join(str(exc).split())[:200]}") from None
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError) as exc:
        raise CaseError(f"{label}: malformed tensor: {' '.join(str(exc).split()) or type(exc).__name__}") from None


def _spec_for(domain: str, version: int, specs: list[Spec], where: Path) -> Spec:
    """The spec version in force at ``version``: the largest one <= it."""
    fits = [s for s in specs if s.domain == domain and s.version <= version]
    if not fits:
        raise CaseError(f"{where}: no {domain} Pad spec for opset {version}")
    return max(fits, key=lambda s: s.version)


def opset_of(model: onnx.ModelProto, where: Path) -> int:
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise CaseError(f"{where}: the model imports no ai.onnx opset")
    return opset


MAX_GRAPH_DEPTH = 32  # subgraphs inside subgraphs (If, Loop, Scan bodies): a model padconf did not write
MAX_MESSAGE_DEPTH = 8 * MAX_GRAPH_DEPTH  # messages inside messages: each graph level is a few (node, attribute)
MAX_MODEL_MESSAGES = 1 << 18  # nodes, attributes, tensors: a Pad's test holds dozens, a large network 10**4s


def model_tensors(model: onnx.ModelProto):
    """Every TensorProto ``model`` holds, wherever it is, found by reflection over the protobuf
    descriptors rather than a list of fields: each message field set, of any message, is
    walked, so initializers, sparse tensors (values and indices), Constant nodes' attributes,
    subgraphs of any depth, local functions (their nodes and their attributes' defaults) and
    ``training_info``'s graphs are all visited, and a field nobody listed (a later onnx's too)
    cannot hide a tensor. A reader that looked only at the fields it knew left a Constant
    node's external data, then ``training_info``'s, for a runtime to resolve against the working
    directory. Subgraphs nest at most MAX_GRAPH_DEPTH deep, messages MAX_MESSAGE_DEPTH, and a model
    holds at most MAX_MODEL_MESSAGES messages."""
    tensor_type = onnx.TensorProto.DESCRIPTOR
    graph_type = onnx.GraphProto.DESCRIPTOR
    # (message, graph depth, message depth), walked without recursion: nesting is the input's
    todo: list[tuple[Any, int, int]] = [(model, 0, 0)]
    walked = 0
    while todo:
        message, graphs, depth = todo.pop()
        walked += 1
        if walked > MAX_MODEL_MESSAGES:  # the walk's work is the input's: bounded as its bytes are
            raise CaseError(f"holds more than {MAX_MODEL_MESSAGES} messages (nodes, attributes, tensors): "
                            "not a model padconf reads")
        if message.DESCRIPTOR is tensor_type:
            yield message
            continue  # a TensorProto holds no tensor (its segment and external_data are no tensors)
        if message.DESCRIPTOR is graph_type:
            graphs += 1
            if graphs > MAX_GRAPH_DEPTH + 1:
                raise CaseError(f"subgraphs nested more than {MAX_GRAPH_DEPTH} deep")
        if depth > MAX_MESSAGE_DEPTH:
            raise CaseError(f"messages nested more than {MAX_MESSAGE_DEPTH} deep")
        inner = []
        for field, value in message.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            if field.message_type.GetOptions().map_entry:  # a map's entries: message values only
                values = value.values() if field.message_type.fields_by_name["value"].message_type else ()
            elif field.is_repeated:
                values = value
            else:
                values = (value,)
            inner += [(v, graphs, depth + 1) for v in values]
        todo += reversed(inner)  # in the order of the file: the first tensor is the first found


def load_model(path: Path, root: Path | None = None) -> onnx.ModelProto:
    """The model in ``path``, a file inside ``root`` (default: its folder), walked whole before
    any runtime sees it: the external data of every tensor it holds (``model_tensors``) read in
    from beside it, inside ``root``, at most MAX_MODEL_BYTES in all, and the reference to it
    removed, so that no runtime resolves a path of the model's against its own working
    directory or anywhere else."""
    data = read_bytes(inside(path, root or path.parent), MAX_MODEL_BYTES, name=str(path))
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, ValueError) as exc:
        raise CaseError(f"{path}: malformed model: {' '.join(str(exc).split())}") from None
    total = 0
    try:
        tensors = list(model_tensors(model))
    except CaseError as exc:
        raise CaseError(f"{path}: {exc}") from None
    for tensor in tensors:
        if tensor.data_location == onnx.TensorProto.EXTERNAL or tensor.external_data:
            total += tensor_array(tensor, path, root or path.parent).nbytes
            if total > MAX_MODEL_BYTES:
                raise CaseError(f"{path}: external data of more than {MAX_MODEL_BYTES} bytes in all")
            tensor.data_location = onnx.TensorProto.DEFAULT
            del tensor.external_data[:]
    return model


def initializers(model: onnx.ModelProto, where: Path) -> dict[str, np.ndarray]:
    """The arrays of the initializers of ``model`` (from ``load_model``), read from ``where``."""
    return {init.name: tensor_array(init, where, where.parent) for init in model.graph.initializer}


def fed_inputs(model: onnx.ModelProto, where: Path, root: Path | None = None) -> dict[str, np.ndarray]:
    """The graph inputs that are not initializers, from ``test_data_set_0/input_<i>.pb``."""
    out = {}
    for i, name in enumerate(fed_input_names(model)):
        path = where / "test_data_set_0" / f"input_{i}.pb"
        if not path.is_file():
            raise CaseError(f"{where}: input {name!r} has no {path.relative_to(where)}")
        out[name] = load_tensor(path, root or where)
    return out


# The attributes a Pad node is read by, each with the one AttributeProto type it may have: a
# model padconf did not write may carry a TENSOR, a GRAPH or strings under any of these names.
_PAD_ATTRIBUTES = {"mode": onnx.AttributeProto.STRING, "pads": onnx.AttributeProto.INTS,
                   "paddings": onnx.AttributeProto.INTS, "value": onnx.AttributeProto.FLOAT}
MAX_MODE_BYTES = 64  # "constant", "reflect", "edge", "wrap": a longer one is no mode any spec names


def _type_name(code: int) -> str:
    try:
        return onnx.AttributeProto.AttributeType.Name(code)
    except ValueError:  # a number no AttributeType has
        return f"of type {code}"


def _pad_attributes(node: onnx.NodeProto, where: Path) -> dict:
    """The attributes padconf reads of a Pad node, typed: ``mode`` text, ``pads``/``paddings``
    a list of ints, ``value`` a float. Of another type, twice, or a mode that is no short UTF-8
    text: one CaseError (helper.get_attribute_value would hand back any of them unchecked)."""
    out: dict = {}
    for attr in node.attribute:
        want = _PAD_ATTRIBUTES.get(attr.name)
        if want is None:
            continue  # not read: a runtime is given the model padconf builds from the case
        label = f"{where}: the Pad node's {attr.name!r} attribute"
        if attr.name in out:
            raise CaseError(f"{label} is given twice")
        if attr.type != want:
            raise CaseError(f"{label} is {_type_name(attr.type)}, not {_type_name(want)}")
        if want == onnx.AttributeProto.STRING:
            try:
                if len(attr.s) > MAX_MODE_BYTES:
                    raise UnicodeError
                out[attr.name] = attr.s.decode("utf-8")
            except UnicodeError:
                raise CaseError(f"{label} is not UTF-8 text of at most {MAX_MODE_BYTES} bytes") from None
        elif want == onnx.AttributeProto.INTS:
            if len(attr.ints) * 8 > MAX_ARRAY_BYTES:  # the bound a pads tensor input has
                raise CaseError(f"{label} holds {len(attr.ints)} ints, more than {MAX_ARRAY_BYTES // 8}")
            out[attr.name] = list(attr.ints)  # int64 by the protobuf: finite; a huge one is the spec's to judge
        else:
            out[attr.name] = attr.f  # any float32, NaN and infinities included: Pad's value may be one
    return out


def pad_node_case(node: onnx.NodeProto, opset: int, values: dict[str, np.ndarray], constants: set[str],
                  specs: list[Spec], where: Path) -> tuple[Case, str]:
    """The case a Pad node of an ai.onnx ``opset`` model runs, given the arrays reaching its inputs
    (``values``, by name), and its placement: which of them are constants (``constants``)."""
    spec = _spec_for("onnx", opset, specs, where)

    def value(index: int):
        if index >= len(node.input) or node.input[index] == "":
            return None
        if node.input[index] not in values:
            raise CaseError(f"{where}: Pad input {node.input[index]!r} is neither fed nor an initializer")
        return values[node.input[index]]

    attrs = _pad_attributes(node, where)
    mode = attrs.get("mode", "constant")
    data = value(0)
    if data is None:
        raise CaseError(f"{where}: the Pad node has no data input")
    if data.dtype.kind in "SU":
        data = as_array(data.astype(str).tolist(), "string")
    dtype = dtype_name(data.dtype)
    pads_type = axes_type = "int64"
    if spec.operands["pads"]["via"] == "attribute":
        pads = attrs.get("paddings", attrs.get("pads"))
        if pads is None:
            raise CaseError(f"{where}: Pad-{opset} node has no pads attribute")
        check_operand_lengths(len(pads), 0, str(where))
        constant = None if "value" not in attrs else value_from_attribute(attrs["value"], dtype)
        axes, placement = None, "attributes"
    else:
        pads_arr = value(1)
        if pads_arr is None:
            raise CaseError(f"{where}: the Pad node has no pads input")
        axes_arr = value(3)
        check_operand_lengths(pads_arr.size, 0 if axes_arr is None else axes_arr.size, str(where))
        for name, arr in (("pads", pads_arr), ("axes", axes_arr)):
            if arr is not None and arr.dtype.kind not in "iu":  # int(NaN) would be a traceback
                raise CaseError(f"{where}: the Pad node's {name} are {arr.dtype}, not integers")
        pads, pads_type = pads_arr.reshape(-1).tolist(), dtype_name(pads_arr.dtype)
        constant = value(2)
        if constant is not None and constant.dtype.kind in "SU":
            constant = as_array(constant.astype(str).tolist(), "string")
        axes = None if axes_arr is None else [int(a) for a in axes_arr.reshape(-1)]
        if axes_arr is not None:
            axes_type = dtype_name(axes_arr.dtype)
        placement = ("inputs" if node.input[1] not in constants else
                     "folded" if node.input[0] in constants else "initializers")
    case = Case(spec=spec.id, data=data, pads=[int(p) for p in pads], mode=mode, constant_value=constant,
                axes=axes, pads_type=pads_type, axes_type=axes_type)
    return case, placement


def _onnx_case(where: Path, specs: list[Spec], root: Path) -> tuple[Case, str]:
    model = load_model(where / "model.onnx", root)
    graph = model.graph
    if len(graph.node) != 1 or graph.node[0].op_type != "Pad" or graph.node[0].domain not in ("", "ai.onnx"):
        raise NotPadModel(f"{where}: not a one-node Pad model ({', '.join(n.op_type for n in graph.node)})")
    constants = initializers(model, where / "model.onnx")
    values = {**constants, **fed_inputs(model, where, root)}
    return pad_node_case(graph.node[0], opset_of(model, where), values, set(constants), specs, where)


def _openvino_case(where: Path, specs: list[Spec], root: Path) -> tuple[Case, str]:
    try:
        import openvino as ov
    except ImportError as exc:
        raise CaseError(f"{where}: reading OpenVINO IR needs openvino: {exc}") from None
    # read here, checked, and handed to OpenVINO from memory: it never opens a file itself
    xml = read_bytes(inside(where / "model.xml", root), MAX_IR_XML_BYTES, name=str(where / "model.xml"))
    weights = (read_bytes(inside(where / "model.bin", root), MAX_MODEL_BYTES, name=str(where / "model.bin"))
               if (where / "model.bin").exists() else b"")
    if b"<!doctype" in xml.lower() or b"<!entity" in xml.lower():  # an IR holds no DTD: entities, external ones too
        raise CaseError(f"{where / 'model.xml'}: a document type declaration, which no OpenVINO IR holds")
    check_ir_layers(xml, where / "model.xml")
    try:
        model = ov.Core().read_model(xml.decode("utf-8"), ov.Tensor(np.frombuffer(weights, np.uint8).copy()))
    except Exception as exc:
        raise CaseError(f"{where / 'model.xml'}: malformed IR: {' '.join(str(exc).split())[:200]}") from None
    pads_ops = [op for op in model.get_ordered_ops() if op.get_type_name() == "Pad"]
    if len(pads_ops) != 1:
        raise NotPadModel(f"{where}: not a one-Pad OpenVINO model")
    pad = pads_ops[0]
    version = int(pad.get_type_info().version_id.removeprefix("opset"))
    spec = _spec_for("openvino", version, specs, where)
    params = list(model.get_parameters())
    inputs = []
    placement = "inputs"
    for i in range(pad.get_input_size()):
        src = pad.input_value(i).get_node()
        etype = src.get_element_type().to_string()
        if src.get_type_name() == "Parameter":
            path = where / f"input_{params.index(src)}.npy"
            name = FROM_OV.get(etype)
            if name is None:
                raise CaseError(f"{where}: element type {etype} has no padconf name")
            inputs.append(npy_input(read_bytes(inside(path, root), MAX_MODEL_BYTES, name=str(path)), str(path), name))
        elif src.get_type_name() == "Constant":
            if i == 3 and src.get_friendly_name() == OV_DEFAULT_PAD_VALUE:
                continue
            if i in (1, 2):
                placement = "initializers"
            inputs.append(from_tensor(src.get_tensor_view()))
        else:
            raise CaseError(f"{where}: Pad input {i} comes from a {src.get_type_name()}, not a Parameter or Constant")
    data, begin, end = inputs[:3]
    check_operand_lengths(begin.size + end.size, 0, str(where))
    case = Case(spec=spec.id, data=data, pads=[int(p) for p in np.concatenate([begin.reshape(-1), end.reshape(-1)])],
                mode=pad.get_attributes()["pad_mode"],
                constant_value=inputs[3].reshape(()) if len(inputs) > 3 else None,
                pads_type=dtype_name(begin.dtype))
    return case, placement


MAX_IR_XML_BYTES = 1 << 22  # a one-Pad IR's model.xml is a few KB: its arrays are in model.bin
MAX_IR_ELEMENTS = 1 << 14
IR_LAYER_TYPES = frozenset({"Parameter", "Const", "Pad", "Result"})
# What OpenVINO builds of a Const layer's element, in bytes, by its type's name in any case
# (OpenVINO takes "I64" and "STRING" too: attack round VI): a string is a std::string (32 bytes,
# its text beside it); the types of a byte or less count 1; a type not named here counts as the
# largest, 32
_IR_ELEMENT_BYTES = {"string": 32, "f64": 8, "i64": 8, "u64": 8, "f32": 4, "i32": 4, "u32": 4,
                     "f16": 2, "bf16": 2, "i16": 2, "u16": 2,
                     **dict.fromkeys(("u8", "i8", "boolean", "u4", "i4", "u2", "u3", "u6", "u1", "nf4", "f4e2m1",
                                      "f8e4m3", "f8e5m2", "f8e8m0"), 1)}


def check_ir_layers(xml: bytes, where: Path) -> None:
    """Refuse, before OpenVINO builds anything, an IR that is not a Pad test's graph (layers of
    the types IR_LAYER_TYPES only), or whose Const layers declare more than MAX_ARRAY_BYTES each,
    or 4 times that in all, as OpenVINO would build them. read_model computes what shape
    inference needs: a side branch broadcasting to 2**27 elements took 2.2 GB (attack round IV),
    a Const of 60M empty strings 3.6 GB (round III). Read from the XML's own attributes, with at
    most MAX_IR_ELEMENTS elements parsed; the caller has bounded the file and refused any DTD."""
    if xml.count(b"<") > MAX_IR_ELEMENTS:
        raise CaseError(f"{where}: more than {MAX_IR_ELEMENTS} XML elements, where a Pad test's IR has dozens")
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise CaseError(f"{where}: malformed IR: {exc}") from None
    # a namespace renames every element for ElementTree ("{urn:x}layer") and for no one else:
    # OpenVINO's parser reads the plain names, so each layer went unchecked (attack round V)
    if any(el.tag.startswith("{") or any(k.startswith("{") for k in el.attrib) for el in root.iter()):
        raise CaseError(f"{where}: an XML namespace, which no OpenVINO IR holds")
    total = 0
    for layer in root.iter("layer"):
        if layer.get("type") not in IR_LAYER_TYPES:
            raise NotPadModel(f"{where}: a layer of type {str(layer.get('type'))[:80]!r}: not a one-Pad OpenVINO "
                              f"model (its layers are of the types {', '.join(sorted(IR_LAYER_TYPES))})")
        data = layer.find("data")
        if layer.get("type") != "Const" or data is None:
            continue
        dims = [d.strip() for d in (data.get("shape") or "").split(",") if d.strip()]
        if not all(d.isascii() and d.isdigit() and len(d) <= 19 for d in dims):  # "²" is a digit to Python
            raise CaseError(f"{where}: Const {str(layer.get('name'))[:80]!r} has shape "
                            f"{str(data.get('shape'))[:80]!r}, not sizes >= 0")
        size = math.prod(int(d) for d in dims) * _IR_ELEMENT_BYTES.get((data.get("element_type") or "").lower(), 32)
        total += size
        if size > MAX_ARRAY_BYTES or total > 4 * MAX_ARRAY_BYTES:
            raise CaseError(f"{where}: Const {str(layer.get('name'))[:80]!r} of {data.get('element_type')} shape "
                            f"[{', '.join(dims[:8])}{', ...' if len(dims) > 8 else ''}] would build "
                            f"{size if size > MAX_ARRAY_BYTES else total} bytes, more than "
                            f"{MAX_ARRAY_BYTES if size > MAX_ARRAY_BYTES else 4 * MAX_ARRAY_BYTES}")


def npy_input(data: bytes, where: str, name: str) -> np.ndarray:
    """The array of dtype ``name`` a .npy file's bytes hold, stored as ``dtypes.npy_bytes``
    writes it: the dtype itself, ml_dtypes' kinds as unsigned ints of their width (their bits),
    strings as unicode. Any other dtype is refused, not reinterpreted (int64 viewed as float
    would be a case of other values and shape)."""
    want = numpy_dtype(name)
    if name == "string":
        arr = npy_array(data, where, lambda d: d.kind == "U", "unicode (a string input)", MAX_ARRAY_BYTES)
        return as_array(arr.tolist(), "string")
    stored = want if want.isbuiltin != 2 else np.dtype(f"<u{want.itemsize}")
    return npy_array(data, where, lambda d: d == stored, f"{stored} (a {name} input)", MAX_ARRAY_BYTES).view(want)


CONTEXT_FOLDERS = set(CONTEXT_DIRS.values())


MAX_FOLDER_DEPTH = 16  # folders below the one given (onnx's layout is 2: test_x/test_data_set_0)
MAX_FOLDER_ENTRIES = 1 << 18  # names looked at below the folder given, in all
MAX_TEST_DIRS = 4096  # test directories in all: generated/ holds 2,128, each read and classified in about 10 ms


def case_dirs(path: Path | str) -> list[Path]:
    """Every test directory (holding model.onnx or model.xml) at or below ``path``, sorted. The
    walk is bounded as a whole: links are not followed (a link to ``/`` or a loop walked the file
    system), at most MAX_FOLDER_DEPTH deep, MAX_FOLDER_ENTRIES names and MAX_TEST_DIRS test
    directories; a test directory inside another is refused (which would its files be?)."""
    path = Path(path)
    if not path.exists():
        raise CaseError(f"{path}: no such directory")
    _utf8_name(path)
    found: list[Path] = []
    found_set: set[Path] = set()
    seen = 0
    for folder, subfolders, files in os.walk(path, followlinks=False):
        here = Path(folder)
        depth = len(here.relative_to(path).parts)
        seen += len(subfolders) + len(files)
        if seen > MAX_FOLDER_ENTRIES:
            raise CaseError(f"{path}: more than {MAX_FOLDER_ENTRIES} files and folders below it")
        if depth > MAX_FOLDER_DEPTH:
            raise CaseError(f"{here}: folders nested more than {MAX_FOLDER_DEPTH} deep below {path}")
        # a hidden folder is left out: an interrupted `generate`'s staging, a .git
        # and so are generate's context folders: their models are graphs, not one Pad node
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in CONTEXT_FOLDERS)
        if "model.onnx" in files or "model.xml" in files:
            _utf8_name(here)
            # its ancestors looked up, at most MAX_FOLDER_DEPTH: each found one tried against
            # every ancestor was quadratic (10,000 test directories walked for two minutes)
            inner = next((p for p in here.parents if p in found_set), None)
            if inner is not None:
                raise CaseError(f"{here}: a test directory inside the test directory {inner}")
            found.append(here)
            found_set.add(here)
            if len(found) > MAX_TEST_DIRS:
                raise CaseError(f"{path}: more than {MAX_TEST_DIRS} test directories")
    if not found:
        raise CaseError(f"{path}: no test_* directory with a model.onnx or model.xml")
    return sorted(found)


def _utf8_name(where: Path) -> None:
    """A folder name is text: bytes that are no UTF-8 (Python's surrogate escapes of them) went
    into a case's origin and every row, which padconf then refused to read (attack round VI)."""
    try:
        str(where).encode("utf-8")
    except UnicodeEncodeError:
        raise CaseError(f"{str(where).encode('utf-8', 'backslashreplace').decode()}: a folder name that is not "
                        "UTF-8 text; rename it") from None


def read_case_dir(where: Path | str, specs: list[Spec], root: Path | str | None = None,
                  budget: InputBudget | None = None) -> tuple[Case, str]:
    """The case one test directory holds, classified by its spec, and its placement. Its origin
    is ``testdata:<the directory, relative to root>``. The work it implies is taken from
    ``budget`` (the whole input's), where given, before the reference computes anything."""
    where = Path(where)
    case, placement = (_onnx_case if (where / "model.onnx").is_file() else _openvino_case)(where, specs,
                                                                                           Path(root or where))
    if budget is not None:
        try:
            budget.take_work(case)
        except OverBudget as exc:
            raise CaseError(f"{where}: {exc}; name fewer test directories") from None
    spec = next(s for s in specs if s.id == case.spec)
    case = classify(case, spec)
    case.origin = f"testdata:{where.relative_to(root).as_posix() if root and where != Path(root) else where.name}"
    case.tags = edge_classes(case, spec)
    return case, placement


class NotPadModel(CaseError):
    """A well-formed test directory whose model is not one Pad node (read_cases skips it)."""


MAX_INPUT_BYTES = 1 << 30  # the bytes of every test directory one command names, in all, each time it is named
MAX_INPUT_FILES = 1 << 18  # the files of those test directories, in all


def _charge_input(test_dirs: list[tuple[Path, Path]]) -> None:
    """Refuse, before any model is loaded, test directories whose files together pass
    MAX_INPUT_BYTES or MAX_INPUT_FILES, or which number more than MAX_TEST_DIRS, across every
    folder a command names: each folder's walk is bounded, and a command naming many of them
    (one folder hard-linked a hundred times, or many each under the bounds) was not. A file is
    counted each time a folder names it, since it is read each time (``lstat``: a link is no
    file of the folder, and is refused where it is read)."""
    if len(test_dirs) > MAX_TEST_DIRS:
        raise CaseError(f"{len(test_dirs)} test directories in the folders named: more than {MAX_TEST_DIRS} in all")
    files = total = 0
    for where, _ in test_dirs:
        for folder, _subfolders, names in os.walk(where, followlinks=False):
            for name in names:
                try:
                    info = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue  # gone, or unreadable: said where it is read
                files += 1
                total += info.st_size if stat.S_ISREG(info.st_mode) else 0
            if files > MAX_INPUT_FILES:
                raise CaseError(f"the test directories named hold more than {MAX_INPUT_FILES} files in all")
            if total > MAX_INPUT_BYTES:
                raise CaseError(f"the test directories named hold more than {MAX_INPUT_BYTES} bytes in all "
                                f"(reached at {where}); name fewer")


def case_nbytes(case: Case) -> int:
    """The bytes of every array ``case`` carries (pads and axes at 8 bytes an entry), as
    ``Case.from_json`` counts them against its budgets."""
    arrays = [case.data, case.constant_value, case.expected, *case.interpretations.values()]
    return sum(a.nbytes for a in arrays if a is not None) + 8 * (len(case.pads) + len(case.axes or ()))


def read_cases(paths, specs: list[Spec]) -> list[Case]:
    """Every case at or below ``paths`` (a directory or a list of them: e.g. a shell glob of
    onnx's test_*pad* directories), one per distinct input set (the same case in both
    placements is one case), classified with padconf's reference. Models other than one Pad
    node are skipped; none left is an error. The input is bounded as a whole, across every
    folder named: its test directories, files and bytes before any is loaded
    (``_charge_input``), and the arrays of the cases kept and the work every case implies
    (InputBudget) as each is read."""
    out: dict[str, Case] = {}
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    test_dirs = []
    for path in paths:
        test_dirs += [(where, Path(path)) for where in case_dirs(path)]
        if len(test_dirs) > MAX_TEST_DIRS:
            break
    _charge_input(test_dirs)
    kept = InputBudget("the test directories named")
    skipped = 0
    for where, path in test_dirs:
        try:
            case, _ = read_case_dir(where, specs, root=path, budget=kept)
        except NotPadModel:
            skipped += 1
            continue
        if case.id not in out:
            try:
                kept.take(case_nbytes(case))
            except OverBudget as exc:
                raise CaseError(f"{where}: {exc}; name fewer test directories") from None
            out[case.id] = case
    if not out:
        raise CaseError(f"{', '.join(map(str, paths))}: no one-node Pad model among {skipped} test directories")
    return list(out.values())
