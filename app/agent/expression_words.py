"""Expression tags a model invents, mapped to the ones the avatar has.

Small models write `[happiness]`, `[laugh]`, `[sorrow]`, `[thanks]` or `[开心]` instead
of the pack's `[joy]` or `[sadness]`. Each word here belongs to one family of feelings;
a tag resolves to the pack's own member of its family, or to nothing (the tag is then
dropped: never shown, never spoken).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FAMILIES", "is_feeling", "resolve_expression", "resolve_inside"]

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Family name -> the words (English and Chinese) that mean it. A pack's expression names
# are usually among them ("happy", "sad", "angry"), so a pack that calls joy "happy"
# still gets `[joy]`.
FAMILIES: Mapping[str, frozenset[str]] = {
    "neutral": _words(
        "neutral calm normal default idle relaxed serious plain okay ok "
        "平静 中性 普通 冷静 正常 淡定"
    ),
    "joy": _words(
        "joy joyful happy happiness glad cheerful cheer delighted delight excited excitement "
        "laugh laughs laughing laughter giggle giggles giggling grin grins grinning smile "
        "smiles smiling fun amused love loving warm thanks thank thankful grateful "
        "gratitude proud pride content hopeful yay hooray "
        "开心 高兴 快乐 喜悦 愉快 欢乐 兴奋 笑 大笑 微笑 笑容 哈哈 感谢 谢谢 感激 喜欢 幸福 "
        "欣喜 骄傲 满足 期待"
    ),
    "sadness": _words(
        "sad sadness sorrow sorrowful unhappy upset cry cries crying tears teary tearful "
        "grief grieving lonely gloomy down blue hurt disappointed disappointment "
        "sympathy sympathetic sorry regret melancholy heartbroken depressed "
        "难过 伤心 悲伤 哭 哭泣 流泪 失望 遗憾 孤独 沮丧 心疼 同情 抱歉 委屈"
    ),
    "anger": _words(
        "anger angry mad annoyed annoyance furious fury rage irritated irritation "
        "frustrated frustration grumpy huff pout pouting "
        "生气 愤怒 恼火 气愤 不满 烦 烦躁 哼"
    ),
    "surprise": _words(
        "surprise surprised shock shocked amazed amazement astonished astonishment wow "
        "gasp gasps whoa omg stunned impressed awe "
        "惊讶 吃惊 震惊 惊喜 意外 哇 天哪"
    ),
    "fear": _words(
        "fear afraid scared frightened fright nervous anxious anxiety worried worry "
        "panic panicked terrified shy embarrassed "
        "害怕 恐惧 紧张 担心 担忧 焦虑 惊慌 害羞 不安"
    ),
    "smirk": _words(
        "smirk smirks smirking smug sly playful teasing tease wink winks winking "
        "mischievous cheeky sarcastic confident "
        "得意 坏笑 调皮 俏皮 眨眼 狡黠 自信"
    ),
    "thinking": _words(
        "thinking think thinks thoughtful pondering ponder wondering wonder curious "
        "curiosity hmm confused confusion puzzled unsure considering focused "
        "思考 想想 想 沉思 好奇 疑惑 困惑 琢磨"
    ),
}

_FAMILY_OF: Mapping[str, str] = {
    word: family for family, words in FAMILIES.items() for word in words
}


def is_feeling(words: str) -> bool:
    """Whether any of `words` (a tag's text) is a word of feeling of some family."""
    for word in words.lower().replace("-", " ").split():
        if word in _FAMILY_OF or (word.endswith("s") and word[:-1] in _FAMILY_OF):
            return True
    return False


def resolve_expression(word: str, known: Mapping[str, str]) -> str | None:
    """The pack's expression for the tag `word`: itself when the pack has it (any case),
    else the pack's member of the word's family, else None.

    `known` maps each of the pack's names, lower-cased, to the name as the pack spells it.
    """
    key = word.strip().lower()
    if key in known:
        return known[key]
    family = _FAMILY_OF.get(key)
    if family is None and key.endswith("s") and len(key) > 3:
        family = _FAMILY_OF.get(key[:-1])  # "smiles" -> "smile"
    if family is None:
        return None
    if family in known:
        return known[family]
    for name, spelled in known.items():
        if _FAMILY_OF.get(name) == family:
            return spelled
    return None


def resolve_inside(text: str, known: Mapping[str, str]) -> str | None:
    """For a tag written without spaces (Chinese: `[很开心]`): the expression of the
    longest feeling word inside it, or None."""
    for word in sorted((w for w in _FAMILY_OF if not w.isascii() and w in text), key=len)[::-1]:
        found = resolve_expression(word, known)
        if found is not None:
            return found
    return None
