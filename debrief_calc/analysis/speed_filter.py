"""``speed-filter``: the periods a track spends above (or below) a speed threshold."""

from __future__ import annotations

from typing import Any

import numpy as np

from debrief_calc.analysis.common import KNOT_MPS, Legs, lonlat_list, num, result_feature
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.tracks.features import iso, track_data

BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


def _runs(match: BoolArray) -> list[tuple[int, int]]:
    """``(first, last)`` leg indices of each run of True."""
    edges = np.diff(np.concatenate(([False], match, [False])).astype(np.int8))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1) - 1
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def _merged(runs: list[tuple[int, int]], t: np.ndarray[Any, Any], min_gap: float) -> tuple[list[tuple[int, int]], int]:
    """The runs with those separated by a gap shorter than ``min_gap`` seconds (from the end
    of one to the start of the next) joined into one, and how many gaps were closed."""
    out: list[tuple[int, int]] = []
    closed = 0
    for first, last in runs:
        if out and float(t[first]) - float(t[out[-1][1] + 1]) < min_gap:
            out[-1] = (out[-1][0], last)
            closed += 1
        else:
            out.append((first, last))
    return out, closed


def handle(inp: ToolInput) -> ToolOutput:
    track = track_data(inp.features[0], index=0)
    threshold = float(inp.parameters["threshold_kn"]) * KNOT_MPS
    mode = inp.parameters["mode"]
    min_duration = float(inp.parameters["min_duration_s"])
    min_gap = float(inp.parameters["min_gap_s"])
    legs = Legs(track)
    timed = legs.dt > 0
    with np.errstate(invalid="ignore"):
        match = legs.speed > threshold if mode == "above" else legs.speed < threshold
    # A leg that takes no time has no speed: it joins the run it sits in (it takes the state of
    # the leg before it) rather than splitting it.
    if not timed.all() and timed.any():
        index = np.where(timed, np.arange(len(legs)), -1)
        np.maximum.accumulate(index, out=index)
        first = int(np.flatnonzero(timed)[0])
        index[index < 0] = first
        match = match[index]
    elif not timed.any():
        match = np.zeros(len(legs), dtype=bool)

    periods: list[dict[str, Any]] = []
    stretches: list[list[list[float]]] = []
    dropped = 0
    total = 0.0
    runs, gaps_closed = _merged(_runs(match), track.t, min_gap)
    for first, last in runs:
        start, end = float(track.t[first]), float(track.t[last + 1])
        duration = end - start
        if duration < min_duration or duration == 0:
            dropped += 1
            continue
        speeds = legs.speed[first : last + 1]
        distance = float(legs.dist[first : last + 1].sum())
        total += duration
        periods.append(
            {
                "start": iso(start),
                "end": iso(end),
                "duration_s": num(duration, 3),
                "max_speed_kn": num(float(np.nanmax(speeds)) / KNOT_MPS, 4),
                "mean_speed_kn": num(distance / duration / KNOT_MPS, 4),
                "distance_nm": num(distance / 1852.0, 7),
                "fix_count": last - first + 2,
            }
        )
        stretches.append(lonlat_list(track.lon[first : last + 2], track.lat[first : last + 2]))

    props = {
        "track_id": track.id,
        "threshold_kn": inp.parameters["threshold_kn"],
        "mode": mode,
        "min_duration_s": min_duration,
        "min_gap_s": min_gap,
        "gaps_closed": gaps_closed,
        "period_count": len(periods),
        "periods_too_short": dropped,
        "total_duration_s": num(total, 3),
        "periods": periods,
    }
    title = f"{track.name or track.id}: {mode} {inp.parameters['threshold_kn']:g} kn"
    geometry = {"type": "MultiLineString", "coordinates": stretches}
    return ToolOutput(features=[result_feature(title, geometry, props)])


SPEC = ToolSpec(
    name="speed-filter",
    description=(
        "The periods a track's leg speed (geodesic distance over real time between fixes; stored "
        "speeds are ignored) is above (or below) a threshold: start, end, duration, max and mean "
        "speed of each, and total_duration_s over them. Comparisons are strict. Legs that take no time "
        "join the period around them; with min_gap_s, periods apart by less than it are one (the "
        "dip between counts in its duration and mean speed; gaps_closed counts them). The geometry "
        "is a MultiLineString of those stretches."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="single",
    parameters=(
        Parameter("threshold_kn", "number", "Speed threshold in knots.", required=True, unit="kn", minimum=0),
        Parameter(
            "mode",
            "string",
            "'above': periods faster than the threshold; 'below': slower.",
            default="above",
            choices=("above", "below"),
        ),
        Parameter(
            "min_duration_s",
            "number",
            "Shortest period reported, in seconds; shorter ones (and any taking no time) are counted in periods_too_short.",
            default=0,
            unit="s",
            minimum=0,
        ),
        Parameter(
            "min_gap_s",
            "number",
            "Periods separated by a gap shorter than this, in seconds, are merged into one (before "
            "min_duration_s applies); 0: none merged.",
            default=0,
            unit="s",
            minimum=0,
        ),
    ),
    handler=handle,
)
