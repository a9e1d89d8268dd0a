"""Zone tools: ``zone-transits`` (when tracks are inside zones), ``zone-overlaps`` (when one
track was inside a zone while another was inside one) and ``area-summary``.

Zone polygons are read as drawn, with straight edges in longitude/latitude; a position is
inside by the even-odd rule over every ring, so holes count. A zone stored as a circle
(``properties.specifics`` ``{shapeType: "circle", origin, radiusM}``) is the true circle
instead: inside when the geodesic distance from its origin is at most its radius, whatever
polygon was stored to draw it. A track's legs are straight in longitude/latitude too, so the
times it crosses a zone edge are found along the leg (interpolated linearly for a polygon's
edge, solved for a circle); a leg that clips a corner or the rim between two fixes outside is
a transit as well. Both tools take their intervals from :func:`visits`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    motion_at,
    num,
    result_feature,
    source_ref,
)
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.geo import geodesy
from debrief_calc.geo.dm import position_dm
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks._circles import circle_of, circle_ring
from debrief_calc.tracks.features import (
    TrackData,
    active_period,
    feature_id,
    feature_kind,
    feature_name,
    iso,
    track_data,
    zone_rings,
)

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

_BISECT_ROUNDS: Final = 40
_POINT_CHUNK: Final = 1 << 16

AREA_M2_PER_UNIT: Final[dict[str, float]] = {"nm2": 1852.0**2, "km2": 1e6, "m2": 1.0, "ha": 1e4}


class Zone:
    """A zone's rings (outer rings and holes alike, for the even-odd rule) as edge arrays, or
    the true circle when the zone was drawn as one (:attr:`circle`: origin lon, lat and radius
    in metres)."""

    def __init__(self, feature: Mapping[str, Any], index: int) -> None:
        self.id = feature_id(feature, index)
        self.name = feature_name(feature)
        self.polygons = _polygons(feature)
        self.circle = circle_of(feature, index)
        rings = [ring for polygon in self.polygons for ring in polygon]
        if self.circle is not None:
            rings = [circle_ring(*self.circle)]
        starts = np.concatenate([r[:-1] for r in rings])
        ends = np.concatenate([r[1:] for r in rings])
        self.x1, self.y1 = starts[:, 0], starts[:, 1]
        self.x2, self.y2 = ends[:, 0], ends[:, 1]
        every = np.concatenate(rings)
        self.west, self.south = every.min(axis=0)
        self.east, self.north = every.max(axis=0)
        if self.circle is not None:  # the ring's chords cut inside the rim: widen its box a little
            pad_lon, pad_lat = (self.east - self.west) * 0.01, (self.north - self.south) * 0.01
            self.west, self.east = self.west - pad_lon, self.east + pad_lon
            self.south, self.north = self.south - pad_lat, self.north + pad_lat

    def _in_box(self, lon: FloatArray, lat: FloatArray) -> BoolArray:
        out: BoolArray = (lon >= self.west) & (lon <= self.east) & (lat >= self.south) & (lat <= self.north)
        return out

    def contains(self, lon: FloatArray, lat: FloatArray) -> BoolArray:
        """Inside the circle (geodesic distance from its origin at most its radius) or the
        polygon (even-odd, a horizontal ray to the east), vectorised over points."""
        out = np.zeros(lon.shape, dtype=bool)
        box = np.flatnonzero(self._in_box(lon, lat))
        if self.circle is not None:
            out[box] = self._rim_distance(lon[box], lat[box]) <= 0
            return out
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

    def _rim_distance(self, lon: FloatArray, lat: FloatArray) -> FloatArray:
        """Geodesic distance of each position from the circle's rim (m, negative inside)."""
        assert self.circle is not None
        lon0, lat0, radius = self.circle
        dist, _, _ = geodesy.inverse(lat0, lon0, lat, lon)
        out: FloatArray = np.asarray(dist, dtype=np.float64) - radius
        return out

    def leg_crossings(
        self, lon: FloatArray, lat: FloatArray, inside: BoolArray
    ) -> tuple[np.ndarray[Any, np.dtype[np.intp]], FloatArray]:
        """Every place where the track's legs (``i`` → ``i + 1``, straight in lon/lat) cross
        the zone's edge, in track order: leg and fraction along it. ``inside`` is
        :meth:`contains` of every fix."""
        legs = np.arange(max(lon.size - 1, 0))
        leg_w, leg_e = np.minimum(lon[:-1], lon[1:]), np.maximum(lon[:-1], lon[1:])
        leg_s, leg_n = np.minimum(lat[:-1], lat[1:]), np.maximum(lat[:-1], lat[1:])
        near = legs[(leg_e >= self.west) & (leg_w <= self.east) & (leg_n >= self.south) & (leg_s <= self.north)]
        changes = inside[:-1] != inside[1:]
        if self.circle is not None:
            hit_leg, hit_u = self._circle_crossings(lon, lat, near, changes, inside)
        else:
            hit_leg, hit_u = self.crossings(lon, lat, near)
            counts = np.bincount(hit_leg, minlength=legs.size) if legs.size else np.zeros(0, dtype=np.int64)
            consistent = (counts % 2 == 1) == changes
            keep = consistent[hit_leg]
            hit_leg, hit_u = hit_leg[keep], hit_u[keep]
            fallback = legs[changes & ~consistent]
            hit_leg = np.concatenate((hit_leg, fallback))
            hit_u = np.concatenate((hit_u, _bisect(self, lon, lat, fallback)))
        order = np.lexsort((hit_u, hit_leg))
        return hit_leg[order], hit_u[order]

    def _circle_crossings(
        self,
        lon: FloatArray,
        lat: FloatArray,
        near: np.ndarray[Any, np.dtype[np.intp]],
        changes: BoolArray,
        inside: BoolArray,
    ) -> tuple[np.ndarray[Any, np.dtype[np.intp]], FloatArray]:
        """Where legs cross the rim: one crossing on a leg whose ends are on either side, two
        on a leg with both ends outside whose closest point to the origin is inside (found in a
        local flat frame, then tested on the ellipsoid); each solved by bisection."""
        assert self.circle is not None
        lon0, lat0, _ = self.circle
        one = near[changes[near]]
        both_out = near[~changes[near] & ~inside[near]]
        # closest point of each leg to the origin, in a local equirectangular frame
        scale = math.cos(math.radians(lat0))
        x1 = ((lon[both_out] - lon0 + 180.0) % 360.0 - 180.0) * scale
        y1 = lat[both_out] - lat0
        dx = (lon[both_out + 1] - lon[both_out]) * scale
        dy = lat[both_out + 1] - lat[both_out]
        with np.errstate(divide="ignore", invalid="ignore"):
            u_star = np.clip(np.where(dx * dx + dy * dy > 0, -(x1 * dx + y1 * dy) / (dx * dx + dy * dy), 0.0), 0, 1)
        px, py = _along(lon, lat, both_out, u_star)
        dips = self._rim_distance(px, py) < 0
        two, u_mid = both_out[dips], u_star[dips]
        legs = np.concatenate((one, two, two))
        lo = np.concatenate((np.zeros(one.size), np.zeros(two.size), u_mid))
        hi = np.concatenate((np.ones(one.size), u_mid, np.ones(two.size)))
        lo_inside = self._rim_distance(*_along(lon, lat, legs, lo)) <= 0
        for _ in range(_BISECT_ROUNDS):
            mid = (lo + hi) * 0.5
            same = (self._rim_distance(*_along(lon, lat, legs, mid)) <= 0) == lo_inside
            lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
        out: FloatArray = (lo + hi) * 0.5
        return legs, out

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


