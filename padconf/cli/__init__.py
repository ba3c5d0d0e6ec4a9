"""``padconf``: a thin command line over the library (its options in padconf.cli.parser, each
command in padconf.cli.commands).

Exit codes: padconf.cli.parser.EXIT_CODES, which ``--help`` prints. A stdout or stderr that
fails (closed, ``padconf run ... | head -1``; full, ``>/dev/full``) changes none of them: what
padconf would print there is dropped, and the command runs to its end (``ClosableStream``).
"""
from __future__ import annotations

import _thread
import errno
import os
import shlex
import signal
import sys
import tempfile
import traceback
from pathlib import Path

from padconf.cli.parser import build_parser
from padconf.core import inputs
from padconf.core.errors import InternalFault, PadconfError, phase
from padconf.core.escape import plain
from padconf.core.streams import ClosableStream, open_missing_streams
from padconf.core.writing import open_folder


class Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so workers are ended and results kept."""


def _terminate(signum, frame):
    raise Terminated(signum)


_LOST: list[int] = []  # signals whose raise a callback swallowed: the command ends with the last (_main)


def _signal_again(unraisable) -> None:
    """sys.unraisablehook: Ctrl-C or SIGTERM raised inside a callback whose exceptions Python
    ignores (Hypothesis's gc callback, a __del__) is raised again in the main thread, where it
    unwinds as it should, instead of printing a traceback and being lost. In the main thread
    its handler may run before this hook returns, where its raise is lost again: the signal is
    then kept, and the command, once its work ends, ends as that signal says."""
    exc = unraisable.exc_value
    if isinstance(exc, (KeyboardInterrupt, Terminated)):
        signum = exc.args[0] if isinstance(exc, Terminated) and exc.args else signal.SIGINT
        _LOST.append(signum)
        try:
            _thread.interrupt_main(signum)
        except (KeyboardInterrupt, Terminated):
            pass  # raised here, in the hook: kept in _LOST
        return
    sys.__unraisablehook__(unraisable)


def _raise_lost() -> None:
    """A signal a callback swallowed, raised where the command's own handlers say it."""
    if _LOST:
        signum = _LOST[-1]
        _LOST.clear()
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)


# errno values of an OSError that are the user's environment or the files they named, not padconf's fault
_USERS_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.ELOOP, errno.EROFS,
                 errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENAMETOOLONG, errno.EEXIST, errno.ENOTEMPTY}
FAULT_FILE = "padconf-fault.txt"  # the traceback of padconf's own fault, in the run directory


def continues(args) -> str:
    """What is kept of an interrupted command, and the command that continues its work: each
    command's own (a gate or a baseline starts over; only a run resumes, once it has written its
    run.json: one stopped while drawing its cases wrote nothing), written out as given."""
    again = "padconf " + shlex.join(getattr(args, "argv", None) or [args.command])
    if args.command == "run":
        from padconf.run.rundir import RUN_JSON  # loaded by the run by now
        if not args.resume and not (Path(args.out) / RUN_JSON).exists():  # stopped while it drew its cases
            return f"nothing was written yet: `{again}` starts it again"
        return f"what finished is kept (`padconf run --resume --out {shlex.quote(args.out)}` continues)"
    if args.command in ("gate", "baseline"):
        return f"a {args.command} starts over: `{again}` runs it again"
    if args.command == "minimize":  # into an empty folder only: the same command, another --out
        return (f"the bundles finished are kept in {shlex.quote(args.out)}; minimize starts over, into a new or "
                f"empty folder: `{_with_out(args)}` runs it again")
    if args.command == "generate":
        return f"{shlex.quote(args.out)} is as it was (generate replaces it whole): `{again}` runs it again"
    return f"nothing of it is kept: `{again}` runs it again"


def _with_out(args) -> str:
    """The command as given, with its --out folder made a new one beside it."""
    argv = list(getattr(args, "argv", None) or [args.command, "--out", args.out])
    new = f"{args.out.rstrip('/')}-2"
    for i, word in enumerate(argv):
        if word == "--out" and i + 1 < len(argv):
            argv[i + 1] = new
        elif word.startswith("--out="):
            argv[i] = f"--out={new}"
    return "padconf " + shlex.join(argv)


def _fault(args, exc: BaseException) -> int:
    """One line for padconf's own fault: what it was doing, that what finished is kept, and where
    the traceback went (the run directory where there is one, else a temporary file); exit 3."""
    text = "".join(traceback.format_exception(exc))
    where = None
    out = Path(args.out) if args.command == "run" and args.out else None
    if out is not None and out.is_dir():
        try:  # the folder as the one writer checks it: no link on the way
            folder = open_folder(out)
            try:
                fd = os.open(FAULT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=folder)
            finally:
                os.close(folder)
            where = out / FAULT_FILE
        except (OSError, PadconfError):  # a link planted there, or a folder gone read-only
            pass
    if where is None:
        fd, name = tempfile.mkstemp(prefix="padconf-fault-", suffix=".txt")
        where = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    doing = getattr(exc, "padconf_phase", f"padconf {args.command}")
    print(f"padconf: internal fault while {plain(doing)} ({type(exc).__name__}: {plain(exc)}); "
          f"{plain(continues(args))}; "
          f"traceback in {plain(where)}", file=sys.stderr)
    return 3


