"""The worked examples of the spec documents: as cases, and checked against the reference.

An example whose document prints its output is a defined case whose expected output is the
print itself (the document is the authority, not padconf). Where only a shape is printed, the
reference supplies the values and the check compares the shape. Where upstream has corrected an
example since (its ``correction``), padconf follows the correction: a corrected example takes
its corrected inputs; a withdrawn one settles nothing, so its case is classified like any
other (e.g. ambiguous), and only the check still shows that the reference reproduces its print.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import base_interpretations, classify, reference_call
from padconf.core.dtypes import as_array, bit_equal, numpy_dtype, scalar
from padconf.core.errors import PadError
from padconf.spec.loader import Spec


def example_inputs(spec: Spec, ex: dict) -> Case:
    dtype = ex["dtype"]
    if "data" in ex:
        data = as_array(ex["data"], dtype)
    else:  # the document shows only a shape (its data is random): use small distinct values
        shape = ex["data_shape"]
        values = np.arange(int(np.prod(shape))) % 7
        data = as_array(values.astype(str) if dtype == "string" else values, dtype).reshape(shape)
    pads = ex.get("correction", {}).get("pads") or (
        ex["pads"] if "pads" in ex else list(ex["pads_begin"]) + list(ex["pads_end"]))
    value = ex.get("constant_value")
    return Case(
        spec=spec.id, data=data, pads=[int(p) for p in pads], mode=ex.get("mode", "constant"),
        constant_value=None if value is None else scalar(value, dtype),
        axes=ex.get("axes"), origin=f"example:{ex['name']}", tags=["spec-example"],
    )


def printed_output(ex: dict) -> np.ndarray | None:
    """The output exactly as printed, corrected only for a declared erratum."""
    if "output" not in ex:
        return None
    out = as_array(ex["output"], ex["dtype"])
    if ex.get("erratum", {}).get("kind") == "extra_outer_bracket":
        out = out[0]
    return out


def example_cases(spec: Spec) -> list[Case]:
    cases = []
    for ex in spec.examples:
        case = example_inputs(spec, ex)
        printed = printed_output(ex)
        if printed is not None and not withdrawn(ex):
            cases.append(case.with_(kind=CaseKind.DEFINED, expected=printed, reason=None))
        else:
            cases.append(classify(case, spec))
    return cases


def withdrawn(ex: dict) -> bool:
    """Upstream withdrew the example as wrong: it settles nothing."""
    return ex.get("correction", {}).get("kind") == "withdrawn"


@dataclass
class ExampleCheck:
    spec: str
    name: str
    ok: bool
    detail: str


def check_example(spec: Spec, ex: dict) -> ExampleCheck:
    """Run one example through the reference, under the interpretation the example implies."""
    case = example_inputs(spec, ex)
    interpretations = {**base_interpretations(spec), **ex.get("interpretation", {})}
    notes = [f"{k}={v}" for k, v in ex.get("interpretation", {}).items()]
    if "erratum" in ex:
        notes.append(f"erratum: {ex['erratum']['kind']}")
    if "correction" in ex:
        notes.append(f"{ex['correction']['kind']} upstream: {ex['correction']['source'].split(',')[0]}")
    try:
        got = reference_call(case, spec, interpretations)
    except PadError as exc:
        return ExampleCheck(spec.id, ex["name"], False, f"reference refused: {exc}")
    printed = printed_output(ex)
    if printed is not None and not bit_equal(got, printed):
        return ExampleCheck(spec.id, ex["name"], False,
                            f"printed {printed.tolist()} but reference gives {got.tolist()}")
    if "output_shape" in ex and list(got.shape) != list(ex["output_shape"]):
        return ExampleCheck(spec.id, ex["name"], False,
                            f"printed shape {ex['output_shape']} but reference gives {list(got.shape)}")
    if got.dtype != numpy_dtype(ex["dtype"]):
        return ExampleCheck(spec.id, ex["name"], False, f"output dtype {got.dtype} is not {ex['dtype']}")
    what = "values" if printed is not None else "shape"
    return ExampleCheck(spec.id, ex["name"], True, "; ".join([f"{what} match"] + notes))


def check_all(specs: list[Spec]) -> list[ExampleCheck]:
    return [check_example(spec, ex) for spec in specs for ex in spec.examples]
