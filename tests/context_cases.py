"""Hand-made context cases shared by tests/test_contexts.py and tests/test_rewriters.py."""
from __future__ import annotations

import numpy as np

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
