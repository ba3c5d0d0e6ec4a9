"""padconf/generate/scripts/run_openvino.py, the standalone runner generate copies beside the OpenVINO
cases, exercised function by function on tiny cases through real OpenVINO; its copies of
padconf's sub-byte packing and bit equality are held to agree with the originals."""
import io
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from padconf.adapters.openvino_tensors import ov_type, to_tensor
from padconf.core.dtypes import as_array, bit_equal, npy_bytes
from padconf.generate.scripts import run_openvino
from padconf.generate.writer import OPENVINO_RUNNER, write_openvino
from padconf.spec.loader import get_spec
from padconf.suite.fixed import SuiteCase, combo_case

SPEC = get_spec("openvino/Pad-12")


def written(root: Path, mode: str, dtype: str) -> Path:
    entry = SuiteCase(combo_case(SPEC, mode, dtype), "inputs", f"test_{mode}_{dtype}")
    write_openvino(entry, SPEC, root)
    return root / entry.path


@pytest.mark.parametrize("dtype", ["int4", "uint4", "uint2", "bfloat16", "float8e4m3fn", "float"])
def test_tensor_packs_as_padconf_does_and_values_reads_it_back(dtype):
    arr = as_array(list(range(7)), dtype).reshape(7)  # 7: an odd count leaves a half-filled last byte
    from_npy = np.load(io.BytesIO(npy_bytes(arr)), allow_pickle=False)  # as the script gets it: bits
    packed = run_openvino.tensor(from_npy, ov_type(dtype))
    assert bytes(np.asarray(packed.data).tobytes()) == bytes(np.asarray(to_tensor(arr, dtype).data).tobytes())
    assert bit_equal(run_openvino.values(packed, arr.dtype), arr)


def test_same_is_padconf_s_bit_equality():
    pairs = [(np.array([np.nan, 1.0]), np.array([-np.nan, 1.0])),  # any NaN equals any NaN
             (np.array([0.0]), np.array([-0.0])),  # -0.0 is not 0.0
             (np.array([1, 2], np.int32), np.array([1, 2], np.int64)),  # dtypes differ
             (np.array([1 + 2j], np.complex64), np.array([1 + 2j], np.complex64)),
             (np.array([[1.5]], np.float32), np.array([1.5], np.float32))]  # shapes differ
    assert [run_openvino.same(a, b) for a, b in pairs] == [bit_equal(a, b) for a, b in pairs] == \
        [True, False, False, True, False]


def test_run_passes_a_written_case_and_fails_a_wrong_output(tmp_path):
    core = ov.Core()
    right = written(tmp_path, "reflect", "int4")
    assert run_openvino.run(str(right), core)
    wrong = written(tmp_path, "constant", "float")
    expected = np.load(wrong / "output_0.npy")
    np.save(wrong / "output_0.npy", expected + 1)
    assert not run_openvino.run(str(wrong), core)


def test_main_runs_a_folder_in_a_child_and_says_which_failed(tmp_path, capsys):
    written(tmp_path, "edge", "int8")
    bad = written(tmp_path, "constant", "float")
    (bad / "model.xml").write_text("<net>", encoding="utf-8")  # OpenVINO refuses it
    assert run_openvino.main([str(tmp_path / "openvino")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "FAIL test_constant_float: " + lines[0].split(": ", 1)[1]
    assert lines[1:] == ["PASS test_edge_int8", "1 passed, 1 failed of 2"]


def test_generate_copies_the_script_verbatim():
    generated = Path(__file__).resolve().parents[2] / "generated" / "openvino" / "run_openvino.py"
    assert generated.read_bytes() == OPENVINO_RUNNER.read_bytes() == Path(run_openvino.__file__).read_bytes()
