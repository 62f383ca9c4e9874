"""Layering of the rule reward: it imports nothing from the facade, and its modules form no cycle."""

import ast
from pathlib import Path

import adapter.pipeline.prechecks
import adapter.rules

PACKAGE = Path(adapter.rules.__file__).parent
PRECHECKS = Path(adapter.pipeline.prechecks.__file__)


def _module(path: Path) -> str:
    return "adapter.rules" if path.name == "__init__.py" else f"adapter.rules.{path.stem}"


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module(path): path for path in PACKAGE.glob("*.py")}
    modules["adapter.pipeline.prechecks"] = PRECHECKS
    return {name: (_imports(path) & set(modules)) - {name} for name, path in modules.items()}


def test_rules_do_not_import_the_facade():
    for path in PACKAGE.glob("*.py"):
        outside = {
            m for m in _imports(path) if m.startswith("adapter.") and not m.startswith("adapter.rules")
        }
        assert not outside, f"{path.name} imports {sorted(outside)}"


def test_no_import_cycles_in_the_rules_and_prechecks():
    graph = _graph()
    # Submodules never import their package: its __init__ imports them.
    assert all("adapter.rules" not in imported for name, imported in graph.items() if name != "adapter.rules")
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join((*path, name))
        if name not in done:
            for imported in graph[name]:
                visit(imported, (*path, name))
            done.add(name)

    for name in graph:
        visit(name, ())
