"""A runtime is judged as its users run it by default; any other configuration is a variant,
``name[option=value,...]``, a runtime of its own in every result."""
import numpy as np
import pytest

from padconf.adapters import get_adapter, split_variant, unknown_runtime
from padconf.cases.case import Case
from padconf.core.errors import PadconfError
from padconf.execution.worker import Worker
from padconf.execution.worker_protocol import Status
from padconf.minimize.bundle.scripts import configuration


def test_a_variant_is_a_name_and_its_options():
    assert split_variant("openvino[threads=1]") == ("openvino", {"threads": "1"})
    assert split_variant("openvino-onnx[threads=1,mode=accuracy]") == (
        "openvino-onnx", {"threads": "1", "mode": "accuracy"})
    assert split_variant("openvino") == ("openvino", {})
    assert split_variant("tests.fake_adapters:CorrectAdapter") == ("tests.fake_adapters:CorrectAdapter", {})


@pytest.mark.parametrize("name", ["openvino[threads=0]", "openvino[cores=1]", "onnx-reference[threads=1]",
                                  "openvino[threads=1", "openvino[]", "nothing[threads=1]"])
def test_an_option_the_runtime_lacks_is_refused_in_one_line(name):
    why = unknown_runtime(name)
    assert why and "\n" not in why and name in why
    with pytest.raises(PadconfError):
        get_adapter(name)


def test_openvino_compiles_with_its_defaults_and_a_variant_with_its_properties():
    for name in ("openvino", "openvino-onnx"):
        assert get_adapter(name).configuration() == {} == configuration(name)
        variant = get_adapter(f"{name}[threads=1,mode=accuracy]")
        assert variant.name == f"{name}[threads=1,mode=accuracy]"
        assert variant.configuration() == {"INFERENCE_NUM_THREADS": 1, "EXECUTION_MODE_HINT": "ACCURACY"}


# A reflect pad wider than its axis (Pad-12: "pads_begin ... must not be greater than the
# dimension - 1" for reflect): OpenVINO's CPU plugin raises in its default configuration; with one
# thread it swallows the exception and hands back a tensor it never wrote (or dies).
REFLECT_BEYOND = Case(spec="openvino/Pad-12", data=np.arange(3, dtype=np.float32), pads=[5, 0], mode="reflect")


def test_openvino_refuses_a_reflect_pad_beyond_the_axis_as_its_users_run_it():
    worker = Worker("openvino")
    try:
        outcome, status = worker.run_alone(REFLECT_BEYOND, "inputs")
    finally:
        worker.close()
    assert status is Status.OK and outcome.error and outcome.output is None


def test_with_one_thread_the_same_case_is_not_refused():
    """The variant's answer differs: what made four bundles 'wrong value' when every OpenVINO
    model was compiled with INFERENCE_NUM_THREADS=1."""
    worker = Worker("openvino[threads=1]")
    try:
        outcome, status = worker.run_alone(REFLECT_BEYOND, "inputs")
    finally:
        worker.close()
    assert status is Status.CRASH or outcome.error is None


def test_onnxruntime_with_its_optimizer_off_is_a_variant_its_repro_sets_up_too():
    """onnxruntime[optimization=disabled]: the control that tells an optimizer's bug from a
    kernel's, a runtime of its own; its bundles' repros set the same GraphOptimizationLevel."""
    from padconf.cases.classify import classify
    from padconf.minimize.bundle.scripts import api_script
    variant = get_adapter("onnxruntime[optimization=disabled]")
    assert variant.configuration() == {"graph_optimization_level": "ORT_DISABLE_ALL"}
    assert get_adapter("onnxruntime").configuration() == {}
    case = classify(Case(spec="onnx/Pad-19", data=np.arange(3, dtype=np.float32), pads=[1, 1], mode="edge"))
    worker = Worker("onnxruntime[optimization=disabled]")
    try:
        outcome, status = worker.run_alone(case, "folded")
    finally:
        worker.close()
    assert status is Status.OK and np.array_equal(outcome.output, case.expected)
    script = api_script(case, "inputs", "onnxruntime[optimization=disabled]", "t")
    assert script and "{'graph_optimization_level': 'ORT_DISABLE_ALL'}))" in script


@pytest.mark.slow
def test_a_run_of_a_registered_runtimes_variant_resumes_without_naming_it_again(tmp_path):
    """run.json may name registered runtimes, a variant of one included (it imports nothing but
    padconf's own adapter); only a module:Class must be named again."""
    from padconf.cli import main
    out = tmp_path / "run"
    assert main(["run", "--runtime", "openvino[threads=1]", "--spec", "openvino/Pad-12", "--max-examples", "2",
                 "--out", str(out)]) == 0
    assert main(["run", "--resume", "--out", str(out)]) == 0
