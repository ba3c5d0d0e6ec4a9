"""Load and validate the YAML spec files (format: specs/FORMAT.md).

A broken file is reported as one line, ``specs/onnx/Pad-19.yaml: modes[2]: 'wrapp' is not one
of [...]``, through SpecError: never a traceback.
"""
from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import yaml

from padconf.core.dtypes import as_array
from padconf.core.errors import SpecError, did_you_mean
from padconf.core.untrusted import inside, read_text, yaml_compose
from padconf.core.vocabulary import Word
from padconf.spec.reference import INTERPRETATIONS

# The spec files ship inside the package, in padconf/spec/documents (the repository's top-level specs/
# is a link to them);
# PADCONF_SPECS or --specs-dir points padconf at another folder.
SPECS_DIR = Path(os.environ.get("PADCONF_SPECS") or Path(__file__).resolve().parent / "documents")
SCHEMA_PATH = Path(__file__).with_name("spec_schema.json")


class MirrorBoundScope(Word):
    """Which pads a document's reflect / symmetric bound (``mirror_beyond_dim``) holds for: the
    rule ``mirror_bound_scope`` (absent: pads that add elements)."""

    PADS_THAT_ADD = "pads_that_add"  # a pad of 0, or an axis ``axes`` leaves out, adds nothing
    EVERY_PAD = "every_pad"  # "for any valid D", as written: even a reflect pad of 0 on an empty axis


@dataclass(frozen=True)
class Ambiguity:
    name: str
    text: str
    interpretations: tuple[str, ...]
    default: str
    any_answer_conforms: bool = False  # "Behavior is undefined": any output or refusal conforms


@dataclass(frozen=True)
class Spec:
    id: str  # "onnx/Pad-19"
    path: Path
    doc: dict  # the validated document, extends resolved

    domain = property(lambda self: self.doc["domain"])
    version = property(lambda self: self.doc["version"])
    modes = property(lambda self: tuple(self.doc["modes"]))
    dtypes = property(lambda self: tuple(self.doc["dtypes"]))
    operands = property(lambda self: self.doc["operands"])
    examples = property(lambda self: tuple(self.doc.get("examples", ())))

    def rule(self, name: str, default=None):
        entry = self.doc.get("rules", {}).get(name)
        return default if entry is None else entry["value"]

    @property
    def ambiguities(self) -> dict[str, Ambiguity]:
        return {a["name"]: Ambiguity(a["name"], a["text"], tuple(a["interpretations"]), a["default"],
                                     a.get("any_answer_conforms", False))
                for a in self.doc.get("ambiguities", ())}

    @property
    def has_axes(self) -> bool:
        return "axes" in self.operands

    @property
    def pads_index_types(self) -> tuple[str, ...]:
        return tuple(self.operands["pads"].get("index_types", ("int64",)))

    @property
    def axes_index_types(self) -> tuple[str, ...]:
        return tuple(self.operands["axes"].get("index_types", ())) if self.has_axes else ()


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(SPECS_DIR.resolve().parent))
    except ValueError:
        return str(path)


def _key_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def schema() -> dict:
    """spec_schema.json with the ambiguity names and their interpretations filled in from
    reference.INTERPRETATIONS, so that the schema cannot list a name the reference lacks."""
    doc = json.loads(SCHEMA_PATH.read_text())
    ambiguity, example = doc["$defs"]["ambiguity"], doc["$defs"]["example"]
    ambiguity["properties"]["name"]["enum"] = list(INTERPRETATIONS)
    ambiguity["allOf"] = [
        {"if": {"properties": {"name": {"const": name}}, "required": ["name"]},
         "then": {"properties": {"interpretations": {"items": {"enum": list(values)}},
                                 "default": {"enum": list(values)}}}}
        for name, values in INTERPRETATIONS.items()]
    doc["properties"]["rules"]["properties"]["mirror_bound_scope"] = {
        "type": "object", "additionalProperties": False, "required": ["value", "text"],
        "properties": {"value": {"enum": [str(v) for v in MirrorBoundScope]}, "text": {"$ref": "#/$defs/text"}}}
    example["properties"]["interpretation"]["properties"] = {
        name: {"enum": list(values)} for name, values in INTERPRETATIONS.items()}
    return doc


