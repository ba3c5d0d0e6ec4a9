"""Run one command so that nothing it starts can outlive padconf.

``python -m padconf.execution.reaper [--remove DIR] COMMAND...`` forks COMMAND and stays beside it, idle, as
the root of its process tree (Linux):

- it is a child subreaper, so a descendant that double-forks or calls ``setsid`` to escape its
  process group is re-parented to the reaper, not to init, and stays findable;
- it dies with its parent (``PR_SET_PDEATHSIG``): SIGTERM when padconf exits in any way,
  kill -9 included; COMMAND dies with the reaper (SIGKILL);
- on SIGTERM, SIGINT or SIGHUP, or when COMMAND ends, it SIGKILLs every descendant, then ends
  the way COMMAND ended (same exit code, or the same signal), so the caller sees a worker's
  SIGSEGV as its own; and it removes DIR, COMMAND's scratch folder.

It imports nothing but the standard library and does nothing but wait, so it answers SIGTERM at
once even while COMMAND is stuck in native code (which a handler inside COMMAND could not).
"""
from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # gone meanwhile
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])  # the name may hold spaces and ")"
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def kill_tree(root: int) -> None:
    """SIGKILL every descendant of ``root`` and reap them; repeated while a dying process's
    children are still being re-parented."""
    for _ in range(100):
        pids = descendants(root)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def _end(status: int) -> None:
    """End the way the command's wait status says it ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main(argv: list[str]) -> None:
    removed = None
    if argv[:1] == ["--remove"]:  # a folder of COMMAND's that goes when it does, padconf killed or not
        removed, argv = argv[1], argv[2:]
    parent = os.getppid()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing runtime is evidence, not a core file
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    me = os.getpid()

    def end_tree() -> None:
        kill_tree(me)
        if removed:
            shutil.rmtree(removed, ignore_errors=True)

    def stop(signum, frame):
        end_tree()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    if os.getppid() != parent:  # the parent died before PDEATHSIG was armed
        os._exit(1)
    child = os.fork()
    if child == 0:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    # the command's descriptors are its own: held here too, a socket to a command that died would
    # stay open for as long as the reaper lives, and its peer would wait on it rather than see EOF
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    while True:
        pid, status = os.waitpid(-1, 0)  # re-parented orphans are reaped here too
        if pid == child:
            end_tree()
            _end(status)


if __name__ == "__main__":
    main(sys.argv[1:])
