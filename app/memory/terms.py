"""Words as the memory store indexes and searches them, in English and Chinese.

SQLite's `unicode61` tokenizer splits on spaces and punctuation, which leaves a run of
Chinese characters as one long token. So the indexed text (`index_terms`) has every
CJK character spaced out, and a query (`match_query`) asks for its single characters
and its two-character phrases; Latin words go through as they are (the `porter`
tokenizer stems them on both sides). Words that say nothing about what a memory is
("the", "what", "user", "的", "用户") are left out of queries, so a question does not
match every memory there is.
"""

from __future__ import annotations

import re
import unicodedata

# Han, kana, Hangul: scripts written without spaces between words.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_PIECES = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+|[^\W_]+", re.UNICODE
)

_STOP_WORDS_TEXT = """
    a about above after again all also am an and any are aren as at be because been
    before being below between both but by can cannot could did didn do does doesn
    doing don down during each few for from further had hadn has hasn have haven
    having he her here hers herself him himself his how i if in into is isn it its
    itself just let ll me mine more most my myself no nor not now of off on once
    only or other our ours ourselves out over own re same she should so some such
    than that the their theirs them themselves then there these they this those
    through to too under until up very was wasn we were weren what when where which
    while who whom why will with won would you your yours yourself yourselves s t d
    m ve y o ok okay yes yeah please thanks thank really actually well user users
    user's remember remembers remembered know knows knew tell told say said think
    thought like just called named name names call
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
# One-character words of Chinese that carry no topic of their own.
CJK_STOP_CHARS = frozenset(
    "的了是我你他她它们吗呢吧啊在有和就都也很这那个么什谁哪要会能说记得住用户请把给被让"
)
CJK_STOP_PAIRS = frozenset(
    {"什么", "用户", "记得", "记住", "知道", "我的", "你的", "他的", "她的", "名字", "叫做",
     "事情", "东西", "这件", "那件"}
)
# Names people use for the companion's "user" in stored notes, never searched for.
_NAME_WORDS = frozenset({"user", "users", "用户"})


def normalize(text: str) -> str:
    """NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def index_terms(text: str) -> str:
    """What the full-text index stores for `text`: its words, CJK characters spaced."""
    pieces = _PIECES.findall(normalize(text))
    return " ".join(" ".join(piece) if _CJK.match(piece) else piece for piece in pieces)


def quoted(term: str) -> str:
    """`term` as an FTS5 string: never read as query syntax."""
    return '"' + term.replace('"', '""') + '"'


def query_terms(text: str) -> list[str]:
    """The searchable terms of `text`: content words, CJK characters and pairs of them."""
    terms: list[str] = []
    for piece in _PIECES.findall(normalize(text)):
        if _CJK.match(piece):
            terms.extend(ch for ch in piece if ch not in CJK_STOP_CHARS)
            pairs = (piece[i : i + 2] for i in range(len(piece) - 1))
            terms.extend(
                " ".join(pair)
                for pair in pairs
                if pair not in CJK_STOP_PAIRS and not set(pair) <= CJK_STOP_CHARS
            )
        elif piece not in STOP_WORDS and (len(piece) > 1 or piece.isdigit()):
            terms.append(piece)
    return list(dict.fromkeys(terms))


def match_query(text: str) -> str:
    """An FTS5 MATCH expression for `text` (any of its terms), or "" when it has none.
    Every term is quoted, so nothing the user says is read as query syntax."""
    return " OR ".join(quoted(term) for term in query_terms(text))


def content_words(text: str) -> frozenset[str]:
    """The words (and CJK characters) of `text` that say what it is about, for telling
    near-identical memories apart from different ones."""
    words: set[str] = set()
    for piece in _PIECES.findall(normalize(text)):
        if _CJK.match(piece):
            for pair in CJK_STOP_PAIRS:  # "名字" (name) says nothing of what it is about
                piece = piece.replace(pair, " ")
            words.update(ch for ch in piece if ch not in CJK_STOP_CHARS and not ch.isspace())
        elif piece not in STOP_WORDS:
            words.add(piece)
    return frozenset(words - _NAME_WORDS)


def similarity(a: str, b: str) -> float:
    """How alike two memories' content words are, 0..1 (Jaccard)."""
    left, right = content_words(a), content_words(b)
    if not left and not right:
        return 1.0 if normalize(a) == normalize(b) else 0.0
    return len(left & right) / len(left | right)


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))
