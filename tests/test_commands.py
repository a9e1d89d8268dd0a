"""DebriefCommand: every command type, the aliases, composites, references, all or nothing."""

from __future__ import annotations

import base64
import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from debrief_calc.errors import FeatureNotFound, InvalidCommand, ValidationFailed
from debrief_calc.formats.plotfile import PlotCache, PlotDoc, modify_plot
from debrief_calc.plots.commands import ALIASES, COMMANDS, CommandOutcome, apply_command, apply_to_plot, merge_patch

DATA = Path(__file__).resolve().parent / "data" / "plots"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@pytest.fixture
def large() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "large-sample.plot.json").read_bytes())
    return data


@pytest.fixture
def sample() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "sample.plot.json").read_bytes())
    return data


def ids(data: dict[str, Any]) -> list[str]:
    return [str(f.get("id")) for f in data["features"]]


def point(fid: str | int | None = None, lon: float = 1.0) -> dict[str, Any]:
    f: dict[str, Any] = {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [lon, 50.0]},
        "properties": {"dataType": "reference-point", "name": f"P{fid}"},
    }
    if fid is not None:
        f["id"] = fid
    return f


def unchanged_after(data: dict[str, Any], command: Any, error: type[Exception], **kw: Any) -> Exception:
    before = copy.deepcopy(data)
    features_list = data["features"]
    with pytest.raises(error) as info:
        apply_command(data, command, **kw)
    assert data == before
    assert data["features"] is features_list
    return info.value


# ---------------------------------------------------------------- features


def test_add_features_generates_missing_ids(sample: dict[str, Any]) -> None:
    out = apply_command(sample, {"command": "addFeatures", "payload": [point(), point("mine"), point()]})
    assert out.changed
    assert out.added_ids[1] == "mine"
    assert len(set(out.added_ids)) == 3
    assert ids(sample)[-3:] == out.added_ids
    assert all(i.startswith("feature-") for i in (out.added_ids[0], out.added_ids[2]))
    assert list(sample["features"][-1])[:2] == ["type", "id"]  # the id sits after "type"
    assert out.summary == ["added 3 features"]


@pytest.mark.parametrize("shape", ["feature", "collection", "object"])
def test_add_features_accepts_the_usual_payload_shapes(sample: dict[str, Any], shape: str) -> None:
    payload: Any = {
        "feature": point("x"),
        "collection": {"type": "FeatureCollection", "features": [point("x")]},
        "object": {"features": [point("x")]},
    }[shape]
    assert apply_command(sample, {"command": "addFeatures", "payload": payload}).added_ids == ["x"]


def test_add_features_refuses_an_existing_id(sample: dict[str, Any]) -> None:
    err = unchanged_after(
        sample,
        {"command": "addFeatures", "payload": [point("new"), point("paris_city_002")]},
        InvalidCommand,
    )
    assert "updateFeatures" in str(err)
    assert err.details["conflicting_id"] == "paris_city_002"  # type: ignore[attr-defined]
    err = unchanged_after(sample, {"command": "addFeatures", "payload": [point("d"), point("d")]}, InvalidCommand)
    assert "repeats" in str(err)


def test_generated_ids_avoid_ids_given_later_in_the_payload(sample: dict[str, Any]) -> None:
    out = apply_command(sample, {"command": "addFeatures", "payload": [point(), point("feature-8"), point()]})
    assert out.added_ids[1] == "feature-8"
    assert len(set(ids(sample))) == len(ids(sample)) == 10


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "Point"},
        {"type": "Feature", "geometry": {"type": "Circle", "coordinates": []}},
        {"type": "Feature", "geometry": {"type": "Point"}},
        {"type": "Feature", "geometry": None, "properties": []},
        {"type": "Feature", "id": True},
        "feature",
    ],
)
def test_add_features_refuses_malformed_features(sample: dict[str, Any], bad: Any) -> None:
    unchanged_after(sample, {"command": "addFeatures", "payload": [point("ok"), bad]}, InvalidCommand)


