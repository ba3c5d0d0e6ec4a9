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


def _loaded_none(monkeypatch):
    """Every model load fails the test: the whole input is refused before any is loaded."""
    import padconf.suite.folders as folders

    def loaded(*args, **kwargs):
        raise AssertionError("a model was loaded before the whole input was bounded")
    monkeypatch.setattr(folders, "load_model", loaded)


@pytest.mark.parametrize("how", ["hard links of one folder", "folders each under the bounds"])
def test_the_whole_input_across_every_folder_named_is_bounded_before_any_loads(tmp_path, monkeypatch, capsys, how):
    """``run --cases DIR DIR ...``: each folder's walk was bounded, the folders together were
    not (one 48 MB test folder hard-linked many times, a 2.78 GB peak). Sparse files: 200 MB
    each of apparent size, each under a file's bound, 6 of them past the whole's."""
    from padconf.cli import main
    from padconf.suite.folders import MAX_INPUT_BYTES, MAX_MODEL_BYTES
    size = 200 << 20
    assert size < MAX_MODEL_BYTES and 6 * size > MAX_INPUT_BYTES
    first = tmp_path / "c0" / "test_big"
    shutil.copytree(SOURCE, first)
    with open(first / "model.bin", "wb") as f:  # any file of the folder counts: padconf reads what it names
        f.truncate(size)
    folders = [tmp_path / "c0"]
    for k in range(1, 6):
        there = tmp_path / f"c{k}" / "test_big"
        if how == "hard links of one folder":
            there.mkdir(parents=True)
            for file in first.rglob("*"):
                target = there / file.relative_to(first)
                target.parent.mkdir(parents=True, exist_ok=True)
                if file.is_file():
                    target.hardlink_to(file)
        else:
            shutil.copytree(SOURCE, there)
            with open(there / "model.bin", "wb") as f:
                f.truncate(size)
        folders.append(there.parent)
    assert len(read_cases(folders[:1], load_specs())) == 1  # one folder is within every bound
    _loaded_none(monkeypatch)
    with pytest.raises(CaseError, match=f"more than {MAX_INPUT_BYTES} bytes in all"):
        read_cases(folders, load_specs())
    assert main(["run", "--runtime", "onnx-reference", "--out", str(tmp_path / "out"),
                 "--cases", *map(str, folders)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"more than {MAX_INPUT_BYTES} bytes in all" in err


def test_the_arrays_of_the_cases_read_are_bounded_together(tmp_path, monkeypatch):
    """Each case under its own bound, together past MAX_CASES_BYTES: refused as they are read."""
    import padconf.cases.case
    import padconf.suite.folders as folders
    cases = tmp_path / "cases"
    for k, source in enumerate(sorted((GENERATED / "onnx").glob("test_pad19_*"))[:3]):
        shutil.copytree(source, cases / f"test_{k}")
    kept = sum(folders.case_nbytes(c) for c in read_cases([cases], load_specs()))
    monkeypatch.setattr(padconf.cases.case, "MAX_CASES_BYTES", kept - 1)  # the bound, scaled down to three small cases
    with pytest.raises(CaseError, match="the cases of the test directories named hold more than"):
        read_cases([cases], load_specs())


def test_many_small_test_directories_are_one_line_before_any_is_read(tmp_path, monkeypatch):
    """10,000 tiny test directories, each within every bound, were read one by one for minutes
    (no result written); across two folders named, as in one."""
    from padconf.suite.folders import MAX_TEST_DIRS
    half = MAX_TEST_DIRS // 2 + 1
    for folder in ("a", "b"):
        for k in range(half):  # an empty model.onnx: found by the walk, refused only when read
            (tmp_path / folder / f"test_{k}").mkdir(parents=True)
            (tmp_path / folder / f"test_{k}" / "model.onnx").touch()
    _loaded_none(monkeypatch)
    assert len(case_dirs(tmp_path / "a")) == half
    with pytest.raises(CaseError, match=f"more than {MAX_TEST_DIRS}"):
        read_cases([tmp_path / "a", tmp_path / "b"], load_specs())
    with pytest.raises(CaseError, match=f"more than {MAX_TEST_DIRS} test directories"):
        case_dirs(tmp_path)
