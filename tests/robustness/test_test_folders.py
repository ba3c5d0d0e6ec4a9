"""A folder of test directories is walked bounded as a whole (``padconf.suite.folders.case_dirs``):
no link followed, nesting, names and test directories counted, and a test directory inside
another refused (docs/reliability.md)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from padconf.core.errors import CaseError
from padconf.spec.loader import load_specs
from padconf.suite.folders import MAX_FOLDER_DEPTH, case_dirs, read_cases

GENERATED = Path(__file__).resolve().parents[2] / "generated"
SOURCE = sorted((GENERATED / "onnx").glob("test_pad19_constant_float_basic_*"))[0]


def test_a_test_directory_inside_another_is_refused(tmp_path):
    outer = tmp_path / "cases" / "test_outer"
    shutil.copytree(SOURCE, outer)
    shutil.copytree(SOURCE, outer / "test_data_set_0" / "test_inner")
    for given in (tmp_path / "cases", outer):
        with pytest.raises(CaseError, match="a test directory inside the test directory"):
            case_dirs(given)


def test_links_in_a_folder_of_test_directories_are_not_followed(tmp_path):
    cases = tmp_path / "cases"
    shutil.copytree(SOURCE, cases / SOURCE.name)
    (cases / "loop").symlink_to(cases)  # rglob walked it, and a link to / walks the file system
    (cases / "root").symlink_to("/")
    assert case_dirs(cases) == [cases / SOURCE.name]
    assert len(read_cases([cases], load_specs())) == 1


def test_folders_nested_past_the_bound_are_one_line(tmp_path):
    deep = tmp_path / "cases"
    for i in range(MAX_FOLDER_DEPTH + 1):
        deep = deep / f"d{i}"
    shutil.copytree(SOURCE, deep)
    with pytest.raises(CaseError, match=f"nested more than {MAX_FOLDER_DEPTH} deep"):
        case_dirs(tmp_path / "cases")
