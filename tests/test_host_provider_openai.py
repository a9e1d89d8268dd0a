"""The OpenAI-compatible provider (the openai SDK) against a loopback fake of the real API."""

from __future__ import annotations

from typing import Any

import pytest

from llmem.host.chat import ChatMessage, TextDelta, ToolCall, ToolCallEvent, ToolSpec
from llmem.host.providers import ProviderSettings, make_provider
from tests.fake_models import FakeOpenAI, Reply, call, say

pytestmark = pytest.mark.anyio
KEY = "sk-test-0123456789abcdef-secret"
TOOLS = [
    ToolSpec(
        "debrief-calc:run_tool", "Run an analysis.", {"type": "object", "properties": {"tool": {"type": "string"}}}
    ),
    ToolSpec("llmem:get_artifact", "Read an artifact.", {"type": "object", "properties": {"path": {"type": "string"}}}),
]


def provider_for(fake: FakeOpenAI, key: str | None = KEY, timeout_s: float = 10.0) -> Any:
    return make_provider(
        "openai", ProviderSettings("local-model", base_url=fake.base_url, api_key=key, timeout_s=timeout_s)
    )


async def collect(provider: Any, history: list[ChatMessage], tools: list[ToolSpec] = TOOLS) -> list[Any]:
    """The events of one answer; the provider is closed after it (its connections with it)."""
    try:
        return [e async for e in provider.stream("SYSTEM", history, tools)]
    finally:
        await provider.aclose()


async def test_text_streams_in_pieces_and_tools_are_sent_with_wire_names() -> None:
    with FakeOpenAI(lambda body: say("The closest approach was 119.5 yards.", size=5)) as fake:
        provider = provider_for(fake)
        events = await collect(provider, [ChatMessage("user", "cpa?")])
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) == 8 and "".join(texts) == "The closest approach was 119.5 yards."
    body = fake.requests[0]
    assert body["stream"] is True and body["model"] == "local-model"
    assert body["messages"][0] == {"role": "system", "content": "SYSTEM"}
    assert [t["function"]["name"] for t in body["tools"]] == ["debrief-calc__run_tool", "llmem__get_artifact"]
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"


async def test_a_tool_call_split_across_chunks_is_assembled_and_named_back() -> None:
    arguments = {"tool": "closest-approach", "parameters": {"distance_unit": "yd"}}
    with FakeOpenAI(lambda body: call("debrief-calc__run_tool", arguments, call_id="call_9", pieces=9)) as fake:
        provider = provider_for(fake)
        events = await collect(provider, [ChatMessage("user", "cpa?")])
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert len(calls) == 1
    assert (calls[0].id, calls[0].name, calls[0].arguments, calls[0].native) == (
        "call_9",
        "debrief-calc:run_tool",
        arguments,
        True,
    )


async def test_malformed_arguments_become_a_call_that_says_so() -> None:
    with FakeOpenAI(lambda body: Reply(calls=[("c1", "llmem__get_artifact", ['{"path": "a', "b"])])) as fake:
        events = await collect(provider_for(fake), [ChatMessage("user", "x")])
    (event,) = events
    assert (
        isinstance(event, ToolCallEvent)
        and event.call.arguments is None
        and "not valid JSON" in (event.call.error or "")
    )


async def test_the_history_goes_back_in_openai_form() -> None:
    native = ToolCall("call_1", "debrief-calc:run_tool", {"tool": "x"})
    block = ToolCall("b-1", "llmem:get_artifact", {"path": "a"}, native=False)
    history = [
        ChatMessage("user", "q"),
        ChatMessage("assistant", "", tool_calls=[native]),
        ChatMessage("tool", '{"ok": true}', tool_call_id="call_1", tool_name="debrief-calc:run_tool"),
        ChatMessage("assistant", "```tool …```", tool_calls=[block]),
        ChatMessage("tool", "outline", tool_call_id="b-1", tool_name="llmem:get_artifact", native=False, is_error=True),
    ]
    with FakeOpenAI(lambda body: say("ok")) as fake:
        await collect(provider_for(fake), history)
    messages = fake.requests[0]["messages"]
    assert messages[2]["tool_calls"][0]["function"] == {"name": "debrief-calc__run_tool", "arguments": '{"tool": "x"}'}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'}
    assert "tool_calls" not in messages[4]  # a block call stays in the text
    assert messages[5]["role"] == "user" and "tool error for llmem:get_artifact" in messages[5]["content"]


async def test_a_local_server_needs_no_key_but_a_hosted_one_does() -> None:
    from llmem.host.errors import ConfigError

    with FakeOpenAI(lambda body: say("hi")) as fake:
        events = await collect(provider_for(fake, key=None), [ChatMessage("user", "x")])
        assert "".join(e.text for e in events) == "hi"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_provider("openai", ProviderSettings("gpt-4o-mini"))


async def test_text_mode_sends_no_tools_and_the_history_keeps_block_calls_as_text() -> None:
    with FakeOpenAI(lambda body: say("ok")) as fake:
        provider = provider_for(fake)
        provider.native_tools = False
        await collect(provider, [ChatMessage("user", "x")])
    assert "tools" not in fake.requests[0]


async def test_a_server_that_ignores_stream_is_asked_again_plainly() -> None:
    def whole(body: dict[str, Any]) -> Reply:
        reply = call("llmem__get_artifact", {"path": "app.py"}, call_id="c7")
        reply.text, reply.whole = ["Reading it."], True
        return reply

    with FakeOpenAI(whole) as fake:
        events = await collect(provider_for(fake), [ChatMessage("user", "x")])
    assert [type(e).__name__ for e in events] == ["TextDelta", "ToolCallEvent"]
    assert events[1].call.name == "llmem:get_artifact" and events[1].call.arguments == {"path": "app.py"}
    assert [r["stream"] for r in fake.requests] == [True, False]
