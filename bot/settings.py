"""Settings: the only place that reads the environment. Built once at the entry point and passed down."""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRETS = {"changeme", "change-me", "xxx", "your-api-key", "sk-...", "<api-key>"}


class Settings(BaseSettings):
    """`PARLEY_*` variables (DESIGN.md). Secrets are `SecretStr`: they never print."""

    model_config = SettingsConfigDict(env_prefix="PARLEY_", extra="ignore", frozen=True, populate_by_name=True)

    config: Path | None = Field(None, description="YAML configuration file (default config/parley.yaml)")
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    database_url: str | None = Field(None, description="default: a SQLite file in the user's data directory")
    slack_api_url: str | None = Field(None, description="the Slack Web API base URL (tests point it at a fake)")
    workers: int = Field(4, ge=1, le=64, description="agent runs at once in `parley serve`")
    review_channel: str | None = Field(None, description="the reviewer channel's id (overrides review.channel)")
    slack_streaming: Literal["auto", "off"] = Field(
        "auto", description="auto: stream replies with Slack's task timeline where allowed; off: chat.update only"
    )
    # Slack's own names, without our prefix.
    slack_bot_token: SecretStr | None = Field(None, validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, validation_alias="SLACK_SIGNING_SECRET")
    slack_app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN")
    port: int = Field(3000, ge=1, le=65535, validation_alias="PORT")
    # OpenTelemetry's own name: spans are exported over OTLP/HTTP only when it is set.
    otel_endpoint: str | None = Field(None, validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT")

    @field_validator("llm_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"PARLEY_LLM_BASE_URL must start with http:// or https:// (got {value!r})")
        return value

    @field_validator("otel_endpoint")
    @classmethod
    def _otlp_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"OTEL_EXPORTER_OTLP_ENDPOINT must start with http:// or https:// (got {value!r})")
        return value

    @field_validator("llm_model")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("llm_api_key")
    @classmethod
    def _no_placeholder(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and value.get_secret_value().strip().lower() in PLACEHOLDER_SECRETS:
            raise ValueError("PARLEY_LLM_API_KEY is a placeholder; set the real key or unset it")
        return value

    @field_validator("slack_bot_token", "slack_signing_secret", "slack_app_token")
    @classmethod
    def _blank_secret_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        return value if value is not None and value.get_secret_value().strip() else None

    def slack_problems(self) -> list[str]:
        """What keeps `parley serve` from starting, one phrase each (empty when it can start)."""
        problems = []
        bot = self.slack_bot_token.get_secret_value() if self.slack_bot_token else ""
        if not bot:
            problems.append("set SLACK_BOT_TOKEN (xoxb-…)")
        elif not bot.startswith("xoxb-"):
            problems.append("SLACK_BOT_TOKEN must be a bot token starting with xoxb-")
        if self.slack_app_token is not None:
            if not self.slack_app_token.get_secret_value().startswith("xapp-"):
                problems.append("SLACK_APP_TOKEN must be an app-level token starting with xapp-")
        elif self.slack_signing_secret is None:
            problems.append("set SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode)")
        if self.slack_api_url and not self.slack_api_url.startswith(("http://", "https://")):
            problems.append("PARLEY_SLACK_API_URL must start with http:// or https://")
        return problems

    @property
    def slack_configured(self) -> bool:
        """Any of Slack's variables is set: Slack is on (and `slack_problems` says what is missing)."""
        return any(
            secret is not None for secret in (self.slack_bot_token, self.slack_signing_secret, self.slack_app_token)
        )

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    @field_validator("database_url")
    @classmethod
    def _blank_url_is_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @staticmethod
    def cli_user() -> str:
        """Who runs `parley ask`: recorded as the asker of CLI runs."""
        try:
            return f"cli:{getpass.getuser()}"
        except (KeyError, OSError):
            return f"cli:uid{os.getuid()}"

    @staticmethod
    def environ() -> dict[str, str]:
        """The process environment, for `${VAR}` in HTTP tool headers."""
        return dict(os.environ)
