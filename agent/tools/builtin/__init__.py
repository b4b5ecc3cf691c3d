"""Built-in tools, by the name a config entry gives them (`- builtin: calculator`).

Each factory takes the entry's `options:` and the directory data files are named relative to, and returns
a `Tool`. The demo data (config/knowledge.yaml, search_corpus.yaml, weather.yaml) is read at build time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agent.tools.base import Tool
from agent.tools.builtin.calculator import build_calculator
from agent.tools.builtin.knowledge import build_knowledge_lookup
from agent.tools.builtin.search import build_web_search
from agent.tools.builtin.weather import build_get_weather

BuiltinFactory = Callable[[Mapping[str, Any], Path], Tool]

BUILTINS: Mapping[str, BuiltinFactory] = MappingProxyType(
    {
        "calculator": build_calculator,
        "knowledge_lookup": build_knowledge_lookup,
        "web_search": build_web_search,
        "get_weather": build_get_weather,
    }
)

__all__ = ["BUILTINS", "BuiltinFactory"]
