"""Language: what the fact-checker knows of the languages answers are written in, in one place.

Word lists and the small judgements made from them: which mark is a text's decimal one, whether "billion"
is 10⁹ or 10¹², which languages' number words to read, how people write scales, units, approximations,
decreases, citations ("according to …", "Sources:"), fractions, and which capitalised words are not names.
The modules that read figures, dates, citations and names take their words from here; none keeps a list of
its own. Numbers written as words are parsed by maintained libraries (`text2num`, `cn2an`); what is listed
here is only what they do not cover (fractions, "a dozen").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from operator import itemgetter

# --- decimal marks and scales -------------------------------------------------------------------------------

# Words of languages that write "1.234,5" (a comma decimal mark) and of those that write "1,234.5".
_COMMA_LANGUAGES = re.compile(
    r"(?<![A-Za-zÀ-ÿ])(?:der|die|das|und|ist|mit|von|für|beträgt|sind|hat|einen|eine|im|den|dem|le|la|les|et|est"
    r"|des|du|une|avec|pour|sont|el|los|las|y|es|con|para|una|son|del|il|gli|che|sono|per|um|uma|são|não|het|een"
    r"|zijn|de|van|en|op|naar|voor|niet|ook|bij|werd|wordt|Mio|Mrd|Tsd)(?![A-Za-zÀ-ÿ])|[а-яА-Я]"
)
_POINT_LANGUAGES = re.compile(
    r"(?<![A-Za-z])(?:the|and|are|was|with|of|for|has|have|from|which|this|that|at|were|its|by)(?![A-Za-z])"
    r"|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]",
    re.IGNORECASE,
)
# Languages in which "Billion"/"billion" is 10¹² (the long scale): German, French, Dutch, …
# Nouns a German ordinal stands before ("im 3. Quartal", "am 2. Tag"): its point ends no sentence.
ORDINAL_NOUNS = frozenset(
    (
        *("quartal", "halbjahr", "platz", "stelle", "woche", "tag", "mal", "stock", "liga", "klasse", "monat"),
        *("jahrhundert", "kalenderwoche", "kw", "runde", "version", "lauf", "schritt", "stufe", "q1", "q2"),
    )
)
_LONG_SCALE = re.compile(
    r"(?<![A-Za-zÀ-ÿ])(?:und|der|die|das|ist|beträgt|Mio\.|Mrd\.|milliards?|et|est|les|des|het|een|miljard)"
    r"(?![A-Za-zÀ-ÿ])"
)


def decimal_mark_by_words(text: str) -> str | None:
    """The decimal mark the text's language uses, judged by its common words; None when they do not tell."""
    comma_words = len(_COMMA_LANGUAGES.findall(text))
    point_words = len(_POINT_LANGUAGES.findall(text))
    if comma_words == point_words:
        return None
    return "," if comma_words > point_words else "."


def long_scale(text: str) -> bool:
    """True when "billion" in this text means 10¹² (German "Billion", French "billion")."""
    return bool(_LONG_SCALE.search(text))


# Scale words after a figure, with their power of ten (case-sensitive where case matters: "1.2M" is a million,
# "1.2 m" a length).
SCALE_WORDS: tuple[tuple[str, int], ...] = (
    ("thousand", 3), ("million", 6), ("millions", 6), ("mn", 6), ("billion", 9), ("billions", 9), ("bn", 9),
    ("trillion", 12), ("Tsd.", 3), ("Tausend", 3), ("Mio.", 6), ("Mio", 6), ("Millionen", 6), ("Million", 6),
    ("Mrd.", 9), ("Mrd", 9), ("Milliarden", 9), ("Milliarde", 9), ("Billionen", 12), ("Bio.", 12), ("mille", 3),
    ("milliards", 9), ("milliard", 9), ("Mds", 9), ("Md", 9), ("mil millones", 9), ("millones", 6),
    ("millón", 6), ("billones", 12), ("billón", 12), ("mila", 3), ("milioni", 6), ("milione", 6),
    ("miliardi", 9), ("miliardo", 9), ("milhões", 6), ("milhão", 6), ("bilhões", 9), ("bilhão", 9),
    ("miljoen", 6), ("miljard", 9), ("mil", 3), ("mln", 6), ("mln.", 6), ("mld", 9), ("mld.", 9),
    ("miles de", 3), ("тыс.", 3), ("млн", 6), ("млрд", 9), ("трлн", 12),
    ("万亿", 12), ("千万", 7), ("百万", 6), ("十万", 5), ("万", 4), ("萬", 4), ("亿", 8), ("億", 8), ("兆", 12),
    ("千", 3), ("천", 3), ("만", 4), ("억", 8), ("조", 12),
)  # fmt: skip
# Scale words that the long scale reads as 10¹² ("Billion", "billion") rather than 10⁹.
LONG_SCALE_BILLIONS = frozenset(("billion", "Billion"))
LONG_SCALE_ONLY = frozenset(("Billionen", "Bio."))  # 10¹² in German; never read otherwise
# Written glued to a figure: "1.2k", "3M", "$4bn" ("m" only after a currency: "1.2m" is a length).
GLUED_SCALES: dict[str, int] = {"k": 3, "K": 3, "M": 6, "B": 9, "bn": 9, "m": 6}
# Written before a currency, spaced from the figure: "1,85 M€", "850 k€", "2,4 Md€", "12 M$".
SCALES_BEFORE_CURRENCY: dict[str, int] = {"k": 3, "K": 3, "M": 6, "Md": 9, "Mds": 9, "Mrd": 9, "Mio": 6}

# --- approximations and directions -------------------------------------------------------------------------

