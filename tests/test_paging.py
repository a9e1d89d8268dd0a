"""The pager: whole features while they fit, parts of a big one's points (or items) beyond,
per-point arrays sliced alike, exact round trips for every geometry type (time windows:
tests/test_times.py)."""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from debrief_calc.tracks.features import iso
from debrief_calc.tracks.paging import (
    Position,
    compact_size,
    join_parts,
    page_features,
    point_count,
    slice_points,
)

T0 = 1_700_000_000.0


def track(n: int, *, fid: str = "t", form: str = "timestamps", step: float = 60.0) -> dict[str, Any]:
    """A track of ``n`` fixes ``step`` seconds apart, its times in one of the four real forms."""
    coords: list[list[float]] = [[-5.0 + i * 1e-3, 50.0 + i * 7e-4] for i in range(n)]
    props: dict[str, Any] = {"kind": "track", "name": fid.upper(), "stroke": "#ff0000", "bbox": [-5, 50, -4, 51]}
    times = [T0 + i * step for i in range(n)]
    if form == "timestamps":
        props["timestamps"] = [iso(t) for t in times]
        props["speeds"] = [10.0 + (i % 7) for i in range(n)]
    elif form == "coordinate":
        coords = [[x, y, 0, int(t * 1000)] for (x, y), t in zip(coords, times, strict=True)]
    elif form == "positions":
        props["positions"] = [
            {"time": iso(t), "coordinates": c, "course": 90.0, "speed": 5.0} for t, c in zip(times, coords, strict=True)
        ]
    elif form == "times":
        props["times"] = [int(t * 1000) for t in times]
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": props,
    }


def read_all(features: Sequence[Mapping[str, Any]], budget: int, limit: int = 1000) -> list[list[dict[str, Any]]]:
    """Every page, from the start; each within the budget unless it is a lone part of one point."""
    pages: list[list[dict[str, Any]]] = []
    pos: Position | None = (0, 0)
    while pos is not None:
        items, following = page_features(features, pos, budget=budget, limit=limit)
        assert items, "a page always makes progress"
        assert len(items) <= limit
        assert compact_size(items) <= budget or (len(items) == 1 and _one_step(items[0]))
        assert following is None or following > pos
        pages.append(items)
        pos = following
    return pages


def _one_step(item: Mapping[str, Any]) -> bool:
    part = item.get("part")
    if not isinstance(part, Mapping):
        return True  # a feature that cannot be split
    a, b = part.get("points", part.get("items"))
    return bool(b - a == 1)


