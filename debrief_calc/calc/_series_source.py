"""What ``render_series`` draws from: a stored range-bearing result's series, range-bearing run on
tracks here (and then its quantities between fixes, :mod:`debrief_calc.analysis.range_curve`), or
one track's motion; each quantity a :class:`~debrief_calc.calc.series_plot.Panel` named for what
it is and whose it is ("NELSON course (°T)", "Bearing rate (°/min, + drawing right)")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from debrief_calc.errors import ValidationFailed
from debrief_calc.plots import plotstate
from debrief_calc.tracks._feature_parts import feature_kind, properties_of
from debrief_calc.tracks.times import Window
from llmem.core.errors import SuiteError

if TYPE_CHECKING:
    from debrief_calc.calc.series_plot import Marker, Panel
    from debrief_calc.calc.service import CalcService
    from debrief_calc.geo._arrays import FloatArray
    from debrief_calc.tracks.features import TrackData

__all__ = [
    "Mark",
    "Series",
    "amount",
    "between_fixes",
    "fail",
    "panel",
    "pick",
    "series_from_tracks",
    "stored_cpa",
    "stored_series",
    "title_of",
    "tracks_of",
    "with_curve",
]

_NAMES = {"atb": "ATB", "cpa_range": "CPA range"}  # labels that title case would spell badly
#: what a positive and a negative value of a signed column mean, written on its panel
_SIGNS = {
    "bearing_rate": ("drawing right", "drawing left"),
    "range_rate": ("opening", "closing"),
    "rate_of_turn": ("to starboard", "to port"),
    "relative_bearing": ("starboard/G", "port/R"),
    "atb": ("starboard/G", "port/R"),
}
#: the words a range-bearing result's name starts with, for what it holds, not what a picture draws
_RESULT_WORDS = "Range and bearing "


def fail(field: str, rule: str, message: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(f"{field}: {message}", details={"field": field, "rule": rule, **details})


@dataclass(frozen=True)
class Series:
    """A series to draw: its rows' times, a panel per numeric column, the title, the CPA marked
    (and what the answer says of it), the drawn result's properties (its summary; empty for one
    track's motion), the two tracks it was measured between (when drawn from tracks) and the
    span drawn."""

    times: FloatArray
    columns: dict[str, Panel]
    title: str
    cpa: tuple[Marker, dict[str, Any]] | None
    props: Mapping[str, Any]
    pair: tuple[TrackData, TrackData] | None = None
    sources: tuple[dict[str, Any], ...] = ()  # the track features it was measured from (cut to the window)
    curve: dict[str, Any] | None = None  # what the answer says of the curve drawn between fixes

    @property
    def span(self) -> tuple[float, float]:
        """The period drawn: the series' rows, or the curve's between fixes (the tracks' shared time)."""
        ends = [float(self.times[0]), float(self.times[-1])]
        for panel in self.columns.values():
            if panel.times is not None and panel.times.size:
                ends = [min(ends[0], float(panel.times[0])), max(ends[1], float(panel.times[-1]))]
        return ends[0], ends[1]


#: where a result says when its CPA was: the true one first, else the closest sample (either naming)
_CPA_FIELDS = (
    ("cpa_time", "cpa_range", "CPA"),
    ("min_sampled_range_time", "min_sampled_range", "Min range (sampled)"),
    ("min_range_time", "min_range", "Min range (sampled)"),
)
Mark = tuple["Marker", dict[str, Any]]


def amount(value: float) -> str:
    from debrief_calc.geo.distance_text import distance_figure

    return distance_figure(value)


def _cpa(t: float, value: float | None, unit: str, label: str, source: str) -> Mark:
    from debrief_calc.calc.series_plot import Marker
    from debrief_calc.tracks.times import clock, iso

    shown = "" if value is None else f" {amount(value)} {unit}"
    marker = Marker(t, f"{label}{shown} at {clock(t)}", "range", value)
    info: dict[str, Any] = {"time": iso(t), "label": marker.text, "source": source}
    if value is not None:
        info.update(range=value, unit=unit)
    return marker, info


def stored_cpa(props: Mapping[str, Any]) -> Mark | None:
    """The CPA a result states: ``cpa_time`` (and ``cpa_range``), else its closest sample."""
    from debrief_calc.tracks.times import parse_times

    unit = str(props.get("distance_unit") or "nm")
    for when, what, label in _CPA_FIELDS:
        if isinstance(props.get(when), str):
            value = props.get(what)
            t = float(parse_times([props[when]], field=f"properties.{when}", label="result")[0])
            return _cpa(t, value if isinstance(value, int | float) else None, unit, label, when)
    return None


def between_fixes(a: TrackData, b: TrackData, props: Mapping[str, Any]) -> Mark | None:
    """The CPA of the two tracks found between fixes (``closest-approach``'s search)."""
    import numpy as np

    from debrief_calc.analysis.common import overlap
    from debrief_calc.analysis.cpa import closest_approach
    from debrief_calc.geo.units import METRES_PER_UNIT

    span = overlap(a, b)
    if span is None:
        return None
    t, metres = closest_approach(a, b, span)
    unit = str(props.get("distance_unit") or "nm")
    value = float(np.round(metres / METRES_PER_UNIT[unit], 3))
    return _cpa(t, value, unit, "CPA", "closest-approach")


# -- what a series column is called and measured in -----------------------------------------------


def _unit(name: str, props: Mapping[str, Any]) -> str:
    from debrief_calc.calc.series_plot import angle_kind

    if "bearing_rate" in name:
        return str(props.get("bearing_rate_unit") or "deg/min").replace("deg", "°")
    if name.endswith("rate_of_turn"):
        return "°/min"
    if name == "range_rate" or name.endswith("speed") or name.endswith("_kn"):
        return "kn"
    if name == "range" or name.endswith("_range") or name.startswith("range"):
        return str(props.get("distance_unit") or "nm")
    if name.endswith("depth"):
        return "m"
    kind = angle_kind(name)
    return "°T" if kind == "circle" else "°" if kind == "signed" else ""


def _words(name: str, props: Mapping[str, Any]) -> str:
    """What a column holds, in words, naming the platform it is of: "NELSON course" (a column of the
    primary or secondary; of one track's motion, the track), "bearing rate", "ATB"."""
    who, rest = None, name
    for role in ("primary", "secondary"):
        if name.startswith(role + "_"):
            named = props.get(f"{role}_name") or props.get(f"{role}_id")
            who, rest = (str(named) if named else role.title()), name.removeprefix(role + "_")
    if who is None and props.get("track_name"):
        who = str(props["track_name"])
    words = _NAMES.get(rest) or rest.removesuffix("_kn").replace("_", " ")
    return f"{who} {words}" if who else words


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def panel(name: str, values: FloatArray, props: Mapping[str, Any], times: FloatArray | None = None) -> Panel:
    """A column as a panel: "NELSON course (°T)" for a platform's column, "Bearing rate (°/min, +
    drawing right)" for a signed one."""
    from debrief_calc.calc.series_plot import Panel, angle_kind

    rest = name.removeprefix("primary_").removeprefix("secondary_")
    sign = _SIGNS.get(rest)
    unit = _unit(name, props)
    said = ", ".join(x for x in (unit, f"+ {sign[0]}" if sign else "") if x)
    label = _capital(_words(name, props)) + (f" ({said})" if said else "")
    return Panel(name, label, values, angle_kind(name), times=times, sign=sign)


def title_of(series: Series, names: Sequence[str]) -> str:
    """The title for the quantities drawn: a range-bearing result's "Range and bearing A to B"
    drawing bearing rate alone is "Bearing rate A to B"; one track's "Speed and course of A"."""
    props = series.props
    whose = props.get("track_name")
    words = [_words(n, {} if whose else props) for n in names]
    if not words or not (whose or series.title.startswith(_RESULT_WORDS)):
        return series.title
    said = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    if whose:
        return f"{_capital(said)} of {whose}"
    return f"{_capital(said)} {series.title.removeprefix(_RESULT_WORDS)}"


# -- a stored result --------------------------------------------------------------------------------


def stored_series(
    svc: CalcService,
    usable: list[dict[str, Any]],
    chosen: dict[str, Any],
    window: Window | None,
    answer: dict[str, Any],
) -> Series:
    key = "results/" + plotstate.safe_segment(str(chosen.get("id")))
    if svc.store.artifact_file(plotstate.CALC_NS, key, "result").is_file():
        answer["source"] = {**plotstate.result_ref(str(chosen.get("id"))), "kind": "stored result"}
    else:
        answer["source"] = {"kind": "result given inline", "id": chosen.get("id")}
    _others(usable, chosen, answer)
    series = _table(chosen, window)
    if window is not None:
        answer["window"] = window.answer()
    elif (made := made_in(chosen)) is not None:  # the window the result was computed on
        answer["window"] = made.answer(of="the stored result (its provenance.window)")
    else:
        answer["window"] = Window(*series.span, "data").answer()
    return series


def made_in(result: Mapping[str, Any]) -> Window | None:
    """The window a stored result was computed on (its ``provenance.window``, asked or a plot's
    saved one), or None when it was computed on the whole data."""
    from debrief_calc.tracks.times import parse_window

    prov = properties_of(result).get("provenance")
    made = prov.get("window") if isinstance(prov, Mapping) else None
    if not isinstance(made, Mapping) or made.get("source") not in ("asked", "plot"):
        return None
    try:
        return parse_window(made.get("start"), made.get("end"), source=made["source"])
    except ValidationFailed:
        return None


def _others(usable: list[dict[str, Any]], chosen: dict[str, Any], answer: dict[str, Any]) -> None:
    """The results not drawn (other secondaries), with their refs: the answer's ``others``."""
    if others := [f for f in usable if f is not chosen]:
        answer["others"] = [
            {"secondary_id": properties_of(f).get("secondary_id"), **plotstate.result_ref(str(f.get("id")))}
            for f in others[:20]
        ]


def pick(features: list[dict[str, Any]], secondary: str | None) -> dict[str, Any]:
    """The result of the secondary ``secondary`` names (its id, or its unique name ignoring case)."""
    from debrief_calc.tracks.naming import resolve_track

    if secondary is None:
        return features[0]
    named = [properties_of(f) for f in features]
    tracks = [(str(p.get("secondary_id")), _text_or_none(p.get("secondary_name"))) for p in named]
    return features[resolve_track(secondary, tracks, "parameters.secondary")]


def _text_or_none(value: Any) -> str | None:
    return str(value) if value else None


def _table(feature: Mapping[str, Any], window: Window | None) -> Series:
    """A result's series as arrays, cut to the window: times, each numeric column as a panel, the
    title and the CPA marked (``cpa_time`` first, else ``min_range_time``)."""
    import numpy as np

    from debrief_calc.tracks.times import iso, parse_times

    props = properties_of(feature)
    raw = props["series"].get("time")
    if not isinstance(raw, list) or not raw:
        raise fail("result", "series", "the result's series has no time column: it cannot be drawn against time")
    times = np.asarray(parse_times(raw, field="properties.series.time", label="result"), dtype=float)
    keep = window.mask(times) if window is not None else np.ones(times.size, dtype=bool)
    if not keep.any():
        raise fail(
            "time_start",
            "window",
            f"no sample in the window; the series runs {iso(float(times[0]))} to {iso(float(times[-1]))}",
        )
    columns: dict[str, Panel] = {}
    for name, values in props["series"].items():
        if name == "time" or not _numeric(values, times.size):
            continue
        arr = np.asarray([math.nan if v is None else float(v) for v in values], dtype=float)
        columns[name] = panel(name, arr[keep], props)
    return Series(times[keep], columns, str(props.get("name") or "Series"), stored_cpa(props), props)


def _numeric(values: object, size: int) -> bool:
    if not isinstance(values, list) or len(values) != size:
        return False
    numbers = [v for v in values if v is not None]
    return bool(numbers) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers)


