"""What the gate says: a line per new failure and per fixed entry (problem_lines), and the
same judgement as JUnit XML (junit_xml)."""
from __future__ import annotations

import math
from xml.etree import ElementTree

from padconf.core.escape import Xml, xml
from padconf.gate.compare import Judgement
from padconf.judging.judged import test_outcome
from padconf.judging.records import ResultRow, shown_list
from padconf.judging.triage import triage
from padconf.report.report import graph_or_mode


def problem_lines(judgement: Judgement) -> list[str]:
    """One line per new failure and per fixed entry: what the gate fails on."""
    lines = [f"new: {r['case_id']} [{r['placement']}]: {r['verdict']}: {_reason(r)}; triage: {triage(r)[0].label}"
             + _after(r) + _alone(judgement, r) for r in judgement.new]
    return lines + [f.line() for f in judgement.fixed]


def _after(row: ResultRow) -> str:
    if not row.get("after"):
        return ""
    return (f"; it recurs only after {row['after']} ran in the same worker process (a known pair: "
            f"an entry with `after: {row['after']}`)")


def _alone(judgement: Judgement, row: ResultRow) -> str:
    verdict = judgement.recurred_as.get((row["case_id"], row["placement"]))
    return f"; rerun alone, it fails as {verdict}" if verdict else ""


def _reason(row: ResultRow) -> str:
    text = row.get("error") or row.get("detail") or row.get("reason") or ""
    where = f"{graph_or_mode(row)} {row['dtype']} shape={shown_list(row, 'shape')} pads={shown_list(row, 'pads')}"
    return f"{where}: {text.splitlines()[0][:200] if text else '(no text)'}"


def _seconds(row: ResultRow) -> str:
    """A testcase's time as JUnit reads it, a number of seconds >= 0: a row's (from a shard
    anyone may have written) that is none, NaN, infinite, negative or past 1e9 is 0."""
    seconds = row.get("seconds")
    ok = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds) \
        and 0 <= seconds <= 1e9
    return f"{float(seconds) if ok else 0.0:.3f}"  # type: ignore[arg-type]


def junit_xml(judgement: Judgement) -> Xml:
    """JUnit XML: a testcase per result (new failures fail, forgiven ones and skips are
    skipped with their reason), and one per fixed entry, failing."""
    known = {id(row): entry for row, entry in judgement.known}
    new = {id(row) for row in judgement.new}
    suite = ElementTree.Element("testsuite", name=f"padconf gate {judgement.runtime}")
    for row in judgement.rows:
        case = ElementTree.SubElement(suite, "testcase", classname=f"{row['spec']}.{row['mode']}",
                                      name=f"{row['case_id']}[{row['placement']}]", time=_seconds(row))
        if id(row) in new:
            ElementTree.SubElement(case, "failure", message=f"{row['verdict']}: {_reason(row)}; "
                                                            f"triage: {triage(row)[0].label}{_alone(judgement, row)}")
        elif id(row) in known:
            ElementTree.SubElement(case, "skipped", message=f"known {row['verdict']} ({known[id(row)].where}): "
                                                            f"{known[id(row)].why}")
        elif (unjudged := test_outcome(row)) is not None:  # skipped or inconclusive, as the plugin skips it
            ElementTree.SubElement(case, "skipped", message=unjudged)
    for fixed in judgement.fixed:
        case = ElementTree.SubElement(suite, "testcase", classname="baseline", name=fixed.entry.where)
        ElementTree.SubElement(case, "failure", message=fixed.line())
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
    for element in suite.iter():  # every attribute, whatever text it was built from
        element.attrib.update({k: xml(v) for k, v in element.attrib.items()})
    return Xml(ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n")  # markup escaped by it
