"""Attack round B's text, path and YAML fixes on main, held on instances of their own: a YAML
mapping holding a key twice (a baseline's second key hid its first) and a NUL in an external-data
location or a path are one line, exit 2; every format character is shown as its code point by
every escaper (test_escaping.py::test_every_format_character_of_this_pythons_unicode_is_shown_as_its_code_point)."""
from __future__ import annotations

import shutil
from importlib import resources

import pytest

from padconf.cli import main
from padconf.core.errors import CaseError
from padconf.core.untrusted import inside
from padconf.gate.baseline import parse_baseline
from tests.robustness.test_hostile_inputs import one_line_exit_2
from tests.robustness.test_whole_model import external, pad_model_with_constant_pads


@pytest.mark.parametrize("text", [
    "- runtime: onnxruntime\n  runtime: openvino\n  verdict: crash\n  why: the second hid the first\n",
    "- runtime: onnxruntime\n  verdict: crash\n  why: x\n  match: {spec: onnx/Pad-19, spec: onnx/Pad-2}\n",
])
def test_a_baseline_mapping_holding_a_key_twice_is_one_line(tmp_path, capsys, text):
    with pytest.raises(CaseError, match="twice"):
        parse_baseline(text, "b.yaml")
    (tmp_path / "b.yaml").write_text(text)
    one_line_exit_2(main(["gate", "--runtime", "onnx-reference", "--baseline", str(tmp_path / "b.yaml"),
                          "--work", str(tmp_path / "w")]), capsys, "twice")


def test_a_spec_file_holding_a_key_twice_is_one_line(tmp_path, capsys):
    specs = tmp_path / "specs"
    shutil.copytree(resources.files("padconf.spec") / "documents", specs)
    spec = specs / "onnx" / "Pad-2.yaml"
    spec.write_text(spec.read_text() + "version: 3\n")  # a second version: YAML would keep this one
    one_line_exit_2(main(["--specs-dir", str(specs), "check"]), capsys, "twice")


@pytest.mark.parametrize("location", ["pads.bin\0../../.env", "\0", "./\0/etc/passwd"])
def test_a_nul_in_an_external_data_location_is_one_line(tmp_path, capsys, location):
    where = tmp_path / "model"
    pad_model_with_constant_pads(where, external("pads", location))
    one_line_exit_2(main(["minimize", str(where), "--runtime", "onnx-reference", "--out", str(tmp_path / "m")]),
                    capsys, "external data")


def test_a_nul_in_a_path_is_one_line(tmp_path):
    with pytest.raises(CaseError, match="NUL"):
        inside(tmp_path / "a\0b", tmp_path)
