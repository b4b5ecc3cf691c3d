"""Names: whether a text names a thing, as people and tools spell it — in any case, with or without
accents, and across scripts: "Shanghai" is named by "上海" (its pinyin), "München" by "Munchen", "Москва" by
"Moskva". Transliteration comes from `anyascii`, never from a list of cities; a translation no
transliteration reaches ("Tokyo" ↔ "東京") counts where the question shows both ("東京（Tokyo）").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import Any

from anyascii import anyascii

from agent.grounding.units import unit_after, unit_before
from agent.source import Source

MAX_RUN = 8  # syllables or words one name spans at most
MIN_ROMANISED = 4  # shorter romanised names ("li", "xi") match too much by chance

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+", re.UNICODE)
_PAIR = re.compile(
    r"([^\s()（）,，、:：]{1,40}?)\s*[（(]\s*([^()（）]{1,40}?)\s*[)）]"
)  # "北京（Beijing）", "Tokyo (東京)"


def fold(text: str) -> str:
    """Case- and form-insensitive text: NFC, casefolded, trimmed."""
    return unicodedata.normalize("NFC", text).casefold().strip()


@lru_cache(maxsize=4096)
def romanised(text: str) -> tuple[str, ...]:
    """The text as lower-case ASCII tokens: one per word, one per CJK character (a syllable)."""
    tokens: list[str] = []
    for match in _WORD.finditer(text):
        token = re.sub(r"[^a-z0-9]", "", anyascii(match.group(0)).lower())
        if token:
            tokens.append(token)
    return tuple(tokens)


@dataclass(frozen=True)
class NamedText:
    """A text prepared for name lookups: folded and romanised on first need (most evidence is never asked)."""

    text: str

    @cached_property
    def folded(self) -> str:
        return fold(self.text)

    def names(self, term: str, aliases: Iterable[str] = ()) -> bool:
        """True when this text names `term` or one of its aliases."""
        return any(self._names(candidate) for candidate in (term, *aliases))

    def _names(self, term: str) -> bool:
        folded = fold(term)
        if not folded:
            return True
        if folded in self.folded:
            return True
        wanted = "".join(romanised(term))
        if len(wanted) < MIN_ROMANISED:
            return False
        return _spans(romanised(self.text), wanted)


def _spans(tokens: Sequence[str], wanted: str) -> bool:
    """Some run of whole tokens spells `wanted` exactly ("shang" + "hai" = "shanghai")."""
    for start in range(len(tokens)):
        joined = ""
        for token in tokens[start : start + MAX_RUN]:
            joined += token
            if joined == wanted:
                return True
            if len(joined) >= len(wanted) or not wanted.startswith(joined):
                break
    return False


def aliases_in(text: str) -> dict[str, list[str]]:
    """Names a text gives in two forms, "东京（Tokyo）" or "Beijing (北京)": each form → the other."""
    pairs: dict[str, list[str]] = {}
    for match in _PAIR.finditer(text):
        first, second = match.group(1).strip(), match.group(2).strip()
        if bool(_CJK.search(first)) == bool(_CJK.search(second)) and first.isascii() == second.isascii():
            continue  # "(2026)", "(UTC)": an aside, not another name
        for one, other in ((first, second), (second, first)):
            for key in _suffixes(one):  # "查东京（Tokyo）": the name is some tail of the CJK run
                pairs.setdefault(fold(key), []).append(other)
    return pairs


def _suffixes(name: str) -> list[str]:
    if not has_cjk(name):
        return [name]
    return [name[i:] for i in range(len(name) - 1)] or [name]


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


# --- where names stand in an answer -------------------------------------------------------------------------

_LATIN_NAME = re.compile(r"^[^\W_][\w .'’&-]*$")  # a name word boundaries can delimit


def _lowered(text: str) -> str:
    """Lower case with every position kept (a few characters lower to two; those stay as they are)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)


