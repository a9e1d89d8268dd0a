"""What a tool step says in one line, for a person: which tool ran (``run_tool · closest-approach``),
its result's headline figure (``119.5 yd at 10:45:09Z``), and text cut only at a word, with "…".

Shared by the orchestrator (the steps it sends the page and keeps in the history) and the
stand-in (its answers are built from the same readings of the tools' results).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "Known",
    "as_data",
    "change_ids",
    "clip",
    "clock",
    "day",
    "describe_change",
    "kinds_of",
    "picture_name",
    "step_headline",
    "step_title",
]

# the tool arguments that say what a generic tool ran (debrief-calc's run_tool runs "tool")
_WHAT = ("tool", "task", "name")


def clip(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary with "…" when it is longer."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


def _when(iso: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (moment + timedelta(milliseconds=500)).replace(microsecond=0)  # to the nearest second


def clock(iso: str) -> str:
    """``1995-12-12T10:45:08.902Z`` → ``10:45:09Z`` (UTC, to the second); other text as it is."""
    moment = _when(iso)
    return moment.astimezone(UTC).strftime("%H:%M:%SZ") if moment else iso


def day(iso: str) -> str:
    """``1995-12-12T10:45:08.902Z`` → ``12 Dec 1995``."""
    moment = _when(iso)
    return f"{moment.astimezone(UTC).day} {moment.astimezone(UTC):%b %Y}" if moment else iso


_EXTENSIONS = {"image/svg+xml": "svg", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def picture_name(tool: str, arguments: Any, result: Any, mime: str = "image/png", index: int = 0) -> str:
    """A picture's file name for its download: its plot (else its tool) and the moment drawn, e.g.
    ``nelson-collingwood-1995-12-12T104509Z.png``; the moment to the nearest second, as
    :func:`clock` writes it and as the picture's own label reads (``10:45:08.902`` is ``104509Z``)."""
    args = arguments if isinstance(arguments, dict) else {}
    data = as_data(result)
    data = data if isinstance(data, dict) else {}
    plot = args.get("filename") if isinstance(args.get("filename"), str) else data.get("filename")
    stem = plot.removesuffix(".plot.json") if isinstance(plot, str) and plot else tool.split(":", 1)[-1] or "picture"
    iso = data.get("time") if isinstance(data.get("time"), str) else args.get("time")
    moment = _when(iso) if isinstance(iso, str) else None
    parts = [stem, moment.astimezone(UTC).strftime("%Y-%m-%dT%H%M%SZ") if moment else ""]
    if index:
        parts.append(str(index + 1))
    name = "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "-", p).strip("-.") for p in parts if p).strip("-") or "picture"
    return f"{name}.{_EXTENSIONS.get(mime.lower(), 'png')}"


def as_data(content: Any) -> Any:
    """A tool result as data: JSON text parsed, anything else as it is."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def step_title(tool: str, arguments: Any) -> str:
    """The step's name without its server: ``run_tool · closest-approach``, ``debrief_render_plot``."""
    short = tool.split(":", 1)[-1] or "(unnamed)"
    if isinstance(arguments, dict):
        what = next((arguments[k] for k in _WHAT if isinstance(arguments.get(k), str) and arguments[k]), None)
        if what is not None and short in ("run_tool", "describe_tool", "generate_prompt", "generate_artifact"):
            return f"{short} · {clip(what, 40)}"
    return short


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("x") else f"{n} {word}s"


def _props(feature: Any) -> dict[str, Any]:
    props = feature.get("properties") if isinstance(feature, dict) else None
    return props if isinstance(props, dict) else {}


