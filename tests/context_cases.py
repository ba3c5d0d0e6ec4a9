"""Hand-made context cases shared by tests/cases/test_context.py, tests/runtimes/test_rewriters.py and
tests/minimize/test_minimize_contexts.py, and a rewriter with a planted bug."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from padconf.adapters.rewriters import RewriterAdapter
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.context import Context
from padconf.spec.loader import get_spec

SPEC = "onnx/Pad-18"
MAX_POOL_2 = {"kernel_shape": [2, 2], "strides": [1, 1], "dilations": [1, 1], "auto_pad": "NOTSET",
              "pads": [0, 0, 0, 0], "ceil_mode": 0}


def context_case(data, pads, context: Context, **kw) -> Case:
    """A float32 Pad-18 case with ``context``, classified (its expected output passed through the consumer)."""
    return classify(Case(spec=SPEC, data=np.asarray(data, np.float32), pads=pads, context=context, **kw),
                    get_spec(SPEC))


class EdgeForConstant(RewriterAdapter):
    """A rewriter with a planted bug (for padconf's own tests): it turns every constant-mode Pad
    into an edge-mode one, with or without a consumer after it."""

    name = "edge-for-constant"
    passes = ("edge",)

    def rewrite(self, model, passes):
        out = onnx.ModelProto()
        out.CopyFrom(model)
        for node in out.graph.node:
            if node.op_type == "Pad":
                del node.attribute[:]
                node.attribute.append(helper.make_attribute("mode", "edge"))
        return out
