"""The checkout and the package as a new user meets them: git tracks nothing it is told to
ignore and padconf's own output folders are ignored, the plugin's extra installs pytest, the
README is a user guide of at most 250 lines whose install and test commands are the ones CI runs,
and no test installs anything into the environment it runs in (CI does, visibly)."""
import importlib.metadata
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from padconf.gate.explore import DEFAULT_DATABASE

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def git(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def checkout():
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode:
        pytest.skip("not a git checkout")


def test_git_tracks_nothing_that_gitignore_ignores(checkout):
    # .padconf/ was ignored yet 10 of its files were tracked: every baseline rewrote them
    tracked = git("ls-files", "--cached", "--ignored", "--exclude-standard").stdout.split()
    assert tracked == []


@pytest.mark.parametrize("written", [
    ".padconf/gate/onnxruntime/results.jsonl", ".padconf/baseline/onnxruntime/cases.jsonl",
    f"{DEFAULT_DATABASE}/0a1b/2c3d", "padconf-results/summary.md", "padconf-minimized/REPORT.md",
])
def test_what_padconf_writes_by_default_in_a_checkout_is_ignored(checkout, written):
    assert git("check-ignore", "--no-index", "-q", written).returncode == 0, f"{written} is not ignored"


def test_the_pytest_extra_installs_pytest_for_the_plugin():
    requires = importlib.metadata.requires("padconf") or []
    assert any(re.fullmatch(r'pytest\b[^;]*; extra == "pytest"', r) for r in requires), requires
    assert any(re.fullmatch(r'padconf\[[^]]*\bpytest\b[^]]*\]; extra == "all"', r) for r in requires), requires
    plugin_section = README.split("### pytest plugin", 1)[1].split("\n#", 1)[0]
    assert 'pip install "padconf[pytest]"' in plugin_section


# tests/docs/test_docs.py runs docs/ci.md's install step in a fresh virtual environment it makes in a
# temporary folder (and builds padconf's wheel there): never in the environment running the tests;
# tests/execution/test_releases.py has padconf make runtimes' environments in temporary caches (and
# reads a bundle's "pip install ..." line)
INSTALLS_IN_A_THROWAWAY_VENV = {"test_docs.py", "test_releases.py"}


def test_no_test_installs_anything_and_ci_installs_chromium_visibly():
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name != Path(__file__).name and path.name not in INSTALLS_IN_A_THROWAWAY_VENV:
            commands = re.findall(r"""["'](?:apt-get|apt|pip3?|sudo)\b|["']-m["'], ["']pip\b""",
                                  path.read_text(encoding="utf-8"))
            assert not commands, f"{path.name} runs {commands}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "apt-get update" in ci and re.search(r"apt-get install -y[^\n]* chromium\n", ci)
    assert ci.index("apt-get install") < ci.index("python -m pytest")


def test_the_readme_is_a_user_guide_of_at_most_250_lines():
    lines = README.count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move reference material to docs/"
    # measurements live in docs/performance.md, module names in docs/architecture.md
    assert not re.search(r"\bpadconf/\w+\.py\b", README), re.findall(r"\bpadconf/\w+\.py\b", README)
    assert not re.search(r"\b\d+(?:\.\d+)? ?(?:ms|MB)\b|\bcases/s\b", README)


def test_the_readmes_install_and_test_commands_are_the_ones_ci_runs():
    """.ci/run says it runs "the README's install command, the README's test command"."""
    blocks = re.findall(r"^```\n(.*?)^```", README, re.M | re.S)
    dev = [b.split("\n")[:2] for b in blocks if "-e \".[dev]\"" in b]
    assert dev, "the README has no block installing padconf for development"
    ((install, test),) = dev
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(rf"^{re.escape(install.replace('pip install', 'pip install --quiet'))}$", ci, re.M), install
    assert re.search(rf"^{re.escape(test)}\b", ci, re.M), test
