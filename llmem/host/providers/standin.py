"""The deterministic stand-in: a scripted "model" for offline demos and tests, labelled as such.

It calls no model. In a chat it plays a few requests through with the tools (the closest approach
of two ships, a ship's speed and position at a time, the last hour of an exercise, the
workspace's listing: see :mod:`standin_plays`), says what it can play ("help", "What can you
do?"), and to anything else says plainly that it cannot answer, being no model, and what it can
do instead. For developers it lists the tools ("tools"), runs what the person writes as ``/tool
server:name {json}`` (natively) or as a ```tool block (through the host's block parser), and
after such a step reports each result's headline in a line. Handed a tool's prompt (the callback
protocol) it answers from the prompt's own text: JSON notes for llmem's annotate, figure lists
for the calc server's summaries.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from llmem.host.chat import ChatMessage, StreamEvent, TextDelta, ToolCall, ToolCallEvent, ToolSpec, new_id
from llmem.host.providers.base import Provider, ProviderSettings
from llmem.host.providers.standin_plays import (
    CAN_DO,
    LIST,
    RUN,
    SUGGESTIONS,
    Question,
    play_for,
    report,
    turn_so_far,
)
from llmem.host.steps import clip

__all__ = ["GUIDE", "StandInProvider", "stand_in_answer"]

_NOTICE = "(written by the deterministic stand-in, not a model)"


def _figures(lines: list[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    """The indented ``key: value`` block of a calc prompt's "Figures:" as a dict (lists of
    ``[n]:`` entries under ``key: N entries:``; values are JSON, else kept as text)."""
    found: dict[str, Any] = {}
    while i < len(lines):
        line = lines[i]
        here = len(line) - len(line.lstrip())
        if not line.strip() or here < indent or line.lstrip().startswith("["):
            break
        key, _, value = line.strip().partition(":")
        value = value.strip()
        i += 1
        if re.fullmatch(r"\d+ entries:", value):
            items = []
            while i < len(lines) and lines[i].strip().startswith("[") and len(lines[i]) - len(lines[i].lstrip()) > here:
                item, i = _figures(lines, i + 1, len(lines[i]) - len(lines[i].lstrip()) + 1)
                items.append(item)
            found[key] = items
        elif not value:
            found[key], i = _figures(lines, i, here + 1)
        else:
            try:
                found[key] = json.loads(value)
            except ValueError:
                found[key] = value
    return found, i


def _results_in(prompt: str) -> list[tuple[str, dict[str, Any]]]:
    """(tool, figures) of each ``### Result … — tool NAME`` block of a summarize-analysis prompt."""
    out = []
    for block in prompt.split("\n### Result ")[1:]:
        tool = re.search(r"— tool (\S+)", block)
        lines = block.split("\nFigures:\n", 1)[-1].splitlines()
        if tool:
            out.append((tool.group(1), _figures(lines, 0, 1)[0]))
    return out


def _summarize_analysis(prompt: str) -> str:
    lines = [f"# Analysis summary {_NOTICE}", ""]
    for tool, f in _results_in(prompt):
        if tool == "closest-approach":
            lines.append(
                f"- **{f['name']}**: {f['range']:.1f} {f['distance_unit']} at {f['time']}, "
                f"bearing {f['bearing']:.1f}° from {f['name'].split()[1]}."
            )
        elif tool == "track-stats":
            s = f["statistics"]
            lines.append(
                f"- **{f['track_name']}**: {s['point_count']} fixes from {s['start']} to {s['end']}, "
                f"{s['distance_nm']:.2f} nm at a mean {s['mean_speed_kn']:.1f} kn (max {s['max_speed_kn']:.1f} kn)."
            )
        elif tool == "speed-filter":
            for p in f["periods"]:
                lines.append(
                    f"- **{f['name']}**: {p['start']} to {p['end']} ({p['duration_s'] / 60:.0f} min, "
                    f"mean {p['mean_speed_kn']:.1f} kn)."
                )
        elif tool == "zone-transits":
            for t in f["transits"]:
                lines.append(
                    f"- **{f['name']}**: entered {t['entry_time']}, left {t['exit_time']} "
                    f"({t['duration_s'] / 60:.1f} min inside)."
                )
            if not f["transits"]:
                lines.append(f"- **{f['name']}**: never inside.")
    return "\n".join(lines) + "\n"


def _summarize_plot(prompt: str) -> str:
    window = re.search(r"^Time window: ([^,\s]+) \.\. ([^,\s]+)", prompt, re.M)
    rows = re.findall(
        r"^- \[(\w+)\] id=(\S+)(?: name=(.+?))? points=(\d+)(?: time=(\S+?)\.\.(\S+))?(?: bounds=|$)", prompt, re.M
    )
    tracks = [(name, start, end, points) for kind, _, name, points, start, end in rows if kind == "track"]
    zones = [name for kind, _, name, *_ in rows if kind == "zone"]
    marks = [name for kind, _, name, *_ in rows if kind in ("annotation", "point") and name]
    notes = sum(1 for kind, _, name, *_ in rows if kind == "annotation" and not name)
    lines = [f"# Plot summary {_NOTICE}", ""]
    if window:
        lines.append(f"Covers {window.group(1)} to {window.group(2)}.")
        lines.append("")
    for name, start, end, points in tracks:
        lines.append(f"- **{name}**: track of {points} fixes, {start} to {end}.")
    if zones:
        lines.append(f"- Zones: {', '.join(zones)}.")
    if marks:
        lines.append(f"- Reference marks: {', '.join(marks)}.")
    if notes:
        lines.append(f"- {notes} narrative entries from the ships' logs.")
    return "\n".join(lines) + "\n"


