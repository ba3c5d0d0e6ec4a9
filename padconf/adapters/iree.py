"""IREE, the MLIR compiler and runtime, on the model padconf.cases.onnx_model builds: imported by
``iree.compiler.extras.onnx_importer`` (what ``iree-import-onnx`` runs), compiled by
``iree-compile`` for a target backend, run by ``iree.runtime`` on that backend's driver.

What ``iree-compile`` makes of the imported module (torch-mlir's onnx dialect) is kept in the
persistent compile cache (padconf.adapters.compile_cache), keyed by the module's text, IREE's version,
the backend and the flags; the ONNX model's own bytes are linked to that key, so that a warm
run neither imports nor compiles. The cache gives back only what padconf compiled (an entry
carries an HMAC under the user's key): a module planted there is compiled again, never run.
``iree-compile`` runs as a child of the worker, in its
process group, so a compile that hangs past the compile time limit ends with the worker; one
killed by a signal is a crash, not a refusal.
"""
from __future__ import annotations

import re
import signal
import subprocess

import numpy as np

from padconf.adapters import Adapter, Outcome, Refusal, StandaloneRepro, error_text
from padconf.adapters.compile_cache import (
    CompileCrashed,
    CompileDied,
    CompileFailed,
    CompileTimedOut,
    cache_key,
)
from padconf.adapters.compiled import CompilingAdapter
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, fed_input_names, feeds, model_key
from padconf.core.vocabulary import Placement

_NOT_IMPLEMENTED = re.compile(r"failed to legalize|unsupported|not supported|unimplemented|not implemented"
                              r"|unknown (element|data) ?type|no lowering|does not have integral number of total bytes",
                              re.I)


def says_not_implemented(text: str) -> bool:
    """Whether IREE's error ``text`` says it has no lowering for an op, a type or a pattern
    (rather than refusing the case): "failed to legalize operation 'torch.aten.reflection_pad2d'",
    "unsupported type"; "does not have integral number of total bytes": no layout for an odd
    count of a sub-byte type. Text is all there is: iree-compile is a subprocess whose stderr is
    its whole verdict (CompileFailed carries it, and the compile cache keeps only it), and
    iree.runtime raises plain ValueError / RuntimeError."""
    return bool(_NOT_IMPLEMENTED.search(text))
# Generic code (no host CPU tuning), so entries stay portable; named, so iree-compile does not
# warn that it defaults to it.
_FLAGS = {"llvm-cpu": ("--iree-llvmcpu-target-cpu=generic",)}


