"""Helpers for the analysis tests (real data, independent GeographicLib references), and
checks that the references themselves are right."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.executor import RunResult, run
from debrief_calc.tracks.features import iso_many

DATA = Path(__file__).resolve().parent / "data"
GEOD = Geodesic.WGS84


def run_tool(
    tool: str, features: Sequence[Mapping[str, Any]] = (), params: Mapping[str, Any] | None = None, **kw: Any
) -> RunResult:
    return run(default_registry(), tool, features, params, **kw)


def run_ok(
    tool: str, features: Sequence[Mapping[str, Any]] = (), params: Mapping[str, Any] | None = None, **kw: Any
) -> RunResult:
    result = run_tool(tool, features, params, **kw)
    assert result.success, result.error
    return result


def run_err(
    tool: str, features: Sequence[Mapping[str, Any]] = (), params: Mapping[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    result = run_tool(tool, features, params, **kw)
    assert not result.success, f"{tool} unexpectedly succeeded"
    assert result.error is not None
    return result.error


def props(result: RunResult, index: int = 0) -> dict[str, Any]:
    return result.features[index]["properties"]


@functools.cache
def _rep_text(name: str) -> str:
    return (DATA / "rep" / name).read_text(encoding="utf-8")


def rep_text(name: str) -> str:
    return _rep_text(name)


def rep_track(name: str) -> dict[str, Any]:
    """The track of a REP file, imported through ``import-rep``."""
    result = run_ok("import-rep", params={"text": rep_text(name)})
    tracks = [f for f in result.features if f["properties"]["kind"] == "track"]
    assert len(tracks) == 1
    return tracks[0]


def boats() -> tuple[dict[str, Any], dict[str, Any]]:
    return rep_track("valid_boat1.rep"), rep_track("valid_boat2.rep")


def load_json(relative: str) -> Any:
    return json.loads((DATA / relative).read_text(encoding="utf-8"))


def plot_tracks() -> list[dict[str, Any]]:
    doc = load_json("plots/large-sample.plot.json")
    return [f for f in doc["features"] if f["properties"].get("dataType") == "track"]


def track_feature(
    fid: str, times: Sequence[float], lons: Sequence[float], lats: Sequence[float], **extra: Any
) -> dict[str, Any]:
    """A track feature with ISO timestamps (times in epoch seconds)."""
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {
            "type": "LineString",
            "coordinates": [[float(x), float(y)] for x, y in zip(lons, lats, strict=True)],
        },
        "properties": {
            "dataType": "track",
            "name": fid.upper(),
            "timestamps": iso_many(np.asarray(times, dtype=float)),
            **extra,
        },
    }


def coords(feature: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    xy = np.array(feature["geometry"]["coordinates"], dtype=float)
    return xy[:, 1], xy[:, 0]


def epoch(feature: Mapping[str, Any]) -> np.ndarray:
    """Fix times in epoch seconds: ISO timestamps, or epoch ms as a 4th coordinate."""
    from debrief_calc.tracks.features import parse_iso

    if "timestamps" in feature["properties"]:
        return np.array([parse_iso(s) for s in feature["properties"]["timestamps"]])
    return np.array([c[3] / 1000.0 for c in feature["geometry"]["coordinates"]])


def glib_length(lat: np.ndarray, lon: np.ndarray) -> float:
    return math.fsum(GEOD.Inverse(lat[i], lon[i], lat[i + 1], lon[i + 1])["s12"] for i in range(lat.size - 1))


def glib_position(t: np.ndarray, lat: np.ndarray, lon: np.ndarray, when: float) -> tuple[float, float]:
    """Position at ``when``, at constant speed along the geodesic leg: GeographicLib only."""
    i = int(np.searchsorted(t, when, side="right") - 1)
    i = min(max(i, 0), t.size - 2)
    frac = (when - t[i]) / (t[i + 1] - t[i])
    line = GEOD.InverseLine(lat[i], lon[i], lat[i + 1], lon[i + 1])
    pos = line.Position(frac * line.s13)
    return pos["lat2"], pos["lon2"]


def glib_range_bearing(a: Mapping[str, Any], b: Mapping[str, Any], when: float) -> tuple[float, float]:
    lat_a, lon_a = coords(a)
    lat_b, lon_b = coords(b)
    p = glib_position(epoch(a), lat_a, lon_a, when)
    q = glib_position(epoch(b), lat_b, lon_b, when)
    inv = GEOD.Inverse(p[0], p[1], q[0], q[1])
    return inv["s12"], inv["azi1"] % 360.0


def test_glib_position_hits_fixes_and_midpoints() -> None:
    t = np.array([0.0, 100.0, 200.0])
    lat = np.array([50.0, 50.1, 50.1])
    lon = np.array([-4.0, -4.0, -3.9])
    assert glib_position(t, lat, lon, 100.0) == pytest.approx((50.1, -4.0), abs=1e-12)
    mid = glib_position(t, lat, lon, 50.0)
    half = GEOD.Inverse(50.0, -4.0, 50.1, -4.0)["s12"] / 2
    assert abs(GEOD.Inverse(50.0, -4.0, mid[0], mid[1])["s12"] - half) < 1e-6


def test_real_data_is_present() -> None:
    assert (DATA / "rep" / "valid_boat1.rep").is_file()
    assert len(plot_tracks()) == 3