def stand_in_answer(prompt: str, task: str) -> str:
    """STAND-IN FOR THE HOST'S MODEL: answers from the prompt's own text, deterministically."""
    if task == "annotate":
        listed = re.split(r"^Keys .*qualified names.*$", prompt, maxsplit=1, flags=re.MULTILINE)[-1]
        names = re.findall(r"^- (\S+)$", listed, flags=re.MULTILINE)
        docs = dict(re.findall(r"`([^`]+)` \(lines [^)]*\): [^\n]*? — ([^\n]+)", prompt))
        return json.dumps(
            {
                "symbols": {
                    n: {"description": f"(stand-in) {docs.get(n, n.rsplit('.', 1)[-1] + ', as outlined')}"}
                    for n in names
                }
            }
        )
    if task == "summarize-analysis":
        return _summarize_analysis(prompt)
    if task == "summarize-plot":
        return _summarize_plot(prompt)
    return f"# {task} {_NOTICE}\n"


_CALL = re.compile(r"^\s*/tool\s+(\S+)\s*(\{.*\})?\s*$", re.S)
#: where the stand-in sends a person who wants a model: the docs in the clone (no web address, which
#: an isolated network could not reach)
GUIDE = "docs/chat-host.md (With a model)"
_HELP = re.compile(
    r"^\W*(what can you do|what do you do|help|hi|hello|hey|who are you|what are you)\b[\w\s]{0,20}\W*$", re.I
)
_NO_PLOTS = (
    "The servers configured here have no plot tools (debrief-state and debrief-calc), so the "
    "requests I can play through cannot run.\n"
)
_ME = (
    "\n*I am the deterministic stand-in, not a language model: I follow a script so the page can be tried "
    f"without one. To ask anything, start llmem-host with a model: the repository's {GUIDE} says how.*\n"
)
_DEVELOPER = (
    '\nFor developers: `tools` lists the tools; `/tool server:name {"arg": …}` calls one; so does a '
    'fenced block marked `tool` holding `{"tool": …, "arguments": {…}}`.\n'
)


def _playable(tools: Sequence[ToolSpec]) -> bool:
    return {LIST, RUN} <= {t.name for t in tools} or not tools


def _help(tools: Sequence[ToolSpec]) -> str:
    """What the stand-in can do, for a person: its plays in words, when the servers have their tools."""
    if not _playable(tools):
        return _NO_PLOTS + _ME
    return (
        "I can play these requests through, finding everything with the tools and showing each step:\n" + CAN_DO + _ME
    )


def _cannot(question: Question, tools: Sequence[ToolSpec]) -> str:
    """Anything else: said plainly, with what it can do instead."""
    files = ""
    if question.files:
        names = ", ".join(f"`{f}`" for f in question.files)
        files = f"Your file{'s are' if len(question.files) > 1 else ' is'} saved in the workspace ({names}). "
    asked = clip(question.text, 80)
    opening = (
        f"I cannot answer “{asked}”: I am the deterministic stand-in, not a language model, and I understand "
        "only a few requests."
        if asked
        else "I am the deterministic stand-in, not a language model: I understand only a few requests."
    )
    can = ("What I can do:\n" + CAN_DO) if _playable(tools) else _NO_PLOTS
    return f"{files}{opening}\n\n{can}" + _ME


def _pieces(text: str, size: int = 24) -> list[str]:
    """The text in short pieces, as a model streams it."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class StandInProvider(Provider):
    name = "stand-in"
    suggestions = SUGGESTIONS

    def __init__(self, settings: ProviderSettings | None = None) -> None:
        super().__init__(settings or ProviderSettings("deterministic stand-in"))

    @property
    def label(self) -> str:
        return "deterministic stand-in · not a model"

    def _reply(self, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> tuple[str, list[ToolCall]]:
        if not history:
            return _help(tools), []
        question, done = turn_so_far(history)
        play = play_for(question) if _playable(tools) else None
        if play is not None:
            step = play(question, done, tools)
            return ("", [step]) if isinstance(step, ToolCall) else (step, [])
        if done:  # calls the person asked for by name (/tool, a block): what each did
            return report(done), []
        text = question.text.strip()
        if "```tool" in text:
            return "Calling the tool in your block.\n" + text[text.index("```tool") :], []
        match = _CALL.match(text)
        if match:
            raw = match.group(2) or "{}"
            try:
                arguments = json.loads(raw)
            except ValueError as exc:
                return f"`/tool` needs a JSON object after the name ({exc}).\n", []
            return "", [ToolCall(new_id("s-"), match.group(1), arguments, native=True, raw=raw)]
        if text.lower() == "tools":  # the developer's listing
            listing = "\n".join(f"- `{t.name}`: {clip(t.description.splitlines()[0], 120)}" for t in tools)
            return "The tools of the servers:\n" + listing + "\n" + _DEVELOPER, []
        if _HELP.match(text) and not question.files:
            return _help(tools), []
        return _cannot(question, tools), []

    async def stream(
        self, system: str, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        text, calls = self._reply(history, tools)
        for piece in _pieces(text):
            if piece:
                yield TextDelta(piece)
        for call in calls:
            yield ToolCallEvent(call)

    async def complete(self, prompt: str, *, task: str | None = None) -> str:
        return stand_in_answer(prompt, task or "")
