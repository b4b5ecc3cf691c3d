"""Interactions — a button clicked, a form submitted — read where they enter, and the private answer to the
person who clicked.

Reviewers' buttons and forms (bot/slack/review.py) and the 👍 / 👎 under answers (bot/slack/feedback.py) read
the same few fields of Slack's `block_actions` and `view_submission` payloads: who, in which channel, the
clicked button's value, what was typed in a form, the run a form is about. A payload whose fields do not read
as Slack sends them reads as empty (no clicker, no value), and the listener refuses it.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.slack.gateway import SlackGateway

log = logging.getLogger(__name__)


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Ref(_Read):
    id: str = ""


class _Container(_Read):
    channel_id: str | None = None


class _Action(_Read):
    value: str | None = None


class _Input(_Read):
    value: str | None = None


class _State(_Read):
    values: dict[str, dict[str, _Input]] = Field(default_factory=dict)


class _View(_Read):
    private_metadata: str = ""
    state: _State = Field(default_factory=_State)


class Interaction(_Read):
    """One click or form submission, as Parley reads it."""

    user: _Ref = Field(default_factory=_Ref)
    channel: _Ref | None = None
    container: _Container | None = None
    trigger_id: str | None = None
    actions: list[_Action] = Field(default_factory=list)
    view: _View | None = None

    @property
    def clicker(self) -> str:
        """The Slack user id of the person who clicked or submitted ("" when the payload names nobody)."""
        return self.user.id

    @property
    def channel_id(self) -> str | None:
        """Where the click happened (a form has no channel)."""
        if self.channel is not None and self.channel.id:
            return self.channel.id
        return self.container.channel_id if self.container is not None else None

    @property
    def value(self) -> str:
        """The clicked button's value."""
        return (self.actions[0].value or "") if self.actions else ""

    @property
    def about(self) -> str:
        """What a submitted form is about: its `private_metadata` (a run id)."""
        return self.view.private_metadata if self.view is not None else ""

    def typed(self, block: str, action: str) -> str:
        """What was typed in a submitted form's input `action` of `block` ("" when left empty)."""
        if self.view is None:
            return ""
        found = self.view.state.values.get(block, {}).get(action)
        return (found.value or "") if found is not None else ""


def read_interaction(body: Any) -> Interaction:
    """The interaction in a payload bolt handed over; one that does not read is empty (it names nobody)."""
    try:
        return Interaction.model_validate(body)
    except ValidationError as exc:
        log.warning("an interaction payload does not read: %s", exc.errors(include_url=False)[:1])
        return Interaction()


async def answer_privately(gateway: SlackGateway, clicked: Interaction, text: str) -> None:
    """Tell the person who clicked, and only them (an ephemeral message where they clicked)."""
    if not clicked.channel_id or not clicked.clicker:
        return
    await gateway.ephemeral(clicked.channel_id, clicked.clicker, text, what=f"answer {clicked.clicker} privately")


async def open_form(gateway: SlackGateway, clicked: Interaction, view: dict[str, Any], what: str) -> bool:
    """Open a form (modal) for the person who clicked; False when Slack did not (the click's trigger expired)."""
    if not clicked.trigger_id:
        log.warning("could not open %s: the click carries no trigger_id", what)
        return False
    return await gateway.open_form(clicked.trigger_id, view, what=f"open {what}")
