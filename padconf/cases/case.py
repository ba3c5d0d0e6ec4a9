"""One Pad case: the inputs a runtime gets, the spec version it is judged by, and what that
spec says of it (its classification). Cases round-trip through JSON losslessly."""
from __future__ import annotations

import hashlib
import json
import math
import reprlib
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import onnx

from padconf.cases.context import Consumer, Context, check_context
from padconf.core.dtypes import (
    ALL_DTYPES,
    MAX_ARRAY_BYTES,
    ArrayBudget,
    OverBudget,
    decode_array,
    dtype_name,
    encode_array,
    from_raw,
    is_integer,
    raw_array,
)
from padconf.core.errors import CaseError, SpecError
from padconf.core.untrusted import MAX_NPY_DIMS
from padconf.core.vocabulary import Placement, Word
from padconf.spec.loader import parse_spec_id
from padconf.spec.reference import MAX_WORK_BYTES, MODES, implied_shape, implied_work
from padconf.spec.reference import pad as reference_pad


class CaseKind(Word):
    """What a case's spec says of it (its classification)."""

    DEFINED = "defined"
    MUST_REJECT = "must-reject"
    AMBIGUOUS = "ambiguous"
    # The output exceeds the reference's allocation bound: padconf's limit, not the spec's, so the
    # case is neither defined (padconf cannot say the output) nor must-reject.
    TOO_LARGE = "too-large-to-check"


KINDS = tuple(CaseKind)
# The arrays of one case in all, decoded: its data and expected output, or its data and three
# interpretations' outputs, each at the per-array bound; pads and axes count 8 bytes an entry.
MAX_CASE_BYTES = 4 * MAX_ARRAY_BYTES
# The arrays of every case one file from others holds (cases.jsonl, a gate's shards, the example
# database), decoded: what a reader charges its ArrayBudget with.
MAX_CASES_BYTES = 1 << 29
# The work every case of one input implies together (reference.implied_work: the outputs, and the
# reference's index maps where it checks them), across every file or folder a command reads:
# one case at the reference's own bound fits twice. 40 tiny test folders each padding to 2**26
# elements passed every bound a file had and then timed out, one after another, in the runtime.
MAX_INPUT_WORK_BYTES = 2 * MAX_WORK_BYTES
# A case's edge classes (edge_classes names fewer than 20, each of fewer than 40 characters): a
# case file's line with 2 million tags took report --html 1.2 GB
MAX_TAGS, MAX_TAG_CHARS = 64, 200
# A case's pads and axes entries: two pads an axis for data of at most MAX_NPY_DIMS axes, and room
# for a must-reject case's extra ones. Each entry costs Python work in every stage (classify, the
# reference, each row): a test folder of 3 million repeated axes took 148 s and 2.1 GB (attack III)
MAX_PADS_ENTRIES, MAX_AXES_ENTRIES = 1024, 512


def check_operand_lengths(pads: int, axes: int, where: str) -> None:
    """Refuse a case of more than MAX_PADS_ENTRIES pads or MAX_AXES_ENTRIES axes, counted before
    either is turned into Python numbers: every reader of a case from others calls it."""
    if pads > MAX_PADS_ENTRIES or axes > MAX_AXES_ENTRIES:
        raise CaseError(f"{where}: {pads} pads and {axes} axes; a case has at most {MAX_PADS_ENTRIES} pads and "
                        f"{MAX_AXES_ENTRIES} axes (data of at most {MAX_NPY_DIMS} axes takes {2 * MAX_NPY_DIMS})")


def element_bytes(case: Case) -> int:
    """An element's bytes as the case's arrays hold it: a string's are its longest text's (UTF-8,
    its value's too) beside its 8-byte reference, since padding copies the text (one string of a
    million characters padded 500 times took 1 GB, counted as 8 bytes an element: attack round VI)."""
    if case.data.dtype != object:
        return case.data.dtype.itemsize
    texts = [*case.data.reshape(-1).tolist(),
             *([] if case.constant_value is None else np.asarray(case.constant_value).reshape(-1).tolist())]
    return 8 + max((len(str(t).encode("utf-8", "surrogatepass")) for t in texts), default=0)


