"""Generate a realistic, deterministic example workspace for the three servers of the suite.

Run from the repository root (or import :func:`make_workspace`)::

    python examples/make_workspace.py DIR

``DIR`` receives two folders:

``plots/``
    Three legacy REP files, the raw material of an analyst's debrief (there is no plot yet: the
    tour makes one from them with ``debrief_create_plot``):

    ``argonaut.rep``
        ARGONAUT, one fix a minute over four hours at 16 then 14 knots, with ``;NARRATIVE:``
        lines; the exercise area EXAREA KILO as a ``;CIRCLE:`` line (centre and radius in
        yards, as Debrief writes it) and three reference marks as ``;TEXT:`` labels.
    ``blue_heron.rep``
        BLUE HERON (a quoted name with a space, as REP allows), one fix a minute at 12 knots,
        with narratives. She passes ARGONAUT 420 m away at a designed time between two fixes,
        then crosses EXAREA KILO.
    ``cormorant.rep``
        CORMORANT, a trawler working to the west on shifting headings, with narratives.

    Every file is CRLF-terminated ASCII, as legacy files are, and imports without a bad line.

``project/``
    A small code project (Python and TypeScript) for ``llmem-mcp``, with a ``.gitignore``.

Everything is computed here (WGS84 geodesy through GeographicLib, seeded randomness), nothing
is copied, and two runs with the same seed write byte-identical files. :func:`make_workspace`
returns what was made and the design to check the analysis against: the closest approach of
ARGONAUT and BLUE HERON (time, range) and BLUE HERON's transit of the exercise area.
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

__all__ = ["PLOT_NAME", "make_workspace"]

WGS84 = Geodesic.WGS84
KNOT = 1852.0 / 3600.0  # metres per second
YARD = 0.9144  # metres
DAY = datetime(2025, 3, 14, tzinfo=UTC)
PLOT_NAME = "exercise.plot.json"  # the plot the tour creates from the REP files (not written here)

# The designed encounter: the two warships are CPA_RANGE_M apart at CPA_TIME, their relative
# motion square to the line between them, so that instant is their closest approach.
CPA_TIME = DAY + timedelta(hours=10, minutes=42, seconds=30)  # between two fixes, on purpose
CPA_RANGE_M = 420.0
CPA_POSITION = (-4.95, 49.82)  # ARGONAUT's position then (lon, lat): south of the Lizard

# The exercise area: a circle, radius in whole yards as a REP ;CIRCLE: line gives it.
ZONE_NAME = "EXAREA KILO"
ZONE_RADIUS_YD = 5000


@dataclass(frozen=True)
class Leg:
    start: datetime
    end: datetime
    course: float  # degrees true
    speed_kn: float


@dataclass(frozen=True)
class Ship:
    """One platform of a REP file: its fixes and the legs that made them."""

    name: str
    file: str
    symbol: str
    times: list[datetime]
    positions: list[tuple[float, float]]
    legs: list[Leg]
    narratives: dict[datetime, str]


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


def _as_written(value: float) -> float:
    """A coordinate as a REP line keeps it: to the hundredth of an arc-second."""
    return math.copysign(round(abs(value) * 360000) / 360000, value)


def _inside(lon: float, lat: float, circle: tuple[tuple[float, float], float]) -> bool:
    """Within the circle's radius of its centre along the geodesic (as debrief-calc's zone tools
    read a zone stored as a circle, whatever ring the importer drew for it)."""
    (lon0, lat0), radius_m = circle
    return bool(WGS84.Inverse(lat0, lon0, lat, lon)["s12"] <= radius_m)


def _transits(
    times: list[datetime], positions: list[tuple[float, float]], circle: tuple[tuple[float, float], float]
) -> list[dict[str, str]]:
    """Entry and exit times to the second, sampling the track's straight legs every second."""
    found: list[dict[str, str]] = []
    was_inside = _inside(*positions[0], circle)
    entry: datetime | None = times[0] if was_inside else None
    for (t0, p0), (t1, p1) in pairwise(zip(times, positions, strict=True)):
        span = int((t1 - t0).total_seconds())
        for s in range(1, span + 1):
            f = s / span
            now = _inside(p0[0] + f * (p1[0] - p0[0]), p0[1] + f * (p1[1] - p0[1]), circle)
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


