"""tinygrad's ONNX runner (``tinygrad.nn.onnx.OnnxRunner``), an ONNX-into-framework converter,
on the model padconf.cases.onnx_model builds.

tinygrad picks its device from the environment; its CPU device compiles kernels with clang,
which a machine may lack, so its processes default to its Python device (``DEV=PYTHON``, any
machine; ``DEV`` already set is kept); a kernel it still compiles for the CPU device (a constant
value's, some dtypes') needs clang: where the machine lacks it, the case is skipped, saying so.
One runner a case: a runner caches a graph input it reads
as a Python constant (Pad's ``pads``, ``axes``) by name across its calls (its comment: "if they
change across runs, cached value will be wrong"), so a runner shared by cases of one model would
answer the first case's pads for every later one."""
from __future__ import annotations

import os

from padconf.adapters import Adapter, Outcome, StandaloneRepro
from padconf.cases.case import Case
from padconf.cases.onnx_ir import OUTPUT_NAME
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.vocabulary import Placement

# the dtypes tinygrad's runner takes from numpy (no bfloat16, float8 or sub-byte kinds, no complex, no strings)
_TAKEN = {"float", "double", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bool"}


def standalone_run(model, inputs, configuration):
    """tinygrad's own API on a bundle's model (its Python device unless DEV says otherwise):
    copied into a bundle's repro script by its source, it imports nothing of padconf."""
    import os

    os.environ.setdefault("DEV", "PYTHON")
    from tinygrad import Tensor
    from tinygrad.nn.onnx import OnnxRunner
    runner = OnnxRunner(Tensor(model.SerializeToString()))
    return next(iter(runner(dict(inputs)).values())).numpy()


class TinygradAdapter(Adapter):
    name = "tinygrad"
    module = "tinygrad.nn.onnx"
    package = "tinygrad"
    placements = (Placement.INPUTS, Placement.INITIALIZERS)
    skips_at_run_time = True  # a kernel this machine has no compiler for
    repro = StandaloneRepro("onnx tinygrad", standalone_run)

    def available(self) -> str | None:
        os.environ.setdefault("DEV", "PYTHON")  # before tinygrad is imported: it reads DEV once
        return super().available()

    def supports(self, spec_id: str, dtype: str) -> str | None:
        return super().supports(spec_id, dtype) or (
            None if dtype in _TAKEN else f"tinygrad's ONNX runner takes no {dtype} tensors from numpy")

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        from tinygrad import Tensor
        from tinygrad.nn.onnx import OnnxRunner
        try:
            runner = OnnxRunner(Tensor(build_model(case, placement).SerializeToString()))
            return Outcome(output=runner(feeds(case, placement))[OUTPUT_NAME].numpy())
        except FileNotFoundError as exc:  # a kernel for its CPU device, whose compiler this machine lacks
            if exc.filename != "clang":
                raise
            return Outcome(skipped="tinygrad compiles a kernel of this graph for its CPU device, with clang, which "
                                   "this machine lacks: no answer (a machine with clang runs it)")
        except Exception as exc:
            return self.refusal(exc).outcome()
