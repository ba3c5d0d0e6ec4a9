"""Runtimes behind one small interface.

An adapter runs the spec families in ``domains`` (cases of others are not its cases at all),
says whether it can express a spec version and dtype of those (``supports``: None, or why not;
such cases are recorded as skipped) and runs a case (``run``: an Outcome holding the output
array or the runtime's error text). Adapters cache compiled models by a key
(onnx_model.model_key, or for OpenVINO the converted graph's openvino_tensors.graph_key),
so that cases differing only in what the model does not hold reuse one session. They never
import their runtime at module import time: ``available()`` says, in one line, why a runtime
is missing.
"""
from __future__ import annotations

import functools
import importlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

from padconf.adapters.compile_cache import CompileDied
from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.core.versions import package_version
from padconf.core.vocabulary import PLACEMENTS, Placement
from padconf.judging.outcome import Outcome, error_text  # noqa: F401  (adapters and the worker take them from here)
from padconf.spec.loader import parse_spec_id


@dataclass(frozen=True)
class Refusal:
    """What a runtime's exception says: its text, and whether the runtime lacks a kernel for the
    case (verdict not-implemented) rather than refuses it. Kept in an adapter's model cache in
    place of a model whose build failed: every case of its key fails the same way."""
    error: str
    not_implemented: bool = False

    def outcome(self) -> Outcome:
        return Outcome(error=self.error, not_implemented=self.not_implemented)


class Adapter:
    name: str = ""
    domains: tuple[str, ...] = ("onnx",)  # spec families (the part of a spec id before "/") it runs
    placements: tuple[str, ...] = PLACEMENTS
    module: str = ""  # what available() imports (nothing for padconf's own fakes)
    # What run() imports besides: available() imports it too, in the zygote, so that a fresh
    # worker does not import it again for its first case.
    preload: tuple[str, ...] = ("padconf.cases.onnx_model",)
    package: str = ""  # the distribution whose version ``version()`` reports
    cache_size = 512  # compiled models kept (initializer placement makes one per value set)
    target: str | None = None  # the compiler's target (llvm-cpu, cuda ...), recorded in every result row
    # An ahead-of-time compiler's build takes seconds, not milliseconds: the worker then says so
    # (``announce_build``), and padconf waits for it up to the compile time limit, not the run's.
    compiles_ahead = False
    announce_build = None  # set by the worker process: a callable telling padconf a build begins
    compile_timeout: float | None = None  # set by the worker process from padconf's request
    # Answers each case the same whatever its process ran before (a claim tests/test_runner.py
    # checks for padconf's own): then any lane may run its batches, in any order.
    order_independent = False
    # set by the worker process: a folder the workers of one zygote share, one after another, and
    # padconf removes with the zygote (a compiled model one exported, the next imports)
    scratch: Path | None = None

    def __init__(self):
        self._models: dict = {}  # key -> compiled model, or the error text its build gave

    def available(self) -> str | None:
        """None when the runtime can be used here, else a one-line reason."""
        for module in filter(None, (self.module, *self.preload)):
            try:
                importlib.import_module(module)
            except Exception as exc:  # ImportError, or a broken shared library
                return f"{module} cannot be imported: {error_text(exc)}"
        return None

    def notes(self) -> list[str]:
        """Lines a run's summary shows about how this runtime is set up here (a compile cache
        turned off, say), asked once ``available()`` has said None."""
        return []

    def version(self) -> str | None:
        """The installed version of the runtime's package, or None."""
        return package_version(self.package) if self.package else None

    def refusal(self, exc: Exception) -> Refusal:
        """The runtime's exception ``exc`` as a refusal: decided here, while its type is known
        (the model cache keeps the refusal, not the exception)."""
        return Refusal(error_text(exc), self.lacks_kernel(exc))

    def lacks_kernel(self, exc: Exception) -> bool:
        """Whether ``exc`` says the runtime has no kernel for the case's dtype or version, rather
        than refuses the case: by the exception's type where the runtime raises one for it, else
        by the one function of the adapter's module that reads the runtime's text."""
        return False

    def cached(self, key, build):
        """The model for ``key``, built by ``build()`` on first use; the ``cache_size`` most
        recently used are kept. A build error is kept as its Refusal: it fails the same way for
        every case of that key."""
        if key in self._models:
            self._models[key] = self._models.pop(key)  # most recently used last
        else:
            if len(self._models) >= self.cache_size:  # drop the least recently used
                self._models.pop(next(iter(self._models)))
            try:
                if self.compiles_ahead and self.announce_build:
                    self.announce_build()
                self._models[key] = build()
            except CompileDied:
                raise
            except Exception as exc:
                self._models[key] = self.refusal(exc)
        return self._models[key]

    def supports(self, spec_id: str, dtype: str) -> str | None:
        """None when this adapter can express cases of ``spec_id`` with ``dtype``, else why not.
        Subclasses narrowing it call this first."""
        if parse_spec_id(spec_id)[0] not in self.domains:
            return f"{self.name} runs {' and '.join(self.domains)} specs only, not {spec_id}"
        return None

    def run(self, case: Case, placement: str = Placement.INPUTS) -> Outcome:
        raise NotImplementedError

    def run_model(self, model: bytes, feeds: dict) -> list:
        """A whole ONNX model (a user's, which ``padconf minimize`` cuts down to its Pad): its
        outputs in graph order; the runtime's exception when it refuses."""
        raise PadconfError(f"{self.name} runs Pad cases only, not a user's whole model")


