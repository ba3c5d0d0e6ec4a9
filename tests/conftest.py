"""Hypothesis profiles come from padconf.cases.strategies (ci / default / thorough); CI sets
HYPOTHESIS_PROFILE=ci, a developer may pass --hypothesis-profile=thorough."""
import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from padconf.cases.strategies import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Workers import nothing from the working directory (padconf.execution.worker_process.import_path); the tests name
# their fakes as tests.fake_adapters:X, so the repository is on PYTHONPATH, for workers and for
# the padconf commands the tests start.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                     if p])

# The compilers' persistent cache (padconf.adapters.compile_cache): a fresh one per test session, so that
# no test passes on what an earlier session compiled, and none writes to the user's own cache.
# Removed when the session's process ends (each pytest-xdist worker has its own).
os.environ["PADCONF_COMPILE_CACHE"] = tempfile.mkdtemp(prefix="padconf-test-compile-cache-")
atexit.register(shutil.rmtree, os.environ["PADCONF_COMPILE_CACHE"], ignore_errors=True)
# and the key it is signed with (a file padconf creates there): not the user's own
_key_dir = tempfile.mkdtemp(prefix="padconf-test-compile-cache-key-")
os.environ["PADCONF_COMPILE_CACHE_KEY"] = os.path.join(_key_dir, "compile-cache.key")
atexit.register(shutil.rmtree, _key_dir, ignore_errors=True)
# one gate run for the session's shards, as a CI job's run id is (tests of the id itself set their own)
os.environ["PADCONF_GATE_RUN_ID"] = "tests"


@pytest.fixture(scope="session")
def onnxruntime_baseline(tmp_path_factory) -> tuple[Path, Path]:
    """onnxruntime's baseline of onnx/Pad-19 and the work folder of the run it was made from
    (results.jsonl), made once for the tests that only read them."""
    from padconf.cli import main
    where = tmp_path_factory.mktemp("onnxruntime-baseline")
    baseline, work = where / "b.yaml", where / "b"
    assert main(["baseline", "--runtime", "onnxruntime", "--spec", "onnx/Pad-19", "--out", str(baseline),
                 "--work", str(work)]) == 0
    return baseline, work
