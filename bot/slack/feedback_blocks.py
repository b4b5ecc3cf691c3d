"""Feedback buttons under an answer, and the "what was wrong?" form a 👎 opens, as Block Kit.

Pure functions, no I/O. A button's value carries only the verdict and the run id (`down:<run>`); everything
else is read from the store when the click arrives, and a value that does not read is refused there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    ContextActionsBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    InputBlock,
    PlainTextInputElement,
)
from slack_sdk.models.views import View

from bot.core import COMMENT_CHARS, FeedbackVerdict
from bot.wording import InFeedback

FEEDBACK = "parley_feedback"  # the feedback buttons' action_id
FEEDBACK_BLOCK = "parley_feedback"
COMMENT_MODAL = "parley_feedback_comment"  # the form's callback_id
COMMENT_BLOCK, COMMENT_INPUT = "comment", "comment_input"
RUN_ID_CHARS = 64  # the store's run id column
_SEPARATOR = ":"


@dataclass(frozen=True)
class FeedbackClick:
    """What a feedback button's value says: which verdict, on which run."""

    verdict: FeedbackVerdict
    run_id: str


def feedback_value(verdict: FeedbackVerdict, run_id: str) -> str:
    return f"{verdict.value}{_SEPARATOR}{run_id}"


def read_value(value: object) -> FeedbackClick | None:
    """A button value as `feedback_value` wrote it; None for anything else (forged, truncated, not a string)."""
    if not isinstance(value, str):
        return None
    verdict, separator, run_id = value.partition(_SEPARATOR)
    if not separator or not run_id or len(run_id) > RUN_ID_CHARS or not run_id.isprintable():
        return None
    try:
        return FeedbackClick(FeedbackVerdict(verdict), run_id)
    except ValueError:
        return None


def feedback_block(run_id: str) -> dict[str, Any]:
    """The 👍 / 👎 under an answer: Slack's feedback buttons in a `context_actions` block (the one builder)."""
    buttons = FeedbackButtonsElement(
        action_id=FEEDBACK,
        positive_button=FeedbackButtonObject(
            text=InFeedback.UP,
            accessibility_label=InFeedback.UP_LABEL,
            value=feedback_value(FeedbackVerdict.UP, run_id),
        ),
        negative_button=FeedbackButtonObject(
            text=InFeedback.DOWN,
            accessibility_label=InFeedback.DOWN_LABEL,
            value=feedback_value(FeedbackVerdict.DOWN, run_id),
        ),
    )
    return ContextActionsBlock(block_id=FEEDBACK_BLOCK, elements=[buttons]).to_dict()


def comment_modal(run_id: str) -> dict[str, Any]:
    """The optional "what was wrong?" form a 👎 opens; closing it keeps the 👎 without a note."""
    field = InputBlock(
        block_id=COMMENT_BLOCK,
        label=InFeedback.FORM_LABEL,
        hint=InFeedback.FORM_HINT,
        optional=True,
        element=PlainTextInputElement(action_id=COMMENT_INPUT, multiline=True, max_length=COMMENT_CHARS),
    )
    view = View(
        type="modal",
        callback_id=COMMENT_MODAL,
        private_metadata=run_id,
        title=InFeedback.FORM_TITLE,
        submit=InFeedback.FORM_SUBMIT,
        close=InFeedback.FORM_CLOSE,
        blocks=[field],
    )
    return view.to_dict()
