"""``closest-approach``: the closest point of approach (CPA) of each pair of tracks, and every
pass, found between fixes, not only at fix times.

The search is :mod:`debrief_calc.analysis.range_profile`'s (a planar pass over every piece between
fix times of either track, the most promising refined on the geodesic); the passes, each local
minimum of range worth the name, are :mod:`debrief_calc.analysis.passes`'.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    motion_at,
    num,
    pair_results,
    read_tracks,
    result_feature,
)
from debrief_calc.analysis.crossings import CROSSINGS_TEXT, crossings
from debrief_calc.analysis.passes import (
    PASS_PARAMS,
    PassRule,
    least_summary,
    pass_entries,
    range_shape,
    rule_from,
    trend_fields,
)
from debrief_calc.analysis.range_profile import Profile, closest_approach
from debrief_calc.analysis.registry import ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo import geodesy
from debrief_calc.geo.dm import position_dm
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso

__all__ = ["SPEC", "closest_approach"]


def _pair_result(a: TrackData, b: TrackData, span: tuple[float, float], unit: str, rule: PassRule) -> dict[str, Any]:
    profile = Profile(a, b, span)
    cpa = profile.least()
    t_cpa = cpa[0]
    at = np.array([t_cpa])
    lat_a, lon_a = geodesy.interpolate_track(a.t, a.lat, a.lon, at)
    lat_b, lon_b = geodesy.interpolate_track(b.t, b.lat, b.lon, at)
    rng, bearing, _ = geodesy.inverse(lat_a, lon_a, lat_b, lon_b)
    speed_a, course_a = motion_at(Legs(a), at)
    speed_b, course_b = motion_at(Legs(b), at)
    pos_a = [float(lon_a[0]), float(lat_a[0])]
    pos_b = [float(lon_b[0]), float(lat_b[0])]
    first, second = a.name or a.id, b.name or b.id
    shape = range_shape(profile, rule)
    passes, cpa_pass = pass_entries(shape, cpa, unit)
    least = least_summary(shape, cpa, cpa_pass, unit)
    props: dict[str, Any] = {
        "first_id": a.id,
        "second_id": b.id,
        "time": iso(t_cpa),
        "range": num(rng[0] / METRES_PER_UNIT[unit], distance_decimals(unit)),
        "distance_unit": unit,
        "bearing": num(bearing[0] if rng[0] > 0 else math.nan, 4),
        "bearing_of": f"{second} from {first}",
        "first_position": pos_a,
        "first_position_dm": position_dm(pos_a),
        "second_position": pos_b,
        "second_position_dm": position_dm(pos_b),
        "first_speed_kn": num(speed_a[0] / KNOT_MPS, 4),
        "first_course": num(course_a[0], 4),
        "second_speed_kn": num(speed_b[0] / KNOT_MPS, 4),
        "second_course": num(course_b[0], 4),
        "overlap_start": iso(span[0]),
        "overlap_end": iso(span[1]),
        "between_fixes": bool(t_cpa not in a.t and t_cpa not in b.t),
        "at_edge": least["at_edge"],
        "is_pass": least["is_pass"],
        "pass_count": len(passes),
        "passes": passes,
        "pass_rule": rule.text(),
        "crossings": crossings(a, b, span, unit),
        **trend_fields(shape, passes, cpa, least, unit),
    }
    if "note" in least:
        props["cpa_note"] = least["note"]
    title = f"{'CPA' if least['is_pass'] else 'Least range'} {first} / {second}"
    return result_feature(title, {"type": "LineString", "coordinates": [pos_a, pos_b]}, props)


def handle(inp: ToolInput) -> ToolOutput:
    tracks = read_tracks(inp.features)
    unit, rule = inp.parameters["distance_unit"], rule_from(inp.parameters)
    pairs = list(itertools.combinations(range(len(tracks)), 2))

    def build(a: TrackData, b: TrackData, span: tuple[float, float]) -> dict[str, Any]:
        return _pair_result(a, b, span, unit, rule)

    return pair_results(inp, tracks, pairs, build, title="CPA", missing={"time": None})


SPEC = ToolSpec(
    name="closest-approach",
    description=(
        "Each pair of tracks over the time they share, between fixes (geodesic, to a millisecond): the least range "
        "(time, range, bearing of the second from the first: bearing_of, both positions and *_position_dm in "
        "degrees and minutes, speeds, courses), a CPA only when it is a pass (is_pass); at_edge 'start'/'end' with "
        "cpa_note when it lies at the start (range opening) or end (range closing) of the data or window, never a "
        "CPA. passes: every local range minimum worth the name, in order, {pass, time, range, bearing, positions, "
        "between_fixes, closing_from, opening_to {range, time}, both ships' course and speed_kn (the tote's), "
        "relative_speed_kn (speed of relative motion: the closing speed at the pass, where range_rate is 0), "
        "peak_closing_kn and peak_closing_time (fastest closing on the run-in from closing_from), is_cpa}, by "
        "pass_rule: the range rises by pass_rise x the minimum and pass_rise_m on both sides before falling lower "
        "(noise is no pass). lesser_dips: other minima rising dip_rise_m both sides {time, range, is_least} "
        "(lesser_dip_count; the lowest 20 told). range_trend tells it all in order. Geometry: the line between "
        "the ships at the least range. " + CROSSINGS_TEXT + "."
    ),
    version="2.2.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(DISTANCE_UNIT_PARAM, *PASS_PARAMS),
    handler=handle,
)