def _out_of_memory(args, exc: MemoryError) -> int:
    """padconf itself out of memory: what a command holds grows with its input (a model, a test
    folder, a run directory), so it is the input that is too large for the memory padconf may
    use here (``ulimit -v``): one line, exit 2, as any input past a bound; what finished is kept.
    Workers' own exhaustion never reaches here: it is their case's crash."""
    del exc  # its traceback holds the frames, and what they allocated
    import resource
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = "no address-space limit" if hard == resource.RLIM_INFINITY else f"ulimit -v {hard // 1024} KB"
    print(f"padconf: out of memory in padconf {args.command} ({limit}): its input is too large for the memory "
          f"it may use here; give it more memory, or a smaller input; {plain(continues(args))}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    """Runs one command; its exit code as padconf.cli.parser.EXIT_CODES says. What finished is
    kept in every case, and an interrupt's line names the command that continues (``continues``).
    stdout and stderr are ``ClosableStream`` from the first byte (``--version``, ``--help`` and a
    usage error print before any command runs) to the last."""
    streams = sys.stdout, sys.stderr
    stdout_open = "stdout" not in open_missing_streams()
    sys.stdout, sys.stderr = ClosableStream(sys.stdout), ClosableStream(sys.stderr)
    try:
        return _product_kept(_main(argv), stdout_open)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = streams


# commands whose whole output is their listing on stdout (baseline and report --bugs say so themselves)
_STDOUT_IS_OUTPUT = frozenset({"specs", "runtimes", "check", "compile-cache", "envs"})


def stdout_carries(what: str, elsewhere: str) -> None:
    """The command's output is stdout (``baseline`` without ``--out``, ``report --bugs``): if
    writing it fails (a reader gone, a full device), the output is lost, which is said in one
    line, naming ``elsewhere`` to write it, and is exit 2, never 0."""
    if isinstance(sys.stdout, ClosableStream):
        sys.stdout.product = (what, elsewhere)


def _product_kept(code: int, stdout_open: bool = True) -> int:
    out = sys.stdout
    if not isinstance(out, ClosableStream) or out.product is None:
        return code
    out.flush()
    if (stdout_open and not out.closed_by_reader) or code not in (0, 1):  # an error said its own line
        return code
    what, elsewhere = out.product
    why = out.why if stdout_open else "not open"
    print(f"padconf: stdout failed ({why}): {what} did not reach it whole; {elsewhere}", file=sys.stderr)
    return code or 2  # a difference found stays 1 (gate, check), said, not silent (attack round VI)


def _main(argv) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help / --version
        if not exc.code:  # what --help or --version printed is the whole output: lost, it is exit 2
            asked = plain(" ".join(sys.argv[1:] if argv is None else argv))
            stdout_carries(f"the output of padconf {asked}", f"write it to a file: padconf {asked} > FILE")
        return int(exc.code or 0)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # an interrupt's line names the command again
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    sys.unraisablehook = _signal_again
    _LOST.clear()
    if args.command in _STDOUT_IS_OUTPUT:  # --clear's too: what it deleted is said there only
        asked = plain(" ".join(args.argv))
        stdout_carries(f"the output of padconf {asked}", f"write it to a file: padconf {asked} > FILE")
    if args.compile_cache is not None:  # the workers read it from their environment
        from padconf.adapters.compile_cache import ENV
        if args.compile_cache != "none" and Path(args.compile_cache).exists() and not Path(args.compile_cache).is_dir():
            print(f"padconf: --compile-cache {plain(args.compile_cache)}: not a folder", file=sys.stderr)
            return 2
        os.environ[ENV] = (args.compile_cache if args.compile_cache == "none"
                           else str(Path(args.compile_cache).resolve()))
    if args.env_constraints is not None:
        from padconf.execution.environments import CONSTRAINTS_ENV
        os.environ[CONSTRAINTS_ENV] = str(Path(args.env_constraints).resolve())
    try:
        with phase(f"padconf {args.command}"), inputs.command():  # the writer never replaces what it read
            code = args.func(args)
        _raise_lost()  # a signal that arrived as a callback ran (its raise lost) ends the command as any
        return code
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
    except MemoryError as exc:
        return _out_of_memory(args, exc)
    except KeyboardInterrupt:
        _LOST.clear()  # said once
        print(f"padconf: interrupted; {plain(continues(args))}", file=sys.stderr)
        return 130
    except Terminated as exc:
        _LOST.clear()
        print(f"padconf: {signal.Signals(exc.args[0]).name}; {plain(continues(args))}", file=sys.stderr)
        return 128 + exc.args[0]
    except Exception as exc:  # a bug of padconf's: said in one line, its traceback kept
        return _fault(args, exc)
    finally:
        from padconf.execution.worker import close_all
        close_all()
