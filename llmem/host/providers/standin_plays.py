"""The stand-in's plays: a scripted but honest plan for each request it can play, keyed on the
person's words, that finds everything through the tools and reads each answer for the next
call's input. Nothing of the workspace is known in advance: the REP files come from the plot
listing, the track ids and refs from the imports, the figure of the answer from the analysis.

A play looks at the turn so far (the calls made since the person's message, with their results)
and answers either the next call or its last words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from llmem.host.chat import ChatMessage, ToolCall, ToolSpec, new_id
from llmem.host.steps import as_data, clip, clock, day, step_headline, step_title

__all__ = ["PLAYS", "SUGGESTIONS", "Done", "play_for"]

LIST = "debrief-state:debrief_list_plots"
RUN = "debrief-calc:run_tool"
CREATE = "debrief-state:debrief_create_plot"
RENDER = "debrief-state:debrief_render_plot"

#: what the page offers as suggestions: the requests the stand-in plays through
SUGGESTIONS = (
    "What was the closest approach between NELSON and COLLINGWOOD?",
    "List the plots and REP files in this workspace",
    "What can you do?",
)


@dataclass
class Done:
    """A step of this turn: the call and its result (parsed), failed or not."""

    call: ToolCall
    data: Any
    failed: bool
    outcome: str

    def is_run(self, analysis: str) -> bool:
        return self.call.name == RUN and (self.call.arguments or {}).get("tool") == analysis


Next = ToolCall | str  # the next call, or the last words
Play = Callable[[str, list[Done], Sequence[ToolSpec]], Next]


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(new_id("s-"), name, arguments, native=True, raw=json.dumps(arguments))


def turn_so_far(history: Sequence[ChatMessage]) -> tuple[str, list[Done]]:
    """The person's last message and the steps taken since, each call with its result."""
    start = max((i for i, m in enumerate(history) if m.role == "user"), default=-1)
    calls = {c.id: c for m in history[start + 1 :] for c in m.tool_calls}
    done = [
        Done(calls[m.tool_call_id], as_data(m.content), m.is_error, m.outcome)
        for m in history[start + 1 :]
        if m.role == "tool" and m.tool_call_id in calls
    ]
    return (history[start].content if start >= 0 else ""), done


def _stopped(step: Done) -> str:
    what = step_title(step.call.name, step.call.arguments)
    if step.outcome in ("declined", "cancelled"):
        return f"`{what}` was {step.outcome}, so I stopped there."
    return f"`{what}` failed: {step_headline(step.data, failed=True, limit=300)}. I stopped there."


def _listing(done: list[Done]) -> dict[str, Any] | None:
    found = next((d.data for d in done if d.call.name == LIST and isinstance(d.data, dict)), None)
    return found


def _tracks(done: list[Done]) -> list[dict[str, Any]]:
    """Each imported track: its id, name and the ref of that one result."""
    out = []
    for step in done:
        if step.is_run("import-rep") and isinstance(step.data, dict):
            out += [f for f in step.data.get("features") or [] if isinstance(f, dict) and f.get("kind") == "track"]
    return out


def _narratives(done: list[Done]) -> list[str]:
    """The ref of each import's narrative entries (a ship's log), to go into the plot with the tracks."""
    refs = []
    for step in done:
        told = step.data.get("narratives") if step.is_run("import-rep") and isinstance(step.data, dict) else None
        if isinstance(told, dict) and isinstance(told.get("ref"), str):
            refs.append(told["ref"])
    return refs


