"""tract (Sonos' Rust inference engine), its ONNX front end, on the model padconf.cases.onnx_model
builds. A Rust panic aborts the whole process (e.g. on negative pads): the worker isolation
turns it into a crash verdict, and the panic's message arrives on stderr as its last words."""
from __future__ import annotations

import os
import re
import tempfile

from padconf.adapters import Adapter, Outcome, Refusal, StandaloneRepro, error_text
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, fed_input_names, feeds, model_key
from padconf.core.vocabulary import Placement

_NOT_IMPLEMENTED = re.compile(r"Unknown DatumType|unknown ONNX TensorProto.DataType|not implemented|unimplemented"
                              r"|unsupported", re.I)


def _message(exc: Exception) -> str:
    """tract appends a Rust stack backtrace to every error: the message chain is what says why."""
    return error_text(exc).split(" Stack backtrace:")[0]


def says_not_implemented(text: str) -> bool:
    """Whether tract's error ``text`` says its ONNX loader has no type for a dtype, or no kernel
    for an op variant. Text is all there is: its Python binding raises every Rust error (an
    anyhow chain) as one generic exception type."""
    return bool(_NOT_IMPLEMENTED.search(text))


def _load(model: bytes):
    """A runnable tract model of ONNX bytes (tract loads models from files only)."""
    import tract
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(model)
        f.flush()
        return tract.onnx().load(f.name).into_model().into_runnable()


def standalone_run(model, inputs, configuration):
    """tract's own API on a bundle's one-node model:
    copied into a bundle's repro script by its source, it imports nothing of padconf."""
    import tempfile

    import tract
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:  # tract loads models from files only
        f.write(model.SerializeToString())
        f.flush()
        runnable = tract.onnx().load(f.name).into_model().into_runnable()
    return runnable.run(list(inputs.values()))[0].to_numpy()


class TractAdapter(Adapter):
    name = module = package = "tract"
    repro = StandaloneRepro("onnx tract", standalone_run)
    # tract's ONNX Pad takes pads, constant_value and axes as constants only ("Expect padding to
    # be constant", "Axes must be a constant"): there is no run-time-fed placement to test
    placements = (Placement.INITIALIZERS,)

    def available(self) -> str | None:
        # With RUST_BACKTRACE set (as many Rust developers have it), every tract error captures a
        # stack backtrace and every panic prints one, a byte a write: tens of milliseconds each,
        # for text that _message and the crash's last words drop. Off in tract's processes only.
        os.environ["RUST_BACKTRACE"] = os.environ["RUST_LIB_BACKTRACE"] = "0"
        return super().available()

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if dtype == "string":  # tract's numpy conversion has no object arrays
            return "tract's Python API takes numeric arrays only, not strings"
        return super().supports(spec_id, dtype)

    def refusal(self, exc: Exception) -> Refusal:
        return Refusal(_message(exc), self.lacks_kernel(exc))

    def lacks_kernel(self, exc: Exception) -> bool:
        return says_not_implemented(_message(exc))

    def _runnable(self, case: Case, placement: Placement):
        return self.cached(model_key(case, placement),
                           lambda: _load(build_model(case, placement).SerializeToString()))

    def run_model(self, model: bytes, feeds: dict) -> list:
        import onnx

        names = fed_input_names(onnx.load_model_from_string(model))
        outputs = _load(model).run([feeds[name] for name in names])
        return [o.to_numpy() for o in outputs]

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            runnable = self._runnable(case, placement)
            if isinstance(runnable, Refusal):
                return runnable.outcome()
            return Outcome(output=runnable.run(list(feeds(case, placement).values()))[0].to_numpy())
        except Exception as exc:
            return self.refusal(exc).outcome()
