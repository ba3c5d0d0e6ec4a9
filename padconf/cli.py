"""``padconf``: a thin command line over the library.

Exit codes: 0 success, 1 a check found a difference, 2 a usage, spec-file or input error, 3
padconf's own fault, 130 Ctrl-C (``main`` says more).
"""
from __future__ import annotations

import _thread
import argparse
import errno
import os
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

# Here only what the options and their help need; each command imports the rest of what it runs
# inside its function, so that a command starts without importing what other commands use.
from padconf.cases.strategies import PROFILES
from padconf.core.errors import InternalFault, PadconfError, phase
from padconf.core.escape import plain, terminal
from padconf.core.progress import progress
from padconf.core.versions import versions_line
from padconf.execution.worker import DEFAULT_COMPILE_TIMEOUT_S, DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from padconf.judging.verdicts import FAILURES
from padconf.minimize.minimize import DEFAULT_TIME_LIMIT_S

console = Console()


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
    usable = sum(not i.unavailable for i in infos)
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


RUN_OPTIONS = ("runtime", "spec", "profile", "max_examples", "seed", "timeout", "compile_timeout", "memory_mb", "cases")


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
                  named_specs_dir=given.get("specs_dir"))
        recorded = vars(run.config)
        changed = [k for k, v in given.items() if recorded.get(k) != v]
        if changed:
            raise PadconfError(f"--resume continues {args.out} as its run.json records it ({changed[0]}="
                               f"{recorded.get(changed[0])!r}); drop that option, or start a new run")
        return run
    return Run(args.out, RunConfig(**given), force=args.force, jobs=args.jobs)


def cmd_run(args) -> int:
    from padconf.judging.verdicts import Verdict
    from padconf.run.results import read_jsonl

    run = _run_config(args)
    console.print(f"padconf run: reading cases from {terminal(' '.join(run.config.cases_dir))} into {terminal(run.dir)}"
                  if run.config.cases_dir else
                  f"padconf run: drawing cases (profile {run.config.profile}) into {terminal(run.dir)}", soft_wrap=True)
    with progress(console, "drawing cases"), phase("drawing the cases"):
        cases = run.prepare()
    with phase("asking the runtimes what they run"):
        plan = run.plan(cases)
    todo: Counter[str] = Counter()
    for name, _, batch in plan:
        todo[name] += len(batch)
    skipped = sum(r["verdict"] == Verdict.SKIPPED for r in read_jsonl(run.results_path))
    runtimes = f"{len(run.workers)} runtime{'s' * (len(run.workers) != 1)}"
    console.print(f"{len(cases)} cases over {len({c.spec for c in cases})} spec files; {sum(todo.values())} results "
                  f"to compute (each case in each placement of each of the {runtimes} that runs it)"
                  + (f", {skipped} skipped (cases an adapter cannot express: see the notes)" if skipped else ""),
                  soft_wrap=True)
    with progress(console, "running", todo) as advance:
        run.execute(plan, progress=advance)
    with phase("writing the summary"):
        return _summarise(run)


def _summarise(run) -> int:
    """The run's verdicts on the terminal and in summary.md."""
    from padconf.report import report
    from padconf.run.results import attach_controls, read_jsonl, read_results, write_atomically

    rows = attach_controls(read_results(run.results_path), run.dir)
    cases_rows = read_jsonl(run.cases_path)
    for part in report.terminal_output(rows, console.width):
        text = isinstance(part, str)  # runtimes' error texts: no markup, no wrapping
        console.print(part, soft_wrap=text, markup=not text, highlight=False)
    for note in run.notes:
        console.print(f"note: {plain(note)}", soft_wrap=True, markup=False, highlight=False)
    if any(r["verdict"] in FAILURES for r in rows):
        console.print(f"To shrink a failure to a bug report: padconf minimize {plain(run.dir)}:<case id> "
                      "--runtime <runtime>",
                      soft_wrap=True, markup=False, highlight=False)
    write_atomically(run.dir / "summary.md", report.markdown(rows, cases_rows, run.notes))
    console.print(f"{report.counts_line(rows)}\nIn {plain(run.results_path)}; "
                  f"summary in {plain(run.dir / 'summary.md')}",
                  soft_wrap=True, markup=False, highlight=False)
    return 0


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
    from padconf.gate.gate import GateConfig
    from padconf.gate.selection import parse_shard

    return GateConfig(runtime=args.runtime, specs=args.spec, seed=args.seed, explore=args.explore,
                      specs_dir=None if args.specs_dir is None else str(Path(args.specs_dir).resolve()),
                      shard=parse_shard(args.shard) if getattr(args, "shard", None) else None,
                      example_db=getattr(args, "example_db", None), timeout=args.timeout, memory_mb=args.memory_mb)


