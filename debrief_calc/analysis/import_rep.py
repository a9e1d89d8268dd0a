"""``import-rep``: legacy REP files (from the workspace, or inline text) as plot features.

One call reads one file (``path``), several together (``paths``: a track's ``.rep`` and its
sensors' ``.dsf``) or REP text. The result features are what the files hold: one ``track`` per
platform; one ``sensor`` per sensor and host (:mod:`debrief_calc.formats.hosted.sensors`), its
host found by the name its lines give among the files' tracks and the tracks given beside them
(``features``, refs or a plot), or as ``host`` says; ``;TMA_POS:``/``;TMA_RB:`` solutions as
tracks with ``trackType`` ``tma-solution``; narratives, labels, lines and zones of every other
line, each with its times. One ``addFeatures`` command carries them all. A track whose speed or
course column disagrees with its positions gets one warning sentence. The account of the import
is the run's ``report``: counts (lines, fixes, narratives, cuts, tracks, sensors, solutions),
``errors`` and ``skipped`` (every line not imported, by line and reason; with several files, by
file too), ``directives`` (``;FORMAT_…:`` display settings) and ``files`` (per file, when several).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import KNOT_MPS, Legs, wrap180
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import ValidationFailed
from debrief_calc.formats.hosted.attach import Batch, attach
from debrief_calc.formats.hosted.hosts import Host, HostTracks
from debrief_calc.formats.hosted.records import Where
from debrief_calc.formats.rep import parse_rep
from debrief_calc.tracks.features import feature_kind, track_data

REP_SUFFIXES: Final = (".rep", ".dsf", ".dtf")


def read_workspace_text(inp: ToolInput, path: str, suffixes: tuple[str, ...], noun: str, field: str = "path") -> str:
    """The text of a workspace file the tool was pointed at, or a ValidationFailed that names
    ``field`` and says what to pass instead."""
    if not path.lower().endswith(suffixes):
        raise ValidationFailed(
            f"{field} {path!r} is not a {noun}: its name must end in {', '.join(suffixes)}",
            details={"field": field, "rule": "suffix", "value": path[:200]},
        )
    if inp.read_text is None:
        raise ValidationFailed(
            f"this server reads no workspace files: pass the {noun}'s content in 'text' instead of '{field}'",
            details={"field": field, "rule": "unavailable"},
        )
    try:
        return inp.read_text(path)
    except FileNotFoundError:
        raise ValidationFailed(
            f"no file {path!r} in the workspace", details={"field": field, "rule": "exists", "value": path[:200]}
        ) from None
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            f"{path!r} is not a text file ({exc.reason} at byte {exc.start})",
            details={"field": field, "rule": "text", "value": path[:200]},
        ) from None
    except IsADirectoryError:
        raise ValidationFailed(
            f"{path!r} is a folder, not a {noun}", details={"field": field, "rule": "file", "value": path[:200]}
        ) from None


def _read(inp: ToolInput) -> list[tuple[str, str | None]]:
    """The REP texts and where each came from (None: inline text)."""
    path, paths, text = inp.parameters["path"], inp.parameters.get("paths"), inp.parameters["text"]
    given = [name for name, value in (("path", path), ("paths", paths), ("text", text)) if value is not None]
    if len(given) != 1:
        raise ValidationFailed(
            "give exactly one of 'path' (a .rep/.dsf file in the workspace), 'paths' (several, e.g. a track's .rep "
            "and its sensors' .dsf) and 'text' (REP text)" + (f", not {' and '.join(given)}" if given else ""),
            details={"field": "path", "rule": "exactly-one-of", "parameters": ["path", "paths", "text"]},
        )
    if text is not None:
        return [(text, None)]
    names = [path] if path is not None else paths
    assert isinstance(names, list)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValidationFailed(
            "paths must be a non-empty list of workspace-relative file names",
            details={"field": "paths", "rule": "list of names"},
        )
    if len(set(names)) != len(names):
        raise ValidationFailed("paths names a file twice", details={"field": "paths", "rule": "distinct"})
    field = "path" if path is not None else "paths"
    return [(read_workspace_text(inp, name, REP_SUFFIXES, "REP file", field), name) for name in names]


#: a speed column is off when its median is further than this from the positions' median leg
#: speed: the larger of 1 kn and a quarter of it (boat1: 2.0 kn stated, 10.8 kn from positions)
_SPEED_SLACK_KN: Final = 1.0
_SPEED_SLACK_SHARE: Final = 0.25
#: a course column is off when it differs from the legs' courses by more than this, in median: a
#: heading logged beside GPS fixes keeps within a degree or two of the course made good; the samples'
#: columns are 6.8 and 7.4 deg off, which an analyst comparing them with the tote would ask about
_COURSE_SLACK_DEG: Final = 3.0
#: legs slower than this say little about the course
_COURSE_MIN_KN: Final = 1.0


def _column(values: object) -> np.ndarray[Any, np.dtype[np.float64]]:
    items = values if isinstance(values, list) else []
    return np.array(
        [float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan for v in items],
        dtype=np.float64,
    )


def motion_mismatch(feature: Mapping[str, Any]) -> str | None:
    """One sentence when a track's speed or course column disagrees with its positions and
    times (legacy files often carry placeholder values), else None."""
    try:
        track = track_data(feature)
    except ValidationFailed:
        return None
    legs = Legs(track)
    timed = legs.dt > 0
    if np.count_nonzero(timed) < 2:
        return None
    leg_kn = legs.speed / KNOT_MPS
    derived = float(np.median(leg_kn[timed]))
    props = feature.get("properties") or {}
    columns: list[str] = []
    evidence: list[str] = []
    speeds = _column(props.get("speeds"))
    stated = speeds[np.isfinite(speeds)]
    if stated.size and abs(float(np.median(stated)) - derived) > max(_SPEED_SLACK_KN, _SPEED_SLACK_SHARE * derived):
        low, high = float(stated.min()), float(stated.max())
        given = f"{low:.1f} kn throughout" if low == high else f"median {float(np.median(stated)):.1f} kn"
        columns.append(f"the speed column ({given})")
        evidence.append(f"median {derived:.1f} kn")
    courses = _column(props.get("courses"))
    courses_off = False
    if courses.size == len(track):
        use = timed & (leg_kn >= _COURSE_MIN_KN) & np.isfinite(legs.course) & np.isfinite(courses[:-1])
        if np.count_nonzero(use) >= 2:
            diff = np.abs(wrap180(courses[:-1][use] - legs.course[use]))
            off = float(np.median(diff))
            if off > _COURSE_SLACK_DEG:
                columns.append("the course column")
                courses_off = True
                evidence.append(f"courses between fixes a median {off:.1f}° away, at most {float(np.max(diff)):.1f}°")
    if not columns:
        return None
    verb = "does" if len(columns) == 1 else "do"
    return (
        f"{track.name or track.id}: {' and '.join(columns)} {verb} not match the positions "
        f"({'; '.join(evidence)}): analyses use positions and times"
        + (", so the tote's course is the course between fixes, not the column's" if courses_off else "")
    )


def _issue(where: Where | None, line: int, reason: str, text: str, several: bool, source: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"line": line, "reason": reason, "text": text}
    if several:
        out["source"] = source if source is not None else "inline text"
    return out


def _same_range_warnings(features: list[dict[str, Any]]) -> list[str]:
    """A sensor whose every cut gives one range (simulators write a display length, e.g. 12000)."""
    notes = []
    for f in features:
        props = f["properties"]
        ranges = {r for r in props.get("rangesYd") or [] if r is not None}
        if (
            props.get("kind") == "sensor"
            and len(props["rangesYd"]) > 2
            and len(ranges) == 1
            and None not in props["rangesYd"]
        ):
            notes.append(
                f"sensor {props['name']!r} on {props['hostName']}: every cut gives the same range, {ranges.pop():g} yd: "
                "likely a display length written by a simulator, not a measurement (kept as given in rangesYd)"
            )
    return notes


def _host_candidates(inp: ToolInput, results: list[Any]) -> list[Host]:
    tracks = [f for r in results for f in r.features if feature_kind(f) == "track"]
    given = [f for f in inp.features if feature_kind(f) == "track"]
    return HostTracks.from_features([*tracks, *given])


def handle(inp: ToolInput) -> ToolOutput:
    texts = _read(inp)
    several = len(texts) > 1
    results = [parse_rep(text, source_name=source) for text, source in texts]
    taken: set[str] = set()
    renamed: list[str] = []
    for result in results:  # one id per feature across the files of one call
        for feature in result.features:
            fid = str(feature["id"])
            if fid in taken:
                n = 2
                while f"{fid}-{n}" in taken:
                    n += 1
                feature["id"] = f"{fid}-{n}"
                renamed.append(f"{fid} -> {feature['id']}")
            taken.add(str(feature["id"]))
    batches = [
        Batch(r.scope, source, cuts=r.cuts, solutions=r.solutions, arcs=r.arcs)
        for r, (_text, source) in zip(results, texts, strict=True)
    ]
    built = attach(batches, _host_candidates(inp, results), inp.parameters.get("host"), prefix="rep", taken=taken)
    failed_lines = {(w.source, w.line) for w, _ in built.errors}

    features: list[dict[str, Any]] = []
    sources: list[list[dict[str, Any]]] = []
    files: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    directives: list[dict[str, Any]] = []
    kind_of_source = "rep-text" if texts[0][1] is None else "rep-file"
    for result, made, (_text, source) in zip(results, built.features, texts, strict=True):
        plain = [f for f in result.features if feature_kind(f) == "track"]
        rest = [f for f in result.features if feature_kind(f) != "track"]
        ordered = [*plain, *made, *rest]
        origin = {"id": source or "inline text", "kind": kind_of_source}
        for feature in ordered:
            host = built.host_of.get(str(feature["id"]))
            sources.append([origin, {"id": host, "kind": "track"}] if host else [origin])
        features += ordered
        file_errors = [_issue(None, i.line, i.reason, i.text, several, source) for i in result.errors]
        file_errors += [
            _issue(w, w.line or 0, reason, w.text, several, source) for w, reason in built.errors if w.source == source
        ]
        file_errors.sort(key=lambda e: e["line"])
        errors += file_errors
        skipped += [_issue(None, i.line, i.reason, i.text, several, source) for i in result.skipped]
        directives += [({**d, "source": source or "inline text"} if several else d) for d in result.directives]
        failed = sum(1 for s, _line in failed_lines if s == source)
        imported_lines = result.annotation_lines - failed
        files.append(
            {
                "source": source or "inline text",
                "line_count": result.line_count,
                "fix_count": result.fix_count,
                "narrative_count": result.narrative_count,
                "cut_count": sum(len(f["properties"]["timestamps"]) for f in made if feature_kind(f) == "sensor"),
                "annotation_lines": imported_lines,
                "errors": len(file_errors),
                "skipped": len(result.skipped),
                "blank_or_comment_lines": max(
                    result.line_count - result.fix_count - imported_lines - len(file_errors) - len(result.skipped), 0
                ),
            }
        )
    kinds = Counter(feature_kind(f) for f in features)
    solution_count = sum(1 for f in features if f["properties"].get("trackType") == "tma-solution")
    report: dict[str, Any] = {
        "source": ", ".join(f["source"] for f in files),
        "line_count": sum(f["line_count"] for f in files),
        "fix_count": sum(f["fix_count"] for f in files),
        "narrative_count": sum(f["narrative_count"] for f in files),
        "cut_count": sum(len(f["properties"]["timestamps"]) for f in features if feature_kind(f) == "sensor"),
        "track_count": kinds["track"] - solution_count,
        "sensor_count": kinds["sensor"],
        "solution_count": solution_count,
        "feature_count": len(features),
        "errors": errors,
        "skipped": skipped,
        "directives": directives,
        "blank_or_comment_lines": sum(f["blank_or_comment_lines"] for f in files),
    }
    if several:
        report["files"] = files
    warnings = []
    if errors:
        warnings.append(f"{len(errors)} line(s) could not be read: see report.errors")
    if skipped:
        warnings.append(f"{len(skipped)} annotation line(s) not imported: see report.skipped")
    if renamed:
        warnings.append(
            f"{len(renamed)} feature id(s) repeated across the files were renamed so each is one feature: "
            + ", ".join(renamed[:10])
        )
    warnings += [
        note
        for f in features
        if feature_kind(f) == "track"
        and f["properties"].get("trackType") != "tma-solution"
        and (note := motion_mismatch(f))
    ]
    warnings += _same_range_warnings(features)
    if inp.parameters.get("host") is not None and not built.host_of:
        warnings.append("host was given, but nothing was hosted: the files hold no sensor, solution or arc lines")
    commands = [{"command": "addFeatures", "payload": {"features": features}}] if features else []
    if not features:
        warnings.append("nothing to import: no fixes, cuts, narratives or shapes were read")
    return ToolOutput(features=features, commands=commands, warnings=warnings, report=report, feature_sources=sources)


SPEC = ToolSpec(
    name="import-rep",
    description=(
        "Import legacy Debrief REP files: 'path' (a .rep/.dsf in the workspace), 'paths' (several, e.g. a track "
        "and its sensors' .dsf) or 'text', exactly one. Tracks per platform; sensor cuts (SENSOR/2/3) as one "
        "sensor feature per sensor on its host track; TMA_POS/TMA_RB as tracks with trackType tma-solution; "
        "narratives, labels, lines and zones of every other line; an addFeatures command; the 'report' (counts, "
        "every line not imported with its reason). Sensor lines find their host track by name among the files' "
        "tracks and the features given (a plot or refs); 'host' says which track hosts them when the name "
        "differs (e.g. 'SENSOR' or 'OWNSHIP=SENSOR'). Ids: tracks rep-<platform>, others rep-<file>-<type>-<n>. "
        "A warning names a speed or course column off the positions (median, most): analyses use positions."
    ),
    version="2.0.0",
    input_kinds=("track",),
    output_kind="track",
    also_outputs=("annotation", "zone", "sensor"),
    context_type="none",
    also_accepts=("single", "multi"),
    parameters=(
        Parameter("path", "string", "Workspace-relative path of a .rep file (or .dsf/.dtf) to import."),
        Parameter("paths", "array", "Several workspace files imported together (a track's .rep and its .dsf)."),
        Parameter("text", "string", "REP content to import, instead of a path."),
        Parameter(
            "host",
            "string",
            "The track hosting the sensor/TMA/arc lines (name or id), or NAME=TRACK pairs, comma-separated.",
        ),
    ),
    handler=handle,
)
