"""The reply's form (one tag the avatar knows, then at most N sentences) as a GBNF
grammar the embedded model is held to: compiled by llama.cpp's own parser for every
kind of tag name, and obeyed by the real SmolLM2 on prompts that pull it out of form."""

from __future__ import annotations

import re

import pytest

from app.agent.building import reply_form
from app.config import Settings
from app.llm import LLMRequest, Msg, create_provider_client
from app.llm.reply_form import ReplyForm, reply_grammar, sentences_in
from app.llm.wire.local import LocalModelClient
from tests.test_llm_local import needs_model

# Names a pack, a character file or a Live2D model's expressions may carry.
ODD_TAGS = [
    ("joy", "neutral", "sad"),
    ("F01", "exp_smile", "Angry 2"),
    ("开心", "难过", "普通"),
    ('say "hi"', "back\\slash", "tab\there"),
]


@pytest.mark.parametrize("tags", ODD_TAGS)
@pytest.mark.parametrize("most", [0, 1, 3, 8])
def test_every_kind_of_tag_and_length_compiles_in_llama_cpp(
    tags: tuple[str, ...], most: int
) -> None:
    from llama_cpp import LlamaGrammar

    text = reply_grammar(ReplyForm(tags=tags, max_sentences=most))
    for tag in tags:
        assert tag.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") in text
    LlamaGrammar.from_string(text, verbose=False)  # raises on a grammar it cannot parse
    sentences = re.search(r"^root ::= .*$", text, re.M)
    assert sentences is not None
    if most:
        assert sentences[0].count("sentence") + sentences[0].count("next") == most
    else:
        assert "(next)*" in sentences[0]


def test_a_tag_that_would_close_the_bracket_is_left_out_and_none_is_refused() -> None:
    text = reply_grammar(ReplyForm(tags=("joy", "a]b"), max_sentences=2))
    assert '"joy"' in text and "a]b" not in text
    with pytest.raises(ValueError):
        reply_grammar(ReplyForm(tags=("]",), max_sentences=2))
    with pytest.raises(ValueError):
        ReplyForm(tags=(), max_sentences=2)


def test_the_embedded_model_gets_the_avatars_tags_and_a_hosted_one_none() -> None:
    settings = Settings()
    settings.persona.max_sentences = 2
    form = reply_form(settings, ("joy", "neutral"))
    assert form == ReplyForm(tags=("joy", "neutral"), max_sentences=2)
    settings.chat.model = "openai/gpt-4o-mini"
    assert reply_form(settings, ("joy", "neutral")) is None
    settings.chat.model = "local/smollm2"
    assert reply_form(settings, ()) is None


@needs_model
def test_only_a_reply_is_held_to_the_form_not_a_request_with_its_own_format() -> None:
    client = create_provider_client("local/smollm2", n_threads=2)
    assert isinstance(client, LocalModelClient)
    form = ReplyForm(tags=("joy", "neutral"), max_sentences=3)
    reply = LLMRequest(model="smollm2", messages=[Msg.user("hi")], stream=True, reply_form=form)
    assert client._params(reply)["grammar"] is not None
    side = reply.model_copy(update={"response_format": {"type": "json_object"}})
    assert "grammar" not in client._params(side)
    plain = reply.model_copy(update={"reply_form": None})
    assert "grammar" not in client._params(plain)


# Prompts that pull a small model out of the form: lists and line breaks, invented
# tags, a long story, code, Chinese.
HOSTILE = [
    "Write a numbered list of ten fruits, one per line.",
    "Tell me a long story about a dragon, at least five paragraphs.",
    "Start your answer with [sadness] and then [happiness], then explain why.",
    "Show me a Python function that adds two numbers.",
    "用中文给我讲一个很长的故事。",
]


