"""``render_series``: a picture of a series against time, from a stored ``range-bearing`` result or
computed from tracks, without the plot-state server.

What is plotted: a stored result's ``properties.series`` (any numeric column beside ``time``;
default range, bearing and bearing rate), or for two tracks or more range-bearing run here on the
primary's fixes (its result kept in the store, its reference in the answer), or for one track
its speed and course at its fixes (derived from the positions). The tracks are read and cut as
``run_tool`` reads them (:mod:`debrief_calc.calc.inputs`: a window asked for, else a plot's saved
window, each edge a fix interpolated exactly there); a stored series keeps its rows inside the
window. The answer's ``window`` states the window used and where it came from. The CPA is marked
where it is known: ``cpa_time`` (and ``cpa_range``) in the result's properties, else found between
the fixes of the two tracks, else the sampled minimum (``min_range_time``), which the answer then
says it is; a minimum at the start or end of the span drawn is not a CPA, and is labelled as the
closest at that end (range opening, or closing).
Narrative entries (annotations with a ``time``: given, or those of the plot read, by ``plot`` or
by ``debrief-state:plots`` references to one plot) are marked where they fall inside the span;
the answer accounts for each (marked, outside the span, untimed). A panel's min and max are the
samples'; where the result knows the true extreme between fixes (the CPA's range, the peak
bearing rate) the answer gives it beside them and the picture marks it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debrief_calc.calc.series_residuals import (
    RESIDUAL_QUANTITIES,
    is_residuals,
    residual_answer,
    residual_table,
    run_residuals,
    sensors_among,
)
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

__all__ = ["DEFAULT_QUANTITIES", "TRACK_QUANTITIES", "render_series"]

DEFAULT_QUANTITIES = ("range", "bearing", "bearing_rate")
TRACK_QUANTITIES = ("speed", "course")
MAX_PANELS = 6


def _fail(field: str, rule: str, message: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(f"{field}: {message}", details={"field": field, "rule": rule, **details})


PARAMETERS = ("primary", "secondary", "distance_unit", "width", "height")
#: where a result says when its CPA was: the true one first, else the closest sample (either naming)
_CPA_FIELDS = (
    ("cpa_time", "cpa_range", "CPA"),
    ("min_sampled_range_time", "min_sampled_range", "Min range (sampled)"),
    ("min_range_time", "min_range", "Min range (sampled)"),
)
#: what is drawn: the times, a panel per numeric column, the title, the CPA marked (and what the
#: answer says of it) and the drawn result's properties (its summary; empty for one track's motion)
Table = tuple["FloatArray", dict[str, "Panel"], str, tuple["Marker", dict[str, Any]] | None, Mapping[str, Any]]
_NAMES = {"atb": "ATB", "cpa_range": "CPA range"}  # labels that title case would spell badly


def render_series(
    svc: CalcService,
    *,
    features: Sequence[Any] | None = None,
    plot: Mapping[str, Any] | None = None,
    time_start: str | None = None,
    time_end: str | None = None,
    quantities: Sequence[str] | None = None,
    narratives: Sequence[Any] | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """The picture and what it shows (panels, span, samples, the CPA and narratives marked, where the
    series is stored). ``features``: stored range-bearing results (``{"ref"}`` items) or tracks
    (inline or by reference); ``plot``: tracks of a plot, as ``run_tool`` reads them. ``parameters``:
    ``primary`` (tracks), ``secondary`` (which result or track the range is to), ``distance_unit``
    (tracks), ``width`` and ``height`` (pixels). ValidationFailed naming the field for a bad source,
    quantity, parameter or window."""
    from debrief_calc.calc.inputs import cut_ends, window_answer
    from debrief_calc.calc.series_plot import draw_series
    from debrief_calc.tracks.times import iso

    if (features is None) == (plot is None):
        raise _fail("features", "one of", "give features (tracks, or a range-bearing result's {ref}) or plot, not both")
    opts = _parameters(parameters)
    if features is not None and (not isinstance(features, list) or not features):
        raise _fail("features", "min items", "give tracks (GeoJSON Features or {ref} items) or a result's {ref}")
    for i, item in enumerate(features or []):
        if not isinstance(item, dict):
            raise _fail(f"features[{i}]", "type", "a GeoJSON Feature or a {ref} item")
    if plot is not None and not isinstance(plot, Mapping):
        raise _fail("plot", "type", 'an object: {"filename": "x.plot.json", "feature_ids": [...]}')
    inputs = svc.read_inputs(None, features, plot, time_start, time_end)
    found = [f for f in inputs.features or [] if isinstance(f, dict)]
    answer: dict[str, Any] = {}
    keep: list[dict[str, Any]] = []  # range-bearing's results, stored once the picture is drawn
    narratives_from: str | None = None  # the plot whose entries are marked when none are given
    results = [f for f in found if isinstance(properties_of(f).get("series"), dict)]
    spans: list[Any] = []  # stretches shaded on every panel (ownship's legs under stacked dots)
    dots = [f for f in results if is_residuals(f)]
    if dots or sensors_among(found):
        if opts.get("primary") is not None:
            raise _fail("parameters.primary", "applies-to", "applies to tracks; bearing residuals have no primary")
        if dots and len(dots) != len(found):
            raise _fail("features", "one kind", "give one bearing-residuals result, or a sensor with its tracks")
        chosen = (
            dots[0] if dots else run_residuals(svc, found, opts.get("secondary"), opts.get("distance_unit"), answer)
        )
        if dots:
            answer["source"] = {**plotstate.result_ref(str(chosen.get("id"))), "kind": "stored result"}
        else:
            keep.append(chosen)
        window = inputs.asked or next((w for w, ids in inputs.windows if str(chosen.get("id")) in ids), None)
        times, columns, title, props, spans = residual_table(chosen, window)
        answer["window"] = window_answer(inputs)
        cut = cut_ends(inputs)
        table: Table = (times, columns, title, None, props)
        answer["residuals"] = residual_answer(props)
    elif results:
        if len(results) != len(found):
            raise _fail("features", "one kind", "give stored range-bearing results or tracks, not both")
        for key in ("primary", "distance_unit"):
            if opts.get(key) is not None:
                raise _fail(f"parameters.{key}", "applies-to", "applies to tracks; a stored result has its own")
        chosen = _pick(results, opts.get("secondary"))
        window = inputs.asked or next((w for w, ids in inputs.windows if str(chosen.get("id")) in ids), None)
        table = _stored(svc, results, chosen, window, answer)
        cut = (True, True) if _made_in(chosen) is not None else (False, False)
    else:
        tracks = _tracks(found, "plot" if plot is not None else "features")
        if narratives is None and (own := _own_plot(plot, features)) is not None:
            narratives = [f for f in svc.plot_features({"filename": own}) if _is_entry(f)]
            narratives_from = own
        table = _from_tracks(svc, tracks, opts, answer, keep)
        answer["window"] = window_answer(inputs)
        cut = cut_ends(inputs)
    times, columns, title, cpa, props = table
    names = list(quantities) if quantities else _defaults(columns)
    if len(names) > MAX_PANELS:
        raise _fail("quantities", "max items", f"at most {MAX_PANELS} quantities in one picture; {len(names)} given")
    if unknown := [q for q in names if q not in columns]:
        raise _fail(
            "quantities",
            "choices",
            f"{', '.join(map(repr, unknown))} not among the series' numeric columns: {', '.join(columns)}",
            available=list(columns),
        )
    panels = [columns[q] for q in names]
    title = _title_of(title, panels)
    drawn = Window(float(times[0]), float(times[-1]))
    entries, counts = _entries(svc, narratives, drawn)
    if cpa is not None and not drawn.contains(cpa[0].t):
        cpa = None  # outside the window drawn
    if cpa is not None and (edge := drawn.at_edge(cpa[0].t)) is not None:
        cpa = _closest_at_edge(cpa, edge, cut[0 if edge == "start" else 1])
    peak = _peak(props, names, drawn)
    picture = draw_series(
        times,
        panels,
        title=title,
        cpa=cpa[0] if cpa is not None else None,
        narratives=entries,
        peaks=[peak[0]] if peak is not None and peak[0] is not None else [],
        spans=spans,
        width=opts.get("width", 900),
        height=opts.get("height"),
    )
    answer.update(
        mediaType="image/png",
        title=title,
        width=picture.width,
        height=picture.height,
        bytes=len(picture.png),
        span=[iso(float(times[0])), iso(float(times[-1]))],
        samples=int(times.size),
        panels=[_panel_answer(p, picture.ranges[p.name], cpa, peak) for p in panels],
    )
    for feature in keep:
        plotstate.store_result(svc.store, feature, "bearing-residuals" if is_residuals(feature) else "range-bearing")
    if cpa is not None:
        answer["cpa"] = cpa[1]
    if counts is not None:
        counts["labelled"] = len(picture.labelled)
        if counts["labelled"] < counts["marked"]:
            counts["unlabelled_note"] = (
                f"{counts['marked'] - counts['labelled']} marked entr(ies) drawn as lines without a label "
                "(no room above the panels): narrow the window or widen the picture to label them"
            )
        if narratives_from is not None:
            counts["from_plot"] = narratives_from  # its timed annotations: no narratives were given
        answer["narratives"] = counts
    return answer, picture.png


def _parameters(parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parameters checked: known names, ids as strings, a distance unit, sizes in range."""
    from debrief_calc.geo.units import DISTANCE_UNITS

    opts = dict(parameters or {})
    if unknown := [k for k in opts if k not in PARAMETERS]:
        raise _fail(f"parameters.{unknown[0]}", "known", f"not a parameter; the parameters are {', '.join(PARAMETERS)}")
    for key in ("primary", "secondary"):
        if opts.get(key) is not None and not isinstance(opts[key], str):
            raise _fail(f"parameters.{key}", "type", "a track id (a string)")
    unit = opts.get("distance_unit")
    if unit is not None and unit not in DISTANCE_UNITS:
        raise _fail("parameters.distance_unit", "choices", f"{unit!r} is not one of {', '.join(DISTANCE_UNITS)}")
    for key, low in (("width", 300), ("height", 150)):
        value = opts.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 2048):
            raise _fail(f"parameters.{key}", "range", f"pixels, a whole number from {low} to 2048")
    return opts


