"""BuiltinOptions: the `options:` of a built-in tool entry, checked, and the data file they may name."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from agent.errors import ConfigError


class BuiltinOptions(BaseModel):
    """Base of each built-in's options model: frozen, and an unknown option is a configuration error."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def parse(cls, options: Mapping[str, Any], *, builtin: str) -> Self:
        unknown = [str(key) for key in options if key not in cls.model_fields]
        if unknown:
            known = ", ".join(cls.model_fields) or "none"
            raise ConfigError(f"builtin {builtin!r}: unknown option {unknown[0]!r}; its options are: {known}")
        try:
            return cls.model_validate(dict(options))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}" for err in exc.errors()
            )
            raise ConfigError(f"builtin {builtin!r}: bad options ({problems})") from None


def load_data_file(data_dir: Path, file: str, *, builtin: str) -> Any:
    """Parse a YAML data file named relative to `data_dir` (or absolute); ConfigError names the path."""
    path = Path(file) if Path(file).is_absolute() else data_dir / file
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"builtin {builtin!r}: cannot read its data file {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"builtin {builtin!r}: data file {path} is not UTF-8 text") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"builtin {builtin!r}: data file {path} is not valid YAML ({exc})") from None
