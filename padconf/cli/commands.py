"""What each ``padconf`` command does, thin over the library: it calls what runs the command and
prints what came of it."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

# Each command imports what it runs inside its function, so that a command starts without
# importing what other commands use.
from padconf.core.errors import PadconfError
from padconf.core.escape import Terminal, plain, terminal
from padconf.core.progress import progress
from padconf.core.writing import (
    FolderLock,
    refuse_an_input,
    write_atomically,
    write_html,
    write_markdown,
    write_xml,
)
from padconf.judging.verdicts import FAILURES

console = Console()


def say(line: Terminal) -> None:
    """One line of text from outside on stdout, as its escaper made it (``plain``): printed as
    it is, rich reading no markup, highlighting or emoji code (``FILE:1234:``) in it."""
    console.print(line, soft_wrap=True, markup=False, highlight=False, emoji=False)


def cmd_specs(args) -> int:
    from padconf.spec.loader import load_specs

    table = Table(title="Pad spec versions")
    for col in ("id", "modes", "dtypes", "examples", "ambiguities"):
        table.add_column(col, no_wrap=col == "id")
    specs = load_specs(args.specs_dir)
    for spec in specs:
        table.add_row(spec.id, " ".join(spec.modes), str(len(spec.dtypes)), str(len(spec.examples)),
                      " ".join(spec.ambiguities))
    console.print(table)
    console.print(f"{len(specs)} spec files in {terminal(specs[0].path.parent.parent)}", soft_wrap=True)
    return 0


def cmd_runtimes(args) -> int:
    from padconf.adapters import OPT_IN
    from padconf.execution.runtimes import describe_runtimes
    from padconf.spec.loader import load_specs

    specs = load_specs(args.specs_dir)
    infos = describe_runtimes(specs)
    if not infos:
        raise PadconfError("no adapter is registered in the padconf.adapters entry-point group: is padconf installed?")
    usable = sum(not i.unavailable for i in infos)
    if not console.is_terminal:  # a log or a pipe: one line per runtime, never wrapped
        for info in infos:
            console.print(terminal(info.line(specs, OPT_IN.get(info.name))), soft_wrap=True,
                          markup=False, highlight=False)
        console.print(f"{len(infos)} adapters registered, {usable} available here", soft_wrap=True)
        return 0
    table = Table(title="Registered runtimes (entry points padconf.adapters)")
    for col in ("name", "version", "available here", "placements", "module:Class"):
        table.add_column(col, overflow="fold")
    for info in infos:
        table.add_row(*map(terminal, (info.name, info.version or "-", "yes" if not info.unavailable else
                                      f"no: {info.unavailable}", " ".join(info.placements) or "-", info.target)))
    console.print(table)
    dtypes = Table(title="dtypes each runtime can be given, of those each spec allows")
    dtypes.add_column("spec", no_wrap=True)
    for info in infos:
        dtypes.add_column(terminal(info.name), overflow="fold")
    for spec in specs:
        dtypes.add_row(spec.id, *[info.dtypes_line(spec) for info in infos])
    console.print(dtypes)
    for name, why in OPT_IN.items():
        if any(i.name == name for i in infos):
            console.print(f"{name}: {why}", soft_wrap=True)
    console.print(f"{len(infos)} adapters registered, {usable} available here", soft_wrap=True)
    return 0


def cmd_check(args) -> int:
    from padconf.cases.examples import check_all
    from padconf.spec.loader import load_specs

    specs = load_specs(args.specs_dir, args.spec)
    results = check_all(specs)
    if not results:
        raise PadconfError(f"the {len(specs)} selected spec files hold no worked example: nothing to check")
    table = Table(title="Worked examples through the reference")
    for col in ("spec", "example", "result", "detail"):
        table.add_column(col)
    for r in results:
        table.add_row(terminal(r.spec), terminal(r.name), "[green]match[/]" if r.ok else "[red]DIFFERS[/]",
                      terminal(r.detail))
    console.print(table)
    bad = sum(not r.ok for r in results)
    console.print(f"{len(results) - bad} matched, {bad} differ, over {len(specs)} spec files")
    return 1 if bad else 0


RUN_OPTIONS = ("runtime", "spec", "profile", "max_examples", "seed", "timeout", "compile_timeout", "compile_budget",
               "memory_mb", "cases", "modes", "dtypes", "pattern")


def _run_config(args):
    """The RunConfig the arguments ask for; on --resume, the recorded one, which the arguments
    may repeat but not change."""
    from padconf.run.config import RunConfig
    from padconf.run.runner import Run

    given = {name: getattr(args, name) for name in RUN_OPTIONS if getattr(args, name) is not None}
    renamed = {"runtime": "runtimes", "spec": "specs", "cases": "cases_dir"}
    given = {renamed.get(k, k): v for k, v in given.items()}
    if "cases_dir" in given:
        given["cases_dir"] = [str(Path(d).resolve()) for d in given["cases_dir"]]
    if args.specs_dir is not None:
        given["specs_dir"] = str(Path(args.specs_dir).resolve())
    if args.resume:
        run = Run(args.out, resume=True, jobs=args.jobs, named_runtimes=given.get("runtimes", []),
                  named_specs_dir=given.get("specs_dir"), named_cases_dirs=given.get("cases_dir"))
        recorded = vars(run.config)
        changed = [k for k, v in given.items() if recorded.get(k) != v]
        if changed:
            raise PadconfError(f"--resume continues {args.out} as its run.json records it ({changed[0]}="
                               f"{recorded.get(changed[0])!r}); drop that option, or start a new run")
        return run
    return Run(args.out, RunConfig(**given), force=args.force, jobs=args.jobs)


def prepare_environments(names) -> None:
    """Make (or check) the environment of every runtime named at a release, saying so on stderr,
    before anything else starts: a missing network or a broken cache entry is one line now."""
    from padconf.adapters import split_release
    from padconf.execution.env_worker import ensure_for

    err = Console(stderr=True)
    for name in names or []:
        if split_release(name)[1]:
            ensure_for(name, lambda text: err.print(f"padconf: {plain(text)}", soft_wrap=True, markup=False))


def cmd_run(args) -> int:
    from padconf.run.session import run_cases

    prepare_environments(args.runtime)
    run = _run_config(args)
    try:
        from padconf.spec.loader import load_specs
        load_specs(run.config.specs_dir, run.config.specs)  # an unknown --spec: its one line alone, before any other
        console.print(f"padconf run: reading cases from {terminal(' '.join(run.config.cases_dir))} into "
                      f"{terminal(run.dir)}" if run.config.cases_dir else
                      f"padconf run: drawing cases (profile {run.config.profile}) into {terminal(run.dir)}",
                      soft_wrap=True)
        data = run_cases(run, stages=_ConsoleStages(len(run.config.runtimes)))
    finally:
        run.release()
    _show(data, run.notes)
    return 0


class _ConsoleStages:
    """A run's stages on the terminal: a spinner while drawing, then what is to compute, then a
    progress bar (padconf.run.session.Stages)."""

    def __init__(self, runtimes: int):
        self.runtimes = runtimes

    def drawing(self):
        return progress(console, "drawing cases")

    def running(self, planned):
        runtimes = f"{self.runtimes} runtime{'s' * (self.runtimes != 1)}"
        console.print(f"{len(planned.cases)} cases over {len({c.spec for c in planned.cases})} spec files; "
                      f"{sum(planned.todo.values())} results to compute (each case in each placement of each of the "
                      f"{runtimes} that runs it)"
                      + (f", {planned.skipped} skipped (cases an adapter cannot express: see the notes)"
                         if planned.skipped else ""), soft_wrap=True)
        return progress(console, "running", planned.todo)


def _show(data, notes: list[str]) -> None:
    """The run's verdicts on the terminal (summary.md holds them too)."""
    from padconf.report import report
    from padconf.run.rundir import RESULTS, SUMMARY

    for part in report.terminal_output(data.rows, console.width, data.dir, data.dir / SUMMARY):
        text = isinstance(part, str)  # runtimes' error texts: no markup, no wrapping
        console.print(part, soft_wrap=text, markup=not text, highlight=False)
    for note in report.folded_notes(notes, {r["runtime"] for r in data.rows}):  # one line per runtime
        console.print(f"note: {plain(note)}", soft_wrap=True, markup=False, highlight=False)
    if any(r["verdict"] in FAILURES for r in data.rows):
        console.print(f"To shrink a failure to a bug report: padconf minimize {plain(data.dir)}:<case id> "
                      "--runtime <runtime>",
                      soft_wrap=True, markup=False, highlight=False)
    console.print(f"{report.counts_line(data.rows, len(data.cases))}\nIn {plain(data.dir / RESULTS)}; "
                  f"summary in {plain(data.dir / SUMMARY)}",
                  soft_wrap=True, markup=False, highlight=False)


