"""The submarine trial's exercise (issue 24, trial t24b) rebuilt for tests and benchmarks, with a
known truth and any number of noise draws: ownship SCEPTRE (8 kn: 000°, a starboard turn to 090°
over 22:40-22:43, a port turn to 330° over 23:20-23:24) and a towed array ``TA`` holding a
CONTACT that starts 9 nm on 070° and steers 250° at 6 kn, turning at once to 200° at 23:10.

Every position is GeographicLib's (WGS84 geodesics, one-second steps, as the trial's generator did);
the cuts (one every two minutes) carry the true geodesic bearing plus Gaussian noise, the mirror
bearing ``2·heading − measured`` and the Doppler frequency ``f0 (C + OSL) / (C − TSL)`` (C 2951 kn)
plus noise; three wild cuts as the trial had them, when asked. The files are written as REP text
and read through ``import-rep``, as a model would read them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic

from debrief_calc.tracks.features import iso, parse_iso
from tests.test_analysis_support import run_ok

GEOD = Geodesic.WGS84
KNOT = 1852.0 / 3600.0
T0 = parse_iso("2026-11-28T22:00:00Z")
DURATION = 7200
OWN_KN, TARGET_KN = 8.0, 6.0
TURN_S = 4200  # the target's turn, seconds from T0 (23:10)
SOUND_KN, F0 = 2951.0, 150.0
#: cut index -> offset (degrees) of the trial's three wild cuts (cuts 15, 39 and 53)
OUTLIERS = {14: 27.0, 38: -33.0, 52: 38.0}
CUT_STEP = 120


def own_heading(t: float) -> float:
    if t < 2400:
        return 0.0
    if t < 2580:
        return 90.0 * (t - 2400) / 180
    if t < 4800:
        return 90.0
    if t < 5040:
        return 90.0 - 120.0 * (t - 4800) / 240
    return 330.0


def target_course(t: float) -> float:
    return 250.0 if t < TURN_S else 200.0


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
    cut_s: np.ndarray  # seconds from T0 of each cut
    bearing: np.ndarray  # true geodesic bearing of each cut
    frequency: np.ndarray  # true received frequency of each cut

    def target_at(self, t: float) -> tuple[float, float]:
        """The target's true position at epoch ``t`` (between its one-second steps, linearly)."""
        s = min(max(t - T0, 0.0), float(DURATION))
        i = min(int(s), DURATION - 1)
        f = s - i
        lat = self.target[i, 0] + f * (self.target[i + 1, 0] - self.target[i, 0])
        lon = self.target[i, 1] + f * (self.target[i + 1, 1] - self.target[i, 1])
        return float(lat), float(lon)


@functools.cache
def geometry() -> Geometry:
    own = _propagate(67.0, 5.0, own_heading, OWN_KN)
    start = GEOD.Direct(67.0, 5.0, 70.0, 9.0 * 1852.0)
    target = _propagate(start["lat2"], start["lon2"], target_course, TARGET_KN)
    cut_s = np.arange(0, DURATION + 1, CUT_STEP)
    bearings, freqs = [], []
    for t in cut_s.tolist():
        inv = GEOD.Inverse(own[t, 0], own[t, 1], target[t, 0], target[t, 1])
        b = inv["azi1"] % 360.0
        osl = OWN_KN * math.cos(math.radians(own_heading(t) % 360.0 - b))
        tsl = TARGET_KN * math.cos(math.radians(target_course(t) - (inv["azi2"] + 180.0)))
        bearings.append(b)
        freqs.append(F0 * (SOUND_KN + osl) / (SOUND_KN - tsl))
    return Geometry(own, target, cut_s, np.array(bearings), np.array(freqs))


def _dms(v: float, pos: str, neg: str, width: int) -> str:
    h = pos if v >= 0 else neg
    v = abs(v)
    d = int(v)
    m = int((v - d) * 60)
    s = ((v - d) * 60 - m) * 60
    if s >= 59.995:
        s, m = 0.0, m + 1
    if m == 60:
        m, d = 0, d + 1
    return f"{d:0{width}d} {m:02d} {s:05.2f} {h}"


def _stamp_at(t0: float, t: float) -> str:
    text = iso(t0 + t)
    return f"{text[2:4]}{text[5:7]}{text[8:10]} {text[11:13]}{text[14:16]}{text[17:19]}.000"


def _stamp(t: float) -> str:
    return _stamp_at(T0, t)


def files(
    seed: int,
    *,
    bearing_sd: float = 1.0,
    freq_sd: float = 0.02,
    outliers: bool = True,
    frequencies: bool = True,
    astern_m: float = 0.0,
) -> tuple[str, str]:
    """The ownship REP text and the towed array's DSF text of one noise draw; ``astern_m``: the
    array that far astern along ownship's own path (its bearings taken from there; cuts before it
    has run out that far are left out)."""
    g = geometry()
    rng = np.random.default_rng(seed)
    lag = round(astern_m / (OWN_KN * KNOT))
    rep = []
    for t in range(0, DURATION + 1, 60):
        lat, lon = g.own[t]
        rep.append(
            f"{_stamp(t)} SCEPTRE @C {_dms(lat, 'N', 'S', 2)} {_dms(lon, 'E', 'W', 3)} "
            f"{own_heading(t) % 360:.1f} {OWN_KN:.1f} 0"
        )
    dsf = [";; towed array TA on SCEPTRE, cuts every 2 min"]
    for i, t in enumerate(g.cut_s.tolist()):
        noise = float(rng.normal(0.0, bearing_sd))
        true_bearing = g.bearing[i]
        if lag:
            if t < lag:
                continue
            a = g.own[t - lag]
            true_bearing = GEOD.Inverse(a[0], a[1], g.target[t, 0], g.target[t, 1])["azi1"] % 360.0
        measured = (true_bearing + noise + (OUTLIERS.get(i, 0.0) if outliers else 0.0)) % 360.0
        mirror = (2 * (own_heading(t) % 360.0) - measured) % 360.0
        freq = f"{g.frequency[i] + float(rng.normal(0.0, freq_sd)):.3f}" if frequencies else "NULL"
        dsf.append(f";SENSOR2: {_stamp(t)} SCEPTRE @A NULL {measured:.1f} {mirror:.1f} {freq} NULL TA TA")
    return "\n".join(rep) + "\n", "\n".join(dsf) + "\n"


def features(seed: int, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (sensor, ownship track) of one noise draw, as ``import-rep`` reads its files."""
    rep, dsf = files(seed, **kw)
    result = run_ok("import-rep", params={"text": rep + dsf})
    (sensor,) = [f for f in result.features if f["properties"]["kind"] == "sensor"]
    (track,) = [f for f in result.features if f["properties"]["kind"] == "track"]
    return sensor, track


def truth_leg(t: float) -> tuple[float, float]:
    """The target's true (course, knots) at epoch ``t``."""
    return target_course(t - T0), TARGET_KN


def truth_track() -> dict[str, Any]:
    """The target's true track (a fix a minute) as a track feature."""
    g = geometry()
    times = range(0, DURATION + 1, 60)
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
            "name": "CONTACT",
            "timestamps": [iso(T0 + t) for t in times],
        },
    }
