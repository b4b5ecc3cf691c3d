"""Prices: what a model's tokens cost, from the configuration's `eval.prices` (US dollars per million tokens).

    eval:
      prices:
        gpt-4.1: {prompt: 2.00, completion: 8.00}
        llama3.1: {prompt: 0, completion: 0}      # served locally

A run whose model has no price has no cost (the report says "—"); replayed runs ask no model and cost nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent import ConfigError

PER_TOKENS = 1_000_000


class Price(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


class Prices(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prices: dict[str, Price] = Field(default_factory=dict)

    @classmethod
    def configured(cls, section: dict[str, Any], path: Path) -> Prices:
        """The `eval:` section of the configuration at `path`; `ConfigError` naming the field otherwise."""
        try:
            return cls.model_validate(section)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in ("eval", *first["loc"]))
            raise ConfigError(f"{path}: {where}: {first['msg']}") from None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The cost of a run's tokens in US dollars; 0 for a replayed run, None for a model without a price."""
        if not model:
            return 0.0
        price = self.prices.get(model)
        if price is None:
            return None
        return (prompt_tokens * price.prompt + completion_tokens * price.completion) / PER_TOKENS
