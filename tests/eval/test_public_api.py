"""Every judge-eval module's ``__all__`` names what it defines, and the console script's target."""

import importlib

import pytest

MODULES = ["eval.dataset", "eval.scoring", "eval.metrics", "eval.report", "eval.plots", "eval.cli"]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_defined(name):
    module = importlib.import_module(name)
    assert module.__all__, name
    missing = [symbol for symbol in module.__all__ if not hasattr(module, symbol)]
    assert missing == []


def test_console_script_target_is_callable():
    from eval.cli import main

    assert callable(main)