ENTRY_POINT_GROUP = "padconf.adapters"  # name = "module:Class"; padconf's own adapters register here too


@functools.cache
def registry() -> dict[str, str]:
    """name -> "module:Class" of every adapter installed in the entry-point group, by name.
    Nothing is imported: a plugin that fails to load shows when it is used (in a worker)."""
    found: dict[str, str] = {}
    for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        found.setdefault(ep.name, ep.value)
    return found


# Registered runtimes a run without --runtime leaves out, and why (`padconf runtimes` says so).
OPT_IN = {"tract": "opt-in (--runtime tract): it loads one model per case and aborts on every negative pad, "
                   "which adds over a quarter to a default run's work (about 35 lane-seconds more)"}
_COMPILER = ("opt-in (--runtime {}): an ahead-of-time compiler, {}; with its compile cache cold it "
             "adds {}")
_TVM_COLD = "minutes to a default run"
_IREE_COLD = "hours to a default run: its compiles that hang wait out the compile time limit"
OPT_IN.update({name: _COMPILER.format(name, what, cold) for name, what, cold in (
    ("iree", "IREE for llvm-cpu", _IREE_COLD), ("iree-cuda", "IREE for CUDA", _IREE_COLD),
    ("iree-vulkan", "IREE for Vulkan", _IREE_COLD), ("tvm", "TVM for llvm", _TVM_COLD),
    ("tvm-cuda", "TVM for CUDA", _TVM_COLD), ("tvm-vulkan", "TVM for Vulkan", _TVM_COLD))})


OPT_IN["onnxoptimizer"] = ("opt-in (--runtime onnxoptimizer): a graph rewriter, judged on four model runs a "
                            "case (its model and the one it was given, each on onnx's reference and onnxruntime)")

def default_runtimes() -> list[str]:
    """What ``padconf run`` runs without --runtime: every registered runtime but the OPT_IN ones."""
    return [name for name in registry() if name not in OPT_IN]


def unknown_runtime(name: str) -> str | None:
    """Why ``name`` names no runtime (neither registered nor ``module:Class``), or None."""
    if name in registry() or ":" in name:
        return None
    return f"unknown runtime {name!r}; registered: {', '.join(registry()) or 'none'} (or module:Class)"


def get_adapter(name: str) -> Adapter:
    """The adapter registered as ``name``, or the class ``name`` spells as ``module:Class``."""
    if unknown_runtime(name):
        raise PadconfError(unknown_runtime(name))
    module, cls = (registry().get(name) or name).split(":")
    target = getattr(importlib.import_module(module), cls)
    if not (isinstance(target, type) and issubclass(target, Adapter)):  # tempfile:mkdtemp is no adapter
        raise PadconfError(f"{module}:{cls} is not a padconf Adapter class")
    return target()

