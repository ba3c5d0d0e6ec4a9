"""The release a gate's fixed entry was fixed in, for ``padconf gate --runtime NAME@NEW``: an
upgrade's "fixed:" lines name the first release between the baseline's and the new one where the
entry's failure stopped (padconf.releases.bisect, on one case of its fixed cells that still fails
the entry's way at the baseline's release)."""
from __future__ import annotations

from collections.abc import Callable

from padconf.adapters import split_release
from padconf.cases.case import Case
from padconf.execution import package_index
from padconf.gate.baseline import BaselineEntry, Cell
from padconf.judging.records import ResultRow
from padconf.releases.bisect import Releases, bisect

MAX_CANDIDATES = 12  # cases of an entry's fixed cells tried at the old release, to find one it forgave


def fixed_in(fixed: list, rows: list[ResultRow], cases: dict[str, Case], runtime: str, old: str,
             say: Callable[[str], None] | None = None) -> list[str]:
    """One line per fixed entry (judge.Fixed): the release its failure stopped in, from ``old`` to
    the release ``runtime`` names, or why none could be told."""
    base, new = split_release(runtime)
    if new is None or not fixed:
        return []
    releases = Releases(base, say=say)
    lines = []
    try:
        versions = [r.version for r in package_index.between(releases.package, old, new)]
        for item in fixed:
            entry: BaselineEntry = item.entry
            cells = set(item.cells)
            candidates = [r for r in rows if Cell.of(r) in cells and r["case_id"] in cases][:MAX_CANDIDATES]
            found = None
            for row in candidates:
                case = cases[row["case_id"]]
                if entry.matches(releases.row(case, row["placement"], old)):
                    found = (case, row["placement"])
                    break
            if found is None:
                lines.append(f"fixed in: {entry.where}: none of {len(candidates)} cases of its fixed cells fails its "
                             f"way at {base} {old}: the release it was fixed in is not told")
                continue
            case, placement = found
            history = bisect(releases, case, placement, versions).history()
            lines.append(f"fixed in: {entry.where}: {base} {history['fixed in'] or new} (case {case.id} "
                         f"[{placement}] fails its way through {base} {history['last seen in']})")
    finally:
        releases.close()
    return lines