def _panel_answer(
    panel: Panel,
    axis: tuple[float, float],
    cpa: tuple[Marker, dict[str, Any]] | None,
    peak: tuple[Marker | None, dict[str, Any]] | None,
) -> dict[str, Any]:
    """A panel as the answer gives it: its min and max are the samples' (``extrema: "sampled"``);
    the true extreme between fixes, where the result knows it, beside them (``true_min`` of the
    range: the CPA; ``true_peak`` of the bearing rate)."""
    out: dict[str, Any] = {
        "quantity": panel.name,
        "label": panel.label,
        "axis": [round(v, 4) for v in axis],
        **_extent(panel.values),
        "extrema": "sampled",
    }
    true_cpa = cpa is not None and cpa[1]["source"] in ("cpa_time", "closest-approach") and "range" in cpa[1]
    if panel.name == "range" and cpa is not None and true_cpa:
        out["true_min"] = {"value": cpa[1]["range"], "time": cpa[1]["time"], "source": cpa[1]["source"]}
    if panel.name == "bearing_rate" and peak is not None:
        out["true_peak"] = peak[1]
    return out


def _peak(props: Mapping[str, Any], names: Sequence[str], drawn: Window) -> tuple[Marker | None, dict[str, Any]] | None:
    """The result's peak bearing rate between fixes (``peak_bearing_rate`` at
    ``peak_bearing_rate_time``) as a marker on the bearing-rate panel, when that panel is drawn
    (no marker, and ``outside_span`` said, when the peak is outside the span drawn)."""
    from debrief_calc.calc.series_plot import Marker
    from debrief_calc.tracks.times import clock, iso, parse_times

    rate, when = props.get("peak_bearing_rate"), props.get("peak_bearing_rate_time")
    if "bearing_rate" not in names or not isinstance(rate, int | float) or not isinstance(when, str):
        return None
    t = float(parse_times([when], field="properties.peak_bearing_rate_time", label="result")[0])
    if not drawn.contains(t):
        note = "the result's peak is outside the span drawn (not marked); the panel's min and max are the samples'"
        return None, {"value": rate, "time": iso(t), "source": "peak_bearing_rate", "outside_span": True, "note": note}
    sampled = props.get("series", {}).get("time") if isinstance(props.get("series"), dict) else None
    on_sample = isinstance(sampled, list) and when in sampled
    where = "at a sample" if on_sample else "between samples"
    unit = str(props.get("bearing_rate_unit") or "deg/min").replace("deg", "°")
    text = f"Peak {rate:+.1f}{unit} at {clock(t)}, {where}"
    info = {
        "value": rate,
        "time": iso(t),
        "label": text,
        "source": "peak_bearing_rate",
        "between_samples": not on_sample,
    }
    return Marker(t, text, "bearing_rate", float(rate)), info


