"""``delete-features``: a ``deleteFeatures`` command for the given features."""

from __future__ import annotations

from debrief_calc.analysis.registry import ANY_KIND, ToolInput, ToolOutput, ToolSpec
from debrief_calc.tracks.features import feature_id


def handle(inp: ToolInput) -> ToolOutput:
    ids = list(dict.fromkeys(feature_id(f, index=i) for i, f in enumerate(inp.features)))
    return ToolOutput(commands=[{"command": "deleteFeatures", "payload": {"ids": ids}}])


SPEC = ToolSpec(
    name="delete-features",
    description=(
        "A deleteFeatures command for the given features (one or more, of any kind), ids as "
        "strings; the state server applies it. No result features."
    ),
    version="1.0.0",
    input_kinds=(ANY_KIND,),
    output_kind=None,
    context_type="single",
    also_accepts=("multi",),
    parameters=(),
    handler=handle,
)
