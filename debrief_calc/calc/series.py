"""``render_series``: a picture of a series against time, from a stored ``range-bearing`` result or
computed from tracks, without the plot-state server; or (``parameters.picture: "relative-motion"``)
the analyst's relative plot of the same two tracks.

What is plotted: a stored result's ``properties.series`` (any numeric column beside ``time``;
default range, bearing and bearing rate), or for two tracks or more range-bearing run here on the
primary's fixes (its result kept in the store, its reference in the answer) and drawn between
fixes (:mod:`debrief_calc.analysis.range_curve`: every fix both sides, about two points a pixel
column and round every instant marked, so a rate's curve reaches the peak it labels), or for one
track its speed, course and rate of turn (steps at its fixes). The tracks are read and cut as
``run_tool`` reads them (:mod:`debrief_calc.calc.inputs`: a window asked for, else a plot's saved
window, each edge a fix interpolated exactly there); a stored series keeps its rows inside the
window. The answer's ``window`` states the window used and where it came from.

Marked (:mod:`._series_marks`): the CPA (``cpa_time``, else found between the fixes of the two
tracks, else the sampled minimum, which the answer then says it is; a minimum at the start or end
of the span drawn is not a CPA, and is labelled as the closest at that end), every other pass, the
peak bearing rate between fixes, the periods of close quarters (close-quarters results given among
the features, or ``parameters.close_quarters``, a threshold run here) and the narrative entries
(given, or those of the plot read). A panel's axis spans its values and marks (``parameters.y_range``
sets any panel's); a signed rate's label says which sign is which.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from debrief_calc.calc._series_extremes import Extreme, signed_extremes
from debrief_calc.calc._series_source import fail
from debrief_calc.calc.series_residuals import (
    RESIDUAL_QUANTITIES,
    is_residuals,
    residual_answer,
    residual_table,
    run_residuals,
    sensors_among,
)
from debrief_calc.plots import plotstate
from debrief_calc.tracks._feature_parts import properties_of
from debrief_calc.tracks.times import Window

if TYPE_CHECKING:
    from debrief_calc.calc._series_marks import Marks
    from debrief_calc.calc._series_source import Series
    from debrief_calc.calc.series_plot import Panel
    from debrief_calc.calc.service import CalcService
    from debrief_calc.geo._arrays import FloatArray

__all__ = ["DEFAULT_QUANTITIES", "PICTURES", "TRACK_QUANTITIES", "render_series"]

DEFAULT_QUANTITIES = ("range", "bearing", "bearing_rate")
TRACK_QUANTITIES = ("speed", "course", "rate_of_turn")
MAX_PANELS = 6
PICTURES = ("time", "relative-motion")
PARAMETERS = (
    "primary",
    "secondary",
    "distance_unit",
    "width",
    "height",
    "picture",
    "y_range",
    "max_range",
    "close_quarters",
)
#: the parameters that apply to one picture only
_ONLY = {"y_range": "time", "max_range": "relative-motion"}


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
    """The picture and what it shows (panels, span, samples, the CPA, passes, close quarters and
    narratives marked, where the series is stored). ``features``: stored range-bearing results
    (``{"ref"}`` items) or tracks (inline or by reference), and close-quarters results to shade;
    ``plot``: tracks of a plot, as ``run_tool`` reads them. ``parameters``: ``primary`` (tracks),
    ``secondary`` (which result or track the range is to), ``distance_unit`` (tracks), ``width``
    and ``height`` (pixels), ``picture`` (``time`` or ``relative-motion``), ``y_range``
    (``{quantity: [low, high]}``), ``max_range`` (relative-motion's outer ring),
    ``close_quarters`` (a threshold). ValidationFailed naming the field for a bad source,
    quantity, parameter or window."""
    from debrief_calc.calc._series_marks import close_quarters, is_close_quarters, is_entry, marks_of, own_plot
    from debrief_calc.calc._series_source import (
        Series,
        made_in,
        pick,
        series_from_tracks,
        stored_series,
        tracks_of,
        with_curve,
    )
    from debrief_calc.calc.inputs import cut_ends, window_answer

    if (features is None) == (plot is None):
        raise fail("features", "one of", "give features (tracks, or a range-bearing result's {ref}) or plot, not both")
    opts = _parameters(parameters)
    relative = opts.get("picture") == "relative-motion"
    if features is not None and (not isinstance(features, list) or not features):
        raise fail("features", "min items", "give tracks (GeoJSON Features or {ref} items) or a result's {ref}")
    for i, item in enumerate(features or []):
        if not isinstance(item, dict):
            raise fail(f"features[{i}]", "type", "a GeoJSON Feature or a {ref} item")
    if plot is not None and not isinstance(plot, Mapping):
        raise fail("plot", "type", 'an object: {"filename": "x.plot.json", "feature_ids": [...]}')
    if relative and quantities:
        raise fail(
            "quantities", "applies-to", "a relative-motion picture draws range and bearing: leave quantities out"
        )
    if relative and narratives is not None:
        raise fail("narratives", "applies-to", "narratives are marked on the time plot (picture 'time') only")
    inputs = svc.read_inputs(None, features, plot, time_start, time_end)
    found = [f for f in inputs.features or [] if isinstance(f, dict)]
    quarters = [f for f in found if is_close_quarters(f)]
    found = [f for f in found if not is_close_quarters(f)]
    answer: dict[str, Any] = {}
    keep: list[dict[str, Any]] = []  # range-bearing's and close-quarters' results, stored once drawn
    narratives_from: str | None = None  # the plot whose entries are marked when none are given
    results = [f for f in found if isinstance(properties_of(f).get("series"), dict)]
    spans: list[Any] = []  # stretches shaded on every panel (ownship's legs under stacked dots)
    dots = [f for f in results if is_residuals(f)]
    if dots or sensors_among(found):
        if opts.get("primary") is not None:
            raise fail("parameters.primary", "applies-to", "applies to tracks; bearing residuals have no primary")
        if dots and len(dots) != len(found):
            raise fail("features", "one kind", "give one bearing-residuals result, or a sensor with its tracks")
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
        series = Series(times, columns, title, None, props)
        answer["residuals"] = residual_answer(props)
    elif results:
        if len(results) != len(found):
            raise fail("features", "one kind", "give stored range-bearing results or tracks, not both")
        for key in ("primary", "distance_unit"):
            if opts.get(key) is not None:
                raise fail(f"parameters.{key}", "applies-to", "applies to tracks; a stored result has its own")
        chosen = pick(results, opts.get("secondary"))
        window = inputs.asked or next((w for w, ids in inputs.windows if str(chosen.get("id")) in ids), None)
        series = stored_series(svc, results, chosen, window, answer)
        cut = (True, True) if made_in(chosen) is not None else (False, False)
    else:
        tracks = tracks_of(found, "plot" if plot is not None else "features")
        if not relative and narratives is None and (own := own_plot(plot, features)) is not None:
            narratives = [f for f in svc.plot_features({"filename": own}) if is_entry(f)]
            narratives_from = own
        series = series_from_tracks(svc, tracks, opts, answer, keep)
        answer["window"] = window_answer(inputs)
        cut = cut_ends(inputs)
    if relative and (series.props.get("track_name") or "residuals" in answer):
        raise fail("features", "two tracks", "a relative-motion picture needs two tracks (or a range-bearing result)")
    names = _quantities(series, quantities, relative)
    marks = marks_of(series, names, cut)
    periods, quarters_answer = close_quarters(svc, quarters, series, opts.get("close_quarters"), keep)
    width = opts.get("width", 900)
    marked = marks.times + [t for p in periods for t in (p.start, p.end)]
    series = with_curve(series, width if not relative else min(width, opts.get("height", width)), marked)
    if relative:
        picture, drawn = _relative(series, marks, periods, opts)
        answer.update(drawn)
        counts = None
    else:
        panels = _limits([series.columns[q] for q in names], opts.get("y_range"))
        drawn_panels = [_through_marks(p, series.times, marks) if series.pair is None else p for p in panels]
        extremes = {d.name: signed_extremes(d, series.times) for d in drawn_panels}
        picture, counts = _time_plot(svc, series, drawn_panels, marks, (periods, spans), narratives, opts, extremes)
        answer["title"] = _title(series, names)
    answer.update(
        mediaType="image/png",
        picture="relative-motion" if relative else "time",
        width=picture.width,
        height=picture.height,
        bytes=len(picture.png),
        span=_span(series),
        samples=int(series.times.size),
    )
    if not relative:
        answer["panels"] = [
            {**_panel_answer(p, d, picture.ranges[p.name], marks), "extremes": [e.info for e in extremes[p.name]]}
            for p, d in zip(panels, drawn_panels, strict=True)
        ]
    if series.curve is not None:
        answer["curve"] = series.curve
    for feature in keep:
        made = properties_of(feature).get("provenance")
        plotstate.store_result(
            svc.store, feature, str(made.get("tool")) if isinstance(made, Mapping) else "range-bearing"
        )
    if marks.cpa is not None:
        answer["cpa"] = marks.cpa[1]
    if marks.pass_answer:
        answer["passes"] = _passes_answer(marks, getattr(picture, "marked", []))
    if quarters_answer is not None:
        answer["close_quarters"] = quarters_answer
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


def _title(series: Series, names: Sequence[str]) -> str:
    from debrief_calc.calc._series_source import title_of

    return title_of(series, names)


def _span(series: Series) -> list[str]:
    from debrief_calc.tracks.times import iso

    return [iso(t) for t in series.span]


def _quantities(series: Series, quantities: Sequence[str] | None, relative: bool) -> list[str]:
    """The quantities drawn: those asked, else the defaults (relative motion: range and bearing),
    each a numeric column of the series."""
    columns = series.columns
    if relative:
        missing = [q for q in ("range", "bearing") if q not in columns]
        if missing:
            raise fail("features", "series", f"the series has no {' or '.join(missing)} column to draw relative motion")
        return ["range", "bearing"]
    names = list(quantities) if quantities else _defaults(columns)
    if len(names) > MAX_PANELS:
        raise fail("quantities", "max items", f"at most {MAX_PANELS} quantities in one picture; {len(names)} given")
    if unknown := [q for q in names if q not in columns]:
        raise fail(
            "quantities",
            "choices",
            f"{', '.join(map(repr, unknown))} not among the series' numeric columns: {', '.join(columns)}",
            available=list(columns),
        )
    return names


def _time_plot(
    svc: CalcService,
    series: Series,
    panels: list[Panel],
    marks: Marks,
    shaded: tuple[Sequence[Any], Sequence[Any]],
    narratives: Sequence[Any] | None,
    opts: Mapping[str, Any],
    extremes: Mapping[str, Sequence[Extreme]],
) -> tuple[Any, dict[str, Any] | None]:
    """The time plot; ``shaded``: the periods of close quarters, and the spans of ownship's legs
    (under stacked dots); ``extremes``: each panel's, marked and labelled (but the one the true peak
    already marks)."""
    from debrief_calc.calc._series_marks import entries
    from debrief_calc.calc.series_plot import draw_series

    names = [p.name for p in panels]
    peaks = [marks.peak[0]] if marks.peak is not None and marks.peak[0] is not None else []
    entries_drawn, counts = entries(svc, narratives, Window(*series.span))
    picture = draw_series(
        series.times,
        panels,
        title=_title(series, names),
        cpa=marks.cpa[0] if marks.cpa is not None else None,
        narratives=entries_drawn,
        peaks=[*peaks, *(e.marker for n in names for e in extremes.get(n, ()) if e.drawn and not _same_side(e, peaks))],
        passes=[m for m, _ in marks.passes] if "range" in names else [],
        periods=shaded[0],
        spans=shaded[1],
        width=opts.get("width", 900),
        height=opts.get("height"),
    )
    return picture, counts


def _same_side(extreme: Extreme, peaks: Sequence[Any]) -> bool:
    """Whether a true peak on the extreme's panel already marks its side (it is the truer value)."""
    return any(p.panel == extreme.marker.panel and (p.value or 0.0) * (extreme.marker.value or 0.0) > 0 for p in peaks)


