"""TensorFlow's own document as a spec (specs/tf/Pad-2.yaml), TensorFlow's eager tf.pad and
tf2onnx's conversion of it as implementations under test, on the real TensorFlow where it is
installed (``pip install ".[tensorflow]"``: padconf.adapters.tensorflow). The document's tests
need no TensorFlow; the rest skip, saying so, where it is not installed."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

from padconf.adapters import get_adapter
from padconf.adapters.tensorflow import dim_pairs, tf_call
from padconf.cases.case import Case, CaseKind
from padconf.cases.classify import classify
from padconf.cases.strategies import draw_cases
from padconf.execution.worker import Worker
from padconf.judging.verdicts import Verdict, judge
from padconf.spec.loader import get_spec

SPEC = "tf/Pad-2"
HAS_TF = all(importlib.util.find_spec(m) is not None for m in ("tensorflow", "tf2onnx"))


def needs_tf(test):
    """A test on the real TensorFlow (a worker importing it: seconds): skipped, saying so, where it is not installed."""
    return pytest.mark.slow(pytest.mark.skipif(not HAS_TF, reason="TensorFlow and tf2onnx are not installed here "
                                               "(pip install -c constraints.txt '.[tensorflow]')")(test))


@pytest.fixture(autouse=True)
def _own_export_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PADCONF_COMPILE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PADCONF_COMPILE_CACHE_KEY", str(tmp_path / "cache.key"))


@pytest.fixture(scope="module")
def workers():
    found: dict[str, Worker] = {}
    yield found
    for worker in found.values():
        worker.close()


def _run(workers, runtime: str, case: Case):
    worker = workers.setdefault(runtime, Worker(runtime))
    outcome, status = worker.run_alone(case, "inputs")
    assert status == "ok", (status, outcome)
    return outcome


def _case(data, pads, mode="constant", value=None, dtype=np.float32) -> Case:
    data = np.asarray(data, dtype=dtype)
    return classify(Case(spec=SPEC, data=data, pads=pads, mode=mode,
                         constant_value=None if value is None else np.asarray(value, dtype=dtype).reshape(())),
                    get_spec(SPEC))


def _arange(*shape) -> np.ndarray:
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)


def test_tf_documents_paddings_by_dimension_and_the_mirror_bounds():
    """paddings is [n, 2] (a row per dimension); REFLECT "no greater than tensor.dim_size(D) - 1",
    SYMMETRIC "no greater than tensor.dim_size(D)", for each dimension D (a REFLECT padding of 0
    on an empty dimension too); a negative padding is left open ("how many values to add")."""
    case = _case(_arange(2, 3), [1, 2, 3, 4])
    assert dim_pairs(case).tolist() == [[1, 3], [2, 4]] and tf_call(case)["mode"] == "CONSTANT"
    assert _case(_arange(2, 3), [1, 2, 1, 2], "reflect").kind == CaseKind.DEFINED
    assert _case(_arange(2, 3), [0, 3, 0, 0], "reflect").rule == "mirror_beyond_dim"
    assert _case(_arange(2, 3), [2, 3, 2, 3], "symmetric").kind == CaseKind.DEFINED
    assert _case(_arange(2, 3), [0, 4, 0, 0], "symmetric").rule == "mirror_beyond_dim"
    assert _case(np.zeros((0, 3)), [0, 1, 0, 1], "reflect").rule == "mirror_beyond_dim"
    assert _case(np.zeros((0, 3)), [0, 1, 0, 1], "symmetric").kind == CaseKind.DEFINED
    assert _case(_arange(2, 3), [0, 1, 0, 0], "edge").rule == "modes"
    negative = _case(_arange(2, 3), [0, -1, 0, 0])
    assert negative.kind == CaseKind.AMBIGUOUS and "negative_pads" in negative.reason


def test_the_drawing_gives_tf_cases_the_document_defines_in_every_mode():
    cases = draw_cases(get_spec(SPEC), 250, seed=1)
    assert {c.mode for c in cases if c.kind == CaseKind.DEFINED} == {"constant", "reflect", "symmetric"}


@pytest.mark.parametrize("runtime", ["tf", "tf-export", "tf-export[opset=18]"])
@pytest.mark.parametrize("mode, pads, dtype", [("constant", [1, 0, 0, 2], np.float32),
                                               ("reflect", [1, 2, 1, 0], np.int32),
                                               ("symmetric", [2, 0, 0, 3], np.float32),
                                               ("symmetric", [0, 1, 1, 0], np.bool_)])
@needs_tf
def test_plain_paddings_pass_on_eager_tf_and_tf2onnx(workers, runtime, mode, pads, dtype):
    case = _case(np.arange(6).reshape(2, 3) % (2 if dtype is np.bool_ else 6), pads, mode, dtype=dtype)
    assert case.kind == CaseKind.DEFINED
    outcome = _run(workers, runtime, case)
    assert judge(case, outcome).verdict == Verdict.PASS, outcome


@pytest.mark.parametrize("runtime", ["tf[call=keras]", "tf-export[call=keras]"])
@needs_tf
def test_keras_zero_padding_layers_pass_where_they_express_the_call(workers, runtime):
    """tf.pad(x, [[0, 0], [1, 2], [0, 1], [0, 0]]) on (batch, rows, columns, channels) data is
    ZeroPadding2D(((1, 2), (0, 1))) (through tf2onnx.convert.from_keras for tf-export); a call no
    ZeroPadding layer expresses (REFLECT) is skipped, saying why."""
    case = _case(np.arange(12).reshape(1, 2, 3, 2), [0, 1, 0, 0, 0, 2, 1, 0])
    assert case.kind == CaseKind.DEFINED
    outcome = _run(workers, runtime, case)
    assert judge(case, outcome).verdict == Verdict.PASS, outcome
    skipped = _run(workers, runtime, _case(np.arange(12).reshape(1, 2, 3, 2), [0, 1, 0, 0, 0, 1, 1, 0], "reflect"))
    assert skipped.skipped and "pad with zeros" in skipped.skipped


@needs_tf
def test_a_reflect_padding_beyond_the_bound_is_refused_by_eager_tf_and_by_onnx_in_the_graph(workers):
    """TensorFlow forbids REFLECT paddings of dim_size(D) or more; eager tf.pad refuses, and
    tf2onnx writes a Pad(reflect) beyond ONNX's bound, which ONNX leaves open: both conform."""
    case = _case(_arange(3, 4), [3, 0, 0, 0], "reflect")
    assert case.kind == CaseKind.MUST_REJECT
    eager = _run(workers, "tf", case)
    assert eager.error and "paddings must be less than the dimension size" in eager.error
    exported = _run(workers, "tf-export", case)
    assert judge(case, exported).verdict == Verdict.PASS and "leaves open (mirror_beyond_dim" in exported.error


