"""``padconf``'s options: one parser, each command's options checked where they are read, a usage
error in one line (exit 2)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

# Here only what the options and their help need; each command imports the rest of what it runs
# inside its function, so that a command starts without importing what other commands use.
# only what the options and their help need (padconf.cli.commands: each command imports the rest)
from padconf.adapters import OPT_IN, runtime_packages
from padconf.cases.profiles import PROFILES
from padconf.cli.commands import (
    cmd_baseline,
    cmd_bisect,
    cmd_check,
    cmd_compile_cache,
    cmd_envs,
    cmd_export_onnx_tests,
    cmd_gate,
    cmd_generate,
    cmd_minimize,
    cmd_report,
    cmd_run,
    cmd_runtimes,
    cmd_specs,
)
from padconf.core.errors import did_you_mean
from padconf.core.escape import terminal
from padconf.core.versions import versions_line
from padconf.execution.worker import (
    DEFAULT_COMPILE_TIMEOUT_S,
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
    MIN_TIMEOUT_S,
)
from padconf.minimize import DEFAULT_TIME_LIMIT_S
from padconf.run.compile_budget import ALL, DEFAULT_COMPILE_BUDGET
from padconf.run.config import MAX_COMPILE_BUDGET
from padconf.run.rundir import DEFAULT_RUN_DIR as RUN_OUT

EXIT_CODES = """exit codes:
  0    success
  1    a check found a difference (check, gate)
  2    a usage error, or input padconf refuses: a file or folder named, a spec, a baseline, a full disk
  3    padconf's own fault (one line says where its traceback is)
  130  Ctrl-C; 128+N the signal N (SIGTERM 143, SIGHUP 129); the line printed says what continues the work"""


class _PrintVersion(argparse.Action):
    """argparse's own version action wraps the line to the terminal's width: scripts read it."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(versions_line(runtime_packages()))
        parser.exit()


def _ascii(text: str) -> str:
    """A number as the command line spells one: ASCII, no spaces, no underscores (int() and float()
    also take Arabic-Indic digits, "1_000" and " 7 ", which --shard already refuses)."""
    if not text.isascii() or "_" in text or text != text.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: a number in ASCII digits is needed")
    return text


def _positive_seconds(text: str) -> float:
    value = float(_ascii(text))
    if not MIN_TIMEOUT_S <= value <= MAX_TIMEOUT_S:  # NaN too
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds >= {MIN_TIMEOUT_S:g} and "
                                         f"<= {MAX_TIMEOUT_S:g} is needed")
    return value


MAX_JOBS = 256  # lanes and drawing processes: each is a thread and a process or two
MAX_PER_COMBO = 1000  # generate's drawn cases per combination: the suite's size grows with it
SEED_RANGE = (-(1 << 63), (1 << 63) - 1)  # as RunConfig's, which checks a run's


def _count(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        value = int(_ascii(text))
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{text!r}: a whole number >= {minimum}"
                                             + (f" and <= {maximum}" if maximum is not None else "") + " is needed")
        return value
    parse.__name__ = "whole number"
    return parse


def _compile_budget(text: str) -> int | str:
    if text == ALL:
        return text
    if not _ascii(text).isdigit() or int(text) > MAX_COMPILE_BUDGET:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number >= 0 and <= {MAX_COMPILE_BUDGET}, or {ALL}, "
                                         "is needed")
    return int(text)


_compile_budget.__name__ = "compile budget"


def _is_number(text: str) -> bool:  # a negative value (--seed -1) is no option
    try:
        float(text)
    except ValueError:
        return False
    return True


