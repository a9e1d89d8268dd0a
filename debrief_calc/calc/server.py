"""``debrief-calc-mcp``: the analysis methods of :class:`~debrief_calc.Workspace` served as MCP
tools (:mod:`debrief_calc._mcp_tools`), with the server's guide and error shapes."""

from __future__ import annotations

from typing import Any

from debrief_calc._mcp_tools import SCRIPTS, Tool, add_workspace_tools, workspace_of
from debrief_calc._workspace import Workspace
from llmem import __version__
from llmem.core.config import Limits, ServerConfig
from llmem.core.envelope import failure_answer
from llmem.core.errors import SuiteError
from llmem.core.serve import Runtime, SuiteServer, tool_annotations

__all__ = ["build_server"]

INSTRUCTIONS = (
    "debrief-calc runs maritime analysis tools (track statistics, range and bearing, closest approach and every "
    "pass, close quarters, zone transits, speed filter, area summary, resampling, deletion, REP, sensor and .dpf "
    "import, bearing residuals and target motion analysis from sensor cuts) on Debrief "
    "GeoJSON features given "
    'inline, as {"ref"} items from earlier answers, or by plot reference. Discover tools with '
    "list_tools/describe_tool, run them with run_tool, read stored results with get_result; changes to plots "
    "come back as DebriefCommands for debrief-state-mcp to apply."
)


