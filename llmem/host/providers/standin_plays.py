"""The stand-in's plays: a scripted but honest plan for each request it can play, keyed on the
person's words, that finds everything through the tools and reads each answer for the next
call's input. Nothing of the workspace is known in advance: the REP files come from the plot
listing, the tracks from a plot that holds them or from the imports, the figures of the answer
from the analysis.

Every play first needs a plot with the ships asked about (:func:`plot_with`): a plot of the
workspace that holds them is used again (asking the same thing twice makes no second copy);
else each REP file is imported and one plot made of all their tracks and logs. Then:

- the closest approach of two ships (closest-approach, then the picture at that moment);
- a ship's speed, course and position at a time (legacy Debrief's tote against another ship);
- the last hour (or N minutes, N hours) of the exercise (track-stats over it, and its picture);
- what the workspace holds (the listing).

A play looks at the turn so far (the calls made since the person's message, with their results)
and answers either the next call or its last words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from llmem.host.chat import ChatMessage, ToolCall, ToolSpec, new_id
from llmem.host.steps import as_data, clip, clock, day, step_headline, step_title
from llmem.host.uploads import kind_of

__all__ = ["CAN_DO", "PLAYS", "SUGGESTIONS", "Done", "Question", "play_for", "report", "turn_so_far", "warned"]

LIST = "debrief-state:debrief_list_plots"
FEATURES = "debrief-state:debrief_get_features"
RUN = "debrief-calc:run_tool"
CREATE = "debrief-state:debrief_create_plot"
RENDER = "debrief-state:debrief_render_plot"
MAX_IMPORTS = 6  # REP files imported for a new plot
MAX_LOOKS = 3  # plots of the workspace looked into for the ships asked about

#: what the page offers as suggestions: the requests the stand-in plays through
SUGGESTIONS = (
    "What was the closest approach between NELSON and COLLINGWOOD?",
    "What were NELSON's speed and position at 10:30?",
    "Show me the last hour of the exercise",
    "List the plots and REP files in this workspace",
)
#: what it can do, in a person's words, with an example of each
CAN_DO = (
    "- **the closest approach of two ships**: *What was the closest approach between NELSON and COLLINGWOOD?*\n"
    "- **a ship's speed, course and position at a time**: *What were NELSON's speed and position at 10:30?*\n"
    "- **the last hour of an exercise** (or the last 30 minutes, 2 hours…): *Show me the last hour of the exercise*\n"
    "- **what the workspace holds**: *List the plots and REP files in this workspace*\n"
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


@dataclass(frozen=True)
class Question:
    """The person's message: what they typed, and the names of the files they attached."""

    text: str
    files: tuple[str, ...] = ()


Next = ToolCall | str  # the next call, or the last words
Play = Callable[[Question, list[Done], Sequence[ToolSpec]], Next]


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(new_id("s-"), name, arguments, native=True, raw=json.dumps(arguments))


def turn_so_far(history: Sequence[ChatMessage]) -> tuple[Question, list[Done]]:
    """The person's last message and the steps taken since, each call with its result."""
    start = max((i for i, m in enumerate(history) if m.role == "user"), default=-1)
    calls = {c.id: c for m in history[start + 1 :] for c in m.tool_calls}
    done = [
        Done(calls[m.tool_call_id], as_data(m.content), m.is_error, m.outcome)
        for m in history[start + 1 :]
        if m.role == "tool" and m.tool_call_id in calls
    ]
    if start < 0:
        return Question(""), done
    asked = history[start]
    text = asked.shown if asked.shown is not None else asked.content
    return Question(text, tuple(str(f.get("name")) for f in asked.attachments)), done


def _stopped(step: Done) -> str:
    what = step_title(step.call.name, step.call.arguments)
    if step.outcome in ("declined", "cancelled"):
        return f"`{what}` was {step.outcome}, so I stopped there."
    return f"`{what}` failed: {step_headline(step.data, failed=True, limit=300)}. I stopped there."


