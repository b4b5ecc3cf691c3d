"""HttpTool: a team's own HTTP API, declared in YAML, called as a tool.

Every failure leaves `call()` as a `ToolError` with a code — a timeout, a refused connection, a 503, an
HTML page with status 200, a body that says `{"ok": false}` — never as data. httpx exceptions are translated
in one place, `translate_http_error`; the reply is judged by `http_reply.interpret_reply`; configured secrets
(header values, `${VAR}` values) are scrubbed from every message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from agent.config import HttpToolEntry
from agent.errors import ConfigError, ErrorCode, ToolError, code_for_status
from agent.tools.arguments import ArgumentSchema, InvalidSchema
from agent.tools.base import ToolSpec
from agent.tools.http_reply import HttpReply, interpret_reply

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_SENSITIVE_HEADER = re.compile(r"auth|token|key|secret|cookie|session|password|credential", re.IGNORECASE)
_MIN_SECRET_CHARS = 4  # shorter values are not secrets, and scrubbing them would garble every message
_REDACTED = "***"


class HttpTool:
    """An `HttpToolEntry` bound to a shared client and the environment its `${VAR}` references read."""

    def __init__(
        self,
        entry: HttpToolEntry,
        client: httpx.AsyncClient,
        env: Mapping[str, str],
        *,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._entry = entry
        self._client = client
        self._max_bytes = max_response_bytes
        self._spec = ToolSpec(entry.name, entry.description, dict(entry.parameters))
        self._schema = _argument_schema(entry)
        self._url, url_secrets = substitute_env(entry.http.url, env, where=f"tool {entry.name!r}: http.url")
        self._placeholders = tuple(dict.fromkeys(_PLACEHOLDER.findall(self._url)))
        self._headers, header_secrets = _resolve_headers(entry, env)
        self._secrets = tuple(sorted({*url_secrets, *header_secrets}, key=len, reverse=True))
        _check_url(entry, self._url, self._placeholders)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def timeout_s(self) -> float:
        return self._entry.http.timeout_s

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check the arguments against the entry's JSON Schema; `ToolError(INVALID_ARGS)` says what is wrong."""
        args = self._schema.check(arguments)
        missing = [name for name in self._placeholders if args.get(name) is None]
        if missing:
            raise ToolError(ErrorCode.INVALID_ARGS, f"missing {', '.join(missing)}: needed to build the URL")
        return args

    async def call(self, arguments: dict[str, Any]) -> Any:
        """Send the request; return the parsed JSON of a successful answer, raise `ToolError` for anything else."""
        try:
            args = self.validate(arguments)
            data = await self._call(args)
        except ToolError as error:
            raise self._scrub(error) from None
        # An API may echo our headers in a successful body too: no secret reaches the model or the trace.
        return self._redact(data) if self._secrets else data

    async def _call(self, args: dict[str, Any]) -> Any:
        method = self._entry.http.method
        url, rest = self._fill_url(args)
        params: dict[str, Any] | None = None
        content: bytes | None = None
        headers = dict(self._headers)
        if method in _BODY_METHODS:
            content = _json_body(rest)
            headers.setdefault("Content-Type", "application/json")
        else:
            params = {k: _query_value(v) for k, v in rest.items() if v is not None}
        try:
            async with asyncio.timeout(self.timeout_s):
                reply = await self._send(method, url, params, content, headers)
        except (httpx.HTTPError, httpx.InvalidURL, httpx.CookieConflict, httpx.StreamError, OSError) as exc:
            logger.info("%s: %s %s failed: %s", self._entry.name, method, self._entry.http.url, type(exc).__name__)
            raise translate_http_error(exc, timeout_s=self.timeout_s) from None
        return interpret_reply(reply, self._max_bytes)

    def _fill_url(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Placeholders take their argument percent-encoded (so `上海` and `a/b` stay one path segment)."""
        url = _PLACEHOLDER.sub(lambda m: quote(_text(args[m.group(1)]), safe=""), self._url)
        rest = {k: v for k, v in args.items() if k not in self._placeholders}
        return url, rest

    async def _send(
        self,
        method: str,
        url: str,
        params: dict[str, Any] | None,
        content: bytes | None,
        headers: dict[str, str],
    ) -> HttpReply:
        """Send, following redirects within the same origin only: our headers may carry secrets."""
        target = httpx.URL(url).copy_merge_params(params) if params else httpx.URL(url)
        for _ in range(MAX_REDIRECTS + 1):
            async with self._client.stream(
                method,
                target,
                content=content,
                headers=headers,
                timeout=httpx.Timeout(self.timeout_s),
                follow_redirects=False,
            ) as response:
                location = response.headers.get("location") if response.is_redirect else None
                if location is None:
                    return await self._read(response)
                following = response.url.join(location)
                if (following.scheme, following.host, following.port) != (target.scheme, target.host, target.port):
                    return HttpReply(response.status_code, response.reason_phrase, response.headers, b"")
            if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                method, content = "GET", None
            target = following
        raise httpx.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")

    async def _read(self, response: httpx.Response) -> HttpReply:
        """The body, read as it streams in and given up past the cap."""
        announced = _content_length(response.headers)
        if announced is not None and announced > self._max_bytes:
            note = f"{announced} bytes announced"
            return HttpReply(response.status_code, response.reason_phrase, response.headers, None, note)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self._max_bytes:
                note = f"more than {self._max_bytes} bytes read"
                return HttpReply(response.status_code, response.reason_phrase, response.headers, None, note)
        return HttpReply(response.status_code, response.reason_phrase, response.headers, bytes(body))

    def _scrub(self, error: ToolError) -> ToolError:
        """The same error with every configured secret replaced by `***` (an upstream may echo our headers)."""
        return error.redacted(self._redact) if self._secrets else error

    def _redact(self, value: Any) -> Any:
        return redact(value, self._secrets)


def redact(value: Any, secrets: tuple[str, ...]) -> Any:
    """`value` with every secret replaced by `***`, in strings, keys and nested lists (longest secrets first)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, _REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(str(k), secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, secrets) for v in value]
    return value


