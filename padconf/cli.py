"""``padconf``: a thin command line over the library.

Exit codes: 0 success, 1 a check found a difference, 2 a usage, spec-file or input error.
"""
from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from .errors import PadconfError

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="padconf", description="Conformance tester for the Pad operator")
    parser.add_argument("--specs-dir", default=None, help="folder of spec YAML files (default: the repo's specs/)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("specs", help="list the spec files").set_defaults(func=cmd_specs)
    check = sub.add_parser("check", help="run every worked example through the reference")
    check.add_argument("--spec", action="append", help="only this spec id (repeatable)")
    check.set_defaults(func=cmd_check)
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
