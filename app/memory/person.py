"""Who a memory speaks of, and to whom.

Memories are stored in one person: the third, "The user's cat is Nori" (用户的猫叫Nori),
as extraction writes them and "remember that …" turns the user's words
(`commands.about_user`). Every reader gets them in its own person:

- the user (the window's notice, the Memory page) reads them as "you": `to_the_user`
  ("Your cat is Nori"), and what they type there comes back through `as_stored`;
- the chat model reads them as it would say them to the user, "Your cat is Nori"
  (`to_the_user`, in the memory's note: `app.memory.recall`): a small model that reads
  "the user" in its context talks of "the user" to the user ("Oh, I see the user is
  asking again!");
- what a memory command just did is told in the user's own words, "I asked you to
  remember …" (`in_my_words`).

In a note about the user, "you" is the companion (`'The user asked you to remember:
…'`): the user reads it as "me". Words in quotes are the user's own and stay as said.
Notes stored in another person (edited by hand, imported, older versions) read right
too: `as_stored` takes a note in the second or first person back to the third.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from app.memory.commands import about_user, third_person
from app.memory.terms import has_cjk

__all__ = ["as_stored", "in_my_words", "mentions_user", "to_the_user"]

Swaps = tuple[tuple[re.Pattern[str], str], ...]


def _swaps(*pairs: tuple[str, str]) -> Swaps:
    return tuple(
        (re.compile(pattern, re.IGNORECASE), replacement) for pattern, replacement in pairs
    )


def _apply(text: str, swaps: Swaps) -> str:
    for pattern, replacement in swaps:
        text = pattern.sub(replacement, text)
    return text


_QUOTED = re.compile(r"(\"[^\"]*\"|“[^”]*”|「[^」]*」)")


def _outside_quotes(text: str, change: Callable[[str], str]) -> str:
    """`text` with `change` applied to what is not quoted (quotes are the user's words)."""
    parts = _QUOTED.split(text)
    return "".join(part if i % 2 else change(part) for i, part in enumerate(parts))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def mentions_user(text: str) -> bool:
    """Whether `text` speaks of the user in the third person (the stored person)."""
    lowered = text.lower()
    return "the user" in lowered or "user's" in lowered or "用户" in text


# Adverbs that may stand between "the user" and the verb ("the user just adopted").
_ADVERB = r"(?:(?:just|also|often|always|never|usually|sometimes|really|still|recently|" \
    r"currently|already|now|only|even|mostly|rarely|soon)\s+)?"
# Where a clause starts: "the user" there is its subject ("… and the user likes tea").
_CLAUSE = r"(?P<pre>^|[.!?:;,]\s+|\b(?:and|but|that|because|when|if|so|while|since)\s+)"
_USER_VERB = re.compile(
    _CLAUSE + r"[Tt]he user\s+(?P<adverb>" + _ADVERB + r")(?P<verb>[a-z]+)\b"
)
_NOT_VERBS = frozenset(
    {"and", "or", "who", "whose", "with", "from", "in", "at", "on", "of", "to", "for", "as",
     "is", "was", "has"}
)


def _base_verb(verb: str) -> str:
    if verb == "does":
        return "do"
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("shes", "ches", "xes", "sses", "oes", "zes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith(("ss", "us", "is")):
        return verb[:-1]
    return verb


def _verbs(text: str, subject: str) -> str:
    """ "the user likes" → `subject` + " like" (the verb in its base form)."""

    def swap(match: re.Match[str]) -> str:
        verb = match.group("verb")
        if verb in _NOT_VERBS:
            return match.group(0)
        return f"{match.group('pre')}{subject} {match.group('adverb')}{_base_verb(verb)}"

    return _USER_VERB.sub(swap, text)


# ----- to the user: "you" --------------------------------------------------------------

_COMPANION_TO_ME = _swaps(  # in a note, "you" is the companion: to the user, "me"
    (r"\bthe user and you\b", "\x07"),  # "you and I", once the rest is done
    (r"\byourself\b", "myself"),
    (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
    (r"\byou are\b|\byou're\b", "I am"),
    (r"^you\b|(?<=[.!?:;]\s)you\b", "I"),
    (r"\byou\b", "me"),
)
_USER_TO_YOU = _swaps(
    (r"\bthe user's and (?:my|your)\b", "our"),
    (r"\bthe user and (?:me|you)\b", "we"),
    (r"\bthe user's\b|\buser's\b", "your"),
    (r"\bthe user isn't\b", "you aren't"),
    (r"\bthe user is not\b", "you are not"),
    (r"\bthe user is\b", "you are"),
    (r"\bthe user wasn't\b", "you weren't"),
    (r"\bthe user was not\b", "you were not"),
    (r"\bthe user was\b", "you were"),
    (r"\bthe user hasn't\b", "you haven't"),
    (r"\bthe user has not\b", "you have not"),
    (r"\bthe user has\b", "you have"),
    (r"\bthe user doesn't\b", "you don't"),
    (r"\bthe user does not\b", "you do not"),
    (r"\babout the user\b", "about you"),
    (r"\bthemselves\b", "yourself"),
)


def to_the_user(note: str) -> str:
    """A stored note as said to the user ("The user's cat is Nori" → "your cat is
    Nori"), for the notice that something was remembered and the Memory page (which
    capitalises it). A note in another person is taken to the stored one first."""
    note = as_stored(note)
    if has_cjk(note):
        return _outside_quotes(note, lambda part: part.replace("你", "我").replace("用户", "你"))

    def change(part: str) -> str:
        part = _apply(part, _COMPANION_TO_ME)
        part = _apply(part, _USER_TO_YOU)
        part = _verbs(part, "you")
        return re.sub(r"\b[Tt]he user\b", "you", part).replace("\x07", "you and I")

    text = _outside_quotes(note, change)
    return text[:1].lower() + text[1:] if text[:4].lower() in ("your", "you ") else text


# ----- in the user's own words: "I", for the model ------------------------------------

_USER_TO_I = _swaps(
    (r"\bthe user's and your\b", "our"),
    (r"\bthe user and you are\b", "we are"),
    (r"^the user and you\b", "we"),
    (r"\bthe user and you\b", "us"),
    (r"\bthe user's\b|\buser's\b", "my"),
    (r"\bthe user isn't\b", "I'm not"),
    (r"\bthe user is not\b", "I am not"),
    (r"\bthe user is\b", "I am"),
    (r"\bthe user wasn't\b", "I wasn't"),
    (r"\bthe user was not\b", "I was not"),
    (r"\bthe user was\b", "I was"),
    (r"\bthe user hasn't\b", "I haven't"),
    (r"\bthe user has not\b", "I have not"),
    (r"\bthe user has\b", "I have"),
    (r"\bthe user doesn't\b", "I don't"),
    (r"\bthe user does not\b", "I do not"),
    (r"\babout the user\b", "about me"),
    (r"\bthemselves\b", "myself"),
)


def in_my_words(note: str) -> str:
    """A stored note in the user's own words ("The user's cat is Nori" → "My cat is
    Nori"): how the chat model reads it, so it answers the user as "you"."""
    note = as_stored(note)
    if has_cjk(note):
        return _outside_quotes(note, lambda part: part.replace("用户", "我"))

    def change(part: str) -> str:
        part = _apply(part, _USER_TO_I)
        part = _verbs(part, "I")
        part = re.sub(r"(^|[.!?:;]\s+)[Tt]he user\b", r"\1I", part)
        return re.sub(r"\b[Tt]he user\b", "me", part)

    said = _outside_quotes(note, change)
    return _capital(said) if said != note else note


# ----- back to the stored person --------------------------------------------------------

_SECOND = re.compile(r"\b(?:you|your|yours|yourself|you're|you've)\b", re.IGNORECASE)
_FIRST = re.compile(r"\b(?:I|my|me|mine|myself|I'm|I've|I'd|I'll)\b", re.IGNORECASE)
# Typed by the user, who reads notes as "you": "me" is the companion. Marked while
# "you" becomes "the user", then made the companion's "you" of a stored note.
_ME_MARKS = _swaps(
    (r"\bI am\b|\bI'm\b", "\x05"),
    (r"\bmyself\b", "\x04"),
    (r"\bmine\b", "\x03"),
    (r"\bmy\b", "\x02"),
    (r"\bme\b", "\x01"),
    (r"\bI\b", "\x06"),
)
_MARKED = {"\x05": "you are", "\x04": "yourself", "\x03": "yours", "\x02": "your", "\x01": "you",
           "\x06": "you"}
_YOU_TO_USER = _swaps(
    (r"\byour\b", "the user's"),
    (r"\byours\b", "the user's"),
    (r"\byourself\b", "themselves"),
    (r"\byou are not\b|\byou aren't\b|\byou're not\b", "the user is not"),
    (r"\byou are\b|\byou're\b", "the user is"),
    (r"\byou were not\b|\byou weren't\b", "the user was not"),
    (r"\byou were\b", "the user was"),
    (r"\byou have not\b|\byou haven't\b|\byou've not\b", "the user has not"),
    (r"\byou have\b|\byou've\b", "the user has"),
    (r"\byou do not\b|\byou don't\b", "the user doesn't"),
    (r"\byou did not\b|\byou didn't\b", "the user didn't"),
    (r"\byou will\b|\byou'll\b", "the user will"),
    (r"\byou would\b|\byou'd\b", "the user would"),
    (r"\byou can't\b|\byou cannot\b", "the user can't"),
)
_YOU_VERB = re.compile(
    _CLAUSE + r"you\s+(?P<adverb>" + _ADVERB + r")(?P<verb>[a-z]+)\b", re.IGNORECASE
)
_AS_IS = frozenset(  # modals and past tenses: the same after "the user"
    {"can", "could", "will", "would", "shall", "should", "must", "may", "might", "did",
     "went", "was", "had", "said", "got", "made", "saw", "came", "took", "knew", "bought",
     "ate", "ran", "met", "lost", "found", "left", "felt", "began", "broke", "wrote",
     "gave", "grew", "became", "moved", "used", "lived", "worked", "studied"}
)
_STAYS = _AS_IS | _NOT_VERBS  # after "the user" these stay as they are


def _you_to_user(part: str) -> str:
    part = _apply(part, _ME_MARKS)
    part = _apply(part, _YOU_TO_USER)
    part = _YOU_VERB.sub(
        lambda m: f"{m.group('pre')}the user {m.group('adverb')}"
        f"{third_person(m.group('verb').lower(), _STAYS)}",
        part,
    )
    part = re.sub(r"\byou\b", "the user", part, flags=re.IGNORECASE)
    for mark, words in _MARKED.items():
        part = part.replace(mark, words)
    return part


def as_stored(text: str) -> str:
    """`text` in the stored person (the third): as it is when it already speaks of
    "the user"; "Your cat is Nori" (how the user reads notes, and writes them on the
    Memory page) → "The user's cat is Nori"; "My cat is Nori" (the user's own words,
    when nothing in it says "you") → "The user's cat is Nori"."""
    text = " ".join(text.split())
    if not text or mentions_user(text):
        return text
    if has_cjk(text):
        if "你" in text or "您" in text:
            return _outside_quotes(
                text,
                lambda part: part.replace("您", "你").replace("我", "\0").replace("你", "用户")
                .replace("\0", "你"),
            )
        if "我" not in text:
            return text
        return _outside_quotes(text, lambda part: part.replace("我", "用户"))
    if _SECOND.search(_QUOTED.sub("", text)):
        return _capital(_outside_quotes(text, _you_to_user))
    if _FIRST.search(_QUOTED.sub("", text)):
        return about_user(text)
    return text
