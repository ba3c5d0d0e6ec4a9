"""TensorFlow as an implementation under test: its eager ``tf.pad`` (``tf``), and tf2onnx's
conversion of a ``tf.function`` calling it (``tf-export``), on cases of TensorFlow's own document
(``tf/Pad-2``, specs/tf/Pad-2.yaml).

As for torch (padconf.adapters.exporters), the oracle is the framework's document computed by
padconf's reference; eager ``tf.pad`` is an implementation like any other. tf2onnx's graph is
judged as every exporter's is (``judged_export``): onnx.checker, then its meaning by ONNX's
documents (a Pad ONNX leaves open or forbids: a refusal naming it), onnxruntime's answer and
eager TensorFlow's in the note; ``[on=onnxruntime]`` makes onnxruntime's answer the outcome.
tf2onnx converts at its own default opset unless ``[opset=N]`` asks for another (it refuses
19 and above). Conversions are cached on disk by the call, like torch's exports.
"""
from __future__ import annotations

import json
import os
import re

import numpy as np

from padconf.adapters import Adapter, Outcome, StandaloneRepro, error_text
from padconf.adapters.compile_cache import CompileFailed, cache_key
from padconf.adapters.exporters import NOT_IMPLEMENTED, CachedExport, _classified, _shown, judged_export
from padconf.cases.case import Case
from padconf.core.dtypes import dtype_name, numpy_dtype
from padconf.core.versions import package_version
from padconf.core.vocabulary import Placement

# padconf's mode names -> TensorFlow's (specs/tf/Pad-2.yaml)
TF_MODES = {"constant": "CONSTANT", "reflect": "REFLECT", "symmetric": "SYMMETRIC"}
# the dtypes padconf hands TensorFlow through numpy (bfloat16 is ml_dtypes', which TensorFlow takes)
HANDED_OVER = {"float", "double", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "bool", "complex64", "complex128"}
INT32 = (-2**31, 2**31 - 1)
NO_KERNEL = re.compile(r"No registered '\w+' OpKernel|Could not find device for node|no kernel", re.I)


