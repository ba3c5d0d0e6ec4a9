"""Reproducer written by padconf minimize. Standalone: needs numpy and the runtime only
(and ml_dtypes for bfloat16, float8, float4, int4 and int2 data).

usage: python repro.py [--runtime onnxruntime|openvino-onnx|openvino|onnx-reference|iree|tvm|tract]

Runs the model next to this file on its inputs (*.npy), in a child process (a runtime that
crashes or hangs is reported, not this script's end), and compares the output with what the
specification says, bit for bit (any NaN equals any NaN). Prints expected and actual.
Exit 1 while the bug is there, 0 once it is fixed.

The case it checks is in repro.json beside it. (padconf.minimize.bundle.repro: padconf copies this file
verbatim into every bundle, so it imports nothing from padconf; its bit equality, ``same``, is
padconf.core.dtypes.bit_equal's rule, kept apart for that reason and checked against it by the tests.)
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("cannot run: numpy is not installed (pip install numpy)")
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
ABOUT: dict = {}  # repro.json: the case, filled in by main()
HANG_SECONDS = 120
# the runtimes this checker runs a model on, each with the module its runner imports
RUNTIMES = {"onnxruntime": "onnxruntime", "openvino": "openvino", "openvino-onnx": "openvino", "onnx-reference": "onnx",
            "iree": "iree.runtime", "tvm": "tvm", "tract": "tract"}
# what each runtime's runner (run_<runtime> below) imports, as its pip install line says it
INSTALL = {"onnxruntime": "onnxruntime", "openvino": "openvino", "openvino-onnx": "openvino",
           "onnx-reference": "onnx", "iree": "onnx iree-base-compiler iree-base-runtime", "tvm": "onnx apache-tvm",
           "tract": "tract"}
SUB_BYTE = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}


def load(spec, file=None):
    arr = np.load(os.path.join(HERE, file or spec["file"]), allow_pickle=False)
    if spec.get("string"):
        return arr.astype(object)
    if spec.get("ml_dtypes"):  # bfloat16, float8, int4 ... are stored as their bits
        import ml_dtypes
        arr = arr.view(getattr(ml_dtypes, spec["ml_dtypes"]))
    return arr


def raw_bytes(arr):
    """The array's bytes as ONNX and OpenVINO lay them out: sub-byte kinds packed, low bits first."""
    bits = SUB_BYTE.get(arr.dtype.name)
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    if not bits:
        return raw
    per = 8 // bits
    raw = np.pad(raw & ((1 << bits) - 1), (0, -raw.size % per)).reshape(-1, per)
    return np.bitwise_or.reduce(raw << (np.arange(per, dtype=np.uint8) * bits), axis=1).astype(np.uint8)


def from_raw(raw, dtype, shape):
    raw = np.frombuffer(raw, dtype=np.uint8)
    bits = SUB_BYTE.get(dtype.name)
    if bits:
        shifts = np.arange(8 // bits, dtype=np.uint8) * bits
        raw = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:int(np.prod(shape))]
    return raw.copy().view(dtype).reshape(shape)


def run_onnxruntime(inputs, data_dtype):
    import ctypes

    import onnxruntime as ort
    options = ort.SessionOptions()
    options.log_severity_level = 4  # the error comes back as the exception; no second copy on stderr
    session = ort.InferenceSession(os.path.join(HERE, ABOUT["model"]), options, providers=["CPUExecutionProvider"])
    quiet = ort.RunOptions()
    quiet.log_severity_level = 4
    if data_dtype.isbuiltin == 1 and all(a.dtype.isbuiltin == 1 for a in inputs.values()):
        return session.run(None, inputs, quiet)[0]
    # numpy kinds ORT's binding cannot map (ml_dtypes'): OrtValues built from the raw bytes
    types = {i.name: i.type for i in session.get_inputs()}
    values = {}
    for name, arr in inputs.items():
        if arr.dtype.isbuiltin == 1:
            values[name] = ort.OrtValue.ortvalue_from_numpy(arr)
            continue
        code = ONNX_TYPES[types[name]]
        value = ort.OrtValue.ortvalue_from_shape_and_type(list(arr.shape), code)
        raw = raw_bytes(arr).tobytes()
        ctypes.memmove(value.data_ptr(), raw, min(len(raw), value.tensor_size_in_bytes()))
        values[name] = value
    out = session.run_with_ort_values(None, values, quiet)[0]
    return from_raw(ctypes.string_at(out.data_ptr(), out.tensor_size_in_bytes()), data_dtype, tuple(out.shape()))