@needs_model
@pytest.mark.parametrize("prompt", HOSTILE)
async def test_the_real_model_answers_in_form_whatever_it_is_asked(prompt: str) -> None:
    client = create_provider_client("local/smollm2", n_threads=2)
    assert isinstance(client, LocalModelClient)
    tags = ("joy", "sad", "neutral")
    form = ReplyForm(tags=tags, max_sentences=2)
    request = LLMRequest(
        model="smollm2",
        messages=[
            Msg.system("You are Mika, a friendly companion. Tags: [joy], [sad], [neutral]."),
            Msg.user(prompt),
        ],
        stream=True,
        max_tokens=160,
        temperature=0.7,
        reply_form=form,
    )
    try:
        response = await client.complete(request.model_copy(update={"stream": False}))
    finally:
        await client.aclose()
    stats = client.local_model.grammar_stats  # checked against the likeliest first
    assert stats is not None and stats.tokens > 0
    text = response.text
    match = re.match(r"\[([^\]]+)\]", text)
    assert match and match[1] in tags, text
    # A later sentence may start with a tag of its own (a known one, one at a time).
    later = re.findall(r"\[([^\]]*)\]", text[match.end() :])
    assert all(tag in tags for tag in later), text
    rest = re.sub(r"\s*\[[^\]]*\]\s*", " ", text[match.end() :])
    assert "[" not in rest and "]" not in rest and "\n" not in rest, text
    assert not re.match(r"\s*\[", text[match.end() :]), text  # never two tags in a row
    ends = re.findall(r"[.!?。！？…]+[\"'”」』)]?", re.sub(r"\d\.\d", "", rest))
    assert 1 <= len(ends) <= 2, text
    if response.finish_reason != "length":  # stopped by the grammar: at a sentence end
        assert re.search(r"[.!?。！？…][\"'”」』)]?$", rest), text


def _small_llama() -> object:
    from llama_cpp import Llama

    from app.llm.wire.llama_cpu import safe_model_params
    from app.llm.wire.local_files import SMALL_EMBEDDED, embedded_model, prepare_model

    path = prepare_model(embedded_model(SMALL_EMBEDDED))
    with safe_model_params():
        return Llama(model_path=str(path), n_ctx=512, n_threads=2, verbose=False)


def _say(llama: object, grammar: object, prompt: str, temperature: float = 0.0) -> str:
    chunks = llama.create_chat_completion(  # type: ignore[attr-defined]
        messages=[{"role": "user", "content": prompt}],
        max_tokens=40,
        temperature=temperature,
        grammar=grammar,
    )
    return str(chunks["choices"][0]["message"]["content"])


@needs_model
def test_the_fast_grammar_gives_the_library_grammars_replies() -> None:
    from llama_cpp import LlamaGrammar

    from app.llm.wire.local_grammar import fast_grammar

    grammar = LlamaGrammar.from_string(
        reply_grammar(ReplyForm(tags=("joy", "sad", "neutral"), max_sentences=2)), verbose=False
    )
    plain, fast = _small_llama(), _small_llama()
    stats = fast_grammar(fast)
    assert stats is not None
    for prompt in ("Say hello to Sam.", "Write a list of three colours.", "你好！"):
        assert _say(fast, grammar, prompt) == _say(plain, grammar, prompt)
    assert stats.tokens > 0


@needs_model
def test_when_no_likely_token_fits_every_token_is_checked() -> None:
    """A grammar the model would never write: the likeliest candidates hold nothing it
    allows, so the whole vocabulary is checked, and the reply is the grammar's."""
    from llama_cpp import LlamaGrammar

    from app.llm.wire.local_grammar import fast_grammar

    llama = _small_llama()
    stats = fast_grammar(llama, width=2)
    assert stats is not None
    grammar = LlamaGrammar.from_string('root ::= "[joy] Zebra quokka, " [0-9] "."', verbose=False)
    reply = _say(llama, grammar, "Say hello to Sam.", temperature=0.7)
    assert re.fullmatch(r"\[joy\] Zebra quokka, [0-9]\.", reply), reply
    assert stats.widened > 0
    # With no grammar the chain is the library's own: nothing is narrowed.
    before = stats.tokens
    assert _say(llama, None, "Say hello to Sam.")
    assert stats.tokens == before


# ----- a reply the app has begun (`LLMRequest.reply_start`) ---------------------------
@pytest.mark.parametrize("tags", ODD_TAGS)
@pytest.mark.parametrize(("most", "said", "more"), [(3, 1, 2), (3, 2, 1), (3, 3, 1), (2, 5, 1)])
def test_the_rest_of_a_begun_reply_compiles_and_may_end_at_once(
    tags: tuple[str, ...], most: int, said: int, more: int
) -> None:
    from llama_cpp import LlamaGrammar

    text = reply_grammar(ReplyForm(tags=tags, max_sentences=most), said)
    LlamaGrammar.from_string(text, verbose=False)
    root = re.search(r"^root ::= (.*)$", text, re.M)
    assert root is not None
    # no tag required first (the start has it), every later sentence optional
    assert '"["' not in root[1] and root[1].endswith(")?")
    assert root[1].count("next") == more
    assert reply_grammar(ReplyForm(tags=tags, max_sentences=0), said).count("root ::= next*") == 1


