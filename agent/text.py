"""Short text: a longer text or an exception cut to what a log line, an error message or a person can take.

One rule everywhere: whitespace folded to single spaces, and "…" where something was cut, so a reader always
knows when there was more.
"""

from __future__ import annotations

ELLIPSIS = "…"
EXCEPTION_CHARS = 300  # of an exception's message: the gist of a driver's error, not its whole repr


def clip(text: str, limit: int) -> str:
    """At most `limit` characters (at least 1), ending in "…" when cut; line breaks are kept."""
    return text if len(text) <= limit else text[: max(limit, 1) - 1] + ELLIPSIS


def shorten(text: object, limit: int) -> str:
    """One line of at most `limit` characters: whitespace folded, "…" where it was cut."""
    return clip(" ".join(str(text).split()), limit)


def exception_line(exc: BaseException, limit: int = EXCEPTION_CHARS) -> str:
    """`TypeName: message` on one line, the message shortened to `limit`; the type alone when it says nothing.

    For logs and the reasons in error messages: never a traceback, never a line break a log parser would split.
    """
    message = shorten(exc, limit)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
