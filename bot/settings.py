"""Settings: the only place that reads the environment. Built once at the entry point and passed down."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRETS = {"changeme", "change-me", "xxx", "your-api-key", "sk-...", "<api-key>"}


class Settings(BaseSettings):
    """`PARLEY_*` variables (DESIGN.md). Secrets are `SecretStr`: they never print."""

    model_config = SettingsConfigDict(env_prefix="PARLEY_", extra="ignore", frozen=True)

    config: Path | None = Field(None, description="YAML configuration file (default config/parley.yaml)")
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    database_url: str | None = Field(None, description="default: a SQLite file in the user's data directory")

    @field_validator("llm_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"PARLEY_LLM_BASE_URL must start with http:// or https:// (got {value!r})")
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
