"""The Gemini provider (the google-genai SDK) against a loopback fake of the real Gemini API."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from llmem.host.chat import ChatMessage, TextDelta, ToolCall, ToolCallEvent, ToolSpec
from llmem.host.providers import ProviderSettings, make_provider
from tests.fake_models import FakeGemini, Reply, say

pytestmark = pytest.mark.anyio
KEY = "AIza-test-0123456789abcdef-secret"
TOOLS = [
    ToolSpec(
        "debrief-state:debrief_render_plot",
        "A PNG of the plot.",
        {"type": "object", "properties": {"fit": {"type": "string"}}},
    )
]


def provider_for(fake: FakeGemini, timeout_s: float = 10.0) -> Any:
    return make_provider(
        "gemini", ProviderSettings("gemini-x", base_url=fake.base_url, api_key=KEY, timeout_s=timeout_s)
    )


async def collect(provider: Any, history: list[ChatMessage], tools: list[ToolSpec] = TOOLS) -> list[Any]:
    try:
        return [e async for e in provider.stream("SYSTEM", history, tools)]
    finally:
        await provider.aclose()


async def test_text_streams_and_function_calls_come_back_with_their_signature() -> None:
    turns = iter(
        [
            Reply(
                text=["I'll ", "draw it."], calls=[("fc_1", "debrief-state__debrief_render_plot", ['{"fit": "all"}'])]
            ),
            say("Here it is."),
        ]
    )
    with FakeGemini(lambda body: next(turns)) as fake:
        provider = provider_for(fake)
        events = [e async for e in provider.stream("SYSTEM", [ChatMessage("user", "draw")], TOOLS)]
        assert [e.text for e in events if isinstance(e, TextDelta)] == ["I'll ", "draw it."]
        (event,) = [e for e in events if isinstance(e, ToolCallEvent)]
        assert (event.call.id, event.call.name, event.call.arguments) == (
            "fc_1",
            "debrief-state:debrief_render_plot",
            {"fit": "all"},
        )
        history = [
            ChatMessage("user", "draw"),
            ChatMessage("assistant", "I'll draw it.", tool_calls=[event.call]),
            ChatMessage("tool", '{"width": 800}', tool_call_id="fc_1", tool_name="debrief-state:debrief_render_plot"),
        ]
        second = [e async for e in provider.stream("SYSTEM", history, TOOLS)]
        await provider.aclose()
    assert "".join(e.text for e in second) == "Here it is."
    first, again = fake.requests
    assert "/models/gemini-x:streamGenerateContent" in fake.paths[0] and "alt=sse" in fake.paths[0]
    assert fake.headers[0]["x-goog-api-key"] == KEY
    assert first["systemInstruction"]["parts"][0]["text"] == "SYSTEM"
    declared = first["tools"][0]["functionDeclarations"][0]
    schema = declared.get("parametersJsonSchema") or declared.get("parameters_json_schema")  # proto JSON takes both
    assert declared["name"] == "debrief-state__debrief_render_plot" and schema == TOOLS[0].input_schema
    model_turn, results = again["contents"][1], again["contents"][2]
    call_part = next(p for p in model_turn["parts"] if "functionCall" in p)
    assert model_turn["role"] == "model" and call_part["functionCall"]["name"] == "debrief-state__debrief_render_plot"
    assert base64.b64decode(call_part["thoughtSignature"]) == base64.b64decode(FakeGemini.SIGNATURE)
    response = results["parts"][0]["functionResponse"]
    assert (
        results["role"] == "user" and response["id"] == "fc_1" and response["response"] == {"result": '{"width": 800}'}
    )


async def test_block_calls_stay_text_and_tool_errors_are_marked() -> None:
    block = ToolCall("b-1", "llmem:get_artifact", {"path": "x"}, native=False)
    native = ToolCall("fc_2", "debrief-state:debrief_render_plot", {})
    history = [
        ChatMessage("user", "q"),
        ChatMessage("assistant", "", tool_calls=[native]),
        ChatMessage(
            "tool", "bad fit", tool_call_id="fc_2", tool_name="debrief-state:debrief_render_plot", is_error=True
        ),
        ChatMessage("assistant", "```tool …```", tool_calls=[block]),
        ChatMessage("tool", "outline", tool_call_id="b-1", tool_name="llmem:get_artifact", native=False),
    ]
    with FakeGemini(lambda body: say("ok")) as fake:
        await collect(provider_for(fake), history)
    contents = fake.requests[0]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert contents[2]["parts"][0]["functionResponse"]["response"] == {"error": "bad fit"}
    assert "tool result for llmem:get_artifact" in contents[4]["parts"][0]["text"]
