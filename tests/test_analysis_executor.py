"""The executor against seed 002's contract: every error code, provenance, output checks, and
that it never raises whatever it is given."""

from __future__ import annotations

import copy
import json
import logging
import math
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.executor import RunResult, run
from debrief_calc.analysis.registry import Parameter, Registry, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import PayloadTooLarge
from tests._sensors import satc_sensor, satc_track
from tests.conftest import DATA
from tests.test_analysis_support import boats, load_json, plot_tracks, props, run_err, run_ok, track_feature

FIXED = datetime(2026, 1, 15, 10, 30, tzinfo=UTC)


def zone() -> dict[str, Any]:
    z: dict[str, Any] = load_json("calc-zone-region.geojson")
    return z


def valid_call(tool: str) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Features, parameters and keyword arguments that make ``tool`` succeed."""
    b1, b2 = boats()
    calls: dict[str, tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]] = {
        "track-stats": ([b1], {}, {}),
        "track-legs": ([b1], {}, {}),
        "range-bearing": ([b1, b2], {}, {}),
        "tote": ([b1, b2], {"time": "1995-12-12T10:30:00Z"}, {}),
        "closest-approach": ([b1, b2], {}, {}),
        "close-quarters": ([b1, b2], {"threshold": 1}, {}),
        "zone-transits": ([b1, zone()], {}, {}),
        "zone-overlaps": ([b1, b2, zone()], {}, {}),
        "speed-filter": ([b1], {"threshold_kn": 10}, {}),
        "area-summary": ([zone()], {}, {}),
        "resample-track": ([b1], {"interval_s": 120}, {}),
        "delete-features": ([b1, b2], {}, {}),
        "import-rep": (
            [],
            {"text": "951212 050000.000 NELSON   @C   22 11 10.63 N 21 41 52.37 W 269.7   2.0      0\n"},
            {},
        ),
        "import-dpf": ([], {"text": (DATA / "dpf" / "compositeTrack.dpf").read_text(encoding="utf-8")}, {}),
        "bearing-residuals": ([satc_sensor(), satc_track("RedTrack.rep")], {}, {}),
        "tma-solve": ([satc_sensor(1, 11), satc_track("BlueTrack.rep")], {"max_turns": 0}, {}),
    }
    return calls[tool]


TOOLS = default_registry().names()


# --- the error codes -------------------------------------------------------------------------


def test_tool_not_found() -> None:
    error = run_err("no-such-tool", [], {})
    assert error["code"] == "TOOL_NOT_FOUND"
    assert "track-stats" in error["details"]["available"]


@pytest.mark.parametrize(
    ("tool", "count", "expected"),
    [
        ("track-stats", 0, "single"),
        ("range-bearing", 1, "multi"),
        ("import-dpf", 1, "none"),
        ("delete-features", 0, "single"),
    ],
)
def test_invalid_context_names_expected_and_received(tool: str, count: int, expected: str) -> None:
    b1, b2 = boats()
    params = valid_call(tool)[1]
    error = run_err(tool, [b1, b2][:count], params)
    assert error["code"] == "INVALID_CONTEXT"
    assert error["details"]["expected"] == expected
    assert error["details"]["received_count"] == count
    assert expected in error["message"] and str(count) in error["message"]


def test_region_context_needs_bounds_or_one_zone() -> None:
    assert run_err("area-summary", [], {})["code"] == "INVALID_CONTEXT"
    assert run_err("area-summary", [zone(), zone()], {})["code"] == "INVALID_CONTEXT"
    assert run_ok("area-summary", [], {}, bounds=[-5, 49.5, -3, 51]).success
    assert run_ok("area-summary", [zone()], {}).success


def test_zone_transits_needs_a_track_and_a_zone() -> None:
    b1, b2 = boats()
    error = run_err("zone-transits", [b1, b2], {})
    assert error["code"] == "INVALID_CONTEXT"
    assert error["details"]["received_kinds"] == ["track", "track"]


def test_kind_mismatch_names_kinds_and_feature() -> None:
    error = run_err("track-stats", [zone()], {})
    assert error["code"] == "KIND_MISMATCH"
    assert error["details"]["expected_kinds"] == ["track"]
    assert error["details"]["received_kind"] == "zone"
    assert error["details"]["feature_id"] == "zone-001"
    b1, _ = boats()
    error = run_err("closest-approach", [b1, zone()], {})
    assert error["code"] == "KIND_MISMATCH" and error["details"]["index"] == 1


def test_kinds_read_from_plot_datatypes() -> None:
    doc = load_json("plots/large-sample.plot.json")
    by_id = {f["id"]: f for f in doc["features"]}
    assert run_ok("area-summary", [by_id["z-1"]]).success  # a Polygon annotation is a zone
    error = run_err("track-stats", [by_id["p-2"]])
    assert error["details"]["received_kind"] == "point"  # reference-point
    assert run_ok("delete-features", [by_id["back-1"], by_id["debrief-time-metadata"]]).commands


@pytest.mark.parametrize(
    ("features", "field"),
    [
        ("not a list", "features"),
        ([{"type": "FeatureCollection", "features": []}], "features[0]"),
        ([42], "features[0]"),
        ([{"type": "Feature", "properties": [], "geometry": None}], "features[0]"),
    ],
)
def test_malformed_features_are_validation_failed(features: Any, field: str) -> None:
    error = run(default_registry(), "delete-features", features, {}).error
    assert error is not None
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["field"] == field


@pytest.mark.parametrize(
    "bounds", [[1, 2, 3], [10, 0, 5, 1], [0, 10, 1, 5], [0, 0, 1, math.inf], ["w", 0, 1, 1], [0, -91, 1, 1]]
)
def test_bad_bounds_are_validation_failed(bounds: Any) -> None:
    error = run_err("area-summary", [], {}, bounds=bounds)
    assert error["code"] == "VALIDATION_FAILED" and error["details"]["field"] == "bounds"


def test_parameters_must_be_an_object() -> None:
    b1, _ = boats()
    error = run_err("track-stats", [b1], ["distance_unit"])  # type: ignore[arg-type]
    assert error["code"] == "VALIDATION_FAILED" and error["details"]["field"] == "parameters"


def _bad_values(p: dict[str, Any]) -> list[tuple[Any, str]]:
    """Values that break each of the parameter's declared rules, with the rule they break."""
    wrong_type = {"number": "fast", "integer": 2.5, "boolean": "yes", "string": 7, "array": "x"}[p["type"]]
    out = [(wrong_type, "type")]
    if p["type"] in ("number", "integer"):
        out.append(([1], "type"))
    if p["minimum"] is not None:
        out.append((p["minimum"] if p.get("exclusive_minimum") else p["minimum"] - 1, "minimum"))
    if p["maximum"] is not None:
        out.append((p["maximum"] + 1, "maximum"))
    if p["choices"] is not None:
        out.append(("not-a-choice", "choices"))
    return out


