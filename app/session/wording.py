"""What the words of a transcript say about the turn: whether a sentence sounds
finished, whether an utterance is only a backchannel ("mm-hm", "yeah"), and whether
two transcripts are the same words.

The turn model hears prosody; the words add what prosody misses ("I want to tell you
about" is not over, however it ends). English and Chinese have word rules, chosen by
the text's script (Chinese characters: the Chinese rules, whatever language is set);
other languages get no verdict from the words. Cutting someone off is worse than
waiting a little, so a doubtful ending counts as unfinished.

Chinese is written without spaces, so its "words" here are its characters: two
transcripts are the same words when they have the same characters, and the
companion's own words heard back are compared character by character.
"""

from __future__ import annotations

import re

from app.own_words import HAN, HAN_CHAR, KANA_OR_HANGUL, words


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _phrases(text: str) -> tuple[str, ...]:
    return tuple(text.split())


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
_OPEN_ENDINGS = ("...", "…", ",", ":", ";", "-", "—", "–", "，", "、", "：", "；")
_CLOSED_ENDINGS = (".", "?", "!", "。", "？", "！")
_BACKCHANNELS = _word_set(
    "mm mmm mhm mm-hm mm-hmm hm hmm uh-huh uh huh um yeah yea yes yep yup ok okay "
    "right sure oh ah aha wow cool nice alright"
)
_ZH_BACKCHANNELS = _word_set(
    "嗯 嗯嗯 嗯哼 哦 噢 哦哦 啊 呃 对 对对 对对对 对的 是 是的 是啊 好 好的 好啊 行 "
    "没错 明白 明白了 知道了 懂了 原来如此 哈哈 真的吗 这样啊"
)
_FILLERS = _word_set("uh um er erm mm mmm hm hmm mhm ah oh")
_BACKCHANNEL_PHRASES = frozenset({"i see", "got it", "all right", "of course", "go on"})


def same_words(a: str, b: str) -> bool:
    """Whether two transcripts say the same words (case and punctuation aside)."""
    return words(a) == words(b)


def is_chinese(text: str) -> bool:
    """Whether `text` is written in Chinese: Chinese characters, and no Japanese kana or
    Korean hangul (a Japanese sentence has kanji too)."""
    return bool(HAN_CHAR.search(text)) and not KANA_OR_HANGUL.search(text)


def sounds_finished(text: str, language: str | None) -> bool | None:
    """Whether the sentence `text` sounds finished: False when it is plainly going on
    (it ends in "..." or a comma, or on a word such as "the", "and", "about"; in Chinese
    和, 但是, 因为, ...), True when nothing says so, None when the words cannot tell (no
    words, or neither English nor Chinese). Chinese text gets the Chinese rules whatever
    `language` says; other text the English rules when `language` is English or not set
    ("auto" included)."""
    spoken = words(text)
    if not spoken:
        return None
    if is_chinese(text):
        return _chinese_sounds_finished(text)
    code = re.split(r"[-_]", (language or "en").lower())[0]
    if code not in ("en", "", "auto") or KANA_OR_HANGUL.search(text):
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



# A Chinese question's closing particle, written with or without a question mark (not
# 么 or 呢: "我想喝点什么。", "我在想呢" are statements).
_ZH_ASKING = ("吗",)


# Words a speaker opens with and goes on after ("Hi! My name is Tomas ...", "So, ...").
_OPENERS = _word_set(
    "hi hello hey hiya heya yo there okay ok so well right alright now listen look "
    "good morning afternoon evening"
)
_ZH_OPENERS = ("你好", "您好", "嗨", "喂", "哈喽", "那个", "嗯", "好", "早上好", "晚上好")
# ... and questions that only ask to go on ("You know what?").
_OPENING_QUESTIONS = frozenset(
    ["you know what", "know what", "guess what", "can i ask you something",
     "can i ask you a question", "may i ask you something", "can i tell you something",
     "you know", "listen"]
)  # fmt: skip


