"""The seed's delimited tool calls: ```tool {"tool": …, "arguments": {…}} ``` inside streamed text.

Models without native tool calls (and some with) write their calls as fenced blocks. The text
arrives in pieces, and a fence can be split anywhere, even inside "```tool", so the parser holds
back only what could still turn out to be a fence and lets the rest stream on.
"""

from __future__ import annotations

import json
from typing import Any

from llmem.host.chat import TextDelta, ToolCall, new_id

__all__ = ["ToolBlockParser", "read_block"]

OPEN = "```tool"
CLOSE = "```"

_NAME_KEYS = ("tool", "name", "toolName")
_ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")


def _held_back(text: str, fence: str) -> int:
    """The length of the longest end of ``text`` that is a start of ``fence``."""
    for size in range(min(len(fence) - 1, len(text)), 0, -1):
        if fence.startswith(text[-size:]):
            return size
    return 0


def read_block(body: str) -> ToolCall:
    """A block's JSON as a call; an unreadable one keeps its text and says what is wrong."""
    raw = body.strip()
    call_id = new_id("b-")

    def broken(why: str, name: str = "") -> ToolCall:
        return ToolCall(id=call_id, name=name, arguments=None, native=False, raw=raw, error=why)

    try:
        data: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        return broken(f"the block is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})")
    if not isinstance(data, dict):
        return broken("the block must hold one JSON object")
    name = next((data[k] for k in _NAME_KEYS if isinstance(data.get(k), str)), None)
    if not name:
        return broken('the object has no "tool" name')
    key = next((k for k in _ARGUMENT_KEYS if k in data), None)
    arguments = data[key] if key is not None else {}
    if isinstance(arguments, str):  # some models double-encode the arguments
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return broken('"arguments" is a string that is not a JSON object', name)
    if not isinstance(arguments, dict):
        return broken('"arguments" must be a JSON object', name)
    return ToolCall(id=call_id, name=name, arguments=arguments, native=False, raw=raw)


class ToolBlockParser:
    """Feed the model's text as it arrives; get back plain text and whole ```tool calls."""

    def __init__(self) -> None:
        self._buffer = ""
        self._inside = False

    def feed(self, chunk: str) -> list[TextDelta | ToolCall]:
        self._buffer += chunk
        out: list[TextDelta | ToolCall] = []
        while True:
            if not self._inside:
                at = self._buffer.find(OPEN)
                if at < 0:
                    keep = _held_back(self._buffer, OPEN)
                    text, self._buffer = (
                        self._buffer[: len(self._buffer) - keep],
                        self._buffer[len(self._buffer) - keep :],
                    )
                    if text:
                        out.append(TextDelta(text))
                    return out
                after = self._buffer[at + len(OPEN) :]
                if not after or (after[0].isalnum() or after[0] in "-_"):
                    if after:  # "```tools" or "```toolkit": ordinary text, not our fence
                        out.append(TextDelta(self._buffer[: at + len(OPEN)]))
                        self._buffer = after
                        continue
                    if at:  # the fence's word may go on in the next piece: hold it back
                        out.append(TextDelta(self._buffer[:at]))
                        self._buffer = self._buffer[at:]
                    return out
                if self._buffer[:at]:
                    out.append(TextDelta(self._buffer[:at]))
                self._buffer, self._inside = after, True
            else:
                end = self._buffer.find(CLOSE)
                if end < 0:
                    return out
                out.append(read_block(self._buffer[:end]))
                self._buffer, self._inside = self._buffer[end + len(CLOSE) :], False

    def finish(self) -> list[TextDelta | ToolCall]:
        """The end of the stream: what was held back, or the unclosed block as a broken call."""
        rest, inside = self._buffer, self._inside
        self._buffer, self._inside = "", False
        if inside:
            call = read_block(rest)
            if call.error is None:  # whole JSON, only the closing fence missing: accept it
                return [call]
            call.error = "the ```tool block was not closed with ``` (" + call.error + ")"
            return [call]
        return [TextDelta(rest)] if rest else []
