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
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from padconf.adapters.compile_cache import CompileDied
from padconf.adapters.faults import plugin_files, raise_unless_answer
from padconf.adapters.outcome import Outcome, error_text  # noqa: F401  (adapters and the worker take them from here)
from padconf.cases.case import Case
from padconf.core.errors import PadconfError, did_you_mean
from padconf.core.versions import package_version
from padconf.core.vocabulary import PLACEMENTS, Placement
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


@dataclass(frozen=True)
class StandaloneRepro:
    """How a runtime's short repro in its own API runs a bundle's minimal case
    (``repro_<runtime>.py``, which padconf.minimize.bundle.repro_runtime writes around it). ``run`` is copied
    into the script by its source, so it imports nothing of padconf, only the runtime. It is
    called as ``run(model, inputs, configuration)`` with the one-node ONNX model (an
    onnx.ModelProto: the fed operands graph inputs of symbolic dims, the others initializers),
    the fed arrays by name and the runtime's set-up as padconf ran it (Adapter.configuration:
    {} for its defaults); with ``own_graph``, as ``run(operands, fed, mode, opset,
    configuration)`` with the operands of the runtime's own Pad (Adapter.own_operands) and the
    names of those fed, to build the graph in its own API. It returns the output array, or
    raises the runtime's refusal. ``own_tensor(array, dtype)``, where the runtime has its own
    tensors of the types numpy lacks (sub-byte integers and floats, float8, bfloat16: ml_dtypes'
    arrays, which a maintainer's script need not import): the source text of one holding the
    array's bits, which the script's ``imports`` make work; ``run`` takes those and returns an
    output of such a type as its elements' codes (unsigned integers; sub-byte ones unpacked,
    lowest bits first)."""
    pip: str  # what the script needs besides numpy: `pip install numpy <pip>`
    run: Callable[..., Any]
    own_graph: bool = False
    own_tensor: Callable[[Any, str], str] | None = None
    imports: tuple[str, ...] = ()
    # a graph rewriter's: ``run(model, configuration)`` returns the rewritten model, which the
    # script runs beside the model as given on a control runtime (padconf.minimize.bundle.repro_rewriter)
    rewrites: bool = False