def dim_pairs(case: Case) -> np.ndarray:
    """A case's pads (begins, then ends) as TensorFlow's paddings: one [before, after] row per
    dimension (layout ``dim_pairs``; [0, 2] for rank 0); pads of odd length as given, one row
    (TensorFlow is to refuse them)."""
    pads = np.asarray([int(p) for p in case.pads], dtype=np.int64)
    if len(pads) % 2:
        return pads
    return np.stack([pads[:len(pads) // 2], pads[len(pads) // 2:]], axis=1)


def tf_call(case: Case) -> dict:
    """What TensorFlow is asked for ``case``: the data's shape and dtype, the paddings, TensorFlow's
    mode name and the value (a Python number, repr text for NaN, inf and complex; None when
    omitted; ``value_bits``: its bytes, which the call passes). Everything a conversion depends on
    but the data's values."""
    bits = None if case.constant_value is None else np.asarray(case.constant_value).reshape(()).tobytes().hex()
    value = None if case.constant_value is None else np.asarray(case.constant_value).reshape(()).item()
    if value is not None and not isinstance(value, (bool, int, float, complex)):  # an ml_dtypes scalar
        value = float(value)
    if isinstance(value, complex) or (isinstance(value, float) and not np.isfinite(value)):
        value = repr(value)
    return {"op": case.op, "shape": list(case.data.shape), "dtype": case.dtype, "paddings": dim_pairs(case).tolist(),
            "mode": TF_MODES.get(case.mode, case.mode), "value": value, "value_bits": bits,
            "value_dtype": None if bits is None else dtype_name(np.asarray(case.constant_value).dtype)}


# The two functions below are copied into bundles' repro scripts by their source: they import
# nothing of padconf, only numpy, tensorflow, tf2onnx and onnxruntime, inside the function.


def tf_pad(operands, fed, mode, opset, configuration):
    """TensorFlow's own answer: tf.pad on the data, eagerly."""
    import tensorflow as tf
    tf_mode = {"constant": "CONSTANT", "reflect": "REFLECT", "symmetric": "SYMMETRIC"}.get(mode, mode)
    x = tf.constant(operands["data"])
    if configuration.get("call") == "keras":  # the ZeroPadding1D/2D/3D layer of the spatial rows
        import keras
        rows = [tuple(int(p) for p in row) for row in operands["paddings"][1:-1]]
        return getattr(keras.layers, f"ZeroPadding{len(rows)}D")(rows[0] if len(rows) == 1 else tuple(rows))(x).numpy()
    paddings = tf.constant(operands["paddings"], dtype=tf.int32)
    if "value" in operands:
        return tf.pad(x, paddings, tf_mode, constant_values=tf.constant(operands["value"].reshape(()))).numpy()
    return tf.pad(x, paddings, tf_mode).numpy()


def tf_export(operands, fed, mode, opset, configuration):
    """tf2onnx.convert.from_function of a tf.function calling tf.pad as padconf converted it (at
    tf2onnx's default opset, or configuration's), then onnxruntime on the model, its defaults."""
    import numpy as np
    import onnxruntime
    import tensorflow as tf
    import tf2onnx
    tf_mode = {"constant": "CONSTANT", "reflect": "REFLECT", "symmetric": "SYMMETRIC"}.get(mode, mode)
    data = operands["data"]
    paddings = operands["paddings"]
    value = operands["value"].reshape(()) if "value" in operands else None
    spec = (tf.TensorSpec(data.shape, tf.as_dtype(data.dtype), name="x"),)
    if configuration.get("call") == "keras":  # a Keras model of one ZeroPadding1D/2D/3D layer: from_keras
        import keras
        rows = [tuple(int(p) for p in row) for row in paddings[1:-1]]
        inp = keras.Input(shape=data.shape[1:], batch_size=data.shape[0], dtype=data.dtype.name)
        layer = getattr(keras.layers, f"ZeroPadding{len(rows)}D")(rows[0] if len(rows) == 1 else tuple(rows))
        model, _ = tf2onnx.convert.from_keras(keras.Model(inp, layer(inp)), input_signature=spec,
                                              opset=configuration.get("opset"))
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, {session.get_inputs()[0].name: np.asarray(data)})[0]

    @tf.function(input_signature=spec)
    def pad(x):
        p = tf.constant(paddings, dtype=tf.int32)
        return tf.pad(x, p, tf_mode) if value is None else tf.pad(x, p, tf_mode, constant_values=tf.constant(value))

    model, _ = tf2onnx.convert.from_function(pad, input_signature=spec, opset=configuration.get("opset"))
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: np.asarray(data)})[0]


def keras_rows(case: Case) -> list[tuple[int, int]] | str:
    """The (before, after) rows of the spatial dimensions Keras' ZeroPadding1D/2D/3D layer pads for
    ``case`` (channels last: every dimension but the batch and the channels), or why no such layer
    can be asked it."""
    rank = case.data.ndim
    if case.mode != "constant" or case.constant_value is not None and np.asarray(case.constant_value) != 0:
        return "Keras' ZeroPadding layers pad with zeros (tf.pad's CONSTANT, no other value or mode)"
    if rank not in (3, 4, 5) or len(case.pads) != 2 * rank:
        return "ZeroPadding1D/2D/3D take (batch, spatial..., channels) input of rank 3 to 5"
    rows = dim_pairs(case).tolist()
    if any(rows[0]) or any(rows[-1]):
        return "Keras' ZeroPadding layers pad the spatial dimensions only, not the batch or the channels"
    if any(p < 0 for p in case.pads):
        return "Keras' ZeroPadding layers take counts of zeros to add: a negative one cannot be asked"
    return [(int(b), int(e)) for b, e in rows[1:-1]]


def _keras_layer(rows: list[tuple[int, int]]):
    import keras
    return getattr(keras.layers, f"ZeroPadding{len(rows)}D")(rows[0] if len(rows) == 1 else tuple(rows))


