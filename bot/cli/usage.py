"""UsageError: a command that cannot be carried out as it was given (a bad option, a run that cannot be named, a
decision that is not there to take). One line for the person who typed it, exit status 2 — apart from a
`ConfigError`, which is about the configuration, not the command line."""

from __future__ import annotations


class UsageError(Exception):
    """The command cannot be carried out as given; `str()` is the one line to print."""