def _along(
    lon: FloatArray, lat: FloatArray, legs: np.ndarray[Any, np.dtype[np.intp]], u: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Positions a fraction ``u`` along legs ``i`` → ``i + 1``, linear in lon/lat."""
    return lon[legs] + u * (lon[legs + 1] - lon[legs]), lat[legs] + u * (lat[legs + 1] - lat[legs])


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
    """Every stay of the track inside the zone, whatever the zone's active period."""
    lon, lat, t = track.lon, track.lat, track.t
    inside = zone.contains(lon, lat)
    n = lon.size
    hit_leg, hit_u = zone.leg_crossings(lon, lat, inside)

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


class ZoneInputs:
    """The tracks and zones given to a zone tool (by input index), each zone's active period."""

    def __init__(self, inp: ToolInput, tool: str, min_tracks: int = 1) -> None:
        kinds = [feature_kind(f) for f in inp.features]
        track_idx = [i for i, k in enumerate(kinds) if k == "track"]
        zone_idx = [i for i, k in enumerate(kinds) if k == "zone"]
        if len(track_idx) < min_tracks or not zone_idx:
            need = "one track" if min_tracks == 1 else f"{min_tracks} tracks"
            raise InvalidContext(
                f"{tool} needs at least {need} and one zone, got {kinds.count('track')} track(s) "
                f"and {kinds.count('zone')} zone(s)",
                details={
                    "expected": f"at least {min_tracks} track(s) and 1 zone",
                    "received_count": len(kinds),
                    "received_kinds": kinds,
                },
            )
        self.features = inp.features
        self.tracks = {i: track_data(inp.features[i], index=i) for i in track_idx}
        self.zones = {j: Zone(inp.features[j], j) for j in zone_idx}
        # the one meaning of active (the picture and time windows share it); a bad period is an error here
        self.periods = {j: active_period(inp.features[j], strict=True, index=j) for j in zone_idx}


def visits(
    track: TrackData, zone: Zone, period: tuple[float, float] | None
) -> tuple[list[dict[str, Any]], list[tuple[float, float]]]:
    """The track's stays inside the zone while the zone is active (as :func:`transits` gives
    them, cut to the active period; ``_t0`` and ``_t1`` in epoch seconds), and the spans of time
    it was inside while the zone was not active."""
    found = transits(track, zone)
    if period is None:
        return found, []
    inactive = []
    for entry in found:
        t0, t1 = entry["_t0"], entry["_t1"]
        for a, b in ((t0, min(t1, period[0])), (max(t0, period[1]), t1)):
            if a < b:
                inactive.append((a, b))
    return [cut for entry in found if (cut := _while_active(entry, track, period)) is not None], inactive


def _crossing_motion(legs: Legs, entry: dict[str, Any]) -> dict[str, float | None]:
    """Speed (kn) and course of the leg the track crossed in on and out on (from positions and
    times; at a fix, the leg going in and the leg coming out), None at an end with no crossing."""
    t0, t1 = entry["_t0"], entry["_t1"]
    speed, course = motion_at(legs, np.array([t0, np.nextafter(t1, -np.inf)]))
    out: dict[str, float | None] = {}
    for k, (end, key) in enumerate((("entry", "entry_time"), ("exit", "exit_time"))):
        crossed = entry[key] is not None
        out[f"{end}_speed_kn"] = num(speed[k] / KNOT_MPS, 2) if crossed else None
        c = num(course[k], 1) if crossed else None
        out[f"{end}_course"] = c % 360.0 if c is not None else None
    return out


def _with_dm(entry: dict[str, Any]) -> None:
    """Each position of a stay also in degrees and minutes, right after it."""
    shown = {}
    for key, value in entry.items():
        shown[key] = value
        if key in ("entry_position", "exit_position"):
            shown[f"{key}_dm"] = position_dm(value) if value is not None else None
    entry.clear()
    entry.update(shown)


def handle_transits(inp: ToolInput) -> ToolOutput:
    given = ZoneInputs(inp, "zone-transits")
    with_geometry = bool(inp.parameters["include_geometry"])
    features, sources = [], []
    legs_of: dict[int, Legs] = {}
    for i, track in given.tracks.items():
        for j, zone in given.zones.items():
            period = given.periods[j]
            found, inactive = visits(track, zone, period)
            stretches = [entry.pop("_stretch") for entry in found]
            legs = legs_of.setdefault(i, Legs(track))
            for entry in found:
                entry.update(_crossing_motion(legs, entry))
                del entry["_t0"], entry["_t1"]
                _with_dm(entry)
            props: dict[str, Any] = {
                "track_id": track.id,
                "zone_id": zone.id,
                "zone_shape": "circle" if zone.circle is not None else "polygon",
                "zone_active": period_text(period),
                "transit_count": len(found),
                "total_inside_s": num(sum(e["duration_s"] or 0.0 for e in found), 3),
                "inside_at_start": bool(found and found[0]["entry_time"] is None),
                "inside_at_end": bool(found and found[-1]["exit_time"] is None),
                "track_start": iso(float(track.t[0])),
                "track_end": iso(float(track.t[-1])),
                "transits": found,
            }
            if inactive:
                props["inside_while_inactive"] = [
                    {"from": iso(a), "to": iso(b), "duration_s": num(b - a, 3)} for a, b in inactive
                ]
            notes = []
            if period is not None and (period[1] < track.t[0] or period[0] > track.t[-1]):
                notes.append("the zone is not active at any time of the track")
            if not found and not inactive:
                notes.append("never inside the zone")
            elif inactive:
                notes.append(
                    f"{'inside only' if not found else 'also inside'} while the zone was not active "
                    "(inside_while_inactive); that time is not counted"
                )
            if notes:
                props["note"] = "; ".join(notes)
            title = f"{track.name or track.id} in {zone.name or zone.id}"
            geometry: dict[str, Any] | None = {"type": "MultiLineString", "coordinates": stretches}
            if not with_geometry:  # where each stay began and ended: something to draw, two points a stay
                ends = [p for stretch in stretches for p in (stretch[0], stretch[-1])]
                geometry = {"type": "MultiPoint", "coordinates": ends} if ends else None
            features.append(result_feature(title, geometry, props))
            sources.append([source_ref(inp.features[i], i), source_ref(inp.features[j], j)])
    return ToolOutput(features=features, feature_sources=sources)


#: a zone with neither time nor timeEnd, as zone-transits' zone_active and zone-overlaps' active say it
ALWAYS: Final = "always"


def period_text(period: tuple[float, float] | None) -> list[str | None] | str:
    """A zone's active period as the answers give it: ``[start, end]`` (None for an open end), or
    ``"always"`` for a zone with no time."""
    if period is None:
        return ALWAYS
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


def _circle_area_perimeter(ring: FloatArray, radius_m: float) -> tuple[float, float]:
    """Area (m²) and perimeter (m) of the geodesic circle ``ring`` (a regular polygon of
    geodesic chords) was drawn on: the polygon's, plus the thin segments between each chord and
    its arc (``r² (θ - sin θ) / 2`` each) and each arc's excess over its chord (θ/2 over
    sin(θ/2)), which leave about 1e-9 of either."""
    a, p = geodesy.polygon_area_perimeter(ring[:, 1], ring[:, 0])
    sides = len(ring) - 1
    theta = 2 * math.pi / sides
    return (
        a + sides * radius_m**2 * (theta - math.sin(theta)) / 2,
        p * (theta / 2) / math.sin(theta / 2),
    )


def handle_area(inp: ToolInput) -> ToolOutput:
    warnings = []
    circle = None
    if inp.features:
        feature = inp.features[0]
        polygons = _polygons(feature)
        circle = circle_of(feature, 0)
        if circle is not None:
            polygons = [[circle_ring(*circle)]]
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
    if circle is not None:
        area_m2, perimeter_m = _circle_area_perimeter(polygons[0][0], circle[2])
    for polygon in polygons if circle is None else []:
        for k, ring in enumerate(polygon):
            a, p = geodesy.polygon_area_perimeter(ring[:, 1], ring[:, 0])
            area_m2 += a if k == 0 else -a
            perimeter_m += p
    unit, area_unit = inp.parameters["distance_unit"], inp.parameters["area_unit"]
    every = np.concatenate([ring for polygon in polygons for ring in polygon])
    lon_c, lat_c = _centroid(polygons) if circle is None else circle[:2]
    props = {
        "zone_id": region_id,
        "area": num(area_m2 / AREA_M2_PER_UNIT[area_unit], 9),
        "area_unit": area_unit,
        "area_m2": num(area_m2, 3),
        "perimeter": num(perimeter_m / METRES_PER_UNIT[unit], distance_decimals(unit)),
        "distance_unit": unit,
        "centroid": [lon_c, lat_c],
        "centroid_dm": position_dm([lon_c, lat_c]),
        "bounds": [
            float(every[:, 0].min()),
            float(every[:, 1].min()),
            float(every[:, 0].max()),
            float(every[:, 1].max()),
        ],
        "polygon_count": len(polygons),
        "hole_count": sum(len(p) - 1 for p in polygons),
        "shape": "circle" if circle is not None else "polygon",
    }
    if circle is not None:
        props["circle"] = {"origin": [circle[0], circle[1]], "radius_m": circle[2]}
    feature_out = result_feature(f"Area of {name}", {"type": "Point", "coordinates": [lon_c, lat_c]}, props)
    return ToolOutput(features=[feature_out], warnings=warnings, feature_sources=sources)


TRANSITS_SPEC = ToolSpec(
    name="zone-transits",
    description=(
        "For each track and each zone given (at least one of each): the intervals the "
        "track spends inside, with entry and exit times and positions (interpolated between the "
        "fixes on either side of the edge), durations, and entry_speed_kn, entry_course, exit_speed_kn, "
        "exit_course (the leg crossed on, from positions and times). A track inside at its first fix has "
        "entry_time null ('already inside at start'); inside at its last fix, exit_time null. "
        "A zone with a time (and timeEnd) counts only while active: time inside before it "
        "becomes active or after it ends is left out, and the result's zone_active gives the "
        'period ([start, end], null for an open end; "always" for a zone with neither time nor timeEnd). '
        "Time inside while the zone was not active is listed apart in inside_while_inactive, and "
        "a note tells 'inside only while the zone was not active' from 'never inside the zone'. "
        "Holes count (even-odd rule). A zone stored as a circle (properties.specifics "
        "{shapeType: circle, origin, radiusM}) is the true geodesic circle, not its stored "
        "polygon; zone_shape says which. One result per track and zone; its geometry is a "
        "MultiPoint of where each stay inside began and ended (null when none), or with "
        "include_geometry the stretches of track inside the zone (a MultiLineString). Entry and exit "
        "positions also come in degrees and minutes (entry_position_dm, exit_position_dm)."
    ),
    version="1.2.0",
    input_kinds=("track", "zone"),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(
        Parameter(
            "include_geometry",
            "boolean",
            "Give each result the stretches of track inside the zone as its geometry "
            "(coordinate arrays: large for long tracks); otherwise only where each stay began and ended.",
            default=False,
        ),
    ),
    handler=handle_transits,
)

AREA_SPEC = ToolSpec(
    name="area-summary",
    description=(
        "Geodesic area (WGS84, edges as geodesics; holes subtracted), perimeter, centroid and "
        "bounds of one zone, or of the rectangle given as bounds [w, s, e, n] when no zone is "
        "given. A zone stored as a circle (properties.specifics {shapeType: circle, origin, "
        "radiusM}) is measured as the true geodesic circle, not its stored polygon: shape "
        "'circle', circle {origin, radius_m}, centroid its origin; centroid_dm is the centroid in degrees "
        "and minutes. The result is a Point at the centroid."
    ),
    version="1.2.0",
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