# -- tracks -------------------------------------------------------------------------------------------


def tracks_of(found: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    """The tracks among the features given (already cut to the window)."""
    tracks = [f for f in found if feature_kind(f) == "track"]
    if not tracks:
        raise fail(field, "tracks", f"no track nor range-bearing result among the {len(found)} feature(s) given")
    return tracks


def series_from_tracks(
    svc: CalcService,
    tracks: list[dict[str, Any]],
    opts: Mapping[str, Any],
    answer: dict[str, Any],
    keep: list[dict[str, Any]],
) -> Series:
    """Range-bearing run on the primary's fixes (its results kept in ``keep``, stored once the
    picture is drawn), with the two tracks; one track: its motion."""
    from debrief_calc.analysis import executor
    from debrief_calc.analysis.common import read_tracks

    secondary = opts.get("secondary")
    if len(tracks) == 1:
        if secondary is not None:
            raise fail("parameters.secondary", "applies-to", "needs two tracks or more; one is given")
        try:
            (track,) = read_tracks(tracks)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise fail("features", "track", f"the track cannot be read: {type(exc).__name__}") from None
        answer["source"] = {"kind": "track", "id": track.id}
        return _motion(track)
    params: dict[str, Any] = {"primary": opts.get("primary")}
    if opts.get("distance_unit") is not None:
        params["distance_unit"] = opts["distance_unit"]
    run = executor.run(svc.registry, "range-bearing", tracks, params)
    if not run.success or run.error is not None:
        error = run.error or {}
        raise SuiteError(str(error.get("message")), code=str(error.get("code")), details=error.get("details"))
    usable = [f for f in run.features if isinstance(f["properties"].get("series"), dict)]
    if not usable:
        raise fail("features", "overlap", "the tracks share no time with the primary: nothing to plot")
    chosen = pick(usable, secondary)
    keep.extend(run.features)  # stored once the picture is drawn: a refused call keeps nothing
    answer["source"] = {**plotstate.result_ref(str(chosen["id"])), "kind": "range-bearing run"}
    _others(usable, chosen, answer)
    series = _table(chosen, None)
    by_id = {t.id: t for t in read_tracks(tracks)}
    pair = by_id[series.props["primary_id"]], by_id[series.props["secondary_id"]]
    cpa = series.cpa
    if cpa is None or cpa[1]["source"] != "cpa_time":
        cpa = between_fixes(*pair, series.props) or cpa
    return replace(series, cpa=cpa, pair=pair, sources=tuple(tracks))


def with_curve(series: Series, columns_px: int, marked: Sequence[float]) -> Series:
    """The series' panels drawn between fixes, from its two tracks (a series read from a stored
    result stays as it is)."""
    from debrief_calc.analysis.common import overlap
    from debrief_calc.analysis.range_curve import curve_answer, range_curve

    if series.pair is None:
        return series
    span = overlap(*series.pair)
    if span is None:
        return series
    unit = str(series.props.get("distance_unit") or "nm")
    curve = range_curve(*series.pair, span, unit, columns_px=columns_px, marked=marked)
    columns = {
        name: replace(p, values=curve.values[name], times=curve.times) if name in curve.values else p
        for name, p in series.columns.items()
    }
    return replace(series, columns=columns, curve=curve_answer(curve, columns_px))


def _motion(track: TrackData) -> Series:
    """A single track's speed (kn), course (°T) and rate of turn (°/min) from its positions, each a
    step at every fix (the leg before it, then the leg after: between fixes a platform keeps to one
    leg) and at the middle of every leg (where the rate of turn steps)."""
    import numpy as np

    from debrief_calc.analysis.common import KNOT_MPS, Legs, motion_at, turn_rate_at
    from debrief_calc.analysis.range_curve import step_times

    legs = Legs(track)
    middles = (track.t[1:] + track.t[:-1]) * 0.5  # where the rate of turn steps
    times, motion = step_times(np.union1d(track.t, middles), (float(track.t[0]), float(track.t[-1])))
    speed, course = motion_at(legs, motion)
    turn = turn_rate_at(legs, motion)
    props = {"track_name": track.name or track.id}
    columns = {
        "speed": panel("speed", speed / KNOT_MPS, props, times),
        "course": panel("course", course, props, times),
        "rate_of_turn": panel("rate_of_turn", turn, props, times),
    }
    both = np.unique(track.t)
    return Series(both, columns, f"Speed and course of {track.name or track.id}", None, props)
