"""The system prompt (seed 004 §2.3 ``compileSystemPrompt``) and the history's token budget."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from llmem.host.chat import ChatMessage, ToolSpec

__all__ = ["BASE_PROMPT", "TOOL_BLOCK_RULES", "compile_system_prompt", "estimate_tokens", "prune_history"]

BASE_PROMPT = """\
You are the assistant of a local chat host. You help a person with their work by talking with \
them and by calling the tools of the MCP servers listed below: maritime plots and analysis \
(Debrief) and a memory of a codebase (llmem), as configured.

- Call a tool whenever the answer depends on the person's files, plots or code; never invent \
figures, names or results. Answer from what the tools return, with the figures and units they give.
- Read each tool's answer for the next step: refs (`stored.ref`, `stored.use`), ids, cursors \
and `nextAction` tell you what to call next.
- When a tool answers with an error, read its message: it names the field, the rule and the \
fix. Correct the call, or explain to the person what went wrong.
- Some tools hand the host a prompt (`prompt_ready`); the host answers it and stores the result \
itself, and you get the stored result back.
- Tools that change or delete things wait for the person's approval; if they decline, do not \
try again unless they ask.
- Pictures a tool returns are shown to the person directly; you do not need to describe every pixel.
- Be brief and concrete. Use Markdown for lists and tables."""

TOOL_BLOCK_RULES = """\
## How to call a tool

When you need a tool, write the call as one JSON object in a fenced block marked `tool`, \
exactly like this, and then stop writing:

```tool
{"tool": "server:tool_name", "arguments": {"name": "value"}}
```

Use the qualified name (`server:tool`) from the list below and arguments that match its \
parameters. One block per call. The host runs it and gives you the result in the next message."""


def estimate_tokens(text: str) -> int:
    """A rough count (four characters a token), enough to keep a history inside a budget."""
    return len(text) // 4 + 1


def _message_tokens(message: ChatMessage) -> int:
    extra = sum(estimate_tokens(c.raw or json.dumps(c.arguments)) + 8 for c in message.tool_calls)
    return estimate_tokens(message.content) + extra + 4


def _tool_line(tool: ToolSpec) -> str:
    props = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    params = ", ".join(f"{name}{'' if name in required else '?'}" for name in props)
    first = (tool.description or "").strip().splitlines()[0] if tool.description else ""
    mark = " [asks the person first]" if tool.destructive else ""
    return f"- `{tool.name}`({params}){mark}: {first}"


def compile_system_prompt(
    tools: Sequence[ToolSpec],
    guides: Mapping[str, str],
    *,
    native_tools: bool,
    base: str = BASE_PROMPT,
) -> str:
    """Base instructions, the tool-call format (when calls come as text), the tool list and each
    server's ``tool-descriptions`` guide (or the coordinator's fallback written from tools/list)."""
    parts = [base]
    if not native_tools:
        parts.append(TOOL_BLOCK_RULES)
        parts.append(
            "## Tools and their parameters\n\n"
            + "\n".join(
                f"### `{t.name}`\n{t.description.strip()}\nParameters (JSON Schema): {json.dumps(t.input_schema, separators=(',', ':'))}"
                for t in tools
            )
        )
    else:
        parts.append("## Tools\n\n" + "\n".join(_tool_line(t) for t in tools))
    for server, guide in guides.items():
        parts.append(f"## Guide of the server `{server}` (call its tools as `{server}:<tool>`)\n\n{guide.strip()}")
    return "\n\n".join(parts) + "\n"


def prune_history(history: Sequence[ChatMessage], budget_tokens: int) -> list[ChatMessage]:
    """The newest messages that fit the budget. The last user message is always kept, and the
    kept part never starts with tool results whose call was cut off."""
    kept: list[ChatMessage] = []
    used = 0
    last_user = max((i for i, m in enumerate(history) if m.role == "user"), default=0)
    for index in range(len(history) - 1, -1, -1):
        cost = _message_tokens(history[index])
        if used + cost > budget_tokens and index < last_user:
            break
        kept.append(history[index])
        used += cost
    kept.reverse()
    while kept and kept[0].role == "tool":
        kept.pop(0)
    return kept
