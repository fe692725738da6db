"""The form a spoken reply takes, as a grammar a llama.cpp model is held to.

A companion's reply is one expression tag the avatar knows, then a few sentences, each
later one with a tag of its own where the feeling changes:
`[joy] Hello! Nice to meet you. [surprise] Oh, is that a cat?` A hosted model is told
so in the system prompt and mostly does it; a small embedded one forgets the tag,
writes two (`[neutral] [smirk]`), invents one (`[sadness]`), or runs on past its
sentences. With a GBNF grammar, llama.cpp only samples tokens that keep the reply
inside the form, so every reply starts with a known tag, has no other bracket (and
never two tags in a row), no line breaks, and ends at the end of a sentence
(`app.llm.wire.local_grammar` makes checking it cost about a millisecond a token).

A sentence is any run of characters other than brackets, line breaks and sentence
ends, closed by one or more of `.!?。！？…` (and a closing quote); a dot between two
digits (`3.5`) does not end it. At most `max_sentences` (0: any number).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ReplyForm", "reply_grammar", "sentences_in"]

_ENDS = ".!?。！？…"
# Not in a sentence: a bracket (no second tag), a line break, or an end.
_NOT = r"\[\]【】\n\r" + _ENDS


class ReplyForm(BaseModel):
    """An expression tag from `tags`, then 1 to `max_sentences` sentences (0: no
    limit). A model that cannot be held to it is told it in the prompt only."""

    model_config = ConfigDict(frozen=True)

    tags: tuple[str, ...] = Field(min_length=1)
    max_sentences: int = Field(3, ge=0, le=50)


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


@lru_cache(maxsize=16)
def _grammar(
    tags: tuple[str, ...], max_sentences: int, said: int = 0, begun: bool = False
) -> str:
    names = [t for t in dict.fromkeys(tags) if t.strip() and "]" not in t]
    if not names:
        raise ValueError("a reply form needs at least one expression tag")
    if max_sentences <= 0:
        sentences = "sentence (next)*"
    else:
        sentences = "sentence" + " (next" * (max_sentences - 1) + ")?" * (max_sentences - 1)
    root = sentences if begun else f'"[" tag "]" {sentences}'  # begun: with its face
    if said > 0:  # a reply begun by the app: what may follow its sentences
        more = max(max_sentences - said, 1)
        root = "next*" if max_sentences <= 0 else "(next" + " (next" * (more - 1) + ")?" * more
    lines = [
        f"root ::= {root}",
        "tag ::= " + " | ".join(_literal(n) for n in names),
        # A later sentence may change the face: a tag in front of it (never two).
        'next ::= (" "* "[" tag "]")? sentence',
        # Leading spaces, then at least one character that is not a space, then the rest.
        'sentence ::= " "* first piece* end',
        f"first ::= [^ \\t{_NOT}] | digitdot",
        f"piece ::= [^{_NOT}] | digitdot",
        'digitdot ::= [0-9] "." [0-9]',
        f'end ::= [{_ENDS}]+ ["\'”」』)]?',
    ]
    return "\n".join(lines) + "\n"


def reply_grammar(form: ReplyForm, said: int = 0, *, begun: bool = False) -> str:
    """The GBNF grammar of `form` (the tags as literals, escaped); with `said`, of the
    rest of a reply begun with that many sentences (none more, or up to the form's
    count, and at least one more allowed); `begun` with none, of the rest of a reply
    begun with its face alone ("[sadness]": its sentences, no tag first)."""
    return _grammar(tuple(form.tags), form.max_sentences, said, begun)


_SENTENCE_END = re.compile(r"(?<![0-9])[" + _ENDS + r"]+|(?<=[0-9])[" + _ENDS + r"]+(?![0-9])")


def sentences_in(text: str) -> int:
    """How many sentences `text` (a reply's start, tags and all) holds, by their ends."""
    return len(_SENTENCE_END.findall(re.sub(r"\[[^\]]*\]", " ", text)))
