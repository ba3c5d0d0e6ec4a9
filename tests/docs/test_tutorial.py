"""docs/tutorial.md runs as written: its bash blocks, in order, in an empty folder, each command
exiting 0, and what each step promises is there afterwards."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)


def commands() -> list[str]:
    return [line for body in BLOCK.findall(PAGE.read_text(encoding="utf-8")) for line in body.splitlines()
            if line.strip()]


def test_the_tutorial_installs_from_the_checkout_and_then_uses_padconf_only():
    steps = commands()
    assert "install -c constraints.txt" in steps[0] and steps[0].endswith('".[all]"')
    assert all(step.startswith("padconf ") for step in steps[1:]), steps


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path):
    """Every command after the install (which the environment running the tests has done, from
    this checkout), run by the shell in an empty folder."""
    bin_dir = str(Path(sys.executable).parent)  # the padconf of this environment
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "COLUMNS": "120"}
    for step in commands()[1:]:
        done = subprocess.run(["bash", "-o", "pipefail", "-c", step], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, f"{step}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        if shlex.split(step)[1] == "gate":
            assert "passed: nothing new" in done.stdout
    assert (tmp_path / "first-run" / "summary.md").is_file() and (tmp_path / "first-run" / "report.html").is_file()
    assert (tmp_path / "bugs" / "INDEX.md").is_file()
    assert (tmp_path / "padconf-baseline.yaml").is_file() and (tmp_path / "junit.xml").is_file()