class Adapter:
    name: str = ""
    domains: tuple[str, ...] = ("onnx",)  # spec families (the part of a spec id before "/") it runs
    placements: tuple[str, ...] = PLACEMENTS
    module: str = ""  # what available() imports (nothing for padconf's own fakes)
    # What run() imports besides: available() imports it too, in the zygote, so that a fresh
    # worker does not import it again for its first case.
    preload: tuple[str, ...] = ("padconf.cases.onnx_model",)
    package: str = ""  # the distribution whose version ``version()`` reports
    companions: tuple[str, ...] = ()  # the other distributions it imports, released with ``package``
    # modules the runtime's import must not find, in an environment of its own too (where none of
    # the adapter's code runs): OpenVINO's telemetry, which sends an event from a thread and a fork
    blocked_modules: tuple[str, ...] = ()
    cache_size = 512  # compiled models kept (initializer placement makes one per value set)
    target: str | None = None  # the compiler's target (llvm-cpu, cuda ...), recorded in every result row
    # An ahead-of-time compiler's build takes seconds, not milliseconds: the worker then says so
    # (``announce_build``), and padconf waits for it up to the compile time limit, not the run's.
    compiles_ahead = False
    # It may skip a case at run time (Outcome.skipped), beyond what supports() says beforehand: a
    # skipped row of a runtime that does not, for no reason supports() or a compile budget gives,
    # is no row padconf wrote (padconf.run.rundir.check_rows_of_run)
    skips_at_run_time = False
    announce_build = None  # set by the worker process: a callable telling padconf a build begins
    compile_timeout: float | None = None  # set by the worker process from padconf's request
    # Answers each case the same whatever its process ran before (a claim tests/run/test_runner.py
    # checks for padconf's own): then any lane may run its batches, in any order.
    order_independent = False
    # set by the worker process: a folder the workers of one zygote share, one after another, and
    # padconf removes with the zygote (a compiled model one exported, the next imports)
    scratch: Path | None = None
    # Settings other than the runtime's defaults a user may ask for by name, as a variant
    # "openvino[threads=1]": option -> the values it takes. A variant is a runtime of its own in
    # every result, report and bundle; the plain name runs the runtime as its users do by default.
    options: dict[str, tuple[str, ...]] = {}
    # What `padconf minimize` asks of a runtime (a plugin sets them as padconf's own adapters do):
    # the options of onnx.shape_inference.infer_shapes it runs on every model it loads (onnx's own
    # shape inference, the operator schemas'), before anything of its own, so a refusal that
    # inference gives too, or a death it dies too, is onnx's; None: it runs none
    shape_inference: dict[str, bool] | None = None
    # (runtime, spec id): the runtime's own operation its Pad lowers to, whose bug it may be
    lowered_to: tuple[str, str] | None = None
    # how its error texts spell dtypes besides padconf's names (OpenVINO's "f8e5m2"), masked when
    # two minimized failures are compared (padconf.judging.failure.bug_class)
    type_names: tuple[str, ...] = ()
    # its short repro in its own API, which a bundle carries; None: the generic checker only
    repro: StandaloneRepro | None = None
    # a graph rewriter's: the preconditions of its Pad passes (padconf.adapters.preconditions),
    # each of whose cells every run of it covers
    preconditions: tuple = ()
    # a whole ONNX model's reference answers: padconf minimize takes the arrays reaching a user's
    # model's Pad from such a runtime where the one under test cannot tell them
    evaluates_reference = False

    def __init__(self) -> None:
        self._models: dict = {}  # key -> compiled model, or the error text its build gave
        self.settings: dict[str, str] = {}  # the options chosen (configure); {}: the runtime's defaults

    def configure(self, settings: dict[str, str]) -> None:
        """Run as the variant ``settings`` names (checked against ``options`` by get_adapter)."""
        self.settings = dict(settings)

    def configuration(self) -> dict[str, object]:
        """How the runtime is set up, in its own terms (the properties a model is compiled with,
        say), as a bundle states it and its repro applies it; {}: its defaults."""
        return {}

    def available(self) -> str | None:
        """None when the runtime can be used here, else a one-line reason."""
        for module in filter(None, (self.module, *self.preload)):
            try:
                importlib.import_module(module)
            except Exception as exc:  # ImportError, or a broken shared library
                return f"{module} cannot be imported: {error_text(exc)}"
        if "onnx" in sys.modules:  # onnx fills its operator schemas on first use: here, not under a worker's cap
            sys.modules["onnx"].defs.get_schema("Pad")
        return None

    def notes(self) -> list[str]:
        """Lines a run's summary shows about how this runtime is set up here (a compile cache
        turned off, say), asked once ``available()`` has said None."""
        return []

    # What a bundle says of a failure in the runtime's own terms (padconf.minimize.bundle), asked
    # of the adapter's class in padconf's process: none imports the runtime.

    @staticmethod
    def error_core(text: str) -> str:
        """The part of the runtime's error text that says what went wrong, without the wrappers
        its messages come in (a status prefix, a source path and C++ signature): what a bundle
        quotes in its title lines. The text itself by default."""
        return text

    @classmethod
    def title_conditions(cls, runtime: str, note: str | None) -> tuple[str, str]:
        """What of the runtime's own processing a failure needs, as its note on the case names it
        (found by experiment): the words before and after a bundle's title, e.g. ("after
        onnxoptimizer's fuse_pad_into_pool, ", "") or ("", " only with graph optimization level
        all: ..."); ``runtime``: its name as run (a variant's, with its settings)."""
        return "", ""

    def repro_configuration(self, case: Case, note: str | None) -> dict[str, object]:
        """What a bundle's repro passes its StandaloneRepro.run for ``case``, whose failure's note
        is ``note``: how padconf set the runtime up (``configuration``) by default."""
        return self.configuration()

    def exhibited_on(self, note: str | None) -> str:
        """The runtime whose answer a failure is: this one, but for a graph rewriter, whose
        rewritten model's answer is another runtime's (its note names which)."""
        return self.name

    def version(self) -> str | None:
        """The installed version of the runtime's package, or None."""
        return package_version(self.package) if self.package else None

    def refusal(self, exc: Exception) -> Refusal:
        """The runtime's exception ``exc`` as a refusal: decided here, while its type is known
        (the model cache keeps the refusal, not the exception). What is no answer of the
        runtime's is raised instead (``raise_unless_answer``)."""
        self.raise_unless_answer(exc)
        return Refusal(error_text(exc), self.lacks_kernel(exc))

    def raise_unless_answer(self, exc: BaseException) -> None:
        """Raise ``exc`` where it is no answer of the runtime's, for the worker: a MemoryError (the
        worker's cap: the worker ends), and padconf's own fault or the plugin's (a slip in the
        adapter's code, an import that failed: faults.own_fault) as OwnFault, which the worker
        records as inconclusive, never as the runtime's refusal. ``refusal`` calls it; an adapter
        that words a refusal itself calls it first."""
        raise_unless_answer(exc, plugin_files(type(self)))

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

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        raise NotImplementedError

    def bundle_model(self, case: Case, placement: Placement,
                     where: Path) -> tuple[str | None, dict[str, np.ndarray]] | None:
        """A bundle's model in the runtime's own format, for a runtime that runs no ONNX: written
        into ``where``; its file name (None where the runtime refuses to build the graph, which is
        then the bug itself) and the arrays fed to it by name. None: the bundle holds the ONNX
        model padconf.cases.onnx_model builds, as for every ONNX runtime."""
        return None

    def own_operands(self, case: Case) -> dict[str, np.ndarray]:
        """The operands of the runtime's own Pad for ``case``, by name, in input order: what a
        StandaloneRepro with ``own_graph`` builds its graph from."""
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
# The CPU targets of the ahead-of-time compilers (iree, tvm) are default members: a run's compile
# budget (padconf.run.compile_budget) bounds what they build. Their GPU targets need the device.
_COMPILER = "opt-in (--runtime {}): {}, for a GPU this machine may lack"
OPT_IN.update({name: _COMPILER.format(name, what) for name, what in (
    ("iree-cuda", "IREE for CUDA"), ("iree-vulkan", "IREE for Vulkan"),
    ("tvm-cuda", "TVM for CUDA"), ("tvm-vulkan", "TVM for Vulkan"))})


