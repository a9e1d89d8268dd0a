"""``import-dpf``: a legacy Debrief ``.dpf`` plot (XML, from the workspace or inline) as plot features.

The sibling of ``import-rep``: tracks (TMA segments kept in ``segments``; ``trackType``
``tma-solution`` for a solution track, ``planned`` for a composite track's legs), sensors with
their contacts (one sensor feature each, the shape ``import-rep`` gives), ``<tma>`` solutions as
tma-solution tracks, narratives, shapes and labels, dynamic coverage as zones; one
``addFeatures`` command carrying them (its stored ref is what ``debrief_create_plot`` takes to
make the ``.plot.json``). The ``report`` lists what was not converted (chart furniture, external
files, the legacy view's settings) with the reason and every element that could not be read.
XML is read with ``defusedxml``: a file declaring a DTD or entities, or referring outside itself,
is refused."""

from __future__ import annotations

from collections import Counter
from typing import Any

from debrief_calc.analysis.import_rep import read_workspace_text
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import ValidationFailed
from debrief_calc.formats.dpf import DPF_SUFFIXES, parse_dpf
from debrief_calc.formats.hosted.attach import attach
from debrief_calc.formats.hosted.hosts import HostTracks
from debrief_calc.tracks.features import feature_kind


def _read(inp: ToolInput) -> tuple[str, str | None]:
    path, text = inp.parameters["path"], inp.parameters["text"]
    if (path is None) == (text is None):
        raise ValidationFailed(
            "give exactly one of 'path' (a .dpf file in the workspace) and 'text' (its XML)"
            + (", not both" if path is not None else ""),
            details={"field": "path", "rule": "exactly-one-of", "parameters": ["path", "text"]},
        )
    if text is not None:
        return text, None
    return read_workspace_text(inp, path, DPF_SUFFIXES, "Debrief plot file (.dpf)"), path


def handle(inp: ToolInput) -> ToolOutput:
    text, source = _read(inp)
    result = parse_dpf(text, source_name=source)
    tracks = [f for f in result.features if feature_kind(f) == "track"]
    rest = [f for f in result.features if feature_kind(f) != "track"]
    taken = {str(f["id"]) for f in result.features}
    built = attach([result.batch], HostTracks.from_features(tracks), None, prefix="dpf", taken=taken)
    made = built.features[0]
    # a solution track's relative segments name their host by name: give its id too
    by_name = {f["properties"]["name"]: str(f["id"]) for f in tracks}
    for track in tracks:
        host = track["properties"].get("hostName")
        if host in by_name:
            track["properties"]["host"] = by_name[host]
    features = [*tracks, *made, *rest]
    origin = {"id": source or "inline text", "kind": "dpf-file" if source else "dpf-text"}
    sources = [
        [origin, {"id": built.host_of[str(f["id"])], "kind": "track"}] if str(f["id"]) in built.host_of else [origin]
        for f in features
    ]
    errors = list(result.errors) + [{"element": w.text, "reason": reason} for w, reason in built.errors]
    kinds = Counter(feature_kind(f) for f in features)
    solutions = sum(1 for f in features if f["properties"].get("trackType") == "tma-solution")
    report: dict[str, Any] = {
        "source": source or "inline text",
        "track_count": kinds["track"] - solutions,
        "solution_count": solutions,
        "fix_count": sum(len(f["properties"]["timestamps"]) for f in tracks),
        "sensor_count": kinds["sensor"],
        "cut_count": sum(len(f["properties"]["timestamps"]) for f in made if feature_kind(f) == "sensor"),
        "narrative_count": sum(1 for f in rest if f["properties"].get("annotationType") == "comment"),
        "shape_count": sum(1 for f in rest if f["properties"].get("annotationType") != "comment"),
        "feature_count": len(features),
        "not_converted": result.not_converted,
        "errors": errors,
    }
    if result.current_time:
        report["current_time"] = result.current_time
    warnings = []
    if errors:
        warnings.append(f"{len(errors)} element(s) could not be read: see report.errors")
    if result.not_converted:
        listed = ", ".join(f"{n['element']} ({n['count']})" for n in result.not_converted)
        warnings.append(f"not converted (views and references, not data): {listed}; see report.not_converted")
    commands = [{"command": "addFeatures", "payload": {"features": features}}] if features else []
    if not features:
        warnings.append("nothing to import: the plot holds no tracks, sensors, narratives or shapes")
    return ToolOutput(features=features, commands=commands, warnings=warnings, report=report, feature_sources=sources)


SPEC = ToolSpec(
    name="import-dpf",
    description=(
        "Import a legacy Debrief plot (.dpf XML): 'path' (a .dpf/.xml in the workspace) or 'text', exactly one. "
        "Tracks (TMA segments listed; trackType tma-solution), sensors with their cuts (one sensor feature each), "
        "TMA solutions, narratives, shapes and labels as features, and an addFeatures command whose stored ref "
        "debrief_create_plot takes to make the .plot.json. The report lists what was not converted, with the "
        "reason. XML with a DTD, entities or external references is refused."
    ),
    version="1.0.0",
    input_kinds=(),
    output_kind="track",
    also_outputs=("annotation", "zone", "sensor"),
    context_type="none",
    parameters=(
        Parameter("path", "string", "Workspace-relative path of a .dpf (or .xml) plot to import."),
        Parameter("text", "string", "The .dpf XML to import, instead of a path."),
    ),
    handler=handle,
)
