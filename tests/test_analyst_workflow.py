"""The analyst's request, end to end, through the real console scripts over stdio, as a model does it.

    "Make me a plot from my two REP files; when did the ships come closest and how close, in
    yards; each ship's average speed; did COLLINGWOOD go over 12 knots; select both, set the
    time to the closest approach, show me a picture, and keep a short narrative in the plot."

``debrief-calc-mcp`` and ``debrief-state-mcp`` run as real processes, launched as a client
launches them (the MCP Python SDK client over stdio), in both protocol eras, on a workspace whose
path has a space and a non-ASCII letter. The test plays the model: it reads each server's guide
and tool list, and every argument name, reference, id and time it passes was in something the
servers said before (:meth:`Conversation.ask` checks that against the transcript). Each answer
is checked as a client sees it: no error, ``success`` true, the text block the same JSON as the
structured content and at most 20,000 characters, and nothing but JSON-RPC on stdout.

The figures are checked against an independent computation with GeographicLib from the REP
lines themselves (not our reader, not our geodesy); the end state against the files.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import json
import re
import shutil
import struct
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client, StdioServerParameters

from tests.conftest import DATA, MODES, console_script, subprocess_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REQUEST = (
    "Make me a plot from my two REP files; when did the ships come closest and how close, in yards; "
    "each ship's average speed; did COLLINGWOOD go over 12 knots; select both, set the time to the "
    "closest approach, show me a picture, and keep a short narrative in the plot."
)
REP_FILES = ("valid_boat1.rep", "valid_boat2.rep")  # NELSON, COLLINGWOOD
PLOT = "exercise.plot.json"
CAP = 20_000
YARD_M = 0.9144
METRES_PER_NM = 1852.0
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: debrief-calc's discovery tools keep seed 002's contract: their answers carry no ``success``.
NO_SUCCESS_FIELD = {"list_tools", "describe_tool"}
#: The first protocol version of the stateless era (what ``mode="auto"`` negotiates).
STATELESS_ERA = "2026-07-28"


# -- an independent reading of the REP files, and GeographicLib -----------------------------------

Fix = tuple[float, float, float]  # epoch seconds, latitude, longitude (degrees)


def read_rep_fixes(path: Path) -> tuple[str, list[Fix]]:
    """The platform name and fixes of a one-platform REP file, read from its columns directly.

    ``YYMMDD HHMMSS.SSS NAME SYMBOL DD MM SS.SS H DDD MM SS.SS H COURSE SPEED DEPTH``
    (domain.md); two-digit years from 50 on are 19xx.
    """
    names, fixes = set(), []
    for line in path.read_text(encoding="ascii").splitlines():
        if not line.strip() or line.startswith(";"):
            continue
        f = line.split()
        day, clock = f[0], f[1]
        year = int(day[:2]) + (1900 if int(day[:2]) >= 50 else 2000)
        when = datetime(year, int(day[2:4]), int(day[4:6]), int(clock[:2]), int(clock[2:4]), tzinfo=UTC)
        lat = (int(f[4]) + int(f[5]) / 60 + float(f[6]) / 3600) * (1 if f[7] == "N" else -1)
        lon = (int(f[8]) + int(f[9]) / 60 + float(f[10]) / 3600) * (1 if f[11] == "E" else -1)
        names.add(f[2])
        fixes.append((when.timestamp() + float(clock[4:]), lat, lon))
    assert len(names) == 1, names
    return names.pop(), fixes


def position_at(fixes: list[Fix], times: list[float], t: float) -> tuple[float, float]:
    """Latitude and longitude at ``t``, linearly interpolated between the fixes around it."""
    i = min(bisect.bisect_right(times, t) - 1, len(fixes) - 2)
    (t0, lat0, lon0), (t1, lat1, lon1) = fixes[i], fixes[i + 1]
    w = (t - t0) / (t1 - t0)
    return lat0 + w * (lat1 - lat0), lon0 + w * (lon1 - lon0)


def closest_approach_by_sampling(a: list[Fix], b: list[Fix]) -> tuple[float, float]:
    """(range in metres, epoch seconds) of the closest approach: both tracks sampled every second
    over the time they share, the geodesic distance (GeographicLib, WGS84) at each sample."""
    ta, tb = [f[0] for f in a], [f[0] for f in b]
    start, end = max(ta[0], tb[0]), min(ta[-1], tb[-1])
    best = (float("inf"), start)
    for k in range(int(end - start) + 1):
        t = start + k
        (lat_a, lon_a), (lat_b, lon_b) = position_at(a, ta, t), position_at(b, tb, t)
        metres = Geodesic.WGS84.Inverse(lat_a, lon_a, lat_b, lon_b, Geodesic.DISTANCE)["s12"]
        if metres < best[0]:
            best = (metres, t)
    return best


def mean_and_max_speed_kn(fixes: list[Fix]) -> tuple[float, float]:
    """Mean speed (geodesic distance over duration) and the fastest leg, in knots."""
    distance, fastest = 0.0, 0.0
    for (t0, lat0, lon0), (t1, lat1, lon1) in itertools.pairwise(fixes):
        metres = Geodesic.WGS84.Inverse(lat0, lon0, lat1, lon1, Geodesic.DISTANCE)["s12"]
        distance += metres
        if t1 > t0:
            fastest = max(fastest, metres / METRES_PER_NM / ((t1 - t0) / 3600))
    return distance / METRES_PER_NM / ((fixes[-1][0] - fixes[0][0]) / 3600), fastest


@dataclass(frozen=True)
class Independent:
    cpa_yd: float
    cpa_time: float  # epoch seconds
    mean_kn: dict[str, float]
    max_kn: dict[str, float]


@cache
def independent_figures() -> Independent:
    """The request's figures, computed once from the REP files without any of our code."""
    tracks = dict(read_rep_fixes(DATA / "rep" / name) for name in REP_FILES)
    metres, when = closest_approach_by_sampling(tracks["NELSON"], tracks["COLLINGWOOD"])
    speeds = {name: mean_and_max_speed_kn(fixes) for name, fixes in tracks.items()}
    return Independent(
        cpa_yd=metres / YARD_M,
        cpa_time=when,
        mean_kn={name: mean for name, (mean, _) in speeds.items()},
        max_kn={name: fastest for name, (_, fastest) in speeds.items()},
    )


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


