"""What ``padconf bisect`` bisects (a case file, ``RUN_DIR:<case id>``, or a bundle folder), and a
bundle's release history: "first seen in / last seen in / fixed in" added to its REPORT.md and
written to its evidence.json. Every file read is untrusted: bounded, one line when malformed."""
from __future__ import annotations

import json
import re
from pathlib import Path

from padconf.cases.case import Case
from padconf.core.errors import CaseError, PadconfError
from padconf.core.untrusted import json_value, read_text
from padconf.core.vocabulary import PLACEMENTS, Placement
from padconf.core.writing import write_atomically
from padconf.judging.verdicts import FAILURES
from padconf.releases.bisect import Bisection
from padconf.run.rundir import load_run, read_case_file

CASE_FILE = "case.json"  # a bundle's minimal case, one cases.jsonl line (padconf.minimize.bundle.writer writes it)
ABOUT_FILE = "repro.json"  # a bundle's facts, its placement among them
EVIDENCE_FILE = "evidence.json"
REPORT_FILE = "REPORT.md"
_SECTION = "## Releases"
MAX_FILE_BYTES = 1 << 20


def read_bundle(folder: Path) -> tuple[Case, Placement]:
    """A bundle's minimal case and the placement it fails in."""
    if not (folder / CASE_FILE).is_file():
        raise PadconfError(f"{folder}: not a bundle padconf minimize wrote with its case ({CASE_FILE})")
    case = read_case_file(folder / CASE_FILE, follow=False)  # files of the folder given: no link out of it
    about = json_value(read_text(folder / ABOUT_FILE, MAX_FILE_BYTES, follow=False), str(folder / ABOUT_FILE)) \
        if (folder / ABOUT_FILE).is_file() else {}
    placement = about.get("placement") if isinstance(about, dict) else None
    if placement not in PLACEMENTS:
        raise PadconfError(f"{folder / ABOUT_FILE}: no placement padconf knows ({placement!r})")
    return case, Placement(placement)


def read_target(target: str, runtime: str, placement: str | None, specs_dir: str | None) -> tuple[Case, Placement]:
    """The case and placement ``target`` names for bisecting ``runtime``."""
    path = Path(target)
    if path.is_dir() and (path / CASE_FILE).is_file():
        case, recorded = read_bundle(path)
        return case, Placement(placement or recorded)
    if path.is_file():
        return read_case_file(path), Placement(placement or Placement.INPUTS)
    for m in reversed(list(re.finditer(":", target))):  # RUN_DIR:<case id> (ids hold colons too)
        run_dir, case_id = Path(target[:m.start()]), target[m.end():]
        if run_dir.is_dir():
            run = load_run(run_dir, specs_dir)
            doc = run.cases.get(case_id)
            if doc is None:
                raise CaseError(f"{run_dir}: no case {case_id!r} in cases.jsonl")
            rows = [r for r in run.rows if r["case_id"] == case_id and r["runtime"].split("@")[0] == runtime]
            failing = [r for r in rows if r["verdict"] in FAILURES]
            recorded = (failing or rows)[0]["placement"] if rows else Placement.INPUTS
            return Case.from_json(doc), Placement(placement or recorded)
    raise PadconfError(f"{target}: no such case file, bundle or run directory (CASE_OR_BUNDLE: a case file, "
                       "RUN_DIR:<case id>, or a bundle folder)")


def history_lines(found: Bisection) -> list[str]:
    lines = [_SECTION, "",
             f"{found.runtime} across {len(found.versions)} releases, {found.versions[0]} to {found.versions[-1]} "
             f"({len(found.tested)} tested, each boundary confirmed on both sides; `padconf bisect` with this "
             f"bundle reruns it):", ""]
    lines += [f"- {key}: {words}" for key, words in found.history_words().items()]
    for first, last, seen in found.spans():
        lines.append(f"- {first if first == last else f'{first} to {last}'}: {seen.line()}")
    return lines


def record_history(folder: Path, found: Bisection) -> dict[str, str]:
    """Add the bisection to the bundle: a section of REPORT.md (replacing an earlier one) and
    evidence.json's ``releases``. The history in words, returned."""
    report = folder / REPORT_FILE
    text = read_text(report, 16 << 20, PadconfError, follow=False) if report.is_file() else ""
    text = text.split("\n" + _SECTION + "\n")[0].rstrip("\n")
    write_atomically(report, text + "\n\n" + "\n".join(history_lines(found)) + "\n", replaces_input=True)
    evidence = folder / EVIDENCE_FILE
    doc = json_value(read_text(evidence, MAX_FILE_BYTES, PadconfError, follow=False), str(evidence), PadconfError) \
        if evidence.is_file() else {}
    if not isinstance(doc, dict):
        raise PadconfError(f"{evidence}: not a JSON object")
    doc["releases"] = found.to_json()
    write_atomically(evidence, json.dumps(doc, indent=1) + "\n", replaces_input=True)
    return found.history_words()
