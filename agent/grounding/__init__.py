"""The fact-checker: which figures and dates of an answer the tool results back, and how — or why not.

One face: `check(answer, sources, question) -> Grounding`. Everything else in this package is how.
"""

from agent.grounding.checker import Grounding, SentenceCheck, check

__all__ = ["Grounding", "SentenceCheck", "check"]
