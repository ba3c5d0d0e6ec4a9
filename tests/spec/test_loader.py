"""The spec files: they load, their worked examples match the reference, and a broken file is
reported in one line naming file, key path and problem."""
import re
import shutil
from pathlib import Path

import pytest

from padconf.cases.examples import check_example
from padconf.cli import main
from padconf.core.errors import SpecError
from padconf.spec.loader import SPECS_DIR, _validator, load_spec, load_specs, parse_spec_id, spec_sort_key
from padconf.spec.reference import INTERPRETATIONS

SPECS = load_specs()
EXPECTED_IDS = {f"onnx/Pad-{v}" for v in (1, 2, 11, 13, 18, 19, 21, 23, 24, 25)} | {"openvino/Pad-1", "openvino/Pad-12",
                                                                                   "torch/Pad-2", "tf/Pad-2"}


def test_every_version_has_a_spec_file():
    assert {s.id for s in SPECS} == EXPECTED_IDS


@pytest.mark.parametrize("spec,example", [(s, e) for s in SPECS for e in s.examples],
                         ids=[f"{s.id}:{e['name']}" for s in SPECS for e in s.examples])
def test_worked_example_matches_reference(spec, example):
    result = check_example(spec, example)
    assert result.ok, result.detail


def test_version_deltas_as_documented():
    by_id = {s.id: s for s in SPECS}
    assert "string" not in by_id["onnx/Pad-11"].dtypes and "string" in by_id["onnx/Pad-13"].dtypes
    assert not by_id["onnx/Pad-13"].has_axes and by_id["onnx/Pad-18"].has_axes
    assert "wrap" not in by_id["onnx/Pad-18"].modes and "wrap" in by_id["onnx/Pad-19"].modes
    assert set(by_id["onnx/Pad-25"].dtypes) - set(by_id["onnx/Pad-24"].dtypes) == {"int2", "uint2"}
    assert set(by_id["onnx/Pad-24"].dtypes) - set(by_id["onnx/Pad-23"].dtypes) == {"float8e8m0"}
    assert set(by_id["onnx/Pad-23"].dtypes) - set(by_id["onnx/Pad-21"].dtypes) == {"float4e2m1"}
    assert "symmetric" in by_id["openvino/Pad-12"].modes
    assert by_id["onnx/Pad-1"].operands["pads"]["names"] == ["paddings"]
    assert "repeated_axes" in by_id["onnx/Pad-18"].ambiguities
    assert by_id["openvino/Pad-12"].rule("crop_beyond_dim") == "clamp_to_zero"


@pytest.fixture
def spec_copy(tmp_path):
    root = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, root)
    return root


def _break(root: Path, rel: str, old: str, new: str):
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("rel,old,new,message", [
    ("onnx/Pad-19.yaml", "modes: [constant, reflect, edge, wrap]", "modes: [constant, reflect, wrapp]",
     "onnx/Pad-19.yaml: modes[2]: 'wrapp' is not one of"),
    ("onnx/Pad-18.yaml", "version: 18", "version: [18",
     "onnx/Pad-18.yaml: line"),
    ("onnx/Pad-21.yaml", "extends: onnx/Pad-19", "extends: onnx/Pad-99",
     "onnx/Pad-21.yaml: extends: 'onnx/Pad-99': no such spec file"),
    ("onnx/Pad-11.yaml", "id: onnx/Pad-11", "id: onnx/Pad-12",
     "onnx/Pad-11.yaml: id: 'onnx/Pad-12' does not match"),
    ("openvino/Pad-12.yaml", "dtype: int32", "dtype: int33",
     "openvino/Pad-12.yaml: examples[0].dtype: 'int33' is not one of"),
])
def test_broken_spec_file_is_one_line(spec_copy, rel, old, new, message):
    path = _break(spec_copy, rel, old, new)
    with pytest.raises(SpecError) as info:
        load_spec(path, spec_copy)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_an_edit_to_a_spec_or_what_it_extends_is_seen_by_the_next_load(spec_copy):
    """A file is parsed once per process, and parsed again once it or a file it extends changes."""
    path = spec_copy / "onnx/Pad-21.yaml"  # extends Pad-19, taking its ambiguities
    first = load_spec(path, spec_copy)
    assert load_spec(path, spec_copy) is first
    _break(spec_copy, "onnx/Pad-19.yaml", "  - name: repeated_axes", "  - name: repeated_axis")
    with pytest.raises(SpecError, match=r"Pad-19.yaml: ambiguities\[0\].name: 'repeated_axis' is not one of"):
        load_spec(path, spec_copy)
    _break(spec_copy, "onnx/Pad-19.yaml", "  - name: repeated_axis", "  - name: repeated_axes")
    assert load_spec(path, spec_copy).doc == first.doc
    _break(spec_copy, "onnx/Pad-21.yaml", "extends: onnx/Pad-19", "extends: onnx/Pad-99")
    with pytest.raises(SpecError, match="extends: 'onnx/Pad-99': no such spec file"):
        load_spec(path, spec_copy)


