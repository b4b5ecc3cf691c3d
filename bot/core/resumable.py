"""Whether an approved held run may go on: its saved state must run exactly the calls its reviewer was shown.

The reviewer approved the calls in the escalation (what their message showed). Should the saved state differ —
edited, or written by another version that this one cannot read — the approval does not carry over to it, and
nothing runs.
"""

from __future__ import annotations

from pydantic import ValidationError

from agent import RunSnapshot
from bot.store import Database
from bot.store.escalations import current_escalation, saved_state


class HeldCallsChanged(Exception):
    """The saved state is not the one the reviewer approved — it would run other calls, or it cannot be read
    (written by another version, a field missing): nothing runs."""


async def approved_snapshot(db: Database, run_id: str) -> RunSnapshot:
    """The held run's saved state, read back whole and checked: its held calls are exactly those shown."""
    escalated = await current_escalation(db, run_id)
    saved = await saved_state(db, run_id)
    if escalated is None or not saved:
        raise HeldCallsChanged(f"run {run_id} kept no state to resume from")
    try:
        snapshot = RunSnapshot.model_validate(saved)
    except ValidationError as exc:
        raise HeldCallsChanged(f"run {run_id}: its saved state cannot be read by this version ({_where(exc)})") from exc
    shown = [(call.id, call.tool, call.arguments) for call in escalated.escalation.held_calls]
    saved_calls = [(call.id, call.tool, call.arguments) for call in snapshot.held]
    if shown != saved_calls:
        raise HeldCallsChanged(f"run {run_id}: the saved held calls differ from those the reviewer approved")
    return snapshot


def _where(exc: ValidationError, shown: int = 3) -> str:
    """Which fields of a saved state are wrong, e.g. `counters.tokens: Field required`."""
    problems = [f"{'.'.join(map(str, error['loc'])) or 'the state'}: {error['msg']}" for error in exc.errors()]
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more