def _work_dir(args, use: str) -> Path:
    return Path(args.work or f".padconf/{use}/{args.runtime.replace(':', '_').replace('/', '_')}")


def cmd_gate(args) -> int:
    from padconf.gate.baseline import load_baseline
    from padconf.gate.gate import gate, judge_results
    from padconf.gate.junit import junit_xml, problem_lines

    entries = load_baseline(args.baseline)
    if args.results:
        judgement = judge_results(args.results, entries, args.runtime)
    else:
        with progress(console, f"gate {args.runtime}") as advance:
            judgement = gate(_gate_config(args), entries, _work_dir(args, "gate"), progress=advance)
    counts = ", ".join(f"{n} {v}" for v, n in judgement.counts.most_common())
    console.print(f"gate {terminal(args.runtime)}: {len(judgement.rows)} results ({counts}; a result is a case in one "
                  f"placement); {len(judgement.known)} failing results forgiven by {terminal(args.baseline)}",
                  soft_wrap=True)
    for line in problem_lines(judgement):
        console.print(plain(line), soft_wrap=True, markup=False, highlight=False, emoji=False)  # FILE:1234: is no emoji
    for line in judgement.flaky:
        console.print(f"flaky (not failing the gate): {plain(line)}", soft_wrap=True, markup=False, highlight=False,
                      emoji=False)
    if judgement.unjudged:
        console.print(f"{len(judgement.unjudged)} baseline entries not judged here in every cell (this is part of the "
                      "suite): judge them with `padconf gate --results DIR ...` over every shard", soft_wrap=True)
    if args.junit:
        Path(args.junit).write_text(junit_xml(judgement), encoding="utf-8")
    verdict = (f"FAILED: {len(judgement.new)} new failures, {len(judgement.fixed)} fixed baseline entries"
               if judgement.exit_code else "passed: nothing new")
    console.print(f"gate {terminal(args.runtime)}: {verdict}", soft_wrap=True)
    return judgement.exit_code


def cmd_baseline(args) -> int:
    from padconf.gate.baseline import baseline_entries, diff, dump_baseline, forgiving, parse_baseline
    from padconf.gate.gate import baseline_rows, prune
    from padconf.run.results import write_atomically

    err = Console(stderr=True)  # stdout may be the baseline itself
    if args.prune:
        with progress(err, f"prune {args.prune}") as advance:
            old, new = prune(_gate_config(args), Path(args.prune), _work_dir(args, "baseline"), progress=advance)
        if new != old:
            write_atomically(Path(args.prune), new)  # the reviewed baseline: never left half written
        sys.stdout.write(diff(old, new, args.prune))
        err.print(f"{terminal(args.prune)}: "
                  f"{'narrowed to the cells that still fail' if new != old else 'nothing fixed'}",
                  soft_wrap=True)
        return 0
    with progress(err, f"baseline {args.runtime}") as advance:
        rows, case_count, unstable = baseline_rows(_gate_config(args), _work_dir(args, "baseline"), progress=advance)
    entries = baseline_entries(rows, by_case=args.by_case, unstable=unstable)
    failing = [r for r in rows if r["verdict"] in FAILURES]
    results = len({(r["case_id"], r["placement"]) for r in failing})  # a rerun alone is no further result
    header = (f"padconf baseline: {versions_line()}\n{args.runtime} over {case_count} cases "
              f"(seed {args.seed}, explore {args.explore}): {results} failing results (a case in one placement; "
              f"suspicious ones rerun alone, which counts no result twice) in {len(entries)} entries; "
              f"{len(unstable)} results answered differently from run to run.\n"
              "Review each entry: say why in `why`, add `link` to the upstream report.")
    text = dump_baseline(entries, header)
    reread = parse_baseline(text, "the baseline just written")
    missed = [r for r in failing if forgiving(reread, r) is None]
    if missed:  # a signature that does not match its own failures would gate nothing
        raise PadconfError(f"internal: the baseline written does not forgive {missed[0]['case_id']}")
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    err.print(f"{len(entries)} entries covering {results} failing results (a case in one placement)"
              + ("" if args.out in (None, "-") else f" written to {args.out}"), soft_wrap=True)
    return 0