# Written before a figure: what they say about how it relates to the exact value.
APPROXIMATIONS_BEFORE: dict[str, tuple[str, ...]] = {
    "about": (
        "about", "around", "roughly", "approximately", "approx.", "approx", "some", "circa", "ca.", "~", "≈",
        "etwa", "ungefähr", "rund", "zirka", "environ", "à peu près", "autour de", "aproximadamente",
        "alrededor de", "unos", "unas", "cerca de", "около", "примерно", "约", "大约", "大概", "约为", "大致",
        "約", "およそ", "大体", "약", "ongeveer", "circa", "zo'n", "rond de", "cerca di", "intorno a", "circa",
        "quase", "aproximadamente", "cerca de", "por volta de", "em torno de", "대략",
    ),
    "at_least": (
        "over", "more than", "above", "at least", "upwards of", "exceeding", "über", "mehr als", "mindestens",
        "gut", "plus de", "au moins", "más de", "al menos", "oltre", "più di", "более", "свыше", "超过", "逾",
        "至少", "超", "meer dan", "ruim", "minstens", "almeno", "mais de", "pelo menos", "이상",
    ),
    "at_most": (
        "under", "less than", "below", "nearly", "almost", "just under", "up to", "at most", "fast", "knapp",
        "beinahe", "unter", "weniger als", "höchstens", "bis zu", "presque", "près de", "moins de",
        "jusqu'à", "casi", "menos de", "hasta", "quasi", "meno di", "почти", "менее", "不到", "近", "将近",
        "接近", "低于", "少于", "最多", "ほぼ", "bijna", "minder dan", "hooguit", "fino a", "quase", "até", "거의",
    ),
}  # fmt: skip
APPROXIMATIONS_AFTER: dict[str, tuple[str, ...]] = {
    "about": ("左右", "前后", "上下", "程度", "ほど", "くらい", "ぐらい", "前後"),
    "at_least": ("多", "余", "以上", "強", "+"),
    "at_most": ("以下", "未満", "弱", "不到"),
}
# Words that say a value went down: a percentage change is then read as a decrease. Each is a whole word (its
# letters from one boundary to the next) or, in CJK, any run of characters within one.
_DECREASE_WORDS = (
    r"down|fell|fall(?:en|s)?|drop(?:ped|s)?|declin\w*|decreas\w*|lower|less|cheaper|colder|cooler|shorter"
    r"|smaller|fewer|reduc\w*|shr[aiu]nk\w*|loss|gesunken|gefallen|sank|Rückgang|weniger|niedriger|kälter|kleiner"
    r"|billiger|verringert|baisse|diminu\w*|moins|recul\w*|chut\w*|baj[óoa]\w*|caída|descenso|menos|disminu\w*"
    r"|reduj\w*|calo|cal[aoi]\w*|sces[aoi]|scend\w*|ribass\w*|perdit\w*|queda|ca[iíu]\w*|baix\w*|recuo\w*"
    r"|diminui\w*|daling|gedaald|gedaalde|gezakt|afname|afgenomen|lager|minder|verlies"
)
_DECREASE_CJK = "下降|减少|降低|下跌|下滑|减|降|低|少|減少|低下|下落|減|下回|감소|하락|줄"
DECREASE = re.compile(rf"\b(?:{_DECREASE_WORDS})\b|{_DECREASE_CJK}", re.IGNORECASE)
# `DECREASE` searched in a text, read piece by piece (between its spaces): its words hold only word characters
# (\w), so a match bounded by \b on both sides is a whole run of them, and its CJK words lie within one; no
# run spans a space. Each piece is judged once, whatever text it comes in (a clause, the words around a figure).
_DECREASE_WORD = re.compile(_DECREASE_WORDS, re.IGNORECASE)
_DECREASE_WITHIN = re.compile(_DECREASE_CJK, re.IGNORECASE)
_RUNS = re.compile(r"\w+")
_STEADY: set[str] = set()  # pieces that say no decrease ("revenue", "3,020", "orders,")
_FALLING: set[str] = set()  # pieces that say one ("fell", "下降了")
_MAX_PIECES = 50_000  # a bound on what is remembered (figures are pieces too)


@lru_cache(maxsize=1024)
def says_decrease(text: str) -> bool:
    """Do these words say something went down? (Read once per clause: each of its figures asks.)"""
    pieces = text.split()
    if _STEADY.issuperset(pieces):
        return False
    for piece in pieces:
        if piece in _STEADY:
            continue
        if piece in _FALLING or any(
            _DECREASE_WORD.fullmatch(run) or _DECREASE_WITHIN.search(run) for run in _RUNS.findall(piece)
        ):
            if len(_FALLING) < _MAX_PIECES:
                _FALLING.add(piece)
            return True
        if len(_STEADY) >= _MAX_PIECES:
            _STEADY.clear()
        _STEADY.add(piece)
    return False


# Verbs of a change over time (not comparatives: "warmer than" sets two things side by side), up and down, and
# the "from" of "from 134 to 128": with them, a difference has a direction its words must agree with.
RISE = re.compile(
    r"\b(?:up|rose|risen|grew|grown|increased|went up|gained|gestiegen|stieg|zugenommen|erhöht|augment[ée]\w*"
    r"|hausse|aument[óo]\w*|subi[óo]|cresci\w*|salit\w*|subiu|gestegen|toegenomen|verhoogd)\b"
    r"|提高|增加|上升|增长|上涨|上昇|増加|増え|上が|증가|상승|늘었|올랐",
    re.IGNORECASE,
)
FALL = re.compile(
    r"\b(?:down|fell|fallen|dropped|declined|decreased|went down|lost|gesunken|sank|gefallen|abgenommen|baiss[ée]\w*"
    r"|diminu[ée]\w*|dismin\w*|baj[óo]|cay[óo]|cal[aoi]\w*|sces[aoi]|caiu|desceu|gedaald|gezakt|afgenomen)\b"
    r"|下降|减少|下跌|下滑|降低|低下|減少|減っ|減り|下が|감소|하락|줄었|떨어",
    re.IGNORECASE,
)
FROM = re.compile(r"(?:\b(?:from|von|de|desde|da|dal|dai|van|depuis)\b|从|從|由|から|에서)[^\d]{0,10}$", re.IGNORECASE)


# A rate of exchange: an amount in one currency times a bare rate may be an amount in another.
EXCHANGE = re.compile(
    r"\b(?:exchange|fx|rate|rates|kurs|wechselkurs|umgerechnet|taux|change|cambio|câmbio|tasa|tipo de cambio"
    r"|tasso|koers|wisselkoers|worth|wert|vaut|vale|waard)\b|汇率|匯率|為替|レート|換算|换算|환율|환산",
    re.IGNORECASE,
)
# "(74 % vs 32 %)", "28 °C contre 16 °C": two figures set against each other, in the order of their names.
VERSUS = re.compile(
    r"\b(?:vs\.?|versus|against|compared to|contre|gegenüber|gegen|frente a|contro|tegen|contra)(?!\w)"
    r"|对比|比|대비|に対して",
    re.IGNORECASE,
)
# "… 28 °C and 16 °C respectively": the figures follow the names in order.
RESPECTIVELY = re.compile(
    r"\b(?:respectively|respektive|beziehungsweise|respectivement|respectivamente|rispettivamente)\b|bzw\.|分别|分別"
    r"|それぞれ|각각",
    re.IGNORECASE,
)

