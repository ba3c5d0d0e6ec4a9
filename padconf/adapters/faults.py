"""padconf's own faults, told apart from a runtime's answers.

An adapter turns the runtime's exceptions into refusals (``Adapter.refusal``), and padconf
judges a refusal as evidence about the runtime. Some exceptions are no such evidence:

- a slip in padconf's own code, or in a plugin adapter's (an AttributeError, NameError,
  TypeError or failed assertion raised in one of their frames), is the author's fault;
- an import that fails while a case runs (an ImportError anywhere, or any exception out of a
  module's top-level code) says the worker's imports are broken: under its address-space cap a
  MemoryError can cut an import short and leave its module half made in ``sys.modules`` (or a
  native registry half filled), and every later import of it in that worker fails.

``own_fault`` says which, and why; ``OwnFault`` carries it out of the adapter to the worker,
which ends itself (its state may be the cause) and tells padconf, which runs the case again in a
fresh worker and, if the fault persists, records the result as inconclusive with the reason.

Which frame raised decides, not the exception's type alone: an exception from the runtime's
own Python code (iree.compiler's ValueError on a bad model) is the runtime's answer, and so is
one a native function of the runtime raises when padconf's frame calls it (the traceback's
innermost frame is then padconf's, at a call): only a TypeError about the call itself ("takes 2
positional arguments", "'NoneType' object is not callable" or "... not subscriptable") counts there. A ``raise``
in padconf's code is deliberate (a runtime answer padconf cannot read, said as a TypeError):
only an assertion counts there.
"""
from __future__ import annotations

import dis
import functools
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import CodeType, TracebackType

PADCONF = os.path.realpath(Path(__file__).resolve().parent.parent)  # padconf's own package

# What a slip in code raises: a name or an attribute that is not there, a wrong type, a broken assertion.
_SLIPS = (AttributeError, NameError, TypeError, AssertionError)
# CPython's words for a call whose arguments do not fit the callee, or an object that is no
# callee, no container, no iterable, no context manager at all: the calling code's slip.
_MISUSE = re.compile(r"positional arguments? but|missing \d+ required|unexpected keyword argument"
                     r"|got multiple values for|takes no (keyword )?arguments|takes (exactly|at most|at least) "
                     r"|object is not (callable|subscriptable|iterable|an iterator)"
                     r"|does not support the (asynchronous )?context manager protocol")
# Instructions that run other code (a callee, __getitem__, __enter__, __next__): what goes wrong
# there may be that code's answer. Opcode names across CPython 3.10 to 3.13.
_CALLS = re.compile(r"CALL.*|PRECALL|BEFORE_WITH|SETUP_WITH|GET_ITER|FOR_ITER|BINARY_SUBSCR|SEND|YIELD_FROM"
                    r"|WITH_EXCEPT_START|GET_AWAITABLE|BEFORE_ASYNC_WITH")
_RAISES = frozenset({"RAISE_VARARGS", "RERAISE"})


class OwnFault(BaseException):
    """An exception that is padconf's fault (or a plugin author's), not the runtime's answer: why,
    in one line. A BaseException, so that an adapter's ``except Exception`` around its runtime's
    calls lets it through to the worker."""


def own_fault(exc: BaseException, own_files: Iterable[str] = ()) -> str | None:
    """Why ``exc``, raised while a worker ran a case, is no answer of the runtime's; None when it
    is one. ``own_files``: the source files of a plugin adapter's own modules, whose frames count
    as padconf's do."""
    frames = _frames(exc.__traceback__)
    said = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    if isinstance(exc, ImportError) or any(_module_body(tb.tb_frame.f_code) for tb in frames):
        where = next((_where(tb) for tb in reversed(frames) if _module_body(tb.tb_frame.f_code)), None)
        return f"an import failed in the worker{' at ' + where if where else ''} ({said}): its imports are broken"
    if not frames or not isinstance(exc, _SLIPS):
        return None
    innermost = frames[-1]
    if not _is_own(innermost.tb_frame.f_code.co_filename, frozenset(own_files)):
        return None
    op = _opname(innermost.tb_frame.f_code, innermost.tb_lasti)
    if op in _RAISES and not isinstance(exc, AssertionError):
        return None  # raised on purpose: what the runtime answered, said by the adapter
    if (op is None or _CALLS.fullmatch(op)) and isinstance(exc, TypeError) and not _MISUSE.search(str(exc)):
        return None  # raised inside a native function of the runtime the frame called
    if op is not None and _CALLS.fullmatch(op) and isinstance(exc, AssertionError):
        return None
    return f"{said}, raised in {_where(innermost)} (the adapter's own code, not the runtime)"


def raise_unless_answer(exc: BaseException, own_files: Iterable[str] = ()) -> None:
    """Raise what is no answer of the runtime's, for the worker: a MemoryError as it is (the
    worker's address-space cap: the worker ends, its heap may be in pieces), padconf's own fault
    as OwnFault (``own_fault``); return when ``exc`` is the runtime's answer."""
    if isinstance(exc, MemoryError):
        raise exc
    why = own_fault(exc, own_files)
    if why:
        raise OwnFault(why) from exc


def _frames(tb: TracebackType | None) -> list[TracebackType]:
    found = []
    while tb is not None:
        found.append(tb)
        tb = tb.tb_next
    return found


def _module_body(code: CodeType) -> bool:
    """A module's top-level code, run by an import (not exec'd text, whose file is "<string>")."""
    return code.co_name == "<module>" and not code.co_filename.startswith("<")


def _where(tb: TracebackType) -> str:
    name = tb.tb_frame.f_code.co_filename
    real = _real(name)
    shown = os.path.relpath(real, os.path.dirname(PADCONF)) if real.startswith(PADCONF + os.sep) else name
    return f"{shown}:{tb.tb_lineno}"


@functools.lru_cache(maxsize=4096)
def _real(name: str) -> str:
    return os.path.realpath(name)


def _is_own(name: str, own_files: frozenset[str]) -> bool:
    real = _real(name)
    return real.startswith(PADCONF + os.sep) or real in {_real(f) for f in own_files}


def _opname(code: CodeType, offset: int) -> str | None:
    """The name of the instruction at byte ``offset`` of ``code``, None where there is none."""
    return _instructions(code).get(offset)


@functools.lru_cache(maxsize=1024)
def _instructions(code: CodeType) -> dict[int, str]:
    return {i.offset: i.opname for i in dis.get_instructions(code)}


def plugin_files(cls: type) -> frozenset[str]:
    """The source files of the modules defining ``cls`` and its bases, padconf's own left out:
    a plugin adapter's code, whose slips are its author's fault, not the runtime's."""
    found = set()
    for base in cls.__mro__:
        module = sys.modules.get(base.__module__)
        name = getattr(module, "__file__", None)
        if name and not _real(name).startswith(PADCONF + os.sep):
            found.add(_real(name))
    return frozenset(found)
