"""Imports run one way only, down the data flow, layer by layer:

    core      the spec documents as data and the arithmetic they define (dtypes, specs, reference)
    cases     a case, what its spec says of it, and how an outcome is judged (classify, verdicts)
    runtimes  adapters and the worker processes they run in
    uses      runner, report, gate, generate (onnx_testdata), minimise, on the layers below
    cli       the command line, thin over the uses

A module may import from its own layer and the layers below; an import from a higher layer (at
module level or inside a function) fails here, and the checker is shown to see one by planting
it."""
import ast
from pathlib import Path

import padconf

PACKAGE = Path(padconf.__file__).parent
LAYERS = {  # each layer's modules; the dict's order is the layers' order
    "core": ["errors", "untrusted", "escape", "reaper", "dtypes", "reference", "specs"],
    "cases": ["cases", "classify", "examples", "strategies", "onnx_model", "outcome", "verdicts", "signature",
              "triage"],
    "runtimes": ["compile_cache", "adapters", "adapters.openvino_tensors", "adapters.onnxruntime",
                 "adapters.onnx_reference", "adapters.openvino", "adapters.openvino_onnx", "adapters.tract",
                 "adapters.iree", "adapters.tvm", "worker", "runtimes"],
    "uses": ["onnx_testdata", "runner", "report", "report_html", "baseline", "gate", "pytest_plugin", "suite",
             "bundle_check", "repro_api", "bundle_title",
             "suite.test_pad", "model_cut", "repro", "minimise"],
    "cli": ["cli"],
}
LAYER_OF = {module: rank for rank, modules in enumerate(LAYERS.values()) for module in modules}
LAYER_NAMES = list(LAYERS)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py") if module_name(p)}


def imported(name: str, source: str, is_package: bool = False) -> set[str]:
    """The padconf modules the module ``name`` (its ``source``) imports, relative imports resolved."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.removeprefix("padconf.") for a in node.names if a.name.startswith("padconf.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = node.module
            elif node.module and node.module.startswith("padconf"):
                base, module = [], node.module.removeprefix("padconf").lstrip(".") or None
            else:
                continue
            target = ".".join(base + ([module] if module else []))
            for alias in node.names:  # `from . import report` imports a module
                sub = f"{target}.{alias.name}" if target else alias.name
                found.add(sub if sub in MODULES else target)
    return found - {""}


def upward_imports(name: str, source: str, is_package: bool = False) -> list[str]:
    return [f"{name} ({LAYER_NAMES[LAYER_OF[name]]}) imports {other} ({LAYER_NAMES[LAYER_OF[other]]})"
            for other in sorted(imported(name, source, is_package)) if LAYER_OF[other] > LAYER_OF[name]]


def test_every_module_has_one_layer():
    listed = [m for modules in LAYERS.values() for m in modules]
    assert len(listed) == len(set(listed))
    assert set(listed) == set(MODULES)


def test_no_module_imports_from_a_higher_layer():
    upward = [line for name, path in MODULES.items()
              for line in upward_imports(name, path.read_text(), path.name == "__init__.py")]
    assert not upward


def test_a_planted_upward_import_is_found():  # or the test above would pass on anything
    planted = MODULES["dtypes"].read_text() + "\n\ndef later():\n    from .runner import read_jsonl\n"
    assert upward_imports("dtypes", planted) == ["dtypes (core) imports runner (uses)"]
    planted = MODULES["adapters.openvino"].read_text() + "\nfrom padconf.gate import gate\n"
    assert upward_imports("adapters.openvino", planted) == ["adapters.openvino (runtimes) imports gate (uses)"]
    assert "adapters" in imported("adapters.openvino", MODULES["adapters.openvino"].read_text())
    assert {"report", "runner"} <= imported("cli", MODULES["cli"].read_text())
