"""What is installed: every adapter registered in the ``padconf.adapters`` entry-point group,
described by a worker of its own (so a plugin that fails to import, or crashes or hangs in
``available()``, is one line here and never padconf's end)."""
from __future__ import annotations

from dataclasses import dataclass, field

from padconf.adapters import registry
from padconf.execution.worker import Worker
from padconf.spec.loader import Spec, parse_spec_id


@dataclass
class RuntimeInfo:
    name: str
    target: str  # module:Class
    version: str | None = None
    unavailable: str | None = None  # why not usable here
    placements: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)  # spec id -> dtypes it cannot express

    def dtypes_line(self, spec: Spec) -> str:
        """e.g. "23/25 (no complex64, complex128)" for a spec in its domains, else "-"."""
        if self.unavailable or parse_spec_id(spec.id)[0] not in self.domains:
            return "-"
        missing = self.missing.get(spec.id, [])
        line = f"{len(spec.dtypes) - len(missing)}/{len(spec.dtypes)}"
        return line + (f" (no {', '.join(missing)})" if missing else "")

    def line(self, specs: list[Spec], opt_in: str | None = None) -> str:
        """``padconf runtimes`` without a terminal: this runtime in one line, with the dtypes it
        cannot be given of those its specs allow (the tables' columns, in words)."""
        tail = f"; {opt_in}" if opt_in else ""
        if self.unavailable:
            return f"{self.name}: unavailable here: {self.unavailable}; {self.target}{tail}"
        lacking = [f"{spec.id} {self.dtypes_line(spec)}" for spec in specs if "(" in self.dtypes_line(spec)]
        ran = [spec.id for spec in specs if self.dtypes_line(spec) != "-"]
        dtypes = f"dtypes: {'; '.join(lacking)}" if lacking else "dtypes: every one its specs allow"
        return (f"{self.name} {self.version or '-'}: available; placements {' '.join(self.placements) or '-'}; "
                f"{len(ran)} spec{'s' * (len(ran) != 1)}; {dtypes}; {self.target}{tail}")


def describe_runtimes(specs: list[Spec], names: list[str] | None = None) -> list[RuntimeInfo]:
    found = []
    pairs = [(s.id, d) for s in specs for d in s.dtypes]
    workers = {name: Worker(name) for name in names or list(registry())}
    for worker in workers.values():
        worker.spawn()  # every runtime imports at once, as a run's do
    for name, worker in workers.items():
        info = RuntimeInfo(name, registry().get(name, name))
        try:
            about = worker.describe(pairs)
        finally:
            worker.close()
        info.unavailable, info.version = about["unavailable"], about["version"]
        info.placements, info.domains = about["placements"], about["domains"]
        for (spec_id, dtype), why in zip(pairs, about["supports"]):
            if why and parse_spec_id(spec_id)[0] in info.domains:
                info.missing.setdefault(spec_id, []).append(dtype)
        found.append(info)
    return found
