"""Thanks and goodbyes: how the reply begins when the user thanks the companion or takes
their leave ("Thank you, that's all for now. Goodbye!" → "[joy] You're welcome! Bye
for now!"). Said at once, while the embedded model reads the words, and the model goes
on from it: its own "You're welcome! It was nice talking to you. Goodbye!" took 1.6-2.0
s to be heard on 2 cores (bench/bench_conversation.py's last turn).

Only words that are thanks or a goodbye in themselves count: "No thanks.", "Thanks for
nothing." and "Say goodbye to my mom for me." are none, and neither is thanks inside a
question or a request ("Thanks, can you tell me a joke?" is answered as a question).
"""

from __future__ import annotations

import re

from app.own_words import HAN_CHAR

# Thanks opening a sentence: "Thank you", "Thanks a lot", "Thank you so much for ..."
_THANKS = re.compile(
    r"(?:^|[.!?,;]\s*)(?:oh,?\s+|well,?\s+|ok(?:ay)?,?\s+)?"
    r"(?:thank\s+you|thanks|many\s+thanks|cheers)\b"
)
_NOT_THANKS = re.compile(
    r"\bno,?\s+thank|\bthanks?\s+(?:you\s+)?for\s+nothing\b|\bthanks?\s+but\b"
)
# A goodbye closing the words: "Goodbye!", "Bye for now.", "See you later.", "Good night."
_GOODBYE = re.compile(
    r"(?:^|[.!?,;]\s*|\b(?:and|so|ok|okay|alright|all right|well|now)\s+)"
    r"(?:good\s*bye|bye(?:\s*-?\s*bye)?|see\s+you(?:\s+(?:later|soon|tomorrow|next\s+time|around))?"
    r"|talk\s+(?:to\s+you\s+)?(?:later|soon|tomorrow)|good\s*night|farewell|later|take\s+care)"
    r"(?:\s+(?:for\s+now|then|now|everyone|friend|buddy))?[\s.!]*$"
)
# Words that end the conversation without a goodbye: "That's all for now."
_DONE = re.compile(r"\bthat'?s\s+(?:all|it)\s+for\s+(?:now|today|tonight)\b")
_ZH_THANKS = ("谢谢", "多谢", "感谢")
_ZH_NOT_THANKS = ("不用了谢谢", "不用谢", "不了谢谢")
_ZH_GOODBYE = ("再见", "拜拜", "晚安", "回头见", "明天见", "下次见")
# Words that may stand around Chinese thanks or a goodbye ("好的，谢谢啦", "那我先拜拜了").
_ZH_AROUND = (
    "你", "您", "啦", "了", "哦", "呀", "啊", "好", "的", "那", "就", "先", "这样", "今天"
)  # fmt: skip

WELCOME = "[joy] You're welcome!"
GOODBYE = "[joy] Bye for now!"
WELCOME_GOODBYE = "[joy] You're welcome! Bye for now!"
WELCOME_ZH = "[joy] 不客气！"
GOODBYE_ZH = "[joy] 再见！"
WELCOME_GOODBYE_ZH = "[joy] 不客气！再见！"


def parting_start(text: str, *, chinese: bool = False) -> str:
    """How the reply to `text` begins when `text` thanks the companion or says goodbye
    (`WELCOME`, `GOODBYE`, both), "" otherwise: a question or request asked with the
    thanks gets the model's own words."""
    if chinese:
        return _chinese_parting(text)
    low = " ".join(text.lower().replace("’", "'").split())
    if "?" in low:
        return ""
    thanks = _THANKS.search(low) is not None and _NOT_THANKS.search(low) is None
    goodbye = _GOODBYE.search(low) is not None or _DONE.search(low) is not None
    if not (thanks or goodbye) or (thanks and not goodbye and not _only_thanks(low)):
        return ""
    if thanks and goodbye:
        return WELCOME_GOODBYE
    return WELCOME if thanks else GOODBYE


def says_goodbye(text: str) -> bool:
    """Whether `text` takes the user's leave ("Goodbye!", "Thanks, bye!", "That's all for
    now.", "再见"): a turn handed over for good, which the turn detector ends as soon
    as a question (thanks alone may well go on: "Thanks! Now tell me ...")."""
    return parting_start(text, chinese=HAN_CHAR.search(text) is not None) in (
        GOODBYE, WELCOME_GOODBYE, GOODBYE_ZH, WELCOME_GOODBYE_ZH
    )


def _only_thanks(low: str) -> bool:
    """Whether the words are thanks and nothing that asks for more: "Thank you so much
    for your help!", not "Thanks, tell me a joke."."""
    sentences = [s.strip(" ,") for s in re.split(r"[.!;]+", low) if s.strip(" ,")]
    return bool(sentences) and all(
        _THANKS_ALONE.fullmatch(_THANKS.sub("", s, count=1).strip(" ,")) for s in sentences
    )


# What may follow "thank you" in thanks alone: "so much", "a lot", "for your help".
_THANKS_ALONE = re.compile(
    r"(?:(?:so|very)\s+much|a\s+(?:lot|bunch|million)|again|anyway|really|a\s+lot\s+again)?"
    r"(?:,?\s*(?:(?:so|very)\s+much\s+)?for\s+[\w' ]+)?"
)


def _chinese_parting(text: str) -> str:
    body = re.sub(r"[\s，。！、,.!~～]+", "", text)
    if not body or "？" in text or "?" in text or "吗" in body:
        return ""
    thanks = any(w in body for w in _ZH_THANKS) and not any(w in body for w in _ZH_NOT_THANKS)
    goodbye = body.endswith(_ZH_GOODBYE)
    rest = body
    for word in (*_ZH_THANKS, *_ZH_GOODBYE, *_ZH_AROUND):
        rest = rest.replace(word, "")
    if not (thanks or goodbye) or rest:
        return ""
    if thanks and goodbye:
        return WELCOME_GOODBYE_ZH
    return WELCOME_ZH if thanks else GOODBYE_ZH
