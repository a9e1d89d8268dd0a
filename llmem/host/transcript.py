"""A chat as the page draws it (after a reconnect) and as a person takes it away: Markdown with
its pictures inline (data URLs), or JSON with every step's arguments and result.

One reading of the history serves all three: :func:`page_history` is what the page draws,
:func:`to_json` wraps it with the chat's name and dates, :func:`to_markdown` writes it for a
person (questions, answers, each step in a line with its details folded, pictures shown).
"""

from __future__ import annotations

import json
import re
import textwrap
import time
from collections.abc import Sequence
from typing import Any

from llmem.host.chat import ChatMessage
from llmem.host.orchestrator import OUTCOME_NOTES, STOPPED
from llmem.host.sessions import Session
from llmem.host.steps import step_title

__all__ = ["EXPORT_FORMAT", "export_name", "page_history", "to_json", "to_markdown"]

EXPORT_FORMAT = "llmem-host chat"
_DETAIL_CHARS = 4000  # of a step's arguments or result, in the Markdown (the JSON has them whole)
_MARKS = {"done": "✓", "failed": "✗", "declined": "⊘", "cancelled": "■"}


def page_history(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as the page draws it: questions (with their attached files), answers,
    and each tool step with its outcome, headline, pictures and live view."""
    calls = {c.id: c for m in history for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    for m in history:
        if m.role == "user":
            entry: dict[str, Any] = {"role": "user", "content": m.shown if m.shown is not None else m.content}
            if m.attachments:
                entry["attachments"] = m.attachments
            out.append(entry)
        elif m.role == "assistant":
            if m.content.strip():
                out.append({"role": m.role, "content": m.content})
        else:
            call = calls.get(m.tool_call_id or "")
            try:
                result: Any = json.loads(m.content)
            except ValueError:
                result = m.content[:20_000]
            result = OUTCOME_NOTES.get(m.outcome, result)  # the person's words, not the model's
            out.append(
                {
                    "role": "tool",
                    "tool": m.tool_name,
                    "callId": m.tool_call_id,
                    "arguments": call.arguments if call else None,
                    "result": result,
                    "isError": m.is_error,
                    "outcome": m.outcome or ("failed" if m.is_error else "done"),
                    "title": step_title(m.tool_name or "", call.arguments if call else None),
                    "headline": m.headline,
                    "durationMs": m.duration_ms,
                    "images": m.images,
                    **({"app": m.app} if m.app else {}),
                }
            )
            out += m.host_steps  # the callback's store, which the host ran itself, after the call
    return out


def _utc(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def to_json(session: Session, model: str) -> dict[str, Any]:
    """The chat whole: its name, when it began and was last active, the model, every message and step."""
    summary = session.summary()
    return {
        "format": EXPORT_FORMAT,
        "version": 1,
        "title": summary["title"],
        "createdAt": _utc(session.created_at),
        "lastActiveAt": _utc(session.last_active_at),
        "exportedAt": _utc(time.time()),
        "model": model,
        "messages": page_history(session.history),
    }


def _fenced(value: Any, limit: int = _DETAIL_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit:,} more characters: the JSON export has them all)"
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{'json' if not isinstance(value, str) else ''}\n{text}\n{fence}"


def _indented(text: str) -> str:
    """``text`` as the body of a list item: every line two spaces in (a fenced block's lines too,
    or a CommonMark reader ends the item, and the fence with it, at the first line that is not)."""
    return textwrap.indent(text, "  ")


def _step_markdown(step: dict[str, Any]) -> list[str]:
    """A step as a list item: its line, then, inside the item, its details folded and its pictures."""
    outcome = str(step.get("outcome") or "done")
    tool = str(step.get("tool") or "")
    server = tool.split(":", 1)[0] if ":" in tool else ""
    name = f"{server}:{step.get('title')}" if server else str(step.get("title"))
    headline = f" — {step['headline']}" if step.get("headline") else ""
    lines = [f"- {_MARKS.get(outcome, '✓')} `{name}` {outcome}{headline}"]
    details: list[str] = []
    if step.get("arguments") is not None:
        details += ["Arguments:", _fenced(step["arguments"])]
    if step.get("result") is not None:
        details += ["Result:" if outcome in ("done", "failed") else "Outcome:", _fenced(step["result"])]
    if details:
        body = "\n\n".join(["<details><summary>Details</summary>", *details, "</details>"])
        lines += ["", _indented(body)]
    for k, image in enumerate(step.get("images") or []):
        mime, data = str(image.get("mimeType", "image/png")), str(image.get("data", ""))
        lines += ["", _indented(f"![{step.get('title')} picture {k + 1}](data:{mime};base64,{data})")]
    return [*lines, ""]


def to_markdown(session: Session, model: str) -> str:
    """The chat for a person to read or keep: name, dates, then each question, its steps and the
    answer; pictures inline as data URLs, so the one file holds them."""
    data = to_json(session, model)
    lines = [
        f"# {data['title'] or 'Chat'}",
        "",
        f"*Exported from llmem-host at {data['exportedAt']} · began {data['createdAt']} · model: {model}*",
    ]
    for m in data["messages"]:
        role = m.get("role")
        if role == "user":
            lines += ["", "## You", "", str(m.get("content") or "")]
            files = [str(a.get("name")) for a in m.get("attachments") or []]
            if files:
                lines += ["", "Attached: " + ", ".join(f"`{f}`" for f in files)]
            lines += ["", "## Answer", ""]
        elif role == "assistant":
            text = str(m.get("content") or "")
            lines += ["", "*Stopped.*" if text == STOPPED else text]
        else:
            lines += _step_markdown(m)
    # one blank line between blocks (a code block's own blank lines, inside one entry, stay)
    kept = [line for k, line in enumerate(lines) if line or (k and lines[k - 1])]
    return "\n".join(kept).strip("\n") + "\n"


def export_name(session: Session, suffix: str) -> str:
    """A file name for the download: the chat's name in plain letters, e.g. ``closest-approach-nelson.md``."""
    title = str(session.summary()["title"]) or "chat"
    stem = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:60].rstrip("-") or "chat"
    return f"{stem}{suffix}"
