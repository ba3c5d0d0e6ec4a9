"""Imports run one way only, down the data flow: specs -> cases -> expected (reference,
classify) -> actual (adapters) -> verdicts -> results (runner) -> report / cli. A module that
imports one later in this order (at module level or inside a function) fails here."""
import ast
from pathlib import Path

import padconf

PACKAGE = Path(padconf.__file__).parent
ORDER = [
    "errors", "untrusted", "escape", "reaper", "dtypes",
    "reference",  # imports nothing of padconf but errors and dtypes; specs takes INTERPRETATIONS from it
    "specs", "cases", "classify", "examples", "strategies",
    "onnx_model", "outcome", "compile_cache",
    "adapters", "adapters.openvino_tensors", "adapters.onnxruntime", "adapters.onnx_reference",
    "adapters.openvino", "adapters.openvino_onnx", "adapters.tract", "adapters.iree", "adapters.tvm",
    "worker", "verdicts", "signature", "triage", "onnx_testdata", "runner", "report", "report_html",
    "baseline", "gate", "pytest_plugin", "suite", "suite.test_pad", "model_cut", "repro", "minimise", "runtimes", "cli",
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py") if module_name(p)}


def imported(name: str, path: Path) -> set[str]:
    """The padconf modules ``name`` imports, relative imports resolved."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.removeprefix("padconf.") for a in node.names if a.name.startswith("padconf.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
            elif node.module and node.module.startswith("padconf"):
                base, node.module = [], node.module.removeprefix("padconf").lstrip(".") or None
            else:
                continue
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:  # `from . import report` imports a module
                sub = f"{target}.{alias.name}" if target else alias.name
                found.add(sub if sub in MODULES else target)
    return found - {""}


def test_order_names_every_module():
    assert set(ORDER) == set(MODULES)


def test_no_module_imports_one_later_in_the_flow():
    backward = [f"{name} imports {other}" for name, path in MODULES.items() for other in sorted(imported(name, path))
                if ORDER.index(other) > ORDER.index(name)]
    assert not backward


def test_the_checker_sees_relative_imports():  # or the test above would pass on anything
    assert "adapters" in imported("adapters.openvino", MODULES["adapters.openvino"])
    assert {"report", "runner"} <= imported("cli", MODULES["cli"])
    assert "specs" in imported("onnx_model", MODULES["onnx_model"])
