"""Imports run one way only, down the data flow, layer by layer:

    core      the spec documents as data and the arithmetic they define (dtypes, specs, reference),
              and padconf's closed vocabularies (vocabulary)
    cases     a case, what its spec says of it, how an outcome is judged (classify, verdicts) and
              the result row that records it (results)
    runtimes  adapters and the worker processes they run in
    uses      runner, report, gate, the fixed suite and its test data (written, read back), minimize,
              on the layers below
    cli       the command line, thin over the uses

A module may import from its own layer and the layers below; an import from a higher layer (at
module level or inside a function) fails here, and the checker is shown to see one by planting
it.

Within the runtimes layer, the worker side (``worker_child``: what runs inside a worker process)
imports nothing of padconf's side that drives it, not even through another module, as
pytest-xdist's remote side imports nothing of its controller."""
import ast
import subprocess
import sys
from pathlib import Path

import padconf

PACKAGE = Path(padconf.__file__).parent
LAYERS = {  # each layer's modules; the dict's order is the layers' order
    "core": ["errors", "untrusted", "escape", "reaper", "versions", "vocabulary", "dtypes", "reference", "specs"],
    "cases": ["cases", "classify", "examples", "strategies", "onnx_model", "outcome", "verdicts", "signature",
              "results", "triage"],
    "runtimes": ["compile_cache", "adapters", "adapters.openvino_tensors", "adapters.onnxruntime",
                 "adapters.onnx_reference", "adapters.openvino", "adapters.openvino_onnx", "adapters.tract",
                 "adapters.iree", "adapters.tvm", "worker_protocol", "worker_child", "worker_process", "worker",
                 "runtimes"],
    "uses": ["fixed_suite", "testdata_write", "scripts", "scripts.run_openvino", "testdata_read", "runner",
             "draw_child", "report", "report_html", "baseline", "explore", "gate", "pytest_plugin", "suite",
             "suite.test_pad", "model_cut", "repro", "bundle_check", "repro_api", "bundle_title", "simplify",
             "minimize", "progress"],
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


# What runs inside a worker process, and what drives it from padconf's side.
CHILD_SIDE = "worker_child"
PARENT_SIDE = {"worker_process", "worker", "runtimes"}


def reachable(name: str, sources: dict[str, str]) -> set[str]:
    """Every padconf module that importing ``name`` imports, directly or through others."""
    found, todo = set(), [name]
    while todo:
        module = todo.pop()
        for other in imported(module, sources[module], MODULES[module].name == "__init__.py"):
            if other not in found:
                found.add(other)
                todo.append(other)
    return found


def test_the_worker_side_imports_nothing_of_the_side_driving_it():
    sources = {name: path.read_text() for name, path in MODULES.items()}
    assert not reachable(CHILD_SIDE, sources) & PARENT_SIDE
    assert "worker_protocol" in reachable(CHILD_SIDE, sources)  # the one vocabulary both sides share


def test_a_planted_parent_side_import_in_the_worker_side_is_found():  # or the test above would pass on anything
    sources = {name: path.read_text() for name, path in MODULES.items()}
    planted = dict(sources, worker_child=sources["worker_child"] + "\n\ndef later():\n    from .worker import Worker\n")
    assert reachable(CHILD_SIDE, planted) & PARENT_SIDE == {"worker", "worker_process"}  # the pool brings its handles
    # through a module it imports, too
    planted = dict(sources, dtypes=sources["dtypes"] + "\nfrom padconf.worker_process import Zygote\n")
    assert reachable(CHILD_SIDE, planted) & PARENT_SIDE == {"worker_process"}


def test_reading_a_run_imports_neither_hypothesis_nor_the_runner():
    """Rendering a report, minimizing or gating on recorded rows reads them through
    padconf.results: none of them pulls in what draws and runs cases."""
    for module in ("padconf.report", "padconf.report_html", "padconf.minimize", "padconf.gate"):
        code = (f"import sys; sys.path.insert(0, {str(PACKAGE.parent)!r}); import {module}; "
                "print(sorted({'hypothesis', 'padconf.runner', 'padconf.strategies'} & set(sys.modules)))")
        out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip() == "[]", f"importing {module} imports {out.strip()}"
