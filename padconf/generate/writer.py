"""Writing the fixed suite as test data: ONNX backend test folders and OpenVINO IR.

``generate(out, specs, seed, per_combo)`` writes, byte for byte the same for the same padconf,
spec files and seed::

    out/onnx/test_<name>/model.onnx, test_data_set_0/input_<i>.pb, output_0.pb      defined
    out/onnx-invalid/test_<name>/   model.onnx, test_data_set_0/input_<i>.pb, expect.json
    out/onnx-ambiguous/test_<name>/ model.onnx, test_data_set_0/input_<i>.pb,
                                    output_<interpretation>.pb (one per interpretation that gives
                                    an output), expect.json
    out/openvino[-invalid|-ambiguous]/test_<name>/ model.xml + model.bin (OpenVINO IR),
                                    input_<i>.npy, output_0.npy (defined), expect.json
    out/openvino/run_openvino.py    (padconf/generate/scripts/run_openvino.py, copied)
    out/MANIFEST.yaml, out/README.md

``onnx/`` is exactly the layout of onnx's node tests, so ``onnx.backend.test.loader.
load_model_tests(data_dir=out, kind="onnx")`` loads it. Expected outputs come from padconf's
reference through ``classify``, never from a runtime. ``export_onnx_node_tests`` writes onnx's
own node tests in the same layout. padconf.suite.folders reads any of them back.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import tempfile
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

from padconf.adapters.openvino import native_model, split_pads
from padconf.cases.case import Case, CaseKind
from padconf.cases.onnx_model import build_model, feeds
from padconf.core.dtypes import npy_bytes
from padconf.core.errors import CaseError, PadconfError
from padconf.core.escape import yaml_document
from padconf.core.untrusted import read_bytes, read_text
from padconf.core.user_key import signature, signed
from padconf.core.vocabulary import Placement
from padconf.core.writing import MARK, FolderLock, claim_folder, make_folder, write_atomically
from padconf.generate.exported import check_exporters, write_exported
from padconf.generate.files import interpretation_file, json_bytes, tensor_bytes
from padconf.generate.readme import readme
from padconf.spec.loader import Spec, rule_text
from padconf.suite.fixed import FRAMEWORK_DIRS, KIND_DIRS, SuiteCase, suite_cases

PRODUCER = ("padconf", "testdata-1")  # fixed: no padconf or library version in the files
OPENVINO_RUNNER = resources.files("padconf.generate.scripts") / "run_openvino.py"  # copied beside the OpenVINO cases


def _ambiguity_doc(case: Case, spec: Spec) -> dict:
    names = str(case.reason).split(",")
    return {name: {"text": spec.ambiguities[name].text, "interpretations": list(spec.ambiguities[name].interpretations),
                   "default": spec.ambiguities[name].default} for name in names}




def _expect_doc(entry: SuiteCase, spec: Spec, outputs: dict[str, str]) -> dict:
    case = entry.case
    doc: dict[str, Any] = {"spec": case.spec, "mode": case.mode, "dtype": case.dtype, "kind": case.kind,
           "placement": entry.placement, "case_id": case.id}
    if case.kind == CaseKind.MUST_REJECT:
        doc.update(expect="reject", reason=case.reason, rule=case.rule, spec_text=rule_text(spec, case.rule))
    else:
        doc.update(expect="one of the interpretations", ambiguity=case.reason,
                   ambiguities=_ambiguity_doc(case, spec),
                   interpretations={key: outputs.get(key) for key in case.interpretations})
    return doc


def write_onnx(entry: SuiteCase, spec: Spec, root: Path) -> None:
    case, where = entry.case, root / entry.path
    placement = Placement.INPUTS if entry.placement == "attributes" else Placement(entry.placement)
    model = build_model(case, placement)
    model.graph.name = entry.name
    model.producer_name, model.producer_version = PRODUCER
    data_set = where / "test_data_set_0"
    data_set.mkdir(parents=True)
    (where / "model.onnx").write_bytes(model.SerializeToString())
    for i, (name, arr) in enumerate(feeds(case, placement).items()):
        (data_set / f"input_{i}.pb").write_bytes(tensor_bytes(arr, name))
    if case.kind == CaseKind.DEFINED:
        assert case.expected is not None  # a defined case has its output
        (data_set / "output_0.pb").write_bytes(tensor_bytes(case.expected, "output"))
        return
    outputs = {}
    for key, out in sorted(case.interpretations.items()):
        if out is not None:
            outputs[key] = f"test_data_set_0/output_{interpretation_file(key)}.pb"
            (where / outputs[key]).write_bytes(tensor_bytes(out, "output"))
    (where / "expect.json").write_bytes(json_bytes(_expect_doc(entry, spec, outputs)))

def write_openvino(entry: SuiteCase, spec: Spec, root: Path) -> None:
    import openvino as ov

    case, where = entry.case, root / entry.path
    where.mkdir(parents=True)
    model = native_model(case, Placement(entry.placement), default_pad_value=True)
    ov.save_model(model, str(where / "model.xml"), compress_to_fp16=False)
    # The one line that names the OpenVINO build: drop it, so other versions write the same bytes.
    xml = (where / "model.xml").read_text(encoding="utf-8")
    (where / "model.xml").write_text(re.sub(r'\n\s*<info name="OpenVINO Runtime" value="[^"]*" />', "", xml),
                                     encoding="utf-8")
    inputs = {"data": case.data}
    if entry.placement == "inputs":
        inputs.update(split_pads(case))
    for i, arr in enumerate(inputs.values()):
        (where / f"input_{i}.npy").write_bytes(npy_bytes(arr))
    if case.kind == CaseKind.DEFINED:
        assert case.expected is not None  # a defined case has its output
        (where / "output_0.npy").write_bytes(npy_bytes(case.expected))
        return
    outputs = {}
    for key, out in sorted(case.interpretations.items()):
        if out is not None:
            outputs[key] = f"output_{interpretation_file(key)}.npy"
            (where / outputs[key]).write_bytes(npy_bytes(out))
    (where / "expect.json").write_bytes(json_bytes(_expect_doc(entry, spec, outputs)))


def manifest(entries: list[SuiteCase], context: bool = False) -> list[dict]:
    """The MANIFEST rows of the one-node cases, or (``context``) of the context cases, which
    also say their consumer, its attributes, their producer and whether the shape is static."""
    rows = []
    for e in entries:
        c = e.case
        if bool(c.context) != context:
            continue
        row: dict[str, Any] = {"dir": e.path, "spec": c.spec, "mode": c.mode, "dtype": c.dtype, "kind": c.kind,
               "placement": e.placement, "tags": list(c.tags), "origin": c.origin, "case_id": c.id}
        if c.kind == CaseKind.MUST_REJECT:
            row.update(rule=c.rule, reason=c.reason)
        elif c.kind == CaseKind.AMBIGUOUS:
            row["ambiguity"] = c.reason
        if c.context:
            row["context"] = {"consumer": str(c.context.consumer), "attrs": c.context.attrs,
                              "producer": str(c.context.producer), "static_shape": c.context.static_shape,
                              "fanout": c.context.fanout, "mode_attr": c.context.mode_attr,
                              "tolerance": c.context.tolerance}
        rows.append(row)
    return rows


STAGING_MARK = ".padconf-generate-staging"  # what marks a staging folder as generate's own
_FILES_PURPOSE = b"padconf generate FILES.sha256"  # MARK holds FILES.sha256 signed for this
FILES = "FILES.sha256"  # every file generate wrote, with its SHA-256 (``sha256sum -c FILES.sha256`` checks it)
MAX_FILES_BYTES = 1 << 24  # a FILES.sha256 (generated/'s is about 1 MB)
MAX_EXPORTED_BYTES = 1 << 28  # a file found where export-onnx-tests writes one (onnx's are a few KB)


def files_listing(folder: Path) -> str:
    """``FILES.sha256`` of ``folder`` as padconf generate wrote it: each file below it (nested
    ones included), its SHA-256 and path, in path order; not itself, nor the mark that signs it."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        name = path.relative_to(folder).as_posix()
        if name not in (FILES, MARK):
            lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}\n")
    return "".join(lines)