def test_update_features_replaces_in_place(large: dict[str, Any]) -> None:
    position = ids(large).index("z-3")
    new = {
        "type": "Feature",
        "id": "z-3",
        "geometry": {"type": "Point", "coordinates": [-4, 36]},
        "properties": {"name": "now a point"},
    }
    out = apply_command(large, {"command": "updateFeatures", "payload": [new]})
    assert ids(large).index("z-3") == position
    assert large["features"][position] == new
    assert out.updated_ids == ["z-3"]


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"type": "Feature", "id": "z-3", "properties": {"name": "renamed"}}, "command.payload[0].geometry"),
        (
            {"type": "Feature", "id": "z-3", "geometry": None, "properties": {"name": "x"}},
            "command.payload[0].geometry",
        ),
        (
            {"type": "Feature", "id": "z-3", "geometry": {"type": "Point", "coordinates": [0, 0]}},
            "command.payload[0].properties",
        ),
    ],
)
def test_update_refuses_a_feature_that_would_erase_the_stored_one(
    large: dict[str, Any], given: dict[str, Any], field: str
) -> None:
    """A properties-only update wiped a zone's shape and styling: it is refused, nothing changes."""
    err = unchanged_after(large, {"command": "updateFeatures", "payload": [given]}, ValidationFailed)
    assert err.details["field"] == field  # type: ignore[attr-defined]
    assert "debrief_set_properties" in str(err)


def test_merge_patch_merges_replaces_and_deletes() -> None:
    target = {"name": "SIR 1", "stroke": "#f00", "specifics": {"type": "circle", "radiusM": 5}, "visible": True}
    patch = {"name": "SIR one", "stroke": "#808080", "specifics": {"radiusM": 7}, "visible": None}
    assert merge_patch(target, patch) == {
        "name": "SIR one",
        "stroke": "#808080",
        "specifics": {"type": "circle", "radiusM": 7},
    }
    assert target["visible"] is True  # neither argument is changed
    assert merge_patch({"a": 1}, {"a": {"b": None, "c": 2}}) == {"a": {"c": 2}}


def test_update_and_delete_list_every_missing_id(large: dict[str, Any]) -> None:
    err = unchanged_after(
        large,
        {"command": "updateFeatures", "payload": [point("nope-1"), point("f-1"), point("nope-2")]},
        FeatureNotFound,
    )
    assert err.details["missing_ids"] == ["nope-1", "nope-2"]  # type: ignore[attr-defined]
    assert err.details["rpc_code"] == -32003  # type: ignore[attr-defined]
    err = unchanged_after(large, {"command": "deleteFeatures", "payload": ["f-1", "x", "y"]}, FeatureNotFound)
    assert "'x'" in str(err) and "'y'" in str(err)
    unchanged_after(large, {"command": "updateFeatures", "payload": [point()]}, InvalidCommand)


@pytest.mark.parametrize("payload", [["f-2", "z-1"], {"ids": ["f-2", "z-1"]}, {"featureIds": ["f-2", "z-1"]}])
def test_delete_features_and_the_selection(large: dict[str, Any], payload: Any) -> None:
    out = apply_command(large, {"command": "deleteFeatures", "payload": payload}, selection=["z-1", "f-1"])
    assert "f-2" not in ids(large) and "z-1" not in ids(large)
    assert len(large["features"]) == 15
    assert out.deleted_ids == ["f-2", "z-1"]
    assert out.selection == ["f-1"]


def test_delete_compares_ids_as_strings() -> None:
    data = {"type": "FeatureCollection", "features": [point(7), point("8")]}
    out = apply_command(data, {"command": "deleteFeatures", "payload": ["7", 8]}, selection=["7"])
    assert data["features"] == []
    assert out.selection == []


def test_delete_without_touching_the_selection_reports_none(large: dict[str, Any]) -> None:
    out = apply_command(large, {"command": "deleteFeatures", "payload": ["f-3"]}, selection=["f-1"])
    assert out.selection is None