_LETTER_WORDS = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=8)
def letter_words(text: str) -> tuple[tuple[int, str], ...]:
    """The words of `text` (letters only), lower-cased, with where each starts: read once per text, whoever asks
    (month names, superlatives, the language, fractions)."""
    found = list(_LETTER_WORDS.finditer(text))
    return tuple(zip(map(re.Match.start, found), lowered_words(map(re.Match.group, found)), strict=False))


def lowered_words(words: Iterable[str]) -> list[str]:
    """Each word (none empty, none holding a space) lower-cased as `word.lower()` would, in one call: joined by
    spaces, which no lower-casing makes, and which end a word for Greek's final sigma as the text's end does."""
    joined = " ".join(words)
    return joined.lower().split(" ") if joined else []


# Common states a result's items are in, and the words answers use for them: a count by state ("3 of the 5
# services are down", "三个宕机", "2 sind fehlgeschlagen") is checked against the state its sentence names.
STATE_WORDS: dict[str, tuple[str, ...]] = {
    "down": (
        "down", "offline", "outage", "unavailable", "ausgefallen", "nicht erreichbar", "gestört", "en panne",
        "hors service", "indisponible", "caído", "caídos", "caída", "caídas", "fuera de servicio", "宕机", "故障",
        "离线", "不可用", "挂了", "停止", "ダウン", "障害", "fuori servizio", "non disponibile", "non disponibili",
        "fora do ar", "indisponível", "indisponíveis", "storing", "onbereikbaar", "niet beschikbaar", "다운", "장애",
    ),
    "up": (
        "up", "online", "running", "available", "operational", "läuft", "laufen", "verfügbar", "erreichbar",
        "en ligne", "disponible", "disponibles", "opérationnel", "en marcha", "funcionando", "operativo",
        "正常", "在线", "可用", "运行", "稼働", "稼動", "funzionante", "funzionanti", "no ar", "funcionando",
        "bereikbaar", "정상", "가동",
    ),
    "failed": (
        "failed", "failure", "fehlgeschlagen", "gescheitert", "échoué", "échec", "fallido", "fallaron", "失败", "失敗",
        "broke", "broken", "errored", "falliti", "fallito", "fallite", "falliscono", "falharam", "falhou", "falhados",
        "falhadas", "com falha", "mislukt", "mislukte", "faalden", "실패",
    ),
    "succeeded": (
        "succeeded", "successful", "success", "erfolgreich", "durchgelaufen", "réussi", "exitoso", "成功",
        "riusciti", "riuscito", "a buon fine", "bem-sucedidos", "bem-sucedido", "sucesso", "geslaagd", "gelukt",
        "succesvol", "성공",
    ),
    "degraded": (
        "degraded", "beeinträchtigt", "eingeschränkt", "dégradé", "degradado", "降级", "劣化", "degradato",
        "gedegradeerd", "저하",
    ),
    "healthy": ("healthy", "gesund", "sain", "saludable", "健康", "正常", "sano", "sani", "saudável", "gezond"),
    "unhealthy": ("unhealthy", "ungesund", "défaillant", "no saludable", "不健康", "異常", "ongezond", "비정상"),
    "open": (
        "open", "offen", "ouvert", "ouverts", "abierto", "abiertos", "未解决", "未対応", "未完了", "aperti", "aperto",
        "abertos", "aberto", "openstaand", "openstaande", "미해결",
    ),
    "closed": (
        "closed", "geschlossen", "fermé", "fermés", "cerrado", "cerrados", "已关闭", "クローズ", "chiusi", "chiuso",
        "fechados", "fechado", "gesloten", "종료",
    ),
    "resolved": (
        "resolved", "gelöst", "résolu", "résolus", "resuelto", "resueltos", "已解决", "解決", "risolti", "risolto",
        "resolvidos", "resolvido", "opgelost", "해결",
    ),
    "pending": (
        "pending", "ausstehend", "en attente", "pendiente", "待处理", "保留", "in attesa", "pendentes", "pendente",
        "in behandeling", "대기",
    ),
    "active": (
        "active", "aktiv", "actif", "actifs", "activo", "activos", "活跃", "有効", "attivi", "attivo", "ativos",
        "ativo", "actief", "actieve", "활성",
    ),
    "inactive": ("inactive", "inaktiv", "inactif", "inactivo", "不活跃", "無効", "inativos", "inactief", "비활성"),
    "busy": (
        "busy", "belegt", "ausgelastet", "occupé", "occupés", "ocupado", "ocupados", "忙", "使用中", "occupati",
        "occupato", "bezet", "사용 중",
    ),
    "idle": (
        "idle", "frei", "leerlauf", "inactif", "libre", "libres", "ocioso", "空闲", "アイドル", "inattivi", "liberi",
        "ociosos", "vrij", "유휴",
    ),
    "draining": ("draining", "drain", "vidange", "drenando", "排空"),
}  # fmt: skip

# --- comparisons: ranks, denials, amounts per one of something, "from … to …" ---------------------------------

# "second highest", "zweitgrößte", "la deuxième plus chère", "第二高", "二番目に高い": a rank, not the extreme.
RANKED = re.compile(
    r"\b(?:second|third|fourth|next|runner|zweit|dritt|deuxième|troisième|segund[oa]|tercer[oa]?|terz[oa]"
    r"|tweede|derde)\w*|第[二三四]|[二三]番目|두\s?번째|세\s?번째",
    re.IGNORECASE,
)
# "not the fullest", "nicht gesunken", "n'a pas baissé", "no bajó", "没有下降", "下がっていない": a denial.
DENIED = re.compile(
    r"\b(?:not|never|nicht|nie|kein\w*|pas|jamais|no|nunca|non|mai|não|nunca|niet|geen)\b|n't|没有|沒有|并非|不是"
    r"|ではな|じゃな|ていない|なかった|않|아니|없",
    re.IGNORECASE,
)

