"""``render_series`` for bearing residuals: legacy Debrief's stacked dots.

A stored ``bearing-residuals`` result (or a sensor with its target and host tracks, for which
``bearing-residuals`` is run here and its result kept) is drawn as dots of each cut's bearing error
against time, about a zero line (the ambiguous bearing's and the frequency's errors, when the result
has them, in panels of their own), above ownship's course: its legs flat at their courses and the
turns between them, each leg shaded and labelled across the panels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from debrief_calc.errors import ValidationFailed
from debrief_calc.plots import plotstate
from debrief_calc.tracks._feature_parts import feature_kind, properties_of
from llmem.core.errors import SuiteError

if TYPE_CHECKING:
    from debrief_calc.calc.series_plot import Panel, Span
    from debrief_calc.calc.service import CalcService
    from debrief_calc.geo._arrays import FloatArray
    from debrief_calc.tracks.times import Window

__all__ = ["RESIDUAL_QUANTITIES", "is_residuals", "residual_table", "run_residuals"]

#: the panels of a residuals picture, in order, as the result has them
RESIDUAL_QUANTITIES: Final = ("error", "ambiguous_error", "frequency_error", "ownship_course")
_LABELS: Final = {
    "error": "Bearing error (°)",
    "ambiguous_error": "Ambiguous bearing error (°)",
    "frequency_error": "Frequency error (Hz)",
    "ownship_course": "Ownship course (°T)",
}


def is_residuals(feature: Mapping[str, Any]) -> bool:
    """Whether ``feature`` is a bearing-residuals result (its series has the measured bearings)."""
    series = properties_of(feature).get("series")
    return (
        isinstance(series, dict)
        and "measured" in series
        and "error" in series
        and "sensor_id" in properties_of(feature)
    )


def run_residuals(
    svc: CalcService,
    features: list[dict[str, Any]],
    secondary: str | None,
    distance_unit: str | None,
    answer: dict[str, Any],
) -> dict[str, Any]:
    """``bearing-residuals`` run on a sensor and its tracks (``secondary``: the target when several);
    its result (kept in the store once drawn: the caller's ``keep``)."""
    from debrief_calc.analysis import executor

    params: dict[str, Any] = {"target": secondary}
    if distance_unit is not None:
        params["distance_unit"] = distance_unit
    run = executor.run(svc.registry, "bearing-residuals", features, params)
    if not run.success or run.error is not None:
        error = run.error or {}
        raise SuiteError(str(error.get("message")), code=str(error.get("code")), details=error.get("details"))
    (result,) = run.features
    answer["source"] = {**plotstate.result_ref(str(result["id"])), "kind": "bearing-residuals run"}
    if run.warnings:
        answer["warnings"] = run.warnings
    return result


def _course_panel(props: Mapping[str, Any], t0: float, t1: float) -> Panel | None:
    """Ownship's course as its legs give it (flat on each leg, straight across each turn), clipped
    to the span drawn."""
    import numpy as np

    from debrief_calc.calc.series_plot import Panel
    from debrief_calc.tracks.times import parse_iso

    legs = props.get("ownship_legs")
    if not isinstance(legs, list) or not legs:
        return None
    times, courses = [], []
    for leg in legs:
        for key in ("start", "end"):
            times.append(parse_iso(leg[key]))
            courses.append(float(leg["course"]))
    t = np.asarray(times)
    keep = (t >= t0) & (t <= t1)
    if keep.sum() < 2:
        return None
    return Panel("ownship_course", _LABELS["ownship_course"], np.asarray(courses)[keep], "circle", times=t[keep])


def residual_table(
    feature: Mapping[str, Any], window: Window | None
) -> tuple[FloatArray, dict[str, Panel], str, Mapping[str, Any], list[Span]]:
    """The result's cut times (in the window), a panel per quantity, the title, its properties and
    ownship's legs as spans."""
    import numpy as np

    from debrief_calc.calc.series_plot import Panel, Span
    from debrief_calc.tracks.features import iso
    from debrief_calc.tracks.times import parse_iso, parse_times

    props = properties_of(feature)
    series = props["series"]
    times = np.asarray(parse_times(series["time"], field="properties.series.time", label="result"), dtype=float)
    keep = np.ones(times.size, dtype=bool) if window is None else np.asarray(window.mask(times), dtype=bool)
    if not keep.any():
        raise ValidationFailed(
            f"time_start: no cut in the window; the cuts run {iso(float(times[0]))} to {iso(float(times[-1]))}",
            details={"field": "time_start", "rule": "window"},
        )
    t = times[keep]
    columns: dict[str, Panel] = {}
    rings = _outlier_mask(props, series, times.size)[keep]
    # an ambiguous array whose ambiguous bearings fit: they are the main dots, the recorded ones below
    fitting = "ambiguous_error" if props.get("residual_side") == "ambiguous" else "error"
    labels = dict(_LABELS)
    if "residual_side" in props:
        other = "error" if fitting == "ambiguous_error" else "ambiguous_error"
        labels[fitting] += ": the side that fits" if fitting == "ambiguous_error" else ""
        labels[other] = ("Recorded" if other == "error" else "Ambiguous") + " bearing error (°): the other side"
    for name in (fitting, *(q for q in RESIDUAL_QUANTITIES[:3] if q != fitting)):
        values = series.get(name)
        if isinstance(values, list) and len(values) == times.size:
            arr = np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)[keep]
            if np.isfinite(arr).any():
                main = name == fitting and rings.any()
                columns[name] = Panel(
                    name,
                    labels[name],
                    arr,
                    dots=True,
                    centred=True,
                    rings=rings if main else None,
                    ring_label="outlier, left out" if main else "",
                )
    course = _course_panel(props, float(t[0]), float(t[-1]))
    if course is None and isinstance(series.get("ownship_course"), list):
        arr = np.asarray([np.nan if v is None else float(v) for v in series["ownship_course"]], dtype=float)[keep]
        course = Panel("ownship_course", _LABELS["ownship_course"], arr, "circle")
    if course is not None:
        columns["ownship_course"] = course
    spans = [
        Span(parse_iso(leg["start"]), parse_iso(leg["end"]), f"L{leg['leg']} {float(leg['course']):03.0f}°")
        for leg in props.get("ownship_legs") or []
        if isinstance(leg, dict)
    ]
    title = f"Stacked dots: {props.get('sensor_name')} against {props.get('target_name') or props.get('target_id')}"
    return t, columns, title, props, spans


def _outlier_mask(props: Mapping[str, Any], series: Mapping[str, Any], size: int) -> Any:
    """Per cut of the series, whether the result named it an outlier."""
    import numpy as np

    named = {o.get("cut") for o in (props.get("outliers") or {}).get("cuts") or [] if isinstance(o, dict)}
    numbers = series.get("cut")
    if not named or not isinstance(numbers, list) or len(numbers) != size:
        return np.zeros(size, dtype=bool)
    return np.asarray([n in named for n in numbers], dtype=bool)


def residual_answer(props: Mapping[str, Any]) -> dict[str, Any]:
    """What the answer says of the residuals drawn: their figures and the verdict."""
    keys = (
        "mean_error",
        "rms_error",
        "mean_error_clean",
        "rms_error_clean",
        "outliers",
        "residual_count",
        "cut_count",
        "verdict",
        "residual_side",
        "outside_target",
        "ambiguity",
        "frequency",
    )
    return {k: props[k] for k in keys if k in props}


def sensors_among(found: Sequence[Mapping[str, Any]]) -> bool:
    return any(feature_kind(f) == "sensor" for f in found)
