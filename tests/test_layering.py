"""The import graph: no cycles, and no module importing from a layer above its own.

Layers, lowest first: ``judge_prompts`` < ``judge_vllm`` < ``adapter`` < ``eval``. Inside
``adapter``, the packages by concern (``pipeline``, ``dispatch``, ``cache``, ``observability``,
``rules``, ``groups``, ``rubrics``) are the parts; the reward classes, the factory, the CLI, the
HTTP front ends and the trainer integrations are built from them and never imported by them.
Every import counts, a lazy one inside a function too.
"""

from __future__ import annotations

import ast
import itertools
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = ["judge_prompts", "judge_vllm", "adapter", "eval"]
ADAPTER_PARTS = ["pipeline", "dispatch", "cache", "observability", "rules", "groups", "rubrics"]
ADAPTER_ASSEMBLY = ["adapter", "adapter.reward", "adapter.factory", "adapter.ensemble", "adapter.escalation",
                    "adapter.cli", "adapter.http", "adapter.integrations"]  # fmt: skip


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (``from pkg import name`` resolved to a module
    when ``pkg.name`` is one)."""
    paths = [p for layer in LAYERS for p in (REPO / layer).rglob("*.py")]
    modules = {_module_name(p): p for p in paths}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                             for a in node.names}  # fmt: skip
        graph[name] = {m for m in imported if m in modules and m != name}
    return graph


def _is_within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_graph_covers_every_layer():
    assert {m.split(".")[0] for m in _graph()} == set(LAYERS) and len(_graph()) > 100


def test_no_module_imports_from_a_layer_above_its_own():
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if rank[target.split(".")[0]] > rank[module.split(".")[0]]
    )
    assert upward == []


@pytest.mark.parametrize("part", ADAPTER_PARTS)
def test_the_adapter_parts_never_import_what_is_built_from_them(part):
    package = f"adapter.{part}"
    offenders = sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if _is_within(module, package)
        for target in targets
        if any(target == a or (a != "adapter" and _is_within(target, a)) for a in ADAPTER_ASSEMBLY)
    )
    assert offenders == []


def test_there_are_no_import_cycles():
    graph = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    # a package's __init__ re-exporting its modules is not a cycle of design
    real = [c for c in cycles if not any(_is_within(b, a) or _is_within(a, b) for a, b in itertools.pairwise(c))]
    assert real == []
