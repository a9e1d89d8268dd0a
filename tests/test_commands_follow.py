"""A plot's time window and viewport follow the features added to it; references inside a
features payload; every refusal of a command says the payload that command takes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from debrief_calc.errors import InvalidCommand, ValidationFailed
from debrief_calc.formats import metadata
from debrief_calc.plots.cmdcheck import ALIASES, COMMANDS, PAYLOAD_SHAPES
from debrief_calc.plots.commands import apply_command


def track(fid: str, start_hour: int, hours: int, lon0: float = -5.0, lat0: float = 50.0) -> dict[str, Any]:
    coords = [[lon0 + 0.01 * i, lat0 + 0.005 * i] for i in range(hours + 1)]
    stamps = [f"2025-03-14T{start_hour + i:02d}:00:00Z" for i in range(hours + 1)]
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {"dataType": "track", "name": fid.upper(), "timestamps": stamps},
    }


def empty() -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": []}


def add(data: dict[str, Any], *features: dict[str, Any]) -> list[str]:
    return apply_command(data, {"command": "addFeatures", "payload": list(features)}).summary


def test_a_plot_without_time_or_viewport_gets_its_tracks_period_and_bounds() -> None:
    data = empty()
    summary = add(data, track("a", 8, 3), track("b", 9, 4, lon0=-4.0))
    assert metadata.get_time_state(data) == {
        "current": "2025-03-14T13:00:00Z",  # a new plot's current time is its end: every track drawn solid
        "start": "2025-03-14T08:00:00Z",
        "end": "2025-03-14T13:00:00Z",
    }
    w, s, e, n = metadata.get_viewport(data)["bounds"]  # type: ignore[index]
    assert w < -5.0 and e > -3.96 and s < 50.0 and n > 50.02
    assert any("time window set" in line for line in summary)
    assert any("viewport set" in line for line in summary)


def test_a_window_that_showed_everything_widens_and_keeps_current() -> None:
    data = empty()
    add(data, track("a", 8, 3))
    apply_command(
        data,
        {
            "command": "setTimeState",
            "payload": {
                "current": "2025-03-14T09:30:00Z",
                "start": "2025-03-14T08:00:00Z",
                "end": "2025-03-14T11:00:00Z",
            },
        },
    )
    summary = add(data, track("b", 10, 6, lon0=-3.0, lat0=51.0))
    assert metadata.get_time_state(data) == {
        "current": "2025-03-14T09:30:00Z",
        "start": "2025-03-14T08:00:00Z",
        "end": "2025-03-14T16:00:00Z",
    }
    assert any("widened" in line for line in summary)
    _w, _s, e, n = metadata.get_viewport(data)["bounds"]  # type: ignore[index]
    assert e > -2.94 and n > 51.03  # the new track is in view


def test_an_analysts_narrower_window_and_zoom_are_kept() -> None:
    data = empty()
    add(data, track("a", 8, 3))
    narrow = {"current": "2025-03-14T09:00:00Z", "start": "2025-03-14T08:30:00Z", "end": "2025-03-14T09:30:00Z"}
    apply_command(
        data,
        [
            {"command": "setTimeState", "payload": narrow},
            {"command": "setViewport", "payload": {"bounds": [-5.0, 50.0, -4.99, 50.01]}},
        ],
    )
    before = copy.deepcopy(data)
    add(data, track("b", 10, 6, lon0=-3.0))
    assert metadata.get_time_state(data) == metadata.get_time_state(before) == narrow
    assert metadata.get_viewport(data) == metadata.get_viewport(before)


def test_an_explicit_time_or_viewport_in_the_same_command_wins() -> None:
    data = empty()
    window = {"current": "2025-03-14T08:00:00Z", "start": "2025-03-14T08:00:00Z", "end": "2025-03-14T08:30:00Z"}
    apply_command(
        data,
        [
            {"command": "addFeatures", "payload": [track("a", 8, 3)]},
            {"command": "setTimeState", "payload": window},
            {"command": "setViewport", "payload": {"bounds": [0, 0, 1, 1]}},
        ],
    )
    assert metadata.get_time_state(data) == window
    assert metadata.get_viewport(data) == {"bounds": [0.0, 0.0, 1.0, 1.0]}


def test_untimed_features_set_a_viewport_but_no_window() -> None:
    data = empty()
    point = {
        "type": "Feature",
        "id": "p",
        "geometry": {"type": "Point", "coordinates": [1.0, 2.0]},
        "properties": {"dataType": "reference-point"},
    }
    add(data, point)
    assert metadata.get_time_state(data) is None
    assert metadata.get_viewport(data) is not None


def test_reference_items_mix_with_inline_features() -> None:
    stored = {"features": [track("a", 8, 1), track("b", 8, 1)]}
    seen: list[Any] = []

    def resolve(ref: dict[str, Any]) -> Any:
        seen.append(ref)
        return stored

    data = empty()
    out = apply_command(
        data,
        {"command": "addFeatures", "payload": [{"ref": "debrief-calc:runs/x"}, track("c", 9, 1)]},
        resolve_reference=resolve,
    )
    assert out.added_ids == ["a", "b", "c"]
    assert seen == [{"ref": "debrief-calc:runs/x"}]
    assert stored["features"][0]["id"] == "a"  # the stored value is copied, not adopted


def test_a_reference_item_without_a_resolver_is_refused() -> None:
    with pytest.raises(InvalidCommand, match="references cannot be resolved"):
        apply_command(empty(), {"command": "addFeatures", "payload": [{"ref": "debrief-calc:runs/x"}]})


@pytest.mark.parametrize("name", [c for c in COMMANDS if c != "composite"])
def test_every_refusal_gives_the_payload_the_command_takes(name: str) -> None:
    with pytest.raises((InvalidCommand, ValidationFailed)) as info:
        apply_command(empty(), {"command": name, "payload": True})
    details = info.value.details  # type: ignore[attr-defined]
    assert details["expected"] == PAYLOAD_SHAPES[name]
    assert details["command"] == name


def test_an_unknown_command_lists_every_name_alias_and_payload() -> None:
    with pytest.raises(InvalidCommand) as info:
        apply_command(empty(), {"command": "addFeature", "payload": []})
    details = info.value.details
    assert details["valid_commands"] == list(COMMANDS)
    assert details["aliases"] == ALIASES
    assert set(details["payloads"]) == set(COMMANDS)
    with pytest.raises(InvalidCommand) as missing:
        apply_command(empty(), {"command": "setSelection"})
    assert missing.value.details["expected"] == PAYLOAD_SHAPES["setSelection"]
