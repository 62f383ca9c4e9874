"""``Any`` only at true boundaries: mypy (``make test``) rejects an explicit ``Any`` outside the
modules ``[tool.mypy]``'s overrides list, and that list names only modules that still need it."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest
from mypy import api

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli, which mypy needs there, is the same parser
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
MAX_BOUNDARY_MODULES = 7  # raise it only for a true boundary, with its reason in pyproject.toml


def _boundary_modules() -> list[str]:
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    assert mypy["disallow_any_explicit"] is True
    (override,) = [o for o in mypy["overrides"] if "disallow_any_explicit" in o]
    assert override["disallow_any_explicit"] is False
    return list(override["module"])


def _names_any(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == "Any" for alias in node.names)
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Attribute) and node.attr == "Any"
    )


def _any_arguments(node: ast.AST) -> bool:
    """``Callable[..., T]``: a subscript whose first item is ``...``."""
    items = node.slice.elts if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) else []
    return bool(items) and isinstance(items[0], ast.Constant) and items[0].value is Ellipsis


def explicit_any_lines(source: str) -> list[int]:
    """The lines that name ``Any`` (however imported) or write ``Callable[..., T]``."""
    nodes = ast.walk(ast.parse(source))
    return sorted({node.lineno for node in nodes if _names_any(node) or _any_arguments(node)})


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from typing import Any\nx: Any = 1\n", [1, 2]),
        ("import typing\nx: typing.Any = 1\n", [2]),
        ("from typing_extensions import Any as Whatever\n", [1]),
        ("from collections.abc import Callable\nf: Callable[..., int]\n", [2]),
        ("x: object = 1\ny: tuple[int, ...] = ()\n", []),
    ],
)
def test_explicit_any_lines(source, found):
    assert explicit_any_lines(source) == found


def test_mypy_rejects_a_planted_any_outside_the_boundary_modules(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from typing import Any\n\n\ndef passed_through(value: Any) -> Any:\n    return value\n"
    )
    clean = tmp_path / "clean.py"
    clean.write_text("def passed_through(value: object) -> object:\n    return value\n")
    config = ["--config-file", str(REPO / "pyproject.toml"), "--cache-dir", os.devnull]
    out, _, status = api.run([*config, str(planted), str(clean)])
    assert status == 1, out
    assert [line.split(":")[:2] for line in out.splitlines() if "[explicit-any]" in line] == [
        [str(planted), "4"]
    ]


@pytest.mark.parametrize("module", _boundary_modules())
def test_each_boundary_module_still_needs_its_exception(module):
    path = REPO / (module.replace(".", "/") + ".py")
    assert explicit_any_lines(path.read_text()), f"{module} has no explicit Any: drop it from the list"


def test_the_boundary_list_stays_short():
    assert len(_boundary_modules()) <= MAX_BOUNDARY_MODULES
