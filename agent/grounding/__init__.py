"""The fact-checker: which figures and dates of an answer the tool results back, and how — or why not.

One face: `check(answer, sources, question) -> Grounding`; `prepare(source)` reads a result as it arrives, so
that a check does not wait for it; `warm_up()` pays the first-use costs before a server serves anyone.
Everything else in this package is how.
"""

from agent.grounding.checker import check, prepare
from agent.grounding.verdict import Grounding, SentenceCheck
from agent.grounding.warm import warm_up

__all__ = ["Grounding", "SentenceCheck", "check", "prepare", "warm_up"]
