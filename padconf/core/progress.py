"""Progress of a long job (a run, a gate) shown as it goes: a bar on a terminal, else a line at
a steady interval saying how far each runtime is and what is slow, so that a CI log never goes
silent."""
from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter

from rich.console import Console

PROGRESS_EVERY_S = 15.0  # a progress line this often where there is no terminal (a CI log)


@contextlib.contextmanager
def progress(out: Console, what: str, todo: Counter | None = None):
    """Yields a callback ``advance(runtime)`` called once per result. On a terminal it moves a
    progress bar; elsewhere (a CI log) a line every PROGRESS_EVERY_S seconds says how far each
    runtime is, the seconds elapsed and what is slow, so that a log never goes silent."""
    if out.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
        with Progress(*columns, console=out) as bar:
            task = bar.add_task(what, total=sum(todo.values()) if todo else None)
            yield lambda name: bar.update(task, advance=1, description=name)
        return
    log = ProgressLog(what, todo)
    stop = threading.Event()

    def tick():
        while not stop.wait(PROGRESS_EVERY_S):
            out.print(log.line(), soft_wrap=True, markup=False, highlight=False)
    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield log.advance
    finally:
        stop.set()
        ticker.join()


class ProgressLog:
    """Results done per runtime, for a progress line: done / to do, seconds elapsed, and what is
    slow (a runtime with no result since the last line, else the one with most time left)."""

    def __init__(self, what: str, todo: Counter | None = None, clock=time.monotonic):
        self.what, self.todo, self.clock = what, todo or Counter(), clock
        self.started = self.last = clock()  # the last: when the last line was made
        self.done: Counter = Counter()
        self.seen: Counter = Counter()  # done, as of the last line
        self.first: dict[str, float] = {}  # runtime -> when its first result came
        self._lock = threading.Lock()

    def advance(self, runtime: str) -> None:
        with self._lock:
            self.done[runtime] += 1
            self.first.setdefault(runtime, self.clock())

    def line(self) -> str:
        now = self.clock()
        with self._lock:
            done, first = Counter(self.done), dict(self.first)
        since, seen, self.last, self.seen = now - self.last, self.seen, now, done
        names = list(self.todo) + [n for n in done if n not in self.todo]
        text = f"{self.what}: {now - self.started:.0f} s"
        if names:
            parts = [f"{n} {done[n]}" + (f"/{self.todo[n]}" if n in self.todo else "") for n in names]
            text += f", {sum(done.values())}" + (f"/{sum(self.todo.values())}" if self.todo else "") + \
                f" results ({', '.join(parts)})"
        running = [n for n in names if n in first and (n not in self.todo or done[n] < self.todo[n])]
        stalled = [n for n in running if done[n] == seen[n]]
        left = {n: (self.todo[n] - done[n]) * (now - first[n]) / done[n] for n in running if n in self.todo}
        if stalled:
            text += f"; slow: {', '.join(stalled)}: no result in the last {since:.0f} s"
        elif left:
            slowest = max(left, key=lambda n: left[n])
            text += f"; slowest: {slowest}, about {left[slowest]:.0f} s left at its pace"
        return text
