"""warm_up: what the fact-checker loads on first use is loaded before a server serves anyone."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import sys

import agent.grounding
from agent.grounding import check, warm_up
from agent.source import Source


def loaded_once() -> dict[str, functools._lru_cache_wrapper]:
    """Every cache in agent/grounding/ of a function without arguments: what the checker loads once. All of the
    package's caches are emptied first, as in a new process: a cache keyed by a word ("Zephyr Labs" is a name)
    that earlier tests filled would otherwise spare the warm-up a first use it must pay."""
    found: dict[str, functools._lru_cache_wrapper] = {}
    for module_info in pkgutil.iter_modules(agent.grounding.__path__):
        module = importlib.import_module(f"agent.grounding.{module_info.name}")
        for name, value in vars(module).items():
            if not isinstance(value, functools._lru_cache_wrapper) or value.__module__ != module.__name__:
                continue
            value.cache_clear()
            if not inspect.signature(value.__wrapped__).parameters:
                found[f"{module.__name__}.{name}"] = value
    return found


def test_loaded_once_finds_the_month_names():
    assert "agent.grounding.dates._month_names" in loaded_once()


def test_warm_up_loads_everything_the_checker_loads_once():
    caches = loaded_once()
    warm_up()
    assert {name for name, cache in caches.items() if cache.cache_info().currsize == 0} == set()


def test_a_check_after_warm_up_imports_nothing():
    warm_up()
    imported = set(sys.modules)
    sources = [Source(1, "calculator", "c1", 1, {"expression": "47 * 12"}, {"expression": "47 * 12", "result": 564})]
    for answer in ("47 mal 12 ist 564 [1], am Donnerstag, 3. Dezember.", "四十七乘以十二等于五百六十四【1】。"):
        check(answer, sources, "Was ist 47 mal 12?")
    assert set(sys.modules) - imported == set()
