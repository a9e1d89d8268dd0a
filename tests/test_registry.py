"""The tool registry: the built-in tools, list_tools filters, describe_tool, TOOL_NOT_FOUND."""

from __future__ import annotations

import json

import pytest

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.registry import (
    PARAMETER_TYPES,
    Parameter,
    Registry,
    ToolInput,
    ToolOutput,
    ToolSpec,
)
from debrief_calc.errors import ToolNotFound, ValidationFailed

BUILTIN = [
    "track-stats",
    "track-legs",
    "range-bearing",
    "tote",
    "closest-approach",
    "close-quarters",
    "zone-transits",
    "zone-overlaps",
    "speed-filter",
    "area-summary",
    "resample-track",
    "delete-features",
    "import-rep",
    "import-dpf",
    "bearing-residuals",
    "tma-solve",
]


def names(specs: list[ToolSpec]) -> set[str]:
    return {s.name for s in specs}


def _noop(inp: ToolInput) -> ToolOutput:
    return ToolOutput()


def test_default_registry_holds_the_builtin_tools_once() -> None:
    reg = default_registry()
    assert reg.names() == BUILTIN
    assert default_registry() is reg
    assert len(reg) == len(BUILTIN) and "track-stats" in reg and "nope" not in reg


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        # import-rep also takes the host tracks of sensor lines (one track, or several)
        (
            "single",
            {
                "track-stats",
                "track-legs",
                "speed-filter",
                "resample-track",
                "delete-features",
                "import-rep",
                "bearing-residuals",
                "tma-solve",
                "tote",
            },
        ),
        (
            "multi",
            {
                "track-stats",
                "track-legs",
                "range-bearing",
                "tote",
                "closest-approach",
                "close-quarters",
                "zone-transits",
                "zone-overlaps",
                "delete-features",
                "import-rep",
                "bearing-residuals",
                "tma-solve",
            },
        ),
        ("region", {"area-summary"}),
        ("none", {"import-rep", "import-dpf"}),
    ],
)
def test_list_filters_by_context(context: str, expected: set[str]) -> None:
    assert names(default_registry().list(context_type=context)) == expected


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["zone"], {"zone-transits", "zone-overlaps", "area-summary", "delete-features"}),
        (
            ["TRACK"],
            {
                "track-stats",
                "track-legs",
                "range-bearing",
                "tote",
                "closest-approach",
                "close-quarters",
                "zone-transits",
                "zone-overlaps",
                "speed-filter",
                "resample-track",
                "delete-features",
                "import-rep",
                "bearing-residuals",
                "tma-solve",
            },
        ),
        (["sensor"], {"bearing-residuals", "tma-solve", "delete-features"}),
        (["reference-point"], {"delete-features"}),
        (["buoyfield", "zone"], {"zone-transits", "zone-overlaps", "area-summary", "delete-features"}),
        ([], set(BUILTIN)),
    ],
)
def test_list_filters_by_kinds_any_of(kinds: list[str], expected: set[str]) -> None:
    assert names(default_registry().list(kinds=kinds)) == expected


def test_list_combines_filters_and_rejects_bad_ones() -> None:
    reg = default_registry()
    assert names(reg.list(context_type="single", kinds=["zone"])) == {"delete-features"}
    assert names(reg.list(context_type="multi", kinds=["zone"])) == {
        "zone-transits",
        "zone-overlaps",
        "delete-features",
    }
    assert names(reg.list(context_type="none", kinds=["track"])) == {"import-rep"}  # hosts, or nothing
    assert names(reg.list(context_type="none", kinds=["zone"])) == set()
    with pytest.raises(ValidationFailed) as err:
        reg.list(context_type="everything")
    assert err.value.details["field"] == "context_type"
    with pytest.raises(ValidationFailed):
        reg.list(kinds=[3])  # type: ignore[list-item]


def test_unknown_tool_is_tool_not_found_listing_the_names() -> None:
    with pytest.raises(ToolNotFound) as err:
        default_registry().get("track-statz")
    assert err.value.code == "TOOL_NOT_FOUND"
    assert err.value.details["available"] == BUILTIN
    assert "track-stats" in err.value.message


