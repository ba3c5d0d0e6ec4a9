"""The spec's own words beside a failure: the sentences a result is judged by (rule_quotes), what
a reader needs to see a failure for themselves (evidence), and the text of each undefined point
a run's ambiguous results hit (ambiguity_texts). The HTML page and a bundle's REPORT.md quote them."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from padconf.cases.case import Case, CaseKind
from padconf.core.dtypes import decode_array
from padconf.core.errors import CaseError, SpecError
from padconf.judging.records import ResultRow, RunData
from padconf.judging.verdicts import Difference, Verdict
from padconf.spec.loader import Spec, get_spec, rule_text, spec_sort_key


def _spec(spec_id: str, specs_dir) -> Spec | None:
    try:
        return get_spec(spec_id, Path(specs_dir) if specs_dir else None)
    except SpecError:  # the spec file moved since the run: the report shows the rest
        return None


def rule_quotes(row: Mapping[str, Any], specs_dir=None) -> list[dict]:
    """The spec's sentences a failure is judged by, as [{spec_key, text, note?}]: the rule a
    must-reject case breaks, the ambiguity an ambiguous case hits, or for a defined case the
    rule that fixes what went wrong (output shape, layout of pads, type list)."""
    spec = _spec(row["spec"], specs_dir)
    if spec is None:
        return [{"spec_key": None, "text": None, "note": f"spec file of {row['spec']} not found"}]
    if row.get("kind") == CaseKind.MUST_REJECT:
        return [rule_text(spec, row.get("rule"))]
    if row.get("kind") == CaseKind.AMBIGUOUS:
        return [{"spec_key": f"ambiguities.{name}", "text": spec.ambiguities[name].text}
                for name in (row.get("reason") or "").split(",") if name in spec.ambiguities]
    if row["verdict"] == Verdict.MISMATCH:  # the rule that fixes what differs
        fixes: dict[str | None, str] = {Difference.SHAPE: "output_shape", Difference.DTYPE: "dtypes"}
        rule = fixes.get(row.get("difference"), "pads_layout")
        return [rule_text(spec, rule)]
    if row["verdict"] == Verdict.NOT_IMPLEMENTED:
        return [rule_text(spec, "dtypes")]
    return [{"spec_key": None, "text": None, "note": "the case is defined: no rule of the spec rejects it"}]


def evidence(row: ResultRow, run: RunData) -> dict:
    """What a reader needs to see a failure for themselves: the inputs, the expected output
    (or each interpretation's), what the runtime gave or said, and the spec's words."""
    doc = run.cases.get(row["case_id"])
    out: dict[str, Any] = {"case": None, "actual": None, "error": row.get("error"), "detail": row.get("detail"),
           "note": row.get("note"), "rules": rule_quotes(row, run.specs_dir)}
    try:
        if doc is not None:
            out["case"] = Case.from_json(doc)
        output = row.get("output")
        if output is not None:
            out["actual"] = decode_array(output)
    except CaseError as exc:
        raise CaseError(f"{run.dir / 'cases.jsonl'}: case {row['case_id']}: {exc}") from None
    return out


def ambiguity_texts(rows: list[ResultRow], specs_dir=None) -> dict[str, list[tuple[str, list[str]]]]:
    """ambiguity name -> [(the spec's text of it, the spec versions hit that say so)]: versions
    word the same undefined point differently."""
    texts: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for spec_id in sorted({r["spec"] for r in rows if r["verdict"] == Verdict.AMBIGUOUS}, key=spec_sort_key):
        spec = _spec(spec_id, specs_dir)
        hit = {name for r in rows if r["spec"] == spec_id for name in (r.get("reason") or "").split(",")}
        for name, amb in (spec.ambiguities if spec else {}).items():
            if name in hit:
                texts[name].setdefault(amb.text, []).append(spec_id)
    return {name: list(by_text.items()) for name, by_text in sorted(texts.items())}