ONNX_TYPES = {"tensor(bfloat16)": 16, "tensor(float8e4m3fn)": 17, "tensor(float8e4m3fnuz)": 18,
              "tensor(float8e5m2)": 19, "tensor(float8e5m2fnuz)": 20, "tensor(uint4)": 21, "tensor(int4)": 22,
              "tensor(float4e2m1)": 23, "tensor(float8e8m0)": 24, "tensor(uint2)": 25, "tensor(int2)": 26}


def run_openvino(inputs, data_dtype):
    import openvino as ov
    core = ov.Core()
    model = core.read_model(os.path.join(HERE, ABOUT["model"]))
    # as padconf ran it: OpenVINO's defaults, or the properties of the variant that failed
    compiled = core.compile_model(model, "CPU", ABOUT.get("configuration", {}))
    arrays = list(inputs.values())
    if ABOUT["model"].endswith(".onnx"):  # the ONNX frontend keeps the ONNX input names
        arrays = [inputs[port.get_any_name()] for port in compiled.inputs]
    tensors = []
    for arr, port in zip(arrays, compiled.inputs):
        if arr.dtype == object:
            tensors.append(ov.Tensor(np.asarray(arr, dtype=str)))
        else:
            tensors.append(ov.Tensor(raw_bytes(arr).copy(), ov.Shape(list(arr.shape)), port.get_element_type()))
    request = compiled.create_infer_request()
    request.infer(tensors)
    out = request.get_output_tensor(0)
    if data_dtype.kind == "O":
        return np.asarray(out.str_data, dtype=object).reshape(tuple(out.shape))
    if compiled.inputs and out.element_type != compiled.inputs[0].get_element_type():
        raise TypeError(f"output element type {out.element_type} instead of {compiled.inputs[0].get_element_type()}")
    raw = np.ascontiguousarray(out.data).reshape(-1).view(np.uint8).tobytes()
    return from_raw(raw, data_dtype, tuple(out.shape))


def run_onnx_reference(inputs):
    from onnx.reference import ReferenceEvaluator
    return np.asarray(ReferenceEvaluator(os.path.join(HERE, ABOUT["model"])).run(None, inputs)[0])


def run_iree(inputs):
    """As iree-import-onnx imports the model, compiled for the CPU (llvm-cpu, generic), run on local-sync."""
    import iree.compiler
    import iree.runtime
    import onnx
    from iree.compiler.extras import onnx_importer
    from iree.compiler.ir import Context
    model = onnx.load(os.path.join(HERE, ABOUT["model"]))
    info = onnx_importer.ModelInfo(onnx.shape_inference.infer_shapes(model, data_prop=True))
    module = info.create_module(context=Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    vmfb = iree.compiler.compile_str(module.get_asm(), input_type="onnx", target_backends=["llvm-cpu"],
                                     extra_args=["--iree-llvmcpu-target-cpu=generic"])
    loaded = iree.runtime.load_vm_flatbuffer(vmfb, driver="local-sync")
    entry = next(n for n in loaded.vm_module.function_names if not n.endswith("$async") and n != "__init")
    return np.asarray(loaded[entry](*inputs.values()).to_host())


def run_tvm(inputs):
    """TVM's Relax ONNX frontend, tvm.compile for llvm (the CPU), Relax's virtual machine."""
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    model = onnx.load(os.path.join(HERE, ABOUT["model"]))
    executable = tvm.compile(from_onnx(model, keep_params_in_input=False), target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a, tvm.cpu()) for a in inputs.values()]).numpy()


def run_tract(inputs):
    import tract
    runnable = tract.onnx().load(os.path.join(HERE, ABOUT["model"])).into_model().into_runnable()
    return runnable.run(list(inputs.values()))[0].to_numpy()