def cmd_compile_cache(args) -> int:
    from padconf.adapters.compile_cache import CompileCache, default_root, key_path

    cache = CompileCache(default_root())
    if cache.root is None:
        console.print("the compile cache is off (PADCONF_COMPILE_CACHE=none)")
        return 0
    if args.clear:  # only padconf's entries, in a folder carrying its tag (else PadconfError, exit 2)
        console.print(f"{cache.clear()} entries deleted from {terminal(cache.root)}", soft_wrap=True)
        return 0
    entries, size = cache.size()
    console.print(f"{terminal(cache.root)}: {entries} entries, {size / 2**20:.1f} MB", soft_wrap=True)
    why = cache.why_off()  # a key file it will not trust: runs compile everything again
    console.print(terminal(why) if why else f"entries are trusted when signed with the key in {terminal(key_path())}",
                  soft_wrap=True)
    return 0


def _gate_config(args):
    from padconf.gate.gate import GateConfig, gate_run_id
    from padconf.gate.selection import parse_shard

    return GateConfig(runtime=args.runtime, specs=args.spec, seed=args.seed, explore=args.explore,
                      specs_dir=None if args.specs_dir is None else str(Path(args.specs_dir).resolve()),
                      shard=parse_shard(args.shard) if getattr(args, "shard", None) else None,
                      example_db=getattr(args, "example_db", None), timeout=args.timeout, memory_mb=args.memory_mb,
                      modes=getattr(args, "modes", None), dtypes=getattr(args, "dtypes", None),
                      pattern=getattr(args, "pattern", None),
                      run_id=gate_run_id(getattr(args, "run_id", None), os.environ))


