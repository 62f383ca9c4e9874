"""``adapter.http`` exports what its modules define, each name once."""

import importlib

import pytest

import adapter.http

MODULES = ["app", "auth", "metrics", "middleware", "models", "run", "service", "validation"]


@pytest.mark.parametrize("name", ["__init__", *MODULES])
def test_all_names_what_the_module_defines(name):
    module = adapter.http if name == "__init__" else importlib.import_module(f"adapter.http.{name}")
    assert sorted(module.__all__) == sorted(set(module.__all__))
    assert [symbol for symbol in module.__all__ if not hasattr(module, symbol)] == []


def test_the_front_ends_build_on_base_app():
    assert {"base_app", "create_app", "JudgeItem", "Service", "api_config", "serve"} <= set(
        adapter.http.__all__
    )