def case_work(case: Case) -> int:
    """The bytes ``case`` implies (reference.implied_work of its data's shape, pads and axes, at
    element_bytes an element)."""
    return implied_work(case.data.shape, element_bytes(case), case.pads, case.mode, case.axes)


class InputBudget(ArrayBudget):
    """What the cases of one whole input (a run's cases.jsonl, the test folders a command names,
    a gate's shards, the example database's replay, a run minimize reads) may take together: the
    bytes of their arrays decoded (MAX_CASES_BYTES, the ArrayBudget each case's own counts
    against), and the work they imply (MAX_INPUT_WORK_BYTES, ``take_work``), each counted as the
    case is read, before padconf's reference or any runtime sees it."""

    def __init__(self, what: str):
        super().__init__(MAX_CASES_BYTES, f"the cases of {what}")
        self.work_left = MAX_INPUT_WORK_BYTES

    def take_work(self, case: Case) -> None:
        shape = implied_shape(case.data.shape, case.pads, case.axes)
        text = 0 if shape is None or case.data.dtype != object else math.prod(shape) * element_bytes(case)
        if text > MAX_ARRAY_BYTES:  # no string array of that size passes between padconf's processes
            raise OverBudget(f"a string output of {text} bytes implied, more than the {MAX_ARRAY_BYTES} an array "
                             "may hold", self)
        work = case_work(case)
        if work > self.work_left:
            raise OverBudget(f"{self.what} imply more than {MAX_INPUT_WORK_BYTES} bytes of work together "
                             f"(their outputs and padconf's index maps; this one {work})", self)
        self.work_left -= work
# what a case runs: Pad, its data through Identity (Case.control), its data and constant value
# flattened, concatenated and tiled (Case.movement_control), a Pad-1/2 value attribute through
# LeakyRelu's alpha (Case.attribute_control), or a context's consumer alone on the padded data,
# of the data's rank or of none (Case.consumer_control, Case.unranked_consumer_control)
CONSUMER_OPS = ("Consumer", "UnrankedConsumer")
OPS = ("Pad", "Identity", "Concat", "LeakyRelu", *CONSUMER_OPS)
MOVEMENT_OPS = ("Reshape", "Concat", "Tile")
MOVEMENT_OPSET = 7  # the first opset with Reshape's shape input (5), Concat's axis (4) and Tile's repeats (6)


def movement_opset(version: int) -> int:
    """The opset of an ONNX case's movement control (Case.movement_control): the case's own, or
    MOVEMENT_OPSET where that lacks the ops' input forms (Pad-1/2's opsets)."""
    return max(version, MOVEMENT_OPSET)


def _onnx_lists(op: str, opset: int, dtype: str) -> bool:
    """Whether ``op``'s first type constraint, at ``opset`` in onnx's own schema, lists ``dtype``."""
    return f"tensor({dtype})" in onnx.defs.get_schema(op, opset, "").type_constraints[0].allowed_type_strs