def _work_dir(args, use: str) -> Path:
    return Path(args.work or f".padconf/{use}/{args.runtime.replace(':', '_').replace('/', '_')}")


def cmd_gate(args) -> int:
    from padconf.gate.baseline import load_baseline, unnamed_runtime

    prepare_environments([args.runtime])
    from padconf.cli import stdout_carries
    from padconf.gate.gate import gate, judge_results
    from padconf.gate.junit import junit_xml, problem_lines
    stdout_carries("the gate's lines (what is new, what is fixed)",
                   "write them to a file: padconf gate ... > FILE, or name --junit FILE")
    entries = load_baseline(args.baseline)
    refuse_an_input(args.junit)  # the baseline, a spec: refused before the gate runs
    if args.results:
        asked = _gate_config(args)
        judgement = judge_results(args.results, entries, args.runtime, asked.specs_dir, asked)
    else:
        with progress(console, f"gate {args.runtime}") as advance:
            judgement = gate(_gate_config(args), entries, _work_dir(args, "gate"), progress=advance)
    counts = ", ".join(f"{n} {v}" for v, n in judgement.counts.most_common())
    console.print(f"gate {terminal(args.runtime)}: {len(judgement.rows)} results ({counts}; a result is a case in one "
                  f"placement); {len(judgement.known)} failing results forgiven by {terminal(args.baseline)}",
                  soft_wrap=True)
    unnamed = unnamed_runtime(entries, args.runtime)
    if unnamed:
        say(plain(unnamed))
    for line in problem_lines(judgement):
        say(plain(line))
    for line in judgement.flaky:
        say(plain(f"flaky (not failing the gate): {line}"))
    if judgement.unjudged:
        console.print(f"{len(judgement.unjudged)} baseline entries not judged here in every cell (this is part of the "
                      "suite): judge them with `padconf gate --results DIR ...` over every shard", soft_wrap=True)
    for line in _fixed_in(args, judgement):
        say(plain(line))
    if args.junit:
        write_xml(args.junit, junit_xml(judgement))
    if judgement.judged_nothing:  # never pass on nothing
        raise PadconfError(f"gate {args.runtime}: {judgement.judged_nothing}")
    verdict = (f"FAILED: {len(judgement.new)} new failures, {len(judgement.fixed)} fixed baseline entries"
               if judgement.exit_code else "passed: nothing new")
    console.print(f"gate {terminal(args.runtime)}: {verdict}", soft_wrap=True)
    return judgement.exit_code


