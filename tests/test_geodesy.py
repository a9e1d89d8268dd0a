"""debrief_calc.geo.geodesy against GeographicLib (Karney), computed here as the reference; and units."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo.geodesy import (
    WGS84_F,
    direct,
    interpolate_track,
    inverse,
    leg_azimuths,
    leg_distances,
    path_length,
    polygon_area_perimeter,
)
from debrief_calc.geo.units import (
    DISTANCE_UNITS,
    SPEED_UNITS,
    distance_unit,
    from_metres,
    from_mps,
    speed_unit,
    to_metres,
    to_mps,
)
from debrief_calc.tracks.features import feature_kind, track_data, zone_rings

DATA = Path(__file__).resolve().parent / "data"
GEOD = Geodesic.WGS84
SPEC_TOLERANCE_M = 0.5  # debrief-calc.md: within 0.5 m of GeographicLib for any pair
AZIMUTH_TOLERANCE_DEG = 1e-5


def gl_inverse(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, float, float]:
    r = GEOD.Inverse(lat1, lon1, lat2, lon2)
    return r["s12"], r["azi1"] % 360.0, r["azi2"] % 360.0


def angle_diff(a: float | np.ndarray, b: float | np.ndarray) -> np.ndarray:
    return np.abs((np.asarray(a) - np.asarray(b) + 180.0) % 360.0 - 180.0)


def azimuth_is_unique(lat1: float, lon1: float, lat2: float, lon2: float) -> bool:
    """False where several shortest geodesics join the points, so any azimuth among them is right:
    both points poles, exactly antipodal points, or an equatorial pair farther apart than
    (1 - f)·180° of longitude (the geodesic then runs over either pole)."""
    if abs(lat1) == 90 and abs(lat2) == 90:
        return False
    dlon = abs((lon2 - lon1 + 180.0) % 360.0 - 180.0)
    if lat1 == -lat2 and dlon == 180.0:
        return False
    return not (lat1 == 0 and lat2 == 0 and dlon > (1 - WGS84_F) * 180.0)


def sphere_uniform(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.degrees(np.arcsin(rng.uniform(-1, 1, n))), rng.uniform(-180, 180, n)


# --- strategies ------------------------------------------------------------------------------

lats = st.one_of(
    st.floats(-90, 90, allow_nan=False),
    st.sampled_from([-90.0, 90.0, 0.0, -0.0, 89.999999, -89.999999, 1e-12]),
)
lons = st.one_of(
    st.floats(-180, 180, allow_nan=False),
    st.sampled_from([-180.0, 180.0, 0.0, 179.999999, -179.999999]),
)
small = st.floats(-1.0, 1.0, allow_nan=False) | st.floats(-1e-6, 1e-6, allow_nan=False) | st.just(0.0)


@st.composite
def point_pairs(draw: st.DrawFn) -> tuple[float, float, float, float]:
    lat1, lon1 = draw(lats), draw(lons)
    shape = draw(st.sampled_from(["any", "antipodal", "identical", "close", "equator", "meridian"]))
    if shape == "any":
        lat2, lon2 = draw(lats), draw(lons)
    elif shape == "antipodal":
        lat2 = float(np.clip(-lat1 + draw(small), -90, 90))
        lon2 = lon1 + 180.0 + draw(small)
        lon2 = lon2 - 360.0 if lon2 > 180 else lon2
    elif shape == "identical":
        lat2, lon2 = lat1, lon1
    elif shape == "close":
        lat2 = float(np.clip(lat1 + draw(small) * 1e-3, -90, 90))
        lon2 = lon1 + draw(small) * 1e-3
    elif shape == "equator":
        lat1, lat2, lon2 = 0.0, draw(small) * 1e-3, draw(lons)
    else:
        lat2, lon2 = draw(lats), lon1
    return lat1, lon1, lat2, lon2


# --- inverse -----------------------------------------------------------------------------------


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(point_pairs())
def test_inverse_matches_geographiclib_for_any_pair(pair: tuple[float, float, float, float]) -> None:
    lat1, lon1, lat2, lon2 = pair
    d, az1, az2 = inverse(lat1, lon1, lat2, lon2)
    d_gl, az1_gl, az2_gl = gl_inverse(*pair)
    assert abs(float(d) - d_gl) <= SPEC_TOLERANCE_M, (float(d), d_gl)
    assert 0.0 <= float(az1) < 360.0 and 0.0 <= float(az2) < 360.0
    if d_gl > 1.0 and azimuth_is_unique(*pair):
        assert angle_diff(az1, az1_gl) <= AZIMUTH_TOLERANCE_DEG, (float(az1), az1_gl)
        assert angle_diff(az2, az2_gl) <= AZIMUTH_TOLERANCE_DEG, (float(az2), az2_gl)


@settings(max_examples=300, deadline=None)
@given(point_pairs())
def test_inverse_is_symmetric(pair: tuple[float, float, float, float]) -> None:
    lat1, lon1, lat2, lon2 = pair
    forward = float(inverse(lat1, lon1, lat2, lon2)[0])
    backward = float(inverse(lat2, lon2, lat1, lon1)[0])
    assert abs(forward - backward) <= 1e-3


def test_inverse_worst_error_over_random_pairs_is_sub_millimetre() -> None:
    rng = np.random.default_rng(20240115)
    lat1, lon1 = sphere_uniform(rng, 5000)
    lat2, lon2 = sphere_uniform(rng, 5000)
    # and 1000 nearly antipodal pairs, the case Vincenty's iteration cannot always solve
    alat, alon = sphere_uniform(rng, 1000)
    lat1 = np.concatenate([lat1, alat])
    lon1 = np.concatenate([lon1, alon])
    lat2 = np.concatenate([lat2, np.clip(-alat + rng.normal(0, 0.3, 1000), -90, 90)])
    lon2 = np.concatenate([lon2, alon + 180 + rng.normal(0, 0.3, 1000)])
    d, az1, az2 = inverse(lat1, lon1, lat2, lon2)
    ref = np.array([gl_inverse(*map(float, p)) for p in zip(lat1, lon1, lat2, lon2, strict=True)])
    assert np.max(np.abs(d - ref[:, 0])) < 1e-3
    assert np.max(angle_diff(az1, ref[:, 1])) < 1e-6
    assert np.max(angle_diff(az2, ref[:, 2])) < 1e-6


def test_inverse_known_values_and_special_cases() -> None:
    # a minute of latitude at the equator (1842.9 m, not the 1852 m of the mean nautical mile),
    # a quarter of the meridian, a quarter of the equator
    assert float(inverse(0, 0, 1 / 60, 0)[0]) == pytest.approx(1842.9046, abs=1e-4)
    assert float(inverse(0, 0, 90, 0)[0]) == pytest.approx(10001965.729, abs=1e-3)
    d, az1, az2 = inverse(0, 0, 0, 90)
    assert float(d) == pytest.approx(10018754.171, abs=1e-3)
    assert float(az1) == pytest.approx(90.0) and float(az2) == pytest.approx(90.0)
    # coincident points: zero distance, GeographicLib's azimuth convention
    d, az1, az2 = inverse(50.0, -4.0, 50.0, -4.0)
    assert float(d) == 0.0 and float(az1) == 180.0 and float(az2) == 180.0
    # across the antimeridian the short way round
    assert float(inverse(0, 179.5, 0, -179.5)[0]) == pytest.approx(gl_inverse(0, 179.5, 0, -179.5)[0], abs=1e-6)
    # pole to pole, exactly antipodal, equatorial antipodes: GeographicLib's answer
    for pair in [(90, 10, -90, 50), (30, 20, -30, -160), (0, 0, 0, 180), (0, 0, 0, 179.8)]:
        d, az1, _ = inverse(*pair)
        d_gl, az1_gl, _ = gl_inverse(*pair)
        assert float(d) == pytest.approx(d_gl, abs=1e-6)
        assert float(angle_diff(az1, az1_gl)) < 1e-9


def test_inverse_broadcasts_and_keeps_shapes() -> None:
    d, az1, az2 = inverse(50.0, -4.0, 50.1, -4.0)
    assert d.shape == az1.shape == az2.shape == ()
    lat2 = np.array([[50.1, 50.2, 50.3], [49.9, 49.8, 49.7]])
    d, az1, _ = inverse(50.0, -4.0, lat2, -4.0)
    assert d.shape == (2, 3) and az1.shape == (2, 3)
    assert np.all(np.diff(d[0]) > 0)
    np.testing.assert_allclose(az1[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(az1[1], 180.0, atol=1e-12)
    assert inverse([], [], [], [])[0].shape == (0,)


@pytest.mark.parametrize(
    ("lat1", "lon1", "rule"),
    [(float("nan"), 0.0, "finite"), (0.0, float("inf"), "finite"), (90.5, 0.0, "range")],
)
def test_inverse_rejects_bad_coordinates(lat1: float, lon1: float, rule: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        inverse(lat1, lon1, 0.0, 0.0)
    assert err.value.details["rule"] == rule
    assert err.value.code == "VALIDATION_FAILED"


def test_longitudes_outside_180_wrap() -> None:
    assert float(inverse(10, 350, 10, -5)[0]) == pytest.approx(gl_inverse(10, -10, 10, -5)[0], abs=1e-6)


# --- direct ------------------------------------------------------------------------------------


@settings(max_examples=1500, deadline=None)
@given(lats, lons, st.floats(-360, 360, allow_nan=False), st.floats(0, 2.0e7, allow_nan=False))
def test_direct_matches_geographiclib(lat1: float, lon1: float, azi: float, s: float) -> None:
    lat2, lon2, azi2 = direct(lat1, lon1, azi, s)
    ref = GEOD.Direct(lat1, lon1, azi, s)
    miss = gl_inverse(float(lat2), float(lon2), ref["lat2"], ref["lon2"])[0]
    assert miss <= 1e-3
    assert -180.0 <= float(lon2) <= 180.0
    if abs(lat1) < 90 and abs(ref["lat2"]) < 89.9999:
        assert angle_diff(azi2, ref["azi2"] % 360.0) <= 1e-6


@settings(max_examples=1000, deadline=None)
@given(point_pairs())
def test_direct_inverts_inverse(pair: tuple[float, float, float, float]) -> None:
    lat1, lon1, lat2, lon2 = pair
    # Within a hair of a pole the direction of arrival is ill-conditioned: compare away from it.
    assume(abs(lat1) < 89.9999 and abs(lat2) < 89.9999 and azimuth_is_unique(*pair))
    d, az1, az2 = inverse(*pair)
    # Nearly antipodal, a tiny error in the azimuth moves the end point a long way: skip.
    assume(float(d) < 1.99e7)
    y, x, a2 = direct(lat1, lon1, az1, d)
    assert gl_inverse(float(y), float(x), lat2, lon2)[0] <= 1e-3
    if float(d) > 1.0:
        assert angle_diff(a2, az2) <= 1e-5


def test_direct_broadcasts() -> None:
    lat2, lon2, _ = direct(50.0, -4.0, np.array([0.0, 90.0, 180.0, 270.0]), 1852.0)
    assert lat2.shape == (4,)
    assert lat2[0] > 50.0 and lat2[2] < 50.0 and lon2[1] > -4.0 and lon2[3] < -4.0
    d = inverse(50.0, -4.0, lat2, lon2)[0]
    np.testing.assert_allclose(d, 1852.0, atol=1e-6)


# --- tracks -------------------------------------------------------------------------------------


def large_sample_tracks() -> list[dict]:
    plot = json.loads((DATA / "plots" / "large-sample.plot.json").read_text(encoding="utf-8"))
    return [f for f in plot["features"] if feature_kind(f) == "track"]


def test_path_length_of_real_tracks_matches_a_geographiclib_loop() -> None:
    tracks = large_sample_tracks()
    assert len(tracks) == 3
    for feature in tracks:
        track = track_data(feature)
        ours = leg_distances(track.lat, track.lon)
        ref = np.array(
            [
                GEOD.Inverse(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])["s12"]
                for i in range(len(track) - 1)
            ]
        )
        assert ours.shape == (len(track) - 1,)
        assert np.max(np.abs(ours - ref)) < 1e-6
        assert path_length(track.lat, track.lon) == pytest.approx(float(ref.sum()), abs=1e-5)
        assert leg_azimuths(track.lat, track.lon) == pytest.approx(
            [
                GEOD.Inverse(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])["azi1"] % 360
                for i in range(len(track) - 1)
            ],
            abs=1e-6,
        )


def test_leg_distances_of_a_long_random_walk_agree_with_inverse() -> None:
    rng = np.random.default_rng(7)
    n = 200_001  # several chunks, with a ragged last one
    lat = np.clip(60 + np.cumsum(rng.normal(0, 0.01, n)), -90, 90)
    lon = ((np.cumsum(rng.normal(0, 0.01, n)) + 180) % 360) - 180  # crosses the antimeridian
    legs = leg_distances(lat, lon)
    np.testing.assert_allclose(legs, inverse(lat[:-1], lon[:-1], lat[1:], lon[1:])[0], rtol=0, atol=1e-6)
    sample = rng.choice(n - 1, 500, replace=False)
    ref = [gl_inverse(lat[i], lon[i], lat[i + 1], lon[i + 1])[0] for i in sample]
    np.testing.assert_allclose(legs[sample], ref, rtol=0, atol=1e-6)


def test_leg_helpers_on_short_input_and_zero_legs() -> None:
    assert leg_distances([50.0], [-4.0]).shape == (0,)
    assert path_length([], []) == 0.0
    az = leg_azimuths([50.0, 50.0, 50.1], [-4.0, -4.0, -4.0])
    assert np.isnan(az[0]) and az[1] == pytest.approx(0.0)
    with pytest.raises(ValidationFailed):
        leg_distances([50.0, 51.0], [-4.0])


# --- polygons ------------------------------------------------------------------------------------


def gl_polygon(lat: np.ndarray, lon: np.ndarray) -> tuple[float, float]:
    poly = GEOD.Polygon()
    for y, x in zip(lat, lon, strict=True):
        poly.AddPoint(float(y), float(x))
    _, perimeter, area = poly.Compute(False, True)
    return abs(area), perimeter


def test_polygon_area_and_perimeter_of_real_zones() -> None:
    plot = json.loads((DATA / "plots" / "large-sample.plot.json").read_text(encoding="utf-8"))
    zones = [f for f in plot["features"] if feature_kind(f) == "zone"]
    assert len(zones) == 6
    for zone in zones:
        ring = zone_rings(zone)[0]
        area, perimeter = polygon_area_perimeter(ring[:, 1], ring[:, 0])
        ref_area, ref_perimeter = gl_polygon(ring[:-1, 1], ring[:-1, 0])
        assert area == pytest.approx(ref_area, rel=1e-12)
        assert perimeter == pytest.approx(ref_perimeter, rel=1e-12)
        # the other winding order and the ring left open give the same figures
        assert polygon_area_perimeter(ring[::-1, 1], ring[::-1, 0]) == pytest.approx((area, perimeter))
        assert polygon_area_perimeter(ring[:-1, 1], ring[:-1, 0]) == pytest.approx((area, perimeter))


def test_polygon_needs_three_vertices() -> None:
    with pytest.raises(ValidationFailed) as err:
        polygon_area_perimeter([0.0, 1.0, 0.0], [0.0, 1.0, 0.0])
    assert err.value.details["rule"] == "min-vertices"


# --- interpolation --------------------------------------------------------------------------------


def test_interpolate_track_hits_fixes_and_follows_the_geodesic() -> None:
    # a long ocean leg, where straight lon/lat interpolation would be kilometres off
    lat = np.array([50.0, 40.0, 40.0])
    lon = np.array([-5.0, -60.0, -60.0])
    t = np.array([0.0, 36000.0, 36000.0])  # equal consecutive times are allowed
    q = np.array([-1.0, 0.0, 9000.0, 18000.0, 36000.0, 36001.0])
    y, x = interpolate_track(t, lat, lon, q)
    assert np.isnan(y[0]) and np.isnan(x[0]) and np.isnan(y[-1])
    assert (y[1], x[1]) == (50.0, -5.0)
    assert (y[4], x[4]) == (40.0, -60.0)
    line = GEOD.InverseLine(50.0, -5.0, 40.0, -60.0)
    for k, frac in [(2, 0.25), (3, 0.5)]:
        ref = line.Position(frac * line.s13)
        assert gl_inverse(float(y[k]), float(x[k]), ref["lat2"], ref["lon2"])[0] < 1e-3


def test_interpolate_track_on_a_real_track_stays_within_half_a_metre() -> None:
    track = track_data(large_sample_tracks()[0])
    mid = (track.t[:-1] + track.t[1:]) / 2
    y, x = interpolate_track(track.t, track.lat, track.lon, mid)
    for i in range(0, len(mid), 50):
        line = GEOD.InverseLine(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])
        ref = line.Position(line.s13 / 2)
        assert gl_inverse(float(y[i]), float(x[i]), ref["lat2"], ref["lon2"])[0] < 0.5e-3


def test_interpolate_track_edge_cases() -> None:
    y, x = interpolate_track([10.0], [50.0], [-4.0], [9.0, 10.0, 11.0])
    assert np.isnan(y[0]) and (y[1], x[1]) == (50.0, -4.0) and np.isnan(y[2])
    y, _ = interpolate_track([0.0, 10.0], [50.0, 51.0], [-4.0, -4.0], np.array([[5.0]]))
    assert y.shape == (1, 1) and 50.49 < y[0, 0] < 50.51
    with pytest.raises(ValidationFailed) as err:
        interpolate_track([0.0, 10.0, 5.0], [50.0, 51.0, 52.0], [0.0, 0.0, 0.0], [1.0])
    assert err.value.details["rule"] == "monotonic"
    with pytest.raises(ValidationFailed):
        interpolate_track([0.0, 10.0], [50.0, 51.0, 52.0], [0.0, 0.0, 0.0], [1.0])


# --- units ------------------------------------------------------------------------------------------


def test_distance_units() -> None:
    assert DISTANCE_UNITS == ("nm", "m", "km", "yd", "kyd", "mi")
    assert to_metres(1.0) == 1852.0
    assert to_metres(2.0, "kyd") == pytest.approx(1828.8)
    assert from_metres(1609.344, "mi") == pytest.approx(1.0)
    assert from_metres(0.9144, "yd") == pytest.approx(1.0)
    assert from_metres(1852.0, "NM") == pytest.approx(1.0)
    assert distance_unit("Yards") == "yd" and distance_unit(" km ") == "km"
    arr = from_metres(np.array([1000.0, 2000.0]), "km")
    np.testing.assert_allclose(arr, [1.0, 2.0])
    for unit in DISTANCE_UNITS:
        assert from_metres(to_metres(3.5, unit), unit) == pytest.approx(3.5)


def test_speed_units() -> None:
    assert SPEED_UNITS == ("kn", "m/s", "km/h", "mph")
    assert to_mps(1.0) == pytest.approx(0.514444, abs=1e-6)
    assert from_mps(to_mps(10.0, "knots"), "km/h") == pytest.approx(18.52)
    assert from_mps(1609.344 / 3600, "mph") == pytest.approx(1.0)
    assert speed_unit("KTS") == "kn"


def test_unknown_units_name_the_allowed_values() -> None:
    with pytest.raises(ValidationFailed) as err:
        to_metres(1.0, "furlong")
    assert "nm, m, km, yd, kyd, mi" in err.value.message
    assert err.value.details["allowed"] == list(DISTANCE_UNITS)
    with pytest.raises(ValidationFailed) as err:
        speed_unit(None, field="speed_unit")
    assert err.value.details["field"] == "speed_unit"
