"""Whether the user's words take their leave: for the turn detector only.

"Goodbye!", "Thanks, bye!", "That's all for now.", "再见" hand the turn over for good,
so the turn detector ends it as soon as it would a question (thanks alone may well go
on: "Thanks! Now tell me ..."). Nothing here chooses what the companion says: the model
answers a goodbye in its own words.
"""

from __future__ import annotations

import re

from app.own_words import HAN_CHAR

__all__ = ["says_goodbye"]

# A goodbye closing the words: "Goodbye!", "Bye for now.", "See you later.", "Good night."
_GOODBYE = re.compile(
    r"(?:^|[.!?,;]\s*|\b(?:and|so|ok|okay|alright|all right|well|now)\s+)"
    r"(?:good\s*bye|bye(?:\s*-?\s*bye)?|see\s+you(?:\s+(?:later|soon|tomorrow|next\s+time|around))?"
    r"|talk\s+(?:to\s+you\s+)?(?:later|soon|tomorrow)|good\s*night|farewell|later|take\s+care)"
    r"(?:\s+(?:for\s+now|then|now|everyone|friend|buddy))?[\s.!]*$"
)
# Words that end the conversation without a goodbye: "That's all for now."
_DONE = re.compile(r"\bthat'?s\s+(?:all|it)\s+for\s+(?:now|today|tonight)\b")
_ZH_GOODBYE = ("再见", "拜拜", "晚安", "回头见", "明天见", "下次见")
# What may stand around a Chinese goodbye ("好的，谢谢啦，再见", "那我先拜拜了").
_ZH_AROUND = (
    "谢谢", "多谢", "感谢", "你", "您", "啦", "了", "哦", "呀", "啊", "好", "的", "那", "就",
    "先", "这样", "今天",
)  # fmt: skip


def says_goodbye(text: str) -> bool:
    """Whether `text` takes the user's leave (a question never does: "Bye?")."""
    if "?" in text or "？" in text:
        return False
    if HAN_CHAR.search(text):
        body = re.sub(r"[\s，。！、,.!~～]+", "", text)
        if not body.endswith(_ZH_GOODBYE) or "吗" in body:
            return False
        for word in (*_ZH_GOODBYE, *_ZH_AROUND):
            body = body.replace(word, "")
        return not body
    low = " ".join(text.lower().replace("’", "'").split())
    return _GOODBYE.search(low) is not None or _DONE.search(low) is not None