def cmd_generate(args) -> int:
    from padconf.generate.testdata_write import generate
    from padconf.spec.loader import load_specs

    start = time.monotonic()
    entries = generate(args.out, load_specs(args.specs_dir, args.spec), seed=args.seed, per_combo=args.per_combo)
    console.print(f"{len(entries)} cases written to {terminal(args.out)} in {time.monotonic() - start:.1f} s; "
                  f"coverage and how to run them: {terminal(args.out)}/README.md")
    return 0


def cmd_export_onnx_tests(args) -> int:
    from padconf.generate.testdata_write import export_onnx_node_tests

    written = export_onnx_node_tests(args.out)
    if not written:
        raise PadconfError("the installed onnx defines no one-node Pad test: nothing written")
    console.print(f"{len(written)} of onnx's own Pad node tests written to {args.out}; run them with "
                  f"`padconf run --cases {args.out}`", soft_wrap=True)
    return 0


def cmd_report(args) -> int:
    from padconf.report import report
    from padconf.report.report_html import render

    run = report.load_run(args.run_dir, args.specs_dir)
    html_path = Path(args.html)
    html_path.write_text(render(run), encoding="utf-8")
    if args.md:
        Path(args.md).write_text(report.short_markdown(run.rows, html_path.name, unfinished=run.unfinished),
                                 encoding="utf-8")
    console.print(terminal(f"report on {len(run.rows)} results of {run.dir}: {html_path}"
                           + (f", {args.md}" if args.md else "")
                           + (f" (part of a run only: {run.unfinished})" if run.unfinished else "")),
                  soft_wrap=True)
    return 0


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
    done = minimize(args.target, args.runtime, args.out, args.time_limit, progress, specs_dir=args.specs_dir)
    bundles = [s for s in done if s.get("dir")]
    console.print(f"{len(bundles)} bundles of {len(done)} failures in {terminal(args.out)} "
                  f"({time.monotonic() - started:.1f} s)", soft_wrap=True)
    return 0


