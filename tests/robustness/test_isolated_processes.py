"""No code of the working directory runs in any process padconf starts: the suite's drawing
children, the run's drawing children, workers and zygotes all start isolated (``python -I``,
``padconf.execution.children``), and a module planted in the working directory under a name
padconf or its children import (multiprocessing, numpy, json) is never imported
(docs/reliability.md)."""
import subprocess
import sys
import textwrap

import pytest

PLANTED = ("multiprocessing", "numpy", "json", "padconf")


def plant_modules(folder, markers):
    """A module for each of PLANTED in ``folder`` that leaves a file in ``markers`` when imported,
    then raises (a multiprocessing.Pool respawned such children for ever)."""
    markers.mkdir()
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\nraise SystemExit(7)\n")


@pytest.mark.slow
def test_drawing_the_suite_in_children_imports_nothing_from_the_working_directory(tmp_path):
    """The gate's and generate's suite of two or more versions drawn in children: multiprocessing's
    spawn children start as ``python -c`` with the working directory first on their path, so a
    planted ``multiprocessing.py`` ran (and, raising, was respawned for ever). The parent is a
    script elsewhere, as the console scripts are: it imports nothing of the working directory."""
    cwd, markers, driver = tmp_path / "checkout", tmp_path / "imported", tmp_path / "driver" / "draw.py"
    cwd.mkdir()
    driver.parent.mkdir()
    plant_modules(cwd, markers)
    driver.write_text(textwrap.dedent("""
        import sys
        from padconf.spec.loader import load_specs
        from padconf.suite.fixed import suite_cases
        specs = load_specs(None, ["onnx/Pad-2", "openvino/Pad-1"])
        together, apart = suite_cases(specs, jobs=2), suite_cases(specs, jobs=1)
        same = [(e.path, e.placement, e.case.to_json()) for e in together] == \\
               [(e.path, e.placement, e.case.to_json()) for e in apart]
        print(len(together), same)
    """))
    done = subprocess.run([sys.executable, str(driver)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    count, same = done.stdout.split()
    assert int(count) > 100 and same == "True"
    assert not list(markers.iterdir())


@pytest.mark.slow
def test_drawing_a_runs_versions_in_children_imports_nothing_from_the_working_directory(tmp_path):
    cwd, markers, driver = tmp_path / "checkout", tmp_path / "imported", tmp_path / "driver" / "draw.py"
    cwd.mkdir()
    driver.parent.mkdir()
    plant_modules(cwd, markers)
    driver.write_text(textwrap.dedent("""
        from padconf.run.drawing import _draw_in_children, draw_spec
        args = [(None, spec, 4, 0) for spec in ("onnx/Pad-2", "openvino/Pad-12")]
        print(_draw_in_children(args, 2) == [draw_spec(a) for a in args])
    """))
    done = subprocess.run([sys.executable, str(driver)], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.split() == ["True"], done.stderr[-3000:]
    assert not list(markers.iterdir())
