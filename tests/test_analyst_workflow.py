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
import io
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
    "closest approach, show me a picture, and keep a short narrative in the plot. "
    "Then the tote at 10:30; NELSON's legs, marked in the plot; range and bearing every ten minutes "
    "from 10:00 to 11:00, with a picture of the series; NELSON alone in a second plot, nelson.plot.json; "
    "and a picture of the plot over 10:00 to 11:00."
)
REP_FILES = ("valid_boat1.rep", "valid_boat2.rep")  # NELSON, COLLINGWOOD
PLOT = "exercise.plot.json"
SECOND_PLOT = "nelson.plot.json"
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


def range_and_bearing(a: list[Fix], b: list[Fix], t: float) -> tuple[float, float]:
    """(geodesic range in metres, true bearing in degrees) from ``a`` to ``b`` at ``t``."""
    (lat_a, lon_a), (lat_b, lon_b) = position_at(a, [f[0] for f in a], t), position_at(b, [f[0] for f in b], t)
    line = Geodesic.WGS84.Inverse(lat_a, lon_a, lat_b, lon_b)
    return line["s12"], line["azi1"] % 360


def peak_bearing_rate(a: list[Fix], b: list[Fix], start: float, end: float) -> tuple[float, float]:
    """(degrees per minute, epoch seconds) of the fastest change of the bearing from ``a`` to ``b``
    between ``start`` and ``end``: central differences of GeographicLib bearings 0.1 s apart."""
    step, best = 0.1, (0.0, start)
    for k in range(round((end - start) / step) + 1):
        t = start + k * step
        turned = (range_and_bearing(a, b, t + step / 2)[1] - range_and_bearing(a, b, t - step / 2)[1] + 180) % 360 - 180
        rate = turned / (step / 60)
        if abs(rate) > abs(best[0]):
            best = (rate, t)
    return best


def day_at(hhmm: str) -> float:
    """Epoch seconds of ``HH:MM`` UTC on the exercise's day (12 December 1995)."""
    return datetime.fromisoformat(f"1995-12-12T{hhmm}:00+00:00").timestamp()


@dataclass(frozen=True)
class Independent:
    cpa_yd: float
    cpa_time: float  # epoch seconds
    mean_kn: dict[str, float]
    max_kn: dict[str, float]
    tote_yd: float  # NELSON to COLLINGWOOD at 10:30
    tote_bearing: float
    peak_rate: float  # degrees per minute, NELSON to COLLINGWOOD, 10:40-10:50
    peak_rate_time: float