def test_set_feature_collection_keeps_top_level_members_and_plot_state(large: dict[str, Any]) -> None:
    track = next(f for f in large["features"] if f["id"] == "f-1")
    payload = {"type": "FeatureCollection", "features": [track, point()], "properties": {"name": "new"}}
    out = apply_command(large, {"command": "setFeatureCollection", "payload": payload}, selection=["f-1", "z-1"])
    assert list(large) == ["type", "features", "bbox", "properties"]
    assert large["bbox"][0] == -6.831053175368908
    assert large["properties"] == {"name": "new"}
    assert ids(large)[:1] == ["f-1"]
    assert ids(large)[-2:] == ["debrief-time-metadata", "debrief-viewport-metadata"]
    assert ids(large)[1].startswith("feature-")
    assert out.selection == ["f-1"]


def test_set_feature_collection_refuses_other_types(sample: dict[str, Any]) -> None:
    unchanged_after(sample, {"command": "setFeatureCollection", "payload": {"type": "Feature"}}, InvalidCommand)
    unchanged_after(
        sample, {"command": "setFeatureCollection", "payload": {"type": "Topology", "features": []}}, InvalidCommand
    )


# ---------------------------------------------------------------- state


@pytest.mark.parametrize("name", ["setViewport", "updateViewport"])
@pytest.mark.parametrize("payload", [{"bounds": [-1, 50, 2, 52]}, [-1, 50, 2, 52]])
def test_set_viewport(sample: dict[str, Any], name: str, payload: Any) -> None:
    out = apply_command(sample, {"command": name, "payload": payload})
    vp = sample["features"][-1]
    assert vp["id"] == "debrief-viewport-metadata" and len(sample["features"]) == 7
    assert vp["geometry"]["coordinates"] == [[[-1, 50], [2, 50], [2, 52], [-1, 52], [-1, 50]]]
    assert out.changed


@pytest.mark.parametrize("bounds", [[-181, 0, 0, 1], [0, 0, 181, 1], [0, 10, 1, 5], [0, -91, 1, 5], [0, 0, 1], "x"])
def test_set_viewport_validates(sample: dict[str, Any], bounds: Any) -> None:
    unchanged_after(sample, {"command": "setViewport", "payload": {"bounds": bounds}}, ValidationFailed)


@pytest.mark.parametrize(
    "command",
    [
        {"command": "setSelection", "payload": {"selectedIds": ["f-1", "z-2", "f-1"]}},
        {"command": "highlightFeatures", "payload": {"featureIds": ["f-1", "z-2"]}},
        {"command": "setSelection", "payload": ["f-1", "z-2"]},
    ],
)
def test_set_selection_and_its_alias(large: dict[str, Any], command: dict[str, Any]) -> None:
    before = copy.deepcopy(large)
    out = apply_command(large, command)
    assert out.selection == ["f-1", "z-2"]
    assert not out.changed and large == before


def test_set_selection_of_unknown_ids(large: dict[str, Any]) -> None:
    err = unchanged_after(
        large, {"command": "setSelection", "payload": {"selectedIds": ["f-1", "ghost"]}}, FeatureNotFound
    )
    assert err.details["missing_ids"] == ["ghost"]  # type: ignore[attr-defined]


def test_set_time_state(large: dict[str, Any]) -> None:
    state = {"current": "2024-11-14T22:00:00Z", "start": "2024-11-14T21:00:00Z", "end": "2024-11-15T01:00:00.5Z"}
    position = ids(large).index("debrief-time-metadata")
    apply_command(large, {"command": "setTimeState", "payload": state})
    feature = large["features"][position]
    assert feature["geometry"] == {"type": "Polygon", "coordinates": [[]]}
    assert feature["properties"] == {"dataType": "metadata", "metadataType": "time", **state}


