"""The one time module (debrief_calc.tracks.times): what a window cuts, in every form real tracks
come in, with a fix interpolated at each edge (checked against GeographicLib); bounds printed to
the millisecond and passed back lose no fix; the display rule (nearest second, halves up); what
"active at a time" means at the precision the time was asked."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.tracks.times import (
    TOLERANCE,
    Window,
    active_at,
    clock,
    cut_feature,
    cut_features,
    dtg,
    iso,
    iso_second,
    parse_iso,
    parse_window,
    saved_window,
    second,
    stamp,
)
from tests.test_paging import GEOMETRIES, T0, track


def _times(feature: dict[str, Any], form: str) -> list[float]:
    props = feature["properties"]
    if form == "timestamps":
        return [parse_iso(t) for t in props["timestamps"]]
    if form == "positions":
        return [parse_iso(p["time"]) for p in props["positions"]]
    if form == "times":
        return [t / 1000 for t in props["times"]]
    return [c[3] / 1000 for c in feature["geometry"]["coordinates"]]


def _on_the_geodesic(a: list[float], b: list[float], f: float) -> tuple[float, float]:
    """(lon, lat) ``f`` of the way from ``a`` to ``b`` along the WGS84 geodesic (GeographicLib)."""
    line = Geodesic.WGS84.InverseLine(a[1], a[0], b[1], b[0])
    at = line.Position(line.s13 * f)
    return at["lon2"], at["lat2"]


@pytest.mark.parametrize("form", ["timestamps", "coordinate", "positions", "times"])
def test_a_window_cuts_each_time_form_with_a_fix_at_each_edge(form: str) -> None:
    feature = track(100, form=form)
    original = copy.deepcopy(feature)
    start, end = T0 + 10 * 60, T0 + 19 * 60 + 30  # on fix 10; half-way from fix 19 to fix 20
    cut = cut_feature(feature, Window(start, end))
    assert cut is not None and feature == original  # the feature itself is never changed
    coords = cut["geometry"]["coordinates"]
    assert coords[:10] == feature["geometry"]["coordinates"][10:20]  # every fix inside, untouched
    assert len(coords) == 11
    times = _times(cut, form)
    assert times[0] == pytest.approx(start, abs=1e-6) and times[-1] == pytest.approx(end, abs=1e-6)
    lon, lat = _on_the_geodesic(*(feature["geometry"]["coordinates"][i] for i in (19, 20)), 0.5)
    edge = Geodesic.WGS84.Inverse(lat, lon, coords[-1][1], coords[-1][0])
    assert edge["s12"] < 0.01  # metres
    for name, value in feature["properties"].items():
        if isinstance(value, list) and len(value) == 100:
            assert len(cut["properties"][name]) == 11 and cut["properties"][name][:10] == value[10:20], name
    fix = feature["geometry"]["coordinates"]
    assert cut["properties"]["window_edges"] == {
        "before": [fix[9][0], fix[9][1], T0 + 9 * 60],
        "after": [fix[20][0], fix[20][1], T0 + 20 * 60],
        "interpolated": [False, True],
    }
    assert cut_feature(feature, Window(None, T0 - 1)) is None
    assert cut_feature(feature, Window(T0 + 99 * 60 + 1, None)) is None
    assert cut_feature(feature, Window(None, None)) == feature
    assert cut_feature(feature, Window(T0 - 60, T0 + 200 * 60)) == feature  # all of it: no edge made
    tail = cut_feature(feature, Window(T0 + 95 * 60, None))
    assert tail is not None and len(tail["geometry"]["coordinates"]) == 5
    assert json.dumps(cut)


def test_a_time_printed_to_the_millisecond_and_passed_back_keeps_its_fix() -> None:
    """The trial's case: a fix stored at 16:16:53.661999 is printed 16:16:53.662Z; passed back as
    time_start (or time_end) it means that instant, and the fix is kept as it is, with no edge."""
    feature = track(5)
    stamps = feature["properties"]["timestamps"]
    stamps[:] = [f"2024-11-14T16:{16 + i:02d}:53.661999Z" for i in range(5)]
    printed = iso(parse_iso(stamps[0]))
    assert printed == "2024-11-14T16:16:53.662Z"
    window = parse_window(printed, iso(parse_iso(stamps[-1])))
    assert window is not None and window.contains(parse_iso(stamps[0])) and window.contains(parse_iso(stamps[-1]))
    assert cut_feature(feature, window) == feature
    later = parse_window(iso(parse_iso(stamps[1])), None)
    assert later is not None
    kept = cut_feature(feature, later)
    assert kept is not None and kept["properties"]["timestamps"] == stamps[1:]  # no edge 0.001 ms before it
    assert TOLERANCE < 0.001


def test_a_multilinestring_is_cut_line_by_line_never_across_a_gap() -> None:
    times = [T0 + i * 60 for i in (0, 1, 2, 10, 11, 12)]
    lines = [[[0.0, 50.0], [0.01, 50.0], [0.02, 50.0]], [[0.1, 50.0], [0.11, 50.0], [0.12, 50.0]]]
    feature = {
        "type": "Feature",
        "id": "gappy",
        "geometry": {"type": "MultiLineString", "coordinates": lines},
        "properties": {"kind": "track", "timestamps": [iso(t) for t in times], "speeds": [1, 2, 3, 4, 5, 6]},
    }
    cut = cut_feature(feature, Window(T0 + 90, T0 + 630))  # inside the first line's 2nd leg, the 2nd line's 1st
    assert cut is not None
    first, second_line = cut["geometry"]["coordinates"]
    assert [p[0] for p in first] == pytest.approx([0.015, 0.02], abs=1e-6)
    assert [p[0] for p in second_line] == pytest.approx([0.1, 0.105], abs=1e-6)
    assert cut["properties"]["timestamps"] == [iso(T0 + 90), iso(T0 + 120), iso(T0 + 600), iso(T0 + 630)]
    assert cut["properties"]["speeds"] == pytest.approx([2.5, 3, 4, 4.5])
    gap = cut_feature(feature, Window(T0 + 300, T0 + 400))  # between the lines: nothing is made up there
    assert gap is None


def test_other_features_are_kept_while_active_in_the_window() -> None:
    point = {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [0, 0]},
        "properties": {"dataType": "reference-point", "time": iso(T0), "timeEnd": iso(T0 + 600)},
    }
    assert cut_feature(point, Window(T0 + 300, T0 + 900)) == point
    assert cut_feature(point, Window(T0 + 601, None)) is None
    zone = {"type": "Feature", "geometry": GEOMETRIES["Polygon"], "properties": {"kind": "zone"}}
    assert cut_feature(zone, Window(T0, T0 + 1)) == zone  # timeless: always in the window
    starts = {**zone, "properties": {"kind": "zone", "time": iso(T0)}}  # from then on, not an instant
    assert cut_feature(starts, Window(T0 + 86_400, T0 + 90_000)) == starts
    assert cut_feature(starts, Window(None, T0 - 1)) is None
    ends = {**zone, "properties": {"kind": "zone", "timeEnd": iso(T0)}}
    assert (
        cut_feature(ends, Window(T0 - 86_400, T0 - 80_000)) == ends and cut_feature(ends, Window(T0 + 1, None)) is None
    )
    timeless = track(5, form="none")
    assert cut_feature(timeless, Window(T0, T0 + 1)) == timeless
    broken = track(5)
    broken["properties"]["timestamps"][2] = "yesterday"
    with pytest.raises(ValidationFailed) as info:
        cut_feature(broken, Window(T0, T0 + 60))
    assert info.value.details["field"].startswith("properties.timestamps")
    kept, left_out = cut_features([point, track(5, fid="late")], Window(T0 + 601, None), where="given", require=False)
    assert kept == [] and left_out == ["#0", "late"]
    with pytest.raises(InvalidContext) as refused:
        cut_features([point], Window(T0 + 601, None), where="given", field="features[0].time_start")
    assert refused.value.details["field"] == "features[0].time_start"


def test_the_display_rule_is_the_nearest_second_halves_up() -> None:
    t = parse_iso("2024-11-14T10:45:08.902Z")
    assert second(t) == parse_iso("2024-11-14T10:45:09Z")
    assert iso_second(t) == "2024-11-14T10:45:09Z" and stamp(t) == "2024-11-14 10:45:09" and clock(t) == "10:45:09"
    assert iso(t) == "2024-11-14T10:45:08.902Z"  # an answer prints the instant, to the millisecond
    assert second(parse_iso("2024-11-14T10:45:08.5Z")) == parse_iso("2024-11-14T10:45:09Z")
    assert clock(parse_iso("2024-11-14T10:42:30.003Z")) == "10:42:30"  # no millisecond artefact
    assert dtg(parse_iso("2024-11-14T10:44:59.6Z")) == "141045Z"  # its clock reads 10:45:00
    assert clock(parse_iso("2024-11-14T10:44:59.6Z"), 60) == "10:45"
    assert clock(parse_iso("2024-11-15T00:00:00Z"), 3600) == "15/00:00"


def test_active_at_a_time_is_read_at_the_precision_asked() -> None:
    """A narrative entry logged at 10:45:08.902 reads 10:45:09: shown at 10:45:09 (the instants that
    read as it), not at 10:45:08; asked to the millisecond, that millisecond."""
    at = parse_iso("2024-11-14T10:45:08.902Z")
    event = (at, at)
    assert active_at(event, parse_iso("2024-11-14T10:45:09Z"))
    assert not active_at(event, parse_iso("2024-11-14T10:45:08Z"))
    assert active_at(event, parse_iso("2024-11-14T10:45:08.902Z"))
    assert not active_at(event, parse_iso("2024-11-14T10:45:08.900Z"))
    assert active_at(None, at) and active_at(event, None)


def test_every_answer_states_its_window_in_one_shape() -> None:
    window = parse_window("1995-12-12T10:00:00Z", None)
    assert window is not None and window.answer() == {"start": "1995-12-12T10:00:00Z", "end": None, "source": "asked"}
    saved = saved_window(
        {"current": "1995-12-12T10:30:00Z", "start": "1995-12-12T10:00:00Z", "end": "1995-12-12T11:00:00Z"}
    )
    assert saved is not None and saved.answer(left_out=["x"]) == {
        "start": "1995-12-12T10:00:00Z",
        "end": "1995-12-12T11:00:00Z",
        "source": "plot",
        "left_out": ["x"],
    }
    assert saved_window({"start": "never"}) is None and saved_window(None) is None
    with pytest.raises(ValidationFailed) as info:
        parse_window("1995-12-12T11:00:00Z", "1995-12-12T10:00:00Z", prefix="features[1].")
    assert info.value.details == {"field": "features[1].time_end", "rule": "order"}


def test_a_list_of_empty_times_is_refused_naming_the_field() -> None:
    """Found by hypothesis (tests/test_analysis_executor.py): timestamps of empty strings are a
    ValidationFailed naming the field, not an IndexError."""
    from debrief_calc.tracks.times import parse_times

    for values in ([""], ["", ""]):
        with pytest.raises(ValidationFailed) as info:
            parse_times(values, field="properties.timestamps")
        assert info.value.details["field"] == "properties.timestamps" and info.value.details["index"] == 0
