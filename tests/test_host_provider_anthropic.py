"""The Anthropic provider (the anthropic SDK) against a loopback fake of the real Messages API."""

from __future__ import annotations

from typing import Any

import pytest

from llmem.host.chat import ChatMessage, TextDelta, ToolCall, ToolCallEvent, ToolSpec
from llmem.host.errors import ProviderError
from llmem.host.providers import ProviderSettings, make_provider
from tests.fake_models import FakeAnthropic, Reply, call, say

pytestmark = pytest.mark.anyio
KEY = "sk-ant-test-0123456789abcdef-secret"
TOOLS = [
    ToolSpec(
        "debrief-calc:run_tool", "Run an analysis.", {"type": "object", "properties": {"tool": {"type": "string"}}}
    )
]


def provider_for(fake: FakeAnthropic, timeout_s: float = 10.0) -> Any:
    return make_provider(
        "anthropic", ProviderSettings("claude-x", base_url=fake.base_url, api_key=KEY, timeout_s=timeout_s)
    )


async def collect(provider: Any, history: list[ChatMessage], tools: list[ToolSpec] = TOOLS) -> list[Any]:
    try:
        return [e async for e in provider.stream("SYSTEM", history, tools)]
    finally:
        await provider.aclose()


async def test_text_streams_and_a_tool_use_split_in_pieces_is_one_call() -> None:
    def reply(body: dict[str, Any]) -> Reply:
        made = call(
            "debrief-calc__run_tool",
            {"tool": "closest-approach", "parameters": {"distance_unit": "yd"}},
            call_id="toolu_1",
            pieces=7,
        )
        made.text = ["Let me ", "check."]
        return made

    with FakeAnthropic(reply) as fake:
        events = await collect(provider_for(fake), [ChatMessage("user", "cpa?")])
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me ", "check."]
    (event,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert event.call.id == "toolu_1" and event.call.name == "debrief-calc:run_tool"
    assert event.call.arguments == {"tool": "closest-approach", "parameters": {"distance_unit": "yd"}}
    body = fake.requests[0]
    assert body["system"] == "SYSTEM" and body["stream"] is True and body["max_tokens"] == 4096
    assert body["tools"][0]["name"] == "debrief-calc__run_tool" and "input_schema" in body["tools"][0]
    headers = fake.headers[0]  # the SDK sends the key one way or the other, by version
    assert headers.get("x-api-key") == KEY or headers.get("authorization") == f"Bearer {KEY}"
    assert "anthropic-version" in headers


async def test_the_history_alternates_and_tool_results_are_user_blocks() -> None:
    first = ToolCall("toolu_1", "debrief-calc:run_tool", {"tool": "a"})
    second = ToolCall("toolu_2", "debrief-calc:run_tool", {"tool": "b"})
    block = ToolCall("b-1", "llmem:get_artifact", {"path": "x"}, native=False)
    history = [
        ChatMessage("user", "q"),
        ChatMessage("assistant", "two calls", tool_calls=[first, second]),
        ChatMessage("tool", "A", tool_call_id="toolu_1", tool_name="debrief-calc:run_tool"),
        ChatMessage("tool", "B", tool_call_id="toolu_2", tool_name="debrief-calc:run_tool", is_error=True),
        ChatMessage("assistant", "```tool …```", tool_calls=[block]),
        ChatMessage("tool", "outline", tool_call_id="b-1", tool_name="llmem:get_artifact", native=False),
    ]
    with FakeAnthropic(lambda body: say("ok")) as fake:
        await collect(provider_for(fake), history)
    messages = fake.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use", "tool_use"]
    results = messages[2]["content"]
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in results] == [
        ("tool_result", "toolu_1", False),
        ("tool_result", "toolu_2", True),
    ]
    assert messages[3]["content"] == [{"type": "text", "text": "```tool …```"}]
    assert "tool result for llmem:get_artifact" in messages[4]["content"][0]["text"]


async def test_an_error_event_in_the_middle_of_the_stream_is_retryable() -> None:
    seen: list[str] = []
    with FakeAnthropic(lambda body: Reply(text=["The clo"], error="Overloaded")) as fake:
        provider = provider_for(fake)
        with pytest.raises(ProviderError) as caught:
            async for event in provider.stream("S", [ChatMessage("user", "x")], []):
                seen.append(event.text)
        await provider.aclose()
    assert seen == ["The clo"] and caught.value.retryable and "overloaded" in str(caught.value)


async def test_overloaded_529_is_worth_a_retry() -> None:
    with (
        FakeAnthropic(lambda body: Reply(status=529, error="Overloaded")) as fake,
        pytest.raises(ProviderError) as caught,
    ):
        await collect(provider_for(fake), [ChatMessage("user", "x")])
    assert caught.value.retryable and caught.value.status == 529 and "overloaded_error" in str(caught.value)
