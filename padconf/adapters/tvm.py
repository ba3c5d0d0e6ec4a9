"""Apache TVM, its Relax ONNX frontend, on the model padconf.cases.onnx_model builds: converted by
``tvm.relax.frontend.onnx.from_onnx``, compiled by ``tvm.compile`` (Relax's default pipeline)
for a target, run by Relax's virtual machine.

The shared library ``tvm.compile`` makes of the converted module is kept in the persistent
compile cache (padconf.adapters.compile_cache), keyed by the module's TVMScript text and constants,
TVM's version and the target; the ONNX model's own bytes are linked to that key, so that a
warm run neither converts nor compiles. The library is loaded only when padconf wrote the
entry (it carries an HMAC under the user's key): one planted there is compiled again, never
loaded. Compiling happens inside the worker, so a compile that hangs past the compile time
limit, or crashes, ends with the worker.
"""
from __future__ import annotations

import os
import re
import tempfile

from padconf.adapters import Adapter, Outcome, Refusal, StandaloneRepro, error_text
from padconf.adapters.compile_cache import CompileFailed, cache_key
from padconf.adapters.compiled import CompilingAdapter
from padconf.cases.case import Case
from padconf.cases.onnx_model import build_model, fed_input_names, feeds, model_key
from padconf.core.vocabulary import Placement

_DEVICES = {"llvm": "cpu", "cuda": "cuda", "vulkan": "vulkan"}  # target kind -> device

_NOT_IMPLEMENTED = re.compile(r"not supported|unsupported|not implemented|no implementation|unknown dtype", re.I)


def says_not_implemented(text: str) -> bool:
    """Whether TVM's error ``text`` says its frontend or a lowering lacks a case ("Dynamic pads
    are not supported yet", "Unsupported data type"). Text is what every TVM refusal has: a
    compile error reaches the adapter as CompileFailed, the text the compile cache keeps (one
    read back from the cache has no type left), and the frontend raises plain ValueError or
    TVMError for a refused case and a missing one alike."""
    return bool(_NOT_IMPLEMENTED.search(text))


def _graph_parts(module) -> list[str | bytes]:
    """What a converted module's compile depends on: its TVMScript text, and the tensor
    constants (folded data, an initializer) that the text leaves out as "metadata omitted"
    (``script(show_meta=True)``, which would print them, crashes TVM 0.27), as bytes, in order.
    Keyed by the text alone, folded cases that differ only in their data shared one entry."""
    import numpy as np
    from tvm import relax
    from tvm.ir.expr import GenericConst

    constants: list[GenericConst] = []
    for var in sorted(module.functions, key=lambda v: v.name_hint):
        if isinstance(module[var], relax.Function):
            relax.analysis.post_order_visit(
                module[var], lambda e: constants.append(e) if isinstance(e, GenericConst) else None)
    arrays = [np.ascontiguousarray(c.value.numpy()) for c in constants]
    return [module.script(), *(f"{a.dtype}{a.shape}".encode() + a.tobytes() for a in arrays)]


def standalone_run(model, inputs, configuration):
    """TVM's own API on a bundle's ONNX model: its Relax ONNX frontend (``from_onnx``),
    ``tvm.compile`` (Relax's default pipeline) for padconf's target ({}: llvm, the CPU), Relax's virtual machine on
    the target's device. Copied into a bundle's repro script by its source, it imports nothing
    of padconf."""
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    executable = tvm.compile(from_onnx(model, keep_params_in_input=False), target=configuration.get("target", "llvm"))
    device = tvm.device(configuration.get("device", "cpu"), 0)
    vm = relax.VirtualMachine(executable, device)
    return vm["main"](*[tvm.runtime.tensor(a, device) for a in inputs.values()]).numpy()


class TvmAdapter(CompilingAdapter):
    name = "tvm"
    module = "tvm"
    package = "apache-tvm"
    target = "llvm"  # tvm.target.Target's kind: llvm (CPU), cuda, vulkan
    not_implemented, lacks_strings = _NOT_IMPLEMENTED, "TVM has no string tensors"
    repro = StandaloneRepro("onnx apache-tvm", standalone_run)
    # what export_library imports on a worker's first compile: imported in the zygote, not under a
    # worker's address-space cap (IreeAdapter.preload says why)
    preload = (*Adapter.preload, "tvm.contrib.tvmjs", "tvm.support.emcc")

    def usable(self) -> str | None:
        try:
            import tvm
            from tvm.relax.frontend.onnx import from_onnx  # noqa: F401
            if not tvm.device(_DEVICES[self.target], 0).exist:
                return f"no {self.target} device here"
        except Exception as exc:
            return f"TVM's {self.target} target is not usable here: {error_text(exc)}"
        return None

    def repro_configuration(self, case: Case, note: str | None) -> dict[str, object]:
        """What ``tvm.compile`` and the virtual machine need named: padconf's target and its device."""
        return {"target": self.target, "device": _DEVICES[self.target]}

    def _build(self, model: bytes):
        """Relax's virtual machine for ONNX ``model``, compiled or taken from the disk cache."""
        import onnx
        import tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        def convert():
            module = from_onnx(onnx.load_model_from_string(model), keep_params_in_input=False)
            return cache_key(*_graph_parts(module), tvm.__version__, self.target), module

        # conversion is deterministic given the ONNX bytes and TVM's and onnx's versions
        key, module = self._cache.converted_key(
            cache_key(b"onnx", model, onnx.__version__, tvm.__version__, self.target), convert)

        def compile_library() -> bytes:
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "model.so")
                try:
                    graph = convert()[1] if module is None else module  # linked earlier: not converted yet
                    tvm.compile(graph, target=tvm.target.Target(self.target)).export_library(path)
                except Exception as exc:  # TVM's refusal, as deterministic as its output, is kept in the cache;
                    self.raise_unless_answer(exc)  # the worker's cap and padconf's own faults are not
                    raise CompileFailed(error_text(exc)) from None
                with open(path, "rb") as f:
                    return f.read()

        # In-process: a compile that hangs ends with the worker, at padconf's compile time limit.
        library = self._cache.fetch(key, compile_library, float("inf"))
        with tempfile.TemporaryDirectory() as tmp:  # loaded from a copy: the entry may be replaced meanwhile
            path = os.path.join(tmp, "model.so")
            with open(path, "wb") as f:
                f.write(library)
            loaded = tvm.runtime.load_module(path)
        device = tvm.device(_DEVICES[self.target], 0)
        return relax.VirtualMachine(loaded, device), device

    def _call(self, built, arrays) -> list:
        import tvm
        vm, device = built
        out = vm["main"](*[tvm.runtime.tensor(a, device) for a in arrays])
        return [o.numpy() for o in (out if isinstance(out, (list, tuple, tvm.ir.Array)) else [out])]

    def run_model(self, model: bytes, feeds: dict) -> list:
        import onnx

        names = fed_input_names(onnx.load_model_from_string(model))
        return self._call(self._build(model), [feeds[name] for name in names])

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            built = self.cached(model_key(case, placement),
                                lambda: self._build(build_model(case, placement).SerializeToString()))
            if isinstance(built, Refusal):
                return built.outcome()
            return Outcome(output=self._call(built, feeds(case, placement).values())[0])
        except Exception as exc:
            return self.refusal(exc).outcome()


class TvmCudaAdapter(TvmAdapter):
    name, target = "tvm-cuda", "cuda"


class TvmVulkanAdapter(TvmAdapter):
    name, target = "tvm-vulkan", "vulkan"
