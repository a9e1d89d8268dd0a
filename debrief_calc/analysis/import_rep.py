"""``import-rep``: a legacy REP file (from the workspace, or inline text) as plot features.

The result features are what the file holds: one ``track`` per platform (times in
``properties.timestamps``), narrative entries as ``annotation`` features and
``;CIRCLE:``/``;RECT:``/``;POLY:`` shapes as ``zone`` features, each keeping its own kind. One
``addFeatures`` command carries them all. The account of the import is not a feature: it is
the run's ``report`` ``{source, line_count, fix_count, narrative_count, track_count,
feature_count, errors: [{line, reason}], skipped: [{line, reason}]}``, where every line that
was not imported is listed with its reason.
"""

from __future__ import annotations

from typing import Any, Final

from debrief_calc.errors import ValidationFailed
from debrief_calc.features import feature_kind
from debrief_calc.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.rep import parse_rep

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
        "errors": [{"line": issue.line, "reason": issue.reason} for issue in result.errors],
        "skipped": [{"line": issue.line, "reason": issue.reason} for issue in result.skipped],
    }
    warnings = []
    if result.errors:
        warnings.append(f"{len(result.errors)} line(s) could not be read: see report.errors")
    if result.skipped:
        warnings.append(f"{len(result.skipped)} annotation line(s) not imported: see report.skipped")
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
        "(errors: unreadable; skipped: annotation types not imported)."
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
