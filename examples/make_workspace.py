"""Generate a realistic, deterministic example workspace for the three servers of the suite.

Run from the repository root (or import :func:`make_workspace`)::

    python examples/make_workspace.py DIR

``DIR`` receives two folders:

``plots/``
    ``exercise.plot.json``: a Debrief plot in the format of real ``.plot.json`` files (tracks
    with ``dataType``, ``timestamps``, ``stroke`` and ``name``; reference points; a circular
    exercise area drawn as a Polygon annotation with ``specifics``; the
    ``debrief-time-metadata`` and ``debrief-viewport-metadata`` features). Two ships on timed
    tracks, one fix a minute over four hours at 12 to 16 knots, pass within a few hundred metres
    of each other at a known time; one of them crosses the exercise area.
    ``cormorant.rep``: a fishing vessel's track in the legacy REP format, with narrative lines.

``project/``
    A small code project (Python and TypeScript) for ``llmem-mcp``, with a ``.gitignore``.

Everything is computed here (WGS84 geodesy through GeographicLib, seeded randomness), nothing
is copied, and two runs with the same seed write byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from geographiclib.geodesic import Geodesic

__all__ = ["make_workspace"]

WGS84 = Geodesic.WGS84
KNOT = 1852.0 / 3600.0  # metres per second
DAY = datetime(2025, 3, 14, tzinfo=UTC)
PLOT_NAME = "exercise.plot.json"
REP_NAME = "cormorant.rep"

# The designed encounter: the two plot ships are CPA_RANGE_M apart at CPA_TIME, their relative
# motion square to the line between them, so that instant is their closest approach.
CPA_TIME = DAY + timedelta(hours=10, minutes=42, seconds=30)  # between two fixes, on purpose
CPA_RANGE_M = 420.0
CPA_POSITION = (-4.95, 49.82)  # ARGONAUT's position then (lon, lat): south of the Lizard


@dataclass(frozen=True)
class Leg:
    start: datetime
    end: datetime
    course: float  # degrees true
    speed_kn: float


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _leg_at(legs: list[Leg], t0: datetime, t1: datetime) -> Leg:
    for leg in legs:
        if leg.start <= t0 and t1 <= leg.end:
            return leg
    raise ValueError(f"no leg covers {t0}..{t1}")


def _direct(lon: float, lat: float, azimuth: float, distance_m: float) -> tuple[float, float]:
    g = WGS84.Direct(lat, lon, azimuth, distance_m)
    return g["lon2"], g["lat2"]


def dead_reckon(
    anchor: tuple[float, float], at: datetime, legs: list[Leg], start: datetime, end: datetime, step_s: int = 60
) -> tuple[list[datetime], list[tuple[float, float]]]:
    """Fixes every ``step_s`` from ``start`` to ``end`` of a ship that is at ``anchor`` at ``at``.

    The ship steers each leg's course (a constant heading between fixes, as a ship does) at the
    leg's speed; positions are stepped forward and backward from the anchor on the ellipsoid.
    """
    times = [start + timedelta(seconds=step_s * k) for k in range(int((end - start).total_seconds()) // step_s + 1)]
    after = next(i for i, t in enumerate(times) if t >= at)
    pos: dict[int, tuple[float, float]] = {}
    # the fixes either side of the anchor
    if times[after] == at:
        pos[after] = anchor
    else:
        leg = _leg_at(legs, times[after - 1], times[after])
        pos[after] = _direct(*anchor, leg.course, leg.speed_kn * KNOT * (times[after] - at).total_seconds())
        pos[after - 1] = _direct(*anchor, leg.course, -leg.speed_kn * KNOT * (at - times[after - 1]).total_seconds())
    for i in range(after + 1, len(times)):
        leg = _leg_at(legs, times[i - 1], times[i])
        pos[i] = _direct(*pos[i - 1], leg.course, leg.speed_kn * KNOT * step_s)
    first = min(pos)
    for i in range(first - 1, -1, -1):
        leg = _leg_at(legs, times[i], times[i + 1])
        pos[i] = _direct(*pos[i + 1], leg.course, -leg.speed_kn * KNOT * step_s)
    return times, [pos[i] for i in range(len(times))]


def _motion(positions: list[tuple[float, float]], times: list[datetime]) -> tuple[list[float], list[float]]:
    """Course and speed at each fix, from the positions (the last fix repeats the last leg)."""
    courses, speeds = [], []
    for i in range(len(positions)):
        a, b = (i, i + 1) if i + 1 < len(positions) else (i - 1, i)
        g = WGS84.Inverse(positions[a][1], positions[a][0], positions[b][1], positions[b][0])
        dt = (times[b] - times[a]).total_seconds()
        courses.append(round(g["azi1"] % 360.0, 2))
        speeds.append(round(g["s12"] / dt / KNOT, 2))
    return courses, speeds


def _circle_ring(origin: tuple[float, float], radius_m: float, vertices: int = 72) -> list[list[float]]:
    ring = [
        [round(c, 7) for c in _direct(*origin, 360.0 * k / vertices, radius_m)] for k in range(vertices)
    ]  # clockwise from north, as Debrief draws circles
    return [*ring, ring[0]]


def _inside(lon: float, lat: float, ring: list[list[float]]) -> bool:
    """Even-odd rule, edges straight in longitude/latitude (as debrief-calc's zone tools read zones)."""
    inside = False
    for (x1, y1), (x2, y2) in pairwise(ring):
        if (y1 > lat) != (y2 > lat) and lon < x1 + (lat - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def _transits(
    times: list[datetime], positions: list[tuple[float, float]], ring: list[list[float]]
) -> list[dict[str, str]]:
    """Entry and exit times to the second, sampling the track's straight legs every second."""
    found: list[dict[str, str]] = []
    was_inside = _inside(*positions[0], ring)
    entry: datetime | None = times[0] if was_inside else None
    for (t0, p0), (t1, p1) in pairwise(zip(times, positions, strict=True)):
        span = int((t1 - t0).total_seconds())
        for s in range(1, span + 1):
            f = s / span
            now = _inside(p0[0] + f * (p1[0] - p0[0]), p0[1] + f * (p1[1] - p0[1]), ring)
            if now != was_inside:
                t = t0 + timedelta(seconds=s)
                if now:
                    entry = t
                else:
                    found.append({"entry": _iso(entry) if entry else "", "exit": _iso(t)})
                    entry = None
                was_inside = now
    if entry is not None:
        found.append({"entry": _iso(entry), "exit": ""})
    return found


def _track_feature(
    fid: str, name: str, short: str, stroke: str, times: list[datetime], positions: list[tuple[float, float]]
) -> dict[str, Any]:
    courses, speeds = _motion(positions, times)
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": [[round(x, 7), round(y, 7)] for x, y in positions]},
        "properties": {
            "dataType": "track",
            "stroke": stroke,
            "name": name,
            "shortName": short,
            "timestamps": [_iso(t) for t in times],
            "courses": courses,
            "speeds": speeds,
            "visible": True,
        },
    }


def _point_feature(
    fid: str, name: str, colour: str, lonlat: tuple[float, float], time: datetime | None
) -> dict[str, Any]:
    props: dict[str, Any] = {"name": name, "dataType": "reference-point", "marker_color": colour, "visible": True}
    if time is not None:
        props["time"] = _iso(time)
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "Point", "coordinates": [round(lonlat[0], 7), round(lonlat[1], 7)]},
        "properties": props,
    }