@pytest.mark.parametrize("tool", TOOLS)
def test_every_parameter_rejects_every_kind_of_bad_value(tool: str) -> None:
    features, good, kw = valid_call(tool)
    described = default_registry().get(tool).describe()["parameters"]
    checked = 0
    for p in described:
        for value, rule in _bad_values(p):
            error = run_err(tool, features, {**good, p["name"]: value}, **kw)
            assert error["code"] == "VALIDATION_FAILED", (p["name"], value)
            assert error["details"]["parameter"] == p["name"]
            assert error["details"]["rule"] == rule, (p["name"], value, error)
            assert p["name"] in error["message"]
            checked += 1
    assert checked >= len(described)
    error = run_err(tool, features, {**good, "bogus_option": 1}, **kw)
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["unknown"] == ["bogus_option"]
    assert error["details"]["allowed"] == [p["name"] for p in described]
    assert "bogus_option" in error["message"]


@pytest.mark.parametrize(("tool", "name"), [("speed-filter", "threshold_kn"), ("resample-track", "interval_s")])
def test_required_parameters(tool: str, name: str) -> None:
    error = run_err(tool, valid_call(tool)[0], {})
    assert error["code"] == "VALIDATION_FAILED"
    assert (error["details"]["parameter"], error["details"]["rule"]) == (name, "required")


def test_parameters_get_defaults_and_normalised_values() -> None:
    b1, _ = boats()
    result = run_ok("track-stats", [b1], {"distance_unit": "KM", "max_segments": 5.0, "include_segments": None})
    provenance = props(result)["provenance"]
    assert provenance["parameters"] == {"distance_unit": "km", "include_segments": False, "max_segments": 5}
    assert isinstance(provenance["parameters"]["max_segments"], int)


# --- provenance and output checks ------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_every_result_has_kind_and_provenance(tool: str) -> None:
    features, params, kw = valid_call(tool)
    before = copy.deepcopy(features)
    result = run_ok(tool, features, params, clock=lambda: FIXED, **kw)
    assert features == before, "the executor or the tool changed its input"
    spec = default_registry().get(tool)
    json.dumps(result.to_dict(), allow_nan=False)
    for f in result.features:
        assert f["type"] == "Feature" and f["id"]
        assert f["properties"]["kind"] in spec.output_kinds
        prov = f["properties"]["provenance"]
        assert prov["tool"] == tool and prov["version"] == spec.version
        assert prov["timestamp"] == "2026-01-15T10:30:00Z"
        assert set(prov["parameters"]) == {p.name for p in spec.parameters}
        for source in prov["sources"]:
            assert set(source) == {"id", "kind"}
        if features:
            input_ids = {str(x["id"]) for x in features}
            assert {s["id"] for s in prov["sources"]} <= input_ids
    for cmd in result.commands:
        assert isinstance(cmd["command"], str) and "payload" in cmd
    if spec.output_kind is None:
        assert result.features == []


