"""What the words of a transcript say about the turn: whether a sentence sounds
finished, whether an utterance is only a backchannel ("mm-hm", "yeah"), and whether
two transcripts are the same words.

The turn model hears prosody; the words add what prosody misses ("I want to tell you
about" is not over, however it ends). Only English has word rules; other languages
get no verdict from the words. Cutting someone off is worse than waiting a little, so
a doubtful ending counts as unfinished.
"""

from __future__ import annotations

import re


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[a-z0-9']+(?:-[a-z0-9']+)*")
# Words a sentence next to never ends on, whatever punctuation the recognizer put
# after them ("Can you tell me about the?" is still going).
_NEVER_LAST = _word_set(
    "a an the my your our their its this these those every each another "
    "and but or nor because if whether although though unless than "
    "to of i"
)
# Prepositions. Each ends a finished sentence only when what it points to came first:
# a question or clause opened by a wh-word or "that" ("What can you help me with?",
# "the song that I told you about"). Without one ("Can you help me with?", "I was
# looking at.") the object is still to come, whatever punctuation the recognizer put
# there; a relative clause without "that" ("the song I told you about") waits for the
# longest silence too, as a doubtful ending does.
_STRANDABLE = _word_set(
    "about above across after against along among around at before behind below "
    "between by during for from into like near onto through toward towards under "
    "until upon with within without"
)
# Words a sentence seldom ends on: unfinished when the recognizer did not close the
# sentence either ("what I really want is", "so the answer could be").
_SELDOM_LAST = _STRANDABLE | _word_set(
    "as since while when where which who whom whose what "
    "why how that so then also just really very is are was were am be been being "
    "can could would should will shall may might must do does did have has had "
    "we they he she you it me some any"
)
_FRONTED = _word_set(
    "what which who whom whose where when why how whatever whichever whoever "
    "wherever that"
)
_OPEN_ENDINGS = ("...", "…", ",", ":", ";", "-", "—", "–")
_CLOSED_ENDINGS = (".", "?", "!", "。", "？", "！")
_BACKCHANNELS = _word_set(
    "mm mmm mhm mm-hm mm-hmm hm hmm uh-huh uh huh um yeah yea yes yep yup ok okay "
    "right sure oh ah aha wow cool nice alright"
)
_FILLERS = _word_set("uh um er erm mm mmm hm hmm mhm ah oh")
_BACKCHANNEL_PHRASES = frozenset({"i see", "got it", "all right", "of course", "go on"})


def words(text: str) -> list[str]:
    """The lowercase words of `text`, punctuation dropped."""
    return _WORD.findall(text.lower().replace("’", "'"))


def same_words(a: str, b: str) -> bool:
    """Whether two transcripts say the same words (case and punctuation aside)."""
    return words(a) == words(b)


def sounds_finished(text: str, language: str | None) -> bool | None:
    """Whether the sentence `text` sounds finished: False when it is plainly going on
    (it ends in "..." or a comma, or on a word such as "the", "and", "about"), True when
    nothing says so, None when the words cannot tell (no words, or not English)."""
    spoken = words(text)
    if not spoken or (language or "en").split("-")[0].lower() not in ("en", ""):
        return None
    stripped = text.rstrip()
    if stripped.endswith(_OPEN_ENDINGS):
        return False
    last = spoken[-1]
    if last in _NEVER_LAST:
        return False
    if last in _STRANDABLE and not _FRONTED.intersection(words(_last_sentence(stripped))[:-1]):
        return False
    closed = stripped.endswith(_CLOSED_ENDINGS)
    return closed or last not in _SELDOM_LAST


def _last_sentence(text: str) -> str:
    """The last sentence of `text` (the one a turn ends on)."""
    body = text.rstrip("".join(_CLOSED_ENDINGS) + " ")
    cut = max(body.rfind(mark) for mark in _CLOSED_ENDINGS)
    return body[cut + 1 :]


def is_backchannel(text: str) -> bool:
    """Whether `text` is only a listener's acknowledgement ("mm-hm", "yeah, okay", "I
    see"): said over the companion, it is not a request to stop and answer."""
    spoken = words(text)
    if not spoken or len(spoken) > 4:
        return False
    meant = [word for word in spoken if word not in _FILLERS]
    return " ".join(meant) in _BACKCHANNEL_PHRASES or all(w in _BACKCHANNELS for w in meant)


# What the microphone hears of the companion's own voice comes back through a recognizer
# that slips ("It's Kid's name" for "It's Pepper, your kitten's name"): most of its words,
# in order, are words the companion just said.
OWN_WORDS_SHARE = 0.75
_OWN_WORDS_LOOK_BACK = 120  # the companion's last words compared (a long reply's tail)


def is_own_words(heard: str, said: str) -> bool:
    """Whether `heard` (a transcript of the microphone) is the companion's own words
    `said` coming back: at least two of its words, and `OWN_WORDS_SHARE` of them, are
    found in order among what was said. A user who answers ("My cat is called Miso")
    shares a word or two with the question, not most of their sentence in order."""
    heard_words = words(heard)
    said_words = words(said)[-_OWN_WORDS_LOOK_BACK:]
    if len(heard_words) < 2 or not said_words:
        return False
    common = _common_in_order(heard_words, said_words)
    return common >= 2 and common >= OWN_WORDS_SHARE * len(heard_words)


def _common_in_order(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of `a` and `b` (word lists)."""
    previous = [0] * (len(b) + 1)
    for word in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if word == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]
