"""Anthropic's Messages API, streamed, with native tool use. Uses the ``anthropic`` SDK."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from llmem.host.chat import ChatMessage, StreamEvent, TextDelta, ToolCallEvent, ToolSpec
from llmem.host.providers.base import Provider, ProviderSettings, WireNames, tool_result_text
from llmem.host.providers.openai import native_call

__all__ = ["AnthropicProvider"]

# error types Anthropic sends (as the HTTP body or as an "error" event mid-stream) that may pass
_TRANSIENT = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        try:
            import anthropic
        except ImportError:
            raise self._missing("anthropic", "anthropic") from None
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,  # the orchestrator retries, with backoff
        )

    def _messages(self, history: Sequence[ChatMessage], names: WireNames) -> list[dict[str, Any]]:
        """Anthropic's turns: user and assistant alternate, tool results are user content blocks."""
        out: list[dict[str, Any]] = []

        def add(role: str, blocks: list[dict[str, Any]]) -> None:
            if not blocks:
                return
            if out and out[-1]["role"] == role:  # consecutive turns of one role are one turn
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": role, "content": blocks})

        for m in history:
            if m.role == "user":
                add("user", [{"type": "text", "text": m.content}] if m.content else [])
            elif m.role == "assistant":
                blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
                blocks += [
                    {"type": "tool_use", "id": c.id, "name": names.wire(c.name), "input": c.arguments or {}}
                    for c in m.tool_calls
                    if c.native
                ]
                add("assistant", blocks)
            elif m.native:
                add(
                    "user",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": m.tool_call_id,
                            "content": m.content,
                            "is_error": m.is_error,
                        }
                    ],
                )
            else:
                add("user", [{"type": "text", "text": tool_result_text(m)}])
        return out

    async def stream(
        self, system: str, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        sdk = self._sdk
        names = WireNames([t.name for t in tools] + [c.name for m in history for c in m.tool_calls])
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": self.settings.max_tokens,
            "system": system,
            "messages": self._messages(history, names),
            "stream": True,
        }
        if self.settings.temperature is not None:
            kwargs["temperature"] = self.settings.temperature
        if tools and self.native_tools:
            kwargs["tools"] = [
                {"name": names.wire(t.name), "description": t.description, "input_schema": t.input_schema}
                for t in tools
            ]
        # content block index → [id, name, input JSON pieces]: a tool_use's input arrives in pieces
        pending: dict[int, list[Any]] = {}
        try:
            # the big parts as extra_body: the SDK's walk of typed parameters costs tens of ms a call
            # on a request this size (see the OpenAI provider); these are plain JSON already
            heavy = {k: kwargs.pop(k) for k in ("messages", "system", "tools") if k in kwargs}
            stream = await self._client.messages.create(**kwargs, messages=[], extra_body=heavy)
            try:
                async for event in stream:
                    kind = event.type
                    if kind == "content_block_start" and event.content_block.type == "tool_use":
                        block = event.content_block
                        pending[event.index] = [block.id, block.name, []]
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            yield TextDelta(delta.text)
                        elif delta.type == "input_json_delta" and event.index in pending:
                            pending[event.index][2].append(delta.partial_json)
                    elif kind == "content_block_stop" and event.index in pending:
                        call_id, name, pieces = pending.pop(event.index)
                        yield ToolCallEvent(native_call(call_id, names.qualified(name), "".join(pieces)))
            finally:
                await stream.close()
        except sdk.APIStatusError as exc:
            kind_of = _error_type(exc.body)
            status = exc.status_code
            raise self._fail(
                f"HTTP {status} from the model server: {_error_message(exc)}",
                retryable=status in (408, 409, 429) or status >= 500 or kind_of in _TRANSIENT,
                status=status,
            ) from None
        except sdk.APITimeoutError:
            raise self._fail(f"no answer within {self.settings.timeout_s:g} s", retryable=True) from None
        except sdk.APIConnectionError as exc:
            cause = exc.__cause__ or exc.__context__
            raise self._fail(
                f"cannot reach the model server ({type(cause).__name__ if cause else exc})", retryable=True
            ) from None

    async def aclose(self) -> None:
        await self._client.close()


def _error_type(body: Any) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return str(inner["type"])
    return ""


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return f"{inner.get('type', 'error')}: {inner['message']}"[:300]
    return json.dumps(str(getattr(exc, "message", exc)))[:300]
