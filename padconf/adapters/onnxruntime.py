"""ONNX Runtime, CPU execution provider, on the model padconf.cases.onnx_model builds."""
from __future__ import annotations

import ctypes
import re
import sys

import numpy as np

from padconf.adapters import Adapter, Outcome, Refusal, RemoteError, StandaloneRepro, error_text, split_variant
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, feeds, model_key
from padconf.core.dtypes import bit_equal, dtype_name, onnx_type
from padconf.core.vocabulary import Placement

# ORT's Python binding has no tensor type at all for these ("tensor type 14 is not supported"):
# the model is still loaded, so a missing kernel shows as not-implemented; only a model that
# loads makes the case skipped.
_UNFEEDABLE = {"complex64", "complex128"}
# ORT raises one exception type per status code; a missing kernel ("Could not find an
# implementation for Pad(19)") is status NOT_IMPLEMENTED, raised as this module's NotImplemented.
_ORT_ERRORS = "onnxruntime.capi.onnxruntime_pybind11_state"
_TYPE_NOT_BUILT = re.compile(
    r"not currently registered|no kernel|unsupported (element |data )?type|type \S+ is not supported", re.I)


def says_type_not_built(text: str) -> bool:
    """Whether ORT's error ``text`` says its build has no such tensor type ("MLDataType for:
    tensor(complex64) is not currently registered or supported"). Text is all there is: ORT
    raises it as status FAIL, the status of any refusal, and its Python binding says a type it
    cannot convert in a plain RuntimeError ("tensor type 14 is not supported")."""
    return bool(_TYPE_NOT_BUILT.search(text))


def _native(arr: np.ndarray) -> bool:
    """numpy's own dtypes (strings included) go through session.run as they are; ml_dtypes'
    (bfloat16, float8, int4 ...) are user-defined dtypes ORT's binding cannot map."""
    return arr.dtype.isbuiltin == 1


def _to_ortvalue(ort, arr: np.ndarray):
    """An OrtValue holding ``arr`` in ONNX's raw layout (sub-byte kinds packed two or four a byte,
    low bits first), which is how ORT lays them out in memory too."""
    from onnx import numpy_helper
    raw = numpy_helper.from_array(np.asarray(arr, order="C")).raw_data
    value = ort.OrtValue.ortvalue_from_shape_and_type(list(arr.shape), onnx_type(dtype_name(arr.dtype)))
    ctypes.memmove(value.data_ptr(), raw, min(len(raw), value.tensor_size_in_bytes()))
    return value


def _from_ortvalue(value, elem: int) -> np.ndarray:
    from onnx import helper, numpy_helper
    raw = ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes())
    return numpy_helper.to_array(helper.make_tensor("output", elem, value.shape(), raw, raw=True))


# a variant's optimization option -> onnxruntime's GraphOptimizationLevel
_LEVELS = {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED",
           "all": "ORT_ENABLE_ALL"}


# onnxruntime's graph transformers and rewrite rules that rewrite a Pad's neighbourhood, by the
# name `disabled_optimizers` takes -> what the optimized model then does (optimizer_pass names it)
ORT_PASSES = {"Pad_Fusion": "fuses Pad into its consumer (PadFusion)",
              "ConstantFolding": "folds the nodes computing the pads into constants (ConstantFolding)",
              "ShapeToInitializer": "folds the data's static shape into a constant (ShapeToInitializer)",
              "ConstantSharing": "shares equal constants (ConstantSharing)"}
_PASS_NOTE = re.compile(r"with only (\S+) disabled it gives what the unoptimized model gives")


def optimizer_pass(note: str | None) -> str | None:
    """What onnxruntime's optimizer did, as _optimizer_note's experiment names it ("fuses Pad
    into its consumer (PadFusion)"), or None."""
    found = _PASS_NOTE.search(note or "")
    return ORT_PASSES.get(found[1]) if found else None


def culprit_pass(holds) -> str | None:
    """The first ORT_PASSES entry whose disabling alone makes ``holds(disabled)`` true (a session
    with ``disabled_optimizers=disabled`` answers as the unoptimized model does, say); None
    where none does."""
    for name in ORT_PASSES:
        try:
            if holds([name]):
                return name
        except Exception:  # noqa: BLE001  the model still fails to load: not this pass
            continue
    return None


