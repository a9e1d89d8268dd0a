"""The conversation orchestrator (seed 004 §2.2): one turn of a chat, from the person's text to
the model's last word, with the tools in between.

A turn: the person's message joins the history; the history, pruned to the token budget, goes to
the model with the system prompt; text streams to the page as it comes (```tool blocks taken out
of it); each call the model makes is checked, confirmed with the person when the tool is
destructive, run through the coordinator, shown to the page as a step and fed back to the model,
until the model answers without a call or the turn's step limit is reached. A tool answering
``prompt_ready`` is closed by the host: its model answers the prompt and the callback tool stores
it. Provider errors are retried with backoff; a malformed or unknown call is answered to the
model; every failure ends in a friendly message, never a dead turn.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from llmem.host.apps import view_of
from llmem.host.chat import ChatMessage, TextDelta, ToolCall, ToolCallEvent, ToolSpec, new_id
from llmem.host.coordinator import Coordinator, ToolEntry, ToolResult
from llmem.host.errors import HostError, ProviderError, UnknownTool
from llmem.host.models import Models
from llmem.host.prompting import compile_system_prompt, estimate_tokens, prune_history
from llmem.host.providers.base import Provider
from llmem.host.sessions import PendingConfirm, Session
from llmem.host.steps import (
    Known,
    change_ids,
    clip,
    describe_change,
    kinds_of,
    picture_name,
    step_headline,
    step_title,
)
from llmem.host.toolblocks import ToolBlockParser

__all__ = [
    "OUTCOME_NOTES",
    "STOPPED",
    "SYSTEM_MESSAGES",
    "Orchestrator",
    "OrchestratorSettings",
    "correlation_id",
    "is_destructive",
]

log = logging.getLogger("llmem.host.chat")

#: the correlation id of the turn being handled, added to every log line (see ``CorrelationFilter``)
correlation_id: contextvars.ContextVar[str] = contextvars.ContextVar("correlation_id", default="-")

# The seed's standard system messages (§2.5), and the host's own.
SYSTEM_MESSAGES = {
    "WELCOME": "Connected to the host: a new chat.",
    "RATE_LIMITED": "I'm currently processing too many requests. Please try again in a moment.",
    "MODEL_ERROR": "I could not reach the model just now ({detail}). Please try again in a moment.",
    "MODEL_BROKE_OFF": "The model's answer broke off ({detail}). Please ask again.",
    "STEP_LIMIT": "I stopped after {steps} tool steps in one turn. Ask me to go on if you want more.",
    "CANCELLED": "Stopped.",
    "BUSY": "I'm still working on your last message. Wait for it, or press Stop first.",
    "EMPTY": "The model gave no answer. Please try rephrasing.",
}


FEATURES_READER = "debrief_get_features"  # a plot server's read of features by id: names for confirmations
DECLINED = "you said no; nothing ran"  # a declined step's headline
STOPPED = "(stopped by the person)"  # the history's note of a turn the person stopped (the page knows it)
#: what a step that did not run says to the person (the model reads its own text in the history)
OUTCOME_NOTES = {
    "declined": "You declined; nothing ran.",
    "cancelled": "You stopped it before it finished.",
}


def is_destructive(entry: ToolEntry) -> bool:
    """MCP's own defaults: a tool that is not read-only is destructive unless it says it is not,
    and a tool with no annotations at all is neither read-only nor safe."""
    ann = entry.tool.annotations
    if ann is None:
        return True
    if ann.read_only_hint:
        return False
    return ann.destructive_hint is not False


@dataclass
class OrchestratorSettings:
    max_steps: int = 10
    history_tokens: int = 16_000
    retry_attempts: int = 3
    retry_delay_s: float = 1.0  # doubled after each failed attempt
    confirm_timeout_s: float = 600.0
    # of a tool's result, given to the model: a whole analysis answer (a CPA with every pass,
    # crossing and lesser dip of a six-hour exercise is about 12,000) must reach it unbroken
    result_chars: int = 24_000
    callback_attempts: int = 2


def _result_for_model(result: ToolResult) -> str:
    structured = result.result.structured_content
    text = json.dumps(structured, ensure_ascii=False) if structured is not None else result.text
    images = result.images
    if images:
        text += "".join(f"\n[image {i.mime_type}, shown to the person]" for i in images)
    return text or "(the tool returned nothing)"


def _result_for_page(result: ToolResult, limit: int = 60_000) -> Any:
    structured = result.result.structured_content
    if structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
        return structured if len(text) <= limit else text[:limit] + " … (cut for the page)"
    text = result.text
    return text if len(text) <= limit else text[:limit] + " … (cut for the page)"


class Orchestrator:
    """Turns for every session, with one provider and one coordinator."""

    def __init__(
        self,
        models: Provider | Models,
        coordinator: Coordinator,
        settings: OrchestratorSettings | None = None,
    ) -> None:
        self.models = models if isinstance(models, Models) else Models([models])
        self.coordinator = coordinator
        self.settings = settings or OrchestratorSettings()
        self.tools = [
            ToolSpec(e.qualified_name, e.tool.description or "", dict(e.tool.input_schema), is_destructive(e))
            for e in coordinator.tools()
        ]
        spellings: dict[str, list[str]] = {}
        for tool in self.tools:
            spellings.setdefault(_spelling(tool.name), []).append(tool.name)
        self._by_spelling = {k: v[0] for k, v in spellings.items() if len(v) == 1}
        self._guides = {server: coordinator.descriptions(server) for server in coordinator.servers}
        self._prompts: dict[bool, str] = {}  # the system prompt, with tools native or taught as blocks
        self._tool_tokens = sum(estimate_tokens(t.description + json.dumps(t.input_schema)) for t in self.tools)
        log.info(
            "system prompt about %d tokens, tool schemas about %d; every request starts at about %d tokens",
            estimate_tokens(self.system_prompt),
            self._tool_tokens if self.provider.native_tools else 0,
            self.fixed_tokens,
        )

    @property
    def provider(self) -> Provider:
        """The default model's provider."""
        return self.models.get(None)

    def provider_for(self, session: Session) -> Provider:
        """The provider of the model chosen for this chat (the default until one is chosen)."""
        return self.models.get(session.model)

    def prompt_for(self, provider: Provider) -> str:
        native = provider.native_tools
        if native not in self._prompts:
            self._prompts[native] = compile_system_prompt(self.tools, self._guides, native_tools=native)
        return self._prompts[native]

    @property
    def system_prompt(self) -> str:
        """The default model's system prompt."""
        return self.prompt_for(self.provider)

    @property
    def fixed_tokens(self) -> int:
        """What every request of the default model costs before the conversation: a local model's
        context must hold it."""
        native = self.provider.native_tools
        return estimate_tokens(self.system_prompt) + (self._tool_tokens if native else 0)

    # -- a turn ----------------------------------------------------------------------------------

    async def handle_input(
        self, session: Session, question: str | ChatMessage, scope: anyio.CancelScope | None = None
    ) -> None:
        """One turn: everything it produces goes to ``session.emit``; it always ends with ``done``.
        ``question``: the person's text, or their message whole (with files attached). ``scope``:
        the turn's cancel scope, when the caller made it first (to mark the session busy before
        the turn's task starts); ``session.turn.cancel()`` stops the turn."""
        token = correlation_id.set(new_id("t-"))
        started = time.perf_counter()
        message = question if isinstance(question, ChatMessage) else ChatMessage(role="user", content=question)
        log.info("turn started", extra={"session": session.id, "chars": len(message.content)})
        session.history.append(message)
        try:
            scope = scope or anyio.CancelScope()
            session.turn = scope
            with scope:
                await self._turn(session)
            if scope.cancelled_caught:
                log.info("turn cancelled by the person", extra={"session": session.id})
                for call in self._cancel_unanswered(session):
                    await self._step(
                        session,
                        call,
                        "complete",
                        f"Cancelled: {call.name}",
                        {
                            "result": OUTCOME_NOTES["cancelled"],
                            "isError": True,
                            "outcome": "cancelled",
                            "headline": "stopped by the person",
                            "durationMs": None,
                        },
                    )
                session.history.append(ChatMessage(role="assistant", content=STOPPED))
                await session.emit(
                    {
                        "type": "status",
                        "payload": {
                            "state": "complete",
                            "message": SYSTEM_MESSAGES["CANCELLED"],
                            "data": {"cancelled": True},
                        },
                    }
                )
        except Exception as exc:  # never a dead turn: the page hears what happened
            log.exception("turn failed", extra={"session": session.id})
            await session.emit({"type": "error", "payload": {"message": f"The host failed on this turn: {exc}"}})
        finally:
            session.turn = None
            for pending in list(session.confirms.values()):
                pending.answered.set()
            session.confirms.clear()
            log.info("turn ended", extra={"session": session.id, "ms": round((time.perf_counter() - started) * 1000)})
            await session.emit({"type": "done", "payload": {}})
            correlation_id.reset(token)

    async def _turn(self, session: Session) -> None:
        steps = 0
        tools: Sequence[ToolSpec] = self.tools
        while True:
            answer = await self._generate(session, tools)
            if answer is None:
                return
            text, calls = answer
            session.history.append(ChatMessage(role="assistant", content=text, tool_calls=calls))
            if not calls:
                if not text.strip() and steps == 0:
                    await session.emit({"type": "text", "payload": {"content": SYSTEM_MESSAGES["EMPTY"]}})
                return
            if not tools:  # the last word was asked for without tools and it called one anyway
                await session.emit(
                    {"type": "text", "payload": {"content": SYSTEM_MESSAGES["STEP_LIMIT"].format(steps=steps)}}
                )
                return
            for call in calls:
                if steps >= self.settings.max_steps:
                    session.history.append(
                        self._tool_message(
                            call,
                            f"Not run: this turn reached its limit of {self.settings.max_steps} tool steps. "
                            "Answer the person with what you have.",
                            error=True,
                        )
                    )
                    continue
                steps += 1
                session.history.append(await self._run_call(session, call))
            if steps >= self.settings.max_steps:
                tools = []  # one last answer, in words

    def _cancel_unanswered(self, session: Session) -> list[ToolCall]:
        """The calls of the turn's last answer that got no result (stopped while running or while
        waiting for the person): each gets one, "cancelled", so the history stays whole."""
        answered = {m.tool_call_id for m in session.history if m.role == "tool"}
        last = next((m for m in reversed(session.history) if m.role == "assistant"), None)
        cancelled = [call for call in (last.tool_calls if last else []) if call.id not in answered]
        for call in cancelled:
            message = self._tool_message(call, "Cancelled by the person before it finished.", error=True)
            message.outcome, message.headline = "cancelled", "stopped by the person"
            session.history.append(message)
        return cancelled

    # -- the model -------------------------------------------------------------------------------

    async def _generate(self, session: Session, tools: Sequence[ToolSpec]) -> tuple[str, list[ToolCall]] | None:
        """The model's answer, streamed to the page; retried while nothing has been shown."""
        history = prune_history(session.history, self.settings.history_tokens)
        delay = self.settings.retry_delay_s
        for attempt in range(1, self.settings.retry_attempts + 1):
            parser = ToolBlockParser()
            shown: list[str] = []
            calls: list[ToolCall] = []

            try:
                provider = self.provider_for(session)
                async for event in provider.stream(self.prompt_for(provider), history, tools):
                    if isinstance(event, TextDelta):
                        await self._show(session, parser.feed(event.text), shown, calls)
                    elif isinstance(event, ToolCallEvent):
                        calls.append(event.call)
                await self._show(session, parser.finish(), shown, calls)
                return "".join(shown), calls
            except ProviderError as exc:
                if exc.retryable and not shown and attempt < self.settings.retry_attempts:
                    log.warning(
                        "model failed, retrying in %.1f s (attempt %d of %d): %s",
                        delay,
                        attempt,
                        self.settings.retry_attempts,
                        exc,
                        extra={"session": session.id},
                    )
                    await anyio.sleep(delay)
                    delay *= 2
                    continue
                log.error("model failed: %s", exc, extra={"session": session.id, "attempts": attempt})
                key = "MODEL_BROKE_OFF" if shown else "MODEL_ERROR"
                await session.emit({"type": "error", "payload": {"message": SYSTEM_MESSAGES[key].format(detail=exc)}})
                if shown:
                    session.history.append(ChatMessage(role="assistant", content="".join(shown)))
                return None
        return None  # pragma: no cover - the loop always returns

    @staticmethod
    async def _show(
        session: Session, pieces: list[TextDelta | ToolCall], shown: list[str], calls: list[ToolCall]
    ) -> None:
        for piece in pieces:
            if isinstance(piece, TextDelta):
                if piece.text:
                    shown.append(piece.text)
                    await session.emit({"type": "text", "payload": {"content": piece.text}})
            else:
                calls.append(piece)

    def _resolve(self, name: str) -> ToolEntry:
        """A tool by the name the model wrote: qualified, bare when only one server has it, or a
        provider-mangled spelling of a qualified name (``debrief-calc__run_tool``,
        ``debrief_calc_run_tool``, ``debrief-calc.run_tool``)."""
        try:
            return self.coordinator.resolve(name)
        except UnknownTool:
            found = self._by_spelling.get(_spelling(name))
            if found is None:
                raise
            return self.coordinator.resolve(found)

    # -- tools -------------------------------------------------------------------------------------

    def _tool_message(self, call: ToolCall, content: str, *, error: bool) -> ChatMessage:
        return ChatMessage(
            role="tool",
            content=content,
            tool_call_id=call.id,
            tool_name=call.name or "(unnamed)",
            native=call.native,
            is_error=error,
        )

    async def _step(self, session: Session, call: ToolCall, state: str, message: str, data: dict[str, Any]) -> None:
        """A step's news for the page; a finished one carries its headline and its outcome
        ("done", "failed", "declined")."""
        extra: dict[str, Any] = {"title": step_title(call.name, call.arguments)}
        if state == "complete" and "outcome" not in data:
            failed = bool(data.get("isError"))
            extra["outcome"] = "declined" if data.get("declined") else "failed" if failed else "done"
            extra["headline"] = DECLINED if data.get("declined") else step_headline(data.get("result"), failed=failed)
        await session.emit(
            {
                "type": "status",
                "payload": {
                    "state": state,
                    "tool": call.name,
                    "message": message,
                    "data": {"callId": call.id, **extra, **data},
                },
            }
        )

    async def _refuse(self, session: Session, call: ToolCall, why: str) -> ChatMessage:
        """A call that was not run: the page sees the step fail, the model reads why."""
        await self._step(
            session,
            call,
            "processing",
            f"Calling {call.name or '(unreadable call)'}",
            {"arguments": call.arguments if call.arguments is not None else call.raw},
        )
        await self._step(session, call, "complete", why, {"result": why, "isError": True, "durationMs": 0})
        message = self._tool_message(call, why, error=True)
        message.outcome, message.headline = "failed", step_headline(why, failed=True)
        return message

    async def _run_call(self, session: Session, call: ToolCall) -> ChatMessage:
        log.info("tool call %s", call.name, extra={"session": session.id, "native": call.native})
        if call.error is not None or call.arguments is None:
            return await self._refuse(
                session,
                call,
                f"Your tool call could not be read: {call.error}. Write it again as one JSON object "
                '{"tool": "server:name", "arguments": {…}}' + ("" if call.native else " in a ```tool block") + ".",
            )
        try:
            entry = self._resolve(call.name)
        except UnknownTool as exc:
            close = f" Did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
            known = ", ".join(t.name for t in self.tools[:80])
            return await self._refuse(
                session, call, f"There is no tool named {call.name!r}.{close} The tools are: {known}."
            )
        except HostError as exc:
            return await self._refuse(session, call, str(exc))
        if is_destructive(entry) and entry.qualified_name not in session.always_allowed:
            approved = await self._confirm(session, call, entry)
            if not approved:
                why = f"The person declined to run {entry.qualified_name}. Do not run it again unless they ask."
                await self._step(
                    session,
                    call,
                    "complete",
                    f"Declined: {entry.qualified_name}",
                    {"result": OUTCOME_NOTES["declined"], "isError": True, "declined": True, "durationMs": None},
                )
                message = self._tool_message(call, why, error=True)
                message.outcome, message.headline = "declined", DECLINED
                return message
        await self._step(session, call, "processing", f"Calling {entry.qualified_name}", {"arguments": call.arguments})
        started = time.perf_counter()
        try:
            result = await self.coordinator.call(entry.qualified_name, call.arguments)
        except HostError as exc:
            why = f"I encountered an error when using the {entry.qualified_name} tool: {exc}"
            log.warning("tool call failed: %s", exc, extra={"session": session.id})
            took = _ms(started)
            await self._step(
                session,
                call,
                "complete",
                f"{entry.qualified_name} failed",
                {"result": str(exc), "isError": True, "durationMs": took},
            )
            message = self._tool_message(call, why, error=True)
            message.outcome, message.headline = "failed", step_headline(str(exc), failed=True)
            message.duration_ms = took
            return message
        names = [
            picture_name(entry.qualified_name, call.arguments, result.structured, i.mime_type, k)
            for k, i in enumerate(result.images)
        ]
        for image, name in zip(result.images, names, strict=True):
            await session.emit(
                {
                    "type": "image",
                    "payload": {"mimeType": image.mime_type, "data": image.data, "callId": call.id, "name": name},
                }
            )
        content, page_result, is_error = _result_for_model(result), _result_for_page(result), result.is_error
        ready = result.structured if result.structured.get("status") == "prompt_ready" else None
        host_steps: list[dict[str, Any]] = []
        if ready is not None and not is_error:
            content, page_result, is_error = await self._close_callback(session, entry, ready, host_steps)
        view = view_of(entry.server, entry.tool, call.arguments, result.result)  # MCP Apps: shown live on the page
        took = _ms(started)  # measured once: the step shows it now and after a reload
        kinds = await self._added_kinds(entry, result) if not is_error else None
        headline = step_headline(page_result, failed=is_error, kinds=kinds)
        await self._step(
            session,
            call,
            "complete",
            _error_line(result) if is_error and ready is None else f"{entry.qualified_name} answered",
            {
                "result": page_result,
                "isError": is_error,
                "headline": headline,
                "durationMs": took,
                **({"app": view} if view else {}),
            },
        )
        if len(content) > self.settings.result_chars:
            content = (
                content[: self.settings.result_chars]
                + f" … (cut at {self.settings.result_chars} characters; page with the tool's cursor or ask for less)"
            )
        message = self._tool_message(call, content, error=is_error)
        message.outcome = "failed" if is_error else ""
        message.host_steps = host_steps
        message.headline = headline
        message.images = [
            {"mimeType": i.mime_type, "data": i.data, "name": name}
            for i, name in zip(result.images, names, strict=True)
        ][:4]
        message.duration_ms = took
        message.app = view
        return message

    async def larger_picture(
        self, tool: str, arguments: dict[str, Any], drawn: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The picture of a step drawn again as large as its tool draws (``width``/``height`` at
        their maxima, debrief_render_plot's 2048 px): for the page's "Open full size", without the
        model. Only a read-only tool with both sizes among its parameters is called. ``drawn``:
        what the step's own answer said it drew (its ``time``, ``revision``, ``selectedIds``): the
        same moment is drawn again, and ``changed`` says when the plot has changed since."""
        entry = self._resolve(tool)
        props = entry.tool.input_schema.get("properties") or {}
        sizes = {k: props.get(k, {}).get("maximum") for k in ("width", "height")}
        if is_destructive(entry) or not all(isinstance(v, int) for v in sizes.values()):
            raise HostError(f"{entry.qualified_name} does not draw pictures at a size asked for")
        drawn = drawn or {}
        same = dict(arguments)
        if "time" in props and "time" not in same and isinstance(drawn.get("time"), str):
            same["time"] = drawn["time"]  # the moment the step drew, not the plot's time now
        result = await self.coordinator.call(entry.qualified_name, {**same, **sizes})
        if result.is_error or not result.images:
            raise HostError(_error_line(result) if result.is_error else f"{entry.qualified_name} drew no picture")
        image = result.images[0]
        facts = result.structured
        changed = any(key in drawn and key in facts and drawn[key] != facts[key] for key in ("revision", "selectedIds"))
        return {
            "mimeType": image.mime_type,
            "data": image.data,
            "width": facts.get("width"),
            "height": facts.get("height"),
            "changed": changed,
        }

    def _recorder(
        self, session: Session, call: ToolCall, steps: list[dict[str, Any]]
    ) -> Callable[[str, str, dict[str, Any]], Awaitable[None]]:
        """``_step`` for a step the host takes itself, each finished one kept in ``steps``."""

        async def step(state: str, message: str, data: dict[str, Any]) -> None:
            await self._step(session, call, state, message, data)
            failed = bool(data.get("isError"))
            steps.append(
                {
                    "role": "tool",
                    "tool": call.name,
                    "callId": call.id,
                    "arguments": call.arguments,
                    "result": data.get("result"),
                    "isError": failed,
                    "outcome": "failed" if failed else "done",
                    "title": step_title(call.name, call.arguments),
                    "headline": step_headline(data.get("result"), failed=failed),
                    "durationMs": data.get("durationMs"),
                    "images": [],
                }
            )

        return step

    async def _confirm(self, session: Session, call: ToolCall, entry: ToolEntry) -> bool:
        request_id = new_id("r-")
        known, tracks = await self._features_named(entry, call.arguments)
        change = describe_change(entry.qualified_name, call.arguments, known, tracks)
        message = {
            "type": "confirm",
            "payload": {
                "requestId": request_id,
                "tool": entry.qualified_name,
                "title": step_title(entry.qualified_name, call.arguments),
                "change": change,
                "arguments": call.arguments,
                "message": f"This will {change}. Allow it?",
            },
        }
        pending = PendingConfirm(request_id, message)
        session.confirms[request_id] = pending
        log.info("waiting for the person's approval of %s", entry.qualified_name, extra={"session": session.id})
        await session.emit(message)
        with anyio.move_on_after(self.settings.confirm_timeout_s):
            await pending.answered.wait()
        session.confirms.pop(request_id, None)
        log.info("approval of %s: %s", entry.qualified_name, pending.approve, extra={"session": session.id})
        return pending.approve

    async def _features_named(self, entry: ToolEntry, arguments: Any) -> tuple[Known, list[str] | None]:
        """The features a destructive call names, read from its own server's
        ``debrief_get_features`` (cheap summaries) so the person is asked by name; and the ids of
        the plot's tracks, to say when a call takes them all. Nothing when there is no such tool
        or the read fails: the ids say it then."""
        ids = change_ids(entry.qualified_name, arguments)
        reader = f"{entry.server}:{FEATURES_READER}"
        if not ids or reader not in {t.name for t in self.tools}:
            return {}, None
        filename = arguments.get("filename") if isinstance(arguments, dict) else None
        plot = {"filename": filename} if isinstance(filename, str) else {}
        try:
            named = await self.coordinator.call(reader, {**plot, "ids": ids[:100], "limit": 100})
            tracked = await self.coordinator.call(reader, {**plot, "kinds": ["track"], "limit": 100})
        except HostError as exc:
            log.info("names for the confirmation not read: %s", exc)
            return {}, None
        if named.is_error or tracked.is_error:
            return {}, None
        known = {str(f["id"]): f for f in named.structured.get("features") or [] if isinstance(f, dict) and "id" in f}
        complete = tracked.structured.get("next_cursor") is None
        tracks = [str(f.get("id")) for f in tracked.structured.get("features") or [] if isinstance(f, dict)]
        return known, tracks if complete else None

    async def _added_kinds(self, entry: ToolEntry, result: ToolResult) -> dict[str, int] | None:
        """The features a plot change added, counted by kind (``2 tracks and 19 narrative
        entries``), read with the server's own ``debrief_get_features``; None when it cannot say."""
        added, filename = result.structured.get("added_ids"), result.structured.get("filename")
        reader = f"{entry.server}:{FEATURES_READER}"
        if not isinstance(added, list) or not added or not isinstance(filename, str):
            return None
        if reader not in {t.name for t in self.tools} or len(added) > 1000:
            return None
        try:
            read = await self.coordinator.call(reader, {"filename": filename, "ids": added, "limit": 1000})
        except HostError as exc:
            log.info("kinds of the added features not read: %s", exc)
            return None
        features = read.structured.get("features")
        if read.is_error or not isinstance(features, list) or read.structured.get("next_cursor"):
            return None
        return kinds_of(features)

    async def _close_callback(
        self, session: Session, entry: ToolEntry, ready: dict[str, Any], steps: list[dict[str, Any]]
    ) -> tuple[str, Any, bool]:
        """``prompt_ready``: the host's model answers the prompt, the callback tool stores it; the
        step the host took is added to ``steps`` as the page draws it after a reload."""
        prompt = ready.get("promptForHostLLM")
        callback = ready.get("callbackTool")
        args = ready.get("callbackArgs")
        if not isinstance(prompt, str) or not isinstance(callback, str) or not isinstance(args, dict):
            why = "the tool answered prompt_ready without promptForHostLLM, callbackTool and callbackArgs"
            return why, why, True
        target = callback if ":" in callback else f"{entry.server}:{callback}"
        task = args.get("task") if isinstance(args.get("task"), str) else None
        try:
            callback_entry = self.coordinator.resolve(target)
        except HostError as exc:
            return str(exc), str(exc), True
        accepts_model = "model" in (callback_entry.tool.input_schema.get("properties") or {})
        provider = self.provider_for(session)
        marker = ToolCall(new_id("cb-"), target, {"task": task}, native=True)
        step = self._recorder(session, marker, steps)
        await self._step(
            session,
            marker,
            "processing",
            f"The host's model is answering the tool's prompt ({task or 'no task named'})",
            {"arguments": {"task": task, "promptChars": len(prompt)}},
        )
        started = time.perf_counter()
        question = prompt
        last_error = ""
        for attempt in range(1, self.settings.callback_attempts + 1):
            try:
                answer = await provider.complete(question, task=task)
            except ProviderError as exc:
                last_error = f"the host's model could not answer the prompt: {exc}"
                break
            stored_args = {**args, "result": answer}
            if accepts_model:
                stored_args["model"] = provider.model
            try:
                stored = await self.coordinator.call(target, stored_args)
            except HostError as exc:
                last_error = str(exc)
                break
            if not stored.is_error:
                await step(
                    "complete",
                    f"Stored through {target}",
                    {"result": _result_for_page(stored), "isError": False, "durationMs": _ms(started)},
                )
                summary = (
                    f"The tool handed the host a {task or ''} prompt; the host's model answered it and "
                    f"{target} stored the answer: {_result_for_model(stored)}"
                )
                return summary, _result_for_page(stored), False
            last_error = stored.text or json.dumps(stored.structured)
            log.warning(
                "callback answer refused (attempt %d): %s", attempt, last_error[:300], extra={"session": session.id}
            )
            question = (
                f"{prompt}\n\nYour previous answer was refused: {last_error[:1500]}\nAnswer again, exactly as asked."
            )
        await step(
            "complete",
            f"{target} refused the answer",
            {"result": last_error, "isError": True, "durationMs": _ms(started)},
        )
        return f"The host could not complete the {task or ''} prompt: {last_error}", last_error, True


def _spelling(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _error_line(result: ToolResult) -> str:
    """What went wrong, in the words of the server: its error message, else its text."""
    error = result.structured.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) and message else result.text or f"{result.qualified_name} failed"
    return clip(text, 300)


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