# --------------------------------------------------------------------------------------------
# the REP file
# --------------------------------------------------------------------------------------------


def _dms(value: float, positive: str, negative: str) -> str:
    hemisphere = positive if value >= 0 else negative
    hundredths = round(abs(value) * 360000)  # hundredths of an arc-second, so 59.996" carries
    degrees, rest = divmod(hundredths, 360000)
    minutes, centi = divmod(rest, 6000)
    return f"{degrees:2d} {minutes:2d} {centi / 100:5.2f} {hemisphere}"


def _rep_fix(t: datetime, name: str, symbol: str, lon: float, lat: float, course: float, speed: float) -> str:
    stamp = t.strftime("%y%m%d %H%M%S.") + f"{t.microsecond // 1000:03d}"
    gap = " " * max(2, 9 - len(name))  # NELSON then 3 spaces, COLLINGWOOD then 2, as real files have
    return (
        f"{stamp} {name}{gap}{symbol}   {_dms(lat, 'N', 'S')} {_dms(lon, 'E', 'W')} {course:5.1f} {speed:5.1f}      0 "
    )


def _fishing_track(rng: random.Random) -> tuple[list[datetime], list[tuple[float, float]], list[Leg]]:
    """A trawler working to the west of the encounter: slow tows on shifting headings."""
    start, end = DAY + timedelta(hours=9), DAY + timedelta(hours=11, minutes=30)
    legs: list[Leg] = []
    t, course = start, 235.0
    while t < end:
        minutes = rng.choice((15, 20, 25, 30))
        leg_end = min(end, t + timedelta(minutes=minutes))
        legs.append(Leg(t, leg_end, round(course % 360.0, 1), round(rng.uniform(8.0, 9.5), 1)))
        course += rng.choice((-1, 1)) * rng.uniform(35.0, 70.0)
        t = leg_end
    anchor = (-5.18, 49.86)
    times, positions = dead_reckon(anchor, start, legs, start, end)
    return times, positions, legs


