"""Every repro in a runtime's own API says what to install (``pip install numpy <pip>``): each
module the script imports (the adapter's StandaloneRepro.run, copied by its source, its
``imports``, and onnx where the script builds an ONNX model) is installed by a package that line
names. IREE's said iree-base-compiler alone while its run imports iree.runtime too."""
import ast
import functools
import importlib.metadata
import importlib.util
import inspect
import os
import sys
import textwrap

import pytest

from padconf.adapters import adapter_class, registry


def _imported(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


@functools.cache
def _owners() -> dict[str, set[str]]:
    """An installed file's path -> the distributions whose RECORD lists it."""
    owners: dict[str, set[str]] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"].lower().replace("_", "-")
        for f in dist.files or ():
            owners.setdefault(os.path.realpath(dist.locate_file(f)), set()).add(name)
    return owners


def _distributions(module: str, owners: dict[str, set[str]]) -> set[str] | None:
    """The distributions installing ``module`` (None: the standard library, or not a module)."""
    try:
        spec = importlib.util.find_spec(module)
    except Exception:  # noqa: BLE001 -- a parent package that fails on import here (tinygrad without a device)
        spec = importlib.util.find_spec(module.split(".")[0])
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    origin = os.path.realpath(spec.origin)
    if origin.startswith(os.path.realpath(sys.base_prefix)) and "site-packages" not in origin:
        return None  # the standard library
    return owners.get(origin, set())


REPROS = sorted(n for n in registry() if getattr(adapter_class(n), "repro", None) is not None)


@pytest.mark.parametrize("runtime", REPROS)
def test_a_repros_install_line_names_every_package_it_imports(runtime):
    adapter = adapter_class(runtime)
    repro = adapter.repro
    if adapter.module and importlib.util.find_spec(adapter.module.split(".")[0]) is None:
        pytest.skip(f"{adapter.module} is not installed here")
    # the script builds an ONNX model with onnx's helper unless the runtime builds its own graph
    modules = _imported(inspect.getsource(repro.run)) | set(repro.imports) | {"numpy"} \
        | (set() if repro.own_graph else {"onnx"})
    named = {w.lower().replace("_", "-") for w in ("numpy " + repro.pip).split()}
    owners = _owners()
    missing = {}
    for module in sorted(modules):
        dists = _distributions(module, owners)
        if dists and not dists & named and not module.startswith("padconf"):
            missing[module] = sorted(dists)
    assert not missing, f"{runtime}: `pip install numpy {repro.pip}` lacks {missing}"


@pytest.mark.parametrize("runtime", sorted(__import__("padconf.minimize.bundle.repro", fromlist=["x"]).RUNTIMES))
def test_the_generic_checkers_install_line_names_every_package_its_runner_imports(runtime):
    """repro.py's runner for each runtime (run_<runtime>) imports what REPORT.md's "Standalone"
    line and its own "cannot run" line tell a maintainer to install (IREE's runner imports onnx
    and iree.runtime beside iree.compiler)."""
    from padconf.minimize.bundle import repro as generic
    assert set(generic.INSTALL) == set(generic.RUNTIMES)
    runner = getattr(generic, "run_" + runtime.replace("-", "_"), None) or generic.run_openvino
    if importlib.util.find_spec(generic.RUNTIMES[runtime].split(".")[0]) is None:
        pytest.skip(f"{generic.RUNTIMES[runtime]} is not installed here")
    named = {w.lower().replace("_", "-") for w in ("numpy " + generic.INSTALL[runtime]).split()}
    owners = _owners()
    missing = {m: sorted(d) for m in sorted(_imported(inspect.getsource(runner)))
               if (d := _distributions(m, owners)) and not d & named}
    assert not missing, f"{runtime}: `pip install numpy {generic.INSTALL[runtime]}` lacks {missing}"
