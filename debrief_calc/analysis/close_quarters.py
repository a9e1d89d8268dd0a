"""``close-quarters``: the periods in which two tracks were within a threshold range of each other,
the range counterpart of ``speed-filter``.

The range is :class:`~debrief_calc.analysis.range_profile.Profile`'s: its planar shape at every fix
time of either track and at each piece's inside minimum says where it is within the threshold; the
points near the threshold are measured on the geodesic, each entry and exit is found between those
points by bisection on the geodesic range (to a millisecond, between fixes), and each period's least
range by golden-section search, as the closest approach is.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    distance_decimals,
    num,
    pair_results,
    read_tracks,
    result_feature,
)
from debrief_calc.analysis.passes import edge_name, moments
from debrief_calc.analysis.range_bearing import PRIMARY_PARAM, pick_primary
from debrief_calc.analysis.range_profile import BoolArray, IntArray, Profile
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso

__all__ = ["SPEC", "within"]

#: planar ranges within this fraction (and _NEAR_M) of the threshold are measured on the geodesic
_NEAR: Final = 0.02
_NEAR_M: Final = 50.0
PAIRS: Final = {"primary": "the primary against each other track", "all": "every pair of tracks"}


def _runs(inside: BoolArray) -> tuple[IntArray, IntArray]:
    """First and last index of each run of True."""
    edges = np.diff(np.concatenate(([False], inside, [False])).astype(np.int8))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1


def within(profile: Profile, threshold_m: float) -> list[tuple[float, float, float, float]]:
    """``(start, end, least range time, least range m)`` of each period the range is within
    ``threshold_m``, in order; a period that runs to an end of the span starts or ends there."""
    r = profile.r.copy()
    near = np.flatnonzero(np.abs(r - threshold_m) <= threshold_m * _NEAR + _NEAR_M)
    if near.size:
        r[near] = profile.exact(near)
    first, last = _runs(r <= threshold_m)
    if not first.size:
        return []
    n = len(profile)
    entering = first[first > 0] - 1  # entered between the point before the run and its first
    leaving = last[last < n - 1]
    cross = profile.crossings(
        np.concatenate((entering, leaving)),
        threshold_m,
        np.concatenate((np.zeros(entering.size, dtype=bool), np.ones(leaving.size, dtype=bool))),
    )
    starts = np.full(first.size, profile.span[0])
    starts[first > 0] = cross[: entering.size]
    ends = np.full(last.size, profile.span[1])
    ends[last < n - 1] = cross[entering.size :]
    # the least planar range of each run, then solved on the geodesic round it
    count = last - first + 1
    run_of = np.repeat(np.arange(first.size), count)
    members = np.arange(int(count.sum())) + np.repeat(first - np.concatenate(([0], np.cumsum(count)[:-1])), count)
    order = np.lexsort((r[members], run_of))
    lowest = members[order[np.concatenate(([True], run_of[order][1:] != run_of[order][:-1]))]]
    least_t, least_r = profile.refine(lowest.astype(np.intp))
    keep = (ends > starts) | (profile.span[0] == profile.span[1])  # sharing one instant, within at it
    return [
        (float(a), float(b), float(c), float(d))
        for a, b, c, d in zip(starts[keep], ends[keep], least_t[keep], least_r[keep], strict=True)
    ]


def _edge(period: tuple[float, float, float, float], span: tuple[float, float]) -> str | None:
    at_start, at_end = period[0] == span[0], period[1] == span[1]
    return "both" if at_start and at_end else "start" if at_start else "end" if at_end else None


def _pair(a: TrackData, b: TrackData, span: tuple[float, float], threshold: float, unit: str) -> dict[str, Any]:
    per, dd = METRES_PER_UNIT[unit], distance_decimals(unit)
    profile = Profile(a, b, span)
    found = within(profile, threshold * per)
    at = moments(a, b, np.array([p[2] for p in found], dtype=np.float64), ("first", "second")) if found else []
    periods = []
    for (start, end, t_least, r_least), where in zip(found, at, strict=True):
        entry: dict[str, Any] = {
            "start": iso(start),
            "end": iso(end),
            "duration_s": num(end - start, 3),
            "least_range": num(r_least / per, dd),
            "least_range_time": iso(t_least),
            **where,
            "at_edge": _edge((start, end, t_least, r_least), span),
        }
        edges = {"start": "started", "end": "ended"}
        cut = [side for side in ("start", "end") if entry["at_edge"] in (side, "both")]
        if cut:
            entry["note"] = "; ".join(
                f"already within at the {side} of the {edge_name(a, b, span, side)}: it may have {edges[side]} "
                f"{'earlier' if side == 'start' else 'later'}"
                for side in cut
            )
        periods.append(entry)
    first, second = a.name or a.id, b.name or b.id
    props: dict[str, Any] = {
        "first_id": a.id,
        "second_id": b.id,
        "threshold": threshold,
        "distance_unit": unit,
        "overlap_start": iso(span[0]),
        "overlap_end": iso(span[1]),
        "period_count": len(periods),
        "total_duration_s": num(sum(p[1] - p[0] for p in found), 3),
        "periods": periods,
        "bearing_of": f"{second} from {first}",
    }
    if not periods:
        t_cpa, r_cpa = profile.least()
        props["note"] = (
            f"never within {threshold:g} {unit}: the least range was {num(r_cpa / per, dd)} {unit} at {iso(t_cpa)}"
        )
    lines = [[p["first_position"], p["second_position"]] for p in periods]
    geometry = {"type": "MultiLineString", "coordinates": lines} if lines else None
    return result_feature(f"Close quarters {first} / {second} within {threshold:g} {unit}", geometry, props)


def handle(inp: ToolInput) -> ToolOutput:
    params = inp.parameters
    tracks = read_tracks(inp.features)
    unit, threshold, mode = params["distance_unit"], float(params["threshold"]), params["pairs"]
    if mode == "all":
        pairs = list(itertools.combinations(range(len(tracks)), 2))
    else:
        p = pick_primary(tracks, params["primary"])
        pairs = [(p, i) for i in range(len(tracks)) if i != p]

    def build(a: TrackData, b: TrackData, span: tuple[float, float]) -> dict[str, Any]:
        return _pair(a, b, span, threshold, unit)

    out = pair_results(inp, tracks, pairs, build, title="Close quarters", missing={"period_count": 0})
    for feature in out.features:
        feature["properties"]["pairs"] = PAIRS[mode]
    return out


SPEC = ToolSpec(
    name="close-quarters",
    description=(
        "The periods two tracks were within parameters.threshold (distance_unit) of each other, the range "
        "counterpart of speed-filter; pairs 'primary' (default: the primary against each other track) or 'all'. "
        "One result per pair: periods [{start, end (between fixes, to a millisecond), duration_s, least_range, "
        "least_range_time, bearing, both positions and *_dm at it, at_edge 'start'/'end'/'both' and a note when "
        "the period runs to an end of the shared time or window}], period_count, total_duration_s; never within: "
        "a note with the least range. Geometry: the line between the ships at each least range."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(
        Parameter(
            "threshold",
            "number",
            "Range (in distance_unit) within which the ships are at close quarters.",
            required=True,
            minimum=0,
            exclusive_minimum=True,
        ),
        Parameter(
            "pairs",
            "string",
            "'primary': the primary against each other track; 'all': every pair.",
            default="primary",
            choices=tuple(PAIRS),
        ),
        PRIMARY_PARAM,
        DISTANCE_UNIT_PARAM,
    ),
    handler=handle,
)