def sounds_like_an_opener(text: str) -> bool:
    """Whether `text` is only what a speaker opens with ("Hi.", "Hello there!", "Okay.",
    "You know what?", "你好！"): a turn that may well go on after a pause, whatever its
    prosody says. The turn model heard espeak-ng's "Hi! [pause] My name is Tomas ..."
    end at "Hi." (0.36 s after it), and the reply to "Hi." was spoken over the rest."""
    if is_chinese(text):
        body = re.sub(r"\W+", "", text)  # its marks out; any other words kept
        return bool(body) and body in _ZH_OPENERS
    spoken = words(text)
    meant = [word for word in spoken if word not in _FILLERS]
    if " ".join(meant) in _OPENING_QUESTIONS:
        return True
    return bool(spoken) and len(spoken) <= 3 and all(w in _OPENERS for w in meant)


def sounds_asked(text: str, language: str | None) -> bool:
    """Whether `text` ends on a finished question: it sounds finished
    (`sounds_finished`) and its last sentence is closed by a question mark ("What is
    twelve plus seven?", "现在几点？"), or, in Chinese, by a question particle ("你好吗"),
    or, in English, has the order of a question and no mark that says otherwise ("Do you
    remember my name", "What was my kitten's name again."): the recognizer's marks come
    and go (tiny.en wrote "Do you remember my name" for one recording and "...name?" for
    the next). A question asked is a turn handed over: the recognizer's question mark
    after words that go on ("Can you help me with?") counts for nothing."""
    if sounds_finished(text, language) is not True:
        return False
    stripped = text.rstrip().rstrip(_ZH_CLOSING_QUOTES)
    if stripped.endswith(("?", "？")):
        return True
    if is_chinese(text):
        return stripped.rstrip("。.!！").endswith(_ZH_ASKING)
    return not stripped.endswith("!") and _has_question_order(_last_sentence(stripped))


# The start of an English question: an auxiliary before its subject ("Do you ...", "Is
# it ...", "Can I ..."), or a wh-word and an auxiliary ("What was ...", "How much is
# ...", "What time is it ..."). "What I want is a nap." and "How I wish ..." are not.
_AUXILIARIES = _word_set(
    "do does did can could will would should shall may might must is are was were am "
    "have has had dont doesnt didnt cant couldnt wont wouldnt isnt arent wasnt werent "
    "havent hasnt hadnt shouldnt"
)
_SUBJECTS = _word_set(
    "you i we they he she it there this that these those my your our their his her its "
    "the a an anyone anybody someone somebody everyone"
)
_PRONOUNS = _word_set("you i we they he she it")
_WH_WITH_NOUN = _word_set("what which whose how")
_COPULAS = _word_set("is was")
# Last words after which a question goes on ("Do you think", "Do you remember"), and
# words that lead into more ("Did you know that my cat", "Is it true that my sister").
_TAKES_MORE = _word_set(
    "think know remember mind want need see hear imagine tell believe wonder guess "
    "suppose mean say ask hope wish expect realize realise notice feel agree show give "
    "remind"
)
_LEADS_ON = _word_set("that if whether because so when while")
_WH = _word_set("what who whom whose where when why how which")
_WH_AUXILIARIES = _AUXILIARIES | _word_set("whats wheres whos hows")


def _has_question_order(sentence: str) -> bool:
    said = [w.replace("'", "").replace("’", "") for w in words(sentence)]
    if len(said) < 3:
        return False
    # a question that may well go on after a pause: "Do you think ‖ I should quit?",
    # "Did you know that my cat ‖ ...", "Do you remember ‖ the trip ..."
    if (
        _TAKES_MORE.intersection(said[-2:])  # "Do you think", "Could you tell me."
        or _LEADS_ON.intersection(said[-3:])
        or "to" in said[-2:]  # "Can you remind me to call"
    ):
        return False
    if said[0] in _AUXILIARIES:
        return said[1] in _SUBJECTS
    if said[0] in _WH_AUXILIARIES - _AUXILIARIES:
        first = 1
    elif said[0] in _WH and said[1] in _AUXILIARIES:
        first = 2
    elif (
        # one word of what is asked for ("How much is", "Which one is", "What time is");
        # a verb there is a statement's ("What happened is my car broke down")
        said[0] in _WH_WITH_NOUN
        and said[1] not in _PRONOUNS
        and not said[1].endswith(("ed", "s"))
        and said[2] in _AUXILIARIES
    ):
        first = 3
    else:
        return False
    # a second "is" makes a statement of a wh-clause ("What's funny is ...")
    return not _COPULAS.intersection(said[first:])


