"""Run generated/openvino/test_*/ with nothing but openvino and numpy.

usage: python run_openvino.py DIR [DIR ...]   (a test_* directory or a folder of them)
Each test: read model.xml, feed input_<i>.npy in Parameter order, compare the output with
output_0.npy bit for bit (any NaN equals any NaN). Kinds numpy lacks (bf16, f8...) are stored as bits.
The tests run in a child process; when OpenVINO kills it (it corrupts its heap on some pads),
that test is reported as CRASH and a new child goes on with the next one.
Exit 0 when every test passed, 1 otherwise.
"""
# generate copies this file into generated/openvino/, whose README promises it runs with nothing
# but openvino and numpy: so it imports nothing from padconf, and its sub-byte packing (padconf's
# adapters/openvino_tensors.py) and bit equality (padconf's dtypes.bit_equal) are copies by design.
from __future__ import annotations

import glob
import os
import subprocess
import sys
from typing import Any

import numpy as np


def tensor(arr: np.ndarray, element_type: Any) -> Any:
    """An ov.Tensor of the array's bytes, with the Parameter's element type (bf16 from uint16 ...);
    sub-byte kinds (int4, uint2 ...), one element a byte in the .npy, packed lowest bits first."""
    import openvino as ov
    raw = np.frombuffer(arr.tobytes(), dtype=np.uint8).copy()
    bits = element_type.bitwidth
    if bits < 8:
        per_byte = 8 // bits
        raw = np.concatenate([raw & ((1 << bits) - 1), np.zeros(-raw.size % per_byte, np.uint8)])
        raw = (raw.reshape(-1, per_byte) << (np.arange(per_byte, dtype=np.uint8) * bits)).sum(1).astype(np.uint8)
    return ov.Tensor(raw, ov.Shape(list(arr.shape)), element_type)


def values(out: Any, dtype: np.dtype) -> np.ndarray:
    """The output tensor's elements as ``dtype`` (sub-byte kinds unpacked, lowest bits first)."""
    raw = np.frombuffer(np.asarray(out.data).tobytes(), dtype=np.uint8)
    bits = out.element_type.bitwidth
    if bits < 8:
        shifts = np.arange(8 // bits, dtype=np.uint8) * bits
        raw = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:int(np.prod(tuple(out.shape)))]
    return raw.copy().view(dtype).reshape(tuple(out.shape))


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
        fa, fb = a.reshape(-1), b.reshape(-1)
        if a.dtype.kind == "c":
            fa, fb = fa.view(fa.real.dtype), fb.view(fb.real.dtype)
        nan = np.isnan(fa) & np.isnan(fb)
        return bool(np.all((fa.view(bits[fa.itemsize]) == fb.view(bits[fb.itemsize])) | nan))
    return bool(np.array_equal(a, b))


def run(test_dir: str, core: Any) -> bool:
    model = core.read_model(os.path.join(test_dir, "model.xml"))
    compiled = core.compile_model(model, "CPU", {"EXECUTION_MODE_HINT": "ACCURACY"})
    feeds = [tensor(np.load(os.path.join(test_dir, f"input_{i}.npy"), allow_pickle=False), p.get_element_type())
             for i, p in enumerate(model.inputs)]
    request = compiled.create_infer_request()
    request.infer(feeds)
    out = request.get_output_tensor(0)
    expected = np.load(os.path.join(test_dir, "output_0.npy"), allow_pickle=False)
    return same(values(out, expected.dtype), expected)


def child(dirs: list[str]) -> None:
    import openvino as ov
    core = ov.Core()
    for d in dirs:
        try:
            ok, why = run(d, core), "output differs"
        except Exception as exc:  # the runtime refused the model or the inputs
            ok, why = False, " ".join(str(exc).split())[:200]
        print(("PASS " if ok else "FAIL ") + os.path.basename(d) + ("" if ok else ": " + why), flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1:])
        return 0
    dirs: list[str] = []
    for arg in argv:
        found = os.path.exists(os.path.join(arg, "model.xml"))
        dirs += [arg] if found else sorted(glob.glob(os.path.join(arg, "test_*")))
    lines: list[str] = []
    while dirs:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *dirs],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        done = [line for line in proc.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
        if done:
            print("\n".join(done), flush=True)
        lines += done
        if len(done) < len(dirs):  # the child died on the next test
            lines.append(f"CRASH {os.path.basename(dirs[len(done)])}: exit status {proc.returncode}")
            print(lines[-1], flush=True)
        dirs = dirs[len(done) + 1:]
    passed = sum(line.startswith("PASS") for line in lines)
    print(f"{passed} passed, {len(lines) - passed} failed of {len(lines)}")
    return 1 if passed < len(lines) or not lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