def _footnote() -> str:
    return " _The stand-in wrote this from the tools' results; no model was asked._\n"


# -- a plot with the ships asked about ------------------------------------------------------------


@dataclass(frozen=True)
class Plot:
    """The plot a play works on, the tracks it uses (summaries: id, name, ref, time span; the
    ones the question names first) and all its tracks."""

    filename: str
    tracks: list[dict[str, Any]]
    every: list[dict[str, Any]]


def _mentions(text: str, name: str) -> bool:
    return bool(name) and re.search(rf"(?<!\w){re.escape(_plain(name))}(?!\w)", _plain(text)) is not None


def _plain(name: str) -> str:
    """A name as compared: lower case, runs of spaces, ``_`` and ``-`` as one space."""
    return re.sub(r"[\s_-]+", " ", name.lower()).strip()


#: words in capitals that are no ship's name
_NOT_SHIPS = frozenset(
    {"cpa", "utc", "gmt", "rep", "dsf", "dtf", "dtg", "atb", "tma", "ok", "nm", "kn", "kts", "yd", "id", "am"}
    | {"pm", "z", "i", "a", "the", "what", "when", "where", "how", "show", "list", "and", "at"}
    | {"yards", "knots", "miles", "metres", "meters", "hours", "minutes", "nmi", "ship", "ships"}
)
#: a pair of ships as people ask about them: "between X and Y", "did X and Y get"
_PAIR = re.compile(
    r"\b(?:between|did|do|were)\s+(?:the\s+)?(?P<a>[\w -]+?)\s+and\s+(?:the\s+)?(?P<b>[\w -]+?)"
    r"(?=\s+(?:get|come|came|pass|approach|closest|nearest|at|on|in|during|over)\b|\s*[?.!,;]|\s*$)",
    re.IGNORECASE,
)
#: what follows "were" when it is no pair of ships ("were the speed and position")
_NOT_PAIR = re.compile(r"\b(speed|course|position|heading|range|bearing)s?\b", re.IGNORECASE)
_CAPITALS = re.compile(r"(?<![\w'])[A-Z][A-Z0-9_]+(?:[ -][A-Z][A-Z0-9_]+)*(?![\w])")
_GENERIC = re.compile(
    r"^(?:the )?(?:two |both )?(?:ships?|them|they|each other|others?|boats?|vessels?|tracks?)$", re.I
)


def asked_names(text: str) -> list[str]:
    """The ship names the question gives (none when it names none): a pair ("between ARGONAUT
    and BLUE HERON", "did nelson and collingwood get…") and words in capitals ("COLLINGWOOD's")."""
    found: list[str] = []
    for pair in _PAIR.finditer(text):
        if not _NOT_PAIR.search(pair.group(0)):
            found += [pair.group("a"), pair.group("b")]
    if text != text.upper():  # capitals mark a name, unless the whole question is in them
        found += [m.group(0) for m in _CAPITALS.finditer(text)]
    names: list[str] = []
    for given in found:
        words = [w for w in re.sub(r"'s$", "", given.strip()).split() if _plain(w) not in _NOT_SHIPS]
        name = " ".join(words)
        if name and not _GENERIC.match(name) and _plain(name) not in {_plain(n) for n in names}:
            names.append(name)
    # a name inside a longer one given ("BLUE" of "BLUE HERON") is that one
    return [n for n in names if not any(n != m and _mentions(m, n) for m in names)]


def _is_named(name: str, track: dict[str, Any]) -> bool:
    called = str(track.get("name", ""))
    return bool(called) and (_mentions(name, called) or _mentions(called, name))


def _missing(question: Question, tracks: list[dict[str, Any]]) -> list[str]:
    """The ships the question names that none of ``tracks`` is."""
    return [n for n in asked_names(question.text) if not any(_is_named(n, t) for t in tracks)]