def _fixed_in(args, judgement) -> list[str]:
    """A gate of a runtime at a release (the upgrade flow): the release each fixed entry was fixed
    in, bisected from the release installed here (or ``--fixed-from``) to the one gated."""
    from padconf.adapters import adapter_class, split_release
    from padconf.cases.case import Case
    from padconf.core.versions import package_version
    from padconf.gate.fixed_in import fixed_in
    from padconf.run.rundir import load_run

    new = split_release(args.runtime)[1]
    if new is None or not judgement.fixed:
        return []
    old = args.fixed_from or package_version(adapter_class(args.runtime).package)
    if old is None:
        return [f"fixed in: not told: {args.runtime}'s package is not installed here; name the baseline's release "
                "with --fixed-from"]
    run = load_run(Path(args.results[0]) if args.results else _work_dir(args, "gate"), args.specs_dir)
    err = Console(stderr=True)
    return fixed_in(judgement.fixed, judgement.rows, {k: Case.from_json(v) for k, v in run.cases.items()},
                    args.runtime, old, lambda text: err.print(f"padconf: {plain(text)}", soft_wrap=True, markup=False))


def cmd_baseline(args) -> int:
    from padconf.gate.baseline import diff
    from padconf.gate.recording import baseline_text, prune

    err = Console(stderr=True)  # stdout may be the baseline itself
    prepare_environments([args.runtime])
    if args.prune:
        with progress(err, f"prune {args.prune}") as advance:
            old, new = prune(_gate_config(args), Path(args.prune), _work_dir(args, "baseline"), progress=advance)
        if new != old:
            write_atomically(Path(args.prune), new, replaces_input=True)  # the reviewed baseline, in place
        sys.stdout.write(diff(old, new, args.prune))
        err.print(f"{terminal(args.prune)}: "
                  f"{'narrowed to the cells that still fail' if new != old else 'nothing fixed'}",
                  soft_wrap=True)
        return 0
    with progress(err, f"baseline {args.runtime}") as advance:
        text, entries, results = baseline_text(_gate_config(args), _work_dir(args, "baseline"), args.by_case,
                                               progress=advance)
    if args.out in (None, "-"):
        from padconf.cli import stdout_carries
        stdout_carries("the baseline", "name a file for it with --out FILE")
        sys.stdout.write(text)
    else:
        write_atomically(args.out, text)
    err.print(f"{entries} entries covering {results} failing results (a case in one placement)"
              + ("" if args.out in (None, "-") else f" written to {args.out}"), soft_wrap=True)
    return 0


