"""onnx's shape inference as a runtime that runs it on every model it loads runs it
(Adapter.shape_inference), each call alone in a fresh interpreter (``python -I``): the inference
may die on a model (onnx/onnx#8481), and a death there is that process's, never padconf's.
``inference_dies`` (padconf.minimize.probes.experiments.schema_check) and ``controls_seen``, the
minimal case's controls with the consumer as the runtime's inference shows it the Pad's output."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

import onnx

from padconf.adapters import adapter_class
from padconf.cases.case import Case
from padconf.cases.classify import consumer_readings
from padconf.cases.onnx_model import build_model
from padconf.core.vocabulary import Placement

_INFER = ("import json, sys, onnx; onnx.shape_inference.infer_shapes("
          "onnx.load_model_from_string(sys.stdin.buffer.read()), **json.loads(sys.argv[1]))")
# prints whether the inferred type of the value named sys.argv[2] has a rank
_RANK = (_INFER.replace("onnx.shape_inference", "m = onnx.shape_inference", 1)
         + "; t = [v for v in (*m.graph.value_info, *m.graph.output) if v.name == sys.argv[2]]"
         + "; print('ranked' if t and t[0].type.tensor_type.HasField('shape') else 'unranked')")
INFERENCE_TIMEOUT_S = 60


def _alone(script: str, model: onnx.ModelProto, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run([sys.executable, "-I", "-c", script, *args], input=model.SerializeToString(),
                              capture_output=True, timeout=INFERENCE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None


def inference_dies(model: onnx.ModelProto, options: dict[str, bool]) -> str | None:
    """The signal that kills onnx.shape_inference.infer_shapes(model, **options); None where it
    returns, raises or outlasts INFERENCE_TIMEOUT_S."""
    done = _alone(_INFER, model, json.dumps(options))
    return signal.Signals(-done.returncode).name if done is not None and done.returncode < 0 else None


def controls_seen(case: Case, runtime: str, placement: Placement) -> list[tuple[str, Case, Placement]]:
    """``case.controls(placement)``, an ambiguous context case's consumer alone under each
    reading (classify.consumer_readings), and where the runtime's shape inference gives the context
    case's Pad output no rank (an axes input fed at run time), its consumer on a tensor of no
    rank too (Case.unranked_consumer_control): what the consumer is shown. Where the inference
    dies or fails, the consumer alone, of the data's rank, is the control."""
    controls = case.controls(placement)
    controls += [("consumer", control, placement) for reading in consumer_readings(case)
                 if (control := case.consumer_control(reading)) is not None]
    options = adapter_class(runtime).shape_inference
    unranked = case.unranked_consumer_control()
    if options is None or unranked is None or placement != Placement.INPUTS:
        return controls
    model = build_model(case, placement)
    pad = next(n for n in model.graph.node if n.op_type == "Pad")
    done = _alone(_RANK, model, json.dumps(options), pad.output[0])
    if done is not None and done.returncode == 0 and done.stdout.strip() == b"unranked":
        controls.append(("consumer", unranked, placement))
    return controls
