"""Imports run one way only, down the data flow, layer by layer. Each folder of padconf that is a
package is a layer; LAYERS orders them, from the bottom:

    core       padconf's errors, closed vocabularies, dtypes, reading untrusted files, writing
               padconf's own, escaping, versions, progress lines
    spec       the spec documents (spec/documents, data) loaded and checked, and the arithmetic
               they define (reference)
    cases      a case, what its spec says of it (classify), examples, drawn cases, its ONNX model
    adapters   the runtimes behind one interface, what a runtime did (Outcome), the compile cache
    execution  the worker processes adapters run in, and the pool that drives them
    judging    a runtime's outcome judged: its verdict, its failure identity (failure), triage,
               and the records a run is made of (records)
    report     what a run's records show, rendered for the terminal, markdown and HTML; it reads
               no file (run.rundir hands it a run)
    suite      case sources beyond drawing: the fixed suite, test folders read back as cases
    generate   the fixed suite written as test data
    run        running cases (runner, drawing, controls) and the run directory (rundir), whose
               summary.md report renders
    releases   a runtime across its releases: where a case's verdict changed (bisect), a bundle's
               history
    gate       judging a run against a baseline
    pytest     the gate as pytest tests (the plugin and the suite it parametrises)
    minimize   a failing case cut down and bundled (shrink, probes, bundle)
    cli        the command line, thin over the layers: main, its options (parser), each command
    padconf    the modules directly in padconf: the public API (api) and the names plugins
               import (onnx_model)

A module may import from its own layer and the layers below; an import from a higher layer (at
module level or inside a function) fails here, and the checker is shown to see one by planting
it.

Within the execution layer, the worker side (``execution.worker_child``: what runs inside a
worker process) imports nothing of padconf's side that drives it, not even through another
module, as pytest-xdist's remote side imports nothing of its controller."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

import padconf

PACKAGE = Path(padconf.__file__).parent
LAYERS = ["core", "spec", "cases", "adapters", "execution", "judging", "report", "suite", "generate", "run",
          "releases", "gate", "pytest", "minimize", "cli", "padconf"]  # the flow, bottom first; "padconf": padconf/*.py
FOLDERS = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))


def layer_of(module: str) -> int:
    """``module``'s layer: the folder it is in, or "padconf" for a module directly in padconf."""
    top = module.split(".")[0]
    return LAYERS.index(top if top in FOLDERS else "padconf")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py") if module_name(p)}


def imported(name: str, source: str, is_package: bool = False) -> set[str]:
    """The padconf modules the module ``name`` (its ``source``) imports, relative imports resolved,
    with the packages they are in (importing padconf.cases.case runs padconf/cases/__init__.py)."""
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
            for alias in node.names:  # `from padconf.report import report` imports a module
                sub = f"{target}.{alias.name}" if target else alias.name
                found.add(sub if sub in MODULES else target)
    parents = {".".join(m.split(".")[:i]) for m in found for i in range(1, m.count(".") + 1)}
    return (found | parents) - {""}


def upward_imports(name: str, source: str, is_package: bool = False) -> list[str]:
    return [f"{name} ({LAYERS[layer_of(name)]}) imports {other} ({LAYERS[layer_of(other)]})"
            for other in sorted(imported(name, source, is_package)) if layer_of(other) > layer_of(name)]


def test_every_folder_is_one_layer():
    assert len(LAYERS) == len(set(LAYERS))
    assert sorted(set(LAYERS) - {"padconf"}) == FOLDERS  # a new folder takes its place in LAYERS
    assert "specs" not in FOLDERS  # the spec documents: data, not a layer
    assert {name for name in MODULES if "." not in name and name not in FOLDERS} == {"api", "entry", "onnx_model"}


def test_no_module_imports_from_a_higher_layer():
    upward = [line for name, path in MODULES.items()
              for line in upward_imports(name, path.read_text(), path.name == "__init__.py")]
    assert not upward


def test_a_planted_upward_import_is_found():  # or the test above would pass on anything
    dtypes = MODULES["core.dtypes"].read_text()
    planted = dtypes + "\n\ndef later():\n    from ..run.runner import read_jsonl\n"
    assert upward_imports("core.dtypes", planted) == ["core.dtypes (core) imports run (run)",
                                                      "core.dtypes (core) imports run.runner (run)"]
    planted = dtypes + "\n\ndef later():\n    from padconf.cases.case import Case\n"
    assert upward_imports("core.dtypes", planted) == ["core.dtypes (core) imports cases (cases)",
                                                      "core.dtypes (core) imports cases.case (cases)"]
    planted = MODULES["adapters.openvino"].read_text() + "\nfrom padconf.gate.gate import gate\n"
    assert upward_imports("adapters.openvino", planted) == ["adapters.openvino (adapters) imports gate (gate)",
                                                            "adapters.openvino (adapters) imports gate.gate (gate)"]
    planted = MODULES["run.runner"].read_text() + "\nfrom padconf import api\n"  # directly in padconf
    assert upward_imports("run.runner", planted) == ["run.runner (run) imports api (padconf)"]
    planted = MODULES["run.runner"].read_text() + "\nfrom padconf import cli\n"
    assert upward_imports("run.runner", planted) == ["run.runner (run) imports cli (cli)"]
    assert "adapters" in imported("adapters.openvino", MODULES["adapters.openvino"].read_text())
    assert {"report.report", "run.runner"} <= imported("cli.commands", MODULES["cli.commands"].read_text())