def _chosen(
    question: Question,
    tracks: list[dict[str, Any]],
    need: int,
    named_only: bool,
    first: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]] | None:
    """The tracks the question names (any case), then ``first`` (an attached file's), then others
    up to ``need``; ``first`` or all of them when it names none. None when there are fewer than
    ``need``, when a ship it names is not among them (never answer about other ships), or
    (``named_only``) when it names none."""
    if _missing(question, tracks):
        return None
    named = [t for t in tracks if _mentions(question.text, str(t.get("name", "")))]
    if named_only and not named:
        return None
    if named:
        rest = [t for t in first if t not in named] + [t for t in tracks if t not in named and t not in first]
        chosen = named + rest[: max(0, need - len(named))]
    elif first:
        chosen = [*first, *[t for t in tracks if t not in first][: max(0, need - len(first))]]
    else:
        chosen = tracks
    return chosen if len(chosen) >= need else None


def _plot_name(tracks: list[dict[str, Any]], listing: dict[str, Any]) -> str:
    taken = set(listing.get("other_plots") or []) | {p.get("filename") for p in listing.get("open_plots") or []}
    names = " ".join(str(t.get("name", "")) for t in tracks[:3])
    stem = re.sub(r"[^a-z0-9]+", "-", names.lower()).strip("-") or "ships"
    name, n = f"{stem}.plot.json", 2
    while name in taken:
        name, n = f"{stem}-{n}.plot.json", n + 1
    return name


def _listed_plots(listing: dict[str, Any]) -> list[str]:
    """The workspace's plots, the open ones first (the one the stand-in made last is open)."""
    opened = [str(p.get("filename")) for p in listing.get("open_plots") or [] if isinstance(p, dict)]
    return opened + [str(p) for p in listing.get("other_plots") or [] if str(p) not in opened]