# "per m²", "au mètre carré", "pro Kopf", "人均": a superlative that compares an amount per one of something —
# and the words in the field names of what it is counted per.
PER_AREA = (
    r"(?:\b(?:per|a|au|à|al|por|pro|je|par|p\.?)\s+(?:m²|m2|sqm|sq\.?\s?(?:ft|m)|square\s+(?:met(?:re|er)|foot|feet)"
    r"|mètre\s+carré|metro\s+(?:cuadrado|quadrato)|quadratmeter|vierkante\s+meter)|/\s?m²|/\s?m2\b"
    r"|\bquadratmeterpreis|平方米|平米|㎡|제곱미터당|평당)"
)
PER_HEAD = (
    r"(?:\b(?:per|pro|par|por)\s+(?:capita|head|person|inhabitant|resident|kopf|einwohner|habitant|habitante|persona"
    r"|cápita)|人均|每人|一人当たり|一人あたり|1人当たり|1人あたり|1인당|인당)"
)
PER_UNITS = re.compile(rf"(?P<area>{PER_AREA})|(?P<head>{PER_HEAD})", re.IGNORECASE)
PER_WORDS = {
    "area": ("m2", "sqm", "sqft", "area", "surface", "size", "flaeche", "superficie"),
    "head": ("population", "inhabitants", "residents", "people", "persons", "headcount", "einwohner", "habitants"),
}
# What stands between the two figures of "from 189 to 221", "von 189 auf 221", "从189降至221" — after a "from"
# before the first — or of "189件から221件に", "189건에서 221건으로", where it is the "from" and a "to" follows
# the second ("4億2,000万円から3,570万円増えた" says by how much, not to what).
TO = re.compile(
    r"\s*(?:to|auf|à|a|al|hasta|naar|tot|para|→|->)\s*|[^\d\s]{0,3}[至到]\s*|(?P<after>[^\d\s]{0,2}(?:から|에서)\s*)",
    re.IGNORECASE,
)
TO_AFTER = re.compile(r"[^\d\s]{0,2}?(?:に|へ|まで|으로|로|까지)")


TO_WORDS = (
    *(" to ", " auf ", " à ", " a ", " al ", " hasta ", " naar ", " tot ", " para "),
    *("→", "->", "至", "到", "から", "에서"),
)


# --- units as people write them ---------------------------------------------------------------------------

# How units are written after a figure (folded) → the unit's code (agent.grounding.units). Longest first.
UNIT_WORDS: dict[str, str] = {
    "°c": "°C", "℃": "°C", "degrees celsius": "°C", "摄氏度": "°C", "grad celsius": "°C", "degrés celsius": "°C",
    "grados celsius": "°C", "gradi celsius": "°C", "graus celsius": "°C", "graden celsius": "°C", "섭씨": "°C",
    "degrees fahrenheit": "°F", "grad fahrenheit": "°F", "degrés fahrenheit": "°F", "grados fahrenheit": "°F",
    "gradi fahrenheit": "°F", "graus fahrenheit": "°F", "graden fahrenheit": "°F", "华氏度": "°F", "華氏": "°F",
    "화씨": "°F", "graus": "°", "graden": "°", "도": "°",
    "°": "°", "degrees": "°", "degree": "°", "grad": "°", "度": "°", "grados": "°", "degrés": "°", "gradi": "°",
    "°f": "°F", "℉": "°F", "fahrenheit": "°F",
    "ms": "ms", "milliseconds": "ms", "millisecond": "ms", "millisekunden": "ms", "millisecondes": "ms",
    "milisegundos": "ms", "毫秒": "ms", "ミリ秒": "ms", "millisecondi": "ms", "milliseconden": "ms", "밀리초": "ms",
    "s": "s", "sec": "s", "seconds": "s", "second": "s", "sekunden": "s", "secondes": "s", "segundos": "s",
    "秒": "s", "秒钟": "s", "secondi": "s", "seconden": "s", "sec.": "s", "초": "s",
    "min": "min", "minutes": "min", "minute": "min", "minuten": "min", "minutos": "min", "分钟": "min", "分間": "min",
    "minuti": "min", "minuut": "min", "분": "min", "minuto": "min", "分": "min",
    "h": "h", "hours": "h", "hour": "h", "stunden": "h", "stunde": "h", "heure": "h", "hora": "h",
    "heures": "h", "horas": "h", "小时": "h", "時間": "h",
    "ore": "h", "ora": "h", "uur": "h", "uren": "h", "시간": "h",
    "days": "d", "day": "d", "tage": "d", "tagen": "d", "tag": "d", "jours": "d", "jour": "d", "días": "d",
    "día": "d", "天": "d", "日間": "d", "giorni": "d", "giorno": "d", "dias": "d", "dia": "d", "dagen": "d",
    "dag": "d", "일간": "d", "nights": "d", "night": "d", "nächte": "d", "nacht": "d", "nuits": "d", "nuit": "d",
    "noches": "d", "noche": "d", "notti": "d", "notte": "d", "noites": "d", "noite": "d", "nachten": "d", "泊": "d",
    "박": "d", "晚": "d",
    "mm": "mm", "cm": "cm", "m": "m", "meters": "m", "metres": "m", "meter": "m", "mètres": "m", "metros": "m",
    "米": "m", "km": "km", "kilometers": "km", "kilometres": "km", "kilometer": "km", "公里": "km", "キロ": "km",
    "miles": "mi", "mile": "mi", "mi": "mi", "meilen": "mi", "milles": "mi", "millas": "mi", "miglia": "mi",
    "ft": "ft", "feet": "ft", "foot": "ft", "lb": "lb", "lbs": "lb", "oz": "oz", "ounces": "oz",
    "kb": "KB", "mb": "MB", "gb": "GB", "tb": "TB", "go": "GB", "gigabytes": "GB", "megabytes": "MB",
    "terabytes": "TB", "kilobytes": "KB", "gigaoctets": "GB", "mégaoctets": "MB", "téraoctets": "TB",
    "mg": "mg", "g": "g", "grams": "g", "kg": "kg", "kilograms": "kg", "公斤": "kg", "千克": "kg", "t": "t",
    "tonnes": "t", "tons": "t", "吨": "t",
    "%": "%", "percent": "%", "per cent": "%", "prozent": "%", "pour cent": "%", "por ciento": "%",
    "per cento": "%", "percento": "%", "por cento": "%", "procent": "%", "퍼센트": "%", "프로": "%",
    "процентов": "%", "процента": "%", "процент": "%", "パーセント": "%",
    "usd": "USD", "$": "USD", "us$": "USD", "dollars": "USD", "dollar": "USD", "美元": "USD", "ドル": "USD",
    "eur": "EUR", "€": "EUR", "euro": "EUR", "euros": "EUR", "欧元": "EUR", "ユーロ": "EUR",
    "cny": "CNY", "rmb": "CNY", "元": "CNY", "人民币": "CNY", "yuan": "CNY",
    "jpy": "JPY", "円": "JPY", "yen": "JPY", "¥": "JPY",
    "gbp": "GBP", "£": "GBP", "pounds": "GBP",
    "chf": "CHF", "fr.": "CHF", "franken": "CHF",
    "krw": "KRW", "원": "KRW", "won": "KRW", "달러": "USD", "유로": "EUR", "위안": "CNY",
}  # fmt: skip
# "1.0832 USD per EUR", "12 € pro Stück": the unit a rate is counted per.
_PER_WORDS = ("per", "pro", "je", "par", "pour", "por", "each", "a", "à", "al", "la", "an", "a la", "/")
PER = re.compile(r"\s*(?:" + "|".join(_PER_WORDS) + r")\s+|\s*/\s*", re.IGNORECASE)
PER_OPENINGS = frozenset(word[0] for word in _PER_WORDS)  # what it can start with after its spaces