OPT_IN.update({name: f"opt-in (--runtime {name}): a graph {what}, judged on four model runs a case (its model and "
                     "the one it was given, each on onnx's reference and onnxruntime)" for name, what in (
    ("onnxoptimizer", "rewriter"), ("onnxscript", "rewriter"), ("onnxslim", "rewriter"), ("onnxsim", "rewriter"),
    ("onnx-version-converter", "converter"))})

OPT_IN.update({
    "torch": "opt-in (--runtime torch): torch's eager F.pad, on cases of torch's own document (torch/Pad-2)",
    "torch-export": "opt-in (--runtime torch-export): an exporter (torch.onnx.export), each exported graph judged "
                    "by ONNX's document and run on onnxruntime",
    "tf": "opt-in (--runtime tf): TensorFlow's eager tf.pad, on cases of TensorFlow's own document (tf/Pad-2)",
    "tf-export": "opt-in (--runtime tf-export): a converter (tf2onnx.convert.from_function of tf.pad), each graph "
                 "judged by ONNX's document and run on onnxruntime",
    "tinygrad": "opt-in (--runtime tinygrad): tinygrad's ONNX runner, on its Python device (DEV=PYTHON) unless DEV "
                "says otherwise: a runner a case"})


def runtime_packages() -> list[str]:
    """The distribution of every registered runtime (padconf's own adapters' and plugins'), once
    each, and numpy: what ``padconf --version`` names where installed."""
    packages = dict.fromkeys(p for name in registry()
                             for p in (adapter_class(name).package, *adapter_class(name).companions))
    return [p for p in packages if p] + ["numpy"]


def default_runtimes() -> list[str]:
    """What ``padconf run`` runs without --runtime: every registered runtime but the OPT_IN ones."""
    return [name for name in registry() if name not in OPT_IN]


_VARIANT = re.compile(r"([^\[\]]+)\[([a-z0-9_]+=[A-Za-z0-9_.]+(?:,[a-z0-9_]+=[A-Za-z0-9_.]+)*)\]")
# A release: "onnxruntime@1.24.4", "openvino[threads=1]@2025.1.0": the runtime at that version of its
# package, run in an environment of its own (padconf.execution.environments). A final release:
# digits and dots, with a post-release at most (pre-releases are not what users run).
_RELEASE = re.compile(r"(.+)@([0-9]+(?:\.[0-9]+)*(?:\.post[0-9]+)?)")
MAX_RELEASE_CHARS = 64


def split_release(name: str) -> tuple[str, str | None]:
    """``"onnxruntime@1.24.4"`` -> ("onnxruntime", "1.24.4"); a name without a release -> (name, None)."""
    found = _RELEASE.fullmatch(name)
    if not found or len(found[2]) > MAX_RELEASE_CHARS:
        return name, None
    return found[1], found[2]


def without_release(name: str) -> str:
    """The runtime ``name`` names at its installed version: "onnxruntime[optimization=basic]@1.24.4" ->
    "onnxruntime[optimization=basic]"."""
    return split_release(name)[0]


class RemoteError(Exception):
    """A runtime's exception raised in an environment of its own, seen from padconf's side: its
    text and the qualified name of its type (``module.Class``), which ``Adapter.lacks_kernel``
    reads as it would the exception itself."""

    def __init__(self, text: str, type_name: str):
        super().__init__(text)
        self.type_name = type_name


def split_variant(name: str) -> tuple[str, dict[str, str]]:
    """``"openvino[threads=1]"`` -> ("openvino", {"threads": "1"}); a plain name -> (name, {}). A
    release is not part of either: ``"openvino[threads=1]@2025.1.0"`` splits as its name does."""
    found = _VARIANT.fullmatch(without_release(name))
    if not found:
        return without_release(name), {}
    return found[1], dict(pair.split("=") for pair in found[2].split(","))


