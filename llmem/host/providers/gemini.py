"""Google's Gemini API (the seed's first choice), streamed, with native function calling.
Uses the ``google-genai`` SDK."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from llmem.host.chat import ChatMessage, StreamEvent, TextDelta, ToolCall, ToolCallEvent, ToolSpec, new_id
from llmem.host.providers.base import Provider, ProviderSettings, WireNames, tool_result_text

__all__ = ["GeminiProvider"]

_TRANSIENT = {408, 429, 500, 502, 503, 504}
_SIGNATURES_KEPT = 2000


class GeminiProvider(Provider):
    name = "gemini"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise self._missing("google-genai", "gemini") from None
        self._types, self._errors = types, errors
        options = types.HttpOptions(timeout=int(settings.timeout_s * 1000), base_url=settings.base_url)
        self._client = genai.Client(api_key=settings.api_key, http_options=options).aio
        # Gemini signs its function calls (thought signatures); a signature must go back with its
        # call in the next request, so they are kept here by call id
        self._signatures: OrderedDict[str, bytes] = OrderedDict()

    def _contents(self, history: Sequence[ChatMessage], names: WireNames) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []

        def add(role: str, parts: list[dict[str, Any]]) -> None:
            if not parts:
                return
            if out and out[-1]["role"] == role:
                out[-1]["parts"].extend(parts)
            else:
                out.append({"role": role, "parts": parts})

        for m in history:
            if m.role == "user":
                add("user", [{"text": m.content}] if m.content else [])
            elif m.role == "assistant":
                parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
                for c in m.tool_calls:
                    if not c.native:
                        continue
                    part: dict[str, Any] = {
                        "function_call": {"id": c.id, "name": names.wire(c.name), "args": c.arguments or {}}
                    }
                    if c.id in self._signatures:
                        part["thought_signature"] = self._signatures[c.id]
                    parts.append(part)
                add("model", parts)
            elif m.native:
                key = "error" if m.is_error else "result"
                response = {"id": m.tool_call_id, "name": names.wire(m.tool_name or ""), "response": {key: m.content}}
                add("user", [{"function_response": response}])
            else:
                add("user", [{"text": tool_result_text(m)}])
        return out

    async def stream(
        self, system: str, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        types, errors = self._types, self._errors
        names = WireNames([t.name for t in tools] + [c.name for m in history for c in m.tool_calls])
        config: dict[str, Any] = {
            "system_instruction": system,
            "max_output_tokens": self.settings.max_tokens,
            # the host runs the tools itself, with the person's confirmation where due
            "automatic_function_calling": {"disable": True},
        }
        if self.settings.temperature is not None:
            config["temperature"] = self.settings.temperature
        if tools and self.native_tools:
            declarations = [
                {"name": names.wire(t.name), "description": t.description, "parameters_json_schema": t.input_schema}
                for t in tools
            ]
            config["tools"] = [{"function_declarations": declarations}]
        try:
            chunks = await self._client.models.generate_content_stream(
                model=self.settings.model,
                contents=self._contents(history, names),  # type: ignore[arg-type]
                config=types.GenerateContentConfig.model_validate(config),
            )
            async for chunk in chunks:
                for candidate in chunk.candidates or ():
                    for part in (candidate.content.parts if candidate.content else None) or ():
                        if part.function_call is not None:
                            yield ToolCallEvent(self._call(part, names))
                        elif part.text and not part.thought:
                            yield TextDelta(part.text)
        except errors.APIError as exc:
            status = exc.code
            raise self._fail(
                f"HTTP {status} from the model server: {exc.status or ''} {exc.message or ''}".strip(),
                retryable=status in _TRANSIENT,
                status=status,
            ) from None
        except (OSError, TimeoutError) as exc:
            raise self._fail(f"cannot reach the model server ({type(exc).__name__})", retryable=True) from None
        except Exception as exc:  # the HTTP library's own connection and timeout errors
            if type(exc).__module__.split(".")[0] not in ("httpx", "httpx2", "httpcore", "aiohttp"):
                raise
            raise self._fail(f"cannot reach the model server ({type(exc).__name__})", retryable=True) from None

    def _call(self, part: Any, names: WireNames) -> ToolCall:
        function = part.function_call
        call_id = function.id or new_id("g-")
        if part.thought_signature:
            self._signatures[call_id] = part.thought_signature
            while len(self._signatures) > _SIGNATURES_KEPT:
                self._signatures.popitem(last=False)
        name = names.qualified(function.name or "")
        arguments = function.args
        if arguments is not None and not isinstance(arguments, dict):
            return ToolCall(
                call_id, name, None, native=True, raw=str(arguments), error="the arguments must be a JSON object"
            )
        return ToolCall(call_id, name, dict(arguments or {}), native=True)

    async def aclose(self) -> None:
        await self._client.aclose()