def _imported_tracks(done: list[Done], files: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The tracks of this turn's imports (of ``files`` alone, when given)."""
    out = []
    for step in done:
        path = (step.call.arguments or {}).get("parameters", {}).get("path")
        if step.is_run("import-rep") and isinstance(step.data, dict) and (files is None or path in files):
            out += [t for t in map(_summary, step.data.get("features") or []) if t.get("kind") == "track"]
    return out


def _summary(feature: Any) -> dict[str, Any]:
    """A feature as the tools summarise it (id, kind, name, time span, ref): a small result comes
    whole (GeoJSON with properties), each of its features stored under its own id."""
    if not isinstance(feature, dict) or not isinstance(feature.get("properties"), dict):
        return feature if isinstance(feature, dict) else {}
    told, times = feature["properties"], feature["properties"].get("timestamps") or [None]
    return {
        "id": feature.get("id"),
        "kind": told.get("kind"),
        "name": told.get("name"),
        "time_start": times[0],
        "time_end": times[-1],
        "ref": f"debrief-calc:results/{feature.get('id')}",
    }


def _attached_reps(question: Question) -> list[str]:
    """The REP files attached to the question: read this turn, whatever the plots hold."""
    return [f for f in question.files if kind_of(f) in ("REP file", "sensor (DSF) file")]


def _to_import(question: Question, reps: list[str]) -> list[str]:
    """The REP files to import, the attached first, then those named like a ship asked about."""
    names = asked_names(question.text)
    attached = _attached_reps(question)
    named = [r for r in reps if r not in attached and any(_mentions(r.rsplit(".", 1)[0], n) for n in names)]
    rest = [r for r in reps if r not in attached and r not in named]
    return attached + (named + rest)[: max(0, MAX_IMPORTS - len(attached))]


def _not_found(missing: list[str], tracks: list[dict[str, Any]], files: list[str], more: int) -> str:
    """A ship asked about that no file read holds, said plainly: never an answer about others."""
    ships = " and ".join(", ".join(str(t.get("name")) for t in tracks).rsplit(", ", 1)) or "no ships"
    called = " or ".join(f"**{n}**" for n in missing)
    unread = f" ({more} more REP files of the workspace were not read)" if more else ""
    return (
        f"I found no ship called {called}. The REP files I read ({', '.join(files)}){unread} hold {ships}. "
        "Ask about those, or attach the REP file of the ship you mean (drop it on the page).\n"
    )


def _narratives(done: list[Done]) -> list[str]:
    """The ref of each import's narrative entries (a ship's log), to go into the plot with the tracks."""
    refs = []
    for step in done:
        told = step.data.get("narratives") if step.is_run("import-rep") and isinstance(step.data, dict) else None
        if isinstance(told, dict) and isinstance(told.get("ref"), str):
            refs.append(told["ref"])
    return refs


def plot_with(question: Question, done: list[Done], need: int, what: str, *, named_only: bool = False) -> Plot | Next:
    """A plot with ``need`` tracks or more for ``question``: one of the workspace's that holds the
    ships it names (looked into one call at a time), else a new one of every REP file's tracks.
    ``named_only``: the question must name one of them. ``what``: the request, for the words when
    there are not enough tracks."""
    listing = next((d.data for d in done if d.call.name == LIST and isinstance(d.data, dict)), None)
    if listing is None:
        return _call(LIST, {})
    looked = {str((d.call.arguments or {}).get("filename")): d for d in done if d.call.name == FEATURES}
    attached = _attached_reps(question)
    for filename in [] if attached else _listed_plots(listing)[:MAX_LOOKS]:
        step = looked.get(filename)
        if step is None:
            return _call(FEATURES, {"filename": filename, "kinds": ["track"], "limit": 100})
        tracks = [f for f in (step.data or {}).get("features") or [] if isinstance(f, dict)]
        chosen = _chosen(question, tracks, need, named_only) if not step.failed else None
        if chosen is not None:
            return Plot(filename, chosen, tracks)
    first = _imported_tracks(done, attached)
    made = next((d for d in done if d.call.name == CREATE), None)
    if made is not None:
        tracks = _imported_tracks(done)
        chosen = _chosen(question, tracks, need, named_only, first) or tracks
        return Plot(str((made.call.arguments or {}).get("filename")), chosen, tracks)
    reps = [str(r) for r in listing.get("rep_files") or []]
    reps += [r for r in attached if r not in reps]
    if not reps:
        return f"The workspace has no REP files to import (`debrief_list_plots` lists none), so I have no tracks for {what}."
    reading = _to_import(question, reps)
    imported = {(d.call.arguments or {}).get("parameters", {}).get("path") for d in done if d.is_run("import-rep")}
    waiting = [r for r in reading if r not in imported]
    # a question that names its ships or brings them: no more files read once they are all there
    pointed = bool(attached or asked_names(question.text)) and not set(attached) - imported
    if waiting and not (pointed and _chosen(question, _imported_tracks(done), need, named_only, first)):
        return _call(RUN, {"tool": "import-rep", "parameters": {"path": waiting[0]}})
    tracks = _imported_tracks(done)
    chosen = _chosen(question, tracks, need, named_only, first)
    if chosen is None:
        missing = _missing(question, tracks)
        if missing:
            more = len(reps) - len(reading) + int(listing.get("more_rep_files") or 0)
            return _not_found(missing, tracks, [r for r in reading if r in imported], more)
        names = " and ".join(", ".join(str(t.get("name")) for t in tracks).rsplit(", ", 1))
        files = f"The REP files ({', '.join(reading)}) hold {len(tracks)} track{'s' if len(tracks) != 1 else ''}"
        files += f" ({names})" if names else ""
        if named_only and tracks:
            return f"{files}, and your question names none of them: for {what}, name one.\n"
        return f"{files}; {what} needs {('one', 'two')[need - 1] if need <= 2 else need}.\n"
    refs = [{"ref": str(t["ref"])} for t in tracks] + [{"ref": r} for r in _narratives(done)]
    return _call(CREATE, {"filename": _plot_name(chosen, listing), "features": refs})


# -- the plays ---------------------------------------------------------------------------------------


def closest_approach(question: Question, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
    """The closest approach of the two ships named (or of the plot's two), drawn at that moment,
    answered with the figure of the analysis."""
    plot = plot_with(question, done, 2, "a closest approach")
    if not isinstance(plot, Plot):
        return plot
    a, b = plot.tracks[:2]
    cpa = next((d for d in done if d.is_run("closest-approach")), None)
    if cpa is None:
        features = [{"ref": str(t["ref"])} for t in (a, b)]
        return _call(RUN, {"tool": "closest-approach", "features": features, "parameters": {"distance_unit": "yd"}})
    found = (cpa.data.get("features") or [{}])[0].get("properties", {}) if isinstance(cpa.data, dict) else {}
    if "time" not in found or "range" not in found:
        return (
            "I ran closest-approach but could not read its figure from the answer (the step above has it "
            f"whole). I am a stand-in without a model.{_footnote()}"
        )
    render = next((d for d in done if d.call.name == RENDER), None)
    if render is None:
        arguments = {
            "filename": plot.filename,
            "fit": "all",
            "time": found["time"],
            "cpa": [str(a["id"]), str(b["id"])],
        }
        return _call(RENDER, arguments)
    sentence = (
        f"The closest approach between {a['name']} and {b['name']} was {found['range']:.1f} "
        f"{found['distance_unit']} at {clock(found['time'])} on {day(found['time'])}."
    )
    return f"{sentence}\n\n{_shown(render, plot, 'at that moment')}{_footnote()}"


def _shown(render: Done, plot: Plot, when: str) -> str:
    if render.failed:
        return f"(The picture could not be drawn: {step_headline(render.data, failed=True)}.)"
    return f"The picture shows {plot.filename} {when}."


#: the forms of a time of day a person writes, most explicit first (the first form found wins,
#: so "12 Dec 2005 at 10:30" is 10:30, not 20:05): ISO; 10:30, 10:30:15, 9:30 pm, 10:30Z; 9am,
#: 9 pm; 0900, 0900Z, 0900 hours; 10 o'clock; noon, midnight
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?", re.IGNORECASE)
_CLOCKS = (
    re.compile(r"\b(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?\s*(?:(?P<ampm>[ap])\.?m\b\.?|z\b|utc\b)?", re.I),
    re.compile(r"\b(?P<h>\d{1,2})\s*(?P<ampm>[ap])\.?m\b\.?", re.IGNORECASE),
    re.compile(r"(?<![\d:.-])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)(?:\s*(?:z|utc|hrs|hours)\b)?(?![\d:.-])", re.I),
    re.compile(r"\b(?P<h>\d{1,2})\s*o'?clock\b", re.IGNORECASE),
    re.compile(r"\b(?P<word>noon|midday|midnight)\b", re.IGNORECASE),
)
_AT_TIME_WORDS = re.compile(
    r"\b(speed|fast|knots?|position|where|course|heading|located|doing|going|steering|moving)\b", re.IGNORECASE
)


def _clock_time(question: str) -> tuple[int, int, int] | None:
    """The time of day the question names (hours, minutes, seconds), or None: none, or not a time."""
    for form in _CLOCKS:
        found = form.search(question)
        if found is None:
            continue
        given = found.groupdict()
        if given.get("word"):
            return (0, 0, 0) if given["word"].lower() == "midnight" else (12, 0, 0)
        hours, minutes, seconds = int(given["h"]), int(given.get("m") or 0), int(given.get("s") or 0)
        if given.get("ampm"):
            if not 1 <= hours <= 12:
                return None
            hours = hours % 12 + (12 if given["ampm"].lower() == "p" else 0)
        return (hours, minutes, seconds) if hours <= 23 and minutes <= 59 and seconds <= 59 else None
    return None


def _moment(question: str, track: dict[str, Any]) -> datetime | None:
    """The time the question names, on the track's day (the next day when the track runs past
    midnight and the clock time comes before its start); None when it names none."""
    iso = _ISO.search(question)
    if iso:
        moment = datetime.fromisoformat(iso.group(0).replace(" ", "T").replace("Z", "+00:00").replace("z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    clock_time = _clock_time(question)
    if clock_time is None:
        return None
    hours, minutes, seconds = clock_time
    start, end = _instant(str(track.get("time_start"))), _instant(str(track.get("time_end")))
    if start is None:
        return None
    moment = start.replace(hour=hours, minute=minutes, second=seconds, microsecond=0)
    past_midnight = end is not None and end.date() > start.date()
    return moment + timedelta(days=1) if past_midnight and moment < start.replace(microsecond=0) else moment


def _instant(iso: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _span(track: dict[str, Any]) -> str:
    start, end = str(track.get("time_start")), str(track.get("time_end"))
    return f"{clock(start)} to {clock(end)} on {day(start)}"


def _latlon(lon: float, lat: float) -> str:
    """``22°07.34′N 021°47.63′W``, degrees and decimal minutes as plots show them."""

    def part(value: float, width: int, hemispheres: str) -> str:
        minutes = round(abs(value) * 60, 2)
        degrees, minutes = divmod(minutes, 60)
        return f"{int(degrees):0{width}d}°{minutes:05.2f}′{hemispheres[value < 0]}"

    return f"{part(lat, 2, 'NS')} {part(lon, 3, 'EW')}"


def _asked_at(track: dict[str, Any]) -> str:
    """An example question at the track's own first time, in the forms understood: only a time
    the tools gave (an example time of its own could lie outside every track)."""
    start = _instant(str(track.get("time_start")))
    if start is None:
        return f"*{track['name']}'s speed at* a UTC time within it"
    if start.second or start.microsecond:  # the first whole minute inside the track
        start = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    hours = f"{start.hour % 12 or 12}:{start:%M} {'pm' if start.hour >= 12 else 'am'}"
    return f"*{track['name']}'s speed at {start:%H:%M}* (UTC; {start:%H%M} or {hours} are read alike)"


def at_time(question: Question, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
    """A ship's speed, course and position at the time asked: legacy Debrief's tote of it
    against another ship of the plot."""
    plot = plot_with(question, done, 1, "a ship's speed and position", named_only=True)
    if not isinstance(plot, Plot):
        return plot
    ship = plot.tracks[0]
    moment = _moment(question.text, ship)
    if moment is None:
        return f"At what time? {ship['name']}'s track runs from {_span(ship)}: ask e.g. {_asked_at(ship)}.\n"
    start, end = _instant(str(ship.get("time_start"))), _instant(str(ship.get("time_end")))
    if start is None or end is None or not start <= moment <= end:
        return f"{clock(_iso(moment))} on {day(_iso(moment))} is outside {ship['name']}'s track, which runs from {_span(ship)}.\n"
    others = [t for t in plot.every if t.get("id") != ship.get("id")]
    if not others:
        return (
            f"{plot.filename} holds no other track than {ship['name']}: the tote that gives a ship's speed and "
            "position at a time measures it against another ship."
        )
    tote = next((d for d in done if d.is_run("tote")), None)
    if tote is None:
        features = [{"ref": str(ship["ref"])}, {"ref": str(others[0]["ref"])}]
        parameters = {"primary": str(ship["id"]), "time": _iso(moment)}
        return _call(RUN, {"tool": "tote", "features": features, "parameters": parameters})
    row = (tote.data.get("features") or [{}])[0]
    found = row.get("properties", {})
    lon, lat = (row.get("geometry") or {}).get("coordinates", [[None, None]])[0]
    at = f"{clock(found['time'])} on {day(found['time'])}"
    lines = [
        f"At {at} {ship['name']} was at {_latlon(lon, lat)}, making {found['primary_speed']:.1f} kn "
        f"on course {found['primary_course']:03.0f}°."
    ]
    before = found.get("before")
    if isinstance(before, dict) and "primary_speed" in before:
        lines.append(
            f"It was on a fix where it changed course or speed: those are for the leg after it; on the leg "
            f"before, {before['primary_speed']:.1f} kn on course {before['primary_course']:03.0f}°."
        )
    lines.append(
        f"(From debrief-calc's tote against {others[0]['name']}: {found['range']:,.0f} {found['distance_unit']} "
        f"away, bearing {found['bearing']:03.0f}°.)"
    )
    return "\n\n".join(lines) + "\n\n" + _footnote().strip() + "\n"


_PERIOD = re.compile(
    r"\b(?:last|final)\s+(?:(?P<half>half\s+(?:an\s+)?hour)|(?P<n>\d+(?:\.\d+)?|an?|one|two|three)?\s*"
    r"(?P<unit>hours?|hrs?|h|minutes?|mins?))\b",
    re.IGNORECASE,
)
_NUMBERS = {"a": 1.0, "an": 1.0, "one": 1.0, "two": 2.0, "three": 3.0}


def _period_s(text: str) -> float | None:
    found = _PERIOD.search(text)
    if found is None:
        return None
    if found.group("half"):
        return 1800.0
    given = (found.group("n") or "1").lower()
    n = _NUMBERS.get(given) or float(given)
    return n * (60.0 if found.group("unit").lower().startswith("m") else 3600.0)


def _duration(seconds: float) -> str:
    if seconds % 3600 == 0:
        hours = int(seconds // 3600)
        return "hour" if hours == 1 else f"{hours} hours"
    return f"{seconds / 60:g} minutes"


def last_period(question: Question, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
    """The last hour (or N minutes, N hours) of the exercise: each ship's distance and mean speed
    over it (track-stats), and the picture of that stretch."""
    seconds = _period_s(question.text) or 3600.0
    plot = plot_with(question, done, 1, "the end of an exercise")
    if not isinstance(plot, Plot):
        return plot
    ends = [e for e in (_instant(str(t.get("time_end"))) for t in plot.tracks) if e is not None]
    starts = [s for s in (_instant(str(t.get("time_start"))) for t in plot.tracks) if s is not None]
    if not ends or not starts:
        return f"The tracks of {plot.filename} have no times, so there is no last {_duration(seconds)} to show."
    end = max(ends)
    start = max(min(starts), end - timedelta(seconds=seconds))
    window = {"time_start": _iso(start), "time_end": _iso(end)}
    stats = next((d for d in done if d.is_run("track-stats")), None)
    if stats is None:
        features = [{"ref": str(t["ref"])} for t in plot.tracks]
        return _call(RUN, {"tool": "track-stats", "features": features, **window})
    render = next((d for d in done if d.call.name == RENDER), None)
    if render is None:
        return _call(RENDER, {"filename": plot.filename, "fit": "window", "time": window["time_end"], **window})
    lines = [
        f"The last {_duration(seconds)} of the exercise, {clock(window['time_start'])} to {clock(window['time_end'])} on {day(window['time_end'])}:",
        "",
    ]
    for feature in stats.data.get("features") or []:
        figures = (feature.get("properties") or {}).get("statistics") or {}
        name = (feature.get("properties") or {}).get("track_name")
        if not figures:
            continue
        lines.append(
            f"- **{name}**: {figures['distance_nm']:.2f} nm at a mean {figures['mean_speed_kn']:.1f} kn "
            f"(fastest leg {figures['max_speed_kn']:.1f} kn; {figures['point_count']} fixes, "
            f"{clock(figures['start'])} to {clock(figures['end'])})"
        )
    return "\n".join(lines) + f"\n\n{_shown(render, plot, 'over that stretch')}{_footnote()}"


def list_workspace(question: Question, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
    """What the workspace holds: its plots and its REP files."""
    listing = next((d.data for d in done if d.call.name == LIST and isinstance(d.data, dict)), None)
    if listing is None:
        return _call(LIST, {})
    plots = [p.get("filename") for p in listing.get("open_plots") or []] + list(listing.get("other_plots") or [])
    reps = list(listing.get("rep_files") or [])
    said = (
        f"{len(plots)} plot{'s' if len(plots) != 1 else ''}" + (f" ({', '.join(map(str, plots))})" if plots else "")
    ) + (f" and {len(reps)} REP file{'s' if len(reps) != 1 else ''}" + (f" ({', '.join(reps)})" if reps else ""))
    more = listing.get("more_plots") or 0
    return f"The workspace has {said}." + (f" {more} more plots are not listed." if more else "") + "\n"


#: (the words that start a play, the play); the first that matches wins
PLAYS: tuple[tuple[re.Pattern[str], Play], ...] = (
    (re.compile(r"\b(closest|nearest|cpa|how close)\b", re.IGNORECASE), closest_approach),
    (_PERIOD, last_period),
    (re.compile(r"\blist\b|\bwhich plots?\b|\bwhat (files|plots)\b", re.IGNORECASE), list_workspace),
    (_AT_TIME_WORDS, at_time),
)


def play_for(question: Question | str) -> Play | None:
    text = question.text if isinstance(question, Question) else question
    for pattern, play in PLAYS:
        if pattern.search(text):
            return _stopping(play)
    return None


def _stopping(play: Play) -> Play:
    """The play, ended at a step that failed or was declined: it says so instead of going on; its
    last words end with what the tools warned of."""

    def run(question: Question, done: list[Done], tools: Sequence[ToolSpec]) -> Next:
        if done and (done[-1].failed or done[-1].outcome):
            return _stopped(done[-1]) + warned(done)
        said = play(question, done, tools)
        return said + warned(done) if isinstance(said, str) else said

    return run


#: the tools' words for a model, as a person reads them (a ship's name comes first)
_PLAIN = (
    (
        re.compile(r"^(?P<who>.+?): the time is on a fix in a turn; the row's note and before say more$"),
        r"\g<who> was at a fix in a turn at that moment, so its course and speed change there; "
        "the figures are for the leg after the fix",
    ),
)


def _ship_names(done: list[Done]) -> dict[str, str]:
    """Each feature id the steps gave, with the ship's name (so a warning names the ship)."""
    names = {}
    for step in done:
        for feature in step.data.get("features") or [] if isinstance(step.data, dict) else []:
            if isinstance(feature, dict) and feature.get("id") and feature.get("name"):
                names[str(feature["id"])] = str(feature["name"])
    return names


def _plain_warning(warning: str, names: dict[str, str]) -> str:
    for given, name in names.items():
        warning = re.sub(rf"(?<![\w-]){re.escape(given)}(?![\w-])", name, warning)
    for pattern, words in _PLAIN:
        warning = pattern.sub(words, warning)
    return warning


def warned(done: list[Done]) -> str:
    """The warnings of the steps taken (an import's speed column that does not match the fixes…),
    each once, in a person's words (ships by name), as a list under the answer; "" when none warned."""
    seen: list[str] = []
    names = _ship_names(done)
    for step in done:
        data = step.data.get("data") if isinstance(step.data, dict) and "warnings" not in step.data else step.data
        listed = data.get("warnings") if isinstance(data, dict) else None
        for warning in listed if isinstance(listed, list) else []:
            line = clip(_plain_warning(str(warning), names), 300)
            if isinstance(warning, str) and line not in seen:
                seen.append(line)
    if not seen:
        return ""
    return "\n\n**The tools warned:**\n" + "".join(f"- {line}\n" for line in seen)


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
    # a quoted fence would read as a new call
    return ("\n".join(lines).replace("`" * 3, "'" * 3) + "\n" + warned(done)) if lines else ""
