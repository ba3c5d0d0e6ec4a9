"""Graph rewriters and converters as implementations under test: onnxoptimizer's Pad
passes, onnxscript's optimizer and its Pad-into-Conv rewrite, onnxslim, onnx-simplifier and onnx's
version converter.

A rewriter takes the model padconf builds for a case (a context case's whole graph: Pad and its
consumer, its pads' producer) and returns a model. Its verdict:

- it raises: its crash, reported as a refusal of the case (``<name> raised: ...``), unless the
  exception says it does not rewrite such a model (the version converter's "No Adapter"): a
  refusal to rewrite;
- it returns the model unchanged: a refusal to rewrite, which is fine: skipped, saying so;
- its model fails ``onnx.checker.check_model(full_check=True)`` where the input passes: an
  invalid model, reported as a refusal (``onnx.checker rejects the rewritten model: ...``);
- else the rewritten and the unrewritten model run on the same two runtimes, onnx's reference
  evaluator and onnxruntime with its graph optimizer disabled (neither rewrites the graph
  again). The unrewritten model on the same runtime is the control: where the two differ on a
  runtime (an output for a refusal, another shape, other values beyond the context's
  tolerance) on both, the rewriter changed what the model computes, and the outcome is the
  rewritten model's on onnx's reference, with a note naming the pass that changes it alone
  (``culprits`` reads it back);
  judged against padconf's expected output as any outcome is. Where only one of them changes,
  the difference may be that runtime's on a graph it meets only rewritten (onnx's reference
  evaluator fails on some pools with their own pads): skipped, saying so. Where they agree on both runtimes the rewrite
  kept the model's meaning: the outcome is the rewritten model's on onnx's reference, unless
  the two runtimes disagree on the unrewritten model, which leaves no control (skipped). A control
  runtime that refuses the model it was given where padconf's case is defined (onnxruntime and an
  old opset) is no control: the verdict rests on the other.
- a converter's model must also be one its target opset allows: padconf classifies the case at
  the target's Pad version, and a model converted into one that version forbids (Pad-19's wrap
  converted down to opset 18) is an invalid model.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from padconf.adapters import Adapter, Outcome, StandaloneRepro, error_text
from padconf.adapters.faults import raise_unless_answer
from padconf.adapters.preconditions import Precondition
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.context import snap
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import bit_equal
from padconf.core.vocabulary import Placement
from padconf.spec.loader import get_spec, parse_spec_id

# the dtypes both control runtimes take through numpy (no ml_dtypes kinds, no complex in ORT)
_FED = {"float", "double", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "bool", "string"}
REFERENCE, ORT_NO_OPT = "onnx-reference", "onnxruntime (optimizations disabled)"


def _run(runtime: str, model: bytes, inputs: dict) -> tuple[np.ndarray | None, str | None]:
    """(output, None), or (None, the runtime's refusal)."""
    try:
        if runtime == REFERENCE:
            import onnx
            from onnx.reference import ReferenceEvaluator
            (out, *_) = ReferenceEvaluator(onnx.load_model_from_string(model)).run(None, inputs)
            return np.asarray(out), None
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 4
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return np.asarray(session.run(None, inputs)[0]), None
    except Exception as exc:
        raise_unless_answer(exc)  # a control runtime's refusal, not padconf's fault
        return None, f"{type(exc).__name__}: {error_text(exc)}"


def _same(case: Case, a: tuple, b: tuple) -> bool:
    """Two answers are the same: both refusals, or outputs equal bit for bit (NaN for NaN),
    within the context's tolerance for Conv and AveragePool."""
    if a[0] is None or b[0] is None:
        return a[0] is None and b[0] is None
    return bit_equal(a[0], snap(case.context, a[0], b[0]))


def _shown(answer: tuple) -> str:
    out, err = answer
    return f"refuses it ({err})" if out is None else f"gives shape {list(out.shape)} {out.reshape(-1)[:6].tolist()}"


def _classified(case: Case) -> Case | None:
    """``case`` as its spec classifies it (padconf's reference; a context case's consumer on
    onnx's evaluator), or None where it cannot be (too large, or a spec folder it lacks)."""
    try:
        found = classify(case, get_spec(case.spec))
    except Exception as exc:  # noqa: BLE001  no classification: the rewrite is judged without one
        raise_unless_answer(exc)  # unless padconf's own code failed
        return None
    return None if found.kind == CaseKind.TOO_LARGE else found


def _conforms(case: Case, answer: tuple) -> bool:
    """Whether ``answer`` (output, refusal) is one the specification allows for the classified ``case``."""
    out = answer[0]
    if case.kind == CaseKind.MUST_REJECT:
        return out is None
    allowed = [case.expected] if case.kind == CaseKind.DEFINED else list(case.interpretations.values())
    return any(out is None if e is None else out is not None and out.dtype == e.dtype and out.shape == e.shape
               and bit_equal(e, snap(case.context, e, out)) for e in allowed)


def _check(model) -> str | None:
    import onnx
    try:
        onnx.checker.check_model(model, full_check=True)
        return None
    except Exception as exc:
        raise_unless_answer(exc)
        return error_text(exc)


class RewriterAdapter(Adapter):
    """A graph rewriter under test; subclasses say what ``rewrite`` does and its passes."""

    placements = (Placement.INPUTS, Placement.INITIALIZERS)  # pads fed at run time, or constant (fusable)
    preload = (*Adapter.preload, "onnx.reference.ops._op_list", "onnxruntime", "jsonschema")  # get_spec validates
    passes: tuple[str, ...] = ()
    skips_at_run_time = True  # a model it leaves as it was, or whose controls disagree

    def rewrite(self, model, passes: tuple[str, ...]):
        raise NotImplementedError

    def refuses(self, exc: Exception) -> bool:
        """Whether ``exc`` says the rewriter does not rewrite such a model (fine), not that it failed."""
        return False

    def invalid_rewrite(self, case: Case, rewritten) -> str | None:
        """Why the rewritten model is invalid by padconf's own spec files, or None (a converter's
        target opset: VersionConverterAdapter); ``case``: classified."""
        return None

    def configuration(self) -> dict[str, object]:
        return {"passes": list(self.passes)}

    def repro_configuration(self, case: Case, note: str | None) -> dict[str, object]:
        """The passes the note names as changing the answer alone (``culprits``), else every
        pass padconf ran."""
        return {"passes": culprits(note) or list(self.passes)}

    def exhibited_on(self, note: str | None) -> str:
        """The control runtime whose answer the failure is, for a bundle's repro to run both
        models on: its note's "on onnx-reference the rewritten model ..." (``run``), else
        onnxruntime."""
        return REFERENCE if (note or "").startswith(f"on {REFERENCE} the rewritten model") else "onnxruntime"

    @classmethod
    def title_conditions(cls, runtime: str, note: str | None) -> tuple[str, str]:
        named = culprits(note)  # the passes that change the answer alone (_culprit)
        return (f"after {runtime}'s {', '.join(named)}, " if named else f"after {runtime}, "), ""

    def supports(self, spec_id: str, dtype: str) -> str | None:
        return super().supports(spec_id, dtype) or (
            None if dtype in _FED else f"the control runtimes' Python APIs take no {dtype} tensors through numpy")

    def run(self, case: Case, placement: Placement = Placement.INPUTS) -> Outcome:
        try:
            model = build_model(case, placement)
        except Exception as exc:  # what the model cannot hold (a string value in a float attribute)
            self.raise_unless_answer(exc)
            return Outcome(error=f"{type(exc).__name__}: {error_text(exc)}")
        try:
            rewritten = self.rewrite(_copy(model), self.passes)  # a copy: some rewriters change their input
        except Exception as exc:
            self.raise_unless_answer(exc)
            if self.refuses(exc):
                return Outcome(skipped=f"{self.name} refuses to rewrite the model (which is fine): {error_text(exc)}")
            return Outcome(error=f"{self.name} raised: {type(exc).__name__}: {error_text(exc)}")
        if rewritten.graph.SerializeToString() == model.graph.SerializeToString() \
                and list(rewritten.opset_import) == list(model.opset_import):
            return Outcome(skipped=f"{self.name} left the model as it was (a refusal to rewrite, which is fine)")
        invalid = _check(rewritten)
        if invalid and not _check(model):
            return Outcome(error=f"onnx.checker (full_check) rejects the model {self.name} rewrote, not the one "
                                 f"it was given: {invalid}")
        spec = _classified(case)  # the worker hands adapters a case's inputs only
        invalid = self.invalid_rewrite(spec, rewritten) if spec is not None else None
        if invalid:
            return Outcome(error=invalid)
        before, after = model.SerializeToString(), rewritten.SerializeToString()
        inputs = feeds(case, placement)
        answers = {runtime: (_run(runtime, before, inputs), _run(runtime, after, inputs))
                   for runtime in (REFERENCE, ORT_NO_OPT)}
        # a runtime refusing the model it was given, which the specification defines, is no control
        defined = spec is not None and spec.kind == CaseKind.DEFINED
        controls = [rt for rt, (control, _) in answers.items() if control[0] is not None or not defined]
        if not controls:
            return Outcome(skipped=f"neither {REFERENCE} nor {ORT_NO_OPT} runs the model {self.name} was given: "
                                   "no control to judge the rewrite against")
        judged = spec or case  # the classified case carries its context's tolerance
        changed = [runtime for runtime in controls if not _same(judged, *answers[runtime])]
        if changed:
            # the exhibit: onnx's reference's answer, unless it refuses the rewritten model where
            # onnxruntime computes one (the evaluator fails on some pools with their own pads)
            runtime = ORT_NO_OPT if ORT_NO_OPT in changed and answers[REFERENCE][1][0] is None \
                and answers[ORT_NO_OPT][1][0] is not None else changed[0]
            control, answer = answers[runtime]
            others = [rt for rt in (REFERENCE, ORT_NO_OPT) if rt != runtime]
            said = f"on {runtime} the rewritten model {_shown(answer)}, the model it was given {_shown(control)}"
            if len(changed) < len(controls):  # the other control runtime computes what it computed before
                return Outcome(skipped=f"{said}; on {others[0]} it computes what the model it was given computes: "
                                       "the difference may be that runtime's, on a graph it meets only rewritten")
            also = f"; on {others[0]} it changes too" if others[0] in controls else \
                f"; {others[0]} refuses the model it was given (no control there)"
            note = f"{said}{self._culprit(judged, model, runtime, inputs, control)}{also}"
            return Outcome(output=answer[0], error=answer[1], note=note)
        runtime = REFERENCE if REFERENCE in controls else ORT_NO_OPT
        if len(controls) == 2 and not _same(judged, answers[REFERENCE][0], answers[ORT_NO_OPT][0]):
            return Outcome(skipped=f"{REFERENCE} and {ORT_NO_OPT} disagree on the model {self.name} was given: "
                                   "no control to judge the rewrite against")
        kept = f"{self.name} rewrote the model; it computes what the model it was given computes on " \
               f"{' and '.join(controls)}"
        control, rewritten_answer = answers[runtime]
        if spec is not None and not _conforms(spec, control):  # the control runtime's own failure, kept
            return Outcome(skipped=f"{kept}, where {runtime} {_shown(control)}, which the specification does not "
                                   "allow: no verdict on the rewrite")
        return Outcome(output=rewritten_answer[0], error=rewritten_answer[1], note=kept)

    def _culprit(self, case: Case, model, runtime: str, inputs: dict, control: tuple) -> str:
        """'; alone, X changes it' for the passes that do (``culprits`` reads it back)."""
        if len(self.passes) < 2:
            return ""
        found = []
        for one in self.passes:
            try:
                alone = self.rewrite(_copy(model), (one,)).SerializeToString()
            except Exception as exc:
                self.raise_unless_answer(exc)
                continue
            if not _same(case, control, _run(runtime, alone, inputs)):
                found.append(one)
        return f"; alone, {', '.join(found)} changes it" if found else ""


_CULPRITS = re.compile(r"; alone, ([\w, .-]+?) changes it")


def culprits(note: str | None) -> list[str]:
    """The passes a rewriter's note names as changing the answer alone (RewriterAdapter._culprit)."""
    found = _CULPRITS.search(note or "")
    return found[1].split(", ") if found else []


def _copy(model):
    import onnx
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


# The preconditions of the rewriters' Pad passes (padconf.adapters.preconditions), in the words
# of padconf.cases.context_cells.FEATURES, read off each pass's source: a Pad fuses into its Conv
# or pool only in constant mode (an absent mode attribute is constant), with a zero or absent
# value, constant pads, none negative, zero on N and C, the Pad's one consumer, the consumer's
# auto_pad NOTSET (onnxslim: or VALID; onnxscript writes SAME out first)
_FUSED = {"mode": "constant", "value": "absent", "pads": "initializer", "axes": "absent", "amounts": "growing",
          "consumers": "one", "auto_pad": "NOTSET", "own_pads": "none"}
_NEXT_TO = {"mode": ("absent", "reflect", "edge"), "value": ("zero", "nonzero"),
            "pads": ("fed", "constant-node", "constant-ints", "computed"), "axes": ("ordered", "reordered"),
            "amounts": ("zero", "cropping"), "consumers": ("two",), "auto_pad": ("VALID", "SAME_UPPER", "SAME_LOWER"),
            "own_pads": ("given",)}
INTO_CONV = Precondition("fuse_pad_into_conv", {**_FUSED, "consumer": "Conv", "group": "1"},
                         {**_NEXT_TO, "group": ("grouped",)},
                         ({"axes": "reordered", "value": "zero"}, {"axes": "ordered", "pads": "constant-node"}))
INTO_POOL = Precondition("fuse_pad_into_pool", {**_FUSED, "consumer": "MaxPool"},
                         {**_NEXT_TO, "consumer": ("AveragePool",)},
                         ({"consumer": "AveragePool", "count_include_pad": "1"},
                          {"consumer": "AveragePool", "axes": "reordered"}))
# eliminate_nop_pad, and constant folding of a Pad whose operands are all constant
NOP = Precondition("eliminate_nop_pad", {"consumer": "none", "mode": "constant", "value": "absent",
                                         "pads": "initializer",
                                         "axes": "absent", "amounts": "zero", "consumers": "one"},
                   {"mode": ("absent", "reflect", "edge", "wrap"), "value": ("zero", "nonzero"),
                    "pads": ("fed", "constant-node", "constant-ints", "computed"), "axes": ("ordered", "reordered"),
                    "consumers": ("two",)})


def _as(pass_name: str, precondition: Precondition) -> Precondition:
    return dataclasses.replace(precondition, pass_name=pass_name)


# Each rewriter's repro function, copied into a bundle's repro by its source (it imports nothing
# of padconf), rewrites the model as padconf ran the rewriter; the script runs both models.


def onnxoptimizer_rewrite(model, configuration):
    import onnxoptimizer
    return onnxoptimizer.optimize(model, configuration["passes"])


class OnnxOptimizerAdapter(RewriterAdapter):
    """onnxoptimizer (onnx/optimizer): its three passes that rewrite Pad."""

    name = "onnxoptimizer"
    module = package = "onnxoptimizer"
    passes = ("fuse_pad_into_conv", "fuse_pad_into_pool", "eliminate_nop_pad")
    preconditions = (INTO_CONV, INTO_POOL, NOP)
    repro = StandaloneRepro("onnx onnxoptimizer onnxruntime", onnxoptimizer_rewrite, rewrites=True)

    def rewrite(self, model, passes: tuple[str, ...]):
        return onnxoptimizer_rewrite(model, {"passes": list(passes)})


def onnxscript_rewrite(model, configuration):
    import onnxscript.optimizer
    import onnxscript.rewriter
    from onnxscript.rewriter.rules.common import fuse_pad_into_conv_rule, normalize_pad_format_conv_rule
    for name in configuration["passes"]:  # "optimize": the optimizer; "fuse_pad_into_conv": the rewrite rules
        model = onnxscript.optimizer.optimize(model) if name == "optimize" else onnxscript.rewriter.rewrite(
            model, pattern_rewrite_rules=[normalize_pad_format_conv_rule, fuse_pad_into_conv_rule])
    return model


class OnnxScriptAdapter(RewriterAdapter):
    """onnxscript's optimizer (constant folding, its default rewrite rules) and its rules fusing
    Pad into Conv (not among the optimizer's defaults: exporters' pipelines apply them)."""

    name = "onnxscript"
    module = "onnxscript.optimizer"
    package = "onnxscript"
    passes = ("optimize", "fuse_pad_into_conv")
    preconditions = (_as("optimize", NOP), INTO_CONV)
    repro = StandaloneRepro("onnx onnxscript onnxruntime", onnxscript_rewrite, rewrites=True)

    def rewrite(self, model, passes: tuple[str, ...]):
        return onnxscript_rewrite(model, {"passes": list(passes)})


def onnxslim_rewrite(model, configuration):
    import onnxslim
    return onnxslim.slim(model)


class OnnxSlimAdapter(RewriterAdapter):
    """onnxslim: ``slim`` with its defaults (constant folding, dead-node elimination, its fusion
    patterns, FusionPadConv among them), as its users call it."""

    name = module = package = "onnxslim"
    passes = ("slim",)
    preconditions = (_as("slim", NOP), _as("slim", INTO_CONV))  # its constant folding, FusionPadConv
    repro = StandaloneRepro("onnx onnxslim onnxruntime", onnxslim_rewrite, rewrites=True)

    def rewrite(self, model, passes: tuple[str, ...]):
        return onnxslim_rewrite(model, {})


def onnxsim_rewrite(model, configuration):
    import onnxsim
    return onnxsim.simplify(model, check_n=0)[0]  # no check against random inputs


class OnnxSimAdapter(RewriterAdapter):
    """onnx-simplifier (``onnxsim.simplify``): constant folding with onnxruntime, shape inference,
    and onnxoptimizer's passes, Pad fusions among them; no check against random inputs (padconf's
    controls are the check)."""

    name = module = "onnxsim"
    package = "onnxsim"
    passes = ("simplify",)  # onnxoptimizer's passes after constant folding
    preconditions = (_as("simplify", NOP), _as("simplify", INTO_CONV), _as("simplify", INTO_POOL))
    repro = StandaloneRepro("onnx onnxsim onnxruntime", onnxsim_rewrite, rewrites=True)

    def rewrite(self, model, passes: tuple[str, ...]):
        return onnxsim_rewrite(model, {})


# onnx's version converter across Pad's versions (2->11, 11->13, 13->18, 18->19 and
# back): a case of Pad-v converts to the next Pad version of the chain ("up"), or the one before
# ("down", the variant onnx-version-converter[direction=down]); the model runs at the target opset
# up to 19 -> 21 as well: wrap is Pad-19's, so only a conversion from 19 takes a wrap Pad up (the
# precondition cell mode=wrap of convert_version); onnx's converter keeps wrap at opset 21
CONVERSIONS = {"up": {2: 11, 11: 13, 13: 18, 18: 19, 19: 21}, "down": {11: 2, 13: 11, 18: 13, 19: 18}}


def converter_rewrite(model, configuration):
    from onnx import version_converter
    return version_converter.convert_version(model, configuration["target_opset"])


class VersionConverterAdapter(RewriterAdapter):
    """onnx's version converter (``onnx.version_converter.convert_version``), Pad-v's model to
    the next Pad version's opset (CONVERSIONS; ``direction=down``: the previous one)."""

    name = "onnx-version-converter"
    module = "onnx.version_converter"
    package = "onnx"
    options = {"direction": ("up", "down")}
    # each Pad adapter rewrites the mode, the value, the pads and axes as inputs or attributes
    preconditions = (Precondition("convert_version", {**NOP.holds, "amounts": "growing"},
                                  {**NOP.varied, "amounts": ("zero", "cropping")}),)
    repro = StandaloneRepro("onnx onnxruntime", converter_rewrite, rewrites=True)

    @property
    def direction(self) -> str:
        return self.settings.get("direction", "up")

    def target_opset(self, opset: int) -> int | None:
        return CONVERSIONS[self.direction].get(opset)

    def configuration(self) -> dict[str, object]:
        return {"direction": self.direction}

    def repro_configuration(self, case: Case, note: str | None) -> dict[str, object]:
        return {"target_opset": self.target_opset(parse_spec_id(case.spec)[1])}

    def supports(self, spec_id: str, dtype: str) -> str | None:
        found = super().supports(spec_id, dtype)
        if found is None and self.target_opset(parse_spec_id(spec_id)[1]) is None:
            found = (f"{self.name} converts Pad {self.direction} across "
                     f"{', '.join(f'{a}->{b}' for a, b in CONVERSIONS[self.direction].items())} only")
        return found

    def rewrite(self, model, passes: tuple[str, ...]):
        return converter_rewrite(model, {"target_opset": self.target_opset(model.opset_import[0].version)})

    def refuses(self, exc: Exception) -> bool:
        return "No Adapter" in str(exc)  # it has no conversion of this op across these versions

    def invalid_rewrite(self, case: Case, rewritten) -> str | None:
        target = rewritten.opset_import[0].version
        at_target = classify(case.with_(spec=f"onnx/Pad-{target}"), get_spec(f"onnx/Pad-{target}"))
        if at_target.kind == CaseKind.MUST_REJECT and case.kind != CaseKind.MUST_REJECT:
            return (f"{self.name} converted the model to opset {target}, whose Pad forbids it "
                    f"({at_target.reason}): an invalid model")
        return None
