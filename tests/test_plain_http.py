"""A key is never sent readable across the network: over plain http:// only to a server
on this computer, unless the user allows it. A unit test on the address, and end to end
on loopback only (never an outside address): a real client against a scripted server,
where "outside" is the same server reached through a name the guard cannot tell is
loopback — nothing is sent at all."""

from __future__ import annotations

import pytest

from app.config import Settings
from app.llm import InvalidRequestError, LLMRequest, Msg, create_provider_client
from app.llm.plain_http import check_key_transport, is_loopback_host
from tests.llm_servers import Reply, ScriptedChatServer

FAKE_KEY = "sk-" + "test-FAKEKEYFORTHISTEST"  # made up, split so no scanner takes it


@pytest.mark.parametrize(
    ("url", "key", "allowed", "refused"),
    [
        ("http://192.168.1.20:1234/v1/chat/completions", True, False, True),
        ("http://models.example.com/v1/chat/completions", True, False, True),
        ("http://192.168.1.20:1234/v1/chat/completions", True, True, False),  # allowed
        ("http://192.168.1.20:1234/v1/chat/completions", False, False, False),  # no key
        ("https://models.example.com/v1/chat/completions", True, False, False),
        ("http://127.0.0.1:8080/v1/chat/completions", True, False, False),
        ("http://localhost:11434/v1/chat/completions", True, False, False),
        ("http://[::1]:8080/v1/chat/completions", True, False, False),
    ],
)
def test_a_key_goes_over_plain_http_only_on_this_computer(
    url: str, key: bool, allowed: bool, refused: bool
) -> None:
    if refused:
        with pytest.raises(InvalidRequestError, match=r"Your key was not sent: .*https://"):
            check_key_transport(url, key=key, allowed=allowed)
    else:
        check_key_transport(url, key=key, allowed=allowed)


def test_what_counts_as_this_computer() -> None:
    assert all(map(is_loopback_host, ["localhost", "127.0.0.1", "127.3.4.5", "::1", "[::1]",
                                      "app.localhost", "LOCALHOST."]))
    assert not any(map(is_loopback_host, ["10.0.0.1", "localhost.example.com", "0.0.0.0", ""]))


async def _ask(base_url: str, **options: bool) -> tuple[str, str | None]:
    client = create_provider_client(
        "openai-compatible/m", api_style="chat", api_key=FAKE_KEY,
        base_url=base_url, **options,
    )
    request = LLMRequest(model="openai-compatible/m", messages=[Msg.user("Hi")], stream=True)
    text, error = "", None
    async for event in client.stream(request):
        if event.kind == "response.failed":
            error = str(event.error)
        elif event.kind == "response.completed":
            text = event.response.text
    await client.aclose()
    return text, error


async def test_the_client_refuses_before_sending_anything() -> None:
    with ScriptedChatServer([Reply.text_stream(["Hello!"])]) as server:
        port = server.base_url.rsplit(":", 1)[1].split("/", 1)[0]
        # 127.0.0.1 spelled as a number the guard does not take for loopback: the
        # request would reach this server, and it must not be sent.
        outside = f"http://2130706433:{port}/v1"
        text, error = await _ask(outside)
        assert error is not None and "Your key was not sent" in error
        assert FAKE_KEY not in error and server.requests == []
        text, error = await _ask(outside, allow_plain_http=True)  # the user allowed it
        assert error is None and text == "Hello!" and len(server.requests) == 1
        text, error = await _ask(server.base_url)  # loopback: as always
        assert error is None and text == "Hello!"


def test_allowing_it_is_a_setting_off_by_default() -> None:
    assert Settings().chat.allow_plain_http is False


async def test_https_to_a_plain_http_server_says_so_not_that_it_is_down() -> None:
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), http.server.BaseHTTPRequestHandler
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/v1"
        _text, error = await _ask(url)
    finally:
        server.shutdown()
        server.server_close()
    assert error is not None and "speaks plain HTTP" in error and "http://" in error
    assert "is the server running" not in error


def test_a_servers_label_reads_right_inside_a_sentence() -> None:
    from app.llm.errors import inside

    assert inside("The server at http://10.0.0.2:8080/v1") == "the server at http://10.0.0.2:8080/v1"
    assert inside("OpenAI") == "OpenAI"
