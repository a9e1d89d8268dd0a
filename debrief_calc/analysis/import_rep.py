"""``import-rep``: a legacy REP file (from the workspace, or inline text) as plot features.

The result features are what the file holds: one ``track`` per platform (times in
``properties.timestamps``), narrative entries as ``annotation`` features and
``;CIRCLE:``/``;RECT:``/``;POLY:`` shapes as ``zone`` features, each keeping its own kind. One
``addFeatures`` command carries them all. A track whose speed or course column disagrees with
its positions (legacy files often carry placeholders) gets one warning sentence: every analysis
derives motion from positions and times. The account of the import is not a feature: it is
the run's ``report`` ``{source, line_count, fix_count, narrative_count, track_count,
feature_count, errors: [{line, reason}], skipped: [{line, reason}]}``, where every line that
was not imported is listed with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import KNOT_MPS, Legs, wrap180
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import ValidationFailed
from debrief_calc.formats.rep import parse_rep
from debrief_calc.tracks.features import feature_kind, track_data

REP_SUFFIXES: Final = (".rep", ".dsf", ".dtf")


def _read(inp: ToolInput) -> tuple[str, str]:
    """The REP text and the name of where it came from."""
    path, text = inp.parameters["path"], inp.parameters["text"]
    if (path is None) == (text is None):
        raise ValidationFailed(
            "give exactly one of 'path' (a .rep file in the workspace) and 'text' (REP text)"
            + (", not both" if path is not None else ""),
            details={"field": "path", "rule": "exactly-one-of", "parameters": ["path", "text"]},
        )
    if text is not None:
        return text, "inline text"
    assert isinstance(path, str)
    if not path.lower().endswith(REP_SUFFIXES):
        raise ValidationFailed(
            f"path {path!r} is not a REP file: its name must end in {', '.join(REP_SUFFIXES)}",
            details={"field": "path", "rule": "suffix", "value": path[:200]},
        )
    if inp.read_text is None:
        raise ValidationFailed(
            "this server reads no workspace files: pass the REP content in 'text' instead of 'path'",
            details={"field": "path", "rule": "unavailable"},
        )
    try:
        return inp.read_text(path), path
    except FileNotFoundError:
        raise ValidationFailed(
            f"no file {path!r} in the workspace", details={"field": "path", "rule": "exists", "value": path[:200]}
        ) from None
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            f"{path!r} is not a text file ({exc.reason} at byte {exc.start})",
            details={"field": "path", "rule": "text", "value": path[:200]},
        ) from None
    except IsADirectoryError:
        raise ValidationFailed(
            f"{path!r} is a folder, not a REP file", details={"field": "path", "rule": "file", "value": path[:200]}
        ) from None


#: a speed column is off when its median is further than this from the positions' median leg
#: speed: the larger of 1 kn and a quarter of it (boat1: 2.0 kn stated, 10.8 kn from positions)
_SPEED_SLACK_KN: Final = 1.0
_SPEED_SLACK_SHARE: Final = 0.25
#: a course column is off when it differs from the legs' courses by more than this, in median
_COURSE_SLACK_DEG: Final = 30.0
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
    if courses.size == len(track):
        use = timed & (leg_kn >= _COURSE_MIN_KN) & np.isfinite(legs.course) & np.isfinite(courses[:-1])
        if np.count_nonzero(use) >= 2:
            off = float(np.median(np.abs(wrap180(courses[:-1][use] - legs.course[use]))))
            if off > _COURSE_SLACK_DEG:
                columns.append("the course column")
                evidence.append(f"courses between fixes a median {off:.0f}° away")
    if not columns:
        return None
    verb = "does" if len(columns) == 1 else "do"
    return (
        f"{track.name or track.id}: {' and '.join(columns)} {verb} not match the positions "
        f"({'; '.join(evidence)}): analyses use positions and times"
    )


def handle(inp: ToolInput) -> ToolOutput:
    text, source = _read(inp)
    result = parse_rep(text, source_name=None if source == "inline text" else source)
    features = result.features
    report: dict[str, Any] = {
        "source": source,
        "line_count": result.line_count,
        "fix_count": result.fix_count,
        "narrative_count": result.narrative_count,
        "track_count": sum(1 for f in features if feature_kind(f) == "track"),
        "feature_count": len(features),
        "errors": [{"line": issue.line, "reason": issue.reason, "text": issue.text} for issue in result.errors],
        "skipped": [{"line": issue.line, "reason": issue.reason, "text": issue.text} for issue in result.skipped],
    }
    # Every line accounted for: what was not a fix, an imported annotation, an error or a skip
    # was blank or a comment (a ';' line of no annotation type), which REP allows anywhere.
    imported_annotations = len(features) - report["track_count"]
    report["blank_or_comment_lines"] = max(
        result.line_count - result.fix_count - imported_annotations - len(result.errors) - len(result.skipped), 0
    )
    warnings = []
    if result.errors:
        warnings.append(f"{len(result.errors)} line(s) could not be read: see report.errors")
    if result.skipped:
        warnings.append(f"{len(result.skipped)} annotation line(s) not imported: see report.skipped")
    warnings += [note for f in features if feature_kind(f) == "track" and (note := motion_mismatch(f))]
    commands = [{"command": "addFeatures", "payload": {"features": features}}] if features else []
    if not features:
        warnings.append("nothing to import: no fixes, narratives or shapes were read")
    kind = "rep-file" if source != "inline text" else "rep-text"
    sources = [[{"id": source, "kind": kind}] for _ in features]
    return ToolOutput(features=features, commands=commands, warnings=warnings, report=report, feature_sources=sources)


SPEC = ToolSpec(
    name="import-rep",
    description=(
        "Import a legacy Debrief REP file: 'path' (a .rep file in the workspace) or 'text' (its "
        "content), exactly one. Results: one track per platform (kind track, ISO timestamps), "
        "narratives as annotation features and CIRCLE/RECT/POLY shapes as zone features, each "
        "with its own kind; one addFeatures command carrying them; and the run's 'report' with "
        "line, fix and narrative counts and every line not imported, by line number and reason "
        "(errors: unreadable; skipped: annotation types not imported). Ids: a track is "
        "rep-<platform> (the same platform in two files is the same ship, one id); the rest "
        "rep-<file>-<type>-<n> (inline text: a hash of it), stable across re-imports. Colours "
        "come from the REP symbol's letter as in legacy Debrief; a warning names any track whose "
        "speed or course column disagrees with its positions."
    ),
    version="1.0.0",
    input_kinds=(),
    output_kind="track",
    also_outputs=("annotation", "zone"),
    context_type="none",
    parameters=(
        Parameter("path", "string", "Workspace-relative path of a .rep file (or .dsf/.dtf) to import."),
        Parameter("text", "string", "REP content to import, instead of a path."),
    ),
    handler=handle,
)
