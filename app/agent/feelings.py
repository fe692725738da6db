"""The feeling in the user's words, and the face the companion answers it with.

A 1.5B model picks its expression tag from the words it is about to say, not from how
the one it talks with feels: "I'm a bit nervous about my job interview" was answered
with `[anger]` ("don't worry about it!") and a time answer with `[surprise]`. So when
the words say plainly how the user feels, the note after them (`app.agent.clock`)
says which face to answer with: worry, fear, sadness, anger, tiredness -> a caring
`[sadness]` (the avatar's concerned face); joy, love, excitement -> `[joy]`. Words
that say no feeling add nothing, and a feeling said with "not" before it ("I'm not
worried") counts as none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Feeling", "feeling_in", "feeling_line"]

# The companion's face for each feeling of the user's: a caring face for a worried or
# sad user (never the same fear or anger back), a happy one for a happy user.
_CARING = "sadness"
_HAPPY = "joy"

_WORRIED_EN = (
    "worried worry worrying worries nervous anxious anxiety scared afraid frightened "
    "terrified stressed stress stressful panicking panic dreading dread tense "
    "sad unhappy upset lonely depressed miserable heartbroken crying cried hurt hurts "
    "tired exhausted overwhelmed sick ill awful terrible horrible angry annoyed "
    "frustrated furious disappointed lost grieving afraid"
)
_HAPPY_EN = (
    "happy glad excited thrilled delighted love loved loving enjoy enjoyed "
    "great wonderful awesome amazing fantastic yay proud grateful cheerful"
)
_WORRIED_ZH = (
    "担心 紧张 害怕 焦虑 压力 难过 伤心 孤独 失望 沮丧 生气 烦 累 不舒服 哭 心情不好 不开心"
)
_HAPPY_ZH = "开心 高兴 喜欢 兴奋 太好了 爱 快乐 幸福"

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEGATION = frozenset(
    ["not", "no", "never", "dont", "don't", "isnt", "isn't", "aint", "ain't", "wasnt",
     "wasn't", "without"]
)  # fmt: skip
# "calm down", "no worries", "love to know": words of feeling that say none here.
# Asking to be calmed or cheered says a worry too (said to the model as "stressed").
_WORRIED_PHRASES = re.compile(
    r"\b(?:calm (?:me )?down|cheer me up|feel better|can't sleep|cannot sleep)\b"
)
_NOT_A_FEELING = re.compile(
    r"\b(?:no worries|not to worry|would love to|i'd love to|love to know|great job)\b"
)


@dataclass(frozen=True, slots=True)
class Feeling:
    """How the user says they feel (`word`, as they said it) and the face to answer it
    with (`face`: a tag name the expression words resolve for any pack)."""

    word: str
    face: str

    @property
    def happy(self) -> bool:
        return self.face == _HAPPY


def feeling_in(text: str) -> Feeling | None:
    """The feeling `text` says plainly, or None. A worry or sadness outweighs joy in the
    same words ("I was excited but now I'm scared": a caring face)."""
    low = text.lower().replace("’", "'")
    low = _NOT_A_FEELING.sub(" ", low)
    worried = set(_WORRIED_EN.split())
    happy = set(_HAPPY_EN.split())
    words = _WORD.findall(low)
    phrase = _WORRIED_PHRASES.search(low)
    if phrase is not None:
        return Feeling("stressed", _CARING)
    found: Feeling | None = None
    for i, word in enumerate(words):
        if _NEGATION.intersection(words[max(0, i - 3) : i]):
            continue
        if word in worried:
            return Feeling(word, _CARING)
        if word in happy and found is None:
            found = Feeling(word, _HAPPY)
    for word in _WORRIED_ZH.split():
        at = text.find(word)
        if at >= 0 and (word.startswith("不") or not re.search(r"[不没别]$", text[:at])):
            return Feeling(word, _CARING)
    if found is None:
        for word in _HAPPY_ZH.split():
            at = text.find(word)
            if at >= 0 and not re.search(r"[不没]$", text[:at]):
                return Feeling(word, _HAPPY)
    return found


def feeling_line(feeling: Feeling, *, chinese: bool = False) -> str:
    """The note's line that says which face answers `feeling`."""
    if chinese:
        if feeling.face == _CARING:
            return f"（我的心情：{feeling.word}。回答以[{_CARING}]开头，温柔地关心我。）"
        return f"（我为这件事高兴。回答以[{_HAPPY}]开头，回应我说的话。）"
    if feeling.face == _CARING:
        return f"(How I feel: {feeling.word}. Start your reply with [{_CARING}] and answer kindly.)"
    # Not "How I feel: love": given that, the model said "I love rainy days ..." back as
    # its own words.
    return f"(I am happy about this. Start your reply with [{_HAPPY}] and answer me about it.)"


# What is said at once to a feeling, before the model's words (`feeling_start`): a few
# ways, taken in turn so that two worried messages in a row are not answered alike. A
# question ("Can you help me calm down?") is answered as a request for help.
_CARING_SAYS = ("I'm sorry to hear that.", "Oh no, that sounds hard.", "That sounds really tough.")
_CARING_ASKED = "I'm here for you."
_HAPPY_SAYS = ("That's wonderful!", "Oh, how lovely!", "That's great to hear!")
_CARING_SAYS_ZH = ("听起来真不容易。", "抱抱你。", "我明白你的感受。")
_CARING_ASKED_ZH = "我在这儿陪着你。"
_HAPPY_SAYS_ZH = ("太好了！", "真为你高兴！", "听起来真棒！")


# The user speaks of themselves: "I", "my", "me" ... (a feeling word about "you" or a
# story, "Are you sad?", "Tell me a sad story", is no feeling of theirs to answer).
_FIRST_PERSON = re.compile(r"\b(?:i|im|i'm|i've|i'd|i'll|me|my|myself|we|we're|our|us)\b")


def feeling_start(feeling: Feeling, text: str, turn: int, *, chinese: bool = False) -> str:
    """How the answer to `text`, which says `feeling`, begins: its face and a few words
    that acknowledge it ("[sadness] I'm sorry to hear that."), the `turn`-th of a few
    ways; "" when the words do not say the user feels it (a question about "you", a
    question with a happy word: "What makes you happy?"). Said at once while the model
    reads the words; the 1.5B model's own first sentence ("[sadness] I'm sorry to hear
    that you're feeling nervous about your job interview tomorrow.") took 1.9 s to
    decode on 2 cores."""
    low = text.lower().replace("’", "'")
    asked = text.rstrip().endswith(("?", "？"))
    plea = _WORRIED_PHRASES.search(low) is not None  # "help me calm down", "cheer me up"
    about_them = "我" in text if chinese else _FIRST_PERSON.search(low) is not None
    if not about_them or (asked and not plea):
        return ""
    if feeling.face == _CARING:
        if asked:
            said = _CARING_ASKED_ZH if chinese else _CARING_ASKED
        else:
            ways = _CARING_SAYS_ZH if chinese else _CARING_SAYS
            said = ways[turn % len(ways)]
    else:
        ways = _HAPPY_SAYS_ZH if chinese else _HAPPY_SAYS
        said = ways[turn % len(ways)]
    return f"[{feeling.face}] {said}"
