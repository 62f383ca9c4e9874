"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def trl_helpers() -> ModuleType:
    """The TRL unit tests' module, for its tiny-trainer helpers (``run_grpo``, ``step_logs``;
    tests/ is not a package)."""
    path = Path(__file__).resolve().parents[1] / "adapter" / "integrations" / "test_trl.py"
    spec = importlib.util.spec_from_file_location("trl_unit_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