def test_pair_results_name_their_two_sources() -> None:
    b1, b2 = boats()
    tracks = plot_tracks()
    result = run_ok("closest-approach", tracks, {})
    assert len(result.features) == 3
    pairs = [[s["id"] for s in f["properties"]["provenance"]["sources"]] for f in result.features]
    assert pairs == [["f-1", "f-2"], ["f-1", "f-3"], ["f-2", "f-3"]]
    result = run_ok("range-bearing", [b1, b2])
    assert [s["id"] for s in props(result)["provenance"]["sources"]] == ["rep-nelson", "rep-collingwood"]


def test_long_string_parameters_are_recorded_by_digest() -> None:
    from tests.test_analysis_support import rep_text

    result = run_ok("import-rep", params={"text": rep_text("valid_boat1.rep")})
    recorded = props(result)["provenance"]["parameters"]["text"]
    assert set(recorded) == {"sha256", "chars"} and recorded["chars"] > 30000


def _registry_with(handler: Any, **spec_kw: Any) -> Registry:
    base: dict[str, Any] = {
        "name": "test-tool",
        "description": "a test tool",
        "version": "9.9.9",
        "input_kinds": ("track",),
        "output_kind": "analysis-result",
        "context_type": "single",
        "parameters": (Parameter("x", "number", "an x", default=1),),
        "handler": handler,
    }
    base.update(spec_kw)
    return Registry([ToolSpec(**base)])


def _result(props_: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "Feature", "geometry": None, "properties": {"kind": "analysis-result", **(props_ or {})}, **extra}


def test_execution_error_from_a_failing_tool_is_safe_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    def boom(inp: ToolInput) -> ToolOutput:
        raise RuntimeError("cannot open /home/analyst/secret/plan.rep for reading")

    b1, _ = boats()
    with caplog.at_level(logging.ERROR, logger="debrief_calc.analysis.executor"):
        result = run(_registry_with(boom), "test-tool", [b1], {})
    assert not result.success and result.error is not None
    assert result.error["code"] == "EXECUTION_ERROR"
    assert "RuntimeError" in result.error["message"] and "cannot open" in result.error["message"]
    assert "/home/analyst" not in json.dumps(result.to_dict())
    assert "Traceback" not in result.error["message"]
    assert any(r.exc_info for r in caplog.records), "the traceback goes to the log"
    assert result.to_dict()["success"] is False and result.duration_ms >= 0


def test_calc_errors_from_a_tool_keep_their_code() -> None:
    def too_big(inp: ToolInput) -> ToolOutput:
        raise PayloadTooLarge("too big", details={"limit": 1})

    b1, _ = boats()
    result = run(_registry_with(too_big), "test-tool", [b1], {})
    assert result.error == {"code": "PAYLOAD_TOO_LARGE", "message": "too big", "details": {"limit": 1}}


@pytest.mark.parametrize(
    ("output", "field"),
    [
        ("not an output", "result"),
        (ToolOutput(features=[{"type": "Point"}]), "features[0]"),
        (ToolOutput(features=[_result({"kind": "track"})]), "features[0].properties.kind"),
        (ToolOutput(features=[{"type": "Feature", "geometry": None, "properties": {}}]), "features[0].properties.kind"),
        (ToolOutput(features=[_result({"value": math.nan})]), "features[0].properties"),
        (ToolOutput(features=[_result(geometry={"type": "Circle"})]), "features[0].geometry"),
        (ToolOutput(features=[_result()], feature_sources=[]), "feature_sources"),
        (ToolOutput(commands=[{"payload": {}}]), "commands[0]"),
        (ToolOutput(commands=[{"command": "showText"}]), "commands[0].payload"),
        (ToolOutput(commands=[{"command": "showData", "payload": {"v": math.inf}}]), "commands[0].payload"),
        (
            ToolOutput(commands=[{"command": "addFeatures", "payload": {"features": [_result()]}}]),
            "commands[0].payload.features",
        ),
    ],
)
def test_malformed_output_is_validation_failed(output: Any, field: str) -> None:
    b1, _ = boats()
    result = run(_registry_with(lambda inp: output), "test-tool", [b1], {})
    assert result.error is not None, result
    assert result.error["code"] == "VALIDATION_FAILED"
    assert result.error["details"]["field"] == field
    assert result.error["details"]["rule"] == "output"