def _listing(text: str) -> dict[str, str]:
    listed: dict[str, str] = {}
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    return listed


def not_written_by_generate(out: Path, new_listing: str = "") -> str | None:
    """The first thing in ``out`` (nested ones included) that the swap would lose and padconf
    cannot prove generate wrote: a file the new output (``new_listing``, its FILES.sha256) does
    not hold byte for byte, unless the previous output's FILES.sha256 lists it with its bytes
    and is signed with this user's key (MARK: a FILES.sha256 planted in a checkout, listing the
    user's own files, signs nothing); a link, anything but a file or folder. None when nothing
    would be lost, or ``out`` is empty. The swap replaces the whole folder."""
    proven = _listing(new_listing)  # the same bytes at the same name: replaced by themselves
    if new_listing:
        proven[FILES] = hashlib.sha256(new_listing.encode("utf-8", "backslashreplace")).hexdigest()
    listing = out / FILES
    if listing.exists() or listing.is_symlink():
        try:
            text = read_text(listing, MAX_FILES_BYTES, follow=False)
            mark = read_text(out / MARK, 1024, follow=False) if (out / MARK).exists() else ""
        except CaseError:
            return FILES
        if signed(_FILES_PURPOSE, text.encode("utf-8", "backslashreplace"), mark):
            proven = {**_listing(text), **proven, FILES: "", MARK: ""}
    for root, folders, files in os.walk(out):  # links are not followed: each is a name below
        for name in sorted(folders + files):
            path = Path(root, name)
            relative = path.relative_to(out).as_posix()
            if path.is_symlink():
                return relative
            if name in folders:
                continue
            if relative in (FILES, MARK) and proven.get(relative) == "":
                continue
            if relative == MARK and path.is_file() and re.fullmatch(rb"[0-9a-f]{64}\n?", path.read_bytes()[:100]):
                continue  # another user's signature (a clone's): no one's data
            if not path.is_file() or relative not in proven:
                return relative
            if hashlib.sha256(path.read_bytes()).hexdigest() != proven[relative]:
                if relative == FILES:
                    return f"{FILES} (not signed by this user's padconf, nor what this generate writes)"
                return f"{relative} (changed since padconf generate wrote it)"
    return None