def regroup(pages: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The features back from the pages: consecutive parts of one feature joined."""
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    for item in (i for page in pages for i in page):
        if "part" not in item:
            out.append(item)
            continue
        run.append(item)
        _, b = item["part"].get("points", item["part"].get("items"))
        if b == item["part"]["of"]:
            out.append(join_parts(run))
            run = []
    assert not run, "a feature's parts stopped before its last point"
    return out


def check_parts(parts: list[dict[str, Any]]) -> None:
    """Consecutive, covering, and nothing but the geometry and the named arrays changed."""
    key = "points" if "points" in parts[0]["part"] else "items"
    assert parts[0]["part"][key][0] == 0 and parts[-1]["part"][key][1] == parts[-1]["part"]["of"]
    for prev, nxt in itertools.pairwise(parts):
        assert prev["part"][key][1] == nxt["part"][key][0]


# -- geometries ----------------------------------------------------------------------------------------


def ring(n: int, x0: float) -> list[list[float]]:
    pts = [[x0 + i * 0.01, 10.0 + (i % 3) * 0.01] for i in range(n - 1)]
    return [*pts, pts[0]]


GEOMETRIES: dict[str, dict[str, Any]] = {
    "LineString": {"type": "LineString", "coordinates": [[i * 0.01, i * 0.02] for i in range(300)]},
    "MultiPoint": {"type": "MultiPoint", "coordinates": [[i * 0.01, -i * 0.02] for i in range(300)]},
    "MultiLineString": {
        "type": "MultiLineString",
        "coordinates": [
            [[i * 0.01, 1.0] for i in range(120)],
            [],
            [[i * 0.01, 2.0] for i in range(7)],
            [[i * 0.01, 3.0] for i in range(150)],
            [],
        ],
    },
    "Polygon": {"type": "Polygon", "coordinates": [ring(200, 0.0), ring(40, 0.5), ring(90, 0.7)]},
    "MultiPolygon": {
        "type": "MultiPolygon",
        "coordinates": [[ring(150, 0.0), ring(30, 0.2)], [], [ring(5, 1.0)], [ring(120, 2.0), [], ring(60, 2.5)]],
    },
}


@pytest.mark.parametrize("gtype", list(GEOMETRIES))
@pytest.mark.parametrize("budget", [300, 900, 4000])
def test_every_geometry_round_trips_through_parts(gtype: str, budget: int) -> None:
    geometry = GEOMETRIES[gtype]
    n = point_count({"geometry": geometry})
    feature = {
        "type": "Feature",
        "id": gtype,
        "geometry": geometry,
        "properties": {"name": gtype, "labels": [f"p{i}" for i in range(n)], "colour": "red"},
        "bbox": [0, 0, 1, 1],  # a foreign member, kept in every part
    }
    original = copy.deepcopy(feature)
    pages = read_all([feature], budget)
    parts = [item for page in pages for item in page]
    assert len(parts) > 1 and all(p["part"]["of"] == n for p in parts)
    check_parts(parts)
    for part in parts:
        a, b = part["part"]["points"]
        assert part["properties"]["labels"] == [f"p{i}" for i in range(a, b)]
        assert part["part"]["arrays"] == ["labels"]
        assert part["bbox"] == [0, 0, 1, 1] and part["properties"]["colour"] == "red"
        assert point_count(part) == b - a
        if gtype in ("LineString", "MultiPoint"):
            assert "first" not in part["part"]
        else:
            assert "first" in part["part"]
    assert join_parts(parts) == original
    assert feature == original  # the pager never changes what it is given


def test_nested_parts_keep_the_structure_of_what_remains() -> None:
    mls = {"type": "Feature", "geometry": GEOMETRIES["MultiLineString"], "properties": {}}
    part = slice_points(mls, 118, 124)  # the end of line 0, empty line 1, the start of line 2
    assert part["geometry"]["coordinates"] == [
        [[1.18, 1.0], [1.19, 1.0]],
        [],
        [[0.0, 2.0], [0.01, 2.0], [0.02, 2.0], [0.03, 2.0]],
    ]
    mpoly = {"type": "Feature", "geometry": GEOMETRIES["MultiPolygon"], "properties": {}}
    tail = slice_points(mpoly, 178, 183)  # the last 2 of polygon 0's hole, then polygon 1 (empty) and 2
    assert [len(r) for p in tail["geometry"]["coordinates"] for r in p] == [2, 3]
    assert tail["geometry"]["coordinates"][1] == []


def test_point_is_never_split_and_counts() -> None:
    point = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [1.0, 2.0]}, "properties": {}}
    assert point_count(point) == 1 and slice_points(point, 0, 0) == point
    assert point_count({"type": "Feature", "geometry": None}) == 0
    collection = {
        "type": "GeometryCollection",
        "geometries": [GEOMETRIES["LineString"], {"type": "Point", "coordinates": [0, 0]}],
    }
    assert point_count({"geometry": collection}) == 301
    assert point_count({"geometry": {"type": "Polygon", "coordinates": [[]]}}) == 0


def test_a_point_result_over_the_budget_comes_in_parts_of_its_longest_list() -> None:
    legs = [{"from": iso(T0 + i), "to": iso(T0 + i + 1), "distance": i * 1.5, "speed_kn": 10.0} for i in range(400)]
    result = {
        "type": "Feature",
        "id": "stats",
        "geometry": {"type": "Point", "coordinates": [1.0, 2.0]},
        "properties": {"kind": "analysis-result", "statistics": {"mean_speed_kn": 10.0, "segments": legs}},
    }
    original = copy.deepcopy(result)
    parts = [item for page in read_all([result], 5_000) for item in page]
    assert len(parts) > 3
    check_parts(parts)
    assert parts[0]["part"]["at"] == ["properties", "statistics", "segments"]
    assert all(p["properties"]["statistics"]["mean_speed_kn"] == 10.0 for p in parts)
    assert join_parts(parts) == original and result == original


def test_columns_beside_a_short_geometry_are_cut_by_rows() -> None:
    """range-bearing's shape: a two-point line of sight and properties.series, columns of one
    length. Cutting the two points would leave every page over the budget, and cutting one
    column would leave the others: the rows of all of them are cut alike."""
    n = 400
    columns = ["time", "range", "bearing", "relative_bearing", "atb", "bearing_rate"]
    series: dict[str, Any] = {"time": [iso(T0 + 60 * i) for i in range(n)]}
    series |= {name: [round(i * 1.2345 + k, 4) for i in range(n)] for k, name in enumerate(columns[1:])}
    result = {
        "type": "Feature",
        "id": "rb",
        "geometry": {"type": "LineString", "coordinates": [[-21.7, 22.18], [-21.6, 21.9]]},
        "properties": {"kind": "analysis-result", "sample_count": n, "cpa_range": 0.06, "series": series},
    }
    original = copy.deepcopy(result)
    budget = 5_000
    pages = read_all([result], budget)
    parts = [item for page in pages for item in page]
    assert len(parts) > 3 and all(compact_size(page) <= budget for page in pages)
    check_parts(parts)
    for part in parts:
        a, b = part["part"]["items"]
        assert part["part"]["at"] == ["properties", "series"] and part["part"]["arrays"] == columns
        assert all(part["properties"]["series"][c] == series[c][a:b] for c in columns)
        assert part["geometry"] == result["geometry"] and part["properties"]["cpa_range"] == 0.06
    assert join_parts(parts) == original and result == original
    # a long track is still cut by its points: what is left without them is small
    big = track(2_000)
    assert "points" in page_features([big], (0, 0), budget=budget, limit=10)[0][0]["part"]


def test_per_point_arrays_are_sliced_alike_and_other_lists_kept() -> None:
    feature = track(500)
    feature["properties"]["positions"] = [{"time": t, "speed": 3.0} for t in feature["properties"]["timestamps"]]
    parts = [item for page in read_all([feature], 3_000) for item in page]
    for part in parts:
        a, b = part["part"]["points"]
        props = part["properties"]
        assert set(part["part"]["arrays"]) == {"timestamps", "speeds", "positions"}
        assert props["timestamps"] == feature["properties"]["timestamps"][a:b]
        assert props["speeds"] == feature["properties"]["speeds"][a:b]
        assert [p["time"] for p in props["positions"]] == props["timestamps"]
        assert props["bbox"] == [-5, 50, -4, 51] and props["name"] == "T"
        assert set(part) == {"type", "id", "geometry", "properties", "part"}
    assert join_parts(parts) == feature


def test_whole_features_first_and_no_feature_left_out() -> None:
    small = [track(5, fid=f"s{i}") for i in range(6)]
    medium = track(40, fid="medium")  # fits a page of its own: never split
    big = track(900, fid="big")
    features = [small[0], medium, small[1], big, *small[2:]]
    budget = compact_size([medium]) + 200
    pages = read_all(features, budget)
    items = [i for page in pages for i in page]
    assert [i["id"] for i in items if "part" not in i] == ["s0", "medium", "s1", "s2", "s3", "s4", "s5"]
    assert {i["id"] for i in items if "part" in i} == {"big"}
    assert regroup(pages) == features
    # a limit of two items a page
    assert regroup(read_all(features, budget, limit=2)) == features


def test_start_mid_feature_and_past_the_end() -> None:
    feature = track(1000)
    items, following = page_features([feature], (0, 400), budget=4_000, limit=10)
    assert items[0]["part"]["points"][0] == 400 and following is not None and following[1] > 400
    items, following = page_features([feature], (1, 0), budget=4_000, limit=10)
    assert items == [] and following is None
    with pytest.raises(ValueError, match="negative"):
        page_features([feature], (0, -1), budget=4_000, limit=10)


def test_a_100000_point_track_in_pages_exactly_and_quickly() -> None:
    feature = track(100_000, step=1.0)
    started = time.perf_counter()
    pages = read_all([feature], 18_500)
    elapsed = time.perf_counter() - started
    parts = [item for page in pages for item in page]
    sizes = [compact_size(page) for page in pages]
    assert all(s <= 18_500 for s in sizes) and min(sizes[:-1]) > 18_500 * 0.95  # pages are full
    assert join_parts(parts) == feature
    print(f"100,000 points: {len(pages)} pages, {elapsed * 1000 / len(pages):.2f} ms a page, {elapsed * 1000:.0f} ms")