@pytest.mark.parametrize(
    "state",
    [
        {"current": "2024-11-14T20:00:00Z", "start": "2024-11-14T21:00:00Z", "end": "2024-11-15T01:00:00Z"},
        {"current": "2024-11-14T22:00:00Z", "start": "2024-11-14T21:00:00Z", "end": "2024-11-14T21:30:00Z"},
        {"current": "yesterday", "start": "2024-11-14T21:00:00Z", "end": "2024-11-15T01:00:00Z"},
        {"start": "2024-11-14T21:00:00Z", "end": "2024-11-15T01:00:00Z"},
    ],
)
def test_set_time_state_validates(large: dict[str, Any], state: dict[str, Any]) -> None:
    unchanged_after(large, {"command": "setTimeState", "payload": state}, ValidationFailed)


# ---------------------------------------------------------------- display


def test_display_commands_come_back_in_order(sample: dict[str, Any]) -> None:
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode()
    before = copy.deepcopy(sample)
    out = apply_command(
        sample,
        [
            {"command": "showText", "payload": "hello"},
            {"command": "logMessage", "payload": "plain"},
            {"command": "showData", "payload": {"shape": [2], "axes": ["t"], "values": [1, 2]}},
            {"command": "showImage", "payload": {"mediaType": "image/png", "data": PNG_1PX, "title": "dot"}},
            {"command": "showImage", "payload": {"mediaType": "image/svg+xml", "data": svg}},
            {
                "command": "logMessage",
                "payload": {"message": "m", "level": "warn", "timestamp": "2024-01-01T00:00:00Z"},
            },
        ],
    )
    assert [d["type"] for d in out.display] == ["text", "log", "data", "image", "image", "log"]
    assert out.display[0]["text"] == "hello"
    assert out.display[1] == {"type": "log", "message": "plain", "level": "info"}
    assert out.display[3]["title"] == "dot"
    assert out.display[5]["level"] == "warn"
    assert not out.changed and sample == before
    json.dumps(out.to_dict())


@pytest.mark.parametrize(
    "command",
    [
        {"command": "showText", "payload": 3},
        {"command": "showData", "payload": [1, 2]},
        {"command": "showImage", "payload": {"mediaType": "image/gif", "data": PNG_1PX}},
        {"command": "showImage", "payload": {"mediaType": "image/png", "data": "not base64!"}},
        {"command": "showImage", "payload": {"mediaType": "image/png", "data": base64.b64encode(b"GIF89a").decode()}},
        {"command": "showImage", "payload": {"mediaType": "image/png", "data": PNG_1PX, "title": 5}},
        {"command": "logMessage", "payload": {"message": "m", "level": "fatal"}},
        {"command": "logMessage", "payload": {"message": "m", "timestamp": "soon"}},
        {"command": "logMessage", "payload": {"level": "info"}},
    ],
)
def test_display_payloads_are_checked(sample: dict[str, Any], command: dict[str, Any]) -> None:
    unchanged_after(sample, command, InvalidCommand)


# ---------------------------------------------------------------- the tree


def test_unknown_command_lists_the_valid_names(sample: dict[str, Any]) -> None:
    err = unchanged_after(sample, {"command": "explode", "payload": {}}, InvalidCommand)
    assert err.details["valid_commands"] == list(COMMANDS)  # type: ignore[attr-defined]
    assert len(COMMANDS) == 12
    for name in (*COMMANDS, *ALIASES):
        assert name in str(err)


@pytest.mark.parametrize("command", [None, "addFeatures", {"payload": []}, {"command": "addFeatures"}, {"command": 3}])
def test_malformed_commands(sample: dict[str, Any], command: Any) -> None:
    unchanged_after(sample, command, InvalidCommand)


def nested(depth: int) -> dict[str, Any]:
    command: dict[str, Any] = {"command": "showText", "payload": "deep"}
    for _ in range(depth):
        command = {"command": "composite", "payload": [command]}
    return command


def test_composite_nesting_limit(sample: dict[str, Any]) -> None:
    assert apply_command(sample, nested(10)).display == [{"type": "text", "text": "deep"}]
    err = unchanged_after(sample, nested(11), InvalidCommand)
    assert err.details["max_depth"] == 10  # type: ignore[attr-defined]


