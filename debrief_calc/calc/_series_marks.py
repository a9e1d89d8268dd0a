"""What ``render_series`` marks on its pictures, and what the answer says of each: the CPA (a least
range at an end of the span is labelled as the closest there, never a CPA), every other pass, the
peak bearing rate between fixes, the periods of close quarters and the narrative entries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from debrief_calc.calc._series_source import Mark, amount
from debrief_calc.errors import ValidationFailed
from debrief_calc.plots import plotstate
from debrief_calc.tracks._feature_parts import feature_kind, properties_of
from debrief_calc.tracks.times import Window

if TYPE_CHECKING:
    from debrief_calc.calc._series_source import Series
    from debrief_calc.calc.series_plot import Marker, Period
    from debrief_calc.calc.service import CalcService

__all__ = [
    "Marks",
    "close_quarters",
    "entries",
    "is_close_quarters",
    "is_entry",
    "marks_of",
    "own_plot",
]


def _fail(field: str, rule: str, message: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(f"{field}: {message}", details={"field": field, "rule": rule, **details})


def _closest_at_edge(cpa: Mark, edge: str, window: bool) -> Mark:
    """A least range at the start or end of the span drawn is no closest approach (the ships were
    opening from the start, or still closing at the end): labelled as what it is."""
    from debrief_calc.tracks.times import clock

    marker, info = cpa
    trend = "range opening" if edge == "start" else "range closing"
    what = f"{edge} of the {'window' if window else 'data'}"
    value = info.get("range")
    shown = "" if value is None else f" {amount(value)} {info.get('unit', '')}"
    text = f"Closest{shown} at {clock(marker.t)}, the {what} ({trend})"
    note = f"the least range is at the {what}: not a closest approach ({trend}); widen the window to look for one"
    return replace(marker, text=text), {**info, "label": text, "edge": edge, "note": note}


# -- the marks of one picture -------------------------------------------------------------------------


class Marks:
    """The CPA, the other passes and the peak bearing rate within the span drawn, as markers and
    as the answer states them."""

    def __init__(self, series: Series, names: Sequence[str], cut: tuple[bool, bool]):
        drawn = Window(*series.span)
        cpa = series.cpa
        if cpa is not None and not drawn.contains(cpa[0].t):
            cpa = None  # outside the window drawn
        if cpa is not None and (edge := drawn.at_edge(cpa[0].t)) is not None:
            cpa = _closest_at_edge(cpa, edge, cut[0 if edge == "start" else 1])
        self.cpa = cpa
        self.peak = _peak(series.props, names, drawn)
        self.passes, self.pass_answer = _passes(series.props, drawn, cpa)

    @property
    def times(self) -> list[float]:
        """The instants marked (for the curve drawn between fixes to pass through each)."""
        out = [m.t for m, _ in self.passes]
        if self.cpa is not None:
            out.append(self.cpa[0].t)
        if self.peak is not None and self.peak[0] is not None:
            out.append(self.peak[0].t)
        return out


def marks_of(series: Series, names: Sequence[str], cut: tuple[bool, bool]) -> Marks:
    return Marks(series, names, cut)


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
    side = "drawing right" if rate > 0 else "drawing left" if rate < 0 else ""
    text = f"Peak {rate:+.1f}{unit} ({side}) at {clock(t)}, {where}" if side else f"Peak 0{unit} at {clock(t)}"
    info = {
        "value": rate,
        "time": iso(t),
        "label": text,
        "source": "peak_bearing_rate",
        "between_samples": not on_sample,
    }
    return Marker(t, text, "bearing_rate", float(rate)), info


def _passes(props: Mapping[str, Any], drawn: Window, cpa: Mark | None) -> tuple[list[Mark], list[dict[str, Any]]]:
    """Every pass the result lists inside the span drawn: a marker on the range panel for each that
    is not the CPA marked (that one is the CPA's line), and the answer's entries."""
    from debrief_calc.calc.series_plot import Marker
    from debrief_calc.tracks.times import clock, parse_iso

    unit = str(props.get("distance_unit") or "nm")
    markers: list[Mark] = []
    out: list[dict[str, Any]] = []
    listed = props.get("passes")
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("time"), str):
            continue
        t = parse_iso(entry["time"])
        value = entry.get("range")
        if not drawn.contains(t) or not isinstance(value, int | float):
            continue
        is_cpa = bool(entry.get("is_cpa")) and cpa is not None and abs(cpa[0].t - t) < 1e-3
        text = f"Pass {entry.get('pass')}: {amount(value)} {unit} at {clock(t)}"
        info = {"pass": entry.get("pass"), "time": entry["time"], "range": value, "unit": unit, "is_cpa": is_cpa}
        if is_cpa:
            info["label"] = cpa[1]["label"] if cpa is not None else text
        else:
            info["label"] = text
            markers.append((Marker(t, text, "range", float(value)), info))
        if "bearing" in entry:
            info["bearing"] = entry["bearing"]
        out.append(info)
    return markers, out


# -- close quarters -----------------------------------------------------------------------------------


def is_close_quarters(feature: Mapping[str, Any]) -> bool:
    """A close-quarters result: its periods of one pair within a threshold."""
    props = properties_of(feature)
    return isinstance(props.get("periods"), list) and isinstance(props.get("threshold"), int | float)


def close_quarters(
    svc: CalcService,
    given: Sequence[Mapping[str, Any]],
    series: Series,
    threshold: float | None,
    keep: list[dict[str, Any]],
) -> tuple[list[Period], dict[str, Any] | None]:
    """The periods of close quarters shaded: those of the close-quarters results given for the pair
    drawn, or (``threshold``, in the series' unit) close-quarters run here on its two tracks (its
    result kept in ``keep``, stored with the picture); and what the answer says of them."""
    from debrief_calc.calc.series_plot import Period
    from debrief_calc.tracks.times import parse_iso

    results = [properties_of(f) for f in given]
    refs: list[Any] = [f.get("id") for f in given]
    if threshold is not None:
        if series.pair is None:
            raise _fail(
                "parameters.close_quarters",
                "applies-to",
                "runs close-quarters on the two tracks drawn: give tracks (features or plot), or pass a close-quarters "
                "result among features",
            )
        result = _run_close_quarters(svc, series, threshold, keep)
        results, refs = [result["properties"]], [result.get("id")]
    if not results:
        return [], None
    ids = {str(series.props.get(k)) for k in ("primary_id", "secondary_id") if series.props.get(k) is not None}
    drawn = Window(*series.span)
    periods: list[Period] = []
    listed: list[dict[str, Any]] = []
    other_pairs = 0
    for props, ref in zip(results, refs, strict=True):
        pair = {str(props.get("first_id")), str(props.get("second_id"))}
        if ids and pair != ids:
            other_pairs += 1
            continue
        unit = str(props.get("distance_unit") or "nm")
        label = f"within {amount(float(props['threshold']))} {unit}"
        for p in props["periods"]:
            if not isinstance(p, Mapping) or not isinstance(p.get("start"), str) or not isinstance(p.get("end"), str):
                continue
            start, end = parse_iso(p["start"]), parse_iso(p["end"])
            shown = drawn.overlaps((start, end))
            listed.append({k: p.get(k) for k in ("start", "end", "least_range", "least_range_time")} | {"drawn": shown})
            if shown:
                periods.append(Period(drawn.clamp(start), drawn.clamp(end), label if not periods else ""))
        answer: dict[str, Any] = {"threshold": props["threshold"], "unit": unit, "periods": listed[:50]}
        if ref is not None:
            answer.update(plotstate.result_ref(str(ref)))
    if not listed and other_pairs:
        return [], {"periods": [], "note": f"{other_pairs} close-quarters result(s) given are of another pair"}
    if not listed:
        answer["note"] = "never within the threshold over the period drawn"
    return periods, answer


def _run_close_quarters(svc: CalcService, series: Series, threshold: float, keep: list[dict[str, Any]]) -> Any:
    """close-quarters run on the tracks the series was measured from, the primary against the
    secondary drawn; all its results go to ``keep``, that pair's properties come back."""
    from debrief_calc.analysis import executor
    from llmem.core.errors import SuiteError

    props = series.props
    unit = str(props.get("distance_unit") or "nm")
    params = {"threshold": threshold, "distance_unit": unit, "primary": props.get("primary_id")}
    run = executor.run(svc.registry, "close-quarters", list(series.sources), params)
    if not run.success or run.error is not None:
        error = run.error or {}
        raise SuiteError(str(error.get("message")), code=str(error.get("code")), details=error.get("details"))
    keep.extend(run.features)
    mine = next(f for f in run.features if f["properties"].get("second_id") == props.get("secondary_id"))
    return mine


# -- narrative entries -------------------------------------------------------------------------------


def own_plot(plot: Mapping[str, Any] | None, features: Sequence[Any] | None) -> str | None:
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


def is_entry(feature: object) -> bool:
    """A plot's narrative entry or note: a timed annotation with no geometry or a point (a timed
    line, such as a track-legs leg mark, is not one)."""
    if not isinstance(feature, dict) or feature_kind(feature) != "annotation":
        return False
    geometry = feature.get("geometry")
    shape = geometry.get("type") if isinstance(geometry, dict) else None
    return shape in (None, "Point") and isinstance(properties_of(feature).get("time"), str)


def entries(
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