@lru_cache(maxsize=1)
def _validator():
    import jsonschema  # here: a worker, which reads no spec file, starts without it
    return jsonschema.Draft202012Validator(schema())


MAX_SPEC_BYTES = 1 << 20  # far above any real spec file
MAX_SPEC_FILES = 64  # a spec folder as a whole: padconf ships 14, and each takes a parse and its checks
MAX_SPEC_VALUES = 100_000  # values after YAML aliases are expanded (an alias bomb has billions)
MAX_SPEC_DEPTH = 32


def _read_yaml(path: Path) -> dict:
    text = read_text(path, MAX_SPEC_BYTES, SpecError, _display(path))
    try:  # composed by the one YAML reader (its depth checked first): a key given twice is refused there
        node = yaml_compose(text, _display(path), MAX_SPEC_VALUES * 4, SpecError)
        # constructed from that node, as yaml.safe_load would from its own parse of the same text
        doc = None if node is None else yaml.SafeLoader("").construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "?"
        raise SpecError(f"{_display(path)}: {where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict):
        raise SpecError(f"{_display(path)}: (top level): expected a mapping, got {type(doc).__name__}")
    size, depth = _expanded_size(doc)
    if size > MAX_SPEC_VALUES or depth > MAX_SPEC_DEPTH:
        raise SpecError(f"{_display(path)}: expands to {size} values nested {depth} deep (limits "
                        f"{MAX_SPEC_VALUES}, {MAX_SPEC_DEPTH}): YAML aliases nested too far?")
    return doc


def _expanded_size(doc) -> tuple[int, int]:
    """(values, depth) of ``doc`` with every YAML alias expanded, counted in time linear in the
    file: safe_load gives an alias the same object as its anchor, so each is counted once."""
    memo: dict[int, tuple[int, int]] = {}

    def walk(obj, level):
        if level > MAX_SPEC_DEPTH:
            return 1, level
        if id(obj) in memo:
            return memo[id(obj)]
        children = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
        size, depth = 1, 0
        for child in children:
            s, d = walk(child, level + 1)
            size, depth = size + s, max(depth, d)
        memo[id(obj)] = size, depth + 1
        return memo[id(obj)]
    return walk(doc, 0)


# (file, specs folder) -> (the files it was made of, their stamps, the Spec): a file is parsed
# and validated once per process while it and what it extends are unchanged. Most versions
# extend an earlier one: loading all twelve parsed files 34 times, a second of every run.
_LOADED: dict[tuple[Path, Path], tuple[tuple[Path, ...], tuple | None, Spec]] = {}


def _stamps(paths) -> tuple | None:
    try:
        return tuple((st.st_mtime_ns, st.st_size, st.st_ino) for st in map(os.stat, paths))
    except OSError:
        return None


def load_spec(path: Path | str, specs_dir: str | Path | None = None, _chain=()) -> Spec:
    path = Path(path)
    specs_dir = Path(specs_dir or SPECS_DIR)
    key = (path.resolve(), specs_dir.resolve())
    if key in _LOADED:
        files, stamps, spec = _LOADED[key]
        if stamps is not None and _stamps(files) == stamps:
            return spec
    files = (path,)
    doc = _read_yaml(path)
    parent_id = doc.get("extends")
    if parent_id is not None:
        # a spec id, nothing else: "../outside/x" would read a file outside the spec folder
        is_id = isinstance(parent_id, str) and _SPEC_ID.fullmatch(parent_id)
        parent_path = specs_dir / f"{parent_id}.yaml"
        problem = ("circular" if parent_id in _chain else "not a spec id (<domain>/Pad-<version>)" if not is_id
                   else None if parent_path.is_file() and parent_path.resolve().is_relative_to(specs_dir.resolve())
                   else "no such spec file in the spec folder")
        if problem:
            raise SpecError(f"{_display(path)}: extends: {parent_id!r}: {problem}")
        parent = load_spec(parent_path, specs_dir, _chain + (parent_id,))
        files += _LOADED[(parent_path.resolve(), specs_dir.resolve())][0]
        doc = {**{k: v for k, v in parent.doc.items()}, **{k: v for k, v in doc.items() if k != "extends"}}
    errors = sorted(_validator().iter_errors(doc),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        err = errors[0]
        raise SpecError(f"{_display(path)}: {_key_path(err.absolute_path)}: {err.message}")
    expected_id = path.resolve().relative_to(specs_dir.resolve()).with_suffix("").as_posix() \
        if path.resolve().is_relative_to(specs_dir.resolve()) else doc["id"]
    if doc["id"] != expected_id:
        raise SpecError(f"{_display(path)}: id: {doc['id']!r} does not match the file's place ({expected_id!r})")
    _check_examples(path, doc)
    spec = Spec(doc["id"], path, doc)
    _LOADED[key] = files, _stamps(files), spec
    return spec


def _check_examples(path: Path, doc: dict) -> None:
    """What a schema cannot say: examples use this version's modes and dtypes, names are unique."""
    names = set()
    for i, ex in enumerate(doc.get("examples", ())):
        where = f"{_display(path)}: examples[{i}]"
        if ex["name"] in names:
            raise SpecError(f"{where}.name: {ex['name']!r} is used twice")
        names.add(ex["name"])
        if ex.get("mode", "constant") not in doc["modes"]:
            raise SpecError(f"{where}.mode: {ex['mode']!r} is not a mode of this version")
        if ex["dtype"] not in doc["dtypes"]:
            raise SpecError(f"{where}.dtype: {ex['dtype']!r} is not a dtype of this version")
        for key in ("data", "output"):
            if key in ex:
                try:
                    as_array(ex[key], ex["dtype"])
                except (ValueError, TypeError, OverflowError) as exc:
                    problem = str(exc).split(".")[0] if "inhomogeneous" not in str(exc) else "rows of unequal length"
                    raise SpecError(f"{where}.{key}: not a {ex['dtype']} array: {problem}") from None
    for i, amb in enumerate(doc.get("ambiguities", ())):
        if amb["default"] not in amb["interpretations"]:
            raise SpecError(f"{_display(path)}: ambiguities[{i}].default: {amb['default']!r} is not one of its "
                            "interpretations")


_SPEC_ID = re.compile(r"([a-z]+)/Pad-([0-9]+)")


_PARSED: dict[str, tuple[str, int]] = {}  # spec id -> parse_spec_id's answer: asked several times a case


def parse_spec_id(spec_id: str) -> tuple[str, int]:
    """``"onnx/Pad-19"`` -> ``("onnx", 19)``."""
    parsed = _PARSED.get(spec_id) if type(spec_id) is str else None
    if parsed is not None:
        return parsed
    match = _SPEC_ID.fullmatch(spec_id)
    if not match:
        raise SpecError(f"spec id {spec_id!r} is not <domain>/Pad-<version>")
    parsed = match[1], int(match[2])
    if len(_PARSED) < 4096:  # the ids a run's files name: a few dozen; bounded whatever they name
        _PARSED[spec_id] = parsed
    return parsed


def spec_sort_key(spec_id: str) -> tuple[str, int]:
    """Domain, then version as a number (Pad-2 before Pad-11). An id that does not parse sorts
    first: it is a misnamed file, which load_spec reports."""
    try:
        return parse_spec_id(spec_id)
    except SpecError:
        return "", 0


def spec_paths(specs_dir: str | Path | None = None) -> list[Path]:
    """The spec files of ``specs_dir``, ordered by domain then version. A folder that does not
    exist or holds no spec file is a SpecError: padconf never runs on an empty suite."""
    specs_dir = Path(specs_dir or SPECS_DIR)
    if not specs_dir.is_dir():
        raise SpecError(f"{specs_dir}: no such spec folder")
    found = list(itertools.islice(specs_dir.glob("*/*.yaml"), MAX_SPEC_FILES + 1))
    if len(found) > MAX_SPEC_FILES:
        raise SpecError(f"{specs_dir}: holds more than {MAX_SPEC_FILES} spec files")
    paths = sorted(found, key=lambda p: spec_sort_key(p.relative_to(specs_dir).with_suffix("").as_posix()))
    if not paths:
        raise SpecError(f"{specs_dir}: holds no spec file (expected <domain>/Pad-<version>.yaml)")
    for path in paths:  # a link to a file elsewhere is not the folder's
        inside(path, specs_dir, SpecError)
    return paths


def spec_id_hint(word: str, known: Iterable[str]) -> str:
    """" (did you mean 'onnx/Pad-19'?)" for a mistyped spec id: the ids whose name ('Pad-19') or
    version ('19') the word is (a user writes the part they know), else the closest id."""
    known = list(known)
    by_part = [k for k in known if word in (k.rpartition("/")[2], k.rpartition("-")[2])]
    if by_part:
        return f" (did you mean {' or '.join(map(repr, by_part))}?)"
    return did_you_mean(word, known)


def load_specs(specs_dir: str | Path | None = None, ids=None) -> list[Spec]:
    """Every spec (or those whose id is in ``ids``), ordered by domain then version; never none."""
    specs = [load_spec(p, specs_dir) for p in spec_paths(specs_dir)]
    if ids is not None:
        known = {s.id for s in specs}
        unknown = [i for i in ids if i not in known]
        if unknown or not ids:
            raise SpecError(f"unknown spec id {unknown[0]!r}{spec_id_hint(unknown[0], [s.id for s in specs])}; known: "
                            f"{', '.join(s.id for s in specs)}" if unknown
                            else "no spec id selected")
        specs = [s for s in specs if s.id in ids]
    return specs


@cache
def get_spec(spec_id: str, specs_dir: str | Path | None = None) -> Spec:
    parse_spec_id(spec_id)  # a results row's "spec" may be any text: "../x" must not name a file
    path = Path(specs_dir or SPECS_DIR) / f"{spec_id}.yaml"
    if not path.is_file():
        raise SpecError(f"unknown spec id {spec_id!r} (no {path})")
    return load_spec(path, specs_dir)


def rule_text(spec: Spec, rule: str | None) -> dict:
    """Where ``rule`` (a must-reject case's ``Case.rule``) stands in the spec file, and its
    quoted text."""
    rules = spec.doc.get("rules", {})
    if rule in rules:
        return {"spec_key": f"rules.{rule}", "text": rules[rule]["text"]}
    if rule in spec.ambiguities:
        return {"spec_key": f"ambiguities.{rule}", "text": spec.ambiguities[rule].text}
    sig = spec.operands
    listed = {
        "dtypes": ("dtypes", "T in (" + ", ".join(spec.dtypes) + ")"),
        "modes": ("modes", "mode in (" + ", ".join(spec.modes) + ")"),
        "pads_index_types": ("operands.pads.index_types", "pads: " + ", ".join(spec.pads_index_types)),
        "axes_index_types": ("operands.axes.index_types", "axes: " + ", ".join(spec.axes_index_types)),
        "axes_input": ("operands",
                       "inputs: " + ", ".join(n for k in sig for n in sig[k]["names"] if sig[k]["via"] == "input")
                       + "; attributes: "
                       + ", ".join(n for k in sig for n in sig[k]["names"] if sig[k]["via"] == "attribute")),
    }
    if rule in listed:
        key, text = listed[rule]
        return {"spec_key": key, "text": text,
                "note": "the spec file's own list (the document gives it as a type or attribute constraint)"}
    return {"spec_key": None, "text": None, "note": "a refusal of padconf's reference that no single rule names"}