def _extent(values: FloatArray) -> dict[str, Any]:
    import numpy as np

    finite = values[np.isfinite(values)]
    if not finite.size:
        return {"min": None, "max": None}
    return {"min": round(float(finite.min()), 4), "max": round(float(finite.max()), 4)}


def _defaults(columns: Mapping[str, Panel]) -> list[str]:
    for wanted in (DEFAULT_QUANTITIES, TRACK_QUANTITIES, RESIDUAL_QUANTITIES):
        if chosen := [q for q in wanted if q in columns]:
            return chosen
    return list(columns)[:3]


# -- what a series column is called and measured in -----------------------------------------------


def _unit(name: str, props: Mapping[str, Any]) -> str:
    from debrief_calc.calc.series_plot import angle_kind

    if "bearing_rate" in name:
        unit = str(props.get("bearing_rate_unit") or "deg/min")
        return unit.replace("deg", "°")
    if name == "range" or name.endswith("_range") or name.startswith("range"):
        return str(props.get("distance_unit") or "nm")
    kind = angle_kind(name)
    if kind == "circle":
        return "°T"
    if kind == "signed":
        return "°"
    if name.endswith("speed") or name.endswith("_kn"):
        return "kn"
    return ""


#: the words a range-bearing result's name starts with, for what it holds, not what a picture draws
_RESULT_WORDS = "Range and bearing "