# --- dates -------------------------------------------------------------------------------------------------

MONTH_LOCALES = ("en", "de", "fr", "es", "it", "pt", "nl")  # month names come from CLDR, through Babel
# Time zones people name next to a time, as minutes east of UTC (ambiguous ones such as CST are left out).
ZONES: dict[str, int] = {
    "utc": 0, "gmt": 0, "z": 0, "mez": 60, "cet": 60, "mesz": 120, "cest": 120, "bst": 60, "jst": 540,
    "kst": 540, "est": -300, "edt": -240, "pst": -480, "pdt": -420, "日本時間": 540, "日本时间": 540,
    "北京时间": 480, "北京時間": 480, "中国时间": 480, "東京時間": 540, "韓国時間": 540, "한국 시간": 540,
    "beijing time": 480, "tokyo time": 540,
}  # fmt: skip

# Quarters of a year as words: "third quarter", "troisième trimestre", "drittes Quartal", "derde kwartaal".
QUARTER_WORDS = ("quarter", "trimestre", "quartal", "kwartaal")
QUARTER_ORDINALS: dict[str, int] = {
    **dict.fromkeys(("first", "premier", "primer", "primero", "primo", "primeiro", "eerste", "erstes", "ersten"), 1),
    **dict.fromkeys(("second", "deuxième", "segundo", "secondo", "tweede", "zweites", "zweiten"), 2),
    **dict.fromkeys(("third", "troisième", "tercer", "tercero", "terzo", "terceiro", "derde", "drittes", "dritten"), 3),
    **dict.fromkeys(("fourth", "quatrième", "cuarto", "quarto", "vierde", "viertes", "vierten", "last"), 4),
}

# --- sentences ---------------------------------------------------------------------------------------------

# "1,2 Mio. €", "ca. 180", "30. November": a point after these ends no sentence.
ABBREVIATIONS = frozenset(
    (
        *("ca", "vs", "nr", "no", "dr", "mr", "mrs", "st", "bzw", "approx", "etc", "mio", "mrd", "tsd", "bio"),
        *("mds", "md", "z.b", "e.g", "i.e", "inkl", "ggf", "usw", "fr", "mme", "env", "av"),
        # a company's form ends no sentence: "Orion Labs Inc. spent …", "Bianchi S.p.A. ha …"
        *("inc", "corp", "co", "ltd", "llc", "s.p.a", "spa", "s.r.l", "srl", "ltda", "s.l", "s.a", "s.a.s", "bros"),
    )
)
# Words that join two statements in one sentence: "Shanghai is 28 °C and Beijing 16 °C" is two clauses. Two
# patterns, so that each search skips fast to where a join can open: one holding both forms opens with no
# character in common, and is tried at every character of the answer (twice the cost of both). The words' first
# letters, looked at ahead, pass over most spaces at once. No join in words overlaps one in CJK: the first holds
# Latin letters and spaces only, the second no Latin letter, and none starts at a space.
CLAUSE_JOINS = re.compile(
    r"\s(?=[abejmptuwy])(?:and|while|whereas|but|though|although|und|während|wohingegen|aber|jedoch|et|mais"
    r"|alors que|tandis que|y|pero|mientras|e|ma|mentre|en|maar|terwijl)\s",
    re.IGNORECASE,
)
CJK_CLAUSE_JOINS = re.compile("而且|而|但是|但|然而|同时|另外|一方|一方で|에 비해")

# --- citations ---------------------------------------------------------------------------------------------

# "(source: get_weather)", "（来源：get_weather）", "Sources: …": what introduces the name of a source.
SOURCE_LABELS = (
    "sources", "source", "via", "from", "data", "tool", "tools", "references", "reference", "refs", "ref",
    "quellen", "quelle", "laut", "nach", "sources", "fuentes", "fuente", "fonti", "fonte", "bronnen", "bron",
    "来源", "來源", "数据来源", "資料來源", "出典", "出所", "ソース", "参考", "引用", "출처",
)  # fmt: skip
# "According to get_metrics, …": words before a tool's name that cite it for their sentence.
ACCORDING_TO = (
    "according to", "as per", "per", "based on", "as reported by", "laut", "gemäß", "nach", "zufolge", "selon",
    "d'après", "d’après", "según", "de acuerdo con", "secondo", "segundo", "conforme", "volgens", "根据", "根據",
    "据", "依据", "按照", "によると", "によれば", "에 따르면",
)  # fmt: skip

