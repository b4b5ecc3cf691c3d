"""Small talk: a message that asks for no facts — "Thanks!", "Hi there!", "what can you do?" — gets a plain reply.

The door is narrow on purpose. A message is small talk only when every word of it belongs to a closed
vocabulary of greetings, thanks, goodbyes, acknowledgements and questions about the bot itself, in the
languages Parley is used in. One word outside it ("Thanks! And Berlin?", "hi, weather in paris") and the
message is a question like any other: its answer needs tool results and every figure is checked.
"""

from __future__ import annotations

import re
import unicodedata

# Whole phrases first (longest match wins), then single words. Lower case; matched on word boundaries.
_PHRASES = (
    # greetings, goodbyes
    "good morning", "good afternoon", "good evening", "good night", "see you", "bye bye", "guten morgen",
    "guten tag", "guten abend", "bis bald", "bis später", "auf wiedersehen", "bonne journée", "bonne soirée",
    "à bientôt", "buenos días", "buenas tardes", "buenas noches", "hasta luego", "hasta pronto",
    # thanks and acknowledgement
    "thank you", "thanks a lot", "many thanks", "much appreciated", "that helps", "that helped",
    "that's exactly what i needed", "that is exactly what i needed", "exactly what i needed", "just what i needed",
    "that's great", "that's perfect", "that's helpful", "got it", "makes sense", "sounds good", "never mind",
    "vielen dank", "danke schön", "danke sehr", "merci beaucoup", "muchas gracias", "grazie mille",
    # about the bot itself
    "what can you do", "what do you do", "what are you", "who are you", "how do you work", "how can you help",
    "what can i ask", "what can i ask you", "what are you able to do", "how are you", "how's it going",
    "was kannst du", "wer bist du", "wie geht's", "wie geht es dir", "que peux-tu faire", "qui es-tu",
    "qué puedes hacer", "quién eres", "cómo estás",
)  # fmt: skip
_WORDS = frozenset(
    (
        "hi", "hello", "hey", "hiya", "howdy", "yo", "morning", "evening", "bye", "goodbye", "cheers", "thanks",
        "thank", "thx", "ty", "ok", "okay", "kk", "cool", "great", "perfect", "awesome", "nice", "wonderful",
        "excellent", "brilliant", "super", "amazing", "lovely", "good", "fine", "sure", "alright", "right", "yes",
        "yep", "yeah", "no", "nope", "help", "there", "you", "so", "much", "very", "lot", "again", "all", "everyone",
        "folks", "team", "parley", "bot", "man", "buddy", "friend", "please", "hallo", "moin", "servus", "tschüss",
        "danke", "dir", "euch", "prima", "toll", "klasse", "gut", "alles", "ja", "nein", "bonjour", "salut", "coucou",
        "merci", "bien", "parfait", "génial", "oui", "non", "hola", "gracias", "vale", "perfecto", "genial", "sí",
        "adiós", "ciao", "grazie",
    )
)  # fmt: skip
_CJK_PHRASES = (
    "谢谢你", "谢谢您", "谢谢", "多谢", "感谢", "你好", "您好", "早上好", "晚上好", "再见", "好的", "明白了", "收到",
    "你能做什么", "你可以做什么", "你是谁", "太好了", "辛苦了", "ありがとうございます", "ありがとう", "こんにちは",
    "こんばんは", "おはようございます", "おはよう", "さようなら", "了解です", "了解", "何ができますか",
    "あなたは誰", "助かりました", "감사합니다", "고마워요", "안녕하세요", "안녕",
)  # fmt: skip
_PHRASE = re.compile(
    r"(?<![\w'])(?:" + "|".join(re.escape(p) for p in sorted(_PHRASES, key=len, reverse=True)) + r")(?![\w'])"
)
_CJK_PHRASE = re.compile("|".join(re.escape(p) for p in sorted(_CJK_PHRASES, key=len, reverse=True)))
_MENTION = re.compile(r"<@[A-Z0-9]+>|@\w+")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+")
MAX_CHARS = 80


def is_small_talk(message: str) -> bool:
    """True when the message asks for no facts at all (see the module docstring for how narrow that is)."""
    text = unicodedata.normalize("NFKC", _MENTION.sub(" ", message)).casefold().replace("’", "'")
    if not text.strip() or len(text) > MAX_CHARS or any(ch.isdigit() for ch in text):
        return False
    rest = _CJK_PHRASE.sub(" ", _PHRASE.sub(" ", text))
    words = _WORD.findall(rest)
    if any(word not in _WORDS for word in words):
        return False
    # Something matched — or the message is only emoji and punctuation ("👍"), and asks nothing.
    return bool(words) or rest != text or (not _WORD.search(text) and "?" not in text)
