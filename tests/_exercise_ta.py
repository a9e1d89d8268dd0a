"""The third submarine trial's exercise (issue 24, trial t24c) rebuilt for tests: ownship TRENCHANT
(6 kn on 135°, a 60° port turn at 0.5°/s over 06:45-06:47, then 075°) with a hull sonar ``HULL``
(a cut a minute, σ 0.5°, two wild cuts) and a towed array ``TA`` (a cut every 90 s after the turn,
σ 1.5°, port/starboard ambiguous, a Doppler line of f0 320 Hz); the target MERCHANT starts 12 nm on
100° and holds 290° at 12 kn.

As the trial's generator wrote it, the array reports its starboard solution in the bearing field:
the true (port) bearing is in the ambiguous field of every cut. Positions are GeographicLib's
(WGS84, one-second constant-heading steps); the files are REP text read through ``import-rep``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic

from debrief_calc.tracks.features import iso, parse_iso
from tests._exercise import _dms, _stamp_at
from tests.test_analysis_support import run_ok

GEOD = Geodesic.WGS84
KNOT = 1852.0 / 3600.0
T0 = parse_iso("2025-03-14T06:00:00Z")
DURATION = 5400
OWN_KN, TARGET_KN, TARGET_COURSE = 6.0, 12.0, 290.0
SOUND_KN, F0 = 2951.0, 320.0
#: seconds from T0 -> offset (degrees) of the hull sonar's two wild cuts (06:21 and 07:08)
HULL_OUTLIERS = {1260: 11.0, 4080: -14.0}
TA_START, TA_STEP = 2820, 90


def own_heading(t: float) -> float:
    if t <= 2700:
        return 135.0
    if t >= 2820:
        return 75.0
    return 135.0 - 60.0 * (t - 2700) / 120


def _propagate(lat: float, lon: float, heading: Any, knots: float) -> np.ndarray:
    out = np.empty((DURATION + 1, 2))
    out[0] = lat, lon
    for t in range(DURATION):
        p = GEOD.Direct(lat, lon, heading(t + 0.5) % 360.0, knots * KNOT)
        lat, lon = p["lat2"], p["lon2"]
        out[t + 1] = lat, lon
    return out


@dataclass(frozen=True)
class Geometry:
    own: np.ndarray  # (lat, lon) each second
    target: np.ndarray

    def bearing(self, t: int) -> float:
        a, b = self.own[t], self.target[t]
        return float(GEOD.Inverse(a[0], a[1], b[0], b[1])["azi1"] % 360.0)

    def frequency(self, t: int) -> float:
        b = self.bearing(t)
        osl = OWN_KN * math.cos(math.radians(own_heading(t) - b))
        tsl = TARGET_KN * math.cos(math.radians(TARGET_COURSE - (b + 180.0)))
        return F0 * (SOUND_KN + osl) / (SOUND_KN - tsl)


@functools.cache
def geometry() -> Geometry:
    own = _propagate(49.5, -8.0, own_heading, OWN_KN)
    start = GEOD.Direct(49.5, -8.0, 100.0, 12.0 * 1852.0)
    target = _propagate(start["lat2"], start["lon2"], lambda _t: TARGET_COURSE, TARGET_KN)
    return Geometry(own, target)


def files(seed: int, *, hull_sd: float = 0.5, ta_sd: float = 1.5, freq_sd: float = 0.05) -> tuple[str, str, str]:
    """The ownship REP text, the hull sonar's and the towed array's DSF text of one noise draw."""
    g = geometry()
    rng = np.random.default_rng(seed)
    rep = []
    for t in range(0, DURATION + 1, 30):
        lat, lon = g.own[t]
        rep.append(
            f"{_stamp_at(T0, t)} TRENCHANT @A {_dms(lat, 'N', 'S', 2)} {_dms(lon, 'E', 'W', 3)} "
            f"{own_heading(t):.1f} {OWN_KN:.1f} 60"
        )
    hull = [";; TRENCHANT hull sonar"]
    for t in range(0, DURATION + 1, 60):
        m = (g.bearing(t) + float(rng.normal(0.0, hull_sd)) + HULL_OUTLIERS.get(t, 0.0)) % 360.0
        hull.append(f";SENSOR: {_stamp_at(T0, t)} TRENCHANT @B NULL {m:.2f} NULL HULL C01")
    ta = [";; TRENCHANT towed array: the starboard solution in the bearing field"]
    for t in range(TA_START, DURATION + 1, TA_STEP):
        hd = own_heading(t)
        m = (g.bearing(t) + float(rng.normal(0.0, ta_sd))) % 360.0
        mirror = (2 * hd - m) % 360.0
        brg, amb = (m, mirror) if (m - hd) % 360.0 < 180.0 else (mirror, m)
        f = g.frequency(t) + float(rng.normal(0.0, freq_sd))
        ta.append(f";SENSOR2: {_stamp_at(T0, t)} TRENCHANT @C NULL {brg:.2f} {amb:.2f} {f:.3f} NULL TA C02")
    return "\n".join(rep) + "\n", "\n".join(hull) + "\n", "\n".join(ta) + "\n"


def features(seed: int, **kw: Any) -> dict[str, dict[str, Any]]:
    """The ownship track and the two sensors of one noise draw, by name (TRENCHANT, HULL, TA)."""
    rep, hull, ta = files(seed, **kw)
    result = run_ok("import-rep", params={"text": rep + hull + ta})
    return {str(f["properties"]["name"]): f for f in result.features if f["properties"]["kind"] in ("track", "sensor")}


def truth_track() -> dict[str, Any]:
    """The target's true track (a fix every 30 s) as a track feature."""
    g = geometry()
    times = range(0, DURATION + 1, 30)
    return {
        "type": "Feature",
        "id": "truth",
        "geometry": {
            "type": "LineString",
            "coordinates": [[float(g.target[t, 1]), float(g.target[t, 0])] for t in times],
        },
        "properties": {
            "kind": "track",
            "dataType": "track",
            "name": "MERCHANT",
            "timestamps": [iso(T0 + t) for t in times],
        },
    }
