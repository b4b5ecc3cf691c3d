"""ArgumentSchema: a tool's JSON Schema for its arguments, checked before anything is sent.

Shared by the tools whose schema comes from outside Python: an HTTP tool's `parameters:` and an MCP server's
`inputSchema`. A schema that is not valid JSON Schema is refused where the tool is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from agent.errors import ErrorCode, ToolError
from agent.text import clip

MAX_PROBLEMS = 5


class InvalidSchema(ValueError):
    """The schema itself is not valid JSON Schema (the message says where)."""


class ArgumentSchema:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        schema = dict(schema)
        cls = validator_for(schema, default=Draft202012Validator)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            raise InvalidSchema(exc.message) from None
        self._validator = cls(schema)

    def check(self, arguments: Any) -> dict[str, Any]:
        """The arguments as a dict, or `ToolError(INVALID_ARGS)` naming what is wrong (at most five problems)."""
        if not isinstance(arguments, Mapping):
            raise ToolError(ErrorCode.INVALID_ARGS, "the arguments must be a JSON object")
        args = dict(arguments)
        problems = sorted(self._validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path])
        if problems:
            raise ToolError(ErrorCode.INVALID_ARGS, "; ".join(_describe(p) for p in problems[:MAX_PROBLEMS]))
        return args


def _describe(error: ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    message = clip(error.message, 200)
    return f"{where}: {message}" if where else message
