"""Every dotted name (``padconf.run.rundir.load_run``) and every repository path
(``tests/docs/test_layers.py``) the code, the tests and the docs mention names something that
exists: a moved module or a renamed function leaves no stale reference behind."""
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOTTED = re.compile(r"(?<![\w/.])padconf(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
PATH = re.compile(r"(?<![\w.])(?:padconf|tests|benchmarks|docs)/[A-Za-z0-9_/.-]+\.(?:py|md|yaml|json)")
SUFFIXES = (".py", ".md", ".yaml", ".json")


def resolves(dotted: str) -> bool:
    """A module, or an attribute reached from the longest importable module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(found, attr):
                return False
            found = getattr(found, attr)
        return True
    return False


def sources() -> list[Path]:
    return [p for p in [*ROOT.glob("padconf/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/*.py"),
                        *ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "padconf/spec/documents/FORMAT.md"]
            if "__pycache__" not in p.parts and p.name != Path(__file__).name]  # this file plants stale ones


def stale(text: str) -> set[str]:
    out = {ref.rstrip(".") for ref in DOTTED.findall(text) if not ref.rstrip(".").endswith(SUFFIXES)}
    out = {ref for ref in out if not resolves(ref)}
    return out | {path for path in PATH.findall(text) if not (ROOT / path).exists()}


def test_every_reference_resolves():
    found = {f"{path.relative_to(ROOT)}: {ref}" for path in sources()
             for ref in stale(path.read_text(encoding="utf-8"))}
    assert not found, sorted(found)


def test_a_stale_reference_is_found():  # or the test above would pass on anything
    assert stale("see padconf.run.results.read_jsonl and tests/test_gate.py") == {
        "padconf.run.results.read_jsonl", "tests/test_gate.py"}
    assert not stale("padconf.run.rundir.read_jsonl, tests/docs/test_references.py")
