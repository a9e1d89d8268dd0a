"""Sensor features for the tests: the SATC sample's cuts and tracks through ``import-rep`` (and the
cuts read here on their own, ``satc_rows``, for references computed without the suite), and
constructed scenarios with a known truth, built with GeographicLib alone."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic

from debrief_calc.tracks.features import iso, parse_iso
from tests.test_analysis_support import run_ok

SENSORS = Path(__file__).resolve().parent / "data" / "sensors"
GEOD = Geodesic.WGS84
KNOT = 1852.0 / 3600.0
DAY = "2010-01-12T"


def _dms(d: str, m: str, s: str, hemisphere: str) -> float:
    value = float(d) + float(m) / 60.0 + float(s) / 3600.0
    return -value if hemisphere in "SW" else value


def _time(date: str, clock: str) -> str:
    return f"20{date[:2]}-{date[2:4]}-{date[4:6]}T{clock[:2]}:{clock[2:4]}:{clock[4:6]}Z"


@functools.cache
def satc_track(name: str) -> dict[str, Any]:
    """``BlueTrack.rep`` (ownship ``SENSOR``) or ``RedTrack.rep`` (the truth, ``SUBJECT``), imported."""
    result = run_ok("import-rep", params={"text": (SENSORS / name).read_text(encoding="utf-8")})
    (track,) = [f for f in result.features if f["properties"]["kind"] == "track"]
    return track


@functools.cache
def _satc_rows() -> tuple[tuple[str, float, float, float], ...]:
    rows = []
    for line in (SENSORS / "BlueSensor_sparse.rep").read_text(encoding="utf-8").splitlines():
        p = line.split()
        if not p or p[0] != ";SENSOR:":
            continue
        rows.append((_time(p[1], p[2]), _dms(*p[5:9]), _dms(*p[9:13]), float(p[13]) % 360.0))
    return tuple(rows)


def sensor_feature(
    times: Sequence[str],
    lats: Sequence[float],
    lons: Sequence[float],
    bearings: Sequence[float | None],
    *,
    fid: str = "sensor-plain",
    host: str = "rep-sensor",
    **lists: Sequence[Any],
) -> dict[str, Any]:
    """A sensor feature in the shape import-rep gives (per-cut lists of one item per cut)."""
    n = len(times)
    props: dict[str, Any] = {
        "dataType": "sensor",
        "kind": "sensor",
        "name": "Plain",
        "host": host,
        "hostName": "SENSOR",
        "timestamps": list(times),
        "bearings": [None if b is None else float(b) % 360.0 for b in bearings],
        "ambiguousBearings": [None] * n,
        "frequencies": [None] * n,
        "rangesYd": [12000.0] * n,
        "bearingAccuracies": [None] * n,
        "frequencyAccuracies": [None] * n,
        "originGiven": [True] * n,
        "labels": ["Cookie SUBJECT held on Plain Cookie"] * n,
        "lineTypes": [";SENSOR:"] * n,
        "stroke": "#0000ff",
        "visible": True,
        "arrayOffsetM": None,
        "baseFrequency": None,
    }
    props.update({k: list(v) for k, v in lists.items()})
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {
            "type": "MultiPoint",
            "coordinates": [[float(x), float(y)] for x, y in zip(lons, lats, strict=True)],
        },
        "properties": props,
    }


@functools.cache
def _imported_sensor() -> dict[str, Any]:
    """The 38 SATC cuts as import-rep gives them, on the ownship track of the same import."""
    text = (SENSORS / "BlueTrack.rep").read_text(encoding="utf-8") + "\n"
    text += (SENSORS / "BlueSensor_sparse.rep").read_text(encoding="utf-8")
    result = run_ok("import-rep", params={"text": text})
    (sensor,) = [f for f in result.features if f["properties"]["kind"] == "sensor"]
    return sensor


def satc_sensor(first: int = 1, last: int = 38, noise_deg: float = 0.0, seed: int = 0) -> dict[str, Any]:
    """The SATC cuts ``first``-``last`` (numbered from 1) as import-rep reads them (a fresh copy),
    their bearings with Gaussian noise of ``noise_deg`` added (fixed seed) when asked."""
    whole = _imported_sensor()
    n = len(whole["geometry"]["coordinates"])
    props = {
        k: (list(v[first - 1 : last]) if isinstance(v, list) and len(v) == n else v)
        for k, v in whole["properties"].items()
        if k != "provenance"
    }
    if noise_deg:
        rng = np.random.default_rng(seed)
        props["bearings"] = [(b + float(rng.normal(0.0, noise_deg))) % 360.0 for b in props["bearings"]]
    coords = [list(c) for c in whole["geometry"]["coordinates"][first - 1 : last]]
    return {
        "type": "Feature",
        "id": whole["id"],
        "geometry": {"type": "MultiPoint", "coordinates": coords},
        "properties": props,
    }


def satc_rows() -> tuple[tuple[str, float, float, float], ...]:
    """(time, lat, lon, bearing) of each of the 38 SATC cuts, read from the file here."""
    return _satc_rows()


# -- constructed scenarios -----------------------------------------------------------------------


def sail(
    lat: float, lon: float, t0: float, legs: Sequence[tuple[float, float, float]], step: float = 10.0
) -> np.ndarray:
    """Rows (t, lat, lon) of a ship steering each ``(course, knots, seconds)`` in turn from
    (lat, lon) at ``t0``, a fix every ``step`` seconds; each step along the rhumb line is short,
    taken as a GeographicLib geodesic on that course."""
    rows = [(t0, lat, lon)]
    for course, knots, seconds in legs:
        for _ in range(round(seconds / step)):
            t, y, x = rows[-1]
            p = GEOD.Direct(y, x, course, knots * KNOT * step)
            rows.append((t + step, p["lat2"], p["lon2"]))
    return np.array(rows)


def at(rows: np.ndarray, t: float) -> tuple[float, float]:
    """Position at ``t`` between the fixes of ``rows``, along the geodesic (GeographicLib)."""
    i = min(max(int(np.searchsorted(rows[:, 0], t, side="right")) - 1, 0), rows.shape[0] - 2)
    f = (t - rows[i, 0]) / (rows[i + 1, 0] - rows[i, 0])
    line = GEOD.InverseLine(rows[i, 1], rows[i, 2], rows[i + 1, 1], rows[i + 1, 2])
    p = line.Position(f * line.s13)
    return p["lat2"], p["lon2"]


def track_of(rows: np.ndarray, fid: str, name: str) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": [[float(r[2]), float(r[1])] for r in rows]},
        "properties": {
            "kind": "track",
            "dataType": "track",
            "name": name,
            "timestamps": [iso(float(r[0])) for r in rows],
        },
    }


T0 = parse_iso("2024-03-01T10:00:00Z")


def scenario(
    *,
    own_legs: Sequence[tuple[float, float, float]] = ((0.0, 10.0, 1200.0), (75.0, 10.0, 1200.0)),
    target_legs: Sequence[tuple[float, float, float]] = ((200.0, 8.0, 2400.0),),
    target_from: tuple[float, float] = (60.0, 15000.0),
    cuts: int = 40,
    noise_deg: float = 0.0,
    seed: int = 0,
    start: tuple[float, float] = (50.0, -5.0),
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], np.ndarray, np.ndarray]:
    """Ownship and target tracks and the sensor's cuts of the target (true geodesic bearings from
    ownship, plus Gaussian noise), with the truth rows of both: (sensor, ownship, target, own rows,
    target rows). The target starts ``target_from`` = (bearing, metres) from ownship."""
    own = sail(start[0], start[1], T0, own_legs)
    p = GEOD.Direct(start[0], start[1], target_from[0], target_from[1])
    tgt = sail(p["lat2"], p["lon2"], T0, target_legs)
    end = min(own[-1, 0], tgt[-1, 0])
    times = np.linspace(T0 + 5.0, end - 5.0, cuts)
    rng = np.random.default_rng(seed)
    lats, lons, bearings = [], [], []
    for t in times:
        o, g = at(own, float(t)), at(tgt, float(t))
        lats.append(o[0])
        lons.append(o[1])
        bearings.append(
            GEOD.Inverse(o[0], o[1], g[0], g[1])["azi1"] + (rng.normal(0.0, noise_deg) if noise_deg else 0.0)
        )
    sensor = sensor_feature([iso(float(t)) for t in times], lats, lons, bearings, host="own")
    return sensor, track_of(own, "own", "OWN"), track_of(tgt, "target", "TARGET"), own, tgt


def wrap180(x: float) -> float:
    return (x + 180.0) % 360.0 - 180.0


def glib_course_speed(rows: np.ndarray, t0: float, t1: float) -> tuple[float, float]:
    """Mean course (°, azimuth at the middle of the geodesic) and speed (kn) between two times."""
    a, b = at(rows, t0), at(rows, t1)
    line = GEOD.InverseLine(a[0], a[1], b[0], b[1])
    mid = line.Position(line.s13 / 2)
    return mid["azi2"] % 360.0, line.s13 / (t1 - t0) / KNOT


def inside_ellipse(
    truth: tuple[float, float], centre: Sequence[float], ellipse: dict[str, Any], metres_per_unit: float
) -> bool:
    """Whether the true position (lat, lon) lies inside the answer's ellipse about ``centre``
    ([lon, lat]), measured with GeographicLib."""
    inv = GEOD.Inverse(centre[1], centre[0], truth[0], truth[1])
    d, az = inv["s12"], math.radians(inv["azi1"] - ellipse["orientation_deg"])
    a = ellipse["semi_major"] * metres_per_unit
    b = ellipse["semi_minor"] * metres_per_unit
    along, across = d * math.cos(az), d * math.sin(az)
    return (along / a) ** 2 + (across / b) ** 2 <= 1.0