def _purpose(limits: Limits) -> str:
    return f"""Maritime analysis for analysts replaying exercises, on WGS84 geodesy (within 0.5 m of GeographicLib). \
Units: distances in nautical miles unless parameters.distance_unit says m, km, yd (yards), kyd or mi; speeds in \
knots; bearings in true degrees; times ISO-8601 UTC.

Where features come from (run_tool takes one of them):
- features: a list of GeoJSON Features and/or references {{"ref": "debrief-calc:runs/<run id>"}} (all the \
features of an earlier run), {{"ref": "debrief-calc:results/<result id>"}} (one result), \
{{"ref": "debrief-state:plots/<file>.plot.json#<feature id>"}} (one feature of a plot, as debrief_get_features \
gives its ref) or {{"ref": "debrief-state:plots/<file>.plot.json", "ids": [...]}} (a plot's features, all without \
ids), mixed freely;
- plot: {{"filename": "x.plot.json", "feature_ids": [...]}} or {{"filename": ..., "selection": true}} (the selection \
debrief-state-mcp keeps), read from the workspace. From a whole plot (plot without feature_ids or selection, or a \
debrief-state:plots/<file> ref without ids) the features of kinds the tool does not take, metadata and backdrops \
are left out and the answer says so (skipped: {{kind: [ids]}} and a warning); a feature named by id of a kind it \
does not take is refused (KIND_MISMATCH, naming the kinds to pass).

A window: time_start/time_end (ISO-8601, either may be left out) cut every input, however given, to that span: \
tracks keep their fixes inside it plus a fix interpolated exactly at each edge (so 10:00-11:00 is analysed over \
exactly 10:00-11:00), zones, points and notes are kept while active. Without one, a measuring tool (results of \
kind analysis-result) reads what comes from a plot (plot, or debrief-state:plots refs) through the plot's saved \
window (debrief_set_time), as its picture draws it; inline features and debrief-calc refs are read whole. A ref \
may carry its own window: {{"ref": ..., "time_start": ..., "time_end": ...}}. Every answer states the window used: \
window {{start, end, source: "asked" | "plot" (the saved one) | "data" (none: the data's whole period)}}, with \
left_out (ids with nothing in it) and data [start, end] when it left some of the data out (pass those as \
time_start/time_end for all of it); every result's provenance.window says the same (plot.time_start/time_end \
still work; a different pair in both places is refused). Times in answers are to the millisecond and mean that \
instant passed back as a bound; pictures show the nearest second.

From REP files: run_tool(tool="import-rep", parameters={{"path": "boat1.rep"}}) answers one track per platform \
and stored: {{"ref": "debrief-calc:runs/<run id>", "use": ...}}, the reference of the whole run, which its \
addFeatures command carries too (every import and resample-track answer has one). A result over the answer cap \
({limits.answer_chars} characters; a track of a few hundred fixes is) comes as summaries, each with the ref of its \
one result. Then either analyse at once, e.g. \
run_tool(tool="closest-approach", features=[{{"ref": <boat1 ref>}}, {{"ref": <boat2 ref>}}], \
parameters={{"distance_unit": "yd"}}), or make a plot on debrief-state-mcp with \
debrief_create_plot(filename, features=[{{"ref": ...}}, ...]) or debrief_apply_command(<the import's addFeatures \
command>) and analyse it with run_tool(tool, plot={{"filename": ..., "feature_ids": [...]}}).

Sensors and solutions (the submarine analyst's data): import-rep reads ;SENSOR:/;SENSOR2:/;SENSOR3: cuts as one \
feature per sensor, kind "sensor": geometry MultiPoint of each cut's origin; properties name, host (the host track's \
feature id), hostName, and one item per cut in timestamps (ascending), bearings (true, [0, 360)), ambiguousBearings, \
frequencies (Hz), rangesYd, bearingAccuracies, frequencyAccuracies, originGiven (false: the line gave NULL and the \
origin is the host's position then, interpolated), labels, comments, lineTypes, symbols, colours, cutsVisible; and \
stroke, visible, arrayOffsetM, arrayMode, baseFrequency (null from REP). Cut lists are paged with the points. A cut \
needs its host track: import both files at once (parameters.paths: ["track.rep", "cuts.dsf"]) or pass the track \
(features: a ref, or plot: the plot holding it); when the lines name another platform (a .dsf often says OWNSHIP) \
say which track hosts them: parameters.host "SENSOR" or "OWNSHIP=SENSOR". A host that is not found is an error \
naming the tracks there are. ;TMA_POS:/;TMA_RB: become tracks with trackType "tma-solution", host, per-fix \
courses, speeds, depths and ellipses [{{orientation_deg, semiMajorYd, semiMinorYd}} | null] (semi-axes). Every other \
REP line (LINE, VECTOR, BRG, ELLIPSE, WHEEL, POLY, POLYLINE, TEXT, TIMETEXT, PERIODTEXT, DYNAMIC_*, SENSORARC) is a \
line, zone or label with its time; report.skipped holds only lines legacy Debrief does not read, each with why. \
import-dpf reads a legacy .dpf plot (tracks with TMA segments, sensors, solutions, narratives, shapes; \
report.not_converted lists the rest); pass its stored ref to debrief_create_plot to make the .plot.json. To see \
cuts, put them in a plot with their host: debrief-state's debrief_render_plot draws each active cut's bearing line \
(ambiguous dashed) and answers per sensor how many it drew, and the cut times of a sensor in the plot's selection.

A parameter naming a track (primary, secondary) takes its id or its name (any case, when no other track shares it).
Tools: track-stats (per track: distance, duration, mean and max speed, mean course), closest-approach (the least \
range of each pair and every pass: each local range minimum worth the name, between fixes, by a stated rule, with \
both ships' course and speed, relative_speed_kn (the closing speed at the pass, where range_rate is 0) and \
peak_closing_kn on its run-in; lesser_dips: the other minima, which range_trend tells too; a \
least range at the start or end of the data or window is never a CPA: at_edge, cpa_note; crossings: each time the \
second crossed the first's bow or stern, between fixes, from which side to which), close-quarters (the \
periods two tracks were within parameters.threshold, entry and exit between fixes, the least range in each), \
range-bearing (a series with range_rate and rates of turn; its cpa_range is the least range, its passes and \
crossings as closest-approach's), tote (range in yd, bearings, bearing rate, range_rate (kn, + opening), courses, speeds and \
rates of turn of a primary against each other track at one time: parameters.time, else the plot's current time, \
which its saved window always holds; a window asked for without it is refused naming parameters.time; one track: \
that ship's position (with position_dm), course, speed and rate of turn, and at a fix the leg before too), \
speed-filter (periods above or below threshold_kn), track-legs (steady legs, each within its course_tolerance, and \
every turn as a manoeuvre with its rate of turn = turn_deg / duration_s, from the middle of the segment it \
turns from to the middle of the one it turns to; turn_deg is degrees sailed, net_turn_deg the net change of \
course, per track; mark_legs, marks_timed=false to show every mark at once), \
zone-transits, zone-overlaps (who was in one zone while another was in another), area-summary, resample-track, \
delete-features, import-rep, import-dpf, bearing-residuals and tma-solve (sensor cuts, below); describe_tool(name) gives every parameter. Positions in answers also come in degrees and \
minutes (*_dm: 22°07.41'N 021°46.41'W). Tools that change a plot return DebriefCommands for debrief_apply_command \
instead of writing it.

The submarine question ("where was it, what was it doing, how sure are we?") from a sensor's bearing cuts (a sensor feature, above): run_tool(tool="tma-solve", features=[<sensor>, <its host track>]) (parameters.cuts ["5-10", 12, "<ISO time>"] or time_start/time_end pick cuts; target_turns when you know when it turned, else up to max_turns turns are found where one leg stops fitting). Quote its summary. It answers range_observability: observable, weak or not observable (bearings fix range only after ownship manoeuvres: cuts on one steady ownship leg never do); solution {{course, speed_kn, range and bearing from ownship, each with its _sd; position_dm; ellipse: semi-axes at confidence}}, target_legs, turns, residuals, outliers (named, left out), ambiguity (towed array side), ekelund (a quick range check across each ownship turn from the rates just before and after it: quote it only when usable; spoilt_by names a target turn among its cuts or a rate that is not steady). solution is at reference_time (default the last cut, the widest ellipse); solution_least_uncertain is the best-known point: quote both. Each target leg has reliability good|bias-prone (notes: a poorly fixed leg's speed tends to read fast; a speed change at a turn within noise is not real: say so). A towed array's offset: parameters.array_offset_m (metres, astern negative) moves the cut origins the lines left NULL. Not observable: no solution; range_known (bearing, bearing rate, the family of course and speed at each range (parameters.ranges), a range bound for a target under max_speed_kn, at_speed for parameters.speed_kn: "where is it at 12 kn?", an assumption to say as one) and advice (the ownship turn that would fix it): report that, never a range. An ambiguous array with no ownship turn: range_known.side gives both bearings (the side is not settled). One sensor per solve: solve the one whose cuts span an ownship turn, check the other with bearing-residuals against that solution (residual_side names the array's side), then solve the array with parameters.side. A solution comes as a tma-solution track (per-fix ellipses) with an addFeatures command for debrief_apply_command; every tool takes it. Check it with stacked dots: render_series(features=[<sensor>, <solution track or its ref>, <host track>]) draws each cut's bearing error above ownship's course (legs shaded) and answers residuals.verdict (flat: fits; a slope over an ownship leg: course or speed off; a step at an ownship turn: range off; read over the cuts that are not outliers, which it names, with rms_error_clean beside rms_error; with frequencies, a frequency trend or, f0 given, a steady offset: speed off; f0_sd_hz counts the candidate's SDs when it is a solution; an ambiguous array: the verdict reads the side that fits, residual_side, and the dots draw it first); run_tool(tool="bearing-residuals") gives the per-cut numbers (series), any track as the candidate (truth, a solution), frequencies and an ambiguous side.

Pictures (no plot-state server needed): render_series(features=[{{"ref": <a range-bearing result>}}]) draws its properties.series as stacked panels against time, Debrief's time-variable plots: quantities (default range, bearing, bearing_rate; any numeric column: range_rate, primary_course, secondary_speed, primary_rate_of_turn...; an unknown one is refused with the list), each panel named for whose it is ("NELSON course (°T)") and, for a signed one, which sign is which ("Bearing rate (°/min, + drawing right)", range_rate + opening, rate of turn + to starboard); an axis spans its values, not from zero (parameters.y_range {{"range": [low, high]}}, either may be null, sets a panel's; what falls outside is cut at the panel's edge). Given tracks instead (features, or plot as for run_tool, cut to the same window as run_tool's: answer.window), it runs range-bearing on the primary's fixes (parameters: primary, secondary, distance_unit), keeps that result (answer.source.ref) and draws every quantity between fixes (answer.curve: every fix both sides, two points a pixel column, round every mark), so a rate's curve reaches the peak it labels; one track gives its speed, course and rate_of_turn (steps at its fixes). A stored result's line is drawn through the true values its samples miss (panel.through). Marked: the CPA (cpa_time, else found between fixes, else the sampled min_range_time, which the answer says; a least range at the start or end of the span is labelled "Closest ... (range opening/closing)", cpa.edge, not CPA), every other pass (answer.passes, orange), the peak bearing rate between fixes (a red diamond) and each signed panel's other extreme, close quarters shaded: a close-quarters result given among features (its pair's periods) or parameters.close_quarters (a threshold in distance_unit: close-quarters run and kept, answer.close_quarters.ref). narratives=[annotations with a time, or {{"ref"}}] (by default the plot's narrative entries and notes, timed annotations with no geometry or a point, of the plot read: plot, or debrief-state:plots refs to one plot) are marked and labelled where they fit; parameters.width/height in pixels (900 wide). The answer: the PNG, and panels (label with unit, axis, min, max; extrema "sampled" (the series' rows) or "curve" (between fixes); extremes [{{kind max/min, value, time, label, side, at_fix (which leg's value at a fix), marked}}]: a signed quantity's largest positive and negative each marked and labelled with its time; and beside them the true ones between fixes where the result has them: true_min of range (the CPA), true_peak of bearing_rate {{value, time, label, between_samples}}; outside_span: true when the span drawn leaves it out), span, samples, cpa {{time, range, unit, label, source}}, passes [{{pass, time, range, bearing, is_cpa, label, labelled}}], close_quarters {{threshold, unit, periods, ref}}, narratives {{given, marked, marked_at, labelled, outside_span, untimed, untimed_ids, from_plot}}: every entry given is marked, outside_span or untimed, others (the other secondaries' result refs).
parameters.picture "relative-motion" draws the same two tracks (or a range-bearing result) as the analyst's relative plot instead: the secondary where range and true bearing from the primary put it, ownship at the centre, north up, range rings in distance_unit (parameters.max_range: the outer ring, to look closer; the rest is cut there, answer.track says how much), bearing ticks, times along the track, its start and end, the CPA (a red line from the centre) and every pass marked, close quarters in orange; 800 x 800 by default. Its answer: scale {{centre [x, y] px, px_per_unit, unit, outer_ring, ring_step}} (a contact at range R on bearing B is at centre + px_per_unit x (R sin B, -R cos B)), track, time_marks, cpa, passes, close_quarters, window, source; suggest {{max_range, note}} when the CPA is under a tenth of the outer ring (draw again with it). quantities, narratives and y_range are the time plot's: refused with it.

Results: every result feature carries properties.provenance and is kept in the store as \
{{"ref": "debrief-calc:results/<its id>"}}. get_result(ref, cursor?) reads any reference back (or a result id), \
in pages within the cap (kinds=["annotation"]: only annotations, such as an import's narratives); a feature \
too big for one answer comes in parts of its points (part: {{"points": [a, b], "of": N}}) or of its longest list \
of figures (part: {{"items": [a, b], "of": N, "at": ...}}), to be concatenated in order. \
get_result(ref, format="csv"|"tsv"|"markdown") gives range-bearing results as legacy Debrief's copied table, \
Time, Depth, Speed, Course (the secondary's), Range (yd), Bearing, Brg Rate, in pages cut between rows (csv/tsv: \
one result). An analysis answer's keep spells out the debrief_apply_command call that adds its results to a plot."""