# --- numbers written as words -------------------------------------------------------------------------------

# The languages `text2num` reads, each with a few of its most common words (to tell which to read a text in).
_COMMON_WORDS = {
    "en": "the and is are was of with for from this that has have were",
    "de": "der die das und ist sind mit von für hat haben wurde wurden ein eine einen nicht im am zum zur auf bei"
    " damit lag liegt liegen auch noch über bis insgesamt gestern heute",
    "fr": "le la les et est sont avec pour des du un une dans ont",
    "es": "el los las y es son con para del uno una en han",
    "it": "il gli che sono è per della dello degli ha hanno",
    "pt": "os as são com um uma não tem têm foram está",
    "nl": "het een zijn met voor van niet heeft werd wordt",
}
_LANGUAGE_WORDS: dict[str, str] = {}
for _code, _words in _COMMON_WORDS.items():
    for _word in _words.split():
        _LANGUAGE_WORDS.setdefault(_word, _code)  # a word two languages share counts for the first listed
LANGUAGE_SAMPLE = 1200  # characters a text's language is judged by
TEXT2NUM_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl")


def number_word_languages(text: str) -> list[str]:
    """The languages (text2num's codes) this text is most likely written in: at most two, likeliest first."""
    words = letter_words(text)
    sample = bisect_right(words, LANGUAGE_SAMPLE, key=itemgetter(0))  # the words that start within the sample
    votes = Counter(filter(None, map(_LANGUAGE_WORDS.get, map(itemgetter(1), words[:sample]))))  # first vote first
    if not votes:  # a few words tell nothing: read them in every language
        return list(TEXT2NUM_LANGUAGES)
    return sorted(votes, key=lambda code: -votes[code])[:2]


# Fractions people write in words: the denominator's words (singular and plural) → the denominator.
# "half" is ½ with no numerator written ("half of the tickets"); "a quarter", "drei Viertel", "trois quarts".
FRACTION_WORDS: dict[str, int] = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
    "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10,
    "hälfte": 2, "halb": 2, "halbe": 2, "drittel": 3, "viertel": 4, "fünftel": 5, "zehntel": 10,
    "moitié": 2, "demi": 2, "demie": 2, "tiers": 3, "quart": 4, "quarts": 4, "cinquième": 5, "cinquièmes": 5,
    "dixième": 10, "dixièmes": 10,
    "mitad": 2, "medio": 2, "media": 2, "tercio": 3, "tercios": 3, "cuarto": 4, "cuartos": 4, "quinto": 5,
    "quintos": 5, "décimo": 10, "décimos": 10,
    "metà": 2, "mezzo": 2, "terzo": 3, "terzi": 3, "quarto": 4, "quarti": 4,
    "metade": 2, "terço": 3, "terços": 3,
    "helft": 2, "derde": 3, "derden": 3, "kwart": 4,
}  # fmt: skip
# "Half" as a noun, a figure by itself ("half of them", "la moitié"); "media", "demi", "halb" need a numerator
# ("una media", "in media" is "on average").
HALF_NOUNS = frozenset(("half", "hälfte", "moitié", "mitad", "metà", "metade", "helft"))
# Fractions written as one word: "driekwart", "tweederde", "Dreiviertel".
FRACTION_COMPOUNDS: dict[str, tuple[int, int]] = {
    "driekwart": (3, 4), "tweederde": (2, 3), "dreiviertel": (3, 4), "zweidrittel": (2, 3), "anderhalf": (3, 2),
}  # fmt: skip
# Words for "one" before a denominator ("a third", "ein Viertel", "un quart", "un tercio").
ONE_WORDS = frozenset(("a", "an", "one", "ein", "eine", "einem", "un", "une", "uno", "una", "um", "uma", "een"))
# Words that are a number by themselves and that text2num does not read.
DOZEN_WORDS: dict[str, int] = {
    "dozen": 12,
    "dozens": 12,
    "dutzend": 12,
    "douzaine": 12,
    "docena": 12,
    "dozzina": 12,
    "dúzia": 12,
}
# Chinese and Japanese fractions and halves: "三分之二" is read by cn2an; these are the words it does not read.
CJK_HALF = ("一半", "半数", "半分", "过半")
# A Chinese or Japanese numeral counts something when one of these follows it ("三个服务", "十二颗卫星", "5社").
CJK_COUNTERS = frozenset(
    "个個颗顆家名位人台次项項条條份件座天倍张張只隻所款种種门門位项股户戶笔筆辆輛架艘枚本冊機社匹头頭つ回軒店棟"
)
# Korean native numerals, as they stand before a counter ("여섯 명", "세 개", "스물두 곳"): tens, then units (the
# forms before a counter too: 한, 두, 세, 네, 스무).
KOREAN_TENS: dict[str, int] = {
    "열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50, "예순": 60, "일흔": 70, "여든": 80, "아흔": 90,
}  # fmt: skip
KOREAN_UNITS: dict[str, int] = {
    "하나": 1, "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "석": 3, "넷": 4, "네": 4, "넉": 4, "다섯": 5, "여섯": 6,
    "일곱": 7, "여덟": 8, "아홉": 9,
}  # fmt: skip
# Sino-Korean digits and places, written in Hangul ("삼십 명", "이십오 개").
KOREAN_SINO_DIGITS: dict[str, int] = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
KOREAN_SINO_PLACES: dict[str, int] = {"십": 10, "백": 100, "천": 1000}
# A Korean numeral in words counts something only when one of these follows it: "세 개", "여섯 명", "두 곳". Most of
# its syllables are words too ("네" is "yes", "이" is "this"), and "시" after one is a time ("세 시").
KOREAN_COUNTERS = (
    "켤레", "송이", "그루", "마리", "군데", "가지", "사람", "개", "명", "대", "곳", "건", "번", "권", "장", "잔", "병",
    "채", "벌", "분", "팀", "자리", "살", "척", "칸", "줄", "회", "인",
)  # fmt: skip
# After these a numeral is a date or a time, not a quantity ("十一月", "三日", "十点").
CJK_DATE_AFTER = frozenset("年月日号號点點时時分秒周週")
# "3 of the 5 services": the words that join a count to its whole.
OF_WORDS = re.compile(r"\s*(?:of(?:\s+the)?|out of|von|aus|de(?:s|\s+los|\s+las)?|sur|su|di|dei|delle|van)\s+", re.I)
# The first words of those: a count's next words opening none of them say no "of" follows.
OF_FIRST = frozenset(("of", "out", "von", "aus", "de", "des", "sur", "su", "di", "dei", "delle", "van"))

