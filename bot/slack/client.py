"""Slack's Web API client and bolt's app, configured once: 429s wait for Retry-After, brief outages are retried
(slack_sdk's handlers), requests are verified with the signing secret, and tests point the client at a fake."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.settings import Settings

SLACK_RETRIES = 3


def slack_client(settings: Settings) -> AsyncWebClient:
    """The Web API client of the bot token."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    return configure_client(AsyncWebClient(token=token), settings)


def configure_client(client: AsyncWebClient, settings: Settings) -> AsyncWebClient:
    client.base_url = _api_url(settings.slack_api_url)
    client.retry_handlers.extend(
        [
            AsyncRateLimitErrorRetryHandler(max_retry_count=SLACK_RETRIES),
            AsyncServerErrorRetryHandler(max_retry_count=SLACK_RETRIES),
        ]
    )
    if not any(isinstance(h, AsyncConnectionErrorRetryHandler) for h in client.retry_handlers):
        client.retry_handlers.append(AsyncConnectionErrorRetryHandler(max_retry_count=SLACK_RETRIES))
    return client


def _api_url(url: str | None) -> str:
    if not url:
        return AsyncWebClient.BASE_URL
    return url if url.endswith("/") else url + "/"


def slack_app(settings: Settings, client: AsyncWebClient | None = None) -> AsyncApp:
    """bolt's app: requests verified with the signing secret; its Web API client configured once."""
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    options: dict[str, Any] = {
        "signing_secret": secret,
        "request_verification_enabled": secret is not None,
        "raise_error_for_unhandled_request": False,
    }
    if client is not None:
        return AsyncApp(client=client, **options)
    # bolt builds the client from the token (given both, it warns that the token is unused)
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    app = AsyncApp(token=token, **options)
    configure_client(app.client, settings)
    return app