def test_composite_steps_see_earlier_steps(sample: dict[str, Any]) -> None:
    out = apply_command(
        sample,
        {
            "command": "composite",
            "payload": [
                {"command": "addFeatures", "payload": [point("n1")]},
                {"command": "setSelection", "payload": {"selectedIds": ["n1"]}},
                {"command": "updateFeatures", "payload": [point("n1", lon=5.0)]},
                {"command": "deleteFeatures", "payload": ["n1"]},
            ],
        },
    )
    assert "n1" not in ids(sample)
    assert out.selection == []
    assert out.added_ids == out.updated_ids == out.deleted_ids == ["n1"]


def test_shape_errors_anywhere_stop_everything_before_any_step(sample: dict[str, Any]) -> None:
    err = unchanged_after(
        sample,
        [{"command": "addFeatures", "payload": [point("z")]}, {"command": "composite", "payload": [{"command": "?"}]}],
        InvalidCommand,
    )
    assert err.details["at"] == "command.payload[1].payload[0]"  # type: ignore[attr-defined]


def test_failing_third_step_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "large.plot.json"
    shutil.copyfile(DATA / "large-sample.plot.json", path)
    before = path.read_bytes()
    cache = PlotCache()
    cached = cache.get(path)
    composite = {
        "command": "composite",
        "payload": [
            {"command": "addFeatures", "payload": [point("a1")]},
            {"command": "deleteFeatures", "payload": ["f-1"]},
            {"command": "updateFeatures", "payload": [point("missing")]},
        ],
    }

    def run(doc: PlotDoc) -> CommandOutcome:
        return apply_command(doc.data, composite)

    with pytest.raises(FeatureNotFound):
        modify_plot(path, run, scratch_dir=tmp_path / "scratch", cache=cache)
    assert path.read_bytes() == before
    assert cache.get(path) is cached and "f-1" in cached.index_by_id()


def test_apply_to_plot_all_or_nothing_and_no_aliasing(tmp_path: Path) -> None:
    path = tmp_path / "large.plot.json"
    shutil.copyfile(DATA / "large-sample.plot.json", path)
    cache = PlotCache()
    cached = cache.get(path)
    snapshot = copy.deepcopy(cached.data)
    before = path.read_bytes()
    bad = [{"command": "deleteFeatures", "payload": ["f-1"]}, {"command": "setSelection", "payload": ["f-1"]}]
    with pytest.raises(FeatureNotFound):
        apply_to_plot(path, bad, scratch_dir=tmp_path / "scratch", cache=cache)
    assert path.read_bytes() == before and cache.get(path) is cached and cached.data == snapshot

    mine = point("mine")
    doc, out = apply_to_plot(
        path,
        {"command": "addFeatures", "payload": [mine]},
        scratch_dir=tmp_path / "scratch",
        cache=cache,
        selection=["f-1"],
    )
    assert out.added_ids == ["mine"] and out.selection is None
    mine["properties"]["name"] = "changed afterwards"
    assert cache.get(path) is doc
    assert doc.get_feature("mine") == point("mine")
    assert json.loads(path.read_bytes())["features"][-1] == point("mine")
    assert cached.data == snapshot


# ---------------------------------------------------------------- references


def test_references_are_resolved_before_anything_runs(sample: dict[str, Any]) -> None:
    store = {"calc/result-1": [point("from-store")], "calc/cmds": [{"command": "showText", "payload": "stored"}]}
    seen: list[Any] = []

    def resolve(ref: dict[str, Any]) -> Any:
        seen.append(ref)
        key = ref.get("ref") or ref.get("$ref") or ref.get("resultRef")
        return store[str(key)]

    out = apply_command(
        sample,
        [{"command": "addFeatures", "payload": {"ref": "calc/result-1"}}, {"$ref": "calc/cmds"}],
        resolve_reference=resolve,
    )
    assert out.added_ids == ["from-store"]
    assert out.display == [{"type": "text", "text": "stored"}]
    assert len(seen) == 2


def test_reference_without_a_resolver(sample: dict[str, Any]) -> None:
    err = unchanged_after(sample, {"command": "addFeatures", "payload": {"ref": "x"}}, InvalidCommand)
    assert "inline" in str(err)
