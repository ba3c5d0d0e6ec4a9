"""Progress of a long job (a run, a gate) shown as it goes: a bar on a terminal, else a line at
intervals saying how far each runtime is and what is slow, so that a CI log never goes silent
and a long job's log is not mostly progress lines."""
from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator

from rich.console import Console

PROGRESS_EVERY_S = 15.0  # the first progress line where there is no terminal (a CI log), this long in
PROGRESS_SLOWEST = 4  # then each interval twice the last, up to this many times the first: a line a minute


def progress_waits() -> Iterator[float]:
    """The seconds before each progress line off a terminal: 15, 30, 60, 60 ... (a default run's
    15 minutes were 57 lines of its log at a steady 15 s)."""
    wait = PROGRESS_EVERY_S
    while True:
        yield wait
        wait = min(wait * 2, PROGRESS_EVERY_S * PROGRESS_SLOWEST)


class Advance:
    """What ``progress`` yields: called with a runtime's name once per result; ``then(text)``
    once the results are in and ``text`` (the controls ...) still runs, so that nothing is silent
    after the last result."""

    def __init__(self, log: ProgressLog, shown=None, said=None):
        self.log, self._shown, self._said = log, shown, said

    def __call__(self, runtime: str) -> None:
        self.log.advance(runtime)
        if self._shown:
            self._shown(runtime)

    def then(self, text: str) -> None:
        if self._said:
            self._said(text)
        self.log.then = text


@contextlib.contextmanager
def progress(out: Console, what: str, todo: Counter | None = None):
    """Yields an Advance, called once per result. On a terminal it moves a progress bar, with the
    time left over every runtime (ProgressLog.left); elsewhere (a CI log) a line after each of
    progress_waits' intervals says how far each runtime is, the seconds elapsed, the time left and
    what is slow, so that a log never goes silent. What still runs after the last result is said
    in a line of its own as it starts, off a terminal after a last line of the results' count."""
    log = ProgressLog(what, todo)

    def said(text: str) -> None:
        if log.then is None and not out.is_terminal:  # the results' last count comes before what follows them
            out.print(log.line(), soft_wrap=True, markup=False, highlight=False)
        out.print(f"{what}: {text}", soft_wrap=True, markup=False, highlight=False)
    if out.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[left]}")]
        with Progress(*columns, console=out) as bar:
            task = bar.add_task(what, total=sum(todo.values()) if todo else None, left="")

            def shown(name: str) -> None:
                bar.update(task, advance=1, description=name, left=log.left_text())
            yield Advance(log, shown, said)
        return
    stop = threading.Event()

    def tick():
        for wait in progress_waits():
            if stop.wait(wait):
                return
            out.print(log.line(), soft_wrap=True, markup=False, highlight=False)
    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield Advance(log, said=said)
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
        self.then: str | None = None  # what runs once the results are in (Advance.then)
        self._lock = threading.Lock()

    def advance(self, runtime: str) -> None:
        with self._lock:
            self.done[runtime] += 1
            self.first.setdefault(runtime, self.clock())

    def left(self) -> tuple[float | None, list[str]]:
        """The seconds left over every runtime, at each one's pace so far (the one with most
        left: the runtimes run side by side), and the runtimes with results to do that have not
        started: while there is one, no estimate (None) is made, since its pace is unknown."""
        now = self.clock()
        with self._lock:
            done, first = Counter(self.done), dict(self.first)
        waiting = [n for n in self.todo if self.todo[n] and n not in first]
        if waiting:
            return None, waiting
        left = [(self.todo[n] - done[n]) * (now - first[n]) / done[n] for n in self.todo if n in first]
        return max(left, default=0.0), []

    def left_text(self) -> str:
        seconds, waiting = self.left()
        if waiting:
            return f"time left: not known until {', '.join(waiting)} start{'s' * (len(waiting) == 1)}"
        return f"about {seconds:.0f} s left" if seconds else ""

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
        waiting = [n for n in self.todo if self.todo[n] and n not in first]
        if self.todo and sum(done.values()) >= sum(self.todo.values()) and self.then:
            text += f"; all results in; now {self.then}"
        elif stalled:
            text += f"; slow: {', '.join(stalled)}: no result in the last {since:.0f} s"
        elif waiting:  # its pace is unknown: any figure would leave it out
            text += f"; not started yet: {', '.join(waiting)}: no estimate of the time left"
        elif left:
            slowest = max(left, key=lambda n: left[n])
            text += f"; about {left[slowest]:.0f} s left (the slowest, {slowest}, at its pace)"
        return text
