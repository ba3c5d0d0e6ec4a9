"""Work shared out to child processes padconf starts itself, each isolated (``python -I``,
``worker_process.isolated``): no module of the working directory, PYTHONPATH's or the user
site's is imported in them, as multiprocessing's spawn and forkserver children would (they start
as ``python -c``, the working directory first on their import path, and take the parent's
``sys.path`` as their own). Requests and answers are one JSON line each, never a pickle.

A child module reads one JSON request a line on stdin and answers each with one JSON line
(``serve``)."""
from __future__ import annotations

import concurrent.futures
import contextlib
import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence

from padconf.core.errors import InternalFault
from padconf.execution.worker_process import exit_text, last_words, wait_status

MAX_CHILD_DEATHS = 3  # children killed in turn (each one's requests answered again) before padconf gives up


def map_in_children(command: Callable[[], list[str]], requests: Sequence, jobs: int, what: str) -> list:
    """The answers to ``requests``, in their order, from ``jobs`` children each started as
    ``command()`` (an isolated child module that ``serve``s), each child taking the next request
    as it finishes one (requests differ in cost: in fixed shares, one child would work alone at
    the end). A child that dies is replaced and the request it held asked again, up to
    MAX_CHILD_DEATHS times a thread; then InternalFault, ``what`` naming the work, with the last
    child's last words."""
    answers: list = [None] * len(requests)
    todo, lock = iter(range(len(requests))), threading.Lock()
    again: list[int] = []  # requests whose child died on them
    why: list[str] = []  # how each child that died ended
    interrupted = threading.Event()  # padconf's Ctrl-C: no request is taken any more
    live: set[subprocess.Popen] = set()  # the children at work, ended at once on Ctrl-C

    def child_works() -> None:
        for _ in range(MAX_CHILD_DEATHS + 1):
            if answered_in_a_child():
                return
        raise InternalFault(f"{what}: {MAX_CHILD_DEATHS + 1} child processes died in turn ({why[-1]})")

    def answered_in_a_child() -> bool:
        """Whether one child answered every request it took; one it died on goes back."""
        # stderr to a file, not a pipe: a child that says much cannot block on it
        # a session of its own: a terminal's Ctrl-C reaches padconf alone, which answers it in one line
        with tempfile.TemporaryFile() as err, subprocess.Popen(command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                               stderr=err, start_new_session=True) as child:
            assert child.stdin is not None and child.stdout is not None  # both pipes, just opened
            with lock:
                live.add(child)
            i = None
            try:
                while (i := next_request()) is not None:
                    child.stdin.write(json.dumps(requests[i]).encode() + b"\n")
                    child.stdin.flush()
                    line = child.stdout.readline()
                    if not line:  # it died: its exit status and last words say why
                        break
                    answers[i] = json.loads(line)
                else:  # every request it took is answered
                    child.stdin.close()
                    if child.wait() == 0:
                        return True
            except OSError:  # it stopped reading: as above
                pass
            child.kill()
            with contextlib.suppress(OSError):  # a request it did not read: closing flushes it into a dead pipe
                child.stdin.close()
            child.wait()
            with lock:
                live.discard(child)
            if interrupted.is_set():  # ended by padconf on Ctrl-C, not a death: no child replaces it
                return True
            why.append(f"{exit_text(wait_status(child.returncode))}{last_words(err)}")
            if i is not None:
                with lock:
                    again.append(i)
            return False

    def next_request() -> int | None:
        with lock:
            if interrupted.is_set():
                return None
            return again.pop() if again else next(todo, None)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        try:
            for done in [pool.submit(child_works) for _ in range(jobs)]:
                done.result()
        except BaseException:  # Ctrl-C, or a signal padconf raises: the children end now, not after their work
            interrupted.set()
            with lock:
                for child in live:
                    child.kill()
            raise
    return answers


def serve(answer: Callable) -> None:
    """A child's side: ``answer(request)`` for each JSON request on stdin, one JSON line each."""
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()
