"""Serving the Slack bot: HTTP through uvicorn (bolt's ASGI adapter), or Socket Mode for local development."""

from __future__ import annotations

import logging

import uvicorn
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from bot.slack.app import SlackBot

log = logging.getLogger(__name__)


async def serve_http(bot: SlackBot, *, host: str, port: int) -> None:
    """Until interrupted: POST /slack/events for events, interactivity and commands; GET /healthz."""
    config = uvicorn.Config(bot, host=host, port=port, lifespan="on", log_level="info", access_log=False)
    await uvicorn.Server(config).serve()


async def serve_socket_mode(bot: SlackBot, app_token: str) -> None:
    """Until interrupted: events over Slack's WebSocket (no public URL needed)."""
    await bot.start()
    handler = AsyncSocketModeHandler(bot.app, app_token)
    try:
        log.info("connected to Slack in Socket Mode")
        await handler.start_async()
    finally:
        await handler.close_async()
        await bot.stop()
