"""Zone tools: ``zone-transits`` (when tracks are inside zone polygons) and ``area-summary``.

Zone polygons are read as drawn, with straight edges in longitude/latitude; a position is
inside by the even-odd rule over every ring, so holes count. A track's legs are straight in
longitude/latitude too, so the times it crosses a zone edge are interpolated linearly along
the leg; a leg that clips a corner between two fixes outside is a transit as well.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from debrief_calc import geodesy
from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    distance_decimals,
    num,
    result_feature,
    source_ref,
)
from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.features import (
    TrackData,
    active_period,
    feature_id,
    feature_kind,
    feature_name,
    iso,
    track_data,
    zone_rings,
)
from debrief_calc.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.units import METRES_PER_UNIT

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

_BISECT_ROUNDS: Final = 40
_POINT_CHUNK: Final = 1 << 16

AREA_M2_PER_UNIT: Final[dict[str, float]] = {"nm2": 1852.0**2, "km2": 1e6, "m2": 1.0, "ha": 1e4}


class Zone:
    """A zone's rings (outer rings and holes alike, for the even-odd rule) as edge arrays."""

    def __init__(self, feature: Mapping[str, Any], index: int) -> None:
        self.id = feature_id(feature, index)
        self.name = feature_name(feature)
        self.polygons = _polygons(feature)
        rings = [ring for polygon in self.polygons for ring in polygon]
        starts = np.concatenate([r[:-1] for r in rings])
        ends = np.concatenate([r[1:] for r in rings])
        self.x1, self.y1 = starts[:, 0], starts[:, 1]
        self.x2, self.y2 = ends[:, 0], ends[:, 1]
        every = np.concatenate(rings)
        self.west, self.south = every.min(axis=0)
        self.east, self.north = every.max(axis=0)

    def contains(self, lon: FloatArray, lat: FloatArray) -> BoolArray:
        """Even-odd point-in-polygon (a horizontal ray to the east), vectorised over points."""
        out = np.zeros(lon.shape, dtype=bool)
        box = np.flatnonzero((lon >= self.west) & (lon <= self.east) & (lat >= self.south) & (lat <= self.north))
        for lo in range(0, box.size, _POINT_CHUNK):
            idx = box[lo : lo + _POINT_CHUNK]
            px, py = lon[idx], lat[idx]
            odd = np.zeros(idx.size, dtype=bool)
            for x1, y1, x2, y2 in zip(self.x1, self.y1, self.x2, self.y2, strict=True):
                if y1 == y2:
                    continue
                spans = (y1 > py) != (y2 > py)
                odd ^= spans & (px < x1 + (py - y1) * (x2 - x1) / (y2 - y1))
            out[idx] = odd
        return out

    def crossings(
        self, lon: FloatArray, lat: FloatArray, legs: np.ndarray[Any, np.dtype[np.intp]]
    ) -> tuple[np.ndarray[Any, np.dtype[np.intp]], FloatArray]:
        """Every point where the given legs (``i`` → ``i + 1``) cross an edge: leg and fraction."""
        px, py = lon[legs], lat[legs]
        rx, ry = lon[legs + 1] - px, lat[legs + 1] - py
        found_leg, found_u = [], []
        for x1, y1, x2, y2 in zip(self.x1, self.y1, self.x2, self.y2, strict=True):
            sx, sy = x2 - x1, y2 - y1
            denom = rx * sy - ry * sx
            qx, qy = x1 - px, y1 - py
            with np.errstate(divide="ignore", invalid="ignore"):
                u = (qx * sy - qy * sx) / denom
                v = (qx * ry - qy * rx) / denom
            hit = (denom != 0) & (u >= 0) & (u <= 1) & (v >= 0) & (v < 1)
            found_leg.append(legs[hit])
            found_u.append(u[hit])
        return np.concatenate(found_leg), np.concatenate(found_u)


