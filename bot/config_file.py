"""The YAML configuration file: found, read, validated into an AgentConfig, hashed for the record."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agent import AgentConfig, ConfigError, exception_line
from bot.core.config import JobsConfig, OwnershipConfig, ReviewConfig, split_review
from bot.suggested_prompts import AssistantConfig

CONFIG_FILE = "parley.yaml"
APPLICATION_SECTIONS = ("review", "jobs", "ownership")  # the application's; the rest is the engine's
SECTION_OF = {"ReviewConfig": "review", "JobsConfig": "jobs", "OwnershipConfig": "ownership"}
ERRORS_FILE = "errors.yaml"


def defaults_dir() -> Path:
    """The shipped `config/`: beside the packages in a checkout, inside `bot/defaults` in a wheel."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "config", here / "defaults"):
        if (candidate / CONFIG_FILE).is_file():
            return candidate
    raise ConfigError(f"the default configuration is missing (looked in {here.parent / 'config'})")


@dataclass(frozen=True)
class LoadedConfig:
    agent: AgentConfig
    path: Path
    data_dir: Path  # where built-in tools find their data files
    hash: str
    review: ReviewConfig = field(default_factory=ReviewConfig)
    jobs: JobsConfig = field(default_factory=JobsConfig)
    ownership: OwnershipConfig = field(default_factory=OwnershipConfig)
    assistant: AssistantConfig = field(default_factory=AssistantConfig)
    evaluation: dict[str, Any] = field(default_factory=dict)  # `eval:` as written; `parley eval` validates it


def load_config(path: Path | None = None) -> LoadedConfig:
    """Read `path` (or ./config/parley.yaml, or the shipped default) with the error table beside it."""
    if path is None:
        local = Path("config") / CONFIG_FILE
        path = local if local.is_file() else defaults_dir() / CONFIG_FILE
    raw = _read_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping (got {type(raw).__name__})")
    errors_table: dict[str, Any] = {}
    for candidate in (path.parent / ERRORS_FILE, defaults_dir() / ERRORS_FILE):
        if candidate.is_file():
            table = _read_yaml(candidate) or {}
            errors_table = dict(table.get("codes", {})) if isinstance(table, dict) else {}
            break
    raw = {**raw, "errors": {**errors_table, **(raw.get("errors") or {})}}
    if "escalate_on" in raw:
        raise ConfigError(f"{path}: escalate_on belongs under review: (review.escalate_on)")
    for name in APPLICATION_SECTIONS:
        if raw.get(name) is not None and not isinstance(raw.get(name), dict):
            raise ConfigError(f"{path}: {name}: must be a mapping (got {type(raw[name]).__name__})")
    assistant = _assistant(path, raw.get("assistant"))
    evaluation = raw.get("eval") or {}
    if not isinstance(evaluation, dict):
        raise ConfigError(f"{path}: eval: must be a mapping (got {type(evaluation).__name__})")
    engine = {k: v for k, v in raw.items() if k not in (*APPLICATION_SECTIONS, "assistant", "eval")}
    try:
        sections = split_review(raw)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if "escalate_on" in sections["review"]:
        engine["escalate_on"] = sections["review"].pop("escalate_on")  # the engine decides what goes to people
    try:
        review = ReviewConfig.model_validate(sections["review"])
        jobs = JobsConfig.model_validate(sections["jobs"])
        ownership = OwnershipConfig.model_validate(sections["ownership"])
        agent = AgentConfig.model_validate(engine)
    except ValidationError as exc:
        first = exc.errors()[0]
        section = SECTION_OF.get(exc.title)
        if first["loc"][:1] == ("escalate_on",):
            section = "review"
        where = ".".join(str(p) for p in ((section, *first["loc"]) if section else first["loc"]))
        raise ConfigError(f"{path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:16]
    data_dir = path.parent if (path.parent / "knowledge.yaml").is_file() else defaults_dir()
    return LoadedConfig(
        agent=agent,
        path=path,
        data_dir=data_dir,
        hash=digest,
        review=review,
        jobs=jobs,
        ownership=ownership,
        assistant=assistant,
        evaluation=evaluation,
    )


def _assistant(path: Path, raw: Any) -> AssistantConfig:
    """`assistant:` (Slack's assistant pane); its first problem named by its place in the file."""
    try:
        return AssistantConfig.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in ("assistant", *first["loc"]))
        raise ConfigError(f"{path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {path}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exception_line(exc)}") from None