def translate_http_error(exc: BaseException, *, timeout_s: float) -> ToolError:
    """The one mapping from httpx (and socket) exceptions to coded `ToolError`s."""
    kind = type(exc).__name__
    match exc:
        case httpx.TimeoutException() | TimeoutError():
            return ToolError(ErrorCode.TIMEOUT, f"the API did not answer within {timeout_s:g} s ({kind})")
        case httpx.HTTPStatusError():
            status = exc.response.status_code
            details = {"http_status": status}
            return ToolError(code_for_status(status), f"the API answered HTTP {status}", details=details)
        case httpx.UnsupportedProtocol():
            return ToolError(ErrorCode.TOOL_CRASHED, f"the tool's URL cannot be requested ({kind})")
        case httpx.ConnectError() | httpx.NetworkError() | httpx.ProxyError() | httpx.RemoteProtocolError():
            return ToolError(ErrorCode.CONNECTION_ERROR, f"could not talk to the API ({kind})")
        case httpx.DecodingError() | httpx.TooManyRedirects():
            return ToolError(ErrorCode.BAD_RESPONSE, f"the API's answer could not be read ({kind})")
        case httpx.InvalidURL():
            return ToolError(ErrorCode.INVALID_ARGS, "the arguments do not make a valid URL")
        case httpx.TransportError():
            return ToolError(ErrorCode.CONNECTION_ERROR, f"the request failed on the way ({kind})")
        case OSError():
            return ToolError(ErrorCode.CONNECTION_ERROR, f"could not talk to the API ({kind})")
        case _:
            return ToolError(ErrorCode.TOOL_CRASHED, f"the HTTP client failed ({kind})")


def _content_length(headers: httpx.Headers) -> int | None:
    try:
        return int(headers.get("content-length", ""))
    except ValueError:
        return None


def _json_body(arguments: dict[str, Any]) -> bytes:
    try:
        return json.dumps(arguments, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ToolError(ErrorCode.INVALID_ARGS, f"the arguments cannot be sent as JSON: {exc}") from None


def _query_value(value: Any) -> Any:
    """httpx renders str/int/float/bool and lists of them; anything nested goes as JSON text."""
    if isinstance(value, list) and all(isinstance(v, str | int | float | bool) for v in value):
        return [_text(v) for v in value]
    return _text(value)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _argument_schema(entry: HttpToolEntry) -> ArgumentSchema:
    try:
        return ArgumentSchema(entry.parameters)
    except InvalidSchema as exc:
        raise ConfigError(f"tool {entry.name!r}: parameters is not a valid JSON Schema: {exc}") from None


def substitute_env(text: str, env: Mapping[str, str], *, where: str) -> tuple[str, list[str]]:
    """`${VAR}` → env[VAR]; returns the text and the values put in (to scrub them from messages later)."""
    used: list[str] = []

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ConfigError(f"{where} uses ${{{name}}} but the environment variable {name} is not set")
        used.append(env[name])
        return env[name]

    result = _ENV_REFERENCE.sub(value_of, text)
    return result, [v for v in used if len(v) >= _MIN_SECRET_CHARS]


def _resolve_headers(entry: HttpToolEntry, env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    headers, secrets = resolve_headers(entry.http.headers, env, where=f"tool {entry.name!r}")
    return {"Accept": "application/json", **headers}, secrets


def resolve_headers(
    templates: Mapping[str, str], env: Mapping[str, str], *, where: str
) -> tuple[dict[str, str], list[str]]:
    """Headers with their `${VAR}`s filled in, and the secrets among them (to scrub from every message).
    ConfigError (naming `where` and the header) for a missing variable or a value no header can carry."""
    headers: dict[str, str] = {}
    secrets: list[str] = []
    for name, template in templates.items():
        value, used = substitute_env(template, env, where=f"{where}: header {name}")
        if "\r" in value or "\n" in value:
            raise ConfigError(f"{where}: header {name} contains a line break (check its variable)")
        try:
            httpx.Headers({name: value})
        except UnicodeEncodeError:
            raise ConfigError(f"{where}: header {name} must be ASCII (check its variable)") from None
        headers[name] = value
        secrets.extend(used)
        if _SENSITIVE_HEADER.search(name) and len(value) >= _MIN_SECRET_CHARS:
            secrets.append(value)
            secrets.extend(part for part in value.split() if len(part) >= _MIN_SECRET_CHARS + 4)
    return headers, secrets


def _check_url(entry: HttpToolEntry, url: str, placeholders: tuple[str, ...]) -> None:
    properties = entry.parameters.get("properties")
    declared = set(properties) if isinstance(properties, dict) else set()
    unknown = [name for name in placeholders if name not in declared]
    if unknown:
        raise ConfigError(
            f"tool {entry.name!r}: http.url uses {{{unknown[0]}}} but parameters.properties does not declare it"
        )
    try:
        sample = httpx.URL(_PLACEHOLDER.sub("x", url))
    except httpx.InvalidURL:
        # Not quoting the URL: a `${VAR}` in it may have brought a secret.
        raise ConfigError(f"tool {entry.name!r}: http.url is not a valid URL") from None
    if sample.scheme not in {"http", "https"} or not sample.host:
        raise ConfigError(f"tool {entry.name!r}: http.url must be an absolute http:// or https:// URL")