@pytest.mark.parametrize("name", BUILTIN)
def test_describe_documents_every_parameter(name: str) -> None:
    spec = default_registry().get(name)
    full = spec.describe()
    json.dumps(full)
    for key in ("name", "description", "version", "input_kinds", "output_kind", "context_type", "parameters"):
        assert key in full
    assert len(full["description"]) > 40
    assert len(full["parameters"]) == len(spec.parameters)
    for p in full["parameters"]:
        assert set(p) >= {"name", "type", "description", "required", "default", "choices", "unit", "minimum", "maximum"}
        assert p["type"] in PARAMETER_TYPES
        assert len(p["description"]) > 10
        assert isinstance(p["required"], bool)
        if p["choices"] is not None:
            assert p["default"] is None or p["default"] in p["choices"]


@pytest.mark.parametrize("name", BUILTIN)
def test_summary_is_lean(name: str) -> None:
    summary = default_registry().get(name).summary()
    json.dumps(summary)
    assert set(summary) - {"also_accepts"} == {
        "name",
        "description",
        "version",
        "input_kinds",
        "output_kind",
        "context_type",
        "parameters",
    }
    assert all(isinstance(p, str) for p in summary["parameters"])


def test_metadata_matches_the_spec_table() -> None:
    reg = default_registry()
    ts = reg.get("track-stats").describe()
    assert (ts["context_type"], ts["input_kinds"], ts["output_kind"]) == ("single", ["track"], "analysis-result")
    assert reg.get("zone-transits").input_kinds == ("track", "zone")
    assert reg.get("resample-track").output_kind == "track"
    delete = reg.get("delete-features")
    assert delete.output_kind is None and delete.contexts == ("single", "multi")
    assert delete.summary()["also_accepts"] == ["multi"] and delete.accepts_kind("backdrop")
    rep = reg.get("import-rep")
    assert rep.input_kinds == ("track",) and rep.output_kinds == ("track", "annotation", "zone", "sensor")
    assert rep.contexts == ("none", "single", "multi")  # the tracks sensor lines hang off may be given
    dpf = reg.get("import-dpf")
    assert dpf.input_kinds == () and dpf.output_kinds == ("track", "annotation", "zone", "sensor")
    assert {p.name for p in reg.get("track-stats").parameters} == {"distance_unit", "include_segments", "max_segments"}


def test_registry_rejects_duplicates_and_inconsistent_declarations() -> None:
    spec = ToolSpec("t", "a test tool", "0", ("track",), "analysis-result", "single", (), _noop)
    reg = Registry([spec])
    with pytest.raises(ValueError, match="already registered"):
        reg.register(spec)
    with pytest.raises(ValueError, match="context"):
        ToolSpec("u", "d", "0", (), None, "several", (), _noop)
    with pytest.raises(ValueError, match="twice"):
        p = Parameter("x", "number", "an x")
        ToolSpec("u", "d", "0", (), None, "none", (p, p), _noop)
    with pytest.raises(ValueError, match="default"):
        Parameter("n", "integer", "a count", default=0, minimum=1)
    with pytest.raises(ValueError, match="type"):
        Parameter("n", "float", "a number")
    with pytest.raises(ValueError, match="required"):
        Parameter("n", "number", "a number", required=True, default=1)


@pytest.mark.parametrize(
    ("param", "value", "rule"),
    [
        (Parameter("n", "number", "n"), "1", "type"),
        (Parameter("n", "number", "n"), True, "type"),
        (Parameter("n", "number", "n"), float("nan"), "type"),
        (Parameter("n", "integer", "n"), 1.5, "type"),
        (Parameter("n", "integer", "n", maximum=3), 4, "maximum"),
        (Parameter("n", "number", "n", minimum=0, exclusive_minimum=True), 0, "minimum"),
        (Parameter("n", "number", "n", minimum=0), -0.1, "minimum"),
        (Parameter("b", "boolean", "b"), 1, "type"),
        (Parameter("s", "string", "s", choices=("a", "b")), "c", "choices"),
        (Parameter("a", "array", "a"), "x", "type"),
    ],
)
def test_parameter_rules(param: Parameter, value: object, rule: str) -> None:
    assert param.check(value) == rule


def test_parameter_accepts_good_values() -> None:
    assert Parameter("n", "integer", "n", minimum=1).check(2.0) is None
    assert Parameter("n", "number", "n", minimum=0).check(0) is None
    assert Parameter("s", "string", "s", choices=("nm", "km")).coerce_choice("KM") == "km"
    assert Parameter("a", "array", "a").check([1, "x"]) is None
