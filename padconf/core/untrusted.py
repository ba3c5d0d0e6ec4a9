"""Reading files padconf did not write (test folders, baselines, run directories, spec folders):
bounded before anything is allocated, and never outside the folder padconf was given.

Every refusal is one line naming the file, raised as the caller's error type (SpecError for
spec files, CaseError for the rest).
"""
from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

from padconf.core import inputs
from padconf.core.errors import CaseError

MAX_DEPTH = 64  # nesting of a YAML document (JSON: the recursion limit); padconf's own nest a few levels


def read_bytes(path: Path | str, limit: int, error: type[Exception] = CaseError, name: str | None = None,
               follow: bool = True) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes: a FIFO,
    a device (/dev/zero) or a folder is refused before reading, and so is a file that grows
    past ``limit`` while it is read; with ``follow=False`` (a file of a folder padconf was
    given, such as a run directory's) so is a symbolic link, which may lead outside it.
    Messages call it ``name`` (default: the path)."""
    name = name or str(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused just below
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise error(f"{name}: a symbolic link, which padconf does not follow here") from None
        raise error(f"{name}: cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{name}: not a regular file")
        if info.st_size > limit:
            raise error(f"{name}: larger than {limit} bytes")
        inputs.note_read(info, name)  # the writer never replaces it in this command
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise error(f"{name}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(f"{name}: larger than {limit} bytes")
    return data


def sha256_of(f: io.BufferedIOBase | io.RawIOBase) -> str:
    """The SHA-256 of what is left to read of the binary file ``f``, read a MiB at a time (a
    run's results.jsonl, an environment's libraries: never whole in memory)."""
    digest = hashlib.sha256()
    while chunk := f.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def read_text(path: Path | str, limit: int, error: type[Exception] = CaseError, name: str | None = None,
              follow: bool = True) -> str:
    """``read_bytes`` as UTF-8 text."""
    data = read_bytes(path, limit, error, name, follow)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{name or path}: not UTF-8 text (byte {exc.start})") from None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def json_nesting(text: str) -> int:
    """How deep ``text``'s arrays and objects nest, counted on its brackets outside strings
    (in C: a regular expression, a translation and a cumulative sum), before anything is built."""
    brackets = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    steps = np.frombuffer(brackets, np.uint8)
    return int(np.cumsum(np.where((steps == ord("[")) | (steps == ord("{")), 1, -1), dtype=np.int64).max())


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def json_value(text: str, where: str, error: type[Exception] = CaseError):
    """``json.loads`` of ``text``; malformed JSON, nesting past MAX_DEPTH (counted before it is
    decoded: a value nested just under the interpreter's recursion limit decoded, then broke
    whatever walked or encoded it again) and integers of thousands of digits are one line naming
    ``where``."""
    if text.count("[") + text.count("{") > MAX_DEPTH and json_nesting(text) > MAX_DEPTH:
        raise error(f"{where}: JSON nested more than {MAX_DEPTH} deep")
    try:
        value = json.loads(text)
        if SURROGATE_ESCAPE.search(text):  # JSON spells a lone surrogate, which is no text: no key or
            json.dumps(value, ensure_ascii=False).encode()  # string of it can be printed or encoded
        return value
    except UnicodeEncodeError:
        raise error(f"{where}: a lone surrogate (\\ud800-\\udfff unpaired) in a JSON string: not text") from None
    except json.JSONDecodeError as exc:
        raise error(f"{where}: malformed JSON: {exc.msg} (line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deep") from None
    except ValueError as exc:  # an integer past int_max_str_digits
        raise error(f"{where}: malformed JSON: {str(exc).split(':')[0]}") from None


def yaml_depth_checked(text: str, where: str, error: type[Exception] = CaseError) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH, counted on the parser's event stream (which
    does not recurse) before the document is composed (which does). The events are libyaml's
    where it is built in (PyYAML's Python parser is a port of it, and took most of a spec file's
    reading: docs/performance.md); a text it refuses is counted again on the Python parser's,
    which the caller's own parse is, so what is refused, and how, stays that parser's."""
    loaders: list[type] = [yaml.SafeLoader]
    if getattr(yaml, "__with_libyaml__", False):
        loaders.insert(0, yaml.CSafeLoader)
    for loader in loaders:
        depth = 0
        try:
            for event in yaml.parse(text, Loader=loader):
                if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                    depth += 1
                    if depth > MAX_DEPTH:
                        line = event.start_mark.line + 1 if event.start_mark else "?"
                        raise error(f"{where}:{line}: YAML nested more than {MAX_DEPTH} deep")
                elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                    depth -= 1
            return
        except yaml.YAMLError:
            pass  # the Python parser's turn; after it, the caller's own parse reports it, with its line


_INT_TAG, _FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
MAX_NUMBER_CHARS = 400


class _ExpansionCountingLoader(yaml.SafeLoader):
    """A SafeLoader whose composer knows, for each node it composes, the size and depth that node
    has with every alias inside it expanded (as constructing or serializing it would), and
    refuses past ``max_nodes`` or MAX_DEPTH as the node is composed: aliases cost nothing to
    compose, so a few KB of them can stand for millions of nodes, or one alias for a nesting far
    deeper than the text shows."""

    def __init__(self, text: str, where: str, max_nodes: int, error: type[Exception]):
        super().__init__(text)
        self.where, self.max_nodes, self.error = where, max_nodes, error
        self.expanded: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, depth), its aliases expanded

    def compose_node(self, parent, index):
        alias = self.check_event(yaml.AliasEvent)
        mark = self.peek_event().start_mark
        node = super().compose_node(parent, index)
        at = f"{self.where}:{mark.line + 1}" if mark else self.where
        if alias:
            if id(node) not in self.expanded:  # the alias stands inside its own anchor: endless
                raise self.error(f"{at}: a YAML alias inside the node it names")
            return node
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            if len(keys) != len(set(keys)):  # YAML keeps the last: a second key would hide the first
                twice = next(k for k in keys if keys.count(k) > 1)
                raise self.error(f"{at}: a YAML mapping holds the key {twice[:40]!r} twice")
        else:
            children = []
            # a number constructs as int(): past Python's 4,300 digits that is a ValueError, not
            # YAML's error (exit 3, attack round VII); no number of a spec or baseline is that long
            if node.tag in (_INT_TAG, _FLOAT_TAG) and len(node.value) > MAX_NUMBER_CHARS:
                raise self.error(f"{at}: a number of {len(node.value)} characters, more than {MAX_NUMBER_CHARS}")
        sizes = [self.expanded[id(c)] for c in children]
        nodes, depth = 1 + sum(n for n, _ in sizes), 1 + max((d for _, d in sizes), default=0)
        if nodes > self.max_nodes:
            raise self.error(f"{at}: YAML of more than {self.max_nodes} nodes once its aliases are expanded")
        if depth > MAX_DEPTH + 1:  # + 1: a scalar inside 64 collections
            raise self.error(f"{at}: YAML nested more than {MAX_DEPTH} deep once its aliases are expanded")
        self.expanded[id(node)] = (nodes, depth)
        return node


