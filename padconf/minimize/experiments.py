"""Triage by experiment: before a minimized failure is put down to a runtime's policy or to a
missing kernel, or judged at a spec version whose document leaves its input undefined, padconf
runs the case that would show otherwise, alone, and records what it did on the failure's row
(``row["experiments"]``), where padconf.judging.triage reads it:

- ``beyond_policy``: a policy fact that names the oldest opset its policy supports
  (``supported_opset``: onnxruntime's "opset version 7 and higher") is set aside when the case,
  stamped with that opset (the Pad version in force there), fails the same way: the kernel
  the runtime runs at the opsets it supports refuses it too (rank-0 data at Pad-2);
- ``explicit_default``: a refusal, or a missing kernel, of a case that omits constant_value is
  a refusal of the documented default when the same case with that default written out works
  (OpenVINO's ONNX frontend on string data: "Unknown type" without, the padded output with ``''``);
- ``defined_at``: a failure at a version whose document leaves the input undefined is judged
  at the next version of the same family that defines it, where the runtime fails it too
  (OpenVINO Pad-1's negative pads, which Pad-12 defines): the bundle is written there;
- ``default_configuration``: a variant's failure (openvino[threads=1]) run by the runtime in its
  default configuration: where that conforms, the failure is the configuration's, and its title
  says so.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.onnx_model import build_model, feeds, ir_version
from padconf.core.dtypes import numpy_dtype
from padconf.core.errors import PadconfError, SpecError
from padconf.core.vocabulary import Placement
from padconf.execution.worker import Worker
from padconf.judging.outcome import Outcome
from padconf.judging.triage import Triage, triage
from padconf.judging.verdicts import FAILURES, Verdict, judge
from padconf.minimize.shrink import Attempt, IsolatedRunner
from padconf.spec.loader import get_spec, load_specs, parse_spec_id

_REFUSALS = (Verdict.WRONGLY_REJECTED, Verdict.NOT_IMPLEMENTED)


def _versions(isolated: IsolatedRunner, domain: str) -> list[int]:
    """The versions of ``domain``'s spec family in the spec folder, oldest first."""
    return sorted(parse_spec_id(s.id)[1] for s in load_specs(isolated.specs_dir) if parse_spec_id(s.id)[0] == domain)


def beyond_policy(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> dict | None:
    """Where ``attempt``'s triage is a policy whose fact names the oldest opset it supports, the
    case re-expressed at that opset (the newest spec version of its family not after it, in a
    model stamped with the opset), run alone in a fresh worker: what it did, where it fails
    there with the same verdict ({"opset", "spec", "verdict", "detail"}); else None."""
    found, fact = triage(attempt.row)
    if found != Triage.POLICY or fact is None or fact.supported_opset is None:
        return None
    domain, _ = parse_spec_id(attempt.case.spec)
    if domain != "onnx":
        return None
    in_force = max((v for v in _versions(isolated, domain) if v <= fact.supported_opset), default=None)
    if in_force is None:
        return None
    spec = f"{domain}/Pad-{in_force}"
    try:
        case = classify(attempt.case.with_(spec=spec), get_spec(spec, isolated.specs_dir))
        model = build_model(case, placement)
    except (PadconfError, SpecError, ValueError, TypeError, OverflowError):  # no such model at that version
        return None
    model.opset_import[0].version = fact.supported_opset
    model.ir_version = ir_version(fact.supported_opset, case.dtype)
    outputs, error, status = isolated.worker.run_model(model.SerializeToString(), feeds(case, placement))
    ruling = judge(case, Outcome(output=None if outputs is None else np.asarray(outputs[0]), error=error), status)
    if ruling.verdict != attempt.row["verdict"]:
        return None
    return {"opset": fact.supported_opset, "spec": spec, "verdict": ruling.verdict,
            "detail": ruling.detail or error}


def documented_default(case: Case) -> np.ndarray | None:
    """The constant value an omitted constant_value stands for ("defaults to 0, empty string,
    or False"), where the case omits it and its spec takes it as an input; else None."""
    domain, version = parse_spec_id(case.spec)
    if case.constant_value is not None or case.mode != "constant" or (domain == "onnx" and version <= 2):
        return None
    if case.dtype == "string":
        return np.array("", dtype=object)
    return np.zeros((), dtype=numpy_dtype(case.dtype))


def explicit_default(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> dict | None:
    """Where ``attempt`` is a refusal (or a missing kernel) of a case that omits constant_value,
    the same case with the documented default written out, run alone: {"constant_value",
    "verdict"} where the runtime then answers as the spec says (the default is what it refuses);
    else None."""
    value = documented_default(attempt.case)
    if value is None or attempt.row["verdict"] not in _REFUSALS:
        return None
    try:
        spelled = isolated.attempt(attempt.case.with_(constant_value=value), placement)
    except (PadconfError, SpecError, ValueError, TypeError):
        return None
    if spelled.row["verdict"] in FAILURES or spelled.outcome.output is None:
        return None
    return {"constant_value": value.tolist(), "verdict": spelled.row["verdict"]}


def defined_at(isolated: IsolatedRunner, attempt: Attempt, placement: Placement) -> Attempt | None:
    """Where ``attempt``'s case is ambiguous at its spec version (its document leaves the input
    undefined), the same inputs at the next version of the family whose document defines them,
    run alone, where the runtime fails there too: that attempt (its bundle is written at the
    version that defines the input). Else None."""
    case = attempt.case
    if case.kind != CaseKind.AMBIGUOUS or attempt.row["verdict"] not in FAILURES:
        return None
    domain, version = parse_spec_id(case.spec)
    for newer in (v for v in _versions(isolated, domain) if v > version):
        spec = f"{domain}/Pad-{newer}"
        try:
            there = classify(case.with_(spec=spec), get_spec(spec, isolated.specs_dir))
        except (PadconfError, SpecError, ValueError, TypeError, OverflowError):
            continue
        if there.kind != CaseKind.DEFINED:
            continue
        got = isolated.attempt(there, placement)
        return got if got.row["verdict"] in FAILURES and got.row["verdict"] != Verdict.NOT_IMPLEMENTED else None
    return None


def default_configuration(default: Worker | None, attempt: Attempt, placement: Placement,
                          configuration: dict[str, object]) -> dict | None:
    """Where ``attempt`` is a failure of a variant set up as ``configuration`` (the runtime's own
    terms), the minimal case alone on ``default`` (the same runtime in its default
    configuration): {"runtime", "verdict", "detail", "configuration"} where it does not fail
    there; else None."""
    if default is None or attempt.row["verdict"] not in FAILURES:
        return None
    try:
        outcome, status = default.run_alone(attempt.case, placement)
    except PadconfError:  # that runtime could not be started
        return None
    ruling = judge(attempt.case, outcome, status)
    if ruling.verdict in FAILURES:
        return None
    return {"runtime": default.adapter, "verdict": ruling.verdict, "detail": outcome.error or ruling.detail,
            "configuration": configuration}


def record(attempt: Attempt, found: dict[str, Any]) -> None:
    """Put the experiments' findings on the attempt's row, where triage reads them."""
    kept = {k: v for k, v in found.items() if v is not None}
    if kept:
        attempt.row["experiments"] = {**(attempt.row.get("experiments") or {}), **kept}

