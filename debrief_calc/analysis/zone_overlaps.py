"""``zone-overlaps``: the times one track was inside a zone while another track was inside a
zone (the same one or another), from the same stays inside as ``zone-transits``."""

from __future__ import annotations

from typing import Any

from debrief_calc.analysis.common import num, result_feature, source_ref
from debrief_calc.analysis.registry import ToolInput, ToolOutput, ToolSpec
from debrief_calc.analysis.zones import ZoneInputs, period_text, visits
from debrief_calc.tracks.features import iso

Span = tuple[float, float]


def _common(a: list[Span], b: list[Span]) -> list[Span]:
    """The spans of time in both lists (each in time order, apart): those of positive length."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _names(items: list[str]) -> str:
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else items[0]


def handle(inp: ToolInput) -> ToolOutput:
    given = ZoneInputs(inp, "zone-overlaps", min_tracks=2)
    stays: dict[tuple[int, int], list[Span]] = {}
    for i, track in given.tracks.items():
        for j, zone in given.zones.items():
            found, _ = visits(track, zone, given.periods[j])
            stays[i, j] = [(entry["_t0"], entry["_t1"]) for entry in found]
    overlaps: list[tuple[float, float, int, int, int, int]] = []
    track_idx = list(given.tracks)
    for n, a in enumerate(track_idx):
        for b in track_idx[n + 1 :]:
            for za in given.zones:
                for zb in given.zones:
                    overlaps += [(s, e, a, za, b, zb) for s, e in _common(stays[a, za], stays[b, zb])]
    overlaps.sort()
    tracks, zones = given.tracks, given.zones
    listed = [
        {
            "first": tracks[a].id,
            "first_zone": zones[za].id,
            "second": tracks[b].id,
            "second_zone": zones[zb].id,
            "start": iso(s),
            "end": iso(e),
            "duration_s": num(e - s, 3),
        }
        for s, e, a, za, b, zb in overlaps
    ]
    inside = {
        i: [{"zone": zones[j].id, "start": iso(s), "end": iso(e)} for j in zones for s, e in stays[i, j]]
        for i in tracks
    }
    props: dict[str, Any] = {
        "overlap_count": len(listed),
        "overlaps": listed,
        "compared": {
            "tracks": [{"id": t.id, "name": t.name, "inside": inside[i]} for i, t in tracks.items()],
            "zones": [{"id": z.id, "name": z.name, "active": period_text(given.periods[j])} for j, z in zones.items()],
        },
    }
    if not listed:
        label = {i: t.name or t.id for i, t in tracks.items()}
        zlabel = {j: z.name or z.id for j, z in zones.items()}
        went_in = [f"{label[i]} ({_names([zlabel[j] for j in zones if stays[i, j]])})" for i in tracks if inside[i]]
        who = (
            "no track was inside any zone"
            if not went_in
            else f"only {went_in[0]} was ever inside one"
            if len(went_in) == 1
            else f"{_names(went_in)} were inside zones, never at the same time"
        )
        props["note"] = (
            f"no track was inside a zone while another track was inside a zone: compared {len(tracks)} tracks "
            f"({_names(list(label.values()))}) in {len(zones)} zones ({_names(list(zlabel.values()))}), "
            f"each zone only while active; {who}"
        )
    sources = [source_ref(f, k) for k, f in enumerate(given.features) if k in tracks or k in zones]
    title = f"Zone overlaps of {len(tracks)} tracks in {len(zones)} zones"
    return ToolOutput(features=[result_feature(title, None, props)], feature_sources=[sources])


SPEC = ToolSpec(
    name="zone-overlaps",
    description=(
        "Given two or more tracks and one or more zones: every interval in which one track was "
        "inside one zone while another track was inside another zone or the same one, as "
        "overlaps [{first, first_zone, second, second_zone, start, end, duration_s}] (track and "
        "zone ids; first is the track given first), in time order. Stays inside are those of "
        "zone-transits (the same geometry: true circles for circle zones, edges crossed between "
        "fixes, each zone counted only while active). compared lists the tracks (with each stay inside "
        "a zone: zone, start, end) and zones (id, name, active: [start, end] with null for an open end, or "
        '"always" for a zone with no time); when there is no overlap '
        "the list is empty and a note says so in words, with what was compared. One result."
    ),
    version="1.0.0",
    input_kinds=("track", "zone"),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(),
    handler=handle,
)
