"""Lazy exports: a package's face whose names are each imported from their own module when first used (PEP 562).

`import agent` then costs nothing: a front end that only reads the history does not load the fact-checker, the
loop or the MCP SDK with it. The package lists its imports twice, under `TYPE_CHECKING` for the type checker and
as data for this module; a test keeps the two in step.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, which exports `modules` (module → the names it defines)."""
    homes = {name: module for module, names in modules.items() for name in names}
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # found without this function from now on
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
