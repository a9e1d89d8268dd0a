"""Helpers shared by the analysis tools: leg geometry, motion at a time, result features,
shared parameters and JSON-ready numbers."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput
from debrief_calc.errors import ValidationFailed
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.units import DEFAULT_DISTANCE_UNIT, DISTANCE_UNITS, METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, feature_kind, iso, track_data

__all__ = [
    "DISTANCE_UNIT_PARAM",
    "KNOT_MPS",
    "RESULT_KIND",
    "Legs",
    "cut_by_window",
    "distance_decimals",
    "leg_geometry",
    "lonlat_list",
    "motion_at",
    "num",
    "num_list",
    "overlap",
    "pair_results",
    "range_rate_mps",
    "read_tracks",
    "result_feature",
    "robust_sd",
    "source_ref",
    "turn_rate_at",
    "velocity",
    "wrap180",
]

RESULT_KIND: Final = "analysis-result"
KNOT_MPS: Final = 1852.0 / 3600.0

DISTANCE_UNIT_PARAM: Final = Parameter(
    "distance_unit",
    "string",
    "Unit of the distances in the result: nm (1852 m), m, km, yd (0.9144 m), kyd or mi (statute mile).",
    default=DEFAULT_DISTANCE_UNIT,
    choices=DISTANCE_UNITS,
)

_E2: Final = geodesy.WGS84_F * (2 - geodesy.WGS84_F)
# Legs shorter than this, spanning less than _SHORT_LEG_MAX_DLON of longitude, take their
# length and mid-leg azimuth from the local radii of curvature: within 0.1 mm and 1e-5 degrees
# of GeographicLib (the error grows as the square of the leg's angular size). Longer legs are
# solved exactly. Real fixes are seconds to minutes apart, so nearly every leg is short.
_SHORT_LEG_M: Final = 1000.0
_SHORT_LEG_MAX_DLON: Final = 0.02
_CHUNK: Final = 1 << 15
_RAD: Final = math.pi / 180.0


class Legs:
    """The legs of a track: geodesic length (m), course at mid-leg (degrees, NaN when the leg
    has no length), its east and north components (m), duration (s) and speed (m/s, NaN when
    the leg takes no time)."""

    def __init__(self, track: TrackData) -> None:
        self.track = track
        self.dist, self.course, self.east, self.north = leg_geometry(track.lat, track.lon)
        self.dt = np.diff(track.t)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.speed = np.where(self.dt > 0, self.dist / np.where(self.dt > 0, self.dt, 1.0), np.nan)
        #: the legs :func:`motion_at` reads: these, or for a track cut to a window the original
        #: track's legs round it, so that the motion at an instant does not hang on the window
        self.motion: Legs = self if track.edges is None else Legs(_original_round(track))

    def __len__(self) -> int:
        return int(self.dist.size)


def _original_round(track: TrackData) -> TrackData:
    """A windowed track's fixes as the original track has them: the fix beyond each end put back
    and an end interpolated at the cut (it lies on the leg to that fix) taken out."""
    assert track.edges is not None
    edges = track.edges
    keep = slice(1 if edges.interpolated[0] else 0, len(track) - 1 if edges.interpolated[1] else len(track))
    parts = [np.array([edges.before])] if edges.before else []
    parts.append(np.column_stack((track.lon[keep], track.lat[keep], track.t[keep])))
    if edges.after:
        parts.append(np.array([edges.after]))
    rows = np.concatenate(parts)
    return TrackData(
        track.id, track.name, rows[:, 0].copy(), rows[:, 1].copy(), rows[:, 2].copy(), None, track.time_field
    )


def leg_geometry(lat: FloatArray, lon: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Length (m), mid-leg azimuth (degrees in [0, 360), NaN for a zero-length leg) and the
    east and north components (m) of length along that azimuth, of each leg between
    consecutive points, on the WGS84 ellipsoid."""
    n = lat.size - 1
    if n < 1:
        return np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0)
    dist, course, east_m, north_m = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for lo in range(0, n, _CHUNK):  # slices that keep numpy's temporaries in cache
        hi = min(lo + _CHUNK, n)
        la, lo_ = lat[lo : hi + 1], lon[lo : hi + 1]
        s = np.sin(np.radians((la[:-1] + la[1:]) * 0.5))
        w2 = 1.0 - _E2 * s * s
        w = np.sqrt(w2)
        dlon = np.diff(lo_)
        dlon = np.where(np.abs(dlon) > 180.0, (dlon + 180.0) % 360.0 - 180.0, dlon)
        east = (geodesy.WGS84_A * _RAD) * np.sqrt(1.0 - s * s) / w * dlon
        north = (geodesy.WGS84_A * (1.0 - _E2) * _RAD) / (w2 * w) * np.diff(la)
        east_m[lo:hi] = east
        north_m[lo:hi] = north
        dist[lo:hi] = np.sqrt(east * east + north * north)
        course[lo:hi] = np.arctan2(east, north)
    np.degrees(course, out=course)
    course[course < 0] += 360.0
    course[course >= 360.0] = 0.0
    dlon_all = np.abs(np.diff(lon))
    exact = np.flatnonzero(
        ~(dist < _SHORT_LEG_M) | ~((dlon_all <= _SHORT_LEG_MAX_DLON) | (dlon_all >= 360 - _SHORT_LEG_MAX_DLON))
    )
    if exact.size:
        d, az1, _ = geodesy.inverse(lat[exact], lon[exact], lat[exact + 1], lon[exact + 1])
        _, _, az_mid = geodesy.direct(lat[exact], lon[exact], az1, d * 0.5)
        dist[exact] = d
        course[exact] = az_mid
        east_m[exact] = d * np.sin(np.radians(az_mid))
        north_m[exact] = d * np.cos(np.radians(az_mid))
    course[dist == 0] = np.nan
    return dist, course, east_m, north_m


