"""Every judge-eval module's ``__all__`` names what it defines; ``judge-eval`` resolves to a callable."""

import importlib
import importlib.metadata

import pytest

MODULES = ["eval.dataset", "eval.scoring", "eval.metrics", "eval.report", "eval.plots", "eval.cli", "eval.from_log",
           "eval.log_report", "eval.cached", "eval.terminal", "eval.compare"]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_all_is_defined(name):
    module = importlib.import_module(name)
    assert module.__all__, name
    missing = [symbol for symbol in module.__all__ if not hasattr(module, symbol)]
    assert missing == []


@pytest.mark.parametrize(("name", "target"), [("judge-eval", "judge_eval"), ("judge-bench", "judge_bench")])
def test_console_scripts_point_at_their_entry_points(name, target):
    (script,) = importlib.metadata.entry_points(group="console_scripts", name=name)
    assert script.value == f"eval.entry_points:{target}"
    assert callable(script.load())