# Chinese. Words after which a sentence goes on, whatever mark the recognizer put after
# them: conjunctions ("我喜欢猫和"), "如果…的话", fillers ("然后那个"), prepositions.
_ZH_GOES_ON = _phrases(
    "和 跟 与 及 以及 但 但是 可是 不过 而 而且 并且 因为 所以 然后 如果 要是 假如 "
    "虽然 尽管 还有 就是 那个 或者 或 还是 比如 比如说 的话 那么 于是 为了 除了 "
    "把 被 关于 对于"
)
# Words a finished sentence seldom ends on: going on when the recognizer did not close
# the sentence either ("我最喜欢的是", "我想"); a closing mark after them is an answer
# ("是。", "对。").
_ZH_SELDOM_LAST = _phrases(
    "是 在 对 从 向 往 比 给 让 很 最 太 非常 有点 想 要 我想 我要 还 也 都 又 再 就 "
    "这个 这些 那些 一些 一个 怎么"
)
# Particles that close a sentence: a statement (的, 了), a question (吗, 呢), a suggestion (吧).
_ZH_FINISHED = _phrases("的 了 吗 吧 呢 啊 呀 哦 嘛 啦 哈 嗯 哇")
_ZH_CLOSED = ("。", "？", "！", ".", "?", "!")
_ZH_CLOSING_QUOTES = "”’」』）)\"' "


def _chinese_sounds_finished(text: str) -> bool:
    """The Chinese rules: an open mark (，、…：) or a word that leads on (和, 但是, 因为,
    所以, 然后, 如果, ...) goes on; a closing mark (。？！) or particle (的, 了, 吗, 吧,
    呢, 啊) is finished; a word a sentence seldom ends on (是, 在, 很, 我想) goes on
    unless a closing mark follows it; anything else is finished."""
    stripped = text.rstrip().rstrip(_ZH_CLOSING_QUOTES)
    if stripped.endswith(_OPEN_ENDINGS):
        return False
    body = stripped.rstrip("".join(_ZH_CLOSED) + _ZH_CLOSING_QUOTES)
    if body.endswith(_ZH_GOES_ON):
        return False
    if body.endswith(_ZH_FINISHED) or stripped.endswith(_ZH_CLOSED):
        return True
    seldom = next((w for w in _ZH_SELDOM_LAST if body.endswith(w)), None)
    return seldom is None or len(body) == len(seldom)


def _last_sentence(text: str) -> str:
    """The last sentence of `text` (the one a turn ends on)."""
    body = text.rstrip("".join(_CLOSED_ENDINGS) + " ")
    cut = max(body.rfind(mark) for mark in _CLOSED_ENDINGS)
    return body[cut + 1 :]


def is_backchannel(text: str) -> bool:
    """Whether `text` is only a listener's acknowledgement ("mm-hm", "yeah, okay", "I
    see", "嗯，好的"): said over the companion, it is not a request to stop and answer."""
    if is_chinese(text):
        phrases = [p for p in re.split(rf"[^{HAN}]+", text) if p]
        return bool(phrases) and all(p in _ZH_BACKCHANNELS for p in phrases)
    spoken = words(text)
    if not spoken or len(spoken) > 4:
        return False
    meant = [word for word in spoken if word not in _FILLERS]
    return " ".join(meant) in _BACKCHANNEL_PHRASES or all(w in _BACKCHANNELS for w in meant)
