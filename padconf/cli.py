"""``padconf``: a thin command line over the library.

Exit codes: 0 success, 1 a check found a difference, 2 a usage, spec-file or input error.
"""
from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from .errors import PadconfError
from .worker import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S

console = Console()


def cmd_specs(args) -> int:
    from .specs import load_specs

    table = Table(title="Pad spec versions")
    for col in ("id", "modes", "dtypes", "examples", "ambiguities"):
        table.add_column(col, no_wrap=col == "id")
    for spec in load_specs(args.specs_dir):
        table.add_row(spec.id, " ".join(spec.modes), str(len(spec.dtypes)), str(len(spec.examples)),
                      " ".join(spec.ambiguities))
    console.print(table)
    return 0


def cmd_check(args) -> int:
    from .examples import check_all
    from .specs import load_specs

    results = check_all(load_specs(args.specs_dir, args.spec))
    table = Table(title="Worked examples through the reference")
    for col in ("spec", "example", "result", "detail"):
        table.add_column(col)
    for r in results:
        table.add_row(r.spec, r.name, "[green]match[/]" if r.ok else "[red]DIFFERS[/]", r.detail)
    console.print(table)
    bad = sum(not r.ok for r in results)
    console.print(f"{len(results) - bad} matched, {bad} differ, over {len({r.spec for r in results})} spec files")
    return 1 if bad else 0


def cmd_run(args) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from . import report
    from .runner import Run, RunConfig, read_jsonl

    if args.resume:
        run = Run(args.out, resume=True)
    else:
        config = RunConfig(specs=args.spec, profile=args.profile, max_examples=args.max_examples,
                           seed=args.seed, timeout=args.timeout, memory_mb=args.memory_mb,
                           cases_dir=args.cases)
        if args.runtime:
            config.runtimes = args.runtime
        run = Run(args.out, config)
    console.print(f"padconf run: reading cases from {' '.join([run.config.cases_dir] if isinstance(run.config.cases_dir, str) else run.config.cases_dir)} into {run.dir}" if run.config.cases_dir
                  else f"padconf run: drawing cases (profile {run.config.profile}) into {run.dir}")
    cases = run.prepare()
    plan = run.plan(cases)
    total = sum(len(batch) for _, _, batch in plan)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task("running", total=total)
        run.execute(plan, progress=lambda name: bar.update(task, advance=1, description=name))
    rows = read_jsonl(run.results_path)
    cases_rows = read_jsonl(run.cases_path)
    for table in report.terminal_tables(rows):
        console.print(table)
    for note in run.notes:
        console.print(f"note: {note}")
    (run.dir / "summary.md").write_text(report.markdown(rows, cases_rows, run.notes), encoding="utf-8")
    console.print(f"{len(rows)} results in {run.results_path}; summary in {run.dir / 'summary.md'}")
    return 0


def cmd_generate(args) -> int:
    import time

    from .onnx_testdata import generate
    from .specs import load_specs

    start = time.monotonic()
    entries = generate(args.out, load_specs(args.specs_dir, args.spec), seed=args.seed, per_combo=args.per_combo)
    console.print(f"{len(entries)} cases written to {args.out} in {time.monotonic() - start:.1f} s; "
                  f"coverage and how to run them: {args.out}/README.md")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="padconf", description="Conformance tester for the Pad operator")
    parser.add_argument("--specs-dir", default=None, help="folder of spec YAML files (default: the repo's specs/)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("specs", help="list the spec files").set_defaults(func=cmd_specs)
    check = sub.add_parser("check", help="run every worked example through the reference")
    check.add_argument("--spec", action="append", help="only this spec id (repeatable)")
    check.set_defaults(func=cmd_check)
    run = sub.add_parser("run", help="run runtimes on spec examples and generated cases")
    run.add_argument("--runtime", action="append", help="adapter name (repeatable; default: all installed)")
    run.add_argument("--spec", action="append", help="spec id such as onnx/Pad-19 (repeatable; default: all)")
    run.add_argument("--profile", choices=["ci", "default", "thorough"], default="default")
    run.add_argument("--max-examples", type=int, default=None, help="generated cases per spec (default: the profile's)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--out", default="padconf-results", help="run directory (default: padconf-results)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds a runtime may take on one case")
    run.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, help="address-space cap of each worker")
    run.add_argument("--cases", default=None, metavar="DIR", nargs="+",
                     help="run the test directories at or below DIR ... (padconf generate's or onnx's node-test layout) instead of drawing cases")
    run.set_defaults(func=cmd_run)
    gen = sub.add_parser("generate", help="write the suite as ONNX backend test data (and OpenVINO IR)")
    gen.add_argument("--out", default="generated", help="output directory (default: generated)")
    gen.add_argument("--spec", action="append", help="spec id such as onnx/Pad-19 (repeatable; default: all)")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--per-combo", type=int, default=1,
                     help="drawn cases kept per (version, mode, dtype, kind) besides one per edge class (default: 1)")
    gen.set_defaults(func=cmd_generate)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help
        return int(exc.code or 0)
    try:
        return args.func(args)
    except PadconfError as exc:
        print(f"padconf: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("padconf: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