def _polygons(feature: Mapping[str, Any]) -> list[list[FloatArray]]:
    """Each polygon's rings, outer first, as closed ``(n, 2)`` arrays (validated)."""
    outers = zone_rings(feature)
    geometry = feature["geometry"]
    polygons = [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
    out = []
    for outer, polygon in zip(outers, polygons, strict=True):
        rings = [outer]
        for h, hole in enumerate(polygon[1:], start=1):
            try:
                ring = np.array([[float(p[0]), float(p[1])] for p in hole], dtype=np.float64)
            except (TypeError, ValueError, IndexError, KeyError):
                ring = np.zeros((0, 2))
            if len(ring) < 3 or not np.isfinite(ring).all():
                raise ValidationFailed(
                    f"zone {feature.get('id')!r}: hole ring {h} is not a ring of [lon, lat] positions",
                    details={"feature_id": feature.get("id"), "field": f"geometry.coordinates[{h}]", "rule": "ring"},
                )
            rings.append(ring)
        out.append([r if np.array_equal(r[0], r[-1]) else np.vstack((r, r[:1])) for r in rings])
    return out


def _bisect(zone: Zone, lon: FloatArray, lat: FloatArray, legs: np.ndarray[Any, np.dtype[np.intp]]) -> FloatArray:
    """Fraction along each leg where its inside state changes (a fallback for degenerate
    crossings, such as a leg through a vertex)."""
    lo, hi = np.zeros(legs.size), np.ones(legs.size)
    start = zone.contains(lon[legs], lat[legs])
    for _ in range(_BISECT_ROUNDS):
        mid = (lo + hi) * 0.5
        same = (
            zone.contains(lon[legs] + mid * (lon[legs + 1] - lon[legs]), lat[legs] + mid * (lat[legs + 1] - lat[legs]))
            == start
        )
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    out: FloatArray = (lo + hi) * 0.5
    return out


def transits(track: TrackData, zone: Zone) -> list[dict[str, Any]]:
    lon, lat, t = track.lon, track.lat, track.t
    inside = zone.contains(lon, lat)
    n = lon.size
    legs = np.arange(max(n - 1, 0))
    leg_w, leg_e = np.minimum(lon[:-1], lon[1:]), np.maximum(lon[:-1], lon[1:])
    leg_s, leg_n = np.minimum(lat[:-1], lat[1:]), np.maximum(lat[:-1], lat[1:])
    near = legs[(leg_e >= zone.west) & (leg_w <= zone.east) & (leg_n >= zone.south) & (leg_s <= zone.north)]
    hit_leg, hit_u = zone.crossings(lon, lat, near)
    counts = np.bincount(hit_leg, minlength=legs.size) if legs.size else np.zeros(0, dtype=np.int64)
    changes = inside[:-1] != inside[1:]
    consistent = (counts % 2 == 1) == changes
    keep = consistent[hit_leg]
    hit_leg, hit_u = hit_leg[keep], hit_u[keep]
    fallback = legs[changes & ~consistent]
    hit_leg = np.concatenate((hit_leg, fallback))
    hit_u = np.concatenate((hit_u, _bisect(zone, lon, lat, fallback)))
    order = np.lexsort((hit_u, hit_leg))
    hit_leg, hit_u = hit_leg[order], hit_u[order]

    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    if n and inside[0]:
        current = {
            "entry_time": None,
            "entry_position": None,
            "note": "already inside at start",
            "_from": 0,
            "_t0": t[0],
        }
    state = bool(n and inside[0])
    for leg, u in zip(hit_leg.tolist(), hit_u.tolist(), strict=True):
        when = float(t[leg] + u * (t[leg + 1] - t[leg]))
        where = [float(lon[leg] + u * (lon[leg + 1] - lon[leg])), float(lat[leg] + u * (lat[leg + 1] - lat[leg]))]
        if not state:
            current = {"entry_time": iso(when), "entry_position": where, "_from": leg + 1, "_t0": when, "_p0": where}
        elif current is not None:
            out.append(_close(current, when, where, leg, lon, lat))
            current = None
        state = not state
    if current is not None:
        closed = _close(current, float(t[-1]), None, n - 1, lon, lat)
        closed["note"] = "still inside at end" if "note" not in closed else "inside for the whole track"
        out.append(closed)
    return out


def _close(
    current: dict[str, Any], when: float, where: list[float] | None, leg: int, lon: FloatArray, lat: FloatArray
) -> dict[str, Any]:
    start = current.pop("_from")
    stretch = [current.pop("_p0")] if "_p0" in current else []
    stretch += np.column_stack((lon[start : leg + 1], lat[start : leg + 1])).tolist()
    if where is not None:
        stretch.append(where)
    return {
        **current,
        "exit_time": iso(when) if where is not None else None,
        "exit_position": where,
        "duration_s": num(when - current["_t0"], 3),
        "_t1": when,
        "_stretch": stretch if len(stretch) >= 2 else stretch * 2,
    }


def _position_at(track: TrackData, when: float) -> list[float]:
    """The track's position at ``when``, linear in longitude and latitude between fixes (as
    the crossings are)."""
    return [float(np.interp(when, track.t, track.lon)), float(np.interp(when, track.t, track.lat))]


def _while_active(entry: dict[str, Any], track: TrackData, period: tuple[float, float]) -> dict[str, Any] | None:
    """A transit cut to the zone's active period, or None when none of it falls inside."""
    t0, t1 = entry["_t0"], entry["_t1"]
    c0, c1 = max(t0, period[0]), min(t1, period[1])
    if c0 > c1 or (c0 == c1 and t0 < t1):
        return None
    if (c0, c1) == (t0, t1):
        return entry
    out = dict(entry)
    if c0 > t0:
        out["entry_time"], out["entry_position"] = iso(c0), _position_at(track, c0)
    if c1 < t1:
        out["exit_time"], out["exit_position"] = iso(c1), _position_at(track, c1)
    notes = []
    if c0 > t0:
        notes.append("inside when the zone became active")
    elif out["entry_time"] is None:
        notes.append("already inside at start")
    if c1 < t1:
        notes.append("still inside when the zone stopped being active")
    elif out["exit_time"] is None:
        notes.append("still inside at end")
    out.pop("note", None)
    if out["entry_time"] is None and out["exit_time"] is None:
        out["note"] = "inside for the whole track"
    elif notes:
        out["note"] = "; ".join(notes)
    inner = (track.t > c0) & (track.t < c1)
    first = out["entry_position"] if out["entry_position"] is not None else _position_at(track, c0)
    last = out["exit_position"] if out["exit_position"] is not None else _position_at(track, c1)
    stretch = [first, *np.column_stack((track.lon[inner], track.lat[inner])).tolist(), last]
    out["duration_s"] = num(c1 - c0, 3)
    out["_t0"], out["_t1"], out["_stretch"] = c0, c1, stretch
    return out


def handle_transits(inp: ToolInput) -> ToolOutput:
    kinds = [feature_kind(f) for f in inp.features]
    track_idx = [i for i, k in enumerate(kinds) if k == "track"]
    zone_idx = [i for i, k in enumerate(kinds) if k == "zone"]
    if not track_idx or not zone_idx:
        raise InvalidContext(
            f"zone-transits needs at least one track and one zone, got {kinds.count('track')} track(s) "
            f"and {kinds.count('zone')} zone(s)",
            details={"expected": "at least 1 track and 1 zone", "received_count": len(kinds), "received_kinds": kinds},
        )
    tracks = {i: track_data(inp.features[i], index=i) for i in track_idx}
    zones = {j: Zone(inp.features[j], j) for j in zone_idx}
    # the one meaning of active (the picture and time windows share it); a bad period is an error here
    periods = {j: active_period(inp.features[j], strict=True, index=j) for j in zone_idx}
    features, sources = [], []
    for i, track in tracks.items():
        for j, zone in zones.items():
            found = transits(track, zone)
            period = periods[j]
            if period is not None:
                found = [cut for entry in found if (cut := _while_active(entry, track, period)) is not None]
            stretches = [entry.pop("_stretch") for entry in found]
            for entry in found:
                del entry["_t0"], entry["_t1"]
            props = {
                "track_id": track.id,
                "zone_id": zone.id,
                "zone_active": _period_text(period),
                "transit_count": len(found),
                "total_inside_s": num(sum(e["duration_s"] or 0.0 for e in found), 3),
                "inside_at_start": bool(found and found[0]["entry_time"] is None),
                "inside_at_end": bool(found and found[-1]["exit_time"] is None),
                "track_start": iso(float(track.t[0])),
                "track_end": iso(float(track.t[-1])),
                "transits": found,
            }
            if period is not None and (period[1] < track.t[0] or period[0] > track.t[-1]):
                props["note"] = "the zone is not active at any time of the track"
            title = f"{track.name or track.id} in {zone.name or zone.id}"
            features.append(result_feature(title, {"type": "MultiLineString", "coordinates": stretches}, props))
            sources.append([source_ref(inp.features[i], i), source_ref(inp.features[j], j)])
    return ToolOutput(features=features, feature_sources=sources)


def _period_text(period: tuple[float, float] | None) -> list[str | None] | None:
    if period is None:
        return None
    return [iso(period[0]) if math.isfinite(period[0]) else None, iso(period[1]) if math.isfinite(period[1]) else None]


def _centroid(polygons: list[list[FloatArray]]) -> tuple[float, float]:
    """Area-weighted centroid in a local equirectangular projection (holes subtract)."""
    lat0 = float(np.mean(polygons[0][0][:, 1]))
    lon0 = float(polygons[0][0][0, 0])
    scale = math.cos(math.radians(lat0))
    area = cx = cy = 0.0
    for polygon in polygons:
        for k, ring in enumerate(polygon):
            x = ((ring[:, 0] - lon0 + 180.0) % 360.0 - 180.0) * scale
            y = ring[:, 1] - lat0
            cross = x[:-1] * y[1:] - x[1:] * y[:-1]
            a = float(cross.sum()) / 2.0
            sign = 1.0 if k == 0 else -1.0  # holes subtract, whatever their winding
            a_abs = abs(a) * sign
            if a != 0:
                cx += a_abs * float(((x[:-1] + x[1:]) * cross).sum()) / (6.0 * a)
                cy += a_abs * float(((y[:-1] + y[1:]) * cross).sum()) / (6.0 * a)
            area += a_abs
    if area == 0:
        ring = polygons[0][0]
        return float(ring[:-1, 0].mean()), float(ring[:-1, 1].mean())
    lon = lon0 + cx / area / scale
    return float((lon + 180.0) % 360.0 - 180.0), lat0 + cy / area


def handle_area(inp: ToolInput) -> ToolOutput:
    warnings = []
    if inp.features:
        feature = inp.features[0]
        polygons = _polygons(feature)
        region_id, name = feature_id(feature, 0), feature_name(feature) or feature_id(feature, 0)
        if inp.bounds is not None:
            warnings.append("bounds ignored: the zone defines the region")
        sources = [[source_ref(feature, 0)]]
    else:
        assert inp.bounds is not None
        w, s, e, n = inp.bounds
        polygons = [[np.array([[w, s], [e, s], [e, n], [w, n], [w, s]], dtype=np.float64)]]
        region_id, name = None, f"bounds [{w:g}, {s:g}, {e:g}, {n:g}]"
        sources = [[]]
    area_m2 = perimeter_m = 0.0
    for polygon in polygons:
        for k, ring in enumerate(polygon):
            a, p = geodesy.polygon_area_perimeter(ring[:, 1], ring[:, 0])
            area_m2 += a if k == 0 else -a
            perimeter_m += p
    unit, area_unit = inp.parameters["distance_unit"], inp.parameters["area_unit"]
    every = np.concatenate([ring for polygon in polygons for ring in polygon])
    lon_c, lat_c = _centroid(polygons)
    props = {
        "zone_id": region_id,
        "area": num(area_m2 / AREA_M2_PER_UNIT[area_unit], 9),
        "area_unit": area_unit,
        "area_m2": num(area_m2, 3),
        "perimeter": num(perimeter_m / METRES_PER_UNIT[unit], distance_decimals(unit)),
        "distance_unit": unit,
        "centroid": [lon_c, lat_c],
        "bounds": [
            float(every[:, 0].min()),
            float(every[:, 1].min()),
            float(every[:, 0].max()),
            float(every[:, 1].max()),
        ],
        "polygon_count": len(polygons),
        "hole_count": sum(len(p) - 1 for p in polygons),
    }
    feature_out = result_feature(f"Area of {name}", {"type": "Point", "coordinates": [lon_c, lat_c]}, props)
    return ToolOutput(features=[feature_out], warnings=warnings, feature_sources=sources)


TRANSITS_SPEC = ToolSpec(
    name="zone-transits",
    description=(
        "For each track and each zone polygon given (at least one of each): the intervals the "
        "track spends inside, with entry and exit times and positions (interpolated between the "
        "fixes on either side of the edge) and durations. A track inside at its first fix has "
        "entry_time null ('already inside at start'); inside at its last fix, exit_time null. "
        "A zone with a time (and timeEnd) counts only while active: time inside before it "
        "becomes active or after it ends is left out, and the result's zone_active gives the "
        "period ([start, end], null for an open end; null when always active). "
        "Holes count (even-odd rule). One result per track and zone; its geometry is the "
        "stretches of track inside the zone."
    ),
    version="1.0.0",
    input_kinds=("track", "zone"),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(),
    handler=handle_transits,
)

AREA_SPEC = ToolSpec(
    name="area-summary",
    description=(
        "Geodesic area (WGS84, edges as geodesics; holes subtracted), perimeter, centroid and "
        "bounds of one zone, or of the rectangle given as bounds [w, s, e, n] when no zone is "
        "given. The result is a Point at the centroid."
    ),
    version="1.0.0",
    input_kinds=("zone",),
    output_kind="analysis-result",
    context_type="region",
    parameters=(
        DISTANCE_UNIT_PARAM,
        Parameter(
            "area_unit",
            "string",
            "Unit of the area: nm2 (square nautical miles), km2, m2 or ha; area_m2 is always given too.",
            default="nm2",
            choices=tuple(AREA_M2_PER_UNIT),
        ),
    ),
    handler=handle_area,
)