@dataclass
class Case:
    """Inputs in ONNX's layout: ``pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]`` over
    ``axes`` (all axes when None); OpenVINO adapters split it into pads_begin / pads_end.

    ``constant_value`` is a 0-d array of the data's dtype, or None when the input is omitted.
    Classification: ``kind`` is one of KINDS; ``expected`` is the output for a defined case;
    ``reason`` is the rule a must-reject case breaks or the ambiguity an ambiguous case hits;
    ``rule`` names that rule (a key of the spec file) for a must-reject case; ``interpretations``
    maps each interpretation of that ambiguity to its output (None: it rejects). ``any_answer_conforms``: the case
    hits a point whose document says the behaviour is undefined, so any output or refusal
    conforms (a crash or a hang does not).
    """

    spec: str
    data: np.ndarray
    pads: list[int]
    mode: str = "constant"
    constant_value: np.ndarray | None = None
    axes: list[int] | None = None
    pads_type: str = "int64"
    axes_type: str = "int64"
    kind: CaseKind = CaseKind.DEFINED
    expected: np.ndarray | None = None
    reason: str | None = None
    interpretations: dict[str, np.ndarray | None] = field(default_factory=dict)
    rule: str | None = None
    any_answer_conforms: bool = False
    # "Identity": the case's data through an Identity model instead of Pad, on the same runtime
    # and placement: the control that tells a Pad bug from one of the runtime at large
    op: str = "Pad"
    origin: str = "generated"  # e.g. "example:example_2_reflect", "hypothesis"
    tags: list[str] = field(default_factory=list)  # edge classes this case exercises
    # the Pad's neighbourhood: consumer, producer of pads, static shape; None: one node
    context: Context | None = None

    @property
    def dtype(self) -> str:
        return dtype_name(self.data.dtype)

    @property
    def graph(self) -> str | None:
        """A context case's model in words ("Pad(edge) before Slice": Context.graph); None for
        the one-node Pad."""
        return None if self.context is None else self.context.graph(self.mode)

    @cached_property
    def id(self) -> str:
        """Content hash of the inputs and spec: equal cases get equal ids in every run, whatever
        the JSON encoding of arrays. Computed once: a case's inputs are not changed in place
        (``with_`` makes a new case). A case read from a file must carry its content's id
        (``from_json``): one copied under a made-up id would count as another case."""
        doc = self.inputs_json(lambda arr, dtype: _fingerprint(arr))  # arrays by content, not encoded
        digest = hashlib.sha1(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:12]
        return f"{self.spec}:{self.mode}:{self.dtype}:{digest}"

    def inputs_json(self, encode=encode_array) -> dict:
        return {
            "spec": self.spec,
            "data": encode(self.data, self.dtype),
            "pads": [int(p) for p in self.pads],
            "mode": self.mode,
            "constant_value": None if self.constant_value is None else encode(self.constant_value, self.dtype),
            "axes": None if self.axes is None else [int(a) for a in self.axes],
            "pads_type": self.pads_type,
            "axes_type": self.axes_type,
            **({"op": self.op} if self.op != "Pad" else {}),  # a Pad case's id stays what it was
            **({"context": self.context.to_json()} if self.context is not None else {}),
        }

    @cached_property
    def wire(self) -> tuple[str, bytes]:
        """The inputs as one padconf process hands them to another (a worker): ``inputs_json``'s
        document as JSON text with the data and constant value as raw_array headers, and their
        raw bytes, data first; ``from_wire`` reads it back. Made once: a worker that dies is
        resent every case after it."""
        doc = self.inputs_json(lambda arr, dtype: raw_array(arr, dtype))
        raw = b"".join(doc[k][1] for k in ("data", "constant_value") if doc[k] is not None)
        for k in ("data", "constant_value"):
            if doc[k] is not None:
                doc[k] = doc[k][0]
        return json.dumps(doc), raw

    @classmethod
    def from_wire(cls, doc: dict, take) -> Case:
        """The case ``wire`` sent, its raw bytes from ``take(n)``. The document is one padconf's
        own Case wrote in the process that sent it (whose reader checked what came from files):
        its types are not checked again, but each array's bytes are checked against its shape
        and bounded (dtypes.from_raw); a malformed one is a CaseError."""
        mine = ArrayBudget(MAX_CASE_BYTES, "the case's arrays")
        try:
            value = doc.get("constant_value")
            return cls(spec=doc["spec"], data=from_raw(doc["data"], take, mine), pads=doc["pads"], mode=doc["mode"],
                       constant_value=None if value is None else from_raw(value, take, mine), axes=doc.get("axes"),
                       pads_type=doc["pads_type"], axes_type=doc["axes_type"], op=doc.get("op", "Pad"),
                       context=None if doc.get("context") is None else Context.from_json(doc["context"], mine))
        except CaseError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CaseError(f"malformed case: {type(exc).__name__}: {exc}") from None

    def to_json(self) -> dict:
        doc = self.inputs_json()
        doc.update(
            id=self.id,
            kind=self.kind,
            expected=None if self.expected is None else encode_array(self.expected, self.dtype),
            reason=self.reason,
            rule=self.rule,
            any_answer_conforms=self.any_answer_conforms,
            interpretations={k: None if v is None else encode_array(v, self.dtype)
                        for k, v in self.interpretations.items()},
            origin=self.origin,
            tags=list(self.tags),
        )
        return doc

    @classmethod
    def from_json(cls, doc: dict, budget: ArrayBudget | None = None) -> Case:
        """The case ``doc`` (``to_json``'s, or ``inputs_json``'s) describes. Run directories and
        case files come from others: a key of another type is a CaseError naming it, and every
        array the case carries (data, constant value, pads, axes, expected output and each
        interpretation's) counts against MAX_CASE_BYTES, and against ``budget`` (a whole file's)
        where given, before it is decoded."""
        check_types(doc)
        check_operand_lengths(len(doc.get("pads") or ()), len(doc.get("axes") or ()), "malformed case")
        mine = ArrayBudget(MAX_CASE_BYTES, "the case's arrays", budget)
        try:
            mine.take(8 * (len(doc.get("pads") or ()) + len(doc.get("axes") or ())))  # int64 in the models
            dec = lambda v: None if v is None else decode_array(v, mine)  # noqa: E731
            case = cls(
                spec=doc["spec"],
                data=decode_array(doc["data"], mine),
                pads=list(doc["pads"]),
                mode=doc["mode"],
                constant_value=dec(doc.get("constant_value")),
                axes=None if doc.get("axes") is None else list(doc["axes"]),
                pads_type=doc.get("pads_type", "int64"),
                axes_type=doc.get("axes_type", "int64"),
                op=doc.get("op", "Pad"),
                kind=_kind(doc.get("kind", CaseKind.DEFINED)),
                expected=dec(doc.get("expected")),
                reason=doc.get("reason"),
                rule=doc.get("rule"),
                any_answer_conforms=bool(doc.get("any_answer_conforms", False)),
                interpretations={k: dec(v) for k, v in (doc.get("interpretations") or {}).items()},
                origin=doc.get("origin", "generated"),
                tags=list(doc.get("tags", [])),
                context=None if doc.get("context") is None else Context.from_json(doc["context"], mine),
            )
        except CaseError:
            raise
        except KeyError as exc:
            raise CaseError(f"malformed case: no {exc}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise CaseError(f"malformed case: {type(exc).__name__}: {exc}") from None
        if case.context is not None:
            try:
                domain, version = parse_spec_id(case.spec)
            except SpecError as exc:
                raise CaseError(str(exc)) from None
            check_context(case.context, case.data.ndim, version if domain == "onnx" else onnx.defs.onnx_opset_version(),
                          implied_shape(case.data.shape, case.pads, case.axes), case.kind == CaseKind.DEFINED)
        if isinstance(budget, InputBudget):
            budget.take_work(case)
        if doc.get("id") is not None and doc["id"] != case.id:
            raise CaseError(f"case id {reprlib.repr(doc['id'])} is not the id of its content ({case.id}): "
                            "a case copied under another id")
        return case

    def same_inputs(self, other: Case) -> bool:
        return self.inputs_json() == other.inputs_json()

    def with_(self, **changes) -> Case:
        return replace(self, **changes)

    def control(self) -> Case:
        """The same data through Identity: a defined case whose output is the data. But an ONNX
        case whose dtype its version's type list lacks, where Identity's list at that opset lacks
        it too, makes an Identity model that breaks the same rule: a must-reject control, which
        a runtime that checks no type list accepts as well (its lenience is not Pad-specific)."""
        control = self.with_(op="Identity", kind=CaseKind.DEFINED, expected=self.data, reason=None, rule=None,
                             interpretations={}, any_answer_conforms=False, origin=f"control:{self.id}",
                             context=None)
        domain, version = parse_spec_id(self.spec)
        if self.rule == "dtypes" and domain == "onnx":
            if not _onnx_lists("Identity", version, self.dtype):
                return control.with_(kind=CaseKind.MUST_REJECT, expected=None, rule="dtypes",
                                     reason=f"dtype {self.dtype} is not in Identity's type list at this opset")
        return control

    def movement_control(self) -> Case | None:
        """The values Pad moves, through data-movement ops of the same dtype that touch every
        element: the data and the constant value, each flattened (Reshape to [-1]), concatenated
        (Concat, its second operand the data again where there is no constant value of the dtype),
        then tiled twice (Tile), fed or baked in as the Pad's are. Where a runtime mishandles the
        values themselves (narrows a folded 64-bit constant, runs f64 as f32, corrupts packed
        sub-byte constants, gives unsigned data a signed type) this fails as the Pad does, which
        Identity, a copy of the input's buffer a compiler may forward, cannot show. Where the
        spec's Pad takes its value as an attribute (ONNX Pad-1 and Pad-2: attribute_control) the
        data's values alone, at movement_opset (the first opset with these ops' input forms). Empty
        data moves a zero of its dtype instead. None where Reshape, Concat or Tile at that opset
        does not list the dtype."""
        domain, version = parse_spec_id(self.spec)
        if domain == "onnx" and not all(_onnx_lists(op, movement_opset(version), self.dtype) for op in MOVEMENT_OPS):
            return None
        data = np.asarray(self.data)
        if not data.size:  # no data to move: the zeros a constant Pad writes, as many (audit IV: OpenVINO's
            # folded float4 Pad on an empty axis crashes as its Tile of as many values does)
            data = np.zeros(1 if self.expected is None else max(1, np.asarray(self.expected).size), data.dtype)
        flat = data.reshape(-1)
        value = self.constant_value
        if domain == "onnx" and version <= 2:  # Pad-1/2's value is an attribute: attribute_control's
            value = None
        if value is not None and np.asarray(value).dtype == self.data.dtype:
            second = np.asarray(value).reshape(-1)
        else:  # the data's alone, twice: Concat has a second operand to copy from
            value, second = None, flat
        return self.with_(op="Concat", data=data, constant_value=value, axes=None, mode="constant",
                          kind=CaseKind.DEFINED,
                          expected=np.tile(np.concatenate([flat, second]), 2), reason=None, rule=None,
                          interpretations={}, any_answer_conforms=False, origin=f"control:{self.id}", context=None)

    def attribute_control(self) -> Case | None:
        """ONNX Pad-1/2's ``value``, a float attribute the runtime builds a constant from: the same
        float through another op's float attribute, LeakyRelu's ``alpha``, on a tensor of -1s of
        the data's dtype (every element -alpha): where the runtime's frontend mishandles such an
        attribute (NaN, infinity), this fails as the Pad does, in any mode: the model carries the
        attribute, and the frontend builds its constant, whether or not the mode reads it (audit
        IV: OpenVINO refused an edge Pad-2's value=nan as it refuses LeakyRelu's). None for other
        specs, or where the case gives no value."""
        domain, version = parse_spec_id(self.spec)
        if domain != "onnx" or version > 2 or self.constant_value is None or self.data.dtype.kind != "f":
            return None
        with np.errstate(invalid="ignore", over="ignore"):
            alpha = np.float32(np.asarray(self.constant_value).astype(np.float64))
            expected = np.full(max(1, min(self.data.size, 4)), -alpha).astype(self.data.dtype)
        return self.with_(op="LeakyRelu", data=-np.ones(expected.shape, self.data.dtype), pads=[], axes=None,
                          mode="constant", kind=CaseKind.DEFINED, expected=expected, reason=None, rule=None,
                          interpretations={}, any_answer_conforms=False, origin=f"control:{self.id}", context=None)

    def consumer_control(self, reading: tuple[np.ndarray, np.ndarray | None] | None = None) -> Case | None:
        """A context case's consumer alone on the values its Pad gives it, with no Pad in the
        graph (op "Consumer": the padded data straight into the consumer, the same
        neighbourhood): where the runtime's consumer fails on them alone (onnx's evaluator's
        MaxPool on some windows; OpenVINO's Conv in bf16), the context case's failure is not the
        Pad's. A defined case's values are its reference's; an ambiguous case's are one
        reading's, given as ``reading`` (the Pad's output, the consumer's after it:
        classify.consumer_readings). None for a case without a consumer, or neither."""
        if self.context is None or self.context.consumer == Consumer.NONE or self.op != "Pad":
            return None
        if reading is None:
            if self.kind != CaseKind.DEFINED:
                return None
            reading = reference_pad(self.data, self.pads, self.mode, self.constant_value, self.axes), self.expected
        given, expected = reading
        return self.with_(op="Consumer", data=given, pads=[0] * len(self.pads), constant_value=None, axes=None,
                          kind=CaseKind.DEFINED, expected=expected, reason=None, rule=None, interpretations={},
                          any_answer_conforms=False, origin=f"control:{self.id}")

    def unranked_consumer_control(self) -> Case | None:
        """``consumer_control()`` after a Reshape to a shape fed at run time (op
        "UnrankedConsumer"), which onnx's shape inference gives no rank: the control of a case
        whose Pad's output it gives none (an ``axes`` input fed at run time). An importer that
        mishandles a tensor of unknown rank (IREE's reads it as rank 0, and its Conv lowering
        aborts) fails there too, and the failure is not the Pad's (minimize's experiment:
        padconf.minimize.probes.evidence.computing_controls)."""
        consumer = self.consumer_control()
        return None if consumer is None else consumer.with_(op="UnrankedConsumer")

    def index_controls(self) -> list[tuple[str, Case]]:
        """The Pad's integer operands (its pads, and its axes where it has them), each as the data
        of its own values' control (``movement_control``: its values as a tensor of its own type,
        flattened, concatenated and tiled, fed or baked in as the Pad's are): where the runtime
        mishandles such a tensor on its own (OpenVINO's CPU plugin computes int64 in 32 bits,
        openvinotoolkit/openvino#35823), the Pad's failure on pads beyond 2^31 is that, which a
        control of the data alone never carries. None for an operand that is empty (its empty
        tensor's control below), absent, or an attribute (ONNX Pad-1/2)."""
        domain, version = parse_spec_id(self.spec)
        if domain == "onnx" and version <= 2:
            return []
        found = []
        for operand, values, dtype in (("pads", self.pads, self.pads_type), ("axes", self.axes, self.axes_type)):
            if values is None or not len(values):
                continue
            try:
                held = np.asarray([int(v) for v in values], dtype=np.dtype(dtype))
            except (OverflowError, TypeError, ValueError):  # values its type cannot hold: no such tensor
                continue
            control = self.with_(data=held, pads=[0, 0], axes=None, constant_value=None, mode="constant",
                                 context=None).movement_control()
            if control is not None and self.context is not None and self.context.producer.is_constant:
                # its values from the Constant nodes the Pad's come from, written alike: TVM's
                # converter fails a Constant of value_ints feeding any op (audit VI's tvm 05)
                control = control.with_(context=Context(Consumer.NONE, producer=self.context.producer))
            if control is not None:
                found.append((operand, control))
        return found

    def controls(self, placement: Placement) -> list[tuple[str, Case, Placement]]:
        """(operand, control case, placement) for each control experiment: the data's
        (``control()``, in ``placement``); the values' (``movement_control()``, in ``placement``);
        and where ``placement`` bakes the pads or axes into
        the model (initializers, folded) as a tensor (ONNX Pad-11 and later; OpenVINO's
        pads_begin / pads_end) and that tensor is empty, the same empty tensor through Identity,
        baked too (folded): runtimes mishandle empty constants (OpenVINO's ONNX frontend reads
        one as a scalar), which the data's control cannot show where the data is not empty;
        for a context case, its consumer alone (``consumer_control()``); and the pads' and axes'
        own values through the same data-movement ops (``index_controls()``)."""
        found = [("data", self.control(), placement)]
        movement = self.movement_control()
        if movement is not None:
            found.append(("values", movement, placement))
        attribute = self.attribute_control()
        if attribute is not None:
            found.append(("attribute", attribute, placement))
        consumer = self.consumer_control()
        if consumer is not None:
            found.append(("consumer", consumer, placement))
        found += [(f"{operand} values", control, placement) for operand, control in self.index_controls()]
        domain, version = parse_spec_id(self.spec)
        if placement == Placement.INPUTS or (domain == "onnx" and version <= 2):
            return found
        for operand, values, dtype in (("pads", self.pads, self.pads_type), ("axes", self.axes, self.axes_type)):
            if values is not None and not len(values):
                empty = np.zeros(0, dtype=np.dtype(dtype))
                found.append((operand, self.with_(data=empty, pads=[], axes=None, constant_value=None,
                                                  mode="constant").control(), Placement.FOLDED))
        return found


# a case document's keys that must hold text, and lists of integers (those marked True may hold
# null instead); the index inputs' types are integer dtypes
_TEXT_KEYS = {"spec": False, "mode": False, "origin": False, "reason": True, "rule": True, "id": True}
_INT_LISTS = {"pads": False, "axes": True}
_INDEX_TYPE_KEYS = ("pads_type", "axes_type")


MAX_MODE_CHARS = 64  # a must-reject case's mode, as a test folder's model may spell it


def check_mode(mode, kind, where: str) -> None:
    """A case's or a row's ``mode``: one of the modes padconf knows (the spec's, or for a
    must-reject case one the version lacks), or, for a must-reject case only, printable text of
    at most MAX_MODE_CHARS (a test folder's model may name a mode no spec has). CaseError else."""
    if mode in MODES:
        return
    if kind == CaseKind.MUST_REJECT and isinstance(mode, str) and len(mode) <= MAX_MODE_CHARS and mode.isprintable():
        return
    raise CaseError(f"{where}: mode {reprlib.repr(mode)} is not one of {', '.join(MODES)}")


def check_types(doc: dict) -> None:
    """The keys of a case's JSON ``doc`` of the types, vocabularies and bounds a case takes
    (Case.from_json checks them first); CaseError naming the first that is not."""
    if not isinstance(doc, dict):
        raise CaseError(f"malformed case: {type(doc).__name__}, not a JSON object")

    def fail(key: str, what: str) -> None:
        raise CaseError(f"malformed case: {key} {reprlib.repr(doc[key])} is not {what}")

    for key, nullable in _TEXT_KEYS.items():
        if key in doc and not (isinstance(doc[key], str) or (nullable and doc[key] is None)):
            fail(key, "text" + (" or null" if nullable else ""))
    for key, nullable in _INT_LISTS.items():
        if key in doc and not (isinstance(doc[key], list) and all(type(n) is int for n in doc[key])
                               or (nullable and doc[key] is None)):
            fail(key, "a list of integers" + (" or null" if nullable else ""))
    for key in _INDEX_TYPE_KEYS:
        if key in doc and not (doc[key] in ALL_DTYPES and is_integer(doc[key])):
            fail(key, "an integer dtype")
    if isinstance(doc.get("spec"), str):
        try:  # a worker handed "../x" would die describing itself, read as the runtime being unavailable
            parse_spec_id(doc["spec"])
        except SpecError as exc:
            raise CaseError(f"malformed case: {exc}") from None
    if "op" in doc and doc["op"] not in OPS:
        fail("op", f"one of {OPS}")
    if "mode" in doc:
        check_mode(doc["mode"], doc.get("kind"), "malformed case")
    tags = doc.get("tags", [])
    if not isinstance(tags, list) or len(tags) > MAX_TAGS \
            or not all(isinstance(t, str) and len(t) <= MAX_TAG_CHARS for t in tags):
        fail("tags", f"a list of text (at most {MAX_TAGS} items of at most {MAX_TAG_CHARS} characters)")
    if not isinstance(doc.get("interpretations") or {}, dict):
        fail("interpretations", "an object")
    if not isinstance(doc.get("any_answer_conforms", False), bool):
        fail("any_answer_conforms", "true or false")


def _kind(word) -> CaseKind:
    if not isinstance(word, str) or word not in KINDS:
        raise CaseError(f"malformed case: kind {word!r} is not one of {KINDS}")
    return CaseKind(word)


def _fingerprint(arr: np.ndarray) -> list:
    """dtype, shape and a hash of the elements' bytes (of the values, for strings)."""
    arr = np.asarray(arr)
    body = json.dumps(arr.reshape(-1).tolist()).encode() if arr.dtype == object else np.ascontiguousarray(arr).tobytes()
    return [str(arr.dtype), list(arr.shape), hashlib.sha1(body).hexdigest()]


def dumps(case: Case) -> str:
    return json.dumps(case.to_json(), sort_keys=True)


def loads(text: str) -> Case:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError(f"malformed case JSON: {exc}") from None
    return Case.from_json(doc)