# --------------------------------------------------------------------------------------------
# the REP files
# --------------------------------------------------------------------------------------------


def _dms(value: float, positive: str, negative: str) -> str:
    hemisphere = positive if value >= 0 else negative
    hundredths = round(abs(value) * 360000)  # hundredths of an arc-second, so 59.996" carries
    degrees, rest = divmod(hundredths, 360000)
    minutes, centi = divmod(rest, 6000)
    return f"{degrees:2d} {minutes:2d} {centi / 100:5.2f} {hemisphere}"


def _position(lon: float, lat: float) -> str:
    return f"{_dms(lat, 'N', 'S')} {_dms(lon, 'E', 'W')}"


def _stamp(t: datetime) -> str:
    return t.strftime("%y%m%d %H%M%S.") + f"{t.microsecond // 1000:03d}"


def _rep_name(name: str) -> str:
    return f'"{name}"' if " " in name else name  # REP quotes a name with a space


def _rep_fix(t: datetime, name: str, symbol: str, lon: float, lat: float, course: float, speed: float) -> str:
    name = _rep_name(name)
    gap = " " * max(2, 9 - len(name))  # NELSON then 3 spaces, COLLINGWOOD then 2, as real files have
    return f"{_stamp(t)} {name}{gap}{symbol}   {_position(lon, lat)} {course:5.1f} {speed:5.1f}      0 "


def _rep_text(ship: Ship, header: str, extra: tuple[str, ...] = ()) -> str:
    """A REP file of one ship: a comment, any shape lines, then fixes with narratives in time order."""
    lines = [f";; {header}", *extra]
    name = _rep_name(ship.name)
    for i, (t, (lon, lat)) in enumerate(zip(ship.times, ship.positions, strict=True)):
        if t in ship.narratives:
            lines.append(f";NARRATIVE: {_stamp(t)} {name}   {ship.narratives[t]}")
        leg = _leg_at(ship.legs, t, t) if i + 1 == len(ship.times) else _leg_at(ship.legs, t, ship.times[i + 1])
        lines.append(_rep_fix(t, ship.name, ship.symbol, lon, lat, leg.course, leg.speed_kn))
    return "\r\n".join(lines) + "\r\n"  # legacy REP files come from Windows machines


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


def _at(hours: int, minutes: int) -> datetime:
    return DAY + timedelta(hours=hours, minutes=minutes)


