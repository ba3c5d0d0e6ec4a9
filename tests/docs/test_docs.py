"""The docs run: docs/adapters.md's complete plugin is installed from the page's own code blocks
and run by a real `padconf run`; docs/ci.md's workflow steps are executed in a runtime team's
repository; every finding of docs/findings.md is an entry of tests/known_discrepancies.yaml or
names the runtime versions constraints.txt pins."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from padconf.gate.baseline import load_baseline
from padconf.run.rundir import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def code_blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(page.read_text(encoding="utf-8")) if lang == language]


def named_blocks(page: Path) -> dict[str, str]:
    """The blocks whose first line is a comment naming a file (`# pyproject.toml`): the files the
    page tells its reader to write."""
    named = {}
    for _, body in BLOCK.findall(page.read_text(encoding="utf-8")):
        first = body.split("\n", 1)[0]
        if m := re.fullmatch(r"# ([\w.-]+\.(?:py|toml|txt)|\.gitignore)", first):
            named[m.group(1)] = body
    return named


# ---- docs/adapters.md: the complete plugin, as its reader would install it ----

def install_plugin(files: dict[str, str], site: Path) -> str:
    """What `pip install` of the page's package leaves: its modules and a dist-info folder with the
    entry points of its pyproject.toml. Returns the plugin's registered name."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's tomllib reads the page's pyproject.toml")
    project = tomllib.loads(files["pyproject.toml"])["project"]
    site.mkdir(parents=True)
    for name, body in files.items():
        if name.endswith(".py"):
            (site / name).write_text(body, encoding="utf-8")
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    entries = project["entry-points"]["padconf.adapters"]
    (info / "entry_points.txt").write_text(
        "[padconf.adapters]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    (name,) = entries
    return name


@pytest.mark.slow
def test_the_complete_plugin_of_adapters_md_installs_and_runs(tmp_path):
    files = named_blocks(DOCS / "adapters.md")
    assert {"pyproject.toml", "padconf_myrt.py"} <= set(files), sorted(files)
    name = install_plugin(files, tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)]), "COLUMNS": "250"}
    listed = subprocess.run([sys.executable, "-m", "padconf.cli", "runtimes"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    # one line per runtime: stdout is not a terminal
    assert re.search(rf"^{name} [^:;]*: available;", listed.stdout, re.M), listed.stdout
    run = subprocess.run([sys.executable, "-m", "padconf.cli", "run", "--runtime", name, "--spec", "onnx/Pad-19",
                          "--max-examples", "5", "--out", str(tmp_path / "run")],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    rows = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert rows and {r["runtime"] for r in rows} == {name}
    assert {r["placement"] for r in rows} == {"inputs", "initializers"}
    verdicts = {r["verdict"] for r in rows}
    assert "pass" in verdicts and "crash" not in verdicts, verdicts
    # the adapter's own code ran: its supports() skipped what it said, nothing escaped run()
    assert not [r for r in rows if "adapter raised" in str(r.get("error"))]
    assert any("myrt's Python API has no" in str(r.get("skipped") or r.get("error") or r.get("detail"))
               for r in rows if r["verdict"] == "skipped")


# ---- docs/findings.md: nothing on it can drift unseen ----

FINDINGS = DOCS / "findings.md"
# the runtimes the page's "Seen in full runs" headings name, by the package constraints.txt pins
PINNED_AS = {"onnxruntime": "onnxruntime", "OpenVINO": "openvino", "onnx": "onnx", "tract": "tract",
             "IREE": "iree-base-compiler", "TVM": "apache-tvm", "onnxoptimizer": "onnxoptimizer"}


def entry_id(entry) -> str:
    return f"{entry.runtime} {entry.verdict} {entry.origin}"


def test_findings_md_states_every_known_discrepancy_and_no_other():
    """Each bullet of the page's checked section starts with an entry's id (runtime verdict
    origin); the page and tests/known_discrepancies.yaml must name the same ids."""
    entries = load_baseline(ROOT / "tests" / "known_discrepancies.yaml")
    in_file = [entry_id(e) for e in entries]
    assert len(set(in_file)) == len(in_file), "two entries share an id (runtime verdict origin)"
    text = FINDINGS.read_text(encoding="utf-8")
    checked = text.split("## Checked on every test run", 1)[1].split("\n## ", 1)[0]
    on_page = re.findall(r"^- `([^`]+)`:", checked, re.M)
    assert sorted(on_page) == sorted(in_file), (
        f"on the page, not in the file: {sorted(set(on_page) - set(in_file))}; "
        f"in the file, not on the page: {sorted(set(in_file) - set(on_page))}")


def test_findings_md_names_the_runtime_versions_constraints_txt_pins():
    """The findings seen in full runs hold for the versions their headings name: bumping a pin
    fails here until the page is reviewed against a new run and its heading changed."""
    pins = dict(re.findall(r"^([\w.-]+)==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M))
    headings = re.findall(r"^## Seen in (?:a )?full runs?: (.*)$", FINDINGS.read_text(encoding="utf-8"), re.M)
    named = {name: version for h in headings for name, version in re.findall(r"\b(\w+) (\d[\w.]*\w)", h)
             if name in PINNED_AS}
    assert named, headings
    assert set(named) == set(PINNED_AS), f"runtimes without a heading: {set(PINNED_AS) - set(named)}"
    wrong = {n: (v, pins.get(PINNED_AS[n])) for n, v in named.items() if pins.get(PINNED_AS[n]) != v}
    assert not wrong, f"docs/findings.md names versions constraints.txt does not pin (page, pin): {wrong}"



# ---- docs/performance.md: the suite's size as bench_generate.py prints it ----

def test_performance_md_counts_the_suite_generated_holds():
    """The case counts docs/performance.md quotes from benchmarks/bench_generate.py (the total
    and its family x model x kind table) are those of the committed generated/MANIFEST.yaml,
    which tests/generate/test_writer.py holds to what padconf writes today: a new context shape
    or drawing change that grows the suite fails here until the page is rerun, not stale for
    a release (it said 2,077 cases while the suite held 2,128)."""
    manifest = yaml.safe_load((ROOT / "generated" / "MANIFEST.yaml").read_text())
    counts: dict[tuple[str, str, str], int] = {}
    for model, entries in (("one-node", manifest["cases"]), ("context", manifest["context_cases"])):
        for entry in entries:
            key = (entry["spec"].split("/")[0], model, entry["kind"])
            counts[key] = counts.get(key, 0) + 1
    page = (DOCS / "performance.md").read_text()
    section = page.split("## `python benchmarks/bench_generate.py`", 1)[1].split("\n## ", 1)[0]
    total = re.search(r"\*\*([\d,]+) cases,", section)
    assert total, "docs/performance.md: bench_generate.py's figure line (**N cases, ...) is gone"
    table = {(f, m, k): int(n) for f, m, k, n in
             re.findall(r"^\| (\w+) \| ([\w-]+) \| ([\w-]+) \| (\d+) \|$", section, re.M)}
    assert table == counts, f"docs/performance.md's table (rerun bench_generate.py): {table} != {counts}"
    assert int(total.group(1).replace(",", "")) == sum(counts.values())


# ---- docs/ci.md: the workflow's shell steps, in a runtime team's repository ----

CI = DOCS / "ci.md"


def workflow() -> dict:
    (body,) = [b for b in code_blocks(CI, "yaml") if b.startswith("name: padconf")]
    return yaml.safe_load(body)


def test_the_ci_workflow_installs_padconf_from_no_index_and_pins_in_the_teams_own_file():
    flow = workflow()
    files = named_blocks(CI)
    assert "padconf-requirements.txt" in files
    installs = {step["run"] for job in flow["jobs"].values() for step in job["steps"]
                if "run" in step and "pip install" in step["run"]}
    assert len(installs) == 1, installs  # every job installs alike: one line tested covers all
    (install,) = installs
    assert "constraints.txt" not in install.replace("padconf-requirements.txt", "")
    assert "-r padconf-requirements.txt" in install and '"$PADCONF"' in install
    assert re.fullmatch(r"padconf(\[[\w,]+\])? @ (git\+https://\S+@\S+|\S+\.whl)", flow["env"]["PADCONF"])


def shell_steps(job: dict, shard: int) -> list[tuple[str, dict]]:
    """A job's `run:` steps as GitHub Actions runs them: the expressions a test can give a value
    (the shard, the run number; a secret: empty) put in, each with its step's `env`."""
    values = {"${{ matrix.shard }}": str(shard), "${{ github.run_number }}": "1", "${{ secrets.GITHUB_TOKEN }}": "",
              "${{ secrets.PADCONF_KEY }}": "0123456789abcdef" * 4}

    def put(text: str) -> str:
        for expression, value in values.items():
            text = text.replace(expression, value)
        assert "${{" not in text, text  # an expression this test does not know: said, not run wrong
        return text
    return [(put(step["run"]), {k: put(str(v)) for k, v in (step.get("env") or {}).items()})
            for step in job["steps"] if "run" in step]


@pytest.mark.slow
def test_the_ci_workflows_steps_run_in_a_runtime_teams_repository(tmp_path):
    """Runs every `run:` step of the workflow's three jobs (gate, whole, explore) with bash, as
    GitHub Actions does, in a git repository holding only what the team's repository holds (the
    page's padconf-requirements.txt, .gitignore and ci_db.py, and the baseline its section 1
    writes), with padconf installed from its git URL, in a fresh virtual environment.

    Substituted, since a test reaches no GitHub: the workflow's PADCONF is this checkout's git
    URL at its HEAD commit (`padconf @ git+file://...@<commit>`: what it tests is what is
    committed); every gate gets `--spec onnx/Pad-19` (one version of the suite, to keep the test
    short); the environment's pip is the test environment's (the page says a fresh one's is too
    old for that line) and, so as to need no package index, the environment sees the test
    environment's installed packages through a .pth file (its own site-packages first, so the
    installed padconf is the one it runs), pip running with --no-index and no build isolation:
    the runtime and padconf's dependencies are then already satisfied, at the versions the team's
    file pins (a pin this environment lacks fails the install). The explore job's
    GitHubArtifactDatabase reaches no GitHub, and says so (Hypothesis disables it)."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if commit.returncode:
        pytest.skip(f"{ROOT} is no git checkout: no git URL to install padconf from")
    team = tmp_path / "runtime-repo"
    team.mkdir()
    files = named_blocks(CI)
    for name in ("padconf-requirements.txt", ".gitignore", "ci_db.py"):
        (team / name).write_text(files[name])
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (Path(site) / "test-environment.pth").write_text("".join(f"{p}\n" for p in ours))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_", "PADCONF_GATE_RUN_ID"))}
    env.update(GITHUB_RUN_ID="7001",  # the workflow's run, which every job of it shares
               PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(venv), PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1", COLUMNS="120",
               PADCONF=f"padconf @ git+{ROOT.as_uri()}@{commit.stdout.strip()}",
               RUNNER_TEMP=str(tmp_path / "runner-temp"), GITHUB_ENV=str(tmp_path / "github-env"))
    (venv / "bin" / "pip").write_text(f"#!/bin/sh\nexec {python} -m pip \"$@\"\n")  # as setup-python's
    (venv / "bin" / "pip").chmod(0o755)

    def bash(script: str, step_env: dict | None = None) -> subprocess.CompletedProcess:
        """One step, as a job's runner runs it: each job on a machine of its own (RUNNER_TEMP,
        emptied when a job starts), what a step adds to GITHUB_ENV set for the job's later steps."""
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=team, env={**env, **(step_env or {})},
                              capture_output=True, text=True, timeout=900)
        for line in Path(env["GITHUB_ENV"]).read_text().splitlines():
            name, _, value = line.partition("=")
            env[name] = value
        return done

    def new_job() -> None:
        shutil.rmtree(env["RUNNER_TEMP"], ignore_errors=True)
        os.makedirs(env["RUNNER_TEMP"])
        Path(env["GITHUB_ENV"]).write_text("")
        # a fresh machine's own key file (~/.config's), which a step may name another in place of
        env["PADCONF_COMPILE_CACHE_KEY"] = os.path.join(env["RUNNER_TEMP"], "config", "compile-cache.key")

    new_job()
    assert bash("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm team").returncode == 0
    flow = workflow()
    gate = flow["jobs"]["gate"]
    steps = {shard: shell_steps(gate, shard) for shard in gate["strategy"]["matrix"]["shard"]}
    install, _ = steps[1][0]
    done = bash(install)
    assert done.returncode == 0, done.stdout + done.stderr
    where = bash("padconf --version && python -c 'import padconf; print(padconf.__file__)'")
    assert where.stdout.strip().endswith(f"{site}/padconf/__init__.py"), where.stdout + where.stderr
    # section 1's baseline, which the team commits (on one spec version, as every step below, to keep it short)
    baseline = bash("padconf baseline --runtime onnxruntime --spec onnx/Pad-19 --out padconf-baseline.yaml")
    assert baseline.returncode == 0, baseline.stderr
    short = "padconf gate --spec onnx/Pad-19 "
    for shard, shard_steps in steps.items():
        new_job()
        for script, step_env in shard_steps[1:]:
            done = bash(script.replace("padconf gate ", short), step_env)
            assert done.returncode == 0, f"shard {shard}: {script}\n{done.stdout[-3000:]}{done.stderr}"
    new_job()
    for script, step_env in shell_steps(flow["jobs"]["whole"], 0)[1:]:
        done = bash(script.replace("padconf gate ", short), step_env)
        assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}{done.stderr}"
    assert (team / "junit-all.xml").is_file() and (team / "report-4.html").is_file()
    explore = flow["jobs"]["explore"]
    assert explore.get("continue-on-error")  # its finds are for a person: exit 1 is no failed build
    new_job()
    for script, step_env in shell_steps(explore, 0)[1:]:
        done = bash(script.replace("padconf gate ", short), step_env)
        assert done.returncode in (0, 1) and "ci_db" not in done.stderr, f"{script}\n{done.stdout[-3000:]}" \
                                                                          f"{done.stderr}"
        assert "explored" in done.stdout or "results" in done.stdout, done.stdout[-3000:]
    assert (team / "junit-explore.xml").is_file() and (team / ".padconf").is_dir()
    # what padconf left in the team's folder is what the page says to ignore, or the workflow's outputs
    left = bash("git status --porcelain --untracked-files=normal").stdout.split()
    assert ".padconf/" not in left and all(not p.startswith(".padconf") for p in left), left
    assert bash("git check-ignore -q .padconf/examples && git check-ignore -q .padconf/gate").returncode == 0
    shutil.rmtree(venv)