def cmd_generate(args) -> int:
    from padconf.generate.writer import generate
    from padconf.spec.loader import load_specs

    start = time.monotonic()
    entries = generate(args.out, load_specs(args.specs_dir, args.spec), seed=args.seed, per_combo=args.per_combo,
                       force=args.force, exporters=args.exporter)
    console.print(f"{len(entries)} cases written to {terminal(args.out)} in {time.monotonic() - start:.1f} s; "
                  f"coverage and how to run them: {terminal(args.out)}/README.md")
    return 0


def cmd_export_onnx_tests(args) -> int:
    from padconf.generate.writer import export_onnx_node_tests

    written = export_onnx_node_tests(args.out, force=args.force)
    if not written:
        raise PadconfError("the installed onnx defines no one-node Pad test: nothing written")
    console.print(f"{len(written)} of onnx's own Pad node tests written to {args.out}; run them with "
                  f"`padconf run --cases {args.out}`", soft_wrap=True)
    return 0


def _one_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: one path spelled twice, or two links to one file."""
    return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))


def cmd_report(args) -> int:
    from padconf.report import report
    from padconf.report.report_html import render
    from padconf.run.rundir import load_run

    if not (args.html or args.md or args.bugs):
        raise PadconfError("report: name what to write: --html FILE, --md FILE or --bugs")
    if args.html and args.md and _one_file(Path(args.html), Path(args.md)):
        raise PadconfError(f"report: --html and --md name one file, {args.md}: the second would replace the first")
    run = load_run(args.run_dir, args.specs_dir)
    if args.bugs:
        from padconf.cli import stdout_carries
        stdout_carries("the list of bugs", "write it to a file: padconf report RUN --bugs > FILE")
        for line in report.bug_lines(run.rows, run.dir, run.unfinished, run.unsigned):
            say(plain(line))
    if not (args.html or args.md):
        return 0
    written = []
    if args.html:
        html_path = Path(args.html)
        write_html(html_path, render(run))
        written.append(str(html_path))
    if args.md:
        write_markdown(args.md, report.short_markdown(run.rows, Path(args.html).name if args.html else None,
                                                        unfinished=run.unfinished, unsigned=run.unsigned))
        written.append(args.md)
    console.print(terminal(f"report on {len(run.rows)} results of {run.dir}: {', '.join(written)}"
                           + (f" (part of a run only: {run.unfinished})" if run.unfinished else "")
                           + (f" (not verified: {run.unsigned})" if run.unsigned else "")),
                  soft_wrap=True)
    return 0


def _memory(args) -> dict:
    """``--memory-mb``, where named: the workers' cap (else the library's default)."""
    return {"memory_mb": args.memory_mb} if args.memory_mb is not None else {}


def cmd_minimize(args) -> int:
    from padconf.minimize.minimize import minimize

    err = Console(stderr=True)
    live = err.is_terminal

    def progress(text, end=False):  # one line rewritten in place on a terminal; finished lines only in a log
        text = plain(text)  # a runtime's error text may hold escape sequences
        if live:
            err.file.write("\r\033[K" + text[:err.width - 1] + ("\n" if end else ""))
            err.file.flush()
        elif end:
            print(text, file=sys.stderr, flush=True)

    started = time.monotonic()
    if args.runtime is None or len(args.runtime) > 1:  # a run directory's runtimes, merged across one engine's paths
        from padconf.minimize.across import minimize_run
        if args.bisect:
            raise PadconfError("--bisect needs one --runtime: it bisects one runtime's releases")
        done = minimize_run(args.target, args.out, args.time_limit, progress, specs_dir=args.specs_dir,
                            jobs=args.jobs, named=args.runtime, **_memory(args))
        bundles = [s for s in done if s.get("dir") and not s.get("merged_into")]
        console.print(f"{len(bundles)} bundles of {len(done)} failures in {terminal(args.out)} "
                      f"({time.monotonic() - started:.1f} s)", soft_wrap=True)
        return 0
    (args.runtime,) = args.runtime
    prepare_environments([args.runtime])
    done = minimize(args.target, args.runtime, args.out, args.time_limit, progress, specs_dir=args.specs_dir,
                    **_memory(args))
    bundles = [s for s in done if s.get("dir")]
    console.print(f"{len(bundles)} bundles of {len(done)} failures in {terminal(args.out)} "
                  f"({time.monotonic() - started:.1f} s)", soft_wrap=True)
    if args.bisect:
        with FolderLock(Path(args.out), exclusive=True):  # the bundles' REPORT.md and evidence.json rewritten
            _bisect_bundles([Path(s["dir"]) for s in bundles], args, progress)
    return 0


def _bisect_bundles(folders: list[Path], args, progress) -> None:
    """``minimize --bisect``: each bundle's first-seen, last-seen and fixed-in releases, added to
    its REPORT.md and evidence.json (padconf.releases.bundle)."""
    from padconf.adapters import split_release, without_release
    from padconf.releases.bisect import Releases, bisect
    from padconf.releases.bundle import read_bundle, record_history

    runtime = without_release(args.runtime)
    releases = Releases(runtime, say=lambda text: progress(text, end=True))
    try:
        versions = releases.versions(args.release_from, args.release_to or split_release(args.runtime)[1])
        versions = versions[-args.last:] if args.last else versions
        for folder in folders:
            case, placement = read_bundle(folder)
            found = bisect(releases, case, placement, versions, progress)
            history = record_history(folder, found)
            console.print(f"{terminal(folder)}: " + "; ".join(f"{k} {v}" for k, v in history.items()),
                          soft_wrap=True, markup=False, highlight=False)
    finally:
        releases.close()


def cmd_bisect(args) -> int:
    """Which releases of a runtime the target case's verdict changed in."""
    from padconf.releases.bisect import Releases, bisect, report_lines
    from padconf.releases.bundle import read_target

    err = Console(stderr=True)
    if not args.json:  # the table is the whole output
        from padconf.cli import stdout_carries
        stdout_carries("the release table", "write it to a file: padconf bisect ... > FILE, or name --json FILE")
    case, placement = read_target(args.target, args.runtime, args.placement, args.specs_dir)
    releases = Releases(args.runtime, say=lambda text: err.print(f"padconf: {plain(text)}", soft_wrap=True,
                                                                  markup=False))
    started = time.monotonic()
    try:
        versions = releases.versions(args.release_from, args.release_to)
        versions = versions[-args.last:] if args.last else versions
        found = bisect(releases, case, placement, versions)
    finally:
        releases.close()
    for line in report_lines(found):
        say(plain(line))
    if args.json:
        import json
        write_atomically(args.json, json.dumps(found.to_json(), indent=1) + "\n")
    err.print(f"bisected in {time.monotonic() - started:.1f} s", soft_wrap=True)
    return 0


def cmd_envs(args) -> int:
    """The environments of runtimes at other releases: where, how large, what; --clear empties it."""
    from padconf.execution import environments

    root = environments.cache_root()
    if args.clear:  # only padconf's environments, in a folder carrying its tag (else exit 2)
        console.print(f"{environments.clear()} environments deleted from {terminal(root)}", soft_wrap=True)
        return 0
    found, uv_size, total = environments.listing()
    for env in reversed(found):
        what = (f"{env.package} {env.version}: {env.packages} packages" if env.package else
                f"{env.folder.name}: {env.problem}")
        console.print(terminal(f"  {what}, {env.size / 2**20:.0f} MB of its own, used "
                               f"{environments.age(env.used)}"), soft_wrap=True)
    console.print(terminal(f"{root}: {len(found)} environments, {total / 2**20:.0f} MB with uv's cache of "
                           f"wheels ({uv_size / 2**20:.0f} MB); bound {environments.limit_bytes() >> 20} MB "
                           f"(${environments.LIMIT_ENV})"), soft_wrap=True)
    return 0
