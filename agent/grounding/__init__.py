"""The fact-checker: which figures and dates of an answer the tool results back, and how — or why not.

One face: `check(answer, sources, question) -> Grounding`; `prepare(source)` reads a result as it arrives, so
that a check does not wait for it; `warm_up()` pays the first-use costs before a server serves anyone.
Everything else in this package is how. The face is loaded when first used (`agent.exports`): a module that
needs only the names of things (`agent.grounding.names`, for the Definition of Done) does not load the checker.
"""

import typing as _typing

from agent.exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # what the type checker reads; at run time each name is loaded from `_MODULES`
    from agent.grounding.checker import check, prepare
    from agent.grounding.verdict import Grounding, SentenceCheck
    from agent.grounding.warm import warm_up

__all__ = ["Grounding", "SentenceCheck", "check", "prepare", "warm_up"]

_MODULES: dict[str, tuple[str, ...]] = {
    "agent.grounding.checker": ("check", "prepare"),
    "agent.grounding.verdict": ("Grounding", "SentenceCheck"),
    "agent.grounding.warm": ("warm_up",),
}
if not _typing.TYPE_CHECKING:  # hidden from the type checker, which would take any misspelt name for an export
    __getattr__, __dir__ = _lazy_exports(__name__, _MODULES)