def _run_session(session, inputs: dict, options) -> list:
    """``session.run(None, inputs, options)``: its checks of the feed made once a session, not a
    case (that every input the graph requires is fed, and the output names, read from the
    session's binding one by one: on a small case as long as the run itself,
    docs/performance.md); padconf builds a graph and its feeds together, so they hold for every
    case of its model. A session whose feed would fail them, or of a release without the inner
    session, runs through session.run, which says so in its own words; an execution provider's
    failure, for session.run's fallback to retry (only with providers other than the CPU's)."""
    plan = session.__dict__.get("_padconf_plan")
    if plan is None:
        inner = getattr(session, "_sess", None)
        plan = session._padconf_plan = (
            frozenset(i.name for i in session.get_inputs() if not i.type.startswith("optional")),
            [o.name for o in session.get_outputs()], inner)
    required, names, inner = plan
    if inner is None or not required <= inputs.keys():
        return session.run(None, inputs, options)
    try:
        return inner.run(names, inputs, options)
    except Exception as exc:
        if type(exc).__name__ == "EPFail":
            return session.run(None, inputs, options)
        raise


def _new_session(ort, model: bytes, level: str | None = None, save_to: str | None = None,
                 disabled: list[str] | None = None):
    options = ort.SessionOptions()  # graph optimisation at ORT's default (all), or a variant's level
    if level is not None:
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    if save_to:
        options.optimized_model_filepath = save_to
    options.log_severity_level = 4  # errors reach us as exceptions; opset 1/2 warn on each load
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # tiny tensors
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"],
                                **({"disabled_optimizers": disabled} if disabled else {}))