@cache
def independent_figures() -> Independent:
    """The request's figures, computed once from the REP files without any of our code."""
    tracks = dict(read_rep_fixes(DATA / "rep" / name) for name in REP_FILES)
    metres, when = closest_approach_by_sampling(tracks["NELSON"], tracks["COLLINGWOOD"])
    speeds = {name: mean_and_max_speed_kn(fixes) for name, fixes in tracks.items()}
    tote_m, tote_bearing = range_and_bearing(tracks["NELSON"], tracks["COLLINGWOOD"], day_at("10:30"))
    rate, rate_time = peak_bearing_rate(tracks["NELSON"], tracks["COLLINGWOOD"], day_at("10:40"), day_at("10:50"))
    return Independent(
        cpa_yd=metres / YARD_M,
        cpa_time=when,
        mean_kn={name: mean for name, (mean, _) in speeds.items()},
        max_kn={name: fastest for name, (_, fastest) in speeds.items()},
        tote_yd=tote_m / YARD_M,
        tote_bearing=tote_bearing,
        peak_rate=rate,
        peak_rate_time=rate_time,
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

    async def learn_parameter(self, calc: Client, tool: str, name: str) -> None:
        """``describe_tool``: the analysis tool takes a parameter of that name (the model learns it)."""
        described = await self.ask(calc, "describe_tool", name=tool)
        assert any(p["name"] == name for p in described["parameters"]), described

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
    copied: str  # the id of NELSON's track, copied into the second plot


def assert_era(client: Client, mode: str) -> None:
    stateless = client.protocol_version >= STATELESS_ERA
    assert stateless == (mode == "auto"), (mode, client.protocol_version)


# -- the analyst's instruments: the tote, the legs, a window, a series picture, plot to plot ----------


#: NELSON's legs the issue quotes around the encounter: (start, end, course) to the minute and degree.
NELSON_LEGS = [
    (None, "10:10", {334}),
    ("10:11", "10:29", {277, 278}),
    ("10:32", "10:35", {67}),
    ("10:37", "10:40", {142}),
]


def hhmm(iso: str) -> str:
    return iso[11:16]


def clock(iso: str) -> str:
    """``HH:MM:SS`` of an ISO-8601 time, to the nearest second."""
    return f"{datetime.fromtimestamp(round(epoch(iso)), UTC):%H:%M:%S}"


async def read_whole(talk: Conversation, calc: Client, ref: str) -> list[dict[str, Any]]:
    """A stored result read back with get_result, following next_cursor to the end."""
    page = await talk.ask(calc, "get_result", ref=ref)
    features = list(page["features"])
    while page.get("next_cursor"):
        page = await talk.ask(calc, "get_result", ref=ref, cursor=page["next_cursor"])
        features += page["features"]
    assert len(features) == page["total"], page
    return features


def leg_course(fixes: list[Fix], start: str, end: str) -> float:
    """The true azimuth (GeographicLib) from the fix at ``start`` to the fix at ``end`` (HH:MM)."""
    by_time = {datetime.fromtimestamp(t, UTC).strftime("%H:%M"): (lat, lon) for t, lat, lon in fixes}
    (lat0, lon0), (lat1, lon1) = by_time[start], by_time[end]
    return float(Geodesic.WGS84.Inverse(lat0, lon0, lat1, lon1)["azi1"]) % 360


def decoded_png(result: types.CallToolResult, answer: dict[str, Any]) -> bytes:
    """The one image of an answer: a PNG that Pillow decodes, of the size and length the answer says."""
    from PIL import Image

    image = only([b.model_dump() for b in result.content if isinstance(b, types.ImageContent)])
    assert image["mime_type"] == answer["mediaType"] == "image/png", (image["mime_type"], answer)
    png = base64.b64decode(image["data"], validate=True)
    assert len(png) == answer["bytes"] and png_size(png) == (answer["width"], answer["height"]), answer
    with Image.open(io.BytesIO(png)) as picture:
        picture.load()  # the whole image decodes, not only its header
        assert picture.format == "PNG" and picture.size == (answer["width"], answer["height"])
    return png


async def the_instruments(
    talk: Conversation,
    calc: Client,
    state: Client,
    refs: list[dict[str, str]],
    cpa: dict[str, Any],
    nelson: str,
    collingwood: str,
) -> str:
    """The request's second half: the tote at 10:30, NELSON's legs marked in the plot, range and
    bearing every ten minutes over 10:00-11:00 on the imports' refs and its picture, NELSON copied
    into a second plot by reference, and the plot drawn over the window. Answers NELSON's id."""
    facts = independent_figures()
    tracks = dict(read_rep_fixes(DATA / "rep" / name) for name in REP_FILES)
    day = cpa["time"][:10]  # the exercise's day, from an answer; the hours are the analyst's
    at_1030, start, end = (f"{day}T{hm}:00Z" for hm in ("10:30", "10:00", "11:00"))
    talk.texts.append(f"{at_1030} {start} {end}")  # the model's own words: the times it composed

    # 10. the tote at 10:30 by plot reference: range in yards, true bearing
    await talk.learn_parameter(calc, "tote", "time")
    both = {"filename": PLOT, "feature_ids": [nelson, collingwood]}
    toted = await talk.ask(calc, "run_tool", tool="tote", plot=both, parameters={"time": at_1030})
    tote = only(toted["features"])["properties"]
    assert (tote["primary_id"], tote["secondary_id"], tote["time"]) == (nelson, collingwood, at_1030), tote
    assert tote["distance_unit"] == "yd" and tote["time_source"] == "parameters.time", tote
    assert round(tote["range"]) == 4033 and round(tote["bearing"], 1) == 112.7, tote
    assert abs(tote["range"] - facts.tote_yd) < 0.5 and abs(tote["bearing"] - facts.tote_bearing) < 0.01, (tote, facts)

    # 11. NELSON's legs, marked in the plot with the answer's addFeatures command
    await talk.learn_parameter(calc, "track-legs", "mark_legs")
    legged = await talk.ask(
        calc,
        "run_tool",
        tool="track-legs",
        plot={"filename": PLOT, "feature_ids": [nelson]},
        parameters={"mark_legs": True},
    )
    # over the cap: summaries (the legs result's, then one per leg mark), each with its ref
    summary = only([f for f in legged["features"] if "legs" in f.get("properties", {})])
    (result,) = await read_whole(talk, calc, summary["ref"])
    legs = result["properties"]["legs"]
    assert result["properties"]["track_id"] == nelson and len(legs) == result["properties"]["leg_count"], result
    for want_start, want_end, courses in NELSON_LEGS:
        leg = next(g for g in legs if hhmm(g["end"]) == want_end)
        assert want_start is None or hhmm(leg["start"]) == want_start, leg
        assert round(leg["course"]) in courses, leg
        # the leg's mean course and GeographicLib's azimuth from its first fix to its last agree
        assert abs(leg["course"] - leg_course(tracks["NELSON"], hhmm(leg["start"]), hhmm(leg["end"]))) < 2, leg
    (command,) = legged["commands"]
    assert command["command"] == "addFeatures", command
    marked = await talk.ask(state, "debrief_apply_command", command=command, filename=PLOT)
    assert len(marked["added_ids"]) == len(legs), marked
    listing = await talk.ask(state, "debrief_get_features", filename=PLOT, ids=marked["added_ids"])
    names = [f["name"] for f in listing["features"]]
    assert all(name.startswith("NELSON leg ") for name in names) and len(names) == len(legs), names

    # 12. range and bearing every 600 s on the imports' refs, windowed 10:00-11:00: exactly 7 samples
    await talk.learn_parameter(calc, "range-bearing", "interval_s")
    series_run = await talk.ask(
        calc,
        "run_tool",
        tool="range-bearing",
        features=refs,
        time_start=start,
        time_end=end,
        parameters={"interval_s": 600, "distance_unit": "yd"},
    )
    stated = series_run["window"]
    assert (stated["start"], stated["end"], stated["source"], "left_out" in stated) == (start, end, "asked", False)
    rb = only(series_run["features"])
    props = rb["properties"]
    times = props["series"]["time"]
    assert times == [f"{day}T10:{m}0:00Z" for m in range(6)] + [end], times
    assert props["sample_count"] == 7 and props["provenance"]["window"] == {
        "start": start,
        "end": end,
        "source": "asked",
    }
    assert abs(props["series"]["range"][3] - tote["range"]) < 0.01  # 10:30: the tote's figure
    assert round(props["cpa_range"], 1) == 119.5 and clock(props["cpa_time"]) == "10:45:09"
    assert abs(props["cpa_range"] - facts.cpa_yd) < 0.5 and abs(epoch(props["cpa_time"]) - facts.cpa_time) < 1
    assert round(props["peak_bearing_rate"], 1) == -108.6 and props["peak_bearing_rate_side"] == "L", props
    assert clock(props["peak_bearing_rate_time"]) == "10:44:53", props["peak_bearing_rate_time"]
    assert abs(props["peak_bearing_rate"] - facts.peak_rate) < 0.1, (props["peak_bearing_rate"], facts.peak_rate)
    assert abs(epoch(props["peak_bearing_rate_time"]) - facts.peak_rate_time) < 1, props["peak_bearing_rate_time"]

    # 13. the series picture of that stored result (its ref from the answer's keep), the CPA marked
    result_ref = f"debrief-calc:results/{rb['id']}"
    assert result_ref in series_run["keep"], series_run["keep"]
    drawn, image = await talk.ask_for_result(calc, "render_series", features=[{"ref": result_ref}])
    decoded_png(image, drawn)
    assert drawn["samples"] == 7 and drawn["span"] == [start, end], drawn
    assert [p["quantity"] for p in drawn["panels"]] == ["range", "bearing", "bearing_rate"], drawn["panels"]
    marked_cpa = drawn["cpa"]
    assert (marked_cpa["time"], marked_cpa["range"], marked_cpa["unit"]) == (
        props["cpa_time"],
        props["cpa_range"],
        "yd",
    )
    assert "119.5 yd" in marked_cpa["label"] and "10:45:09" in marked_cpa["label"], marked_cpa

    # 14. NELSON into a second plot by its plot reference: the copy is the same feature
    found = await talk.ask(state, "debrief_get_features", filename=PLOT, ids=[nelson])
    track_ref = only(found["features"])["ref"]
    assert track_ref == f"debrief-state:plots/{PLOT}#{nelson}", track_ref
    second = await talk.ask(state, "debrief_create_plot", filename=SECOND_PLOT, features=[{"ref": track_ref}])
    assert second["added_ids"] == [nelson] and second["added_refs"] == [f"debrief-state:plots/{SECOND_PLOT}#{nelson}"]

    # 15. the plot drawn over 10:00-11:00 only, framed to what the tracks cover in it
    shown, picture = await talk.ask_for_result(
        state,
        "debrief_render_plot",
        filename=PLOT,
        time_start=start,
        time_end=end,
        fit="window",
        cpa=[nelson, collingwood],
    )
    decoded_png(picture, shown)
    assert shown["span"] == [start, end] and not shown.get("outside_window"), shown
    assert shown["time"] == cpa["time"] and shown["width"] <= 1024 and shown["height"] <= 768, shown
    return nelson


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

        copied = await the_instruments(talk, calc, state, refs, cpa, nelson, collingwood)

        for client in (calc, state):  # a last round trip each: any stray line before it has been seen
            await client.list_tools()
        assert not talk.stray_stdout, talk.stray_stdout
    return Outcome([nelson, collingwood], cpa["time"], annotation["id"], narrative, copied)


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
    legs = [f for f in plot["features"] if str(f["properties"].get("name", "")).startswith("NELSON leg ")]
    assert len(legs) > 4, [f["properties"].get("name") for f in plot["features"]]
    second = json.loads((rep_workspace / SECOND_PLOT).read_text(encoding="utf-8"))
    copies = [f for f in second["features"] if f.get("id") == outcome.copied]
    assert copies == [by_id[outcome.copied]]  # the same feature, every property and coordinate
    assert sorted(p.name for p in rep_workspace.iterdir()) == sorted([".llmem", PLOT, SECOND_PLOT, *REP_FILES])
    for name in REP_FILES:
        assert (rep_workspace / name).read_bytes() == (DATA / "rep" / name).read_bytes()


def test_the_independent_figures_are_the_issues() -> None:
    """The GeographicLib reference agrees with the figures the issue quotes (so it checks something)."""
    facts = independent_figures()
    assert abs(facts.cpa_yd - 119.5) < 0.1
    assert datetime.fromtimestamp(facts.cpa_time, UTC).isoformat() == "1995-12-12T10:45:09+00:00"
    assert abs(facts.max_kn["NELSON"] - 12.7) < 0.05 and abs(facts.max_kn["COLLINGWOOD"] - 8.9) < 0.05
    assert round(facts.tote_yd) == 4033 and round(facts.tote_bearing, 1) == 112.7
    assert round(facts.peak_rate, 1) == -108.6
    assert datetime.fromtimestamp(round(facts.peak_rate_time), UTC).isoformat() == "1995-12-12T10:44:53+00:00"


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