def _protocol(limits: Limits) -> str:
    return (
        "The server never calls a model. generate_prompt(target=<a result id, or a list of ids>, "
        "task='narrate-result' (one result) or 'summarize-analysis' (several), time_start?/time_end? (a window to "
        "tell about: the prompt says it and keeps only the series rows inside it)) answers 'prompt_ready' with "
        "promptForHostLLM (the results' figures: a short series as a table of every row, a long one summarised "
        "with the rows left out counted) and callbackArgs; run the prompt with your model and "
        "call store_llm_result(**callbackArgs, result=<Markdown>). A rejected answer can be corrected and sent again "
        f"on the same ticket, {limits.max_steps} attempts in all, within {limits.ticket_ttl_s} s; if the results "
        "changed meanwhile it is refused with SOURCE_CHANGED. store_llm_result answers the narrative's ref "
        "(debrief-calc:results/<id>/narrative, or debrief-calc:analyses/<hash>/summary); get_result(ref) reads it back."
    )


def _contract_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    return {"success": False, "error": err.to_dict(), "duration_ms": duration_ms}


def _envelope_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The callback pair's failure: ``{success: false, error, nextAction}`` like the other tools."""
    return failure_answer(err)


def build_server(config: ServerConfig) -> SuiteServer:
    runtime = Runtime(config)
    server = SuiteServer(
        runtime,
        name="debrief-calc-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        purpose=_purpose(runtime.limits),
        protocol_notes=_protocol(runtime.limits),
        error_payload=_contract_error,
        argument_error_code="VALIDATION_FAILED",
        guide_sections=[("From Python scripts", SCRIPTS)],
    )
    read = tool_annotations(read_only=True)
    ws = Workspace
    tools = [
        Tool(
            "list_tools",
            ws.list_tools,
            read,
            "The analysis tools, optionally filtered by context or input kinds.",
        ),
        Tool(
            "describe_tool",
            ws.describe_tool,
            read,
            "One analysis tool with every parameter (type, default, choices, unit).",
        ),
        Tool(
            "run_tool",
            ws.run_tool,
            read,
            "Run an analysis tool on features (inline or {ref} items) or a plot, within "
            "time_start/time_end (ISO) if given; answers results and DebriefCommands.",
        ),
        Tool(
            "get_result",
            ws.get_result,
            read,
            "Read any ref an answer gave (a run, a result, a narrative) or a result id, paged: pass "
            "next_cursor for the next page.",
        ),
        Tool(
            "render_series",
            ws.render_series,
            read,
            "PNG time or relative-motion plot of a range-bearing result or tracks; CPA, passes marked.",
        ),
        Tool(
            "generate_prompt",
            ws.generate_analysis_prompt,
            read,
            "A prompt for your model to narrate one result or summarise several.",
            error_payload=_envelope_error,
        ),
        Tool(
            "store_llm_result",
            ws.store_analysis_llm_result,
            tool_annotations(read_only=False),
            "Check and store your model's narrative for a generate_prompt ticket.",
            error_payload=_envelope_error,
        ),
    ]
    add_workspace_tools(server, workspace_of(runtime), tools)
    return server
