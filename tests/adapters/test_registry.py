"""Adapters are found through the entry-point group padconf.adapters: padconf's own, and a
third party's, registered here by a dist-info folder on the path of a subprocess (as
`pip install` of a plugin package would leave it)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from padconf.adapters import OPT_IN, registry
from padconf.run.rundir import read_jsonl
from padconf.run.runner import RunConfig

ROOT = Path(__file__).resolve().parents[2]


def with_plugins(tmp_path, entries: str) -> dict:
    info = tmp_path / "site" / "padconf_demo_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: padconf-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[padconf.adapters]\n{entries}")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)]),
            "COLUMNS": "250"}  # wide enough that no table cell folds


def padconf(env, *args):
    return subprocess.run([sys.executable, "-m", "padconf.cli", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_padconfs_own_adapters_register_through_the_entry_point_group():
    assert set(registry()) >= {"onnxruntime", "openvino-onnx", "openvino", "onnx-reference"}
    assert all(target.startswith("padconf.adapters.") for target in registry().values())


def test_a_run_without_runtime_takes_every_registered_runtime_but_the_opt_in_ones():
    assert RunConfig().runtimes == [name for name in registry() if name not in OPT_IN]
    assert {"onnxruntime", "openvino-onnx", "openvino", "onnx-reference"} <= set(RunConfig().runtimes)
    assert "tract" in OPT_IN and "tract" not in RunConfig().runtimes
    # the compilers' CPU targets are default members (their compile budget bounds them), GPU ones opt-in
    assert {"iree", "tvm"} & set(registry()) <= set(RunConfig().runtimes)
    assert {"iree-cuda", "iree-vulkan", "tvm-cuda", "tvm-vulkan"} <= set(OPT_IN)


@pytest.mark.slow
def test_a_plugin_is_listed_and_runs_end_to_end_and_a_broken_one_is_one_line(tmp_path):
    env = with_plugins(tmp_path, "demo = tests.fake_adapters:ConformingAdapter\n"
                                 "broken = no_such_module_for_padconf:Adapter\n")
    listed = padconf(env, "runtimes")
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stdout + listed.stderr
    flat = " ".join(listed.stdout.split())
    assert "demo" in flat and "tests.fake_adapters:ConformingAdapter" in flat
    assert "broken: unavailable here: cannot load adapter broken: ModuleNotFoundError" in flat
    assert f"{len(registry()) + 2} adapters registered" in flat  # the installed ones, demo and broken
    run = padconf(env, "run", "--runtime", "demo", "--spec", "onnx/Pad-19", "--max-examples", "5",
                  "--out", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    rows = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert rows and {r["runtime"] for r in rows} == {"demo"}
    # it conforms (a case too large to check is inconclusive whatever the runtime does)
    assert {r["verdict"] for r in rows if r["kind"] != "too-large-to-check"} <= {"pass", "ambiguous"}
    broken = padconf(env, "run", "--runtime", "broken", "--spec", "onnx/Pad-19", "--out", str(tmp_path / "r2"))
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1
    assert "runtime broken unavailable: cannot load adapter broken" in broken.stderr
