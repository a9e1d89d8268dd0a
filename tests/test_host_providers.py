"""What every provider promises, each against a loopback fake of its real API: errors that say
whether a retry may help and never carry the key, an unreachable server, a slow stream stopped
at once, a one-shot answer for the callback protocol, and no hosted provider without a key."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from llmem.host.chat import ChatMessage, TextDelta, ToolSpec
from llmem.host.errors import ConfigError, ProviderError
from llmem.host.providers import KEY_VARIABLES, ProviderSettings, make_provider
from tests.fake_models import FakeAnthropic, FakeGemini, FakeOpenAI, Reply, say

pytestmark = pytest.mark.anyio
KEY = "secret-key-0123456789abcdef-never-shown"
FAKES = {"openai": FakeOpenAI, "anthropic": FakeAnthropic, "gemini": FakeGemini}
TOOLS = [
    ToolSpec(
        "debrief-calc:run_tool", "Run an analysis.", {"type": "object", "properties": {"tool": {"type": "string"}}}
    )
]


@pytest.fixture(params=list(FAKES))
def provider_name(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def provider_for(name: str, base_url: str, timeout_s: float = 10.0) -> Any:
    return make_provider(name, ProviderSettings("some-model", base_url=base_url, api_key=KEY, timeout_s=timeout_s))


async def collect(provider: Any, history: list[ChatMessage]) -> list[Any]:
    try:
        return [e async for e in provider.stream("SYSTEM", history, TOOLS)]
    finally:
        await provider.aclose()


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (500, True), (503, True), (400, False), (401, False)])
async def test_http_errors_say_whether_to_retry_and_never_carry_the_key(
    provider_name: str, status: int, retryable: bool
) -> None:
    echo = f"refused: {KEY}" if status == 401 else "busy"  # a server that echoes the key back
    with (
        FAKES[provider_name](lambda body: Reply(status=status, error=echo)) as fake,
        pytest.raises(ProviderError) as caught,
    ):
        await collect(provider_for(provider_name, fake.base_url), [ChatMessage("user", "x")])
    assert caught.value.retryable is retryable and caught.value.status == status
    assert caught.value.provider == provider_name and f"HTTP {status}" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in repr(ProviderSettings("m", api_key=KEY))


async def test_an_unreachable_server_is_worth_a_retry(provider_name: str) -> None:
    with FAKES[provider_name](lambda body: say("x")) as fake:
        url = fake.base_url  # closed when the block ends: nothing listens there any more
    with pytest.raises(ProviderError) as caught:
        await collect(provider_for(provider_name, url, timeout_s=2), [ChatMessage("user", "x")])
    assert caught.value.retryable and "cannot reach" in str(caught.value)


async def test_a_slow_stream_is_stopped_at_once(provider_name: str) -> None:
    with FAKES[provider_name](lambda body: Reply(text=["word "] * 200, delay_s=0.05)) as fake:
        provider = provider_for(provider_name, fake.base_url)
        seen: list[str] = []
        started = time.monotonic()
        with anyio.move_on_after(0.5):
            async for event in provider.stream("S", [ChatMessage("user", "x")], []):
                assert isinstance(event, TextDelta)
                seen.append(event.text)
        await provider.aclose()
        assert time.monotonic() - started < 2.0 and 0 < len(seen) < 200
        assert fake.disconnected.wait(timeout=10)  # the fake's next write found the socket closed


async def test_complete_answers_a_tools_prompt_whole_and_without_tools(provider_name: str) -> None:
    with FAKES[provider_name](lambda body: say('{"symbols": {}}', 3)) as fake:
        provider = provider_for(provider_name, fake.base_url)
        assert await provider.complete("Describe these symbols as JSON") == '{"symbols": {}}'
        await provider.aclose()
    assert "tools" not in fake.requests[0] and "Describe these symbols" in str(fake.requests[0])


async def test_a_hosted_provider_without_a_key_is_refused_at_start(provider_name: str) -> None:
    with pytest.raises(ConfigError, match=KEY_VARIABLES[provider_name][1]):
        make_provider(provider_name, ProviderSettings("m"))


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What was the closest approach between ARGONAUT and BLUE HERON?", ["ARGONAUT", "BLUE HERON"]),
        ("how close did nelson and collingwood get?", ["nelson", "collingwood"]),
        ("WHEN WERE NELSON AND COLLINGWOOD CLOSEST?", ["NELSON", "COLLINGWOOD"]),
        ("What was the CPA in YARDS between NELSON and COLLINGWOOD?", ["NELSON", "COLLINGWOOD"]),
        ("What were NELSON's speed and position at 10:30 UTC?", ["NELSON"]),
        ("what was COLLINGWOOD doing at 0930?", ["COLLINGWOOD"]),
        ("when were the two ships closest?", []),
        ("Show me the last hour of the exercise", []),
        ("List the plots and REP files in this workspace", []),
    ],
)
def test_the_stand_in_reads_the_ships_a_question_names(question: str, names: list[str]) -> None:
    """The names the stand-in holds a question to (a name no file has is said, never swapped)."""
    from llmem.host.providers.standin_plays import asked_names

    assert asked_names(question) == names
