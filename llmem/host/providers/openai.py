"""OpenAI-compatible chat completions: OpenAI itself, and the local servers that speak its API
(Ollama, llama.cpp's server, vLLM, LM Studio) through ``--base-url``. Uses the ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from llmem.host.chat import ChatMessage, StreamEvent, TextDelta, ToolCall, ToolCallEvent, ToolSpec, new_id
from llmem.host.providers.base import Provider, ProviderSettings, WireNames, tool_result_text

__all__ = ["OpenAIProvider", "native_call"]

# Local servers want some key in the header; none of them checks it.
_NO_KEY = "no-key-needed"


def native_call(call_id: str | None, name: str, raw: str) -> ToolCall:
    """A native call from its assembled JSON text (empty text is an empty object)."""
    text = raw.strip() or "{}"
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as exc:
        return ToolCall(
            call_id or new_id("c-"),
            name,
            None,
            native=True,
            raw=raw,
            error=f"the arguments are not valid JSON ({exc.msg})",
        )
    if not isinstance(arguments, dict):
        return ToolCall(
            call_id or new_id("c-"), name, None, native=True, raw=raw, error="the arguments must be a JSON object"
        )
    return ToolCall(call_id or new_id("c-"), name, arguments, native=True, raw=raw)


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        try:
            import openai
        except ImportError:
            raise self._missing("openai", "openai") from None
        self._sdk = openai
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key or _NO_KEY,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,  # the orchestrator retries, with backoff, and says so in its log
        )

    def _messages(self, system: str, history: Sequence[ChatMessage], names: WireNames) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for m in history:
            if m.role == "user":
                out.append({"role": "user", "content": m.content})
            elif m.role == "assistant":
                calls = [c for c in m.tool_calls if c.native]
                entry: dict[str, Any] = {"role": "assistant", "content": m.content or ("" if not calls else None)}
                if calls:
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": names.wire(c.name),
                                "arguments": json.dumps(c.arguments) if c.arguments is not None else c.raw,
                            },
                        }
                        for c in calls
                    ]
                out.append(entry)
            elif m.native:
                out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            else:
                out.append({"role": "user", "content": tool_result_text(m)})
        return out

    async def stream(
        self, system: str, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        sdk = self._sdk
        names = WireNames([t.name for t in tools] + [c.name for m in history for c in m.tool_calls])
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "messages": self._messages(system, history, names),
            "stream": True,
        }
        if self.settings.temperature is not None:
            kwargs["temperature"] = self.settings.temperature
        if tools and self.native_tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": names.wire(t.name),
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in tools
            ]
        # index → [id, name, argument pieces]: a call's arguments arrive in many chunks
        pending: dict[int, list[Any]] = {}
        chunks = 0
        try:
            stream = await self._client.chat.completions.create(**_untransformed(kwargs))
            try:
                async for chunk in stream:
                    chunks += 1
                    for choice in chunk.choices or ():
                        delta = choice.delta
                        if delta is None:
                            continue
                        if delta.content:
                            yield TextDelta(delta.content)
                        for position, piece in enumerate(delta.tool_calls or ()):
                            index = piece.index if piece.index is not None else position
                            slot = pending.setdefault(index, [None, "", []])
                            if piece.id:
                                slot[0] = piece.id
                            if piece.function is not None:
                                if piece.function.name and piece.function.name != slot[1]:
                                    slot[1] += piece.function.name
                                if piece.function.arguments:
                                    slot[2].append(piece.function.arguments)
            finally:
                await stream.close()
            if chunks == 0:
                # a server that ignores "stream" and answers one JSON object: ask for that plainly
                whole = await self._client.chat.completions.create(**_untransformed({**kwargs, "stream": False}))
                for choice in whole.choices[:1]:
                    if choice.message.content:
                        yield TextDelta(choice.message.content)
                    for index, made in enumerate(choice.message.tool_calls or ()):
                        function = getattr(made, "function", None)
                        if function is not None:
                            pending[index] = [made.id, function.name, [function.arguments or ""]]
        except sdk.APIStatusError as exc:
            status = exc.status_code
            hint = (
                " (if this server or model has no tool support, start llmem-host with --tool-calls text)"
                if status == 400 and "tools" in kwargs
                else ""
            )
            raise self._fail(
                f"HTTP {status} from the model server: {_server_message(exc)}{hint}",
                retryable=status in (408, 409, 429) or status >= 500,
                status=status,
            ) from None
        except sdk.APITimeoutError:
            raise self._fail(f"no answer within {self.settings.timeout_s:g} s", retryable=True) from None
        except sdk.APIConnectionError as exc:
            raise self._fail(f"cannot reach the model server ({_cause(exc)})", retryable=True) from None
        except sdk.APIError as exc:  # an error event inside the stream
            raise self._fail(f"the model server reported an error: {exc.message}", retryable=True) from None
        for index in sorted(pending):
            call_id, name, pieces = pending[index]
            yield ToolCallEvent(native_call(call_id, names.qualified(name), "".join(pieces)))

    async def aclose(self) -> None:
        await self._client.close()


def _untransformed(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request with its messages and tools given as ``extra_body``: the SDK walks typed
    parameters recursively against their TypedDicts, which for the host's request (a system prompt
    with three guides, 33 tools with nested schemas, the history) cost tens of milliseconds a call,
    most of the host's own time per turn; ``extra_body`` goes on the wire as it is, and these are
    plain JSON already."""
    heavy = {k: kwargs[k] for k in ("messages", "tools") if k in kwargs}
    light = {k: v for k, v in kwargs.items() if k not in heavy}
    return {**light, "messages": [], "extra_body": heavy}


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(getattr(exc, "message", "") or exc)[:300]


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause else str(exc)