class _PrintVersion(argparse.Action):
    """argparse's own version action wraps the line to the terminal's width: scripts read it."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(versions_line())
        parser.exit()


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= MAX_TIMEOUT_S:  # NaN too
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds > 0 and <= {MAX_TIMEOUT_S:g} is needed")
    return value


MAX_JOBS = 256  # lanes and drawing processes: each is a thread and a process or two
MAX_PER_COMBO = 1000  # generate's drawn cases per combination: the suite's size grows with it
SEED_RANGE = (-(1 << 63), (1 << 63) - 1)  # as RunConfig's, which checks a run's


def _count(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{text!r}: a whole number >= {minimum}"
                                             + (f" and <= {maximum}" if maximum is not None else "") + " is needed")
        return value
    parse.__name__ = "whole number"
    return parse


class _OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit 2 (argparse prints the whole usage first)."""

    def error(self, message):
        self.exit(2, f"padconf: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="padconf", description="Conformance tester for the Pad operator")
    parser.add_argument("--version", action=_PrintVersion, nargs=0, help="show the versions and exit")
    parser.add_argument("--specs-dir", default=None,
                        help="folder of spec YAML files (default: the spec files shipped with padconf)")
    parser.add_argument("--compile-cache", default=None, metavar="DIR",
                        help="the compile cache of iree and tvm (default: $PADCONF_COMPILE_CACHE, else "
                             "~/.cache/padconf/compile; none: no cache)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    sub.add_parser("specs", help="list the spec files").set_defaults(func=cmd_specs)
    sub.add_parser("runtimes", help="list the registered adapters: version, availability, placements, dtypes"
                   ).set_defaults(func=cmd_runtimes)
    check = sub.add_parser("check", help="run every worked example through the reference")
    check.add_argument("--spec", action="extend", nargs="+", help="only these spec ids (repeatable)")
    check.set_defaults(func=cmd_check)
    run = sub.add_parser("run", help="run runtimes on spec examples and generated cases")
    run.add_argument("--runtime", action="extend", nargs="+",
                     help="adapter names or module:Class "
                          "(repeatable; default: every registered runtime but the opt-in tract)")
    run.add_argument("--spec", action="extend", nargs="+", help="spec ids such as onnx/Pad-19 (default: all)")
    run.add_argument("--profile", choices=list(PROFILES), default=None, help="default: default")
    run.add_argument("--max-examples", type=_count(0), default=None,
                     help="generated cases per spec (default: the profile's)")
    run.add_argument("--seed", type=int, default=None, help="default: 0")
    run.add_argument("--out", default="padconf-results", help="run directory (default: padconf-results)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--force", action="store_true", help="replace a run already in --out")
    run.add_argument("--jobs", type=_count(1, MAX_JOBS), default=None,
                     help="runtimes run side by side (default: one per core); results are the same")
    run.add_argument("--timeout", type=_positive_seconds, default=None,
                     help=f"seconds a runtime may take on one case (default: {DEFAULT_TIMEOUT_S:g})")
    run.add_argument("--compile-timeout", type=_positive_seconds, default=None, metavar="S",
                     help="seconds an ahead-of-time compiler (iree, tvm) may take to build one model "
                          f"(default: {DEFAULT_COMPILE_TIMEOUT_S:g})")
    run.add_argument("--memory-mb", type=_count(64), default=None,
                     help=f"address-space cap of each worker (default: {DEFAULT_MEMORY_MB})")
    run.add_argument("--cases", default=None, metavar="DIR", nargs="+",
                     help="run the test directories at or below DIR ... (padconf generate's or onnx's "
                          "node-test layout) instead of drawing cases")
    run.set_defaults(func=cmd_run)
    for name, about in (("gate", "fail on what is new against a baseline (CI)"),
                        ("baseline", "write a runtime's failures today as a baseline")):
        p = sub.add_parser(name, help=about)
        p.add_argument("--runtime", required=True, help="adapter name or module:Class")
        p.add_argument("--spec", action="extend", nargs="+", help="only these spec ids (default: all)")
        p.add_argument("--seed", type=int, default=0, help="the seed of --explore's drawing (default: 0); the "
                       "suite is the same whatever it is")
        p.add_argument("--explore", type=_count(0), default=0, metavar="N",
                       help="also N freshly drawn cases per version (default: 0)")
        p.add_argument("--work", default=None, metavar="DIR",
                       help=f"the run directory (default: .padconf/{name}/RUNTIME)")
        p.add_argument("--timeout", type=_positive_seconds, default=None)
        p.add_argument("--memory-mb", type=_count(64), default=None)
        if name == "gate":
            p.add_argument("--baseline", required=True, help="the baseline YAML (padconf baseline writes one)")
            p.add_argument("--junit", default=None, metavar="FILE", help="write JUnit XML here")
            p.add_argument("--shard", default=None, metavar="I/N", help="run part I of N (disjoint, complete)")
            p.add_argument("--example-db", default=None, metavar="DIR|module:attr",
                           help="where --explore keeps failing cases (default: .padconf/examples; none: nowhere)")
            p.add_argument("--results", nargs="+", metavar="DIR", default=None,
                           help="judge these gate run directories (e.g. every shard's) instead of running")
            p.set_defaults(func=cmd_gate)
        else:
            p.add_argument("--out", default=None, help="the baseline file (default: stdout)")
            p.add_argument("--prune", default=None, metavar="FILE",
                           help="instead: remove from the baseline FILE the cells where its entries no longer fail, "
                                "and print the change as a diff")
            p.add_argument("--by-case", action="store_true",
                           help="one entry per failing case instead of one per failure signature")
            p.set_defaults(func=cmd_baseline)
    gen = sub.add_parser("generate", help="write the suite as ONNX backend test data (and OpenVINO IR)")
    gen.add_argument("--out", default="generated", help="output directory (default: generated)")
    gen.add_argument("--spec", action="append", help="spec id such as onnx/Pad-19 (repeatable; default: all)")
    gen.add_argument("--seed", type=_count(*SEED_RANGE), default=0)
    gen.add_argument("--per-combo", type=_count(0, MAX_PER_COMBO), default=1,
                     help="drawn cases kept per (version, mode, dtype, kind) besides one per edge class (default: 1)")
    gen.set_defaults(func=cmd_generate)
    export = sub.add_parser("export-onnx-tests", help="write onnx's own Pad node tests (the onnx wheel ships "
                            "none) for `padconf run --cases`")
    export.add_argument("--out", default="onnx-pad-tests", metavar="DIR", help="default: onnx-pad-tests")
    export.set_defaults(func=cmd_export_onnx_tests)
    cache = sub.add_parser("compile-cache",
                           help="where the compile cache of iree and tvm is, how large; --clear empties it")
    cache.add_argument("--clear", action="store_true", help="delete every entry")
    cache.set_defaults(func=cmd_compile_cache)
    rep = sub.add_parser("report", help="a run's report as one self-contained HTML page (and short markdown)")
    rep.add_argument("run_dir", metavar="RUN_DIR", help="a run directory written by padconf run --out")
    rep.add_argument("--html", required=True, metavar="FILE",
                     help="the HTML page: matrix, every distinct failure with its arrays, spec rules quoted")
    rep.add_argument("--md", default=None, metavar="FILE", help="also a short markdown summary for a PR comment")
    rep.set_defaults(func=cmd_report)
    mini = sub.add_parser("minimize", help="shrink failing cases and write reproducers ready to file upstream")
    mini.add_argument("target", metavar="TARGET",
                      help="a case file (a line of cases.jsonl), RUN_DIR:<case id>, RUN_DIR (every distinct failure), "
                           "or a model directory (model.onnx + test_data_set_0: each Pad node that fails alone)")
    mini.add_argument("--runtime", required=True, help="adapter name or module:Class")
    mini.add_argument("--out", default="padconf-minimized", metavar="DIR",
                      help="where the bundles go; must not exist or be empty (default: padconf-minimized)")
    mini.add_argument("--time-limit", type=_positive_seconds, default=DEFAULT_TIME_LIMIT_S, metavar="S",
                      help=f"seconds of shrinking per failure (default: {DEFAULT_TIME_LIMIT_S:g})")
    mini.set_defaults(func=cmd_minimize)
    return parser


class Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so workers are ended and results kept."""


def _terminate(signum, frame):
    raise Terminated(signum)


def _signal_again(unraisable) -> None:
    """sys.unraisablehook: Ctrl-C or SIGTERM raised inside a callback whose exceptions Python
    ignores (Hypothesis's gc callback, a __del__) is raised again in the main thread, where it
    unwinds as it should, instead of printing a traceback and being lost."""
    if isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
        _thread.interrupt_main(unraisable.exc_value.args[0] if isinstance(unraisable.exc_value, Terminated)
                               else signal.SIGINT)
        return
    sys.__unraisablehook__(unraisable)


# errno values of an OSError that are the user's environment or the files they named, not padconf's fault
_USERS_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.ELOOP, errno.EROFS,
                 errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENAMETOOLONG, errno.EEXIST, errno.ENOTEMPTY}
FAULT_FILE = "padconf-fault.txt"  # the traceback of padconf's own fault, in the run directory


def _fault(args, exc: BaseException) -> int:
    """One line for padconf's own fault: what it was doing, that what finished is kept, and where
    the traceback went (the run directory where there is one, else a temporary file); exit 3."""
    text = "".join(traceback.format_exception(exc))
    where = None
    out = Path(args.out) if args.command == "run" and args.out else None
    if out is not None and out.is_dir():
        try:
            fd = os.open(out / FAULT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            where = out / FAULT_FILE
        except OSError:  # a link planted there, or a folder gone read-only
            pass
    if where is None:
        fd, name = tempfile.mkstemp(prefix="padconf-fault-", suffix=".txt")
        where = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    doing = getattr(exc, "padconf_phase", f"padconf {args.command}")
    kept = "what finished is kept (--resume continues)" if args.command == "run" else "what finished is kept"
    print(f"padconf: internal fault while {plain(doing)} ({type(exc).__name__}: {plain(exc)}); {kept}; "
          f"traceback in {plain(where)}", file=sys.stderr)
    return 3


def main(argv=None) -> int:
    """Exit codes: 0 success; 1 a check found a difference; 2 the user's input (a usage error, a
    file they named, their disk full); 3 padconf's own fault (a traceback file says where);
    130 Ctrl-C, 128 + N the signal N (SIGTERM, SIGHUP). What finished is kept in every case."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help / --version
        return int(exc.code or 0)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    sys.unraisablehook = _signal_again
    if args.compile_cache is not None:  # the workers read it from their environment
        from padconf.adapters.compile_cache import ENV
        os.environ[ENV] = (args.compile_cache if args.compile_cache == "none"
                           else str(Path(args.compile_cache).resolve()))
    try:
        with phase(f"padconf {args.command}"):
            return args.func(args)
    except InternalFault as exc:
        return _fault(args, exc)
    except PadconfError as exc:
        print(f"padconf: {plain(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.filename is None and exc.errno not in _USERS_ERRNOS:  # a pipe or socket of padconf's own
            return _fault(args, exc)
        where = f"{exc.filename}: " if exc.filename else ""  # a file padconf was pointed at, a full disk
        print(f"padconf: {plain(where)}{plain(exc.strerror or exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("padconf: interrupted; what finished is kept (--resume continues)", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"padconf: {signal.Signals(exc.args[0]).name}; what finished is kept (--resume continues)",
              file=sys.stderr)
        return 128 + exc.args[0]
    except Exception as exc:  # a bug of padconf's: said in one line, its traceback kept
        return _fault(args, exc)
    finally:
        from padconf.execution.worker import close_all
        close_all()


if __name__ == "__main__":
    sys.exit(main())
