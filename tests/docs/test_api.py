"""The public API (padconf/api.py, docs/api.md): docs/api.md's example, which imports only
``from padconf import ...``, runs as written in a fresh process outside the checkout, runs a case
on onnxruntime and classifies another; every name the page lists is importable from padconf."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import padconf
from padconf import api

PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def example() -> str:
    (body,) = [b for b in BLOCK.findall(PAGE.read_text(encoding="utf-8")) if b.startswith("# api_example.py")]
    return body


def test_the_example_imports_the_public_api_only():
    imported = [node for node in ast.walk(ast.parse(example())) if isinstance(node, (ast.Import, ast.ImportFrom))]
    from_padconf = [node for node in imported if isinstance(node, ast.ImportFrom) and node.module == "padconf"]
    assert from_padconf, "the example uses padconf"
    assert all(not (node.module or "").startswith("padconf.") for node in imported if isinstance(node, ast.ImportFrom))
    assert not [a.name for node in imported if isinstance(node, ast.Import) for a in node.names
                if a.name.startswith("padconf")]


@pytest.mark.slow
def test_the_example_runs_a_case_on_onnxruntime_and_classifies_one(tmp_path):
    script = tmp_path / "api_example.py"
    script.write_text(example(), encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "[3. 2. 1. 2. 3. 2.]"
    assert lines[1] == "defined [[0.0, 0.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 5.0, 5.0]]"
    assert lines[2] == "onnxruntime inputs pass"
    assert lines[3].startswith("ambiguous mirror_beyond_dim ")


def test_every_name_of_the_api_is_padconfs_and_the_page_lists_it():
    assert padconf.__all__ == api.__all__
    page = PAGE.read_text(encoding="utf-8")
    for name in api.__all__:
        assert getattr(padconf, name) is getattr(api, name)
        assert f"`{name}" in page, f"docs/api.md does not list {name}"


def test_importing_padconf_imports_neither_numpy_nor_a_runtime():
    code = "import sys, padconf; print(sorted({'numpy', 'onnx', 'onnxruntime'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