def motion_at(legs: Legs, t: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Speed (m/s) and course (degrees) at times ``t``: those of the leg the time falls in (at
    a fix, the leg that starts there; at the last fix, the last leg). NaN course when the
    platform is not moving; NaN everything outside the track's span. A track cut to a window
    moves as the original track (:attr:`Legs.motion`): at its last fix, the leg after it."""
    legs = legs.motion
    times = legs.track.t
    speed = np.full(t.shape, np.nan)
    course = np.full(t.shape, np.nan)
    if len(legs) == 0:
        return speed, course
    inside = (t >= times[0]) & (t <= times[-1])
    leg = np.clip(np.searchsorted(times, t[inside], side="right") - 1, 0, len(legs) - 1)
    speed[inside] = legs.speed[leg]
    course[inside] = legs.course[leg]
    return speed, course


def turn_rate_at(legs: Legs, t: FloatArray) -> FloatArray:
    """Rate of turn (degrees per minute, positive to starboard) at times ``t``: the change of course
    from one leg to the next over the time between their middles, each leg's course taken at its
    middle (before the first middle or after the last, the nearest pair's). Legs that take no time or
    have no course (not moving) are passed over; NaN outside the track's span, or with fewer than two
    legs to compare. A track cut to a window turns as the original track (:attr:`Legs.motion`)."""
    legs = legs.motion
    times = legs.track.t
    out = np.full(t.shape, np.nan)
    usable = np.flatnonzero(np.isfinite(legs.course) & (legs.dt > 0))
    if usable.size < 2:
        return out
    middles = (times[usable] + times[usable + 1]) * 0.5
    rate = wrap180(np.diff(legs.course[usable])) / np.diff(middles) * 60.0
    inside = (t >= times[0]) & (t <= times[-1])
    pair = np.clip(np.searchsorted(middles, t[inside], side="right") - 1, 0, rate.size - 1)
    out[inside] = rate[pair]
    return out


def velocity(speed: FloatArray, course: FloatArray) -> tuple[FloatArray, FloatArray]:
    """East and north components of a motion (m/s); a platform that does not move (zero speed, no
    course) has none."""
    c = np.radians(course)
    still = speed == 0
    return np.where(still, 0.0, speed * np.sin(c)), np.where(still, 0.0, speed * np.cos(c))


def range_rate_mps(
    bearing: FloatArray, own: tuple[FloatArray, FloatArray], target: tuple[FloatArray, FloatArray]
) -> FloatArray:
    """Rate of change of the range from ownship to target, m/s, positive opening: the relative
    velocity along the line of sight, ``(Vt sin Ct - Vo sin Co) sin B + (Vt cos Ct - Vo cos Co) cos B``
    (NaN where there is no line of sight)."""
    oe, on = velocity(*own)
    te, tn = velocity(*target)
    b = np.radians(bearing)
    out: FloatArray = (te - oe) * np.sin(b) + (tn - on) * np.cos(b)
    return out


def overlap(a: TrackData, b: TrackData) -> tuple[float, float] | None:
    """The time span both tracks cover, or None when they do not meet in time."""
    start = max(float(a.t[0]), float(b.t[0]))
    end = min(float(a.t[-1]), float(b.t[-1]))
    return (start, end) if start <= end else None


def cut_by_window(track: TrackData, side: str) -> bool:
    """Whether a time window cut ``track`` at its ``side`` ("start"/"end"): the original track went on
    beyond it (the cut keeps the fix beyond as ``window_edges``)."""
    edges = track.edges
    if edges is None:
        return False
    return (edges.before if side == "start" else edges.after) is not None


#: robust standard deviation from the median absolute residual, for Gaussian errors
MAD_SD: Final = 1.4826


def robust_sd(residuals: FloatArray, floor: float) -> float:
    """The residuals' robust standard deviation (:data:`MAD_SD` × their median absolute value about
    zero, the NaNs left out), never under ``floor``: the one outlier scale of ``tma-solve`` and
    ``bearing-residuals`` (a cut beyond so many of these from the fit is an outlier)."""
    r = np.abs(residuals[np.isfinite(residuals)])
    return max(MAD_SD * float(np.median(r)) if r.size else 0.0, floor)


def wrap180(deg: FloatArray) -> FloatArray:
    """Angles in (-180, 180]."""
    out: FloatArray = 180.0 - (180.0 - deg) % 360.0
    return out


def read_tracks(features: Sequence[Mapping[str, Any]]) -> list[TrackData]:
    return [track_data(f, index=i) for i, f in enumerate(features)]


def source_ref(feature: Mapping[str, Any], index: int) -> dict[str, Any]:
    fid = feature.get("id")
    return {"id": str(fid) if fid is not None else f"#{index}", "kind": feature_kind(feature)}


def distance_decimals(unit: str) -> int:
    """Decimals that keep a distance in ``unit`` to the millimetre."""
    return max(0, math.ceil(math.log10(METRES_PER_UNIT[unit] / 0.001)))


def num(value: float | np.floating[Any] | None, decimals: int) -> float | None:
    """A JSON-ready number, rounded; None for NaN, infinity or None."""
    if value is None:
        return None
    x = float(value)
    return round(x, decimals) if math.isfinite(x) else None


def num_list(values: FloatArray, decimals: int) -> list[float | None]:
    """:func:`num` over an array."""
    arr = np.round(np.asarray(values, dtype=np.float64), decimals)
    out: list[float | None] = arr.tolist()
    for i in np.flatnonzero(~np.isfinite(arr)).tolist():
        out[i] = None
    return out


def lonlat_list(lon: FloatArray, lat: FloatArray) -> list[list[float]]:
    """GeoJSON positions ``[[lon, lat], ...]``."""
    out: list[list[float]] = np.column_stack((lon, lat)).tolist()
    return out


def result_feature(
    name: str, geometry: dict[str, Any] | None, properties: dict[str, Any], kind: str = RESULT_KIND
) -> dict[str, Any]:
    """A result feature (the executor gives it its id and provenance)."""
    return {"type": "Feature", "geometry": geometry, "properties": {"kind": kind, "name": name, **properties}}


def pair_results(
    inp: ToolInput,
    tracks: list[TrackData],
    pairs: list[tuple[int, int]],
    build: Callable[[TrackData, TrackData, tuple[float, float]], dict[str, Any]],
    *,
    title: str,
    missing: dict[str, Any],
) -> ToolOutput:
    """One result per pair of tracks (indices into ``tracks``, as given in ``inp``) that share time,
    ``build(a, b, span)``; a pair that shares none gets a result with ``missing`` and a note, and a
    warning; no pair sharing time at all is a ValidationFailed listing the tracks' spans."""
    spans = {(i, j): overlap(tracks[i], tracks[j]) for i, j in pairs}
    require(
        any(s is not None for s in spans.values()),
        "no time overlap: no two of the tracks "
        + ", ".join(f"{t.id!r} ({iso(float(t.t[0]))} to {iso(float(t.t[-1]))})" for t in tracks)
        + " share any time",
        "features",
        "overlap",
    )
    features, sources, warnings = [], [], []
    for (i, j), span in spans.items():
        a, b = tracks[i], tracks[j]
        if span is None:
            warnings.append(f"tracks {a.id!r} and {b.id!r} share no time: no {title}")
            props = {"first_id": a.id, "second_id": b.id, **missing, "note": "no time overlap"}
            features.append(result_feature(f"{title} {a.name or a.id} / {b.name or b.id}", None, props))
        else:
            features.append(build(a, b, span))
        sources.append([source_ref(inp.features[i], i), source_ref(inp.features[j], j)])
    return ToolOutput(features=features, feature_sources=sources, warnings=warnings)


def require(condition: bool, message: str, field: str, rule: str, **details: Any) -> None:
    """ValidationFailed naming ``field`` when ``condition`` does not hold."""
    if not condition:
        raise ValidationFailed(message, details={"field": field, "rule": rule, **details})
