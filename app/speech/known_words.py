"""The names in what the companion knows, for recognition to listen for.

`names_in(texts)` finds the proper names in remembered facts ("The user's kitten is
called Pepper." → Pepper): capitalised words inside a sentence, and a sentence's first
word when it is capitalised elsewhere too; in Chinese, the name after 叫 ("用户的猫叫小白"
→ 小白). The session passes them, with the user's and
the character's names, to `SpeechClient.set_known_words`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["known_words", "names_in"]

_SENTENCE = re.compile(r"[^.!?。！？\n]+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_NAME = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:['’-][A-Z]?[a-z]+)?")
# Capitalised inside a sentence without being a name.
_NOT_WORDS = (
    "I I'm I've I'd I'll OK Okay Mr Mrs Ms Dr Monday Tuesday Wednesday Thursday Friday "
    "Saturday Sunday January February March April May June July August September "
    "October November December English Chinese User Assistant"
)
_NOT_NAMES = frozenset(_NOT_WORDS.split(" "))
# A Chinese name, as a remembered fact says it: "用户的猫叫小白", "用户名叫王小明", "她的名字是
# 莉莉": two or three Han characters after 名叫/叫做/名字是, or 叫 after who is named (the
# user, a pet, a friend, a child: not "叫外卖", "这叫幸福"), up to a mark, a particle or
# the end (小白 was heard as 消败 in "不要再记得小白了" until it was listened for).
_HAN_NAME = re.compile(
    r"(?:名叫|叫做|名字是|(?:猫|狗|鸟|兔|鱼|仓鼠|宠物|朋友|孩子|儿子|女儿|用户|我|她|它)叫(?!做))"
    r"([\u4e00-\u9fff]{2,3}?)(?=$|[^\u4e00-\u9fff]|[的了吗吧呢啊呀，。])"
)
_NOT_HAN_NAMES = frozenset({"什么", "什么名", "名字", "自己"})
# 叫 inside a word (叫声, 叫醒, 大叫): not a name after it
_NOT_CALLING = re.compile(r"叫[声醒喊嚷卖好]|[大喊尖鸣吼惊]叫")


def names_in(texts: Iterable[str], limit: int = 40) -> list[str]:
    """The proper names in `texts`, most often mentioned first (then first seen)."""
    counts: Counter[str] = Counter()
    first_words: list[str] = []
    for text in texts:
        for sentence in _SENTENCE.findall(text):
            tokens = _TOKEN.findall(sentence)
            for position, token in enumerate(tokens):
                token = token.rstrip("'’-").removesuffix("'s").removesuffix("’s")
                if not _NAME.fullmatch(token) or {token, token.removesuffix("s")} & _NOT_NAMES:
                    continue
                if position == 0:
                    first_words.append(token)
                else:
                    counts[token] += 1
        for name in _HAN_NAME.findall(_NOT_CALLING.sub("，", text)):
            if name not in _NOT_HAN_NAMES:
                counts[name] += 1
    for token in first_words:
        if token in counts:
            counts[token] += 1
    return [name for name, _ in counts.most_common(limit)]


def known_words(*names: str | None, facts: Iterable[str] = ()) -> list[str]:
    """The words to listen for: the given names (the user's, the character's; None and
    empty ones skipped) first, then the names in `facts` (long-term memory)."""
    given = [name.strip() for name in names if name and name.strip()]
    return list(dict.fromkeys([*given, *names_in(facts)]))
