"""--mode, --dtype and -k PATTERN: one meaning on run and gate (padconf.cases.selection.CaseFilter)
and in the pytest plugin (tests/pytest/test_plugin.py checks the plugin takes the gate's cases)."""
import json

import numpy as np
import pytest

from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.cases.selection import CaseFilter
from padconf.cli import main
from padconf.core.errors import PadconfError
from padconf.run.rundir import read_jsonl

FAKE = "tests.fake_adapters:"


def _case(mode="constant", dtype=np.float32, origin="generated"):
    return classify(Case("onnx/Pad-19", np.array([1, 2, 3], dtype), [1, 1], mode=mode, origin=origin))


@pytest.mark.parametrize("pattern, taken", [
    ("edge", [False, True, False]),
    ("EDGE or example", [False, True, True]),
    ("not edge and not int8", [True, False, False]),
    ("(edge or int8) and not example", [False, True, False]),
    ("example_3", [False, False, True]),
    ("onnx/Pad-19:edge", [False, True, False]),
])
def test_k_is_pytests_grammar_over_case_ids_and_titles(pattern, taken):
    cases = [_case(), _case("edge"), _case(dtype=np.int8, origin="example:example_3_wide")]
    assert [CaseFilter(pattern=pattern).matches(c) for c in cases] == taken


def test_mode_and_dtype_take_only_their_cases():
    cases = [_case(), _case("edge"), _case("edge", np.int8)]
    assert CaseFilter(modes=("edge",), dtypes=("int8",)).apply(cases) == cases[2:]
    assert CaseFilter().apply(cases) == cases and not CaseFilter().active


@pytest.mark.parametrize("chosen, words", [
    ({"modes": ("egde",)}, "--mode 'egde': unknown (did you mean 'edge'?)"),
    ({"dtypes": ("flaot",)}, "--dtype 'flaot': unknown (did you mean 'float'?)"),
    ({"pattern": "edge and"}, "-k 'edge and': expected a name"),
    ({"pattern": "(edge"}, "-k '(edge': expected )"),
])
def test_a_mistaken_filter_is_refused_naming_the_mistake(chosen, words):
    with pytest.raises(PadconfError, match="^" + words.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        CaseFilter(**chosen)


def test_a_filter_that_takes_no_case_is_an_error():
    with pytest.raises(PadconfError, match="no case of the 1 matches --mode wrap"):
        CaseFilter(modes=("wrap",)).apply([_case()])


@pytest.mark.parametrize("command", [["run", "--runtime", FAKE + "CorrectAdapter"],
                                     ["gate", "--runtime", FAKE + "CorrectAdapter", "--baseline", "b.yaml"]])
@pytest.mark.parametrize("mistake", [["--mode", "egde"], ["-k", "edge and"]])
def test_run_and_gate_refuse_a_mistaken_filter_in_one_line(tmp_path, capsys, command, mistake):
    (tmp_path / "b.yaml").write_text("[]\n")
    command = [a.replace("b.yaml", str(tmp_path / "b.yaml")) for a in command]
    out = ["--out", str(tmp_path / "r")] if command[0] == "run" else ["--work", str(tmp_path / "r")]
    assert main([*command, "--spec", "onnx/Pad-19", *mistake, *out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("did you mean 'edge'" in err or "expected a name" in err), err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_a_filtered_run_runs_only_its_cases_and_resumes_them(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--runtime", FAKE + "CorrectAdapter", "--spec", "onnx/Pad-19", "--max-examples", "30",
            "--mode", "edge", "reflect", "--dtype", "float", "-k", "not example", "--out", str(out)]
    assert main(args) == 0
    cases = read_jsonl(out / "cases.jsonl")
    assert cases and {(c["mode"], c["origin"].startswith("example:")) for c in cases} <= {("edge", False),
                                                                                          ("reflect", False)}
    assert {Case.from_json(c).dtype for c in cases} == {"float"}
    assert {r["case_id"] for r in read_jsonl(out / "results.jsonl")} == {c["id"] for c in cases}
    recorded = json.loads((out / "run.json").read_text())
    assert (recorded["modes"], recorded["dtypes"], recorded["pattern"]) == (["edge", "reflect"], ["float"],
                                                                           "not example")
    (out / "cases.jsonl").unlink()  # drawn again on --resume: the same filter takes the same cases
    assert main(["run", "--resume", "--runtime", FAKE + "CorrectAdapter", "--out", str(out)]) == 0
    assert read_jsonl(out / "cases.jsonl") == cases