class NameIndex:
    """An answer prepared for finding where names stand in it: in any case, with or without accents, across
    scripts ("Shanghai" stands where the answer writes "上海")."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lowered = _lowered(text)
        self._tokens: list[tuple[str, int, int]] | None = None
        self._by_token: dict[str, list[int]] = {}
        self._found: dict[str, list[tuple[int, int]]] = {}

    def spans(self, name: str) -> list[tuple[int, int]]:
        """Where `name` stands in the text (empty when it does not)."""
        found = self._found.get(name)
        if found is None:
            found = self._direct(name) or self._romanised(name)
            self._found[name] = found
        return found

    def _direct(self, name: str) -> list[tuple[int, int]]:
        wanted = name.lower().strip()
        if not wanted:
            return []
        spans: list[tuple[int, int]] = []
        at = self._lowered.find(wanted)
        if at < 0:
            return spans
        bounded = _bounded(wanted)
        lowered = self._lowered
        if wanted[0].isdigit() or wanted[-1].isdigit():  # "5.1.3", "312", "LH 438": digits bound it apart
            while at >= 0:
                end = at + len(wanted)
                if _apart(lowered, at, end, bounded) and not _measured(self.text, at, end):
                    spans.append((at, end))
                at = lowered.find(wanted, at + 1)
            return spans
        while at >= 0:
            end = at + len(wanted)
            if not bounded or (not _word_char(lowered, at - 1) and not _word_char(lowered, end)):
                spans.append((at, end))
            at = lowered.find(wanted, at + 1)
        return spans

    def _romanised(self, name: str) -> list[tuple[int, int]]:
        wanted = "".join(romanised(name))
        if len(wanted) < MIN_ROMANISED or (name.isascii() and self.text.isascii()) or wanted.isdigit():
            return []  # same script, or digits alone ("5.1.3"): the direct search has already decided
        tokens = self._romanised_tokens()
        spans: list[tuple[int, int]] = []
        for length in range(1, min(len(wanted), 24) + 1):
            for first in self._by_token.get(wanted[:length], ()):
                joined = ""
                for token, _start, end in tokens[first : first + MAX_RUN]:
                    joined += token
                    if joined == wanted:
                        spans.append((tokens[first][1], end))
                        break
                    if not wanted.startswith(joined):
                        break
        return sorted(set(spans))

    def _romanised_tokens(self) -> list[tuple[str, int, int]]:
        if self._tokens is None:
            self._tokens = []
            for match in _WORD.finditer(self.text):
                token = re.sub(r"[^a-z0-9]", "", anyascii(match.group(0)).lower())
                if token:
                    self._by_token.setdefault(token, []).append(len(self._tokens))
                    self._tokens.append((token, match.start(), match.end()))
        return self._tokens


@lru_cache(maxsize=4096)
def _bounded(name: str) -> bool:
    """Is `name` written in a script whose words their boundaries delimit (not CJK)?"""
    return _LATIN_NAME.match(name) is not None and not has_cjk(name)


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def _apart(text: str, start: int, end: int, bounded: bool) -> bool:
    """A name that opens or closes with digits stands apart at those ends from other digits and Latin letters:
    "312" is not in "3120", "1.312" or "A312", "5.1" not in "5.1.3" — but it is in "v5.1" (a version), "#312" and
    "312号室". Its other ends are bounded as any name's."""
    if start > 0:
        before = text[start - 1]
        if not text[start].isdigit():
            if bounded and _word_char(text, start - 1):
                return False
        elif before in _MARKS:
            if start > 1 and text[start - 2].isdigit():
                return False
        elif before.isdigit() or (before.isascii() and before.isalpha() and not _version_mark(text, start - 1)):
            return False
    if end < len(text):
        after = text[end]
        if not text[end - 1].isdigit():
            if bounded and _word_char(text, end):
                return False
        elif after in _MARKS:
            if end + 1 < len(text) and text[end + 1].isdigit():
                return False
        elif after.isdigit() or (after.isascii() and after.isalpha()) or after == "_":
            return False
    return True


_MARKS = frozenset(".,'’")  # what groups digits or marks their decimals


def _measured(text: str, start: int, end: int) -> bool:
    """Digits with a unit ("2.4 %", "312 km", "€312") are a quantity, whatever a result is named."""
    return (text[end - 1].isdigit() and unit_after(text[end : end + 24])[0] is not None) or (
        text[start].isdigit() and start > 0 and unit_before(text[max(0, start - 4) : start]) is not None
    )


def _version_mark(text: str, at: int) -> bool:
    """ "v2.4": a lone "v" before digits marks a version."""
    return text[at] == "v" and (at == 0 or not text[at - 1].isalnum())


# --- what a result is about ---------------------------------------------------------------------------------

MIN_CARRIED_CHARS = 3  # shorter values ("ok", "1") are no identity worth carrying from call to call
MAX_CARRIED_CHARS = 64
MAX_LISTED = 50  # items of a list whose names are read
# Fields of a result that say what it (or an item of a list in it) is about: API field names, not words of a
# language. A field ending in `_name`, `_id`, `_no`, `_number` or `_version` says so too.
IDENTITY_FIELDS = frozenset(
    (
        *("name", "city", "region", "country", "location", "site", "station", "airport", "origin", "destination"),
        *("team", "department", "service", "component", "endpoint", "host", "app", "application", "repo"),
        *("customer", "client", "company", "org", "organization", "organisation", "vendor", "supplier"),
        *("account", "user", "owner", "person", "employee", "product", "brand", "model", "sku", "item"),
        *("project", "stream", "entity", "symbol", "ticker", "title", "label", "store", "category", "id"),
        *("version", "release", "build", "flight", "room", "order", "ticket", "invoice", "week", "route"),
    )
)
_IDENTITY_SUFFIXES = ("_name", "_id", "_no", "_number", "_version")
_NOT_A_NAME = re.compile(r"^(?:\d{4}-\d{2}|[\d\s.,:/+-]*$|https?://|true$|false$|null$|none$|n/a$)", re.I)
# Digits alone name a thing only where a field says they do: a version, a room, an order or ticket number.
_IDENTIFIER = re.compile(r"\d+(?:[./-]\d+)*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")
MIN_IDENTIFIER_CHARS = 3  # "12" or "7" stands for a quantity in too many answers to be taken for a name


