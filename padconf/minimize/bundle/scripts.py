"""The short repro in a runtime's own API a bundle carries, assembled for its minimal case:
``repro_<runtime>.py`` (padconf.minimize.bundle.repro_runtime's script, or for a graph rewriter
repro_rewriter's), with the case's arrays spelt as exact literals or read from the bundle's
.npy files, and the runtime set up as padconf ran it."""
from __future__ import annotations

import re

import numpy as np
import onnx

from padconf.adapters import adapter_class, get_adapter, registry, split_variant
from padconf.cases.case import Case, CaseKind
from padconf.cases.onnx_model import build_model, feeds, ir_version
from padconf.core import escape
from padconf.core.dtypes import SUB_BYTE_BITS
from padconf.core.vocabulary import Placement
from padconf.judging.verdicts import Difference
from padconf.minimize.bundle import model_source, repro_rewriter, repro_runtime
from padconf.spec.loader import parse_spec_id


def configuration(runtime: str) -> dict[str, object]:
    """How padconf set ``runtime`` up, in the runtime's own terms ({}: its defaults); a
    module:Class adapter is not imported here, outside its worker."""
    return get_adapter(runtime).configuration() if split_variant(runtime)[0] in registry() else {}



# ---------------------------------------------------------------- repro_<runtime>.py

SHOWN_INLINE = 24  # elements: larger arrays are read from the bundle's .npy files


def api_script_name(runtime: str) -> str:
    return f"repro_{re.sub(r'[^A-Za-z0-9_]+', '_', runtime).strip('_')}.py"  # a variant's brackets too


def _scalar_literal(v) -> str:
    if isinstance(v, complex):  # repr gives "(nan+0j)", which names nothing a script defines
        return f"complex({_scalar_literal(v.real)}, {_scalar_literal(v.imag)})"
    if isinstance(v, float) and not np.isfinite(v):
        return 'float("nan")' if np.isnan(v) else ('-' if v < 0 else '') + 'float("inf")'
    return repr(v)


def _literal(arr, file: str) -> str:
    """Source text giving ``arr``: inline when small and exact (every bit, NaN payloads too), else
    read from the bundle's ``file``."""
    arr = np.asarray(arr)
    if arr.size <= SHOWN_INLINE:
        flat = ", ".join(_scalar_literal(v) for v in arr.reshape(-1).tolist())
        text = f'np.array([{flat}], dtype="{arr.dtype.name}").reshape({list(arr.shape)})'
        try:
            back = eval(text, {"np": np})  # noqa: S307 -- padconf's own text of numbers, checked bit for bit
        except (NameError, SyntaxError, TypeError, ValueError, OverflowError):  # not exact text: the file then
            back = None
        if back is not None and back.dtype == arr.dtype and back.tobytes() == arr.tobytes():
            return text
    return f'np.load(os.path.join(HERE, "{file}"))'


def _expected_file(case: Case, i: int) -> str:
    """The .npy file of the ``i``-th allowed output, as _write_expected names it."""
    return "expected.npy" if case.kind == CaseKind.DEFINED else f"expected_{i}.npy"


def _bitwise(row: dict | None) -> bool:
    """Whether a repro compares bit for bit: the failure is a changed NaN payload or zero sign."""
    return (row or {}).get("difference") == Difference.NAN_PAYLOAD_OR_ZERO_SIGN


def _allowed(case: Case) -> list[np.ndarray | None]:
    """The outputs the specification allows (None: an error)."""
    if case.kind == CaseKind.DEFINED:
        return [case.expected]
    if case.kind == CaseKind.MUST_REJECT:
        return [None]
    return [out for _, out in sorted(case.interpretations.items())]