def same(a, b, tolerance=None):
    """Bit for bit, except that any NaN equals any NaN (padconf.core.dtypes.bit_equal's rule);
    with a context case's ``tolerance`` (a Conv or AveragePool after the Pad), finite expected
    values ``a`` within it of ``b`` (padconf.cases.context.snap's rule)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if tolerance is not None and a.dtype.kind == "f":
        wa, wb = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(wa)
            if bool(np.all(np.where(finite, np.abs(wa - wb) <= tolerance, (wa == wb) | (np.isnan(wa) & np.isnan(wb))))):
                return True
    if a.dtype == object:
        return a.tolist() == b.tolist()
    fa, fb = a.reshape(-1), b.reshape(-1)
    if fa.dtype.kind == "c":
        fa, fb = fa.view(fa.real.dtype), fb.view(fb.real.dtype)
    try:
        nan = np.isnan(fa) & np.isnan(fb)
    except TypeError:  # integers
        nan = np.zeros(fa.shape, dtype=bool)
    return bool(np.all((fa.view(f"u{fa.itemsize}") == fb.view(f"u{fb.itemsize}")) | nan))


def show(arr):
    arr = np.asarray(arr)
    with np.printoptions(threshold=60, edgeitems=3, linewidth=100):
        body = repr(arr.tolist()) if arr.dtype == object else np.array2string(arr, separator=", ")
    return f"{body}   ({arr.dtype if arr.dtype != object else 'string'}, shape {list(arr.shape)})"


def child(runtime):
    try:
        inputs = {spec["name"]: load(spec) for spec in ABOUT["inputs"]}
        data = load(ABOUT["data"])
        expect = ABOUT["expect"]
        expected = {label: None if f is None else load(ABOUT["output"], f) for label, f in expect["outputs"].items()}
    except ImportError as exc:  # bfloat16, float8, int4 ... need numpy's ml_dtypes extension
        print(f"cannot read the inputs: {exc} (pip install ml_dtypes)")
        return 2
    for name, arr in {"data": data, **inputs}.items():
        print(f"{name}: {show(arr)}" + ("" if name in inputs else "   (in the model: every input is a constant)"))
    if expect["kind"] == "must-reject":
        print(f"expected: an error ({expect['reason']})")
    for label, arr in expected.items():
        print(f"expected{'' if label == 'expected' else ' if ' + label}: " + ("an error" if arr is None else show(arr)))
    module = RUNTIMES.get(runtime)
    if module is None:
        print(f"no standalone runner for {runtime!r}: pass --runtime " + ", ".join(RUNTIMES))
        return 2
    try:
        __import__(module)
    except ImportError as exc:  # not the bug: the runtime is missing
        print(f"cannot run: {exc} (pip install {INSTALL[runtime]})")
        return 2
    try:
        if runtime == "onnxruntime":
            actual = run_onnxruntime(inputs, data.dtype)
        elif runtime in ("openvino", "openvino-onnx"):
            actual = run_openvino(inputs, data.dtype)
        elif runtime in ("iree", "tvm", "tract"):
            actual = {"iree": run_iree, "tvm": run_tvm, "tract": run_tract}[runtime](inputs)
        else:
            actual = run_onnx_reference(inputs)
    except Exception as exc:  # the runtime refused the model or the inputs
        print(f"actual: an error: {' '.join(str(exc).split())[:2000]}")
        if expect["kind"] == "must-reject" or any(arr is None for arr in expected.values()):
            print("OK: the runtime rejects it, as the specification allows")
            return 0
        print("BUG: the runtime rejects an input the specification defines")
        return 1
    print(f"actual: {show(actual)}")
    if expect["kind"] == "must-reject":
        print(f"BUG: the runtime accepts an input the specification forbids ({expect['reason']})")
        return 1
    tolerance = ABOUT.get("tolerance")
    matched = [label for label, arr in expected.items() if arr is not None and same(arr, actual, tolerance)]
    if matched:
        print("OK: the output is "
              + ("the expected one" if matched == ["expected"] else "what " + " | ".join(matched) + " gives"))
        return 0
    print("BUG: the output differs from " + ("the expected one" if expect["kind"] == "defined" else "every reading"))
    return 1


def main(argv):
    import argparse
    with open(os.path.join(HERE, "repro.json"), encoding="utf-8") as f:
        ABOUT.update(json.load(f))
    usage, about = __doc__.split("\n\n", 2)[1:]
    parser = argparse.ArgumentParser(usage=usage.split("usage: ", 1)[1], description=about,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default=ABOUT["runtime"],
                        help=f"the runtime to run the model on (default: {ABOUT['runtime']}, where padconf found this)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # the child process that runs it
    args = parser.parse_args(argv)
    runtime = args.runtime
    if args.child:
        return child(runtime)
    if runtime == ABOUT["runtime"]:
        print(ABOUT["title"], flush=True)
    else:  # what padconf found is another runtime's answer: this one's is below
        print(f"{runtime}: {ABOUT['case']}\n(padconf found this on {ABOUT['title']})", flush=True)
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--runtime", runtime],
                              timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"BUG: the runtime gave no answer within {HANG_SECONDS} s")
        return 1
    if proc.returncode in (0, 1, 2):
        return proc.returncode
    print(f"BUG: the runtime killed the process (exit status {proc.returncode})")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
