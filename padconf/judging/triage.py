"""Triage: what each distinct failure is, as the runtime's maintainer would file it.

A failure's verdict says how it failed; its triage class says what to do with it. A documented
limit of the runtime (``POLICY``) or an issue already open upstream (``KNOWN_UPSTREAM``) comes
from padconf/judging/upstream.yaml, a curated list whose every link was read by hand; what fails the
same way through a trivial model on the same runtime is ``NOT_PAD_SPECIFIC``; missing kernels
are coverage (``NOT_IMPLEMENTED``); the rest are Pad bugs by kind.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from padconf.cases.context import CONSTANT_PADS_WORDS
from padconf.core.errors import CaseError
from padconf.core.vocabulary import Word
from padconf.judging.verdicts import Difference, Verdict

UPSTREAM = Path(__file__).with_name("upstream.yaml")


class Triage(Word):
    WRONG_VALUE = "wrong-value"
    NAN_PAYLOAD_OR_ZERO_SIGN = "nan-payload-or-zero-sign"
    CRASH = "crash"
    HANG = "hang"
    WRONGLY_REJECTED = "wrongly-rejected"
    LENIENT = "lenient"
    NOT_IMPLEMENTED = "not-implemented"
    POLICY = "policy"
    NOT_PAD_SPECIFIC = "not-pad-specific"
    KNOWN_UPSTREAM = "known-upstream"
    # the failure is another component's, shown by a repro in the runtime's own API that needs no
    # Pad (OpenVINO's ONNX frontend refusing Constant-12's value_ints): to file there, not as Pad's
    OTHER_COMPONENT = "other-component"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Triage.WRONG_VALUE: "wrong value", Triage.NAN_PAYLOAD_OR_ZERO_SIGN: "NaN payload or zero sign (low severity)",
    Triage.CRASH: "crash or memory corruption", Triage.HANG: "hang", Triage.WRONGLY_REJECTED: "wrongly rejected",
    Triage.LENIENT: "lenient (accepts what the spec forbids)", Triage.NOT_IMPLEMENTED: "not implemented (coverage)",
    Triage.POLICY: "policy (a documented limit)", Triage.NOT_PAD_SPECIFIC: "not Pad-specific",
    Triage.KNOWN_UPSTREAM: "known upstream",
    Triage.OTHER_COMPONENT: "another component's bug (file it there)",
}


# the classes that are Pad bugs to file; the others stay in the matrix and leave the bug list. A
# lenience is not one: the documents constrain the model ("T: Constrain input and output to ...",
# OpenVINO's "must be not greater than data.shape[D] - 1") and nowhere require the runtime to
# raise an error, and maintainers decline such reports (two audits of padconf's bundles agreed)
PAD_BUGS = (Triage.WRONG_VALUE, Triage.NAN_PAYLOAD_OR_ZERO_SIGN, Triage.CRASH, Triage.HANG,
            Triage.WRONGLY_REJECTED)
_BY_VERDICT = {Verdict.MISMATCH: Triage.WRONG_VALUE, Verdict.CRASH: Triage.CRASH, Verdict.TIMEOUT: Triage.HANG,
               Verdict.WRONGLY_REJECTED: Triage.WRONGLY_REJECTED, Verdict.WRONGLY_ACCEPTED: Triage.LENIENT,
               Verdict.NOT_IMPLEMENTED: Triage.NOT_IMPLEMENTED}
_PATTERN_KEYS = ("runtime", "verdict", "spec", "mode", "dtype", "placement", "origin", "difference", "graph")


@dataclass(frozen=True)
class UpstreamFact:
    triage: Triage
    why: str
    quote: str
    link: str
    checked: str
    patterns: tuple[tuple[str, str], ...]  # (row field, regular expression matched whole)
    # the case's pads hold a negative one (True) or none (False), read from the row's pads: a
    # feature of the case, where a fact once searched the runtime's error text for it
    negative_pads: bool | None = None
    # the case's pads hold one outside the 32-bit range (True) or none (False): a runtime that
    # computes its int64 pads in 32 bits reads another pad there
    pads_beyond_32_bits: bool | None = None
    # the pads reach the runtime as constants (True: baked in, initializers or folded, or made by
    # Constant nodes in any placement) or fed at run time (False)
    constant_pads: bool | None = None
    # a policy's oldest supported opset: before a failure is put down to the policy, padconf runs
    # the case there (padconf.minimize.probes.experiments.beyond_policy)
    supported_opset: int | None = None

    def covers(self, row: Mapping[str, Any]) -> bool:
        return all(re.fullmatch(p, str(row.get(k))) for k, p in self.patterns) and (
            self.negative_pads is None or self.negative_pads == _negative(row.get("pads"))) and (
            self.pads_beyond_32_bits is None or self.pads_beyond_32_bits == _beyond_32_bits(row.get("pads"))) and (
            self.constant_pads is None or self.constant_pads == _constant_pads(row))


def _constant_pads(row: Mapping[str, Any]) -> bool:
    return str(row.get("placement")) in ("initializers", "folded") or any(
        words in str(row.get("graph") or "") for words in CONSTANT_PADS_WORDS)


def _negative(pads: Any) -> bool:
    try:
        return any(int(p) < 0 for p in pads or ())
    except (TypeError, ValueError):
        return False


def _beyond_32_bits(pads: Any) -> bool:
    try:
        return any(not -2 ** 31 <= int(p) < 2 ** 31 for p in pads or ())
    except (TypeError, ValueError):
        return False


def parse_facts(text: str, where: str) -> list[UpstreamFact]:
    docs = yaml.safe_load(text) or []
    facts = []
    for i, doc in enumerate(docs if isinstance(docs, list) else [docs]):
        at = f"{where}: entry {i + 1}"
        try:
            kind = Triage(doc["triage"])
            if kind not in (Triage.POLICY, Triage.KNOWN_UPSTREAM, Triage.OTHER_COMPONENT):
                raise ValueError(f"triage {doc['triage']!r} is not 'policy', 'known-upstream' or 'other-component'")
            if "error" in doc:  # a label is the conclusion of experiments and the case's fields, never of text
                raise ValueError("'error' is not a key: a fact matches the row's fields, never its error text")
            patterns = tuple((k, doc[k]) for k in _PATTERN_KEYS if doc.get(k) is not None)
            for _, p in patterns:
                re.compile(p)
            negative, beyond = doc.get("negative_pads"), doc.get("pads_beyond_32_bits")
            constant = doc.get("constant_pads")
            for key, flag in (("negative_pads", negative), ("pads_beyond_32_bits", beyond),
                              ("constant_pads", constant)):
                if flag is not None and type(flag) is not bool:
                    raise ValueError(f"{key} {flag!r} is not true or false")
            opset = doc.get("supported_opset")
            if opset is not None and (type(opset) is not int or not 1 <= opset <= 1000 or kind != Triage.POLICY):
                raise ValueError(f"supported_opset {opset!r} is not an opset number of a policy")
            facts.append(UpstreamFact(kind, " ".join(doc["why"].split()), " ".join(doc["quote"].split()),
                                      doc["link"], " ".join(doc["checked"].split()), patterns,
                                      negative_pads=negative, pads_beyond_32_bits=beyond, constant_pads=constant,
                                      supported_opset=opset))
        except (KeyError, TypeError, ValueError, AttributeError, re.error) as exc:
            raise CaseError(f"{at}: malformed: {exc}") from None
    return facts


@cache
def upstream_facts(path: Path = UPSTREAM) -> tuple[UpstreamFact, ...]:
    return tuple(parse_facts(path.read_text(encoding="utf-8"), str(path)))


def triage(row: Mapping[str, Any]) -> tuple[Triage, UpstreamFact | None]:
    """The triage class of a failing result row, and the upstream fact it rests on if any."""
    tried = row.get("experiments") or {}
    control = row.get("control") or {}
    # padconf.run.runner's control experiment decides first, but for a refusal that the documented
    # default written out turns into the right answer (the Pad itself then moves the same values:
    # a values control failing otherwise, OpenVINO's Tile of strings, is another path's)
    if control.get("fails_too") and not (tried.get("explicit_default") and control.get("operand") == "values"):
        return Triage.NOT_PAD_SPECIFIC, None
    # padconf.minimize.probes.experiments' findings: a policy the same failure outlives does not explain
    # it; a refusal that the documented default written out turns into the right answer is a bug
    fact = next((f for f in upstream_facts() if f.covers(row)
                 and not (f.triage == Triage.POLICY and tried.get("beyond_policy"))), None)
    if fact is not None:
        return fact.triage, fact
    if tried.get("explicit_default"):
        return Triage.WRONGLY_REJECTED, None
    if row["verdict"] == Verdict.WRONGLY_ACCEPTED and row.get("difference") == Difference.NO_READING:
        return Triage.WRONG_VALUE, None  # accepted, and answered as no reading does: not lenient
    if row["verdict"] in (Verdict.MISMATCH, Verdict.UNEXPLAINED) \
            and row.get("difference") == Difference.NAN_PAYLOAD_OR_ZERO_SIGN:
        return Triage.NAN_PAYLOAD_OR_ZERO_SIGN, None
    if row["verdict"] == Verdict.UNEXPLAINED:  # an undefined point answered as no reading does: a refusal, or an output
        return (Triage.WRONGLY_REJECTED if row.get("error") else Triage.WRONG_VALUE), None
    return _BY_VERDICT[row["verdict"]], None
