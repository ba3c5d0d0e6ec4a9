"""A result row: what judged_row writes is what ResultRow declares, key for key and in order (a
run's results.jsonl is compared byte for byte), and vocabulary words travel as their values."""
import json
import typing

import numpy as np
import pytest

from padconf.adapters.outcome import Outcome
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.core.errors import CaseError
from padconf.core.vocabulary import Placement
from padconf.judging.records import RESULT_KEYS, ResultRow, judged_row
from padconf.judging.verdicts import Difference, Verdict
from padconf.run.rundir import jsonl_line, read_results
from padconf.spec.loader import get_spec

SPEC = get_spec("onnx/Pad-19")
CASE = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 1]), SPEC)


def declared(total: bool) -> list[str]:
    """ResultRow's keys, required (total) or optional, in their declared order."""
    keys = typing.get_type_hints(ResultRow)
    return [k for k in keys if (k in ResultRow.__required_keys__) == total]


def written() -> list[str]:
    """The keys judged_row writes in order: the required ones, with ``output_digest`` after
    ``output`` (declared optional: a row from before digests is refused in words of its own)."""
    keys = declared(total=True)
    return [*keys[:keys.index("output") + 1], "output_digest", *keys[keys.index("output") + 1:]]


def test_result_row_writes_exactly_the_declared_keys_in_order():
    wrong = Outcome(output=np.zeros(5, np.float32))
    row = judged_row("onnxruntime", Placement.INPUTS, CASE, wrong, "ok", ("p1", 3))
    assert list(row) == written()
    assert row["verdict"] == Verdict.MISMATCH and row["difference"] == Difference.VALUES
    targeted = judged_row("iree", Placement.FOLDED, CASE, wrong, "ok", target="llvm-cpu")
    assert list(targeted) == ["target", *written()]
    assert set(declared(total=False)) == {"target", "graph", "control", "after", "experiments", "elided", "tags",
                                          "output_digest"}
    from padconf.cases.context import Consumer, Context
    sliced = CASE.with_(context=Context(Consumer.SLICE, {"starts": [0], "ends": [1], "axes": [0], "steps": [1]}))
    in_context = judged_row("iree", Placement.FOLDED, sliced, wrong, "ok", target="llvm-cpu")
    assert list(in_context) == ["target", "graph", *written()] and in_context["graph"].endswith("Slice")
    assert set(RESULT_KEYS) <= set(declared(total=True))


def test_vocabulary_words_are_written_and_read_back_as_plain_values(tmp_path):
    row = judged_row("onnxruntime", Placement.INITIALIZERS, CASE, Outcome(output=CASE.expected), "ok")
    line = jsonl_line(row)
    assert '"verdict": "pass"' in line and '"kind": "defined"' in line and '"placement": "initializers"' in line
    assert f"{row['verdict']} {row['kind']!r}" == "pass 'defined'"  # as when they were strings
    # the same row for another placement: read_results keeps one row a (runtime, placement, case)
    (tmp_path / "results.jsonl").write_text(line + json.dumps({**row, "verdict": "pass", "placement": "inputs"}) + "\n")
    back = read_results(tmp_path / "results.jsonl")
    assert back[0] == {**back[1], "placement": "initializers"} == json.loads(line)
    assert back[0]["kind"] == CaseKind.DEFINED


def test_a_row_missing_a_result_key_is_a_one_line_error(tmp_path):
    row = dict(judged_row("onnxruntime", Placement.INPUTS, CASE, Outcome(output=CASE.expected), "ok"))
    del row["case_id"]
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(CaseError, match=r"results.jsonl:1: row lacks case_id"):
        read_results(tmp_path / "results.jsonl")


@pytest.mark.parametrize("dtype, value, text", [(np.float64, "nan", "nan"), (np.float32, "-0.0", "-0.0"),
                                                (np.complex64, 1 + 2j, "(1+2j)"), (np.int8, -3, "-3"),
                                                (object, "a", "'a'")])
def test_a_rows_constant_value_is_the_scalar_as_a_reader_writes_it(dtype, value, text):
    """numpy's repr wrote ``np.float64(nan)`` into rows and every report and --bugs line."""
    data = np.array(["x"], object) if dtype is object else np.ones(2, dtype)
    case = classify(Case(spec="onnx/Pad-19", data=data, pads=[1, 1], constant_value=np.array(value, dtype)),
                    SPEC)
    row = judged_row("onnxruntime", Placement.INPUTS, case, Outcome(output=case.expected), "ok")
    assert row["constant_value"] == text