def _title_of(title: str, panels: Sequence[Panel]) -> str:
    """The title for the quantities drawn: a range-bearing result's "Range and bearing A to B"
    drawing bearing rate alone is "Bearing rate A to B"."""
    if not title.startswith(_RESULT_WORDS) or not panels:
        return title
    words = [p.label.split(" (")[0] for p in panels]
    said = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    said = said[:1] + said[1:].lower().replace("atb", "ATB").replace("cpa", "CPA")
    return f"{said} {title.removeprefix(_RESULT_WORDS)}"


def _panel(name: str, values: FloatArray, props: Mapping[str, Any]) -> Panel:
    from debrief_calc.calc.series_plot import Panel, angle_kind

    words = _NAMES.get(name) or name.removesuffix("_kn").replace("_", " ")
    unit = _unit(name, props)
    label = words[:1].upper() + words[1:] + (f" ({unit})" if unit else "")
    return Panel(name, label, values, angle_kind(name))


# -- a stored result --------------------------------------------------------------------------------


def _stored(
    svc: CalcService,
    usable: list[dict[str, Any]],
    chosen: dict[str, Any],
    window: Window | None,
    answer: dict[str, Any],
) -> Table:
    key = "results/" + plotstate.safe_segment(str(chosen.get("id")))
    if svc.store.artifact_file(plotstate.CALC_NS, key, "result").is_file():
        answer["source"] = {**plotstate.result_ref(str(chosen.get("id"))), "kind": "stored result"}
    else:
        answer["source"] = {"kind": "result given inline", "id": chosen.get("id")}
    _others(usable, chosen, answer)
    table = _table(chosen, window)
    times = table[0]
    if window is not None:
        answer["window"] = window.answer()
    elif (made := _made_in(chosen)) is not None:  # the window the result was computed on, and whose
        answer["window"] = made.answer(of="the stored result (its provenance.window)")
    else:
        answer["window"] = Window(float(times[0]), float(times[-1]), "data").answer()
    return table


def _made_in(result: Mapping[str, Any]) -> Window | None:
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


def _pick(features: list[dict[str, Any]], secondary: str | None) -> dict[str, Any]:
    if secondary is None:
        return features[0]
    ids = [str(properties_of(f).get("secondary_id")) for f in features]
    if secondary not in ids:
        raise _fail(
            "parameters.secondary", "exists", f"{secondary!r} is not a secondary of these results: {', '.join(ids)}"
        )
    return features[ids.index(secondary)]