def _features_line(features: list[Any]) -> str | None:
    """A result's features in one line: a CPA's range and time, tracks with their fixes."""
    first: dict[str, Any] = features[0] if features and isinstance(features[0], dict) else {}
    props: dict[str, Any] = first["properties"] if isinstance(first.get("properties"), dict) else first
    if isinstance(props.get("range"), int | float) and isinstance(props.get("time"), str):
        line = f"{props['range']:.1f} {props.get('distance_unit', '')} at {clock(props['time'])}".replace("  ", " ")
        return line + (f" (+{len(features) - 1} more)" if len(features) > 1 else "")
    stats = [_props(f).get("statistics") for f in features]
    if stats and all(isinstance(s, dict) and isinstance(s.get("distance_nm"), int | float) for s in stats):
        each = [
            f"{_props(f).get('track_name', '?')} {s['distance_nm']:.2f} nm at {s.get('mean_speed_kn', 0):.1f} kn"
            for f, s in zip(features[:3], stats[:3], strict=False)
            if isinstance(s, dict)
        ]
        return ", ".join(each) + (f" and {len(features) - 3} more" if len(features) > 3 else "")
    tracks = [f for f in features if isinstance(f, dict) and f.get("kind") == "track"]
    if tracks:
        named = ", ".join(
            f"{t.get('name', t.get('id'))} ({_plural(int(t.get('point_count') or 0), 'fix')})" for t in tracks[:3]
        )
        return named + (f" and {len(tracks) - 3} more" if len(tracks) > 3 else "")
    return _plural(len(features), "feature")


#: how a headline counts features of each kind: (one, many)
_KIND_NOUNS = {
    "track": ("track", "tracks"),
    "narrative": ("narrative entry", "narrative entries"),
    "annotation": ("annotation", "annotations"),
    "zone": ("zone", "zones"),
    "reference-point": ("reference point", "reference points"),
}


def kinds_of(summaries: list[Any]) -> dict[str, int]:
    """Feature summaries counted by kind, in the order met; an annotation of a platform is a
    narrative entry."""
    counts: dict[str, int] = {}
    for f in summaries:
        if isinstance(f, dict):
            kind = str(f.get("kind") or "feature")
            kind = "narrative" if kind == "annotation" and f.get("platform") else kind
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def _kinds_line(kinds: dict[str, int]) -> str:
    """``2 tracks and 19 narrative entries``."""
    parts = []
    for kind, n in kinds.items():
        one, many = _KIND_NOUNS.get(kind, (f"{kind} feature", f"{kind} features"))
        parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else "".join(parts)


def _report_line(report: dict[str, Any]) -> str | None:
    """An import's report when it brought no track: ``19 narrative entries from x.rep (no fixes)``."""
    narratives, fixes = report.get("narrative_count"), report.get("fix_count")
    if not isinstance(narratives, int) or not isinstance(fixes, int):
        return None
    source = f" from {report['source']}" if isinstance(report.get("source"), str) else ""
    got = _kinds_line({"narrative": narratives}) if narratives else f"{report.get('feature_count', 0)} features"
    return f"{got}{source}" + (" (no fixes)" if not fixes else f", {_plural(fixes, 'fix')}")


def _state_line(inner: dict[str, Any]) -> str | None:
    """A plot's time or selection, read: ``at 10:45:09Z (05:00:00Z to 11:45:00Z)``, ``2 selected: a, b``."""
    time = inner.get("timeState")
    if isinstance(time, dict) and isinstance(time.get("current"), str):
        span = (
            f" ({clock(time['start'])} to {clock(time['end'])})"
            if isinstance(time.get("start"), str) and isinstance(time.get("end"), str)
            else ""
        )
        return f"at {clock(time['current'])}{span}"
    selected = inner.get("selectedIds")
    if isinstance(selected, list):
        if not selected:
            return "nothing selected"
        shown = ", ".join(map(str, selected[:4])) + (f" and {len(selected) - 4} more" if len(selected) > 4 else "")
        return f"{len(selected)} selected: {shown}"
    return None


