"""WebSearch: the `web_search` tool over a pluggable `SearchBackend`.

The demo back-end, `CorpusSearchBackend`, scores a small YAML corpus by term overlap (words for Latin
scripts, character bigrams for CJK). With `outage: true` every search fails with `SearchBackendError(503)`,
seed 003's demo B; the tool translates back-end errors to coded `ToolError`s in `translate_search_error`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from agent.errors import ConfigError, ErrorCode, ToolError
from agent.tools.base import FunctionTool, Tool
from agent.tools.builtin.options import BuiltinOptions, load_data_file

NAME = "web_search"
DEFAULT_FILE = "search_corpus.yaml"
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_RESULTS = 3
SNIPPET_CHARS = 280

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|(?:(?![{_CJK}])[^\W_])+")
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "did", "for", "from", "how", "in", "is", "it"}
    | {"its", "of", "on", "or", "the", "to", "was", "what", "when", "where", "which", "who", "why", "with"}
    | {"current", "currently", "today", "now"}
)


@dataclass(frozen=True)
class SearchResult:
    title: str
    snippet: str
    url: str


class SearchBackendError(Exception):
    """A search back-end failed the way an HTTP service does (`status` is the HTTP status it stands for)."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message or f"search back-end failed with HTTP {status}")
        self.status = status
        self.message = message or f"search back-end failed with HTTP {status}"


class SearchBackend(Protocol):
    """Where `web_search` gets its results. Raises `SearchBackendError` when it cannot answer."""

    async def search(self, query: str, *, limit: int) -> list[SearchResult]: ...


@dataclass(frozen=True)
class SearchDocument:
    title: str
    url: str
    text: str


class CorpusSearchBackend:
    """Demo back-end: a fixed corpus ranked by IDF-weighted term overlap (title terms count twice)."""

    def __init__(self, documents: Sequence[SearchDocument], *, outage: bool = False) -> None:
        self._documents = list(documents)
        self._outage = outage
        self._terms = [(set(terms(d.title)), set(terms(d.text))) for d in self._documents]
        frequency: dict[str, int] = {}
        for title_terms, text_terms in self._terms:
            for term in title_terms | text_terms:
                frequency[term] = frequency.get(term, 0) + 1
        count = len(self._documents)
        self._idf = {term: math.log(1 + count / df) for term, df in frequency.items()}

    @classmethod
    def from_data(cls, data: Any, *, origin: str, outage: bool = False) -> CorpusSearchBackend:
        if not isinstance(data, dict) or not isinstance(data.get("documents"), list):
            raise ConfigError(f"{origin}: expected a mapping with `documents:` (a list of {{title, url, text}})")
        documents = []
        for index, spec in enumerate(data["documents"]):
            if not isinstance(spec, dict) or not all(isinstance(spec.get(k), str) for k in ("title", "url", "text")):
                raise ConfigError(f"{origin}: documents[{index}] needs text fields title, url and text")
            documents.append(SearchDocument(spec["title"], spec["url"], " ".join(spec["text"].split())))
        return cls(documents, outage=outage)

    async def search(self, query: str, *, limit: int) -> list[SearchResult]:
        if self._outage:
            raise SearchBackendError(503, "search back-end unavailable (HTTP 503, simulated outage)")
        wanted = set(terms(query))
        scored = []
        for index, (title_terms, text_terms) in enumerate(self._terms):
            score = sum(self._idf[t] * ((t in title_terms) + (t in text_terms)) for t in wanted if t in self._idf)
            if score > 0:
                scored.append((-score, index))
        return [_result(self._documents[index]) for _, index in sorted(scored)[:limit]]


def terms(text: str) -> list[str]:
    """Search terms: Latin words (without stop words) and CJK character bigrams (a lone character alone)."""
    found: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK_RUN.match(token):
            found.extend([token] if len(token) == 1 else [token[i : i + 2] for i in range(len(token) - 1)])
        elif token not in _STOPWORDS:
            found.append(token)
    return found


def translate_search_error(exc: SearchBackendError) -> ToolError:
    """The one mapping from back-end failures to coded errors."""
    details = {"http_status": exc.status}
    if exc.status == 429:
        return ToolError(ErrorCode.RATE_LIMIT, exc.message, details=details)
    if exc.status >= 500:
        return ToolError(ErrorCode.UPSTREAM_DOWN, exc.message, details=details)
    if exc.status in (401, 403):
        return ToolError(ErrorCode.FORBIDDEN, exc.message, details=details)
    return ToolError(ErrorCode.BAD_RESPONSE, exc.message, details=details)


class WebSearchArgs(BaseModel):
    query: str = Field(min_length=1, max_length=300, description="What to search the web for, in a few words.")
    max_results: int = Field(DEFAULT_MAX_RESULTS, ge=1, le=10, description="How many results to return (1–10).")


def web_search_tool(
    backend: SearchBackend, *, timeout_s: float = DEFAULT_TIMEOUT_S, html_page: str | None = None
) -> FunctionTool:
    async def web_search(args: WebSearchArgs) -> dict[str, Any] | str:
        if html_page is not None:  # a back-end answering 200 with a page for people, not data
            return html_page
        query = " ".join(args.query.split())
        if not query:
            raise ToolError(ErrorCode.INVALID_ARGS, "the query is empty")
        try:
            results = await backend.search(query, limit=args.max_results)
        except SearchBackendError as exc:
            raise translate_search_error(exc) from None
        if not results:
            raise ToolError(ErrorCode.NOT_FOUND, f"no results for {query!r}; try other words", details={"query": query})
        return {"query": query, "results": [asdict(r) for r in results]}

    return FunctionTool(
        NAME,
        "Search the web for current or public information. Returns titles, snippets and URLs to cite.",
        WebSearchArgs,
        web_search,
        timeout_s=timeout_s,
    )


LOGIN_WALL = (
    "<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Sign in to continue</h1>"
    "<form method=post action=/login><input name=user><input name=password type=password></form></body></html>"
)


class WebSearchOptions(BuiltinOptions):
    file: str = DEFAULT_FILE
    outage: bool = False  # simulate a search back-end that answers every call with HTTP 503
    login_wall: bool = False  # simulate one that answers every call with 200 and an HTML sign-in page


def build_web_search(options: Mapping[str, Any], data_dir: Path) -> Tool:
    parsed = WebSearchOptions.parse(options, builtin=NAME)
    data = load_data_file(data_dir, parsed.file, builtin=NAME)
    backend = CorpusSearchBackend.from_data(data, origin=f"builtin {NAME!r}: {parsed.file}", outage=parsed.outage)
    return web_search_tool(backend, html_page=LOGIN_WALL if parsed.login_wall else None)


def _result(document: SearchDocument) -> SearchResult:
    text = document.text
    snippet = text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return SearchResult(document.title, snippet, document.url)