def test_cli_exit_codes(spec_copy, capsys):
    assert main(["--specs-dir", str(spec_copy), "check"]) == 0
    _break(spec_copy, "onnx/Pad-19.yaml", "[3.4, 2.3, 3.4, 2.3]", "[3.4, 2.3, 3.4, 9.9]")
    assert main(["--specs-dir", str(spec_copy), "check"]) == 1
    _break(spec_copy, "onnx/Pad-13.yaml", "domain: onnx", "domain: tensorflow")
    assert main(["--specs-dir", str(spec_copy), "check"]) == 2
    err = capsys.readouterr().err
    assert "onnx/Pad-13.yaml: domain: 'tensorflow' is not one of" in err and "Traceback" not in err
    assert main(["check", "--no-such-flag"]) == 2


def test_schema_takes_ambiguity_names_from_the_reference(spec_copy, monkeypatch):
    """The schema's enums are INTERPRETATIONS: a name added there is accepted at once, and
    a name or interpretation not there is refused in one line."""
    monkeypatch.setitem(INTERPRETATIONS, "brand_new_point", ("one_way", "another_way"))
    _validator.cache_clear()
    try:
        new = "  - name: brand_new_point\n    text: \"x\"\n    interpretations: [one_way, another_way]\n" \
              "    default: one_way\n  - name: repeated_axes"
        load_spec(_break(spec_copy, "onnx/Pad-18.yaml", "  - name: repeated_axes", new), spec_copy)
        _break(spec_copy, "onnx/Pad-19.yaml", "  - name: repeated_axes", "  - name: repeated_axis")
        with pytest.raises(SpecError, match=r"Pad-19.yaml: ambiguities\[0\].name: 'repeated_axis' is not one of"):
            load_spec(spec_copy / "onnx/Pad-19.yaml", spec_copy)
        _break(spec_copy, "onnx/Pad-11.yaml", "[reject, clamp_to_zero]", "[reject, clamp]")
        with pytest.raises(SpecError,
                           match=r"interpretations\[1\]: 'clamp' is not one of \['reject', 'clamp_to_zero'\]"):
            load_spec(spec_copy / "onnx/Pad-11.yaml", spec_copy)
    finally:
        monkeypatch.undo()
        _validator.cache_clear()


def test_format_md_table_is_interpretations():
    """FORMAT.md's table of ambiguities: every name of INTERPRETATIONS, with exactly its
    interpretations in order, and nothing else."""
    text = (SPECS_DIR / "FORMAT.md").read_text()
    table = text.split("## Ambiguity names and their interpretations")[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {}
    for row in rows:
        name, _, interpretations = [cell.strip() for cell in row.strip("|").split(" | ")]
        documented[name.strip("`")] = tuple(re.findall(r"`([a-z_]+)`", interpretations))
    assert documented == INTERPRETATIONS


def test_spec_ids_parse_as_the_files_say():
    for spec in SPECS:
        assert parse_spec_id(spec.id) == (spec.domain, spec.version)
    assert sorted(["onnx/Pad-11", "openvino/Pad-1", "onnx/Pad-2"], key=spec_sort_key) == \
        ["onnx/Pad-2", "onnx/Pad-11", "openvino/Pad-1"]
    with pytest.raises(SpecError, match="not <domain>/Pad-<version>"):
        parse_spec_id("onnx/Pad19")