def test_tool_without_output_kind_may_not_return_features() -> None:
    b1, _ = boats()
    reg = _registry_with(lambda inp: ToolOutput(features=[_result()]), output_kind=None)
    result = run(reg, "test-tool", [b1], {})
    assert result.error is not None and result.error["code"] == "VALIDATION_FAILED"


def test_missing_ids_are_generated_and_commands_carry_stamped_features() -> None:
    def handler(inp: ToolInput) -> ToolOutput:
        f = _result({"n": 1})
        return ToolOutput(features=[f], commands=[{"command": "addFeatures", "payload": {"features": [f]}}])

    b1, _ = boats()
    result = run(_registry_with(handler), "test-tool", [b1], {"x": 2}, clock=lambda: FIXED)
    assert result.success
    (feature,) = result.features
    assert re.fullmatch(r"result-[0-9a-f]{12}", feature["id"])
    assert result.commands[0]["payload"]["features"] == [feature]
    assert feature["properties"]["provenance"] == {
        "tool": "test-tool",
        "version": "9.9.9",
        "timestamp": "2026-01-15T10:30:00Z",
        "parameters": {"x": 2},
        "sources": [{"id": "rep-nelson", "kind": "track"}],
    }


# --- never raises ----------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
feature_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["Feature", "Feature", "feature", "Point"])},
    optional={
        "id": json_scalars,
        "geometry": st.none()
        | st.fixed_dictionaries(
            {
                "type": st.sampled_from(["LineString", "Point", "Polygon", "MultiLineString", "Nope"]),
                "coordinates": json_values,
            }
        ),
        "properties": st.none()
        | st.dictionaries(
            st.sampled_from(["kind", "dataType", "timestamps", "times", "positions", "name"]), json_values, max_size=4
        ),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from([*TOOLS, "nope", ""]),
    features=st.none() | st.lists(feature_like | json_values, max_size=4) | json_values,
    parameters=st.none()
    | st.dictionaries(
        st.sampled_from(["distance_unit", "threshold_kn", "interval_s", "sample", "path", "text", "x"]),
        json_values,
        max_size=3,
    )
    | json_values,
    bounds=st.none() | st.lists(json_scalars, max_size=5),
)
def test_the_executor_never_raises(tool: str, features: Any, parameters: Any, bounds: Any) -> None:
    result = run(default_registry(), tool, features, parameters, bounds=bounds)
    assert isinstance(result, RunResult)
    json.dumps(result.to_dict(), allow_nan=False)
    if not result.success:
        assert result.error is not None
        assert result.error["code"] in {"TOOL_NOT_FOUND", "INVALID_CONTEXT", "KIND_MISMATCH", "VALIDATION_FAILED"}, (
            result.error
        )


@settings(max_examples=60, deadline=None)
@given(
    times=st.lists(st.floats(-1e12, 4e12, allow_nan=False) | st.text(max_size=25), min_size=0, max_size=6),
    coords=st.lists(
        st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.integers(), min_size=0, max_size=4), max_size=6
    ),
)
def test_junk_tracks_fail_cleanly(times: list[Any], coords: list[Any]) -> None:
    feature = {
        "type": "Feature",
        "id": "j",
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {"kind": "track", "timestamps": times},
    }
    for tool, params in (
        ("track-stats", {}),
        ("speed-filter", {"threshold_kn": 1}),
        ("resample-track", {"interval_s": 10}),
    ):
        result = run(default_registry(), tool, [feature], params)
        json.dumps(result.to_dict(), allow_nan=False)
        if not result.success:
            assert result.error is not None and result.error["code"] == "VALIDATION_FAILED", result.error


def test_track_made_by_helper_runs() -> None:
    f = track_feature("a", [0, 60, 120], [0, 0.01, 0.02], [0, 0, 0])
    assert run_ok("track-stats", [f]).success


def test_failures_carry_a_next_action_and_successes_their_messages() -> None:
    result = run(default_registry(), "nope", [], {})
    assert result.next_action is not None and "list_tools" in result.next_action
    result = run(default_registry(), "track-stats", [zone()], {})
    assert result.next_action is not None and "kinds=['zone']" in result.next_action
    b1, _ = boats()
    result = run(
        _registry_with(lambda inp: ToolOutput(messages=["computed"], warnings=["careful"])), "test-tool", [b1], {}
    )
    assert result.to_dict() == {
        "success": True,
        "features": [],
        "commands": [],
        "duration_ms": result.duration_ms,
        "warnings": ["careful"],
        "messages": ["computed"],
    }