def make_workspace(directory: str | Path, *, seed: int = 1805) -> dict[str, Any]:
    """Write the example workspace into ``directory`` and say what it holds.

    Returns the folders and files made (``rep_files``: one per ship, in import order), the name
    of the plot to create from them (``plot_name``), the ships by name (file, fix count, time
    span, narratives, the legs that made the track), the designed closest approach of ARGONAUT
    and BLUE HERON (time, range in metres, yards and nautical miles), the exercise area (the file
    that draws it, centre, radius, and each ship's transits of it, to the second) and the
    reference marks' labels. Feature ids are not known here: the importer gives them.
    """
    rng = random.Random(seed)
    root = Path(directory)
    plots, project = root / "plots", root / "project"
    plots.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)

    argonaut_legs, heron_legs, heron_at_cpa = _encounter()
    a_times, a_pos = dead_reckon(CPA_POSITION, CPA_TIME, argonaut_legs, _at(8, 0), _at(12, 0))
    b_times, b_pos = dead_reckon(heron_at_cpa, CPA_TIME, heron_legs, _at(8, 30), _at(12, 30))

    # the exercise area: a circle BLUE HERON's track cuts through a chord of, 35 minutes after CPA
    k = b_times.index(CPA_TIME + timedelta(seconds=30) + timedelta(minutes=35))
    zone_origin = _direct(*b_pos[k], heron_legs[0].course + 90.0, 0.8 * 1852.0)
    zone_origin = (_as_written(zone_origin[0]), _as_written(zone_origin[1]))
    zone_radius_m = ZONE_RADIUS_YD * YARD
    marks = {
        "DATUM ALPHA": _direct(*a_pos[0], rng.uniform(150.0, 210.0), rng.uniform(3.0, 5.0) * 1852.0),
        "WRECK (CHARTED)": _direct(*CPA_POSITION, rng.uniform(280.0, 320.0), rng.uniform(6.0, 8.0) * 1852.0),
        "BUOY E1 (OFF STATION)": _direct(*zone_origin, rng.uniform(20.0, 60.0), zone_radius_m + 1852.0),
    }
    c_times, c_pos, c_legs = _fishing_track(rng)  # after the marks: the seed's draws in their old order
    briefed = (
        f";CIRCLE: @E {_position(*zone_origin)} {ZONE_RADIUS_YD} {ZONE_NAME}",
        *(f";TEXT: @E {_position(*where)} {label}" for label, where in marks.items()),
    )

    ships = [
        Ship(
            "ARGONAUT",
            "argonaut.rep",
            "@C",
            a_times,
            a_pos,
            argonaut_legs,
            {
                _at(8, 0): "COMEX, PROCEEDING EAST NORTH EAST AT 16 KTS",
                _at(9, 20): "ALTER COURSE 108, SPEED 14, FOR EXAREA KILO",
                _at(10, 30): "CONTACT BLUE HERON BEARING 065, 4 NM, CLOSING",
                _at(10, 43): "CPA BLUE HERON, CLOSE QUARTERS SITUATION REPORTED",
                _at(12, 0): "FINEX",
            },
        ),
        Ship(
            "BLUE HERON",
            "blue_heron.rep",
            "@A",
            b_times,
            b_pos,
            heron_legs,
            {
                _at(8, 30): "ON TASK, SOUTH SOUTH WEST AT 12 KTS",
                _at(10, 38): "ARGONAUT CLOSING ON THE STARBOARD BOW, HOLDING COURSE",
                _at(11, 6): "ENTERING EXAREA KILO",
                _at(12, 30): "OFF TASK",
            },
        ),
        Ship(
            "CORMORANT",
            "cormorant.rep",
            "@F",
            c_times,
            c_pos,
            c_legs,
            {
                c_times[0]: "NETS SHOT, COMMENCE TOW TO THE SOUTHWEST",
                c_times[len(c_times) // 2]: "WARSHIP SIGHTED TO THE EAST, HOLDING TOW",
                c_times[-1]: "HAULING, TOW COMPLETE",
            },
        ),
    ]
    headers = {
        "ARGONAUT": "ARGONAUT, from the ship's navigation record; exercise area and reference marks as briefed",
        "BLUE HERON": "BLUE HERON, from the ship's navigation record",
        "CORMORANT": "CORMORANT fishing vessel, positions from the skipper's plotter",
    }
    rep_files = []
    for ship in ships:
        text = _rep_text(ship, f"{headers[ship.name]}, generated example", briefed if ship.name == "ARGONAUT" else ())
        path = plots / ship.file
        path.write_bytes(text.encode("ascii"))
        rep_files.append(path)

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
        "rep_files": rep_files,
        "plot_name": PLOT_NAME,
        "code_files": code_files,
        "ships": {
            s.name: {
                "file": s.file,
                "fixes": len(s.times),
                "start": _iso(s.times[0]),
                "end": _iso(s.times[-1]),
                "narratives": len(s.narratives),
                "legs": [
                    {"start": _iso(leg.start), "end": _iso(leg.end), "course": leg.course, "speed_kn": leg.speed_kn}
                    for leg in s.legs
                ],
            }
            for s in ships
        },
        "cpa": {
            "ships": ["ARGONAUT", "BLUE HERON"],
            "time": _iso(CPA_TIME),
            "range_m": CPA_RANGE_M,
            "range_yd": CPA_RANGE_M / YARD,
            "range_nm": CPA_RANGE_M / 1852.0,
        },
        "zone": {
            "name": ZONE_NAME,
            "file": "argonaut.rep",
            "origin": list(zone_origin),
            "radius_yd": ZONE_RADIUS_YD,
            "crossed_by": "BLUE HERON",
            # per ship, as the zone tools see the imported tracks: positions as written in the files
            "transits": {
                s.name: _transits(
                    s.times, [(_as_written(x), _as_written(y)) for x, y in s.positions], (zone_origin, zone_radius_m)
                )
                for s in ships
            },
        },
        "reference_points": list(marks),
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