def step_headline(result: Any, *, failed: bool = False, limit: int = 120, kinds: dict[str, int] | None = None) -> str:
    """The result's headline in one line: its error when it failed, else its main figure.
    ``kinds``: the features a plot change added, counted by kind, when the host read them."""
    data = as_data(result)
    if not isinstance(data, dict):
        return clip(str(data), limit) if data not in (None, "") else ""
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return clip(error["message"], limit)
    if failed:
        return clip(str(data.get("message") or json.dumps(data, ensure_ascii=False)), limit)
    inner: dict[str, Any] = data["data"] if isinstance(data.get("data"), dict) else data
    line: str | None = None
    if isinstance(inner.get("features"), list) and inner["features"]:
        line = _features_line(inner["features"])
    elif "rep_files" in inner or "other_plots" in inner:
        plots = len(inner.get("open_plots") or []) + len(inner.get("other_plots") or [])
        line = f"{_plural(plots, 'plot')}, {_plural(len(inner.get('rep_files') or []), 'REP file')}"
    elif isinstance(inner.get("added_ids"), list) and isinstance(inner.get("filename"), str):
        added = _kinds_line(kinds) if kinds else _plural(len(inner["added_ids"]), "feature")
        line = f"{inner['filename']} with {added}"
    elif isinstance(inner.get("report"), dict) and _report_line(inner["report"]):
        line = _report_line(inner["report"])
    elif isinstance(inner.get("mediaType"), str) and inner.get("width"):
        at = f" at {clock(inner['time'])}" if isinstance(inner.get("time"), str) else ""
        line = f"picture {inner['width']}×{inner['height']} px{at}"
    elif _state_line(inner):
        line = _state_line(inner)
    if line is None:
        for key in ("summary", "message", "result", "status"):
            if isinstance(inner.get(key), str | int | float) and not isinstance(inner[key], bool) and inner[key] != "":
                line = str(inner[key])
                break
    warned = inner.get("warnings")
    if isinstance(warned, list) and warned:  # seen on the step, not only inside its details
        mark = f"⚠ {_plural(len(warned), 'warning')}"
        return f"{clip(line, max(1, limit - len(mark) - 3))} · {mark}" if line else mark
    return clip(line or "", limit)


#: what the host knows of a plot's features when it asks a person: id -> its summary (name,
#: kind), and the ids of all the plot's tracks
Known = dict[str, dict[str, Any]]


def _count(payload: Any, noun: str) -> str:
    """How much a command payload holds: ``3 features``, ``the features of one stored run``."""
    if isinstance(payload, list):
        return _plural(len(payload), noun)
    if isinstance(payload, dict):
        if isinstance(payload.get("ref"), str):
            return f"the {noun}s of {payload['ref']}"
        for key in ("features", "ids"):
            if isinstance(payload.get(key), list):
                return _plural(len(payload[key]), noun)
    return ""


def _payload_ids(name: str, payload: Any) -> list[str]:
    """The ids a command's payload names: ``deleteFeatures``' ids, ``updateFeatures``' features'."""
    if name == "deleteFeatures":
        listed = payload if isinstance(payload, list) else None
        if isinstance(payload, dict):
            listed = next((payload[k] for k in ("ids", "featureIds") if isinstance(payload.get(k), list)), None)
        return [str(i) for i in listed or [] if isinstance(i, str | int)]
    if name == "updateFeatures" and isinstance(payload, list):
        return [str(f["id"]) for f in payload if isinstance(f, dict) and isinstance(f.get("id"), str | int)]
    return []


def change_ids(tool: str, arguments: Any) -> list[str]:
    """The feature ids a destructive call will change, when its arguments name them: the ones
    whose names a confirmation should show."""
    args = arguments if isinstance(arguments, dict) else {}
    if tool.split(":", 1)[-1] == "debrief_set_properties" and isinstance(args.get("ids"), list):
        return [str(i) for i in args["ids"] if isinstance(i, str | int)]
    command = args.get("command")
    if not isinstance(command, dict) or not isinstance(command.get("command"), str):
        return []
    if command["command"] == "composite" and isinstance(command.get("payload"), list):
        return [i for step in command["payload"] for i in change_ids(tool, {"command": step})]
    return _payload_ids(command["command"], command.get("payload"))