class _OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit 2 (argparse prints the whole usage first), with
    the closest option or choice to a mistyped one; no abbreviation is taken for an option (a
    typo is refused, not read as the option it starts)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("epilog", EXIT_CODES)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self.commands: Mapping[str, argparse.ArgumentParser] = {}  # the subcommands' parsers, by name

    def error(self, message):  # argparse's messages quote argv, which may come from anywhere (a CI variable)
        if message.startswith("the following arguments are required"):  # a mistyped --runtime is why it is missing
            message = self._unknown_flag() or message
        self.exit(2, f"padconf: {terminal(message)}\n")

    def _check_value(self, action, value):  # argparse's check of a choice, with a suggestion
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{did_you_mean(value, action.choices)} "
                                                 f"(choose from {choices})")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        self.given = list(sys.argv[1:] if args is None else args)  # for error(): a typo before a missing option
        return super().parse_known_args(args, namespace)

    def _unknown_flag(self) -> str | None:
        """The first option given that this parser does not know, with the closest it does."""
        for arg in getattr(self, "given", ()):
            flag = arg.split("=", 1)[0]
            if arg.startswith("-") and flag not in self._option_string_actions and not _is_number(arg):
                return f"unrecognized arguments: {flag}{did_you_mean(flag, self._option_string_actions)}"
        return None

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self.commands.get(getattr(namespace, "command", None) or "")
            known = [*self._option_string_actions, *(command._option_string_actions if command else ())]
            flags = [e.split("=", 1)[0] for e in extras if e.startswith("-")]
            hint = next((h for h in (did_you_mean(f, known) for f in flags) if h), "")
            self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return namespace


def _release_range(p) -> None:
    p.add_argument("--from", dest="release_from", default=None, metavar="V", help="the oldest release (default: the "
                   "first the package index has for this Python)")
    p.add_argument("--to", dest="release_to", default=None, metavar="V", help="the newest release (default: the last)")
    p.add_argument("--last", type=_count(2), default=argparse.SUPPRESS, metavar="N",
                   help="only the last N releases of that range")