@needs_tf
def test_tf2onnx_converts_a_reflect_call_tf_forbids_on_an_empty_dimension_into_a_graph_that_answers(workers):
    """tf.pad(x, [[0, 0], [1, 1]], "REFLECT") on data of shape [0, 3]: "both paddings[D, 0] and
    paddings[D, 1] must be no greater than tensor.dim_size(D) - 1" fails for D = 0 (0 > -1), and
    eager TensorFlow refuses; tf2onnx writes one Pad(reflect) with pads [0, 1, 0, 1], which ONNX
    defines (a pad of 0 adds nothing), so the converted model answers an empty [0, 5] tensor."""
    case = _case(np.zeros((0, 3)), [0, 1, 0, 1], "reflect")
    assert case.kind == CaseKind.MUST_REJECT
    assert _run(workers, "tf", case).error
    exported = _run(workers, "tf-export", case)
    assert judge(case, exported).verdict == Verdict.WRONGLY_ACCEPTED, exported
    assert exported.output.shape == (0, 5) and "eager tf.pad refuses it" in exported.note


@needs_tf
def test_a_conversion_is_cached_by_its_call(tmp_path):
    adapter = get_adapter("tf-export")
    case = _case(_arange(2, 3), [1, 0, 0, 1], "symmetric")
    first = adapter.exported(case)
    assert isinstance(first, bytes)
    other = get_adapter("tf-export")
    other._export = None  # a conversion now would raise: the cache must answer
    assert other.exported(case.with_(data=case.data * 2)) == first
    name, fed = other.bundle_model(case, "inputs", tmp_path)
    assert name == "model.onnx" and (tmp_path / name).read_bytes() == first and len(fed) == 1


@needs_tf
def test_every_tf_run_holds_tf2onnx_findings_and_minimize_bundles_one_with_a_tf_repro(tmp_path):
    """The findings' triggers (padconf.cases.plain.upstream_triggers) are in every run of
    TensorFlow's document however few cases it draws: tf2onnx's graphs answer the SYMMETRIC and
    REFLECT calls TensorFlow forbids (wrongly-accepted; eager tf.pad refuses both) and type a
    bfloat16 call float16 (mismatch). `padconf minimize RUN:<id> --runtime tf-export` writes a
    bundle whose repro (tf2onnx.convert.from_function, then onnxruntime) exits 1."""
    out = tmp_path / "run"
    run = [sys.executable, "-m", "padconf.cli", "run", "--runtime", "tf-export", "--runtime", "tf", "--spec", SPEC,
           "--max-examples", "4", "--jobs", "1", "--out", str(out)]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    found = {(r["runtime"], r["origin"].split(":")[1]): r for r in rows
             if r["origin"].startswith("upstream-trigger:tf2onnx-")}
    expected = {"tf2onnx-symmetric-beyond-dim": "wrongly-accepted", "tf2onnx-reflect-empty-dim": "wrongly-accepted",
                "tf2onnx-bfloat16": "mismatch"}
    assert {what: found["tf-export", what]["verdict"] for what in expected} == expected, found
    # eager TensorFlow as documented: it refuses both calls its document forbids (the empty
    # dimension's refusal is inconclusive: its repaired twin reaches the open negative paddings)
    assert [found["tf", w]["verdict"] for w in ("tf2onnx-symmetric-beyond-dim", "tf2onnx-bfloat16")] == ["pass"] * 2
    assert "paddings must be less than the dimension size" in found["tf", "tf2onnx-reflect-empty-dim"]["error"]
    assert "float16 instead of bfloat16" in found["tf-export", "tf2onnx-bfloat16"]["detail"]
    row = found["tf-export", "tf2onnx-symmetric-beyond-dim"]
    bundle = tmp_path / "bundle"
    proc = subprocess.run([sys.executable, "-m", "padconf.cli", "minimize", f"{out}:{row['case_id']}",
                           "--runtime", "tf-export", "--time-limit", "20", "--out", str(bundle)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    repro = (bundle / "repro_tf_export.py").read_text()
    assert "tf2onnx.convert.from_function(" in repro and "onnxruntime.InferenceSession" in repro
    assert "TensorFlow tf.pad Pad-2" in (bundle / "REPORT.md").read_text()
    ran = subprocess.run([sys.executable, "repro_tf_export.py"], cwd=bundle, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 1, ran.stdout[-2000:]
