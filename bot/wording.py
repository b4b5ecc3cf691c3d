"""Every sentence the bot says to people, in one place (the engine's are in `agent/wording.py`).

A situation people meet in several places is said one way everywhere: only the clause that names what could
not be done changes with the place.
"""

from __future__ import annotations

# The store cannot be reached: said when a question comes in, when a worker starts it, when history is read.
DATABASE_UNAVAILABLE = "my database is unavailable. Please ask again in a minute."
NOT_TAKEN_DATABASE_UNAVAILABLE = f"I could not take your question: {DATABASE_UNAVAILABLE}"
NOT_STARTED_DATABASE_UNAVAILABLE = f"I could not start on your question: {DATABASE_UNAVAILABLE}"
NO_HISTORY_DATABASE_UNAVAILABLE = f"I can't read Parley's history right now: {DATABASE_UNAVAILABLE}"