def _relative(
    series: Series, marks: Marks, periods: Sequence[Any], opts: Mapping[str, Any]
) -> tuple[Any, dict[str, Any]]:
    from debrief_calc.calc.relative_plot import draw_relative

    return draw_relative(series, marks, periods, opts)


def _parameters(parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parameters checked: known names, ids as strings, a distance unit, sizes in range, a
    picture, axis limits, a positive threshold and range."""
    from debrief_calc.geo.units import DISTANCE_UNITS

    opts = dict(parameters or {})
    if unknown := [k for k in opts if k not in PARAMETERS]:
        raise fail(f"parameters.{unknown[0]}", "known", f"not a parameter; the parameters are {', '.join(PARAMETERS)}")
    for key in ("primary", "secondary"):
        if opts.get(key) is not None and not isinstance(opts[key], str):
            raise fail(f"parameters.{key}", "type", "a track id or name (a string)")
    unit = opts.get("distance_unit")
    if unit is not None and unit not in DISTANCE_UNITS:
        raise fail("parameters.distance_unit", "choices", f"{unit!r} is not one of {', '.join(DISTANCE_UNITS)}")
    for key, low in (("width", 300), ("height", 150)):
        value = opts.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 2048):
            raise fail(f"parameters.{key}", "range", f"pixels, a whole number from {low} to 2048")
    picture = opts.get("picture", "time")
    if picture not in PICTURES:
        raise fail("parameters.picture", "choices", f"{picture!r} is not one of {', '.join(PICTURES)}")
    for key, only in _ONLY.items():
        if opts.get(key) is not None and picture != only:
            raise fail(f"parameters.{key}", "applies-to", f"applies to picture {only!r}, and picture is {picture!r}")
    for key in ("max_range", "close_quarters"):
        value = opts.get(key)
        if value is not None and (not _number(value) or not value > 0):
            raise fail(f"parameters.{key}", "range", "a distance in distance_unit, above 0")
    if (limits := opts.get("y_range")) is not None:
        _check_limits(limits)
    return opts


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_limits(limits: object) -> None:
    if not isinstance(limits, Mapping) or not limits:
        raise fail("parameters.y_range", "type", 'an object of quantity: [low, high], e.g. {"range": [0, 5000]}')
    for name, pair in limits.items():
        field = f"parameters.y_range.{name}"
        if not isinstance(pair, list) or len(pair) != 2 or not all(v is None or _number(v) for v in pair):
            raise fail(field, "type", "[low, high]: two numbers (either may be null: the data's)")
        if None not in pair and not pair[0] < pair[1]:
            raise fail(field, "order", f"low {pair[0]} must be below high {pair[1]}")


def _limits(panels: list[Panel], limits: Mapping[str, Any] | None) -> list[Panel]:
    """The panels with the axis limits asked (``y_range``); a quantity not drawn is refused."""
    from dataclasses import replace

    if not limits:
        return panels
    drawn = {p.name for p in panels}
    if unknown := [q for q in limits if q not in drawn]:
        raise fail(
            f"parameters.y_range.{unknown[0]}", "drawn", f"not a quantity drawn; those are {', '.join(sorted(drawn))}"
        )
    return [replace(p, limits=(limits[p.name][0], limits[p.name][1])) if p.name in limits else p for p in panels]


def _defaults(columns: Mapping[str, Panel]) -> list[str]:
    for wanted in (DEFAULT_QUANTITIES, TRACK_QUANTITIES, RESIDUAL_QUANTITIES):
        if chosen := [q for q in wanted if q in columns]:
            return chosen
    return list(columns)[:3]


def _panel_answer(panel: Panel, drawn: Panel, axis: tuple[float, float], marks: Marks) -> dict[str, Any]:
    """A panel as the answer gives it: its min and max (``extrema``: ``"sampled"``, the series'
    samples, or ``"curve"``, the curve drawn between fixes); the true extreme between fixes, where
    the result knows it, beside them (``true_min`` of the range: the CPA; ``true_peak`` of the
    bearing rate), and ``through`` the marks a stored series' line was drawn through (its samples
    miss them); ``limits`` when the axis was asked for."""
    out: dict[str, Any] = {
        "quantity": panel.name,
        "label": panel.label,
        "axis": [round(v, 4) for v in axis],
        **_extent(panel.values),
        "extrema": "curve" if panel.times is not None else "sampled",
    }
    if panel.limits is not None:
        out["limits"] = list(panel.limits)
    cpa = marks.cpa
    true_cpa = cpa is not None and cpa[1]["source"] in ("cpa_time", "closest-approach") and "range" in cpa[1]
    if panel.name == "range" and cpa is not None and true_cpa:
        out["true_min"] = {"value": cpa[1]["range"], "time": cpa[1]["time"], "source": cpa[1]["source"]}
    if panel.name == "bearing_rate" and marks.peak is not None:
        out["true_peak"] = marks.peak[1]
    if drawn is not panel:
        out["through"] = _through_names(panel.name, marks)
    return out


def _marked_points(name: str, marks: Marks) -> list[tuple[float, float]]:
    """The true values between samples the result knows for a quantity: the CPA's and every pass's
    range, the peak bearing rate."""
    points: list[tuple[float, float]] = []
    if name == "range":
        cpa = marks.cpa
        if cpa is not None and cpa[1]["source"] == "cpa_time" and isinstance(cpa[1].get("range"), int | float):
            points.append((cpa[0].t, float(cpa[1]["range"])))
        points += [(m.t, float(m.value)) for m, _ in marks.passes if m.value is not None]
    if name == "bearing_rate" and marks.peak is not None and marks.peak[0] is not None:
        points.append((marks.peak[0].t, float(marks.peak[0].value or 0.0)))
    return points


def _through_names(name: str, marks: Marks) -> list[str]:
    if name == "bearing_rate":
        return ["true_peak"]
    return (["cpa"] if marks.cpa is not None and marks.cpa[1]["source"] == "cpa_time" else []) + [
        f"pass {info['pass']}" for _, info in marks.passes
    ]


def _through_marks(panel: Panel, times: FloatArray, marks: Marks) -> Panel:
    """A stored series' panel with the true values it misses between its samples put in (the CPA,
    the passes, the peak bearing rate): its line then reaches the marks drawn on it."""
    from dataclasses import replace

    import numpy as np

    points = _marked_points(panel.name, marks)
    if not points or panel.times is not None:
        return panel
    t = np.concatenate((times, [p[0] for p in points]))
    v = np.concatenate((panel.values, [p[1] for p in points]))
    order = np.argsort(t, kind="stable")
    return replace(panel, values=v[order], times=t[order])


def _passes_answer(marks: Marks, labelled: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for info in marks.pass_answer[:50]:
        entry = dict(info)
        if not entry["is_cpa"]:
            entry["labelled"] = entry["label"] in labelled
        out.append(entry)
    return out


def _extent(values: FloatArray) -> dict[str, Any]:
    import numpy as np

    finite = values[np.isfinite(values)]
    if not finite.size:
        return {"min": None, "max": None}
    return {"min": round(float(finite.min()), 4), "max": round(float(finite.max()), 4)}
