"""Run generated/openvino/test_*/ with nothing but openvino and numpy.

usage: python run_openvino.py DIR [DIR ...]   (a test_* directory or a folder of them)
Each test: read model.xml, feed input_<i>.npy in Parameter order, compare the output with
output_0.npy bit for bit (any NaN equals any NaN). bf16 tensors are stored as uint16 bits.
Exit 0 when every test passed, 1 otherwise.
"""
import glob
import os
import sys

import numpy as np
import openvino as ov


def tensor(arr, element_type):
    """An ov.Tensor of the array's bytes, with the Parameter's element type (bf16 from uint16)."""
    raw = np.frombuffer(arr.tobytes(), dtype=np.uint8).copy()
    return ov.Tensor(raw, ov.Shape(list(arr.shape)), element_type)


def same(a, b):
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


def run(test_dir, core):
    model = core.read_model(os.path.join(test_dir, "model.xml"))
    compiled = core.compile_model(model, "CPU", {"EXECUTION_MODE_HINT": "ACCURACY"})
    feeds = [tensor(np.load(os.path.join(test_dir, f"input_{i}.npy"), allow_pickle=False), p.get_element_type())
             for i, p in enumerate(model.inputs)]
    request = compiled.create_infer_request()
    request.infer(feeds)
    out = request.get_output_tensor(0)
    expected = np.load(os.path.join(test_dir, "output_0.npy"), allow_pickle=False)
    got = np.frombuffer(np.asarray(out.data).tobytes(), dtype=expected.dtype)
    return same(got.reshape(tuple(out.shape)), expected)


def main(argv):
    dirs = []
    for arg in argv:
        dirs += [arg] if os.path.exists(os.path.join(arg, "model.xml")) else sorted(glob.glob(os.path.join(arg, "test_*")))
    core, failed = ov.Core(), 0
    for d in dirs:
        try:
            ok, why = run(d, core), "output differs"
        except Exception as exc:  # the runtime refused the model or the inputs
            ok, why = False, " ".join(str(exc).split())[:200]
        failed += not ok
        print(("PASS " if ok else "FAIL ") + os.path.basename(d) + ("" if ok else ": " + why))
    print(f"{len(dirs) - failed} passed, {failed} failed of {len(dirs)}")
    return 1 if failed or not dirs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