def _import(model: bytes) -> str:
    """The MLIR text ``iree-import-onnx`` makes of ONNX ``model`` (shapes inferred first, as it does)."""
    import onnx
    from iree.compiler.extras import onnx_importer
    from iree.compiler.ir import Context

    proto = onnx.shape_inference.infer_shapes(onnx.load_model_from_string(model), data_prop=True)
    info = onnx_importer.ModelInfo(proto)
    module = info.create_module(context=Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm(assume_verified=True)


def standalone_run(model, inputs, configuration):
    """IREE's own API on a bundle's ONNX model: imported as ``iree-import-onnx`` imports it (onnx's
    shape inference with data propagation first), compiled by ``iree.compiler.compile_str`` with
    padconf's target and flags ({}: llvm-cpu, generic CPU), run by ``iree.runtime`` on the
    target's driver. Copied into a bundle's repro script by its source, it imports nothing of padconf.
    iree-compile killed by a signal is a crash, as in padconf's adapter: this process dies by it too,
    which the script's parent reports, never a refusal the specification may allow."""
    import os
    import re

    import iree.compiler
    import iree.runtime
    import onnx
    from iree.compiler.extras import onnx_importer
    from iree.compiler.ir import Context

    info = onnx_importer.ModelInfo(onnx.shape_inference.infer_shapes(model, data_prop=True))
    module = info.create_module(context=Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    try:
        vmfb = iree.compiler.compile_str(module.get_asm(), input_type="onnx",
                                         target_backends=[configuration.get("backend", "llvm-cpu")],
                                         extra_args=configuration.get("flags", ["--iree-llvmcpu-target-cpu=generic"]))
    except iree.compiler.CompilerToolError as exc:
        died = re.search(r"^Error code: -(\d+)$", str(exc), re.MULTILINE)
        if died:
            print(" ".join(str(exc).split())[:1000], flush=True)
            os.kill(os.getpid(), int(died.group(1)))
        raise
    loaded = iree.runtime.load_vm_flatbuffer(vmfb, driver=configuration.get("driver", "local-sync"))
    entry = next(n for n in loaded.vm_module.function_names if not n.endswith("$async") and n != "__init")
    return loaded[entry](*inputs.values()).to_host()


class IreeAdapter(CompilingAdapter):
    name = "iree"
    module = "iree.runtime"
    package, companions = "iree-base-compiler", ("iree-base-runtime",)
    backend, driver = "llvm-cpu", "local-sync"  # iree-compile's --iree-hal-target-backends, the HAL driver
    not_implemented, lacks_strings = _NOT_IMPLEMENTED, "IREE has no string tensors"
    repro = StandaloneRepro("onnx iree-base-compiler iree-base-runtime", standalone_run)
    # What a conversion imports, imported in the zygote: under a worker's address-space cap, an
    # import cut short by a MemoryError leaves its MLIR dialect registered and its module gone or
    # half made, and every later conversion in that worker fails the same way ("Dialect namespace
    # 'func' is already registered."); a worker whose first cases come from the compile cache
    # imports them only at its first conversion, however full its address space is by then.
    shape_inference = {"data_prop": True}  # as iree-import-onnx, before it imports the model (_import)
    preload = (*Adapter.preload, "iree.compiler.version", "iree.compiler.extras.onnx_importer",
               "iree.compiler.dialects.builtin", "mmap")  # mmap: iree.runtime's, on loading a module

    def __init__(self):
        super().__init__()
        self.target = self.backend
        self._device = None

    def usable(self) -> str | None:
        try:
            import iree.compiler.tools  # noqa: F401  (iree-compile ships with the compiler package)
            import iree.runtime as rt
            if not rt.get_driver(self.driver).query_available_devices():
                return f"no {self.driver} device here"
        except Exception as exc:
            return f"IREE's {self.driver} driver is not usable here: {error_text(exc).split(';')[0]}"
        return None

    def repro_configuration(self, case: Case, note: str | None) -> dict[str, object]:
        """What ``iree-compile`` and the runtime need named (IREE has no default target): padconf's."""
        return {"backend": self.backend, "driver": self.driver, "flags": self._flags()}

    def _flags(self) -> list[str]:
        return list(_FLAGS.get(self.backend, ()))

    def _compile(self, text: str) -> bytes:
        """``iree-compile`` on ``text``, the command line iree.compiler.tools.compile_str builds,
        run here so that it has the compile time limit."""
        from iree.compiler.tools.core import CompilerOptions, TempFileSaver, build_compile_command_line

        options = CompilerOptions(target_backends=[self.backend], input_type="onnx", extra_args=self._flags())
        with TempFileSaver.implicit() as saver:
            command = build_compile_command_line("-", saver, options)
        try:
            done = subprocess.run(command, input=text.encode(), capture_output=True, timeout=self.compile_timeout)
        except subprocess.TimeoutExpired as exc:
            assert self.compile_timeout is not None  # only a run with a limit times out
            said = " ".join((exc.stderr or b"").decode(errors="replace").split())[:300]
            raise CompileTimedOut(self.compile_timeout, said=said) from None
        if done.returncode:
            said = done.stderr.decode(errors="replace")
            # its error lines once each (it repeats one per dispatch), not its notes and warnings
            errors = list(dict.fromkeys(line for line in said.splitlines() if "error:" in line))
            if done.returncode < 0:  # a signal: a segfault or an abort, no refusal of the model
                raise CompileCrashed(f"iree-compile killed by {signal.Signals(-done.returncode).name}: "
                                     + " ".join(said.split())[:300])
            raise CompileFailed(f"iree-compile exited with {done.returncode}: " + " ".join(errors or said.split()))
        return done.stdout

    def _vmfb(self, model: bytes) -> bytes:
        """What ``iree-compile`` makes of ONNX ``model``'s import, from the disk cache when an
        earlier run compiled it; a warm run skips the import too (most of its time otherwise),
        which is deterministic given the model's bytes and the versions of IREE and of onnx
        (whose shape inference it runs first)."""
        import iree.compiler.version
        import onnx

        versions = (iree.compiler.version.VERSION, self.backend, *self._flags())

        def convert() -> tuple[str, str]:
            text = _import(model)
            return cache_key(text, *versions), text

        key, text = self._cache.converted_key(cache_key(b"onnx", model, onnx.__version__, *versions), convert)
        return self._cache.fetch(key, lambda: self._compile(text if text is not None else convert()[1]),
                                 self.compile_timeout or float("inf"))

    def _load(self, model: bytes):
        """(the module's function, its name) for ONNX ``model``, compiled or taken from the disk cache."""
        import iree.runtime as rt

        vmfb = self._vmfb(model)
        config = rt.Config(self.driver)
        context = rt.SystemContext(config=config)
        vm_module = rt.VmModule.copy_buffer(context.instance, vmfb)
        context.add_vm_module(vm_module)
        entry = next(n for n in vm_module.function_names if not n.endswith("$async") and n != "__init")
        return context.modules[vm_module.name][entry]

    def run_model(self, model: bytes, feeds: dict) -> list:
        import onnx

        names = fed_input_names(onnx.load_model_from_string(model))
        outputs = self._load(model)(*[feeds[name] for name in names])
        return [np.asarray(o.to_host()) for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            function = self.cached(model_key(case, placement),
                                   lambda: self._load(build_model(case, placement).SerializeToString()))
            if isinstance(function, Refusal):
                return function.outcome()
            out = function(*feeds(case, placement).values())
            return Outcome(output=np.asarray(out.to_host()))
        except CompileDied:
            raise
        except Exception as exc:
            return self.refusal(exc).outcome()


class IreeCudaAdapter(IreeAdapter):
    name, backend, driver = "iree-cuda", "cuda", "cuda"


class IreeVulkanAdapter(IreeAdapter):
    name, backend, driver = "iree-vulkan", "vulkan-spirv", "vulkan"