# -- the model's side of the conversation ---------------------------------------------------------


def words_passed(value: Any) -> list[str]:
    """The names and string values of a call's arguments, nested ones too (what the model typed)."""
    if isinstance(value, dict):
        return [w for k, v in value.items() for w in (str(k), *words_passed(v))]
    if isinstance(value, list):
        return [w for v in value for w in words_passed(v)]
    return [value] if isinstance(value, str) else []


def checked_answer(result: types.CallToolResult, tool: str) -> tuple[dict[str, Any], str]:
    """The structured answer and its text, checked as every answer of the suite promises."""
    answer = result.structured_content
    assert not result.is_error, (tool, answer)
    assert isinstance(answer, dict), (tool, result)
    # the cap is on text; an image (debrief_render_plot's PNG) is a block of its own, checked there
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert texts and json.loads(texts[0]) == answer, tool
    assert all(len(text) <= CAP for text in texts), (tool, [len(text) for text in texts])
    if tool in NO_SUCCESS_FIELD:
        assert "error" not in answer, (tool, answer)
    else:
        assert answer["success"] is True, (tool, answer)
    return answer, texts[0]


@dataclass
class Conversation:
    """What the model has read so far (the request, the guides, the tool lists, every answer),
    and anything the transport could not parse as a protocol message (a stray stdout line)."""

    texts: list[str] = field(default_factory=list)
    stray_stdout: list[Exception] = field(default_factory=list)

    async def on_message(self, message: Any) -> None:
        """The SDK client hands a stdout line it cannot parse to the message handler (and logs it);
        it does not fail the session, so it is recorded here and asserted on."""
        if isinstance(message, Exception):
            self.stray_stdout.append(message)

    def assert_told(self, words: list[str]) -> None:
        """Each word the model is about to type was in something it read before: no guessing."""
        seen = "\n".join(self.texts)
        unseen = [w for w in words if not re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", seen)]
        assert not unseen, f"the model would have had to guess {unseen}"

    async def read_guide(self, client: Client) -> str:
        """The server's ``tool-descriptions`` prompt and its tool list, as a host shows them to a model."""
        prompt = await client.get_prompt("tool-descriptions")
        content = prompt.messages[0].content
        assert isinstance(content, types.TextContent)
        tools = (await client.list_tools()).tools
        self.texts += [content.text, json.dumps([t.model_dump(mode="json", by_alias=True) for t in tools])]
        return content.text

    async def ask(self, client: Client, tool: str, /, **args: Any) -> dict[str, Any]:
        """One tool call: its name and every name and string in its arguments seen before; the
        answer checked, then read (added to what the model knows)."""
        answer, _result = await self.ask_for_result(client, tool, **args)
        return answer

    async def ask_for_result(
        self, client: Client, tool: str, /, **args: Any
    ) -> tuple[dict[str, Any], types.CallToolResult]:
        self.assert_told([tool, *words_passed(args)])
        result = await client.call_tool(tool, args)
        answer, text = checked_answer(result, tool)
        assert not self.stray_stdout, self.stray_stdout
        self.texts.append(text)
        return answer, result


def server_params(script: str, workspace: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=console_script(script), args=["--workspace", str(workspace)], env=subprocess_env()
    )


def only(items: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(items) == 1, items
    return items[0]


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert png.startswith(PNG_SIGNATURE) and png[12:16] == b"IHDR", png[:16]
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def write_narrative(cpa: dict[str, Any], stats: dict[str, dict[str, Any]], periods_over_12: int) -> str:
    """What the model writes from the figures it got (the test plays the model here)."""
    when = datetime.fromtimestamp(round(epoch(cpa["time"])), UTC)
    over = "never went over 12 kn" if periods_over_12 == 0 else f"went over 12 kn {periods_over_12} time(s)"
    return (
        f"NELSON and COLLINGWOOD came closest at {when:%H:%M:%S}Z on {when:%Y-%m-%d}, {cpa['range']:.1f} yd apart. "
        f"Mean speeds: NELSON {stats['NELSON']['mean_speed_kn']:.1f} kn, "
        f"COLLINGWOOD {stats['COLLINGWOOD']['mean_speed_kn']:.1f} kn. "
        f"COLLINGWOOD {over} (fastest leg {stats['COLLINGWOOD']['max_speed_kn']:.1f} kn)."
    )


@dataclass(frozen=True)
class Outcome:
    """What the run left for the checks of the files afterwards."""

    selected: list[str]
    cpa_time: str
    annotation_id: str
    narrative: str


def assert_era(client: Client, mode: str) -> None:
    stateless = client.protocol_version >= STATELESS_ERA
    assert stateless == (mode == "auto"), (mode, client.protocol_version)


# -- the request, step by step --------------------------------------------------------------------


async def run_the_request(workspace: Path, mode: str) -> Outcome:
    """The analyst's request as a model carries it out, with the checks of each answer on the way."""
    facts = independent_figures()
    talk = Conversation(texts=[REQUEST, *REP_FILES])  # the analyst's own words, and their files
    async with (
        Client(server_params("debrief-calc-mcp", workspace), mode=mode, message_handler=talk.on_message) as calc,
        Client(server_params("debrief-state-mcp", workspace), mode=mode, message_handler=talk.on_message) as state,
    ):
        assert_era(calc, mode)
        assert_era(state, mode)
        calc_guide = await talk.read_guide(calc)
        state_guide = await talk.read_guide(state)
        assert "import-rep" in calc_guide and "closest-approach" in calc_guide
        assert "debrief_create_plot" in state_guide and "store_llm_result" in state_guide

        # 1. import each REP file: over the cap, so the answer is summaries and a stored ref
        refs = []
        for name in REP_FILES:
            imported = await talk.ask(calc, "run_tool", tool="import-rep", parameters={"path": name})
            assert imported["report"]["errors"] == [] and imported["report"]["track_count"] == 1, imported["report"]
            stored = imported["stored"]
            assert "debrief_create_plot" in stored["use"], stored
            refs.append({"ref": stored["ref"]})

        # 2. the plot, from both refs; it is opened, its time window and view fit the tracks
        made = await talk.ask(state, "debrief_create_plot", filename=PLOT, features=refs)
        assert made["open_plots"] == [PLOT] and len(made["added_ids"]) == 2, made

        # 3. the two track ids, by name, from the plot's feature summaries
        listing = await talk.ask(state, "debrief_get_features", filename=PLOT)
        tracks = {f["name"]: str(f["id"]) for f in listing["features"] if f["kind"] == "track"}
        assert set(tracks) == {"NELSON", "COLLINGWOOD"}, listing
        nelson, collingwood = tracks["NELSON"], tracks["COLLINGWOOD"]

        # 4. closest approach in yards, by plot reference and by the imports' refs: the same answer
        both = {"filename": PLOT, "feature_ids": [nelson, collingwood]}
        in_yards = {"distance_unit": "yd"}
        by_plot = await talk.ask(calc, "run_tool", tool="closest-approach", plot=both, parameters=in_yards)
        by_refs = await talk.ask(calc, "run_tool", tool="closest-approach", features=refs, parameters=in_yards)
        cpa = only(by_plot["features"])["properties"]
        again = only(by_refs["features"])["properties"]
        assert (again["range"], again["time"]) == (cpa["range"], cpa["time"])
        assert cpa["distance_unit"] == "yd" and {cpa["first_id"], cpa["second_id"]} == {nelson, collingwood}
        assert abs(cpa["range"] - facts.cpa_yd) <= 0.5, (cpa["range"], facts.cpa_yd)
        assert abs(epoch(cpa["time"]) - facts.cpa_time) <= 2, (cpa["time"], facts.cpa_time)

        # 5. both tracks' statistics in one call: one result per track
        stats_run = await talk.ask(calc, "run_tool", tool="track-stats", plot=both)
        stats = {f["properties"]["track_name"]: f["properties"]["statistics"] for f in stats_run["features"]}
        assert len(stats_run["features"]) == 2 and set(stats) == {"NELSON", "COLLINGWOOD"}, stats_run
        for name, figures in stats.items():
            assert abs(figures["mean_speed_kn"] - facts.mean_kn[name]) < 0.01, (name, figures, facts)
            assert abs(figures["max_speed_kn"] - facts.max_kn[name]) < 0.01, (name, figures, facts)

        # 6. did COLLINGWOOD go over 12 knots? The parameter's name from describe_tool; answer: no
        described = await talk.ask(calc, "describe_tool", name="speed-filter")
        assert any(p["name"] == "threshold_kn" and p["required"] for p in described["parameters"]), described
        filtered = await talk.ask(
            calc,
            "run_tool",
            tool="speed-filter",
            plot={"filename": PLOT, "feature_ids": [collingwood]},
            parameters={"threshold_kn": 12},
        )
        over_12 = only(filtered["features"])["properties"]
        assert over_12["track_id"] == collingwood and over_12["mode"] == "above", over_12
        assert over_12["period_count"] == 0 and over_12["periods"] == [], over_12
        assert facts.max_kn["COLLINGWOOD"] < 12 < facts.max_kn["NELSON"]  # a real question, a real "no"

        # 7. select both; the time to the closest approach (one plot open: no filename needed)
        selected = await talk.ask(state, "debrief_set_selection", selectedIds=[nelson, collingwood])
        assert selected["selectedIds"] == [nelson, collingwood] and selected["filename"] == PLOT, selected
        timed = await talk.ask(state, "debrief_set_time", timeState={"current": cpa["time"]})
        assert timed["timeState"]["current"] == cpa["time"], timed

        # 8. the picture: all of it, the CPA range line drawn; a PNG of the size the answer says
        shown, result = await talk.ask_for_result(state, "debrief_render_plot", fit="all", cpa=[nelson, collingwood])
        image = only([b.model_dump() for b in result.content if isinstance(b, types.ImageContent)])
        assert image["mime_type"] == shown["mediaType"] == "image/png", (image["mime_type"], shown)
        png = base64.b64decode(image["data"], validate=True)
        assert len(png) == shown["bytes"] and png_size(png) == (shown["width"], shown["height"]), shown
        assert shown["width"] <= 1024 and shown["height"] <= 768, shown
        assert shown["time"] == cpa["time"] and shown["selectedIds"] == [nelson, collingwood], shown

        # 9. the narrative: a bounded prompt, the model's short text, stored and added to the plot
        prompt = await talk.ask(state, "generate_prompt", task="summarize-plot")
        assert prompt["status"] == "prompt_ready" and prompt["callbackTool"] == "store_llm_result", prompt
        brief = prompt["promptForHostLLM"]
        assert "NELSON" in brief and "COLLINGWOOD" in brief and PLOT in brief and len(brief) < 5_000, brief
        assert not re.search(r"\d\.\d{5,}", brief), brief  # a summary: no full-precision coordinates
        narrative = write_narrative(cpa, stats, over_12["period_count"])
        talk.texts.append(narrative)  # the model's own words
        kept = await talk.ask(
            state, prompt["callbackTool"], **prompt["callbackArgs"], result=narrative, add_annotation=True
        )
        annotation = kept["data"]["annotation"]
        assert kept["status"] == "success" and annotation["added"] is True, kept
        assert annotation["id"] in kept["nextAction"], kept
        read_back = await talk.ask(state, "debrief_get_features", ids=[annotation["id"]], detail="full")
        assert only(read_back["features"])["properties"]["text"] == narrative, read_back

        for client in (calc, state):  # a last round trip each: any stray line before it has been seen
            await client.list_tools()
        assert not talk.stray_stdout, talk.stray_stdout
    return Outcome([nelson, collingwood], cpa["time"], annotation["id"], narrative)


async def read_state_afresh(workspace: Path, mode: str) -> tuple[list[str], dict[str, str]]:
    """The plot's selection and time as another client sees them: a new state server process."""
    talk = Conversation()
    params = server_params("debrief-state-mcp", workspace)
    async with Client(params, mode=mode, message_handler=talk.on_message) as state:
        for_plot = {"filename": PLOT}
        selection, _ = checked_answer(await state.call_tool("debrief_get_selection", for_plot), "debrief_get_selection")
        time_state, _ = checked_answer(await state.call_tool("debrief_get_time", for_plot), "debrief_get_time")
        await state.list_tools()
    assert not talk.stray_stdout, talk.stray_stdout
    return selection["selectedIds"], time_state["timeState"]


@pytest.fixture
def rep_workspace(workspace: Path) -> Path:
    """The analyst's folder (a space and a non-ASCII letter in its path) with their two REP files."""
    for name in REP_FILES:
        shutil.copy(DATA / "rep" / name, workspace / name)
    return workspace


@pytest.mark.parametrize("mode", MODES)
async def test_the_analysts_request_over_stdio(rep_workspace: Path, mode: str) -> None:
    """From two REP files to the narrative kept in the plot, through both real servers."""
    with anyio.fail_after(180):
        outcome = await run_the_request(rep_workspace, mode)
        selected, time_state = await read_state_afresh(rep_workspace, mode)

    assert selected == outcome.selected
    assert time_state["current"] == outcome.cpa_time
    plot = json.loads((rep_workspace / PLOT).read_text(encoding="utf-8"))  # valid JSON, whole
    assert plot["type"] == "FeatureCollection"
    by_id = {f.get("id"): f for f in plot["features"]}
    assert set(outcome.selected) <= by_id.keys()
    assert by_id[outcome.annotation_id]["properties"]["text"] == outcome.narrative
    assert by_id["debrief-time-metadata"]["properties"]["current"] == outcome.cpa_time
    assert sorted(p.name for p in rep_workspace.iterdir()) == sorted([".llmem", PLOT, *REP_FILES])
    for name in REP_FILES:
        assert (rep_workspace / name).read_bytes() == (DATA / "rep" / name).read_bytes()


def test_the_independent_figures_are_the_issues() -> None:
    """The GeographicLib reference agrees with the figures the issue quotes (so it checks something)."""
    facts = independent_figures()
    assert abs(facts.cpa_yd - 119.5) < 0.1
    assert datetime.fromtimestamp(facts.cpa_time, UTC).isoformat() == "1995-12-12T10:45:09+00:00"
    assert abs(facts.max_kn["NELSON"] - 12.7) < 0.05 and abs(facts.max_kn["COLLINGWOOD"] - 8.9) < 0.05


async def test_a_stray_stdout_line_is_caught(workspace: Path) -> None:
    """The stdout check can fail: a line that is not a protocol message, printed before the server
    starts, reaches :meth:`Conversation.on_message` (the SDK client itself carries on)."""
    talk = Conversation()
    noisy = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "import os, sys; print('not a protocol message', flush=True); os.execv(sys.argv[1], sys.argv[1:])",
            console_script("debrief-state-mcp"),
            "--workspace",
            str(workspace),
        ],
        env=subprocess_env(),
    )
    with anyio.fail_after(60):
        async with Client(noisy, mode="legacy", message_handler=talk.on_message) as state:
            await state.list_tools()
    assert talk.stray_stdout
