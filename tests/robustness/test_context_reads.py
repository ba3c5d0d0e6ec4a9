"""A context case read from a file (a case file, cases.jsonl) is held to its consumer's ONNX
schema at the case's opset and to the value rules that make its graph valid, where it is read
(``padconf.cases.context.check_context``, from ``Case.from_json``): one line, exit 2, before
the oracle, a model or a repro sees it (docs/reliability.md, "One choke point per class")."""
from __future__ import annotations

import json

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.context import Consumer, Context
from padconf.cases.context_oracle import documented_shape
from padconf.cli import main
from padconf.core.errors import CaseError
from tests.context_cases import MAX_POOL_2, context_case

CONV = {"kernel_shape": [2], "strides": [1], "dilations": [1], "auto_pad": "NOTSET", "pads": [0, 0], "group": 1}
W = np.array([[[1.0, -2.0]]], np.float32)


def _doc(consumer: Consumer, attrs: dict, weights=None, data=None, pads=None) -> dict:
    data = [[[[1.0, 2.0], [3.0, 4.0]]]] if data is None else data
    pads = [0, 0, 1, 1, 0, 0, 1, 1] if pads is None else pads
    return context_case(data, pads, Context(consumer, dict(attrs), weights=weights)).to_json()


def _pool(**change) -> dict:
    return _doc(Consumer.MAX_POOL, {k: v for k, v in {**MAX_POOL_2, **change}.items() if v is not None})


def _conv_doc(**change):
    return context_case([[[3.0, 5.0, -1.0]]], [0, 0, 1, 0, 0, 2],
                        Context(Consumer.CONV, dict(CONV), weights=W)).to_json()


def _edited(doc: dict, **attrs) -> dict:
    doc.pop("id", None)  # an edited case is another case
    for name, value in attrs.items():
        if value is None:
            doc["context"]["attrs"].pop(name, None)
        else:
            doc["context"]["attrs"][name] = value
    return doc


def _slice():
    return _doc(Consumer.SLICE, {"starts": [0], "ends": [2], "axes": [2], "steps": [1]})


def _second_pad():
    return _doc(Consumer.PAD, {"pads": [0] * 8, "value": 1})


def _bigger(doc: dict, pads: list[int]) -> dict:
    doc["pads"] = pads
    return doc


def _no_weights():
    doc = _conv_doc()
    doc["context"]["weights"] = None
    return doc


def _weights_of_the_wrong_kernel():
    doc = _conv_doc()
    doc["context"]["attrs"]["kernel_shape"] = [3]
    return doc


def _weights_on_a_pool():
    doc = _pool()
    doc["context"]["weights"] = _conv_doc()["context"]["weights"]
    return doc


HOSTILE = {
    "strides 0": lambda: _edited(_pool(), strides=[0, 1]),
    "kernel of the wrong rank": lambda: _edited(_pool(), kernel_shape=[2]),
    "kernel side 0": lambda: _edited(_pool(), kernel_shape=[0, 2]),
    "kernel missing": lambda: _edited(_pool(), kernel_shape=None),
    "pads of the wrong length": lambda: _edited(_pool(), pads=[0, 0]),
    "dilations of text": lambda: _edited(_pool(), dilations="1,1"),
    "ceil_mode 7": lambda: _edited(_pool(), ceil_mode=7),
    "auto_pad unknown": lambda: _edited(_pool(), auto_pad="SAME_MIDDLE"),
    "a kernel of millions of elements": lambda: _edited(_pool(), kernel_shape=[1024, 1024]),
    "an attribute of another pool": lambda: _edited(_pool(), count_include_pad=1),
    "Conv without weights": _no_weights,
    "Conv's W of another kernel": _weights_of_the_wrong_kernel,
    "Conv group 0": lambda: _edited(_conv_doc(), group=0),
    "weights on a MaxPool": _weights_on_a_pool,
    "Slice steps 0": lambda: _edited(_slice(), steps=[0]),
    "Slice axes twice": lambda: _edited(_slice(), starts=[0, 0], ends=[2, 2], axes=[2, -2], steps=[1, 1]),
    "Slice without ends": lambda: _edited(_slice(), ends=None),
    "a second Pad's pads of the wrong length": lambda: _edited(_second_pad(), pads=[1, 1]),
    "a second Pad's pads of 2**40": lambda: _edited(_second_pad(), pads=[0] * 7 + [2**40]),
    "SpaceToDepth blocksize 0": lambda: _edited(_doc(Consumer.SPACE_TO_DEPTH, {"blocksize": 1}), blocksize=0),
    "DepthToSpace blocksize not dividing the channels": lambda: _edited(
        _doc(Consumer.DEPTH_TO_SPACE, {"blocksize": 1, "mode": "DCR"}), blocksize=2),
    "DepthToSpace mode unknown": lambda: _edited(_doc(Consumer.DEPTH_TO_SPACE, {"blocksize": 1}), mode="XYZ"),
    "a Pad output of millions feeding a pool": lambda: _bigger(_pool(), [0, 0, 1, 1, 0, 0, 2000, 2000]),
}


@pytest.mark.parametrize("what", list(HOSTILE))
def test_a_context_its_consumers_schema_or_rules_refuse_is_one_line_where_it_is_read(what):
    doc = HOSTILE[what]()
    with pytest.raises(CaseError, match="malformed case: context"):
        Case.from_json(json.loads(json.dumps(doc)))


@pytest.mark.parametrize("what", ["strides 0", "kernel of the wrong rank", "Conv without weights"])
def test_minimize_on_a_hostile_context_is_one_line_exit_2(tmp_path, capsys, what):
    """Each made minimize exit 3 (a traceback from the oracle or the model builder)."""
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(HOSTILE[what]()) + "\n")
    assert main(["minimize", str(path), "--runtime", "onnx-reference", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "malformed case: context" in err, err


def test_a_pool_without_strides_takes_the_schemas_default():
    """strides is optional in every pool's schema (default 1 on each axis): read, and shaped."""
    doc = _edited(_pool(), strides=None)
    case = Case.from_json(doc)
    assert documented_shape(case.context, (1, 1, 4, 4)) == (1, 1, 3, 3)


def test_every_context_padconf_draws_reads_back():
    """The rules refuse nothing padconf writes: every consumer's drawn cases of two versions."""
    from padconf.run.drawing import draw_spec
    seen = set()
    for spec in ("onnx/Pad-18", "onnx/Pad-2"):
        for line in draw_spec((None, spec, 60, 0)):
            doc = json.loads(line)
            if doc.get("context"):
                Case.from_json(doc)
                seen.add(doc["context"]["consumer"])
    assert seen >= {str(c) for c in Consumer}
