"""Every judge-eval module's ``__all__`` names what it defines; ``judge-eval`` resolves to a callable."""

import importlib
import importlib.metadata

import pytest

MODULES = ["eval.dataset", "eval.scoring", "eval.metrics", "eval.report", "eval.plots", "eval.cli", "eval.from_log",
           "eval.log_report"]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_all_is_defined(name):
    module = importlib.import_module(name)
    assert module.__all__, name
    missing = [symbol for symbol in module.__all__ if not hasattr(module, symbol)]
    assert missing == []


def test_console_script_points_at_the_cli():
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="judge-eval")
    assert script.value == "eval.cli:main"
    assert callable(script.load())
