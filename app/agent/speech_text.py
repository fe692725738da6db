"""The text of one reply fragment as shown and as spoken: whitespace tidying for the
transcript, and what is left for the voice once markup, emoji, URLs and asides are gone.

Every pattern here runs in time linear in the fragment: no pattern can rescan the rest of
the text from each of many starting points (a 100k-character reply of "[[[[" or "**" too).
"""

from __future__ import annotations

import re

from app.agent.markup import TAG

__all__ = ["speakable", "tidy_spaces"]

_CJK_IDEOGRAPH = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_SPACES = re.compile(r"[ \t\u3000]+")
_SPACE_BEFORE_PUNCT = re.compile(r" +(?=[,.!?;:…]+(?:\s|$))| +(?=[，。！？、；：）」』”])")
_SPACE_BETWEEN_CJK = re.compile(rf"(?<=[{_CJK_IDEOGRAPH}，。！？、；：]) +(?=[{_CJK_IDEOGRAPH}])")


# Whether the three patterns above could change anything: a superset, checked quickly
# (a literal space first lets the regex engine skip ahead).
_SPACE_BEFORE_MARK = re.compile(rf" [,.!?;:…，。！？、；：）」』”{_CJK_IDEOGRAPH}]")


def tidy_spaces(text: str) -> str:
    """Collapse the runs of spaces a removed tag leaves, and the space before punctuation."""
    if not ("  " in text or "\t" in text or "\u3000" in text or _SPACE_BEFORE_MARK.search(text)):
        return text.strip()
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    return _SPACE_BETWEEN_CJK.sub("", text).strip()


_LINE_MARKERS = frozenset("#>-*+•0123456789")
_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|>+\s*|(?:[-*+•]|\d+[.)])\s+)+")
_IMAGE = re.compile(r"!\[[^\[\]]*\]\([^()\s]*\)")
_LINK = re.compile(r"\[([^\[\]]+)\]\([^()\s]*\)")
# A URL (or a bare "example.com/path") is one whitespace-free run; the sentence's own
# closing punctuation after it is kept ("see https://x.org." still ends in ".").
_URL_CHARS = r"[^\s\u3000-\u9fff\uff00-\uffef]"  # a URL ends where CJK text resumes
_URL = re.compile(
    rf"(?<![A-Za-z\d])(?:https?://|www\.){_URL_CHARS}+|(?<!\S)[\w-]+\.[\w.-]*[A-Za-z]/{_URL_CHARS}*"
)
_URL_TRAILING = ".,!?;:)]"
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")
_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*|__([^_\n]+?)__")
# A starred span opening or closing a sentence is a roleplay action ("*waves* Hi!");
# one inside a sentence is emphasis and its words are spoken ("I *really* do").
_ACTION = re.compile(r"^\s*\*[^*\n]+\*|\*[^*\n]+\*[\s.!?。！？]*$")
# The mark comes first and the look-behind after it, so only marks are tried as starts.
_EMPHASIS = re.compile(
    r"\*(?<![\w*]\*)(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])|_(?<!\w_)([^_\n]+?)_(?!\w)"
)
_CODE = re.compile(r"`+([^`]*)`+")
_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]|【[^【】]*】")
_ASIDE_OPENERS = re.compile(r"[(\[（【]")
# Asides nested deeper than this are left to the mark filter: each pass reads the text once.
_MAX_ASIDE_PASSES = 3
# Emoji, and what is left of markup: marks and the brackets of unclosed asides.
_UNSPOKEN = re.compile(
    "["
    "\U0001f000-\U0001faff"  # pictographs, emoticons, transport, flags, extended-A
    "\u2600-\u27bf"  # miscellaneous symbols and dingbats (☀ ♪ ✨ ❤)
    "\u2b00-\u2bff"  # ⭐ ⬆
    "\u2300-\u23ff"  # ⌚ ⏰
    "\u2190-\u21ff"  # arrows
    "\ufe00-\ufe0f\u200d\u20e3"  # variation selectors, joiner, keycap
    "\U000e0020-\U000e007f"  # flag tag sequences
    "\u3030\u303d\u3297\u3299"
    "*`|~～#_\\[\\]【】()（）"
    "]+"
)
_EMOTICON = re.compile(r"(?<!\S)[:;=]'?-?[()DPpO/\\|\[\]]+(?!\S)")  # :( ;-) =D :/
_UNSPOKEN_ASCII = re.compile(r"[*`|~#_\[\]()]+")  # the same, for text that is all ASCII
_SAYABLE = re.compile(r"[^\W_]")  # a letter or a digit


def _drop_url(match: re.Match[str]) -> str:
    url = match[0]
    return " " + url[len(url.rstrip(_URL_TRAILING)) :]


def speakable(text: str) -> str:
    """What a voice says for `text`: "" when nothing in it is worth saying.

    Markdown marks go but their words stay ("**Bold**" says "Bold"), a link says its
    label; URLs, emoji and :-) faces, HTML tags, `(asides)`, `[stage directions]` and
    `*actions*` opening or closing the sentence go. Prices and numbers stay ("$5", "3.14").
    """
    # Each pattern runs only when its marker is there: most sentences have no markup.
    if "<|" in text:
        text = TAG.sub(" ", text)  # its inline tags; bracket tags go with the asides below
    if text.lstrip()[:1] in _LINE_MARKERS:
        text = _LINE_MARKUP.sub("", text)
    if "](" in text:
        text = _IMAGE.sub(" ", text)
        text = _LINK.sub(r"\1", text)
    if "/" in text or "www." in text:
        text = _URL.sub(_drop_url, text)
    if "<" in text:
        text = _HTML_TAG.sub(" ", text)
    if "`" in text:
        text = _CODE.sub(r"\1", text)
    if "*" in text or "_" in text:
        text = _BOLD.sub(lambda m: m[1] or m[2], text)
        text = _ACTION.sub(" ", text)
        text = _EMPHASIS.sub(lambda m: m[1] or m[2], text)
    if _ASIDE_OPENERS.search(text):
        for _ in range(_MAX_ASIDE_PASSES):  # innermost asides first, so nested ones go too
            text, removed = _ASIDE.subn(" ", text)
            if not removed:
                break
    if ":" in text or ";" in text or "=" in text:
        text = _EMOTICON.sub(" ", text)
    text = tidy_spaces((_UNSPOKEN_ASCII if text.isascii() else _UNSPOKEN).sub(" ", text))
    return text if _SAYABLE.search(text) else ""
