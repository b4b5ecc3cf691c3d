"""Names: whether a text names a thing, as people and tools spell it — in any case, with or without
accents, and across scripts: "Shanghai" is named by "上海" (its pinyin), "München" by "Munchen", "Москва" by
"Moskva". Transliteration comes from `anyascii`, never from a list of cities; a translation no
transliteration reaches ("Tokyo" ↔ "東京") counts where the question shows both ("東京（Tokyo）").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from anyascii import anyascii

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
