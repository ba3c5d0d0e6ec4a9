"""Typed strict records for result rows: msgspec against pydantic against padconf's reader
today (json.loads, then judging.records.check_row), decoding one real results.jsonl.

Each decoder is strict the same way: unknown keys refused, every key's type declared (no
coercion: "3" is no number), verdict and placement closed vocabularies. The figures are per
row, best of --repeat, side by side in one process; each decoder is also shown refusing a
mistyped key and an unknown one, so that no decoder is fast by checking less.

Run from the repository root: python benchmarks/bench_records.py [--results FILE] [--repeat 5]
(default FILE: a run of onnx-reference on onnx/Pad-19, 20 examples, made in a temporary folder).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Optional

from padconf.core.vocabulary import Placement
from padconf.judging.records import RESULT_KEYS, check_row
from padconf.judging.verdicts import Verdict

VERDICTS = tuple(v.value for v in Verdict)
PLACEMENTS = tuple(p.value for p in Placement)


def _msgspec_row():
    import msgspec

    VerdictWord = Enum("VerdictWord", {v: v for v in VERDICTS}, type=str)  # noqa: N806
    PlacementWord = Enum("PlacementWord", {p: p for p in PLACEMENTS}, type=str)  # noqa: N806

    class Row(msgspec.Struct, forbid_unknown_fields=True):
        runtime: str
        placement: PlacementWord  # type: ignore[valid-type]
        spec: str
        mode: str
        dtype: str
        shape: list[int]
        pads: list[int]
        verdict: VerdictWord  # type: ignore[valid-type]
        case_id: str
        origin: str
        axes: Optional[list[int]] = None  # noqa: UP045 (msgspec reads the annotation at run time)
        constant_value: Optional[str] = None  # noqa: UP045
        kind: Optional[str] = None  # noqa: UP045
        reason: Optional[str] = None  # noqa: UP045
        rule: Optional[str] = None  # noqa: UP045
        detail: Optional[str] = None  # noqa: UP045
        matched: Optional[list[str]] = None  # noqa: UP045
        difference: Optional[str] = None  # noqa: UP045
        error: Optional[str] = None  # noqa: UP045
        note: Optional[str] = None  # noqa: UP045
        printed: Optional[dict[str, Any]] = None  # noqa: UP045
        seconds: Optional[float] = None  # noqa: UP045
        output: Optional[dict[str, Any]] = None  # noqa: UP045
        process: Optional[str] = None  # noqa: UP045
        position: Optional[int] = None  # noqa: UP045
        target: Optional[str] = None  # noqa: UP045
        graph: Optional[str] = None  # noqa: UP045
        after: Optional[str] = None  # noqa: UP045
        tags: Optional[list[str]] = None  # noqa: UP045
        elided: Optional[dict[str, int]] = None  # noqa: UP045
        output_digest: Optional[str] = None  # noqa: UP045

    decoder = msgspec.json.Decoder(Row)  # strict by default: no str -> int coercion
    return decoder.decode, (msgspec.ValidationError, msgspec.DecodeError)


def _pydantic_row():
    import pydantic
    from pydantic import BaseModel, ConfigDict

    class Row(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        runtime: str
        placement: Literal[PLACEMENTS]  # type: ignore[valid-type]
        spec: str
        mode: str
        dtype: str
        shape: list[int]
        pads: list[int]
        verdict: Literal[VERDICTS]  # type: ignore[valid-type]
        case_id: str
        origin: str
        axes: Optional[list[int]] = None  # noqa: UP045
        constant_value: Optional[str] = None  # noqa: UP045
        kind: Optional[str] = None  # noqa: UP045
        reason: Optional[str] = None  # noqa: UP045
        rule: Optional[str] = None  # noqa: UP045
        detail: Optional[str] = None  # noqa: UP045
        matched: Optional[list[str]] = None  # noqa: UP045
        difference: Optional[str] = None  # noqa: UP045
        error: Optional[str] = None  # noqa: UP045
        note: Optional[str] = None  # noqa: UP045
        printed: Optional[dict[str, Any]] = None  # noqa: UP045
        seconds: Optional[float] = None  # noqa: UP045
        output: Optional[dict[str, Any]] = None  # noqa: UP045
        process: Optional[str] = None  # noqa: UP045
        position: Optional[int] = None  # noqa: UP045
        target: Optional[str] = None  # noqa: UP045
        graph: Optional[str] = None  # noqa: UP045
        after: Optional[str] = None  # noqa: UP045
        tags: Optional[list[str]] = None  # noqa: UP045
        elided: Optional[dict[str, int]] = None  # noqa: UP045
        output_digest: Optional[str] = None  # noqa: UP045

    return Row.model_validate_json, (pydantic.ValidationError,)


def _today():
    from padconf.core.errors import CaseError

    def decode(line: bytes):
        return check_row(json.loads(line), "bench", RESULT_KEYS)
    return decode, (CaseError, ValueError)


def _results(args) -> list[bytes]:
    if args.results:
        return Path(args.results).read_bytes().splitlines()
    out = Path(tempfile.mkdtemp()) / "run"
    subprocess.run([sys.executable, "-m", "padconf.cli", "run", "--runtime", "onnx-reference", "--spec",
                    "onnx/Pad-19", "--max-examples", "20", "--out", str(out)], check=False, capture_output=True)
    return (out / "results.jsonl").read_bytes().splitlines()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--copies", type=int, default=20, help="the file's rows decoded this many times a round")
    args = parser.parse_args()
    lines = _results(args)
    row = json.loads(lines[0])
    mistyped = json.dumps({**row, "shape": ["3"]}).encode()
    unknown = json.dumps({**row, "surprise": 1}).encode()
    bad_word = json.dumps({**row, "verdict": "passs"}).encode()
    print(f"{len(lines)} rows ({sum(map(len, lines)) / len(lines):.0f} bytes a row), decoded {args.copies} times "
          f"a round, best of {args.repeat}")
    results = {}
    for name, make in (("today: json.loads + check_row", _today), ("msgspec Struct", _msgspec_row),
                       ("pydantic BaseModel", _pydantic_row)):
        try:
            decode, errors = make()
        except ImportError as exc:
            print(f"{name}: not installed ({exc})")
            continue
        refused = []
        for what, line in (("mistyped", mistyped), ("unknown key", unknown), ("unknown verdict", bad_word)):
            try:
                decode(line)
                refused.append(f"{what}: ACCEPTED")
            except errors:
                refused.append(f"{what}: refused")
        best = float("inf")
        for _ in range(args.repeat):
            started = time.perf_counter()
            for _ in range(args.copies):
                for line in lines:
                    decode(line)
            best = min(best, time.perf_counter() - started)
        per_row = best / (args.copies * len(lines)) * 1e6
        results[name] = per_row
        print(f"{name:32s} {per_row:7.2f} us a row   ({'; '.join(refused)})")
    if "today: json.loads + check_row" in results:
        base = results["today: json.loads + check_row"]
        print("ratio to today: " + ", ".join(f"{n} {t / base:.2f}x" for n, t in results.items()))


if __name__ == "__main__":
    main()
