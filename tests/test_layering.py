"""The import graph: no cycles, and no module importing from a layer above its own.

Layers, lowest first: ``judge_prompts`` < ``judge_vllm`` < ``adapter`` < ``eval``. Inside
``adapter``, floors (``ADAPTER_FLOORS``, the table in docs/ARCHITECTURE.md): a module imports
from its own part or from a part on a lower floor, never sideways, never up. Every import
counts, a lazy one inside a function too.
"""

from __future__ import annotations

import ast
import itertools
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYERS = ["judge_prompts", "judge_vllm", "adapter", "eval"]
ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"
# Lowest first; a part is a package or a module of adapter ("adapter" alone: its __init__).
ADAPTER_FLOORS = [
    ["adapter.rules", "adapter.cache", "adapter.fork_safety", "adapter.result", "adapter.settings"],
    ["adapter.config"],
    ["adapter.observability"],
    ["adapter.dispatch", "adapter.pipeline"],
    ["adapter.groups", "adapter.rubrics", "adapter.process", "adapter.metrics_dict"],
    ["adapter.reward"],
    ["adapter.ensemble"],
    ["adapter.escalation"],
    ["adapter.factory"],
    ["adapter.http", "adapter.config_reference", "adapter.preflight"],
    ["adapter.integrations"],
    ["adapter.cli"],
    ["adapter"],
]
FLOOR = {part: i for i, floor in enumerate(ADAPTER_FLOORS) for part in floor}


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


def _adapter_part(module: str) -> str | None:
    return next((p for p in FLOOR if module == p or (p != "adapter" and _is_within(module, p))), None)


def test_every_adapter_module_is_on_a_floor():
    adapter_modules = [m for m in _graph() if _is_within(m, "adapter")]
    assert [m for m in adapter_modules if _adapter_part(m) is None] == []


@pytest.mark.parametrize("part", list(FLOOR))
def test_inside_adapter_imports_only_go_down_a_floor(part):
    offenders = sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if _adapter_part(module) == part
        for target in targets
        if (below := _adapter_part(target)) is not None and below != part and FLOOR[below] >= FLOOR[part]
    )
    assert offenders == []


def test_the_architecture_page_shows_the_floors():
    rows = re.findall(r"^\| (\d+) \| ([^|]*) \|", ARCHITECTURE.read_text(), flags=re.M)
    documented = [[f"adapter.{p}" if p != "adapter" else p for p in re.findall(r"`([\w.]+)`", parts)]
                  for _, parts in rows]  # fmt: skip
    assert documented == ADAPTER_FLOORS and [int(n) for n, _ in rows] == list(range(1, len(rows) + 1))


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