def generate(out: Path | str, specs: list[Spec], seed: int = 0, per_combo: int = 1,
             jobs: int | None = None, force: bool = False,
             exporters: list[str] | None = None) -> list[SuiteCase]:
    """Write the suite as the folder ``out``, which must be empty, absent or a previous output
    whose every file, nested ones included, its FILES.sha256 proves padconf wrote. The suite is
    written beside it, in a hidden folder, then swapped in by one rename: an interrupted
    generate leaves the previous output whole. ``exporters`` (runtimes such as torch-export):
    the framework documents' cases (torch/Pad-2) exported by each, as graphs with their own
    MANIFEST rows (padconf.generate.exported)."""
    # a framework's document (torch/Pad-2) has no ONNX or OpenVINO test data of its own: only
    # graphs an exporter wrote of its calls
    exporters = list(exporters or [])
    if exporters:
        check_exporters(exporters)
        if not any(spec.domain in FRAMEWORK_DIRS for spec in specs):
            raise PadconfError(f"--exporter: no framework document selected ({', '.join(sorted(FRAMEWORK_DIRS))}): "
                               "nothing to export")
    specs = [spec for spec in specs if spec.domain in KIND_DIRS or exporters and spec.domain in FRAMEWORK_DIRS]
    if not specs:
        raise PadconfError("no spec selected whose family generate writes test data of (ONNX, OpenVINO): "
                           "nothing to generate")
    if per_combo < 0:
        raise PadconfError(f"--per-combo must be >= 0, not {per_combo}")
    out = Path(out).absolute()
    if out.is_symlink():
        raise PadconfError(f"--out {out}: a symbolic link, which padconf generate does not replace")
    if out.exists() and not out.is_dir():
        raise PadconfError(f"--out {out}: not a folder")
    entries = suite_cases(specs, seed, per_combo, jobs, frameworks=bool(exporters))
    by_id = {s.id: s for s in specs}
    make_folder(out.parent)  # no link on the way
    # one generate at a time beside the output: it swaps the whole folder in (the parent is locked,
    # since the swap replaces the folder itself)
    with FolderLock(out.parent, exclusive=True, what="folder, generating into it"):
        for stale in out.parent.glob(f".{out.name}.padconf-generate-*"):  # an interrupted generate's, by its mark
            if stale.is_dir() and not stale.is_symlink() and (stale / STAGING_MARK).is_file():
                shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.padconf-generate-", dir=out.parent))
        (staging / STAGING_MARK).write_text("padconf generate's staging folder: removed by the next generate\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp's 0700 would become the output's
        try:
            for e in entries:
                if e.domain in KIND_DIRS:
                    (write_onnx if e.domain == "onnx" else write_openvino)(e, by_id[e.case.spec], staging)
            doc: dict[str, Any] = {"seed": seed, "per_combo": per_combo, "specs": [s.id for s in specs],
                                   "cases": manifest([e for e in entries if e.domain in KIND_DIRS]),
                                   "context_cases": manifest(entries, context=True)}
            if exporters:
                doc.update(exporters=exporters, exported_cases=write_exported(entries, exporters, staging))
            (staging / "MANIFEST.yaml").write_text(
                yaml_document(doc, sort_keys=True, width=120), encoding="utf-8")
            own = [e for e in entries if e.domain in KIND_DIRS]
            (staging / "README.md").write_text(readme(own, [s for s in specs if s.domain in KIND_DIRS], seed, per_combo)
                                               + _exported_readme(doc), encoding="utf-8")
            if (staging / "openvino").is_dir():
                (staging / "openvino" / "run_openvino.py").write_bytes(OPENVINO_RUNNER.read_bytes())
            (staging / STAGING_MARK).unlink()  # the output lists only what it holds
            listing = files_listing(staging)
            (staging / FILES).write_text(listing, encoding="utf-8")
            if (mark := signature(_FILES_PURPOSE, listing.encode("utf-8", "backslashreplace"))) is not None:
                (staging / MARK).write_text(mark + "\n", encoding="utf-8")
            foreign = None if force or not out.is_dir() else not_written_by_generate(out, listing)
            if foreign:  # the swap replaces the whole folder
                raise PadconfError(f"--out {out}: holds {foreign!r}, which padconf generate cannot prove it wrote "
                                   f"(its {FILES} does not list it, or is not signed by this user's padconf) and "
                                   "would not write again: name an empty folder or a previous output, or --force "
                                   "to replace it whole")
            if out.exists():
                _exchange(staging, out)  # staging now holds the previous output, removed below
            else:
                staging.rename(out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return entries


def _exported_readme(doc: dict) -> str:
    """The README's part on exported graphs (``--exporter``): empty without it."""
    if not doc.get("exporters"):
        return ""
    rows = doc["exported_cases"]
    lines = ["", "## Exported graphs", "",
             "`exported/<exporter>/` holds the graphs each exporter under test wrote of the framework "
             "document's calls (torch/Pad-2: `F.pad`), in onnx's node-test layout; each expected output is "
             "the framework's document's, computed by padconf's reference. MANIFEST.yaml's `exported_cases` "
             "gives each call, the exporter's verdict and its folder (none where the document forbids the call "
             "or the exporter refused it).", "",
             "| exporter | graphs written | verdicts |", "|---|---:|---|"]
    for exporter in doc["exporters"]:
        mine = [r for r in rows if r["exporter"] == exporter]
        verdicts = ", ".join(f"{v} {n}" for v, n in sorted(Counter(r["verdict"] for r in mine).items()))
        lines.append(f"| `{exporter}` | {sum(1 for r in mine if r['dir'])} of {len(mine)} | {verdicts} |")
    return "\n".join(lines) + "\n"


def _exchange(a: Path, b: Path) -> None:
    """Swap the folders ``a`` and ``b`` in one step (Linux's renameat2 RENAME_EXCHANGE); where
    the file system cannot, ``b`` is moved aside to ``a``'s name and ``a`` put in its place."""
    libc = ctypes.CDLL(None, use_errno=True)
    rename_exchange, at_fdcwd = 2, -100
    if libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return
    errno = ctypes.get_errno()
    if errno not in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: no exchange here
        raise OSError(errno, os.strerror(errno), str(b))
    aside = a.with_name(a.name + ".old")
    b.rename(aside)
    a.rename(b)
    aside.rename(a)


def export_onnx_node_tests(out: Path | str, op_type: str = "Pad", force: bool = False) -> list[Path]:
    """onnx's own node tests of ``op_type`` written in onnx's layout, from the installed onnx's
    case definitions (onnx.backend.test.case.node; the wheel ships no data/node folder), the way
    onnx's ``backend-test-tools generate-data`` writes them, into ``out``: a folder padconf
    claims (``claim_folder``: none of the user's files replaced unless ``force``)."""
    import importlib
    import warnings

    from onnx.backend.test.case import node as node_cases
    out = Path(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # importing an op's case module runs its exports (seeded), which register its cases
            importlib.import_module(f"onnx.backend.test.case.node.{op_type.lower()}")
            collected = list(node_cases._NodeTestCases)
        except (ImportError, AttributeError):  # another layout: collect every op's cases
            collected = node_cases.collect_testcases(op_type)
    make_folder(out)
    with FolderLock(out, exclusive=True):
        claim_folder(out, force)
        return _export(out, collected, op_type, force)


_EXPORT_PURPOSE = b"padconf export-onnx-tests FILES.sha256"
EXPORT_SIGNATURE = "FILES.sha256.sig"  # FILES.sha256 of an export signed with the user's key


def _exported_listing(out: Path) -> dict[str, str]:
    """The files a previous export into ``out`` wrote, with their SHA-256, from its FILES.sha256
    where its signature (EXPORT_SIGNATURE) proves this user's padconf wrote it; else none."""
    listing, mark = out / FILES, out / EXPORT_SIGNATURE
    if not (listing.is_file() and mark.is_file()):
        return {}
    text = read_text(listing, MAX_FILES_BYTES, follow=False)
    if not signed(_EXPORT_PURPOSE, text.encode("utf-8", "backslashreplace"), read_text(mark, 1024, follow=False)):
        return {}
    return _listing(text)


def _export(out: Path, collected, op_type: str, force: bool) -> list[Path]:
    """onnx's tests written into ``out``: a file already there is replaced only where it holds the
    bytes written now, or those the previous export's signed FILES.sha256 lists for it (a file
    the user edited since is one line, exit 2, kept, unless ``force``); FILES.sha256 then lists
    every file an export wrote there, signed."""
    files: dict[str, bytes] = {}
    written: list[Path] = []
    for case in collected:
        if case.model is None or [n.op_type for n in case.model.graph.node] != [op_type]:
            continue
        files[f"{case.name}/model.onnx"] = case.model.SerializeToString()
        inputs, outputs = case.data_sets[0]
        for j, arr in enumerate(inputs):
            files[f"{case.name}/test_data_set_0/input_{j}.pb"] = tensor_bytes(arr, case.model.graph.input[j].name)
        for j, arr in enumerate(outputs):
            files[f"{case.name}/test_data_set_0/output_{j}.pb"] = tensor_bytes(arr, case.model.graph.output[j].name)
        written.append(out / case.name)
    proven = _exported_listing(out)
    digests = {name: hashlib.sha256(body).hexdigest() for name, body in files.items()}
    for name in files:
        path = out / name
        if force or path.is_symlink() or not path.is_file():  # a link is replaced, never written through
            continue
        held = hashlib.sha256(read_bytes(path, MAX_EXPORTED_BYTES, follow=False)).hexdigest()
        if held not in (digests[name], proven.get(name)):
            raise PadconfError(f"{out}: {name!r} changed since padconf wrote it (its bytes are not those its {FILES} "
                               "lists): move it, or --force to replace it")
    for name, body in files.items():
        make_folder((out / name).parent)  # an existing folder: nothing written through a link in it
        write_atomically(out / name, body)
    kept = {name: digest for name, digest in proven.items() if name not in files and (out / name).is_file()}
    listing = "".join(f"{digest}  {name}\n" for name, digest in sorted({**kept, **digests}.items()))
    write_atomically(out / FILES, listing)
    if (mark := signature(_EXPORT_PURPOSE, listing.encode("utf-8", "backslashreplace"))) is not None:
        write_atomically(out / EXPORT_SIGNATURE, mark + "\n")
    return written