def yaml_compose(text: str, where: str, max_nodes: int, error: type[Exception] = CaseError) -> yaml.Node | None:
    """``yaml.compose`` of ``text`` with its nesting checked on the event stream first
    (``yaml_depth_checked``), then its size and nesting with aliases expanded checked while it
    is composed: nothing is constructed from a document of more than ``max_nodes`` nodes.
    Malformed YAML raises yaml.YAMLError, for the caller to report with its line."""
    yaml_depth_checked(text, where, error)
    loader = _ExpansionCountingLoader(text, where, max_nodes, error)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def inside(path: Path | str, folder: Path | str, error: type[Exception] = CaseError) -> Path:
    """``path`` resolved (symbolic links followed), which must lie inside ``folder``."""
    if "\0" in str(path):
        raise error(f"{str(path)!r}: not a path (it holds a NUL)")
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(Path(folder).resolve()):
        raise error(f"{path}: leads outside {folder} (to {resolved})")
    return resolved


MAX_NPY_DIMS = 32  # what a TensorProto may have here (padconf.suite.folders.tensor_array)


def npy_array(data: bytes, where: str, allowed: Callable[[np.dtype], bool], expected: str, limit: int,
              error: type[Exception] = CaseError) -> np.ndarray:
    """The array a .npy file's bytes hold, read without ``np.load``: its header (format 1.0 or
    2.0) is read first, the dtype must be one ``allowed`` accepts (``expected`` says which in
    messages; never an object, a structured or a byte-swapped one), and the shape must describe
    exactly the bytes that follow, at most ``limit`` of them, before any array is made: a
    193-byte file declaring ``(2**40,)`` would have ``np.load`` allocate terabytes first."""
    from numpy.lib import format as npy

    buf = io.BytesIO(data)
    try:
        version = npy.read_magic(buf)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"format version {version[0]}.{version[1]} (padconf reads 1.0 and 2.0)")
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran_order, dtype = read_header(buf)
    except (ValueError, EOFError, TypeError, SyntaxError, OverflowError) as exc:
        raise error(f"{where}: malformed .npy: {' '.join(str(exc).split())[:200]}") from None
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None or not dtype.isnative \
            or not allowed(dtype):
        raise error(f"{where}: .npy of dtype {str(dtype)[:80]}, not {expected}")
    if len(shape) > MAX_NPY_DIMS or not all(type(n) is int and n >= 0 for n in shape):
        raise error(f"{where}: .npy shape {list(shape)[:MAX_NPY_DIMS + 1]} is not at most {MAX_NPY_DIMS} sizes >= 0")
    size = math.prod(shape) * dtype.itemsize
    body = len(data) - buf.tell()
    if size > limit:
        raise error(f"{where}: .npy of {dtype} shape {list(shape)} ({size} bytes) exceeds {limit} bytes")
    if size != body:
        raise error(f"{where}: .npy of {dtype} shape {list(shape)} needs {size} bytes; the file holds {body}")
    flat = np.frombuffer(data, dtype=dtype, count=math.prod(shape), offset=buf.tell())
    return flat.reshape(shape, order="F" if fortran_order else "C").copy(order="C")