def _named(fid: str, known: Known) -> str:
    """``COLLINGWOOD (rep-collingwood)``; the id alone when the plot's name for it is not known."""
    name = known.get(fid, {}).get("name")
    return f"{name} ({fid})" if isinstance(name, str) and name and name != fid else fid


def _which(ids: list[str], known: Known, tracks: list[str] | None) -> str:
    """The features by name: one as ``NAME (id)``; several as ``2 features — A, B — all the
    tracks of the plot``."""
    if len(ids) == 1:
        return _named(ids[0], known)
    names = [str(known.get(i, {}).get("name") or i) for i in ids]
    listed = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    every = tracks is not None and len(tracks) > 1 and set(tracks) <= set(ids)
    return f"{_plural(len(ids), 'feature')} — {listed}" + (" — all the tracks of the plot" if every else "")


def _command_change(command: Any, target: str, known: Known, tracks: list[str] | None) -> str:
    if not isinstance(command, dict) or not isinstance(command.get("command"), str):
        return f"apply a command to {target}"
    name, payload = command["command"], command.get("payload")
    ids = _payload_ids(name, payload)
    if name == "deleteFeatures":
        return f"delete {_which(ids, known, tracks) if ids else _count(payload, 'feature') or 'features'} from {target}"
    if name == "composite" and isinstance(payload, list):
        parts = [
            _command_change(step, target, known, tracks).removesuffix(f" to {target}").removesuffix(f" from {target}")
            for step in payload[:4]
        ]
        return f"apply to {target}: " + "; ".join(parts) + ("; …" if len(payload) > 4 else "")
    if name == "updateFeatures" and ids:
        return f"replace {_which(ids, known, None)} in {target}"
    held = _count(payload, "feature") if name.endswith("Features") or name == "setFeatureCollection" else ""
    return f"apply {name}" + (f" ({held})" if held else "") + f" to {target}"


def describe_change(tool: str, arguments: Any, known: Known | None = None, tracks: list[str] | None = None) -> str:
    """What a destructive call will change, in words: ``delete COLLINGWOOD (rep-collingwood) from
    x.plot.json``, ``rename rep-nelson (NELSON) to NELSON-2 in x.plot.json``, ``apply addFeatures
    (3 features) to x.plot.json``; ``known``: the features' summaries by id (their names), when
    the host could read them; ``tracks``: the ids of all the plot's tracks."""
    short = tool.split(":", 1)[-1]
    args = arguments if isinstance(arguments, dict) else {}
    known = known or {}
    target = str(args.get("filename") or "the open plot")
    if "command" in args:
        return _command_change(args["command"], target, known, tracks)
    if short == "debrief_set_properties":
        props: dict[str, Any] = args["properties"] if isinstance(args.get("properties"), dict) else {}
        ids = change_ids(tool, args)
        which = _which(ids, known, tracks) if ids else "no feature"
        if set(props) == {"name"} and isinstance(props["name"], str):
            if len(ids) == 1:  # ``rep-nelson (NELSON)``: the id first, as the new name follows
                old = known.get(ids[0], {}).get("name")
                which = f"{ids[0]} ({old})" if isinstance(old, str) and old and old != ids[0] else ids[0]
            return f"rename {which} to {props['name']} in {target}"
        shown = [
            f"{k} to {clip(json.dumps(v), 30)}" if v is not None else f"remove {k}" for k, v in sorted(props.items())
        ]
        names = ", ".join(shown[:4]) + (", …" if len(shown) > 4 else "")
        return f"set {names or 'properties'} on {which} of {target}"
    if short == "debrief_undo":
        return f"undo the last change to {target}"
    if short == "delete_artifact":
        return f"delete the stored notes of {args.get('path', 'a path')}" + (
            f" ({args['kind']} only)" if isinstance(args.get("kind"), str) else ""
        )
    simple = [f"{k} {clip(str(v), 40)}" for k, v in args.items() if isinstance(v, str | int | float | bool)][:3]
    return f"run {short}" + (f" with {', '.join(simple)}" if simple else "")