def _filters(p) -> None:
    """--mode, --dtype, -k: the cases taken (padconf.cases.selection.CaseFilter), as the plugin's
    --padconf-mode, --padconf-dtype, --padconf-k take them."""
    p.add_argument("--mode", dest="modes", action="extend", nargs="+", metavar="MODE", default=None,
                   help="only cases of these Pad modes (constant, reflect, edge, wrap)")
    p.add_argument("--dtype", dest="dtypes", action="extend", nargs="+", metavar="DTYPE", default=None,
                   help="only cases of these dtypes (float, int8 ...)")
    p.add_argument("-k", dest="pattern", default=None, metavar="PATTERN",
                   help="only cases whose id or title (origin, edge classes, graph) PATTERN matches: names, "
                        "case-insensitive parts of them, joined by and, or, not and parentheses, as pytest's -k")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="padconf", description="Conformance tester for the Pad operator")
    parser.add_argument("--version", action=_PrintVersion, nargs=0, help="show the versions and exit")
    parser.add_argument("--specs-dir", default=None,
                        help="folder of spec YAML files (default: the spec files shipped with padconf)")
    parser.add_argument("--compile-cache", default=None, metavar="DIR",
                        help="the compile cache of iree and tvm (default: $PADCONF_COMPILE_CACHE, else "
                             "~/.cache/padconf/compile; none: no cache)")
    parser.add_argument("--env-constraints", default=None, metavar="FILE",
                        help="pins for the environments of runtimes at other releases (name@version), instead of "
                             "their dependencies as of each release's date (default: $PADCONF_ENV_CONSTRAINTS)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    parser.commands = sub.choices
    sub.add_parser("specs", help="list the spec files").set_defaults(func=cmd_specs)
    sub.add_parser("runtimes", help="list the registered adapters: version, availability, placements, dtypes"
                   ).set_defaults(func=cmd_runtimes)
    check = sub.add_parser("check", help="run every worked example through the reference")
    check.add_argument("--spec", action="extend", nargs="+", help="only these spec ids (repeatable)")
    check.set_defaults(func=cmd_check)
    run = sub.add_parser("run", help="run runtimes on spec examples and generated cases")
    run.add_argument("--runtime", action="extend", nargs="+",
                     help="adapter names or module:Class (repeatable; default: every registered runtime but the "
                          f"{len(OPT_IN)} opt-in ones, whose reasons `padconf runtimes` gives: {', '.join(OPT_IN)})")
    run.add_argument("--spec", action="extend", nargs="+", help="spec ids such as onnx/Pad-19 (default: all)")
    run.add_argument("--profile", choices=list(PROFILES), default=None, help="default: default")
    run.add_argument("--max-examples", type=_count(0), default=None,
                     help="generated cases per spec (default: the profile's)")
    run.add_argument("--seed", type=_count(*SEED_RANGE), default=None, help="default: 0")
    run.add_argument("--out", default=RUN_OUT, help=f"run directory (default: {RUN_OUT})")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--force", action="store_true", help="replace a run already in --out")
    run.add_argument("--jobs", type=_count(1, MAX_JOBS), default=None,
                     help="runtimes run side by side (default: one per core); results are the same")
    run.add_argument("--timeout", type=_positive_seconds, default=None,
                     help=f"seconds a runtime may take on one case (default: {DEFAULT_TIMEOUT_S:g})")
    run.add_argument("--compile-timeout", type=_positive_seconds, default=None, metavar="S",
                     help="seconds an ahead-of-time compiler (iree, tvm) may take to build one model "
                          f"(default: {DEFAULT_COMPILE_TIMEOUT_S:g})")
    run.add_argument("--compile-budget", type=_compile_budget, default=None, metavar="N|all",
                     help="models each ahead-of-time compiler (iree, tvm) builds in the run, every known "
                          "bug's trigger and each spec version, mode, dtype, edge class and placement first; "
                          "the results of the others are counted as not compiled "
                          f"(default: {DEFAULT_COMPILE_BUDGET}; all: every model)")
    run.add_argument("--memory-mb", type=_count(64), default=None,
                     help=f"address-space cap of each worker (default: {DEFAULT_MEMORY_MB})")
    run.add_argument("--cases", default=None, metavar="DIR", nargs="+",
                     help="run the test directories at or below DIR ... (padconf generate's or onnx's "
                          "node-test layout) instead of drawing cases")
    _filters(run)
    run.set_defaults(func=cmd_run)
    for name, about in (("gate", "fail on what is new against a baseline (CI)"),
                        ("baseline", "write a runtime's failures today as a baseline")):
        p = sub.add_parser(name, help=about)
        p.add_argument("--runtime", required=True, help="adapter name or module:Class")
        p.add_argument("--spec", action="extend", nargs="+", help="only these spec ids (default: all)")
        p.add_argument("--seed", type=_count(*SEED_RANGE), default=0,
                       help="the seed of --explore's drawing (default: 0); the suite is the same whatever it is")
        p.add_argument("--explore", type=_count(0), default=0, metavar="N",
                       help="also N freshly drawn cases per version (default: 0)")
        p.add_argument("--work", default=None, metavar="DIR",
                       help=f"the run directory (default: .padconf/{name}/RUNTIME)")
        p.add_argument("--timeout", type=_positive_seconds, default=None)
        p.add_argument("--memory-mb", type=_count(64), default=None)
        if name == "gate":
            _filters(p)
            p.add_argument("--baseline", required=True, help="the baseline YAML (padconf baseline writes one)")
            p.add_argument("--junit", default=None, metavar="FILE", help="write JUnit XML here")
            p.add_argument("--shard", default=None, metavar="I/N", help="run part I of N (disjoint, complete)")
            p.add_argument("--run-id", default=None, metavar="ID",
                           help="the gate run every shard shares, which --results holds them to (default: the "
                                "CI's run id, e.g. GITHUB_RUN_ID); --shard needs one")
            p.add_argument("--example-db", default=None, metavar="DIR|FILE.py:attr|module:attr",
                           help="where --explore keeps failing cases: a folder, or a Hypothesis ExampleDatabase "
                                "named in a Python file or an installed module (default: .padconf/examples; none: "
                                "nowhere)")
            p.add_argument("--results", nargs="+", metavar="DIR", default=None,
                           help="judge these gate run directories (e.g. every shard's) instead of running")
            p.add_argument("--fixed-from", default=None, metavar="V",
                           help="with --runtime NAME@NEW: the release the baseline was made with, from which each "
                                "fixed entry's release is bisected (default: the one installed here)")
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
    gen.add_argument("--force", action="store_true",
                     help="replace --out whole though padconf cannot prove it wrote what it holds")
    gen.add_argument("--exporter", action="append", metavar="RUNTIME", default=None,
                     help="also the framework document's cases (torch/Pad-2) exported by RUNTIME (torch-export, "
                          "'torch-export[dynamo=false]'), as graphs under exported/ (repeatable)")
    gen.set_defaults(func=cmd_generate)
    export = sub.add_parser("export-onnx-tests", help="write onnx's own Pad node tests (the onnx wheel ships "
                            "none) for `padconf run --cases`")
    export.add_argument("--out", default="onnx-pad-tests", metavar="DIR", help="default: onnx-pad-tests")
    export.add_argument("--force", action="store_true",
                        help="replace what --out holds though padconf cannot prove it wrote it")
    export.set_defaults(func=cmd_export_onnx_tests)
    cache = sub.add_parser("compile-cache",
                           help="where the compile cache of iree and tvm is, how large; --clear empties it")
    cache.add_argument("--clear", action="store_true", help="delete every entry")
    cache.set_defaults(func=cmd_compile_cache)
    rep = sub.add_parser("report", help="a run's report as one self-contained HTML page (and short markdown), "
                                        "or its failures to file (--bugs)")
    rep.add_argument("run_dir", metavar="RUN_DIR", nargs="?", default=RUN_OUT,
                     help=f"a run directory written by padconf run --out (default: {RUN_OUT}, run's own)")
    rep.add_argument("--html", default=None, metavar="FILE",
                     help="the HTML page: matrix, every distinct failure with its arrays, spec rules quoted")
    rep.add_argument("--bugs", action="store_true",
                     help="print only the failures not yet triaged (those padconf minimize may file), each with "
                          "its case id and the command that minimizes it")
    rep.add_argument("--md", default=None, metavar="FILE", help="also a short markdown summary for a PR comment")
    rep.set_defaults(func=cmd_report)
    mini = sub.add_parser("minimize", help="shrink failing cases and write reproducers ready to file upstream")
    mini.add_argument("target", metavar="TARGET",
                      help="a case file (a line of cases.jsonl), RUN_DIR:<case id>, RUN_DIR (every distinct failure), "
                           "or a model directory (model.onnx + test_data_set_0: each Pad node that fails alone)")
    mini.add_argument("--runtime", nargs="+", default=None,
                      help="adapter names or module:Class (default, for a run directory: every registered runtime "
                           "of the run; a module:Class only when named here); with more than one, or none, the "
                           "bundles are merged by mechanism across the paths of one engine")
    mini.add_argument("--out", default="padconf-minimized", metavar="DIR",
                      help="where the bundles go; must not exist or be empty (default: padconf-minimized)")
    mini.add_argument("--time-limit", type=_positive_seconds, default=DEFAULT_TIME_LIMIT_S, metavar="S",
                      help=f"seconds of shrinking per failure (default: {DEFAULT_TIME_LIMIT_S:g})")
    mini.add_argument("--memory-mb", type=_count(64), default=None,
                      help=f"address-space cap of each worker, as run's (default: {DEFAULT_MEMORY_MB})")
    mini.add_argument("--jobs", type=_count(1, MAX_JOBS), default=None,
                      help="for several runtimes: runtimes minimized side by side (default: one per core); "
                           "the bundles are the same")
    _release_range(mini)
    mini.add_argument("--bisect", action="store_true",
                      help="add each bundle's first-seen, last-seen and fixed-in releases of the runtime "
                           "(default over its last 12 releases)")
    mini.set_defaults(func=cmd_minimize, last=12)
    bis = sub.add_parser("bisect", help="the releases of a runtime where a case's verdict changed")
    bis.add_argument("target", metavar="CASE_OR_BUNDLE",
                     help="a case file, RUN_DIR:<case id>, or a bundle folder padconf minimize wrote")
    bis.add_argument("--runtime", required=True, help="a registered runtime, without a release")
    bis.add_argument("--placement", choices=["inputs", "initializers", "folded"], default=None,
                     help="default: the bundle's or the run's failing placement, else inputs")
    _release_range(bis)
    bis.add_argument("--json", default=None, metavar="FILE", help="also write what was found as JSON")
    bis.set_defaults(func=cmd_bisect, last=None)
    envs = sub.add_parser("envs", help="the environments of runtimes at other releases: where, how large; "
                                       "--clear empties it")
    envs.add_argument("--clear", action="store_true", help="delete every environment and uv's cache beside them")
    envs.set_defaults(func=cmd_envs)
    return parser