def _rep_text(times: list[datetime], positions: list[tuple[float, float]], legs: list[Leg]) -> str:
    name = "CORMORANT"
    narratives = {
        times[0]: "NETS SHOT, COMMENCE TOW TO THE SOUTHWEST",
        times[len(times) // 2]: "WARSHIP SIGHTED TO THE EAST, HOLDING TOW",
        times[-1]: "HAULING, TOW COMPLETE",
    }
    lines = [";; CORMORANT fishing vessel, positions from the skipper's plotter, generated example"]
    for i, (t, (lon, lat)) in enumerate(zip(times, positions, strict=True)):
        if t in narratives:
            stamp = t.strftime("%y%m%d %H%M%S.") + f"{t.microsecond // 1000:03d}"
            lines.append(f";NARRATIVE: {stamp} {name}   {narratives[t]}")
        leg = _leg_at(legs, t, t) if i + 1 == len(times) else _leg_at(legs, t, times[i + 1])
        lines.append(_rep_fix(t, name, "@F", lon, lat, leg.course, leg.speed_kn))
    return "\r\n".join(lines) + "\r\n"  # legacy REP files come from Windows machines


# --------------------------------------------------------------------------------------------
# the code project
# --------------------------------------------------------------------------------------------

PROJECT_FILES: dict[str, str] = {
    "README.md": "# fleet-tracker\n\nReads ship positions, keeps tracks, reports closest approaches.\n",
    ".gitignore": "build/\n*.log\n",
    "build/generated.py": "# generated: skipped by .gitignore\nVALUE = 1\n",
    "fleet/__init__.py": '"""Ship tracks and the figures analysts ask for."""\n\nfrom fleet.tracks import Fix, Track\n\n__all__ = ["Fix", "Track"]\n',
    "fleet/geo.py": '''"""Great-circle helpers on a spherical Earth (good to a few metres over a few miles)."""

import math

EARTH_RADIUS_M = 6_371_008.8
NM = 1852.0


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Distance in metres between two positions in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


def initial_bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """True bearing in degrees from the first position to the second."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360.0
''',
    "fleet/tracks.py": '''"""A ship's track: timed fixes, with speed and closest approach derived from positions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from fleet.geo import NM, haversine_m


@dataclass(frozen=True)
class Fix:
    """One position of one ship at one time."""

    time: datetime
    lat: float
    lon: float


@dataclass
class Track:
    """The fixes of one ship, kept in time order."""

    name: str
    fixes: list[Fix] = field(default_factory=list)

    def add(self, fix: Fix) -> None:
        """Insert a fix, keeping the track in time order."""
        self.fixes.append(fix)
        self.fixes.sort(key=lambda f: f.time)

    def distance_nm(self) -> float:
        """Length of the track in nautical miles."""
        return sum(haversine_m(a.lat, a.lon, b.lat, b.lon) for a, b in zip(self.fixes, self.fixes[1:])) / NM

    def mean_speed_kn(self) -> float:
        """Mean speed over ground in knots, from positions and times."""
        hours = (self.fixes[-1].time - self.fixes[0].time).total_seconds() / 3600.0
        return self.distance_nm() / hours if hours > 0 else 0.0


def closest_fix_pair(a: Track, b: Track) -> tuple[Fix, Fix, float]:
    """The pair of same-time fixes of two tracks that are closest, and their range in metres."""
    by_time = {f.time: f for f in b.fixes}
    pairs = [(f, by_time[f.time]) for f in a.fixes if f.time in by_time]
    best = min(pairs, key=lambda p: haversine_m(p[0].lat, p[0].lon, p[1].lat, p[1].lon))
    return best[0], best[1], haversine_m(best[0].lat, best[0].lon, best[1].lat, best[1].lon)
''',
    "fleet/report.py": '''"""Plain-text reports of tracks for an exercise debrief."""

from fleet.tracks import Track, closest_fix_pair

MAX_LINES = 40


def summary_line(track: Track) -> str:
    """One line: name, fixes, distance and mean speed."""
    return f"{track.name}: {len(track.fixes)} fixes, {track.distance_nm():.1f} nm at {track.mean_speed_kn():.1f} kn"


def encounter_report(a: Track, b: Track) -> str:
    """The closest same-time fixes of two ships, in a sentence."""
    fa, _, metres = closest_fix_pair(a, b)
    return f"{a.name} and {b.name} closest at {fa.time:%H:%M}Z, {metres:.0f} m apart"
''',
    "web/src/types.ts": """/** A position report as the web client receives it. */
export interface Fix {
  time: string;
  lat: number;
  lon: number;
}

/** A ship and its fixes. */
export interface TrackDto {
  name: string;
  fixes: Fix[];
}

export type DistanceUnit = "nm" | "km" | "m";
""",
    "web/src/api.ts": """import { Fix, TrackDto, DistanceUnit } from "./types";

const BASE_URL = "/api/v1";

/** Fetch every track of an exercise. */
export async function fetchTracks(exercise: string): Promise<TrackDto[]> {
  const res = await fetch(`${BASE_URL}/exercises/${encodeURIComponent(exercise)}/tracks`);
  if (!res.ok) {
    throw new Error(`tracks of ${exercise}: HTTP ${res.status}`);
  }
  return (await res.json()) as TrackDto[];
}

/** The latest fix of a track, if it has any. */
export function latestFix(track: TrackDto): Fix | undefined {
  return track.fixes.length ? track.fixes[track.fixes.length - 1] : undefined;
}

/** Converts metres to the unit the analyst chose. */
export class DistanceFormatter {
  constructor(private readonly unit: DistanceUnit) {}

  format(metres: number): string {
    const factor = this.unit === "nm" ? 1852 : this.unit === "km" ? 1000 : 1;
    return `${(metres / factor).toFixed(2)} ${this.unit}`;
  }
}
""",
}


# --------------------------------------------------------------------------------------------
# the whole workspace
# --------------------------------------------------------------------------------------------


def _encounter() -> tuple[list[Leg], list[Leg], tuple[float, float]]:
    """ARGONAUT's and BLUE HERON's legs, and BLUE HERON's position at the CPA time."""
    argonaut = [
        Leg(DAY + timedelta(hours=8), DAY + timedelta(hours=9, minutes=20), 62.0, 16.0),
        Leg(DAY + timedelta(hours=9, minutes=20), DAY + timedelta(hours=12), 108.0, 14.0),
    ]
    heron = [Leg(DAY + timedelta(hours=8, minutes=30), DAY + timedelta(hours=12, minutes=30), 201.0, 12.0)]
    a, b = argonaut[1], heron[0]
    # relative velocity of BLUE HERON seen from ARGONAUT (east, north), in the local plane
    ve = b.speed_kn * math.sin(math.radians(b.course)) - a.speed_kn * math.sin(math.radians(a.course))
    vn = b.speed_kn * math.cos(math.radians(b.course)) - a.speed_kn * math.cos(math.radians(a.course))
    square = math.degrees(math.atan2(ve, vn)) + 90.0  # the line of sight at CPA is square to it
    return argonaut, heron, _direct(*CPA_POSITION, square, CPA_RANGE_M)


def make_workspace(directory: str | Path, *, seed: int = 1805) -> dict[str, Any]:
    """Write the example workspace into ``directory`` and say what it holds.

    Returns the folders and files made, the ships with their feature ids, the designed closest
    approach of the two plot ships (time, range in metres and nautical miles), the exercise
    area and when the crossing ship is inside it.
    """
    rng = random.Random(seed)
    root = Path(directory)
    plots, project = root / "plots", root / "project"
    plots.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)

    argonaut_legs, heron_legs, heron_at_cpa = _encounter()
    a_times, a_pos = dead_reckon(
        CPA_POSITION, CPA_TIME, argonaut_legs, DAY + timedelta(hours=8), DAY + timedelta(hours=12)
    )
    b_times, b_pos = dead_reckon(
        heron_at_cpa, CPA_TIME, heron_legs, DAY + timedelta(hours=8, minutes=30), DAY + timedelta(hours=12, minutes=30)
    )
    # the exercise area: a circle BLUE HERON's track cuts through a chord of, 35 minutes after CPA
    k = b_times.index(CPA_TIME + timedelta(seconds=30) + timedelta(minutes=35))
    zone_origin = _direct(*b_pos[k], heron_legs[0].course + 90.0, 0.8 * 1852.0)
    zone_radius_m = 2.5 * 1852.0
    ring = _circle_ring(zone_origin, zone_radius_m)

    tracks = [
        _track_feature("t-argonaut", "ARGONAUT", "ARGO", "#F00", a_times, a_pos),
        _track_feature("t-blue-heron", "BLUE HERON", "BLUH", "#00F", b_times, b_pos),
    ]
    zone = {
        "type": "Feature",
        "id": "z-kilo",
        "geometry": {"type": "Polygon", "coordinates": [ring]},
        "properties": {
            "name": "EXAREA KILO",
            "stroke": "#F0F",
            "fill": "#F0F",
            "fill-opacity": 0.2,
            "dataType": "annotation",
            "visible": True,
            "time": _iso(DAY + timedelta(hours=8)),
            "timeEnd": _iso(DAY + timedelta(hours=13)),
            "specifics": {
                "shapeType": "circle",
                "origin": [round(zone_origin[0], 7), round(zone_origin[1], 7)],
                "radiusM": zone_radius_m,
            },
        },
    }
    datum = _direct(*a_pos[0], rng.uniform(150.0, 210.0), rng.uniform(3.0, 5.0) * 1852.0)
    wreck = _direct(*CPA_POSITION, rng.uniform(280.0, 320.0), rng.uniform(6.0, 8.0) * 1852.0)
    buoy = _direct(*zone_origin, rng.uniform(20.0, 60.0), zone_radius_m + 1852.0)
    points = [
        _point_feature("p-datum", "DATUM ALPHA", "#FF0", datum, DAY + timedelta(hours=8)),
        _point_feature("p-wreck", "WRECK (CHARTED)", "#888", wreck, None),
        _point_feature("p-buoy", "BUOY E1 (OFF STATION)", "#0F0", buoy, DAY + timedelta(hours=9, minutes=15)),
    ]
    every = [c for f in tracks for c in f["geometry"]["coordinates"]] + ring
    west, east = min(c[0] for c in every), max(c[0] for c in every)
    south, north = min(c[1] for c in every), max(c[1] for c in every)
    pad_x, pad_y = (east - west) * 0.1, (north - south) * 0.1
    view = [round(west - pad_x, 6), round(south - pad_y, 6), round(east + pad_x, 6), round(north + pad_y, 6)]
    start, end = min(a_times[0], b_times[0]), max(a_times[-1], b_times[-1])
    metadata = [
        {
            "type": "Feature",
            "id": "debrief-time-metadata",
            "geometry": {"type": "Polygon", "coordinates": [[]]},
            "properties": {
                "dataType": "metadata",
                "metadataType": "time",
                "current": _iso(CPA_TIME),
                "start": _iso(start),
                "end": _iso(end),
            },
        },
        {
            "type": "Feature",
            "id": "debrief-viewport-metadata",
            "geometry": {
                "type": "Polygon",
                "coordinates": [
                    [[view[0], view[1]], [view[2], view[1]], [view[2], view[3]], [view[0], view[3]], [view[0], view[1]]]
                ],
            },
            "properties": {"dataType": "metadata", "metadataType": "viewport"},
        },
    ]
    plot = {
        "type": "FeatureCollection",
        "bbox": [round(west, 7), round(south, 7), round(east, 7), round(north, 7)],
        "features": [*tracks, zone, *points, *metadata],
    }
    plot_file = plots / PLOT_NAME
    plot_file.write_text(json.dumps(plot, indent=2) + "\n", encoding="utf-8")

    c_times, c_pos, c_legs = _fishing_track(rng)
    rep_file = plots / REP_NAME
    rep_file.write_bytes(_rep_text(c_times, c_pos, c_legs).encode("ascii"))

    code_files = []
    for rel, text in PROJECT_FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        code_files.append(path)

    return {
        "root": root,
        "plots_dir": plots,
        "project_dir": project,
        "plot_file": plot_file,
        "rep_file": rep_file,
        "code_files": code_files,
        "ships": {
            "ARGONAUT": {
                "id": "t-argonaut",
                "fixes": len(a_times),
                "start": _iso(a_times[0]),
                "end": _iso(a_times[-1]),
            },
            "BLUE HERON": {
                "id": "t-blue-heron",
                "fixes": len(b_times),
                "start": _iso(b_times[0]),
                "end": _iso(b_times[-1]),
            },
            "CORMORANT": {"file": REP_NAME, "fixes": len(c_times), "start": _iso(c_times[0]), "end": _iso(c_times[-1])},
        },
        "cpa": {
            "ships": ["t-argonaut", "t-blue-heron"],
            "time": _iso(CPA_TIME),
            "range_m": CPA_RANGE_M,
            "range_nm": CPA_RANGE_M / 1852.0,
        },
        "zone": {
            "id": "z-kilo",
            "name": "EXAREA KILO",
            "crossed_by": "t-blue-heron",
            "transits": _transits(b_times, b_pos, ring),
        },
        "reference_points": [p["id"] for p in points],
        "seed": seed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("directory", type=Path, help="where to write plots/ and project/")
    parser.add_argument("--seed", type=int, default=1805)
    args = parser.parse_args(argv)
    made = make_workspace(args.directory, seed=args.seed)
    print(json.dumps(made, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