# "다섯 명 중 두 명", "5个中有3个", "6人のうち4人": the words between a whole and the count of it that follows.
WHOLE_MARKS = ("중에서", "중에", "중", "가운데", "之中", "当中", "當中", "中", "のうち", "中有", "のうちで")
WHOLE_BEFORE = re.compile(f"(?:{'|'.join(sorted(WHOLE_MARKS, key=len, reverse=True))})\\s*$")
# A counter right after a number ("3개", "3 명", "三个", "5つ"): it counts things.
COUNTER_AFTER = re.compile(rf" ?(?:[{''.join(sorted(CJK_COUNTERS))}]|{'|'.join(KOREAN_COUNTERS)})")

# --- names -------------------------------------------------------------------------------------------------

# Capitalised words that are not names: sentence openers, function words, titles of sections.
NOT_NAMES = frozenset(
    (
        # English
        *("the", "a", "an", "this", "that", "these", "those", "it", "its", "it's", "they", "their", "there"),
        *("here", "in", "on", "at", "for", "from", "by", "with", "as", "of", "to", "and", "or", "but", "so"),
        *("both", "all", "each", "every", "overall", "total", "in total", "note", "also", "however", "yes"),
        *("no", "not", "if", "when", "while", "since", "after", "before", "today", "yesterday", "tomorrow"),
        *("currently", "right", "now", "then", "which", "what", "who", "how", "why", "where", "over", "under"),
        *("about", "around", "roughly", "approximately", "nearly", "almost", "just", "only", "still", "even"),
        *("average", "median", "latency", "revenue", "weather", "temperature", "humidity", "sources", "source"),
        *("summary", "answer", "result", "results", "combined", "together", "altogether", "so", "thus"),
        *("therefore", "meanwhile", "by contrast", "compared", "according", "based", "per", "via", "up", "down"),
        *("good", "great", "sure", "ok", "okay", "p50", "p95", "p99", "median", "mean", "i", "we", "you"),
        *("is", "are", "was", "were", "has", "have", "had", "will", "would", "can", "could", "should", "may"),
        *("tip", "tips", "advice", "recommendation", "conclusion", "details", "breakdown", "status", "update"),
        *("q1", "q2", "q3", "q4", "h1", "h2", "fy", "ytd", "eta", "sla", "slo", "kpi", "api", "ok", "n/a"),
        # German, French, Spanish, Italian, Portuguese, Dutch
        *("der", "die", "das", "ein", "eine", "im", "am", "laut", "insgesamt", "damit", "also", "aktuell"),
        *("heute", "derzeit", "zusammen", "gesamt", "mit", "bei", "für", "und", "oder", "aber", "es", "sie"),
        *("le", "la", "les", "un", "une", "en", "au", "aux", "selon", "au total", "actuellement", "ensemble"),
        *("el", "los", "las", "uno", "una", "según", "hoy", "actualmente", "juntos", "entre", "lo", "il", "gli"),
        *("o", "os", "as", "het", "een", "de", "ook", "totaal", "samen"),
        # prepositions that open a sentence capitalised ("À Lille", "Em Lisboa", "Nel Nord", "Op maandag")
        *("à", "dans", "chez", "sur", "pour", "avec", "depuis", "pendant", "con", "para", "por", "desde", "hasta"),
        *("a", "ad", "di", "da", "su", "tra", "fra", "nel", "nella", "nei", "dal", "dalla", "al", "alla", "em"),
        *("no", "na", "nos", "nas", "com", "do", "dos", "das", "op", "bij", "voor", "met", "naar", "uit", "van"),
        *("volgens", "auf", "nach", "von", "vom", "zum", "zur", "seit", "bis", "secondo", "segundo"),
    )
)
# Words that end the name of an organisation: "Orion Labs", "Globex GmbH", "星河科技".
ORGANISATION_SUFFIXES = frozenset(
    (
        *("labs", "lab", "inc", "inc.", "corp", "corp.", "corporation", "co", "co.", "ltd", "ltd.", "llc"),
        *("gmbh", "ag", "se", "kg", "sa", "sas", "sarl", "srl", "spa", "bv", "nv", "plc", "group", "holdings"),
        *("technologies", "systems", "solutions", "industries", "bank", "university", "foundation"),
    )
)
CJK_ORGANISATION_SUFFIXES = (
    "科技", "公司", "集团", "集團", "银行", "銀行", "实验室", "實驗室", "大学", "大學", "医院", "醫院",
    "株式会社", "工業", "工业", "電機", "电机", "商事", "研究所", "基金会", "전자", "그룹", "은행", "주식회사",
    "대학교", "병원", "연구소", "건설", "화학", "통신",
)  # fmt: skip
# What tells a name in Chinese, Japanese and Korean, which write no capitals (`cjk_names`): the word an
# organisation's name ends in, the title or honorific after a person's, the role before it. Narrow on purpose:
# each is a word that stands after a name, rarely after anything else. Narrower than the suffixes above, which
# only say that a word one character from a known name is a name of its kind: these tell a name on their own
# ("医院", "그룹" end too many common nouns to).
CJK_COMPANY_ENDINGS = (
    "有限公司", "公司", "集团", "集團", "银行", "銀行", "保险", "保險", "财险", "財險", "寿险", "壽險", "证券", "證券",
    "科技", "控股", "实业", "實業",
    "株式会社", "ホールディングス", "証券", "保険", "生命", "損保", "商事", "物産", "工業", "製作所", "電機", "建設",
    "주식회사", "은행", "보험", "증권", "생명", "전자", "물산", "상사", "유통", "건설", "화학", "통신", "카드",
)  # fmt: skip
CJK_COMPANY_OPENINGS = ("株式会社", "주식회사", "(주)", "（주）", "㈜")  # written before the name: "株式会社ミライ"
# Words that stand before a company ending as a kind, not a name ("保险公司", "商业银行", "医療保険",
# "자동차보험"): left out of the name's own part ("中国人寿保险" → "中国", "한결손해보험" → "한결").
CJK_COMPANY_KINDS = frozenset(
    (
        *("保险", "商业", "投资", "人寿", "财产", "医疗", "养老", "社会", "上市", "有限", "股份", "网络", "中央"),
        *("国有", "外资", "民营", "私营", "地方", "农村", "城市", "网上", "手机", "高新", "金融", "信息", "数字"),
        *("一家", "两家", "这家", "那家", "该家", "各家", "多家", "每家", "几家", "哪家", "汽车", "车辆", "意外"),
        *("健康", "重疾", "责任", "运输", "工程", "农业", "贸易", "物流", "咨询", "软件", "游戏", "电商", "创业"),
        *("初创", "合作", "竞争", "同类", "同行", "其他", "其它", "相关", "所属", "互联网", "高科技", "黑科技"),
        *("各大", "主要", "大型", "中小", "小型", "知名", "头部", "龙头", "传统", "新兴", "财险", "寿险"),
        *("損害", "医療", "自動車", "火災", "地震", "雇用", "介護", "国民", "都市", "ネット", "信託", "大手"),
        *("外資", "総合", "関連", "系列", "国内", "海外", "中堅", "地銀", "メガ", "生命", "建設", "損保"),
        *("자동차", "손해", "실손", "시중", "인터넷", "지방", "저축", "국내", "해외", "대형", "중소", "상위"),
        *("하위", "계열", "종합", "온라인", "모바일", "화재", "해상", "생명", "여행", "운전자", "치아", "신용"),
        *("체크", "직장", "이동", "데이터", "석유", "정보", "무선", "유선", "중앙", "기준"),
    )
)
# Verbs a company ending follows as a common noun ("客户购买保险", "加大科技投入"), or that stand before a name
# ("通过招商银行"): a company's name begins after them.
CJK_COMPANY_VERBS = (
    "购买", "办理", "提供", "销售", "推出", "选择", "申请", "缴纳", "投保", "参加", "加入", "开通", "使用", "通过",
    "联系", "前往", "转入", "转出", "存入", "加大", "加强", "提升", "提高", "发展", "依靠", "利用", "推动", "促进",
    "支持", "研发", "引进", "结合", "加快", "借助", "运用", "涉及", "属于", "来自", "重视", "投入", "注重", "经由",
)  # fmt: skip
# A person's name stands before these: in Chinese a title, also after a family name alone ("王思远先生",
# "王经理"), or words only a person takes ("王思远一个人就…"); in Japanese an honorific or title ("佐藤さん",
# "田中部長"); in Korean one after a name of three syllables ("김도윤 님", "박지훈 팀장").
CHINESE_TITLES = (
    "先生", "女士", "小姐", "同学", "同志", "老师", "经理", "总监", "主管", "工程师", "主任", "组长", "店长",
)  # fmt: skip
CHINESE_PERSON_ALONE = ("一个人", "一人", "独自", "本人")  # after a full name only: "王思远一个人"
JAPANESE_PERSON_AFTER = ("さん", "様", "さま", "くん", "ちゃん", "先生", "部長", "課長", "社長", "係長")
KOREAN_PERSON_AFTER = ("님", "팀장", "과장", "부장", "대리", "매니저", "선생님", "사장", "실장")
# … or after these ("客服王思远", "员工李明"): Chinese only, where no particle stands between.
CJK_PERSON_BEFORE = ("员工", "同事", "客服", "坐席", "负责人", "选手", "学员", "店员", "职员")
# Korean particles: what may follow a name in its word ("한빛물산으로", "한빛물산은").
KOREAN_PARTICLES = frozenset(
    (
        *("은", "는", "이", "가", "을", "를", "의", "에", "에서", "에게", "으로", "로", "와", "과", "도", "만"),
        *("보다", "까지", "부터", "처럼", "이다", "이고", "이며", "입니다", "이에요", "예요", "였다", "이었다", "랑"),
    )
)
# The family names a Chinese or Korean name opens with (a Japanese one is told by its honorific alone).
CJK_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡杜叶程苏魏吕丁沈姚卢姜崔钟"
    "谭陆汪范金石廖贾夏韦付白邹孟熊秦邱江尹薛闫段雷侯龙陶黎贺顾毛郝龚邵钱严武戴莫孔汤"
    "김이박최정강조윤장임한오서신권황안송류유전홍고문양손배백허남심노하곽성차주우구민진나지엄채원천방공현함변염여추도소석설마길연위표명기반왕금옥육인맹제모탁국"
)
CJK_COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "慕容", "令狐", "司徒", "夏侯", "南宫", "独孤")
# Words before a title or honorific that name no one: "高级工程师", "患者さん", "お客様", "仕様", "고객님".
CJK_NOT_PEOPLE = frozenset(
    (
        *("高级", "高中", "高峰", "高峰期", "金牌", "常务", "程序", "周末", "全职", "兼职", "单独", "江湖"),
        *("本周", "每周", "这周", "该周", "当周", "对方", "双方", "各方", "我方", "该方"),  # "本周经理例会"
        *("患者", "店員", "大家", "業者", "職員", "看護師", "運転手", "担当者", "担当", "利用者", "会員", "社員"),
        *("生徒", "学生", "同僚", "上司", "部下", "新人", "仕様", "同様", "模様", "多様", "異様", "神様", "奥様"),
        *("皆様", "客様", "子様", "王様", "皆さん", "客さん"),
        *("ユーザー", "メンバー", "スタッフ", "ゲスト", "オーナー", "ママ", "パパ", "お客"),
        *("고객", "회원", "선생", "여러분", "환자", "기사", "학생", "사용자", "이용자", "담당자", "직원"),
    )
)
# Characters that cannot be part of a Chinese name: where a name before its mark begins at the latest (Japanese
# names may hold any kanji, "山本", "和子": there a name is the run of kanji and katakana before its mark).
CJK_NOT_IN_NAMES = frozenset(
    "的了是在和与及或向对从把被给由为比跟同将就都也还又共约这那该本此其各每我你他她它们家个位名等于并即而但所到至占达"
    "有无没不很更最较已再才只仅子分总母贵当弊御全両親"
)
