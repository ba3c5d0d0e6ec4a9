"""The ``padconf`` command's entry point, importing nothing at its own start: Ctrl-C while the
command's modules are still importing (half a second on a busy machine) is one line and exit 130,
as it is once the command runs, never a traceback (attack round III)."""
import sys


def main() -> int:
    try:
        from padconf.cli import main as command
    except KeyboardInterrupt:
        print("padconf: interrupted while starting; nothing was done", file=sys.stderr)
        return 130
    return command()