def unknown_runtime(name: str) -> str | None:
    """Why ``name`` names no runtime, or None: neither registered nor ``module:Class``, or a
    variant ``name[option=value,...]`` whose registered adapter has no such option (a
    ``module:Class`` variant's options are checked where the class is imported, in its worker)."""
    base, settings = split_variant(name)
    if "@" in name and split_release(name)[1] is None:
        return (f"runtime {name!r}: a release is written name@version with a final release's version, "
                "e.g. onnxruntime@1.24.4")
    if "[" in base or "]" in base:
        return f"runtime {name!r}: a variant is written name[option=value,...], e.g. openvino[threads=1]"
    if ":" in base:
        return (f"runtime {name!r}: a module:Class runs where padconf is installed; a release runs a registered "
                "adapter") if split_release(name)[1] else None
    if base not in registry():
        return (f"unknown runtime {name!r}{did_you_mean(base, registry())}; registered: "
                f"{', '.join(registry()) or 'none'} (or module:Class)")
    if not settings and not split_release(name)[1]:  # nothing imported: a plugin that fails to load shows in its worker
        return None
    try:
        adapter = _adapter_class(base)
    except Exception as exc:  # noqa: BLE001  the plugin's module does not load
        return f"cannot load adapter {base}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return _unknown_options(name, adapter, settings) or (_no_release(name, adapter) if split_release(name)[1] else None)


def _no_release(name: str, adapter: type[Adapter]) -> str | None:
    """Why the adapter cannot run at another release of its runtime, or None: there it runs its
    StandaloneRepro's function, which imports nothing of padconf (padconf.execution.env_child)."""
    if not adapter.package:
        return f"runtime {name!r}: {adapter.name or name} names no package whose releases padconf could install"
    if adapter.repro is None or adapter.repro.rewrites:
        return (f"runtime {name!r}: {adapter.name or name} has no standalone runner (its StandaloneRepro) to run "
                "in an environment of its own")
    return None


def _adapter_class(base: str) -> type[Adapter]:
    module, cls = (registry().get(base) or base).split(":")
    target = getattr(importlib.import_module(module), cls)
    if not (isinstance(target, type) and issubclass(target, Adapter)):  # tempfile:mkdtemp is no adapter
        raise PadconfError(f"{module}:{cls} is not a padconf Adapter class")
    return target


def _unknown_options(name: str, adapter: type[Adapter], settings: dict[str, str]) -> str | None:
    wrong = [f"{o}={v}" for o, v in settings.items() if v not in adapter.options.get(o, ())]
    if not wrong:
        return None
    offered = "; ".join(f"{o}={'|'.join(v)}" for o, v in adapter.options.items()) or "none"
    return f"runtime {name!r}: no option {', '.join(wrong)} (its options: {offered})"


def get_adapter(name: str) -> Adapter:
    """The adapter registered as ``name``, or the class ``name`` spells as ``module:Class``; a
    variant ``name[option=value,...]`` configured so (its ``name`` is the whole spelling)."""
    if unknown_runtime(name):
        raise PadconfError(unknown_runtime(name))
    base, settings = split_variant(name)
    target = _adapter_class(base)
    if _unknown_options(name, target, settings):
        raise PadconfError(_unknown_options(name, target, settings))
    adapter = target()
    if settings:
        adapter.configure(settings)
    if settings or split_release(name)[1]:
        adapter.name = name
    return adapter


def reference_runtime() -> str | None:
    """The registered runtime whose adapter gives a whole ONNX model's reference answers
    (``evaluates_reference``: onnx's evaluator), None where none is registered."""
    for name in registry():
        try:
            if _adapter_class(name).evaluates_reference:
                return name
        except Exception:  # noqa: BLE001  a plugin that does not load evaluates nothing
            continue
    return None


def registered_adapter(name: str) -> Adapter | None:
    """The adapter padconf registers as runtime ``name`` (a variant's, a release's: its own),
    named and configured so but not started, to ask what it can run (``supports``); None for a
    ``module:Class`` adapter, which only its worker imports."""
    base, settings = split_variant(name)
    if base not in registry():
        return None
    cls = _adapter_class(base)
    adapter = cls.__new__(cls)
    Adapter.__init__(adapter)  # not its own: a compiler's opens its compile cache
    adapter.configure(settings)
    adapter.name = name
    return adapter


def adapter_class(name: str) -> type[Adapter]:
    """The class whose facts (``package``, ``repro``, ``lowered_to`` ...) describe the runtime
    ``name`` (a variant's: its adapter's), for padconf's own process, where importing a
    registered adapter's module imports no runtime. A ``module:Class`` adapter is imported in its
    worker only: here its facts are the base class's."""
    if unknown_runtime(name):
        raise PadconfError(unknown_runtime(name))
    base = split_variant(name)[0]
    return _adapter_class(base) if base in registry() else Adapter