def _table(feature: Mapping[str, Any], window: Window | None) -> Table:
    """A result's series as arrays, cut to the window: times, each numeric column as a panel, the
    title and the CPA marked (``cpa_time`` first, else ``min_range_time``)."""
    import numpy as np

    from debrief_calc.tracks.times import iso, parse_times

    props = properties_of(feature)
    series = props["series"]
    raw = series.get("time")
    if not isinstance(raw, list) or not raw:
        raise _fail("result", "series", "the result's series has no time column: it cannot be drawn against time")
    times = np.asarray(parse_times(raw, field="properties.series.time", label="result"), dtype=float)
    keep = window.mask(times) if window is not None else np.ones(times.size, dtype=bool)
    if not keep.any():
        raise _fail(
            "time_start",
            "window",
            f"no sample in the window; the series runs {iso(float(times[0]))} to {iso(float(times[-1]))}",
        )
    columns: dict[str, Panel] = {}
    for name, values in series.items():
        if name == "time" or not _numeric(values, times.size):
            continue
        arr = np.asarray([math.nan if v is None else float(v) for v in values], dtype=float)
        columns[name] = _panel(name, arr[keep], props)
    title = str(props.get("name") or "Series")
    unit = str(props.get("distance_unit") or "nm")
    cpa = None
    for when, what, label in _CPA_FIELDS:
        if isinstance(props.get(when), str):
            value = props.get(what)
            cpa = _cpa(
                float(parse_times([props[when]], field=f"properties.{when}", label="result")[0]),
                value if isinstance(value, int | float) else None,
                unit,
                label,
                when,
            )
            break
    return times[keep], columns, title, cpa, props


def _numeric(values: object, size: int) -> bool:
    if not isinstance(values, list) or len(values) != size:
        return False
    numbers = [v for v in values if v is not None]
    return bool(numbers) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers)


def _cpa(t: float, value: float | None, unit: str, label: str, source: str) -> tuple[Marker, dict[str, Any]]:
    from debrief_calc.calc.series_plot import Marker
    from debrief_calc.tracks.times import clock, iso

    shown = "" if value is None else f" {_amount(value)} {unit}"
    marker = Marker(t, f"{label}{shown} at {clock(t)}", "range", value)
    info: dict[str, Any] = {"time": iso(t), "label": marker.text, "source": source}
    if value is not None:
        info.update(range=value, unit=unit)
    return marker, info


def _closest_at_edge(cpa: tuple[Marker, dict[str, Any]], edge: str, window: bool) -> tuple[Marker, dict[str, Any]]:
    """A least range at the start or end of the span drawn is no closest approach (the ships were
    opening from the start, or still closing at the end): labelled as what it is."""
    from dataclasses import replace

    from debrief_calc.tracks.times import clock

    marker, info = cpa
    trend = "range opening" if edge == "start" else "range closing"
    what = f"{edge} of the {'window' if window else 'data'}"
    value = info.get("range")
    shown = "" if value is None else f" {_amount(value)} {info.get('unit', '')}"
    text = f"Closest{shown} at {clock(marker.t)}, the {what} ({trend})"
    note = f"the least range is at the {what}: not a closest approach ({trend}); widen the window to look for one"
    return replace(marker, text=text), {**info, "label": text, "edge": edge, "note": note}


