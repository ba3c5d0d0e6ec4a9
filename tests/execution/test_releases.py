"""Runtimes at other releases, in environments of their own (padconf.execution.environments), and
bisecting a case across releases (padconf.releases). The tests that install use one older
onnxruntime release (and, for the upgrade recipe, the one after it), from the package index."""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padconf.adapters import split_release, unknown_runtime
from padconf.cases.case import Case
from padconf.cases.classify import classify
from padconf.core.errors import PadconfError
from padconf.execution import env_child, environments
from padconf.spec.loader import get_spec

OLD, NEXT = "1.23.2", "1.24.1"  # the mixed-sign reflect garbage is there in OLD, refused in NEXT
ROOT = Path(__file__).resolve().parents[2]


def padconf(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "padconf.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900)


@pytest.fixture(scope="module")
def env_cache(tmp_path_factory) -> Path:
    """One environment cache for the module, so each release is made once."""
    return Path(os.environ.get("PADCONF_TEST_ENV_CACHE") or tmp_path_factory.mktemp("envs"))


@pytest.fixture
def cache(env_cache, monkeypatch) -> Path:
    monkeypatch.setenv(environments.ENV, str(env_cache))
    return env_cache


def mixed_sign_case() -> Case:
    spec = get_spec("onnx/Pad-19")  # microsoft/onnxruntime#11828's shape: reflect crops all but one element
    return classify(Case(spec.id, np.arange(5, dtype=np.float32), [-4, 4], "reflect"), spec)


def test_a_release_is_part_of_the_runtimes_name():
    assert split_release("onnxruntime@1.24.4") == ("onnxruntime", "1.24.4")
    assert split_release("openvino[threads=1]@2025.1.0") == ("openvino[threads=1]", "2025.1.0")
    assert split_release("onnxruntime") == ("onnxruntime", None)
    assert unknown_runtime("onnxruntime@1.24.4") is None
    assert unknown_runtime("openvino[threads=1]@2025.1.0") is None
    assert "final release" in unknown_runtime("onnxruntime@1.25.0rc1")
    assert "module:Class runs where padconf is installed" in unknown_runtime("mymod:MyAdapter@1.0")
    assert "standalone runner" in unknown_runtime("onnxoptimizer@0.4.2")  # a rewriter: no such function


def test_the_worker_in_an_environment_imports_nothing_of_padconf():
    tree = ast.parse(Path(env_child.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and node.module and node.level == 0}
    assert "padconf" not in imported and "onnx" in imported  # onnx only where the environment has it
    assert imported - {"onnx", "numpy", "__future__"} <= set(sys.stdlib_module_names)


def test_no_network_is_one_line(tmp_path, monkeypatch):
    unreachable = {environments.ENV: str(tmp_path / "envs"), environments.INDEX_ENV: "http://127.0.0.1:9/simple/"}
    done = padconf("run", "--runtime", f"onnxruntime@{OLD}", "--spec", "onnx/Pad-19", "--out", "run", cwd=tmp_path,
                   env=unreachable)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("padconf: no network: cannot reach the package index")


def test_a_broken_environment_is_one_line_and_never_run(cache, tmp_path):
    env = environments.ensure("onnxruntime", OLD)
    planted = env.folder / "venv" / "lib" / "planted.py"
    planted.write_text("import os; os.system('touch /tmp/padconf-planted')\n")
    environments._MADE.clear()
    try:
        with pytest.raises(PadconfError, match="its files changed since padconf made it"):
            environments.ensure("onnxruntime", OLD)
        done = padconf("run", "--runtime", f"onnxruntime@{OLD}", "--spec", "onnx/Pad-19", "--out", "run",
                       cwd=tmp_path)
        assert done.returncode == 2 and "is broken" in done.stderr and done.stderr.count("\n") == 1, done.stderr
        listed = padconf("envs", cwd=tmp_path)
        assert "its files changed" in listed.stdout
    finally:
        planted.unlink()
    manifest = env.folder / environments.MANIFEST
    good = manifest.read_text()
    doc = json.loads(good)
    manifest.write_text(json.dumps({**doc, "version": "9.9.9"}))  # another's, its MAC no longer its own
    try:
        with pytest.raises(PadconfError, match="not signed with this user's key"):
            environments._read_manifest(env.folder)
    finally:
        manifest.write_text(good)
    assert environments.ensure("onnxruntime", OLD).folder == env.folder


def test_clear_refuses_a_folder_padconf_did_not_tag(tmp_path, monkeypatch):
    monkeypatch.setenv(environments.ENV, str(tmp_path))
    (tmp_path / "mine.txt").write_text("not padconf's")
    with pytest.raises(PadconfError, match="not an environment cache padconf made"):
        environments.clear()
    assert (tmp_path / "mine.txt").exists()


def test_an_older_release_runs_in_its_environment_with_dependencies_of_its_date(cache, tmp_path):
    done = padconf("run", "--runtime", f"onnxruntime@{OLD}", "onnxruntime", "--spec", "onnx/Pad-19",
                   "--max-examples", "20", "--out", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert {r["runtime"] for r in rows} == {f"onnxruntime@{OLD}", "onnxruntime"}
    # in markdown a word joiner follows the @, or onnxruntime@1.23.2 would read as an e-mail address
    assert f"onnxruntime@\u2060{OLD}" in (tmp_path / "run" / "summary.md").read_text()
    env = environments.ensure("onnxruntime", OLD)
    assert env.packages["onnxruntime"] == OLD
    cutoff = environments.release("onnxruntime", OLD).cutoff
    assert env.packages["numpy"] != np.__version__ or cutoff.year >= 2026  # numpy as of its date, not padconf's
    # the same cases answered in both: what differs between the releases is the runtime's doing
    by = {(r["case_id"], r["placement"], r["runtime"]): r["verdict"] for r in rows}
    assert any(by.get((c, p, f"onnxruntime@{OLD}")) != v for (c, p, rt), v in by.items() if rt == "onnxruntime")


def test_bisect_finds_the_release_that_stopped_the_mixed_sign_garbage(cache, tmp_path):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(mixed_sign_case().to_json()) + "\n")
    done = padconf("bisect", str(case), "--runtime", "onnxruntime", "--from", OLD, "--to", NEXT,
                   "--json", "found.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"changed between {OLD} and {NEXT}: unexplained -> ambiguous (refused)" in done.stdout
    found = json.loads((tmp_path / "found.json").read_text())
    assert found["changes"] == [{"before": OLD, "after": NEXT, "was": found["changes"][0]["was"],
                                 "became": found["changes"][0]["became"], "confirmed": True}]
    assert (found["first seen in"], found["last seen in"], found["fixed in"]) == (OLD, OLD, NEXT)
    with open("/dev/full", "w") as full:  # without --json the table is the output: lost, it is exit 2
        lost = subprocess.run([sys.executable, "-m", "padconf.cli", "bisect", str(case), "--runtime", "onnxruntime",
                               "--from", OLD, "--to", NEXT], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=900)
    assert lost.returncode == 2 and "the release table did not reach it whole" in lost.stderr, lost.stderr


def test_the_upgrade_recipe_of_ci_md_runs_as_written(cache, tmp_path):
    """The pin 1.24.4, the candidate 1.25.0: the gate shows what the upgrade changes, in the
    fixed suite's cells: a new: line per case the new release breaks, a fixed: line per entry it
    fixes, each followed by the release it was fixed in. Which entries those are depends on the
    fixed suite (a case that still fails in an entry's cell keeps the entry from being fixed),
    so the test holds the lines to each other and to the gate's own count."""
    text = (ROOT / "docs" / "ci.md").read_text()
    block = text.split("<!-- upgrade recipe")[1].split("```")[1]
    commands = [line.split() for line in block.splitlines() if line.startswith("padconf ")]
    assert [c[1] for c in commands] == ["baseline", "gate"]
    baseline = padconf(*commands[0][1:], cwd=tmp_path)
    assert baseline.returncode == 0, baseline.stderr
    assert "runtime: onnxruntime@1.24.4" in (tmp_path / "padconf-baseline.yaml").read_text().replace("\\", "")
    gate = padconf(*commands[1][1:], cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    new = re.findall(r"^new: onnx/Pad-19:", gate.stdout, re.M)
    fixed = re.findall(r"^fixed: (padconf-baseline\.yaml:\d+): \d+ cells now pass: onnx/Pad-19 ", gate.stdout, re.M)
    told = re.findall(r"^fixed in: (padconf-baseline\.yaml:\d+): onnxruntime 1\.2[45]\.\d+ \(case onnx/Pad-19:",
                      gate.stdout, re.M)
    counted = re.search(r"FAILED: (\d+) new failures?, (\d+) fixed baseline entr", gate.stdout)
    assert counted and (len(new), len(fixed)) == (int(counted[1]), int(counted[2])), gate.stdout
    assert new or fixed, gate.stdout
    assert fixed == told, gate.stdout


def test_minimize_bisect_gives_a_bundle_its_first_seen_and_fixed_in_releases(cache, tmp_path):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(mixed_sign_case().to_json()) + "\n")
    done = padconf("minimize", str(case), "--runtime", f"onnxruntime@{OLD}", "--out", "bug", "--time-limit", "5",
                   "--bisect", "--from", OLD, "--to", NEXT, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "bug" / "REPORT.md").read_text()
    assert f"- first seen in: onnxruntime {OLD} or earlier (the oldest release tested)" in report
    assert f"- last seen in: onnxruntime {OLD}\n" in report and f"- fixed in: onnxruntime {NEXT}\n" in report
    evidence = json.loads((tmp_path / "bug" / "evidence.json").read_text())["releases"]
    assert (evidence["first seen in"], evidence["last seen in"], evidence["fixed in"]) == (OLD, OLD, NEXT)
    again = padconf("bisect", str(tmp_path / "bug"), "--runtime", "onnxruntime", "--from", OLD, "--to", NEXT,
                    cwd=tmp_path)  # the bundle is a target of its own
    assert again.returncode == 0 and f"fixed in onnxruntime {NEXT}" in again.stdout, again.stdout + again.stderr
    api = (tmp_path / "bug" / f"repro_onnxruntime_{OLD.replace('.', '_')}.py").read_text()
    assert f"pip install numpy onnx onnxruntime=={OLD}" in api
    # the bundle's own checker, run by each release's interpreter: the bug there in OLD, gone in NEXT
    from padconf.execution.env_worker import ensure_for
    for version, code in ((OLD, 1), (NEXT, 0)):
        checked = subprocess.run([str(ensure_for(f"onnxruntime@{version}").python), "-I", "-B", "repro.py"],
                                 cwd=tmp_path / "bug", capture_output=True, text=True, timeout=120,
                                 env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})  # its child too
        assert checked.returncode == code, (version, checked.stdout, checked.stderr)


def test_a_release_that_cannot_live_beside_padconfs_pins_runs_in_an_environment_of_its_own(cache):
    """onnxruntime 1.18 was built against numpy 1.x, which padconf's own pins (numpy 2) exclude:
    in its environment it has the numpy of its date, and its answers are judged as any other's."""
    from padconf.execution.env_worker import ensure_for
    from padconf.execution.worker import Worker
    from padconf.judging.records import judged_row as result_row

    env = ensure_for("onnxruntime@1.18.1")
    assert env.packages["numpy"].startswith("1.") and np.__version__.startswith("2."), env.packages
    worker = Worker("onnxruntime@1.18.1")
    try:
        case = mixed_sign_case()
        row = result_row(worker.adapter, "inputs", case, *worker.run_alone(case, "inputs"))
    finally:
        worker.close()
    assert row["runtime"] == "onnxruntime@1.18.1" and row["verdict"] == "unexplained", row


def test_the_cache_is_bounded_listed_and_cleared(tmp_path, monkeypatch):
    monkeypatch.setenv(environments.ENV, str(tmp_path / "envs"))
    monkeypatch.setenv(environments.LIMIT_ENV, "1")  # 1 MB: making one evicts every other
    first = environments.ensure("onnxruntime", OLD)
    second = environments.ensure("onnxruntime", NEXT)
    assert not first.folder.exists() and second.folder.exists()
    listed = padconf("envs", cwd=tmp_path)
    assert listed.returncode == 0 and f"onnxruntime {NEXT}" in listed.stdout and "bound 1 MB" in listed.stdout
    assert re.search(r": 1 environments, \d+ MB with uv's cache of wheels", listed.stdout), listed.stdout
    cleared = padconf("envs", "--clear", cwd=tmp_path)
    assert cleared.returncode == 0 and cleared.stdout.startswith("1 environments deleted"), cleared.stdout
    assert not second.folder.exists() and (tmp_path / "envs" / environments.MARKER).exists()


def test_a_constraint_file_pins_the_environment_instead_of_the_release_date(tmp_path):
    pins = tmp_path / "pins.txt"
    pins.write_text("numpy==2.2.6\n")
    env = {environments.ENV: str(tmp_path / "envs")}
    done = padconf("--env-constraints", str(pins), "run", "--runtime", f"onnxruntime@{OLD}", "--spec", "onnx/Pad-19",
                   "--max-examples", "0", "--out", "run", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert f"its dependencies as {pins} allows" in done.stderr
    (folder,) = (tmp_path / "envs").glob("onnxruntime-*")
    assert json.loads((folder / environments.MANIFEST).read_text())["packages"]["numpy"] == "2.2.6"


def test_an_environments_digest_holds_its_files_contents(tmp_path):
    """A .pyc swapped for another of the same size, its modification time set back, passed for
    the environment padconf made (attack round II): the digest covers contents."""
    venv = tmp_path / "venv"
    (venv / "lib").mkdir(parents=True)
    pyc = venv / "lib" / "m.cpython-311.pyc"
    pyc.write_bytes(b"a" * 64)
    made = environments._tree_digest(venv)
    before = pyc.stat()
    pyc.write_bytes(b"b" * 64)
    os.utime(pyc, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert pyc.stat().st_size == before.st_size and pyc.stat().st_mtime_ns == before.st_mtime_ns
    assert environments._tree_digest(venv) != made
    pyc.write_bytes(b"a" * 64)
    assert environments._tree_digest(venv) == made