# The modules that import padconf's own modules inside functions, and why; anywhere else such an
# import is at module level.
LOCAL_IMPORTS = {
    "cli": "main imports the compile cache's setting and the worker pool's closing only when it needs them",
    "entry": "the command's modules are imported where Ctrl-C during their import is caught",
    "cli.commands": "each command imports what it runs, at start-up only what the options need",
    "pytest.plugin": "pytest imports the plugin in every session: its hooks import what they run",
    "gate.gate": "the runner uses Hypothesis: not imported to judge rows",
    "gate.selection": "the fixed suite and drawn cases use Hypothesis: not imported to judge rows",
    "minimize.targets": "model_cut reads test data with strategies (Hypothesis): not imported to minimize rows",
}


def imported_in_functions(name: str, source: str, is_package: bool = False) -> set[str]:
    """The padconf modules the module ``name`` imports inside a function."""
    inner = [node for function in ast.walk(ast.parse(source))
             if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(function)
             if isinstance(node, (ast.Import, ast.ImportFrom))]
    return imported(name, "\n".join(ast.unparse(node) for node in inner), is_package)


def test_padconf_is_imported_at_module_level():
    local = {name for name, path in MODULES.items()
             if imported_in_functions(name, path.read_text(), path.name == "__init__.py")}
    assert local == set(LOCAL_IMPORTS)


def test_a_planted_function_local_import_is_found():  # or the test above would pass on anything
    planted = MODULES["core.dtypes"].read_text() + "\n\ndef later():\n    from padconf.core.errors import CaseError\n"
    assert imported_in_functions("core.dtypes", planted) == {"core", "core.errors"}
    assert not imported_in_functions("core.dtypes", MODULES["core.dtypes"].read_text())


# What runs inside a worker process, and what drives it from padconf's side.
CHILD_SIDE = "execution.worker_child"
PARENT_SIDE = {"execution.worker_process", "execution.worker", "execution.runtimes"}


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
    assert "execution.worker_protocol" in reachable(CHILD_SIDE, sources)  # the one vocabulary both sides share


def test_a_planted_parent_side_import_in_the_worker_side_is_found():  # or the test above would pass on anything
    sources = {name: path.read_text() for name, path in MODULES.items()}
    planted = dict(sources, **{CHILD_SIDE: sources[CHILD_SIDE] + "\n\ndef later():\n    from .worker import Worker\n"})
    # the pool brings its handles
    assert reachable(CHILD_SIDE, planted) & PARENT_SIDE == {"execution.worker", "execution.worker_process"}
    # through a module it imports, too
    planted = dict(sources, **{"core.dtypes": sources["core.dtypes"]
                               + "\nfrom padconf.execution.worker_process import Zygote\n"})
    assert reachable(CHILD_SIDE, planted) & PARENT_SIDE == {"execution.worker_process"}
    # or through a package's __init__
    planted = dict(sources, execution=sources["execution"] + "\nfrom padconf.execution import runtimes\n")
    assert reachable(CHILD_SIDE, planted) & PARENT_SIDE == {"execution.runtimes", "execution.worker",
                                                            "execution.worker_process"}


@pytest.mark.slow
def test_reading_a_run_imports_neither_hypothesis_nor_the_runner():
    """Rendering a report, minimizing or gating on recorded rows reads them through
    padconf.run.rundir: none of them pulls in what draws and runs cases."""
    for module in ("padconf.report.report", "padconf.report.report_html", "padconf.minimize.minimize",
                   "padconf.gate.gate", "padconf.gate.compare", "padconf.gate.junit"):
        code = (f"import sys; sys.path.insert(0, {str(PACKAGE.parent)!r}); import {module}; "
                "print(sorted({'hypothesis', 'padconf.run.runner', 'padconf.cases.strategies'} & set(sys.modules)))")
        out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip() == "[]", f"importing {module} imports {out.strip()}"


def test_minimize_names_no_runtime():
    """What is runtime-specific lives in the adapter (its hooks: error_core, title_conditions,
    repro_configuration, exhibited_on, repro): minimize imports padconf.adapters' interface and
    its records, never a runtime's adapter module."""
    interface = {"adapters", "adapters.outcome"}
    found = {f"{name} imports {other}" for name, path in MODULES.items() if name.startswith("minimize")
             for other in imported(name, path.read_text(), path.name == "__init__.py")
             if other.startswith("adapters") and other not in interface}
    assert not found
    planted = MODULES["minimize.bundle.title"].read_text() + "\nfrom padconf.adapters.onnxruntime import culprit_pass\n"
    assert "adapters.onnxruntime" in imported("minimize.bundle.title", planted)  # the check sees one