@lru_cache(maxsize=1024)
def identifies(field: str) -> bool:
    """Does a field (a result's key, a call's argument) hold what its result or item is about? (A run's results
    share a few field names.)"""
    folded = field.casefold()
    return folded in IDENTITY_FIELDS or folded.endswith(_IDENTITY_SUFFIXES)


def identity_values(value: Any, depth: int = 0) -> Iterator[str]:
    """Identity-like leaves of a payload, folded: strings short enough to be a name or an id, larger integers.
    A value one call returned and a later call used carries the first call's names along."""
    if depth > 16:
        return
    if isinstance(value, dict):
        for child in value.values():
            yield from identity_values(child, depth + 1)
    elif isinstance(value, list):
        for child in value[:200]:
            yield from identity_values(child, depth + 1)
    elif isinstance(value, str) and MIN_CARRIED_CHARS <= len(value) <= MAX_CARRIED_CHARS:
        yield fold(value)  # ids and names are short: prose is no identity worth carrying
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 100:
        yield str(value)


def identity_of(source: Source) -> tuple[str, ...]:
    """The names a result is about: its call's string arguments, and the fields of its data that name things."""
    return source.memo("identity", lambda: tuple(dict.fromkeys(_identity(source.arguments, source.data))))


def identities(sources: Sequence[Source]) -> dict[int, tuple[str, ...]]:
    """Each source's names, with the names of the results its arguments came from ("ACME Corp" → acc_9f3 →
    the account's balance is about ACME Corp too)."""
    by_value: dict[str, list[int]] = {}
    names: dict[int, tuple[str, ...]] = {}
    for source in sources:
        carried = [
            name for value in _asked_values(source) for earlier in by_value.get(value, ()) for name in names[earlier]
        ]
        names[source.number] = tuple(dict.fromkeys([*identity_of(source), *carried]))
        for value in returned_identities(source):
            by_value.setdefault(value, []).append(source.number)
    return names


def _asked_values(source: Source) -> frozenset[str]:
    return source.memo("asked_values", lambda: frozenset(identity_values(source.arguments)))


def returned_identities(source: Source) -> frozenset[str]:
    """The identity-like values a result returned that its call did not give it: what a later call may carry
    on (an account id found by name) — not what two calls share because the question gave it ("2026-Q3")."""
    return source.memo("values", lambda: frozenset(identity_values(source.data)) - _asked_values(source))


def _identity(arguments: dict[str, Any], data: Any) -> Iterator[str]:
    for key, value in arguments.items():
        yield from names_in(value, identifying=identifies(str(key)))
    yield from _named_fields(data, 0)


def _named_fields(data: Any, depth: int) -> Iterator[str]:
    if depth > 2:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            if identifies(str(key)):
                yield from names_in(value, identifying=True)
            elif isinstance(value, dict | list):
                yield from _named_fields(value, depth + 1)
    elif isinstance(data, list):
        for item in data[:MAX_LISTED]:
            yield from _named_fields(item, depth + 1)


def is_currency_code(name: str) -> bool:
    """ "NOK", "USD": an ISO 4217 code, as a call's `base` or a result's `currency` gives it."""
    return len(name) == 3 and name.isupper() and name in _currency_codes()


@cache
def _currency_codes() -> frozenset[str]:
    from babel.numbers import list_currencies

    return frozenset(list_currencies())


_PERIOD = re.compile(r"\d{4}[-_ ]?(Q[1-4]|W\d{1,2})", re.IGNORECASE)


def names_in(value: Any, *, identifying: bool = False) -> Iterator[str]:
    """The names a value gives: a short string with a letter in it — or, where `identifying` (its field names
    what its result or item is about), digits alone too: "version": "5.1.3", "room": "312", "ticket_id": 48213."""
    if isinstance(value, str):
        text = value.strip()
        if 2 <= len(text) <= MAX_CARRIED_CHARS and not _NOT_A_NAME.match(text) and any(c.isalpha() for c in text):
            yield text
            period = _PERIOD.fullmatch(text)
            if period:  # "2025-Q4" is what an answer calls "Q4", "2026-W15" "W15"
                yield period.group(1)
        elif identifying and _is_identifier(text):
            yield text
    elif isinstance(value, list):
        for item in value[:MAX_LISTED]:
            if isinstance(item, str):
                yield from names_in(item, identifying=identifying)
    elif identifying and isinstance(value, int) and not isinstance(value, bool) and _is_identifier(str(value)):
        yield str(value)


def _is_identifier(text: str) -> bool:
    """Digits that may name a thing ("5.1.3", "312", "48213"), not a date ("2026-05")."""
    return (
        MIN_IDENTIFIER_CHARS <= len(text) <= MAX_CARRIED_CHARS
        and _IDENTIFIER.fullmatch(text) is not None
        and not _ISO_DATE.fullmatch(text)
    )
