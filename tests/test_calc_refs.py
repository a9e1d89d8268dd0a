"""References wherever features are taken, stored results read back, bounded narration: the
analyst's whole job from two real REP files, through the real protocol in both eras."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from debrief_calc.calc.server import build_server
from debrief_calc.formats.rep import parse_rep
from debrief_calc.plots import plotstate
from debrief_calc.tracks.features import parse_iso
from debrief_calc.tracks.paging import join_parts
from llmem.core.config import ServerConfig
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, call

pytestmark = pytest.mark.anyio

CAP = 20_000


@pytest.fixture
def calc_ws(workspace: Path) -> Path:
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        shutil.copy(DATA / "rep" / name, workspace / name)
    whole = "".join(
        (DATA / "rep" / n).read_text() for n in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep")
    )
    (workspace / "exercise.rep").write_text(whole, encoding="utf-8")
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, calc_ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", calc_ws)), mode=request.param) as c:
        yield c


def store_of(ws: Path) -> ArtifactStore:
    return ArtifactStore(ws / ".llmem", ws)


async def run(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    err, out = await call(client, "run_tool", tool=tool, **args)
    assert not err and out["success"] is True, out
    return out


async def imported(client: Client, path: str) -> dict[str, Any]:
    return await run(client, "import-rep", parameters={"path": path})


async def read_whole(client: Client, ref: str) -> list[dict[str, Any]]:
    """Every page of a reference (each within the cap), parts joined back into features."""
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1_000):
        args = {"ref": ref} | ({"cursor": cursor} if cursor else {})
        err, page = await call(client, "get_result", **args)
        assert not err and page["success"] is True and page["ref"].startswith("debrief-calc:"), page
        assert len(json.dumps(page, separators=(",", ":"))) <= CAP
        items += page["features"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    features: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for item in items:
        if "part" not in item:
            features.append(item)
            continue
        parts.append(item)
        if item["part"].get("points", item["part"].get("items"))[1] == item["part"]["of"]:
            features.append(join_parts(parts))
            parts = []
    assert not parts
    return features


# -- one reference per stored thing ---------------------------------------------------------------------


async def test_an_import_over_the_cap_answers_one_reference_and_says_where_it_goes(client: Client) -> None:
    out = await imported(client, "valid_boat1.rep")
    stored = out["stored"]
    ref = stored["ref"]
    assert re.fullmatch(r"debrief-calc:runs/[0-9a-f]{12}", ref)
    assert out["commands"] == [{"command": "addFeatures", "payload": {"ref": ref}}]
    assert stored["feature_count"] == 1
    for where in ("run_tool features", "debrief_create_plot", "addFeatures", "already carries it", "get_result(ref)"):
        assert where in stored["use"], where
    [summary] = out["features"]
    assert summary["name"] == "NELSON" and summary["point_count"] == 402
    assert summary["ref"] == "debrief-calc:results/rep-nelson"
    assert "coordinates" not in json.dumps(out)
    assert len(json.dumps(out, separators=(",", ":"))) <= CAP


async def test_an_import_under_the_cap_answers_its_reference_too(client: Client, state: Client, calc_ws: Path) -> None:
    """The ops log (19 narrative entries) answers in brief (how many, when, which platforms
    logged them) and the one reference the guides tell to pass to debrief_create_plot."""
    shutil.copy(DATA / "rep" / "valid_narrative.rep", calc_ws / "valid_narrative.rep")
    out = await imported(client, "valid_narrative.rep")
    assert len(json.dumps(out, separators=(",", ":"))) <= CAP
    stored = out["stored"]
    ref = stored["ref"]
    assert re.fullmatch(r"debrief-calc:runs/[0-9a-f]{12}", ref)
    assert set(stored) == {"ref", "feature_count", "use", "note"} and stored["feature_count"] == 19
    assert stored["note"] == "features is empty: all 19 are narrative entries, in brief in narratives"
    for where in ("run_tool features", "debrief_create_plot", "addFeatures", "already carries it", "get_result(ref)"):
        assert where in stored["use"], where
    assert out["commands"] == [{"command": "addFeatures", "payload": {"ref": ref}}]
    entries = plotstate.features_of_ref(store_of(calc_ws), stored)
    rep = (DATA / "rep" / "valid_narrative.rep").read_text().splitlines()
    logged = Counter(line.split()[3] for line in rep if line.startswith(";NARRATIVE:"))
    assert out["features"] == [] and out["narratives"] == {  # not every entry with its provenance again
        "count": 19,
        "time_start": "1995-12-12T05:00:00Z",
        "time_end": entries[-1]["properties"]["time"],
        "platforms": dict(logged.most_common()),
        "ref": ref,
        "read": f"get_result(ref={ref!r}, kinds=['annotation']) reads every entry (time, platform, text)",
    }
    assert logged == {"NELSON": 15, "COLLINGWOOD": 4} and len(entries) == 19
    assert [e["properties"]["track"] for e in entries] == [line.split()[3] for line in rep if line.startswith(";N")]
    assert len(json.dumps(out)) < 1_500
    err, plot = await call(state, "debrief_create_plot", filename="ops.plot.json", features=[{"ref": ref}])
    assert not err, plot
    # a small resample is kept the same way
    nelson = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    hourly = await run(client, "resample-track", features=[{"ref": nelson}], parameters={"interval_s": 3600})
    assert hourly["features"][0]["properties"]["name"] == "NELSON (every 1 h)"  # whole, inline
    assert hourly["commands"] == [{"command": "addFeatures", "payload": {"ref": hourly["stored"]["ref"]}}]
    assert hourly["stored"]["feature_count"] == 1 and "keep" not in hourly
    # an analysis whose results are not plot features keeps its answer as it was
    stats = await run(client, "track-stats", features=[{"ref": nelson}])
    assert "stored" not in stats and stats["commands"] == []


async def test_the_runs_features_are_stored_once(client: Client, calc_ws: Path) -> None:
    out = await imported(client, "valid_boat2.rep")
    run_dir = calc_ws / ".llmem" / "artifacts" / "debrief-calc" / "runs" / out["stored"]["ref"].rsplit("/", 1)[1]
    assert sorted(p.name for p in run_dir.iterdir() if not p.name.endswith(".lock")) == ["features.json"]
    features = plotstate.features_of_ref(store_of(calc_ws), out["stored"])  # the stored member is a ref too
    assert [f["properties"]["name"] for f in features] == ["COLLINGWOOD"]


async def test_resample_commands_carry_the_same_reference(client: Client) -> None:
    ref = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    out = await run(client, "resample-track", features=[{"ref": ref}], parameters={"interval_s": 20})
    assert out["commands"] == [{"command": "addFeatures", "payload": {"ref": out["stored"]["ref"]}}]
    [track] = await read_whole(client, out["stored"]["ref"])
    assert len(track["geometry"]["coordinates"]) == len(track["properties"]["timestamps"]) == 1204


# -- the analyst's questions on references ----------------------------------------------------------------


async def test_closest_approach_of_the_two_imports_in_yards(client: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    out = await run(client, "closest-approach", features=[{"ref": r1}, {"ref": r2}], parameters={"distance_unit": "yd"})
    [cpa] = out["features"]
    props = cpa["properties"]
    assert props["distance_unit"] == "yd"
    assert props["range"] == pytest.approx(119.5, abs=0.5)
    assert abs(parse_iso(props["time"]) - parse_iso("1995-12-12T10:45:09Z")) <= 1.0
    assert [s["id"] for s in props["provenance"]["sources"]] == ["rep-nelson", "rep-collingwood"]


async def test_track_stats_on_two_tracks_answers_one_result_each(client: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    out = await run(client, "track-stats", features=[{"ref": r1}, {"ref": r2}])
    first, second = out["features"]
    assert first["properties"]["track_name"] == "NELSON" and second["properties"]["track_name"] == "COLLINGWOOD"
    assert first["properties"]["provenance"]["sources"] == [{"id": "rep-nelson", "kind": "track"}]
    assert second["properties"]["provenance"]["sources"] == [{"id": "rep-collingwood", "kind": "track"}]
    for result in (first, second):
        stats = result["properties"]["statistics"]
        assert stats["mean_speed_kn"] > 0 and stats["distance_unit"] == "nm"


async def test_speed_filter_on_collingwood_agrees_with_its_max_speed(client: Client) -> None:
    summary = (await imported(client, "valid_boat2.rep"))["features"][0]
    collingwood = {"ref": summary["ref"]}
    out = await run(client, "speed-filter", features=[collingwood], parameters={"threshold_kn": 12})
    filtered = out["features"][0]["properties"]
    stats = (await run(client, "track-stats", features=[collingwood]))["features"][0]["properties"]["statistics"]
    assert filtered["threshold_kn"] == 12 and filtered["track_id"] == "rep-collingwood"
    assert (filtered["period_count"] > 0) == (stats["max_speed_kn"] > 12)


async def test_references_mix_with_inline_features(client: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    boat2 = parse_rep((DATA / "rep" / "valid_boat2.rep").read_text(encoding="utf-8")).features[0]
    mixed = await run(client, "closest-approach", features=[{"ref": r1}, boat2], parameters={"distance_unit": "yd"})
    by_result = await run(
        client,
        "closest-approach",
        features=[{"ref": "debrief-calc:results/rep-nelson"}, boat2],
        parameters={"distance_unit": "yd"},
    )
    assert mixed["features"][0]["properties"]["range"] == by_result["features"][0]["properties"]["range"]
    assert mixed["features"][0]["properties"]["range"] == pytest.approx(119.5, abs=0.5)


BAD_REFS: list[tuple[Any, str]] = [
    ({"ref": "debrief-calc:nowhere/x"}, "is not a debrief-calc reference"),
    ({"ref": "debrief-calc:runs/000000000000"}, "run the tool again"),
    ({"ref": "debrief-calc:results/result-000000000000"}, "no stored result"),
    ({"ref": "debrief-calc:runs/../../secrets"}, "is not a debrief-calc reference"),
    ({"ref": 42}, "a reference is a string"),
    ({"ref": "debrief-calc:results/rep-nelson/narrative"}, "not features"),
]


@pytest.mark.parametrize(("bad", "says"), BAD_REFS)
async def test_bad_references_name_the_item_and_what_to_pass(
    client: Client, calc_ws: Path, bad: Any, says: str
) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    before = sorted(p.name for p in calc_ws.iterdir())
    err, out = await call(client, "run_tool", tool="closest-approach", features=[{"ref": r1}, bad])
    assert err and out["success"] is False
    error = out["error"]
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["field"] == "features[1].ref" and error["message"].startswith("features[1].ref: ")
    assert says in error["message"]
    assert "debrief-calc:runs/<run id>" in json.dumps(error)  # the forms it takes
    assert sorted(p.name for p in calc_ws.iterdir()) == before


# -- get_result ---------------------------------------------------------------------------------------------


async def test_get_result_pages_a_whole_import_exactly(client: Client, calc_ws: Path) -> None:
    out = await imported(client, "exercise.rep")
    ref = out["stored"]["ref"]
    assert out["stored"]["feature_count"] == len(out["features"]) + out["narratives"]["count"] == 21
    read = await read_whole(client, ref)
    assert read == plotstate.features_of_ref(store_of(calc_ws), {"ref": ref})
    assert [f["properties"]["name"] for f in read[:2]] == ["NELSON", "COLLINGWOOD"]
    # a result reference, and the bare result id, read the one feature
    assert await read_whole(client, "debrief-calc:results/rep-nelson") == read[:1]
    assert await read_whole(client, "rep-nelson") == read[:1]


async def test_get_result_parts_say_how_to_join_them(client: Client) -> None:
    ref = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    err, page = await call(client, "get_result", ref=ref)
    assert not err and page["total"] == 1 and page["next_cursor"]
    part = page["features"][0]["part"]
    assert part["points"][0] == 0 and part["of"] == 402 and "timestamps" in part["arrays"]
    assert "concatenate" in page["note"]


async def test_get_result_reads_a_range_bearing_series_whole_in_parts(client: Client, calc_ws: Path) -> None:
    """range-bearing NELSON to COLLINGWOOD at every fix: 399 samples in thirteen columns, about 50 kB.
    The answer elides the columns; get_result reads them in parts of rows, each page within the
    cap, by the result's ref and by the run's, and the parts join back into the stored result."""
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    out = await run(client, "range-bearing", features=[{"ref": r1}, {"ref": r2}], parameters={"sample": "all"})
    assert len(json.dumps(out, separators=(",", ":"))) <= CAP
    [summary] = out["features"]
    assert summary["properties"]["sample_count"] == 399
    assert summary["properties"]["series"]["range"] == "399 items: read them with get_result"
    stored = plotstate.load_result(store_of(calc_ws), summary["id"])
    assert len(json.dumps(stored, separators=(",", ":"))) > 2 * CAP
    err, page = await call(client, "get_result", ref=summary["ref"])
    assert not err and page["next_cursor"] and "part.arrays" in page["note"]
    part = page["features"][0]["part"]
    assert part["at"] == ["properties", "series"] and part["of"] == 399 and "bearing" in part["arrays"]
    for ref in (summary["ref"], out["stored"]["ref"]):
        [whole] = await read_whole(client, ref)
        assert whole == stored and len(whole["properties"]["series"]["time"]) == 399


async def test_get_result_refuses_bad_cursors_and_refs(client: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    _, first = await call(client, "get_result", ref=r1)
    for cursor, says in (
        ("not a cursor!", "not a get_result cursor"),
        ("eyJ4IjoxfQ", "not a get_result cursor"),
        (first["next_cursor"] + "x", "not a get_result cursor"),
    ):
        err, out = await call(client, "get_result", ref=r1, cursor=cursor)
        assert err and out["error"]["code"] == "VALIDATION_FAILED" and out["error"]["details"]["field"] == "cursor"
        assert says in out["error"]["message"] and "next_cursor" in out["error"]["message"]
    err, out = await call(client, "get_result", ref=r2, cursor=first["next_cursor"])
    assert err and "belongs to" in out["error"]["message"]
    err, out = await call(client, "get_result", ref="debrief-calc:runs/000000000000")
    assert err and out["error"]["details"]["field"] == "ref"
    err, out = await call(client, "get_result", ref="/etc/passwd")
    assert err and out["error"]["code"] == "VALIDATION_FAILED"


async def test_old_payload_references_still_work(client: Client, calc_ws: Path) -> None:
    """Stores written by the previous version hold ``runs/<run>/<n>`` payloads."""
    store = store_of(calc_ws)
    boats = parse_rep((DATA / "rep" / "valid_boat1.rep").read_text(encoding="utf-8")).features
    old = plotstate.stash_payload(store, "0ld-run", 1, {"features": boats})
    assert old == {"ref": "debrief-calc:runs/0ld-run/1"}
    out = await run(client, "track-stats", features=[old])
    assert out["features"][0]["properties"]["track_id"] == "rep-nelson"
    assert plotstate.resolve_ref(store, old) == {"features": boats}
    assert await read_whole(client, old["ref"]) == boats


async def test_get_result_reads_a_stored_command_payload_as_json(client: Client, calc_ws: Path) -> None:
    ids = {"ids": [f"feature-{i}" for i in range(3_000)]}
    ref = plotstate.stash_payload(store_of(calc_ws), "big-delete", 0, ids)["ref"]
    pieces, cursor = [], None
    while True:
        err, page = await call(client, "get_result", ref=ref, **({"cursor": cursor} if cursor else {}))
        assert not err and page["kind"] == "payload" and page["format"] == "json"
        pieces.append(page["text"])
        if (cursor := page["next_cursor"]) is None:
            break
    assert len(pieces) > 1 and json.loads("".join(pieces)) == ids


async def test_errors_after_expansion_say_how_features_were_counted(client: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    zone = {
        "type": "Feature",
        "id": "z",
        "properties": {"kind": "zone"},
        "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]},
    }
    err, out = await call(client, "run_tool", tool="closest-approach", features=[{"ref": r1}, zone])
    assert err and out["error"]["code"] == "KIND_MISMATCH"
    assert "counted after expanding the references: 2" in out["error"]["message"]


def test_resolve_ref_forms(calc_ws: Path) -> None:
    store = store_of(calc_ws)
    boats = parse_rep((DATA / "rep" / "valid_boat1.rep").read_text(encoding="utf-8")).features
    for f in boats:
        plotstate.store_result(store, f, "import-rep")
    ref = plotstate.stash_features(store, "abc123", boats)
    assert plotstate.resolve_ref(store, ref) == {"type": "FeatureCollection", "features": boats}
    assert plotstate.resolve_ref(store, {"ref": "debrief-calc:results/rep-nelson"}) == boats[0]
    assert plotstate.features_of_ref(store, {"$ref": "rep-nelson"}) == boats[:1]
    copy = plotstate.features_of_ref(store, ref)
    copy[0]["properties"]["name"] = "changed"  # the caller's own copy
    assert plotstate.features_of_ref(store, ref)[0]["properties"]["name"] == "NELSON"


# -- narratives and bounded prompts ---------------------------------------------------------------------------

_NUMBER_RUN = re.compile(r"(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[\s,;\]\[]+){21}")


def assert_bounded(prompt: str, limit: int) -> None:
    assert len(prompt) <= limit
    assert not _NUMBER_RUN.search(prompt), _NUMBER_RUN.search(prompt)
    assert "prompt truncated" not in prompt and "(truncated)" not in prompt


async def test_narration_prompts_are_bounded_figures(client: Client) -> None:
    ref = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    stats = await run(
        client, "track-stats", features=[{"ref": ref}], parameters={"include_segments": True, "distance_unit": "yd"}
    )
    assert stats["stored"]["use"] == "read the features whole with get_result(ref)"  # not for plots
    figures = stats["features"][0]["properties"]["statistics"]  # the figures, without the long lists
    assert figures["segments"] == "401 items: read them with get_result" and figures["mean_speed_kn"] > 0
    err, ready = await call(client, "generate_prompt", target=stats["features"][0]["id"], task="narrate-result")
    assert not err
    prompt = ready["promptForHostLLM"]
    assert_bounded(prompt, CAP - 3_000)
    for figure in ("mean_speed_kn: ", "max_speed_kn: ", "distance: ", "duration_s: ", "segments: 401 entries"):
        assert figure in prompt, figure
    assert f"mean_speed_kn: {figures['mean_speed_kn']}" in prompt  # figures exactly as the tool gave them
    resampled = await run(client, "resample-track", features=[{"ref": ref}], parameters={"interval_s": 10})
    rid = resampled["features"][0]["id"]
    err, ready = await call(client, "generate_prompt", target=f"debrief-calc:results/{rid}", task="narrate-result")
    assert not err
    prompt = ready["promptForHostLLM"]
    assert_bounded(prompt, CAP - 3_000)
    assert "LineString of 2407 positions" in prompt and "timestamps: 2407 times from 1995-12-12T05:00:00Z" in prompt


async def test_narratives_are_read_back_through_get_result(client: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    ids = [f["id"] for f in (await run(client, "track-stats", features=[{"ref": r1}, {"ref": r2}]))["features"]]
    err, ready = await call(client, "generate_prompt", target=ids[0], task="narrate-result")
    assert not err
    err, ok = await call(client, "store_llm_result", **ready["callbackArgs"], result="NELSON ran 67 nm.")
    assert not err and ok["success"] is True
    ref = ok["data"]["ref"]
    assert ref == f"debrief-calc:results/{ids[0]}/narrative"
    assert f"get_result(ref='{ref}')" in ok["nextAction"] and ".json" not in json.dumps(ok)
    err, text = await call(client, "get_result", ref=ref)
    assert not err and text["kind"] == "narrative" and text["text"] == "NELSON ran 67 nm."
    assert text["next_cursor"] is None
    err, result = await call(client, "get_result", ref=ids[0])
    assert not err and result["narrative"] == {"ref": ref}
    err, ready = await call(client, "generate_prompt", target=ids, task="summarize-analysis")
    assert not err
    summary = "Both ships: " + "x" * 19_000  # long: read back in pages
    err, ok = await call(client, "store_llm_result", **ready["callbackArgs"], result=summary)
    assert not err and re.fullmatch(r"debrief-calc:analyses/[0-9a-f]{16}/summary", ok["data"]["ref"])
    pieces, cursor = [], None
    while True:
        args = {"ref": ok["data"]["ref"]} | ({"cursor": cursor} if cursor else {})
        err, page = await call(client, "get_result", **args)
        assert not err and page["kind"] == "summary"
        pieces.append(page["text"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(pieces) == 2 and "".join(pieces) == summary
    err, out = await call(client, "get_result", ref=f"debrief-calc:results/{ids[1]}/narrative")
    assert err and "generate_prompt" in out["error"]["message"]
    # a run reference as the target: all of that run's results
    many = await run(client, "track-stats", features=[{"ref": r1}], parameters={"include_segments": True})
    err, ready = await call(client, "generate_prompt", target=many["stored"]["ref"], task="summarize-analysis")
    assert not err and ready["data"]["results"] == [many["features"][0]["id"]]
    err, ready = await call(client, "get_result", ref=json.dumps({"ref": many["stored"]["ref"]}))
    assert not err and ready["total"] == 1  # a reference object passed as its JSON text


async def test_guide_names_the_next_calls(client: Client) -> None:
    prompt = await client.get_prompt("tool-descriptions")
    guide = prompt.messages[0].content.text  # type: ignore[union-attr]
    for needed in (
        'run_tool(tool="import-rep", parameters={"path": "boat1.rep"})',
        "debrief_create_plot(filename, features=[",
        "debrief_apply_command(",
        "get_result(ref, cursor?)",
        '"distance_unit": "yd"',
        '"ref": "debrief-calc:runs/<run id>"',
        "3 attempts",
    ):
        assert needed in guide, needed
    assert "MAX_STEPS" not in guide and "<placeholder>" not in guide


# -- imports that meet in one plot, results kept in it ---------------------------------------------------


@pytest.fixture
async def state(calc_ws: Path) -> AsyncIterator[Client]:
    """The plot-state server on the same workspace (and so the same store)."""
    from debrief_calc.state.server import build_server as build_state

    async with Client(build_state(ServerConfig("debrief-state-mcp", calc_ws))) as c:
        yield c


def keep_command(keep: str) -> dict[str, Any]:
    """The command a ``keep`` hint spells out, read as a model would copy it."""
    found = re.fullmatch(
        r"to keep these results in a plot: debrief_apply_command\(command=(\{.*\})\) on debrief-state-mcp.*", keep
    )
    assert found, keep
    command: dict[str, Any] = json.loads(found.group(1))
    return command


async def test_two_imports_with_narratives_make_one_plot(client: Client, state: Client, calc_ws: Path) -> None:
    shutil.copy(DATA / "rep" / "valid_narrative.rep", calc_ws / "valid_narrative.rep")
    whole = await imported(client, "exercise.rep")  # boat1 + boat2 + the narratives, over the cap
    notes = await imported(client, "valid_narrative.rep")
    summaries = whole["features"]
    assert [s["id"] for s in summaries] == ["rep-nelson", "rep-collingwood"]  # the narratives in brief:
    assert whole["narratives"]["count"] == 19 and whole["narratives"]["ref"] == whole["stored"]["ref"]
    entries = plotstate.features_of_ref(store_of(calc_ws), notes["narratives"])
    assert entries[0]["id"] == "rep-valid-narrative-narrative-1"
    err, plot = await call(
        state,
        "debrief_create_plot",
        filename="two.plot.json",
        features=[{"ref": whole["stored"]["ref"]}, {"ref": notes["narratives"]["ref"]}],
    )
    assert not err, plot
    err, listed = await call(state, "debrief_get_features", filename="two.plot.json", kinds=["annotation"])
    assert not err and {f.get("platform") for f in listed["features"]} == {"NELSON", "COLLINGWOOD"}
    for rid in ("rep-exercise-narrative-1", "rep-valid-narrative-narrative-1"):  # both kept, neither replaced
        err, page = await call(client, "get_result", ref=rid)
        assert not err and page["features"][0]["properties"]["text"] == "COMEX SERIAL 16D"
    again = await imported(client, "valid_narrative.rep")
    assert [f["id"] for f in plotstate.features_of_ref(store_of(calc_ws), again["narratives"])] == [
        f["id"] for f in entries
    ]  # stable


async def test_the_same_platform_from_another_file_is_one_id_and_the_answer_says_so(
    client: Client, state: Client, calc_ws: Path
) -> None:
    late = "".join((DATA / "rep" / "valid_boat1.rep").read_text().splitlines(keepends=True)[200:])
    (calc_ws / "nelson_late.rep").write_text(late, encoding="utf-8")
    first = await imported(client, "valid_boat1.rep")
    again = await imported(client, "valid_boat1.rep")
    assert not any("also imported" in w for w in again.get("warnings", []))  # the same file again
    second = await imported(client, "nelson_late.rep")
    (warning,) = [w for w in second["warnings"] if "also imported" in w]
    assert warning.startswith("track 'rep-nelson' (NELSON) was also imported from 'valid_boat1.rep', with other fixes")
    assert "a plot holds only one of the two" in warning and "debrief-calc:results/rep-nelson" in warning
    err, out = await call(
        state,
        "debrief_create_plot",
        filename="clash.plot.json",
        features=[{"ref": first["stored"]["ref"]}, {"ref": second["stored"]["ref"]}],
    )
    assert err and "rep-nelson" in out["error"]["message"]


async def test_analysis_answers_say_how_to_keep_their_results(client: Client, state: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    imported_again = await imported(client, "valid_boat2.rep")
    assert "keep" not in imported_again  # its addFeatures command keeps it already
    err, _ = await call(state, "debrief_create_plot", filename="kept.plot.json", features=[{"ref": r1}, {"ref": r2}])
    assert not err
    cpa = await run(client, "closest-approach", features=[{"ref": r1}, {"ref": r2}], parameters={"distance_unit": "yd"})
    rid = cpa["features"][0]["id"]
    command = keep_command(cpa["keep"])
    assert command == {"command": "addFeatures", "payload": [{"ref": f"debrief-calc:results/{rid}"}]}
    assert cpa["features"][0]["geometry"]["type"] == "LineString"  # drawable: the range line at the CPA
    err, applied = await call(state, "debrief_apply_command", filename="kept.plot.json", command=command)
    assert not err, applied
    err, got = await call(state, "debrief_get_features", filename="kept.plot.json", ids=[rid])
    assert not err and json.dumps(got).count(rid) >= 1
    # a run over the cap: its one reference
    stats = await run(client, "track-stats", features=[{"ref": r1}], parameters={"include_segments": True})
    assert keep_command(stats["keep"])["payload"] == [{"ref": stats["stored"]["ref"]}]


async def test_a_narrative_comes_with_the_command_that_keeps_it(client: Client, state: Client) -> None:
    r1 = (await imported(client, "valid_boat1.rep"))["stored"]["ref"]
    r2 = (await imported(client, "valid_boat2.rep"))["stored"]["ref"]
    err, _ = await call(state, "debrief_create_plot", filename="told.plot.json", features=[{"ref": r1}, {"ref": r2}])
    assert not err
    cpa = await run(client, "closest-approach", features=[{"ref": r1}, {"ref": r2}], parameters={"distance_unit": "yd"})
    rid = cpa["features"][0]["id"]
    err, ready = await call(client, "generate_prompt", target=rid, task="narrate-result")
    assert not err
    text = "NELSON and COLLINGWOOD closed to 119.5 yd at 10:45Z."
    err, ok = await call(client, "store_llm_result", **ready["callbackArgs"], result=text)
    assert not err and ok["success"] is True
    command = ok["data"]["command"]
    (feature,) = command["payload"]
    assert command["command"] == "addFeatures" and re.fullmatch(r"narrative-[0-9a-f]{10}", feature["id"])
    assert feature["geometry"] is None
    props = feature["properties"]
    assert (props["dataType"], props["annotationType"], props["name"], props["text"]) == (
        "annotation",
        "comment",
        "Analysis narrative",
        text,
    )
    assert props["provenance"]["results"] == [rid] and props["provenance"]["ref"] == ok["data"]["ref"]
    assert "debrief_apply_command(command=data.command) on debrief-state-mcp" in ok["nextAction"]
    assert f"get_result(ref='{ok['data']['ref']}')" in ok["nextAction"]
    err, applied = await call(state, "debrief_apply_command", filename="told.plot.json", command=command)
    assert not err, applied
    err, got = await call(state, "debrief_get_features", filename="told.plot.json", ids=[feature["id"]])
    assert not err and "Analysis narrative" in json.dumps(got)


async def test_get_result_reads_only_the_kinds_asked_for(client: Client) -> None:
    whole = await imported(client, "exercise.rep")
    ref = whole["stored"]["ref"]
    err, notes = await call(client, "get_result", ref=ref, kinds=["annotation"])
    assert not err and notes["total"] == 19 and notes["kinds"] == ["annotation"] and notes["next_cursor"] is None
    assert {f["properties"]["annotationType"] for f in notes["features"]} == {"comment"}
    err, none = await call(client, "get_result", ref=ref, kinds=["zone"])
    assert not err and none["total"] == 0 and none["note"].endswith("its kinds: track (2), annotation (19)")
    err, bad = await call(client, "get_result", ref=ref, kinds=["narrative"])
    assert (
        err
        and bad["error"]["code"] == "VALIDATION_FAILED"
        and "narratives and labels are annotation" in bad["error"]["message"]
    )
    err, tracks = await call(client, "get_result", ref=ref, kinds=["TRACK"])
    assert not err and tracks["kinds"] == ["track"] and tracks["next_cursor"] and tracks["total"] == 2
    err, out = await call(client, "get_result", ref=ref, cursor=tracks["next_cursor"])  # the filter goes with it
    assert err and "?kinds=track" in out["error"]["message"]
    err, more = await call(client, "get_result", ref=ref, cursor=tracks["next_cursor"], kinds=["track"])
    assert not err and all(f["properties"]["kind"] == "track" for f in more["features"])