def api_script(case: Case, placement: Placement, runtime: str, heading: str, row: dict | None = None,
               graph: onnx.ModelProto | None = None) -> escape.PySource | None:
    """repro_<runtime>.py for ``case`` (padconf.minimize.bundle.repro_runtime), or None where the
    runtime has no short one here (its adapter supplies none: Adapter.repro), or numpy's own dtypes
    cannot carry the data (bfloat16, float8, int4 ...) and the runtime has no tensors of its own
    that can (StandaloneRepro.own_tensor): the generic checker handles those.
    ``row``, the failure's: a crash or hang runs in a child process; a NaN payload's is compared
    bit for bit. ``graph``: the bundle's ONNX model, where it has one (built here otherwise)."""
    adapter = adapter_class(runtime)()
    repro = adapter.repro
    foreign = case.data.dtype.isbuiltin != 1  # an ml_dtypes type: bfloat16, float8, int4 ...
    own_tensor = foreign and repro is not None and repro.own_tensor is not None and repro.own_graph
    if repro is None or (foreign and not own_tensor):
        return None
    setup = repro_setup(runtime, case, row)
    if repro.rewrites or case.context is not None:
        graph = graph if graph is not None else build_model(case, placement)
        return (_rewriter_script if repro.rewrites else _context_script)(repro, case, placement, runtime, heading,
                                                                          row, setup, graph)
    domain, version = parse_spec_id(case.spec)
    own = repro.own_graph
    if own:
        operands = adapter.own_operands(case)
    else:
        operands = dict(feeds(case, Placement.INPUTS))
    fed = {"inputs": list(operands), "initializers": ["data"], "folded": []}[placement]
    allowed = _allowed(case)

    def literal(name: str, arr: np.ndarray) -> str:
        if own_tensor and arr.dtype == case.data.dtype:  # the runtime's own tensor (numpy has no such type)
            assert repro is not None and repro.own_tensor is not None
            return repro.own_tensor(arr, case.dtype)
        return _literal(arr, f"{name}.npy" if name in fed or name == "data" else "")

    arrays = [*(repro.imports if own_tensor else ()),
              *(f"{name} = {literal(name, arr)}" for name, arr in operands.items())]
    if own_tensor:  # compared as the codes of the elements, which the runtime's run gives back
        width = 8 * case.data.dtype.itemsize
        mask = (1 << SUB_BYTE_BITS.get(case.dtype, width)) - 1
        allowed = [None if out is None else out.view(f"uint{width}") & mask for out in allowed]
    arrays.append(_expected_line(case, allowed, f"; {case.dtype} elements as their codes" if own_tensor else ""))
    names = "{" + ", ".join(f'"{name}": {name}' for name in (operands if own else fed)) + "}"
    if own:
        build: list[str] = []
        call = f"{repro.run.__name__}({names}, {fed!r}, {case.mode!r}, {version}, {setup!r})"
    else:
        if version <= 2:
            attributes: dict = {"mode": case.mode, "paddings" if version == 1 else "pads": [int(p) for p in case.pads]}
            if case.constant_value is not None and np.size(case.constant_value) == 1:  # the attribute is one float
                attributes["value"] = float(np.asarray(case.constant_value).astype(np.float64).reshape(()))
            inputs = ["data"]
        else:
            attributes = {"mode": case.mode}
            inputs = ["data", "pads", "constant_value" if "constant_value" in operands else "",
                      *(["axes"] if "axes" in operands else [])]
            while inputs[-1] == "":
                inputs.pop()
        # stamped with the opset a policy supports, where the experiment showed the bug there too
        opset = ((row or {}).get("experiments") or {}).get("beyond_policy", {}).get("opset", version)
        build = repro_runtime.onnx_model_lines(operands, inputs, fed,
                                           {k: _scalar_literal(v) for k, v in attributes.items()}, opset,
                                           ir_version(opset, case.dtype))
        call = f"{repro.run.__name__}(model, {names}, {setup!r})"
    return repro_runtime.script(repro, runtime, heading, arrays, build, call, allowed, bitwise=_bitwise(row))


def repro_setup(runtime: str, case: Case, row: dict | None) -> dict[str, object]:
    """What the repro passes the runtime's StandaloneRepro.run: the runtime's set-up as padconf
    ran it ({}: its defaults); for a graph rewriter, the passes (or conversion) this case's
    failure needs (Adapter.repro_configuration: the pass its note names). A module:Class adapter
    is not imported here, outside its worker: its defaults."""
    if split_variant(runtime)[0] not in registry():
        return {}
    return get_adapter(runtime).repro_configuration(case, (row or {}).get("note"))


def _expected_line(case: Case, allowed: list[np.ndarray | None], note: str = "") -> str:
    return ("expected = [" + ", ".join("None" if out is None else _literal(out, _expected_file(case, i))
                                       for i, out in enumerate(allowed))
            + "]  # what the specification allows (None: an error)" + note)


def _rewriter_script(repro, case: Case, placement: Placement, runtime: str, heading: str, row: dict | None,
                     setup: dict, graph: onnx.ModelProto) -> escape.PySource:
    """repro_<rewriter>.py (padconf.minimize.bundle.repro_rewriter): the case's model, plain or with its
    context, rewritten by the rewriter's own call, both models run on the control runtime
    whose answer the failure is."""
    arrays, build, names = model_source.model_lines(graph, feeds(case, placement), _literal)
    allowed = _allowed(case)
    arrays.append(_expected_line(case, allowed))
    return repro_rewriter.script(repro, runtime, heading, arrays, build, names, setup,
                                 get_adapter(runtime).exhibited_on((row or {}).get("note")), allowed,
                                 bitwise=_bitwise(row),
                                 tolerance=case.context.tolerance if case.context else None)


def _context_script(repro, case: Case, placement: Placement, runtime: str, heading: str, row: dict | None,
                    setup: dict, graph: onnx.ModelProto) -> escape.PySource:
    """repro_<runtime>.py for a context case: its whole graph spelled with onnx's helper
    (padconf.minimize.bundle.model_source), run as padconf ran it; a Conv or AveragePool consumer's
    output compared within the case's tolerance."""
    arrays, build, names = model_source.model_lines(graph, feeds(case, placement), _literal)
    allowed = _allowed(case)
    arrays.append(_expected_line(case, allowed))
    assert case.context is not None
    call = f"{repro.run.__name__}(model, {names}, {setup!r})"
    return repro_runtime.script(repro, runtime, heading, arrays, build, call, allowed, bitwise=_bitwise(row),
                                tolerance=case.context.tolerance)