def _named(question: str, tracks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The two tracks the question names (by name, any case), else the first two imported."""
    words = question.lower()
    named = [t for t in tracks if str(t.get("name", "")).lower() in words]
    return (named if len(named) >= 2 else tracks)[:2]


def _new_plot_name(a: str, b: str, listing: dict[str, Any]) -> str:
    taken = set(listing.get("other_plots") or []) | {p.get("filename") for p in listing.get("open_plots") or []}
    stem = re.sub(r"[^a-z0-9]+", "-", f"{a} {b}".lower()).strip("-") or "ships"
    name, n = f"{stem}.plot.json", 2
    while name in taken:
        name, n = f"{stem}-{n}.plot.json", n + 1
    return name


def closest_approach(question: str, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
    """List the workspace, import each REP file, make a plot of the two ships and the logs' narrative
    entries, find the closest approach
    of the two ships named, show it, and answer with the figure of the analysis."""
    listing = _listing(done)
    if listing is None:
        return _call(LIST, {})
    reps = [str(r) for r in listing.get("rep_files") or []]
    if not reps:
        return "The workspace has no REP files to import (`debrief_list_plots` lists none), so I have no tracks."
    imported = {(d.call.arguments or {}).get("parameters", {}).get("path") for d in done if d.is_run("import-rep")}
    waiting = [r for r in reps[:6] if r not in imported]
    if waiting:
        return _call(RUN, {"tool": "import-rep", "parameters": {"path": waiting[0]}})
    tracks = _named(question, _tracks(done))
    if len(tracks) < 2:
        return f"The REP files ({', '.join(reps)}) hold {len(tracks)} track; a closest approach needs two."
    a, b = tracks
    made = next((d for d in done if d.call.name == CREATE), None)
    if made is None:
        refs = [{"ref": str(t["ref"])} for t in tracks] + [{"ref": r} for r in _narratives(done)]
        return _call(CREATE, {"filename": _new_plot_name(a["name"], b["name"], listing), "features": refs})
    plot = str((made.call.arguments or {}).get("filename"))
    cpa = next((d for d in done if d.is_run("closest-approach")), None)
    if cpa is None:
        features = [{"ref": str(t["ref"])} for t in tracks]
        return _call(RUN, {"tool": "closest-approach", "features": features, "parameters": {"distance_unit": "yd"}})
    if cpa.failed:
        return _stopped(cpa)
    found = (cpa.data.get("features") or [{}])[0].get("properties", {})
    render = next((d for d in done if d.call.name == RENDER), None)
    if render is None:
        return _call(
            RENDER, {"filename": plot, "fit": "all", "time": found["time"], "cpa": [str(a["id"]), str(b["id"])]}
        )
    sentence = (
        f"The closest approach between {a['name']} and {b['name']} was {found['range']:.1f} "
        f"{found['distance_unit']} at {clock(found['time'])} on {day(found['time'])}."
    )
    shown = (
        f"The picture shows {plot} at that moment."
        if not render.failed
        else f"(The picture could not be drawn: {step_headline(render.data, failed=True)}.)"
    )
    return f"{sentence}\n\n{shown} _The stand-in wrote this from the tools' results; no model was asked._\n"


def list_workspace(question: str, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
    """What the workspace holds: its plots and its REP files."""
    listing = _listing(done)
    if listing is None:
        return _call(LIST, {})
    plots = [p.get("filename") for p in listing.get("open_plots") or []] + list(listing.get("other_plots") or [])
    reps = list(listing.get("rep_files") or [])
    said = (
        f"{len(plots)} plot{'s' if len(plots) != 1 else ''}" + (f" ({', '.join(map(str, plots))})" if plots else "")
    ) + (f" and {len(reps)} REP file{'s' if len(reps) != 1 else ''}" + (f" ({', '.join(reps)})" if reps else ""))
    more = listing.get("more_plots") or 0
    return f"The workspace has {said}." + (f" {more} more plots are not listed." if more else "") + "\n"


#: (words that start the play, the play); the first whose words all appear wins
PLAYS: tuple[tuple[tuple[str, ...], Play], ...] = (
    (("closest approach",), closest_approach),
    (("cpa",), closest_approach),
    (("list",), list_workspace),
    (("which", "plot"), list_workspace),
)


def play_for(question: str) -> Play | None:
    lowered = question.lower()
    for words, play in PLAYS:
        if all(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words):
            return _stopping(play)
    return None


def _stopping(play: Play) -> Play:
    """The play, ended at a step that failed or was declined: it says so instead of going on."""

    def run(question: str, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
        if done and (done[-1].failed or done[-1].outcome):
            return _stopped(done[-1])
        return play(question, done, tools)

    return run


def report(done: list[Done]) -> str:
    """After calls the person asked for by name: what each did, in one line each."""
    lines = []
    for step in done:
        what = step_title(step.call.name, step.call.arguments)
        if step.outcome in ("declined", "cancelled"):
            lines.append(f"- `{what}` was {step.outcome}.")
        elif step.failed:
            lines.append(f"- `{what}` failed: {step_headline(step.data, failed=True, limit=300)}")
        else:
            said = step_headline(step.data, limit=300) or clip(json.dumps(step.data, ensure_ascii=False), 300)
            lines.append(f"- `{what}` answered: {said}")
    return "\n".join(lines).replace("`" * 3, "'" * 3) + "\n"  # a quoted fence would read as a new call
