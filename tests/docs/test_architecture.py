"""docs/architecture.md's module table against the tree, both ways: every module with code is
listed under its path, and every listed module exists."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "padconf"
ROW = re.compile(r"^\| `([\w/]+\.py)` \| (.+) \|$", re.MULTILINE)


def listed(text: str) -> dict[str, str]:
    return dict(ROW.findall(text))


def has_code(path: Path) -> bool:
    """A module that is more than its docstring (a layer's ``__init__.py`` is only one)."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in body)


def modules() -> set[str]:
    return {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
            if "__pycache__" not in p.parts and has_code(p)}


def test_the_module_table_matches_the_tree():
    table = listed((ROOT / "docs/architecture.md").read_text(encoding="utf-8"))
    assert all(job.strip() for job in table.values())
    assert sorted(modules() - table.keys()) == [], "modules missing from docs/architecture.md's table"
    assert sorted(table.keys() - modules()) == [], "docs/architecture.md lists modules the tree lacks"


def test_a_missing_or_stale_row_is_found():  # or the test above would pass on anything
    table = listed("| `run/rundir.py` | the run directory |\n| `run/results.py` | gone |\n")
    assert table.keys() - modules() == {"run/results.py"}
    assert "run/runner.py" in modules() - table.keys()
