"""``from padconf.onnx_model import build_model, feeds, model_key``, as adapter plugins written to
docs/adapters.md before the layers became folders do; the module is padconf.cases.onnx_model."""
from padconf.cases.onnx_model import *  # noqa: F403