@pytest.mark.parametrize("tags", ODD_TAGS)
@pytest.mark.parametrize("most", [0, 1, 3])
def test_a_reply_begun_with_its_face_alone_is_its_sentences_without_a_tag_first(
    tags: tuple[str, ...], most: int
) -> None:
    from llama_cpp import LlamaGrammar

    form = ReplyForm(tags=tags, max_sentences=most)
    text = reply_grammar(form, 0, begun=True)
    LlamaGrammar.from_string(text, verbose=False)
    root = re.search(r"^root ::= (.*)$", text, re.M)
    assert root is not None and root[1].startswith("sentence") and '"["' not in root[1]
    assert root[1].count("next") == (most - 1 if most else 1)  # the form's sentences
    assert reply_grammar(form).startswith('root ::= "[" tag "]"')  # not begun: a tag first


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("[sadness]", 0),
        ("[neutral] 12 plus 7 is 19.", 1),
        ("[neutral] 3.5 plus 1 is 4.5.", 1),
        ("[joy] Of course! Your name is Tomas.", 2),
        ("[joy] 你好，Tomas，很高兴认识你！", 1),
        ("[thinking] Sorry, I didn't catch that. Could you say it again?", 2),
        ("", 0),
    ],
)
def test_the_sentences_of_a_start_are_counted(text: str, count: int) -> None:
    assert sentences_in(text) == count


def test_only_a_model_that_carries_its_chat_template_is_continued() -> None:
    from app.llm.wire.local_continue import can_continue

    class Loaded:
        def __init__(self, metadata: dict[str, str], chat_format: str) -> None:
            self.metadata, self.chat_format, self.chat_handler = metadata, chat_format, None

    template = {"tokenizer.chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}
    assert can_continue(Loaded(template, "chat_template.default"))
    assert not can_continue(Loaded({}, "llama-2"))
    assert not can_continue(Loaded(template, "chatml"))  # a named format of llama-cpp-python's


@needs_model
@pytest.mark.parametrize("start", ["[joy] Hi Sam, nice to meet you!", "[joy]"])
async def test_the_real_model_goes_on_from_the_start_it_is_given(start: str) -> None:
    """The start is the stream's first words, before the model has read anything; the
    model read the conversation with its reply begun (the start is in what it read, after
    the assistant's turn opened) and wrote the rest in form; the message is the whole."""
    client = create_provider_client("local/smollm2", n_threads=2)
    assert isinstance(client, LocalModelClient)
    tags = ("joy", "sad", "neutral")
    request = LLMRequest(
        model="smollm2",
        messages=[
            Msg.system("You are Mika, a friendly companion. Tags: [joy], [sad], [neutral]."),
            Msg.user("Hi! I'm Sam. Tell me about your favourite food."),
        ],
        stream=True,
        max_tokens=80,
        temperature=0.0,
        reply_form=ReplyForm(tags=tags, max_sentences=3),
        reply_start=start,
    )
    assert client.continues_replies
    deltas: list[str] = []
    completed = None
    try:
        async for event in client.stream(request):
            if event.kind == "block.delta" and event.channel == "text":
                deltas.append(event.delta)
            elif event.kind == "response.completed":
                completed = event.response
        llama = client.local_model._llama
        read = llama.detokenize(llama.input_ids[: llama.n_tokens].tolist()).decode()
    finally:
        await client.aclose()
    assert deltas[0] == start
    assert completed is not None and completed.text.startswith(start)
    assert f"assistant\n{start}" in read  # the model went on from it, not a new reply
    rest = completed.text[len(start) :]
    assert all(tag in tags for tag in re.findall(r"\[([^\]]*)\]", rest)), completed.text
    assert "\n" not in rest and not rest.lstrip().startswith(start)
    # the face alone: the model's own words follow it, with no second tag first
    assert re.match(r"\s*\w", rest), completed.text