def _amount(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


# -- tracks -------------------------------------------------------------------------------------------


def _tracks(found: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    """The tracks among the features given (already cut to the window)."""
    tracks = [f for f in found if feature_kind(f) == "track"]
    if not tracks:
        raise _fail(field, "tracks", f"no track nor range-bearing result among the {len(found)} feature(s) given")
    return tracks


def _from_tracks(
    svc: CalcService,
    tracks: list[dict[str, Any]],
    opts: Mapping[str, Any],
    answer: dict[str, Any],
    keep: list[dict[str, Any]],
) -> Table:
    from debrief_calc.analysis.common import read_tracks

    secondary = opts.get("secondary")
    if len(tracks) == 1:
        if secondary is not None:
            raise _fail("parameters.secondary", "applies-to", "needs two tracks or more; one is given")
        try:
            (track,) = read_tracks(tracks)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise _fail("features", "track", f"the track cannot be read: {type(exc).__name__}") from None
        answer["source"] = {"kind": "track", "id": track.id}
        return _motion(track)
    from debrief_calc.analysis import executor

    params: dict[str, Any] = {"primary": opts.get("primary")}
    if opts.get("distance_unit") is not None:
        params["distance_unit"] = opts["distance_unit"]
    run = executor.run(svc.registry, "range-bearing", tracks, params)
    if not run.success or run.error is not None:
        error = run.error or {}
        raise SuiteError(str(error.get("message")), code=str(error.get("code")), details=error.get("details"))
    usable = [f for f in run.features if isinstance(f["properties"].get("series"), dict)]
    if not usable:
        raise _fail("features", "overlap", "the tracks share no time with the primary: nothing to plot")
    chosen = _pick(usable, secondary)
    keep.extend(run.features)  # stored once the picture is drawn: a refused call keeps nothing
    answer["source"] = {**plotstate.result_ref(str(chosen["id"])), "kind": "range-bearing run"}
    _others(usable, chosen, answer)
    times, columns, title, cpa, props = _table(chosen, None)
    if cpa is None or cpa[1]["source"] != "cpa_time":
        by_id = {t.id: t for t in read_tracks(tracks)}
        cpa = _between_fixes(by_id[props["primary_id"]], by_id[props["secondary_id"]], props) or cpa
    return times, columns, title, cpa, props


def _between_fixes(a: TrackData, b: TrackData, props: Mapping[str, Any]) -> tuple[Marker, dict[str, Any]] | None:
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


def _motion(track: TrackData) -> Table:
    """A single track's speed (kn) and course (°T) at its fixes, from its positions."""
    from debrief_calc.analysis.common import KNOT_MPS, Legs, motion_at

    speed, course = motion_at(Legs(track), track.t)
    columns = {
        "speed": _panel("speed", speed / KNOT_MPS, {}),
        "course": _panel("course", course, {}),
    }
    return track.t, columns, f"Speed and course of {track.name or track.id}", None, {}


# -- narrative entries -------------------------------------------------------------------------------


def _own_plot(plot: Mapping[str, Any] | None, features: Sequence[Any] | None) -> str | None:
    """The plot whose entries are marked when no narratives are given: the plot read, or the one
    plot every ``debrief-state:plots/…`` reference among the features names."""
    if plot is not None:
        filename = plot.get("filename")
        return filename if isinstance(filename, str) else None
    files: set[str] = set()
    for item in features or ():
        if plotstate.is_ref(item):
            ref = plotstate.parse_ref(item)
            if ref.kind != "plot":
                return None
            files.add(ref.key)
    return files.pop() if len(files) == 1 else None


def _is_entry(feature: object) -> bool:
    """A plot's narrative entry or note: a timed annotation with no geometry or a point (a timed
    line, such as a track-legs leg mark, is not one)."""
    if not isinstance(feature, dict) or feature_kind(feature) != "annotation":
        return False
    geometry = feature.get("geometry")
    shape = geometry.get("type") if isinstance(geometry, dict) else None
    return shape in (None, "Point") and isinstance(properties_of(feature).get("time"), str)


def _entries(
    svc: CalcService, narratives: Sequence[Mapping[str, Any]] | None, drawn: Window
) -> tuple[list[Marker], dict[str, Any] | None]:
    """The narrative entries inside the span as markers, and what became of each one given: marked
    (``marked_at``: their times, the first 50), ``outside_span`` or ``untimed`` (with their ids)."""
    from debrief_calc.calc.series_plot import Marker
    from debrief_calc.tracks.times import iso, parse_iso

    if narratives is None:
        return [], None
    if not isinstance(narratives, list):
        raise _fail("narratives", "type", "a list of annotation Features or {ref} items")
    for i, item in enumerate(narratives):
        if not isinstance(item, dict):
            raise _fail(f"narratives[{i}]", "type", "a GeoJSON Feature or a {ref} item")
    items = svc.expand_refs(narratives)
    markers: list[Marker] = []
    untimed: list[str] = []
    outside = 0
    for f in items:
        props = f.get("properties") if isinstance(f, dict) else None
        when = props.get("time") if isinstance(props, dict) else None
        try:
            t = parse_iso(when) if isinstance(when, str) else None
        except ValidationFailed:
            t = None
        if t is None or not isinstance(props, dict):
            untimed.append(str(f.get("id")) if isinstance(f, dict) else "?")
            continue
        if not drawn.logged_in(t):
            outside += 1
            continue
        text = props.get("text") if isinstance(props.get("text"), str) else props.get("name")
        who = props.get("track") or props.get("platform")
        markers.append(Marker(t, text if isinstance(text, str) else "", who=who if isinstance(who, str) else None))
    counts: dict[str, Any] = {"given": len(items), "marked": len(markers)}
    if markers:
        counts["marked_at"] = [iso(m.t) for m in sorted(markers, key=lambda m: m.t)[:50]]
    if outside:
        counts["outside_span"] = outside
    if untimed:
        counts["untimed"] = len(untimed)
        counts["untimed_ids"] = untimed[:20]
        counts["untimed_note"] = "no properties.time (an ISO 8601 string): an entry needs one to be marked"
    return markers, counts