def standalone_run(model, inputs, configuration):
    """onnxruntime's own API on a bundle's one-node model:
    copied into a bundle's repro script by its source, it imports nothing of padconf."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    for name, value in configuration.items():  # a variant's session options, as padconf ran it ({}: none)
        setattr(options, name, getattr(ort.GraphOptimizationLevel, value))
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


def _op_types(path: str) -> list[str]:
    import onnx
    return [node.op_type for node in onnx.load(path).graph.node]


class OnnxRuntimeAdapter(Adapter):
    name = module = "onnxruntime"
    package = "onnxruntime"
    # it resolves every graph through onnx's inference functions, and fails on their errors
    shape_inference = {"check_type": True, "strict_mode": True, "data_prop": True}
    skips_at_run_time = True  # a dtype its Python API cannot feed or fetch
    repro = StandaloneRepro("onnx onnxruntime", standalone_run)
    order_independent = True
    # a variant's graph optimizer level: onnxruntime[optimization=disabled] is the control that tells
    # a bug of the optimizer (only with it on, as ORT runs by default) from one of the kernels
    options = {"optimization": ("disabled", "basic", "extended", "all")}

    @property
    def optimize(self) -> bool:
        return self.settings.get("optimization") != "disabled"

    def configuration(self) -> dict[str, object]:
        level = self.settings.get("optimization")
        return {} if level is None else {"graph_optimization_level": _LEVELS[level]}

    @staticmethod
    def error_core(text: str) -> str:
        text = text.split("Status Message: ", 1)[-1]
        text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
        return re.sub(r"^/\S+:\d+ .*?\] (?=\w)", "", text)  # /src/pad.cc:441 Status PadImpl(...) [with T = ...]

    @classmethod
    def title_conditions(cls, runtime: str, note: str | None) -> tuple[str, str]:
        optimized = optimizer_pass(note)  # the note names the pass by experiment
        if not optimized:
            return "", ""
        level = split_variant(runtime)[1].get("optimization", "all")
        return "", f" only with graph optimization level {level}: the optimized model {optimized}"

    def __init__(self):
        super().__init__()
        self._quiet = None  # RunOptions: a failing kernel also logs to stderr; the exception suffices

    def _session(self, case: Case, placement: Placement):
        import onnxruntime as ort


        return self.cached(model_key(case, placement),
                           lambda: _new_session(ort, build_model(case, placement).SerializeToString(),
                                                _LEVELS.get(self.settings.get("optimization", ""))))

    def lacks_kernel(self, exc: Exception) -> bool:
        errors = sys.modules.get(_ORT_ERRORS)  # loaded, if ORT raised exc
        raised = (exc.type_name == f"{_ORT_ERRORS}.NotImplemented" if isinstance(exc, RemoteError)  # another release's
                  else errors is not None and isinstance(exc, errors.NotImplemented))
        return raised or says_type_not_built(error_text(exc))

    def run_model(self, model: bytes, feeds: dict) -> list:
        import onnxruntime as ort
        return _new_session(ort, model).run(None, feeds)

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            import onnxruntime as ort

            if self._quiet is None:
                self._quiet = ort.RunOptions()
                self._quiet.log_severity_level = 4
            session = self._session(case, placement)
            if isinstance(session, Refusal):
                return session.outcome()
            if case.dtype in _UNFEEDABLE:
                return Outcome(skipped=f"the model loads, but onnxruntime's Python API has no {case.dtype} "
                                       "tensor to feed or fetch")
            inputs = feeds(case, placement)
            if _native(case.data) and all(_native(a) for a in inputs.values()):  # data: the output's dtype
                output = _run_session(session, inputs, self._quiet)[0]
                return Outcome(output=output, note=self._optimizer_note(ort, case, placement, output))
            # Not np.ascontiguousarray: it turns a 0-d constant_value into shape (1,).
            values = {k: ort.OrtValue.ortvalue_from_numpy(np.asarray(a, order="C")) if _native(a)
                      else _to_ortvalue(ort, a) for k, a in inputs.items()}
            out = session.run_with_ort_values(None, values, self._quiet)[0]
            return Outcome(output=_from_ortvalue(out, onnx_type(case.dtype)))
        except Exception as exc:
            return self.refusal(exc).outcome()

    def _optimizer_note(self, ort, case: Case, placement: Placement, output: np.ndarray) -> str | None:
        """For a context case (a graph ORT's optimizer may rewrite: fuse the Pad into its consumer,
        fold its pads' chain), where the output differs from the same model's with the optimizer
        disabled: a note that the difference is the optimizer's, with the graph it made."""
        if case.context is None or not self.optimize:
            return None
        if placement == Placement.INPUTS and not case.context.producer.is_constant \
                and not case.context.static_shape:
            return None  # pads fed at run time over a symbolic shape: nothing the optimizer can fold or fuse
        import tempfile

        model = build_model(case, placement).SerializeToString()
        try:
            plain = _new_session(ort, model, _LEVELS["disabled"]).run(None, feeds(case, placement), self._quiet)[0]
        except Exception as exc:
            plain = error_text(exc)
        if not isinstance(plain, str) and bit_equal(plain, output):
            return None
        with tempfile.TemporaryDirectory() as folder:
            saved = f"{folder}/optimized.onnx"
            _new_session(ort, model, save_to=saved)
            ops = _op_types(saved)
        before = [node.op_type for node in build_model(case, placement).graph.node]
        level = _LEVELS.get(self.settings.get("optimization", ""))
        inputs = feeds(case, placement)

        def unoptimized(disabled: list[str]) -> bool:  # the answer of the model with the optimizer disabled
            session = _new_session(ort, model, level, disabled=disabled)
            try:
                got = session.run(None, inputs, self._quiet)[0]
            except Exception:  # noqa: BLE001
                return isinstance(plain, str)
            return not isinstance(plain, str) and bit_equal(plain, got)

        named = culprit_pass(unoptimized)
        return (f"onnxruntime's graph optimizer: with it disabled the model "
                f"{'refuses it: ' + plain if isinstance(plain, str) else 'gives another output'}; "
                f"it rewrote {'+'.join(before)} into {'+'.join(ops)}"
                + (f"; with only {named} disabled it gives what the unoptimized model gives: the optimized model "
                   f"{ORT_PASSES[named]}" if named else ""))