def _pad_fn(tf, call: dict):
    """The Python function tf.pad(x, paddings, mode[, constant_values]) of ``call``: the value a
    scalar tensor of its own bits and dtype (a NaN's payload, a zero's sign kept)."""
    paddings, mode = np.asarray(call["paddings"], dtype=np.int64), call["mode"]
    paddings = paddings.reshape(0, 2) if paddings.size == 0 else paddings
    value = None if call["value_bits"] is None else np.frombuffer(
        bytes.fromhex(call["value_bits"]), dtype=numpy_dtype(call["value_dtype"])).reshape(())

    def pad(x):
        p = tf.constant(paddings, dtype=tf.int32)
        return tf.pad(x, p, mode) if value is None else tf.pad(x, p, mode, constant_values=tf.constant(value))
    return pad


class TfAdapter(Adapter):
    """TensorFlow's eager tf.pad, judged by TensorFlow's own document."""

    name = "tf"
    module = "tensorflow"
    package = "tensorflow-cpu"
    domains = ("tf",)
    placements: tuple[str, ...] = (Placement.INPUTS,)
    preload: tuple[str, ...] = ("padconf.cases.classify", "jsonschema")
    skips_at_run_time = True  # a call TensorFlow cannot express
    repro = StandaloneRepro("tensorflow-cpu", tf_pad, own_graph=True)
    options = {"call": ("function", "keras")}  # keras: Keras' ZeroPadding1D/2D/3D layer, where one expresses the call
    type_names = ("DT_FLOAT", "DT_DOUBLE", "DT_HALF", "DT_BFLOAT16", "DT_BOOL", "DT_INT64", "DT_INT32", "DT_INT16",
                  "DT_INT8", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DT_COMPLEX64", "DT_COMPLEX128")
    framework_packages = ("tensorflow-cpu", "tf2onnx", "onnx")  # the versions a MANIFEST row of its graphs names

    @staticmethod
    def framework_call(case: Case) -> dict:
        """The framework call ``case`` is (tf_call), as a MANIFEST row names it."""
        return tf_call(case)

    def available(self) -> str | None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the import: its start-up lines are no answer
        found = super().available()
        if found is None:
            import tensorflow as tf
            try:  # one thread each, as every worker of a 2-core machine runs
                tf.config.threading.set_intra_op_parallelism_threads(1)
                tf.config.threading.set_inter_op_parallelism_threads(1)
            except RuntimeError:  # its runtime already started in this process: it keeps its pools
                pass
        return found

    def version(self) -> str | None:
        return package_version(self.package) or package_version("tensorflow")

    def configuration(self) -> dict[str, object]:
        return {"call": self.settings["call"]} if "call" in self.settings else {}

    @property
    def keras(self) -> bool:
        return self.settings.get("call") == "keras"

    def supports(self, spec_id: str, dtype: str) -> str | None:
        return super().supports(spec_id, dtype) or (
            None if dtype in HANDED_OVER else f"numpy hands TensorFlow no {dtype} tensors (tf.constant)")

    def own_operands(self, case: Case) -> dict[str, np.ndarray]:
        operands = {"data": case.data, "paddings": dim_pairs(case)}
        if case.constant_value is not None:
            operands["value"] = np.asarray(case.constant_value).reshape(())
        return operands

    def lacks_kernel(self, exc: Exception) -> bool:
        return bool(NO_KERNEL.search(str(exc)))

    def inexpressible(self, case: Case) -> str | None:
        """Why TensorFlow's API as documented cannot be asked ``case`` at all, or None."""
        if case.axes is not None:
            return "tf.pad takes no axes: its paddings has a row for every dimension"
        if any(not INT32[0] <= int(p) <= INT32[1] for p in case.pads):
            return "paddings: A Tensor of type int32: a pad beyond int32 cannot be passed as documented"
        rows = keras_rows(case) if self.keras else None
        return rows if isinstance(rows, str) else None

    def _call_fn(self, tf, case: Case):
        """tf.pad of the case's call, or with call=keras its ZeroPadding layer."""
        rows = keras_rows(case) if self.keras else None
        return _keras_layer(rows) if isinstance(rows, list) else _pad_fn(tf, tf_call(case))

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        import tensorflow as tf
        if self.inexpressible(case):
            return Outcome(skipped=self.inexpressible(case))
        try:
            return Outcome(output=np.asarray(self._call_fn(tf, case)(tf.constant(case.data)).numpy()))
        except Exception as exc:
            return self.refusal(exc).outcome()

    def _eager(self, case: Case) -> tuple[np.ndarray | None, str | None]:
        import tensorflow as tf
        try:
            return np.asarray(self._call_fn(tf, case)(tf.constant(case.data)).numpy()), None
        except Exception as exc:
            return None, error_text(exc)


class TfExportAdapter(CachedExport, TfAdapter):
    """tf2onnx's conversion (``tf2onnx.convert.from_function``) of a tf.function calling tf.pad, at
    tf2onnx's default opset (``opset=N``: another), the graph judged by ONNX's document
    (``on=onnxruntime``: by onnxruntime's answer on it)."""

    name = "tf-export"
    module = "tf2onnx"
    package = "tf2onnx"
    preload = ("tensorflow", "padconf.cases.classify", "jsonschema", "onnx.reference", "onnxruntime")
    options = {"opset": ("13", "15", "17", "18"), "on": ("document", "onnxruntime"), "call": ("function", "keras")}
    repro = StandaloneRepro("tensorflow-cpu tf2onnx onnxruntime", tf_export, own_graph=True)
    compiles_ahead = True  # a conversion takes a second or more: padconf waits for it as for a compile
    verb = "converts"

    def version(self) -> str | None:
        return package_version("tf2onnx")

    @property
    def exporter(self) -> str:
        opset = self.settings.get("opset")
        given = "" if opset is None else f"opset={opset}"
        return f"tf2onnx.convert.from_{'keras' if self.keras else 'function'}({given})"

    def configuration(self) -> dict[str, object]:
        found: dict[str, object] = {"opset": int(self.settings["opset"])} if "opset" in self.settings else {}
        return {**found, **super().configuration()}

    def export_key(self, call: dict) -> str:
        """The conversion cache's key: the call, TensorFlow's, tf2onnx's and onnx's versions, the opset."""
        return cache_key(b"tf-export", json.dumps(call, sort_keys=True), package_version("tensorflow-cpu") or "",
                         package_version("tf2onnx") or "", package_version("onnx") or "",
                         package_version("keras") or "", json.dumps({"opset": self.settings.get("opset"),
                                                                     "call": self.settings.get("call", "function")}))

    def _export(self, call: dict) -> bytes:
        import tensorflow as tf
        import tf2onnx
        spec = (tf.TensorSpec(call["shape"], tf.as_dtype(numpy_dtype(call["dtype"])), name="x"),)
        opset = None if self.settings.get("opset") is None else int(self.settings["opset"])
        try:
            if "keras_rows" in call:  # a Keras model of the one layer, as from_keras takes it
                import keras
                inp = keras.Input(shape=call["shape"][1:], batch_size=call["shape"][0],
                                  dtype=numpy_dtype(call["dtype"]).name)
                layer = _keras_layer([tuple(row) for row in call["keras_rows"]])
                model, _ = tf2onnx.convert.from_keras(keras.Model(inp, layer(inp)), input_signature=spec, opset=opset)
            else:
                function = tf.function(_pad_fn(tf, call), input_signature=spec)
                model, _ = tf2onnx.convert.from_function(function, input_signature=spec, opset=opset)
            return model.SerializeToString()
        except Exception as exc:  # the converter's refusal (or TensorFlow's, tracing the call)
            raise CompileFailed(f"{type(exc).__name__}: {error_text(exc)}") from None

    def export_call(self, case: Case) -> dict:
        """tf_call, with call=keras the layer's rows too: what a conversion is of."""
        rows = keras_rows(case) if self.keras else None
        return {**tf_call(case), "keras_rows": rows} if isinstance(rows, list) else tf_call(case)

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        if self.inexpressible(case):
            return Outcome(skipped=self.inexpressible(case))
        model = self.exported(case)
        if not isinstance(model, bytes):  # a Refusal: the converter raised
            return Outcome(error=f"{self.exporter} raised: {model.error}",
                           not_implemented=bool(NOT_IMPLEMENTED.search(model.error)),
                           note=f"eager tf.pad {_shown(*self._eager(case))}")
        eager = None if _classified(case) is None or case.op != "Pad" else self._eager(case)
        return judged_export(model, case, self.exporter, ("eager tf.pad", eager),
                             on_runtime=self.settings.get("on") == "onnxruntime")
