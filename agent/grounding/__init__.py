"""The fact-checker: which figures and dates of an answer the tool results back, and how — or why not.

One face: `check(answer, sources, question) -> Grounding`; `prepare(source)` reads a result as it arrives, so
that a check does not wait for it. Everything else in this package is how.
"""

from agent.grounding.checker import check, prepare
from agent.grounding.verdict import Grounding, SentenceCheck

__all__ = ["Grounding", "SentenceCheck", "check", "prepare"]
