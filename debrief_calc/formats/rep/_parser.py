"""The line loop of :func:`parse_rep`: every line imported, reported or a comment."""

from __future__ import annotations

import re
from typing import Any

from debrief_calc.formats.rep._annotations import (
    Narrative,
    parse_circle,
    parse_narrative,
    parse_poly,
    parse_rect,
    parse_text,
)
from debrief_calc.formats.rep._features import FeatureIds, narrative_feature, slugify, source_scope, track_feature
from debrief_calc.formats.rep._fixes import Track, fast_fix, field_counts, parse_fix
from debrief_calc.formats.rep._results import LineError, NotImported, RepResult, Truncated, line_issue
from debrief_calc.formats.rep._tokens import DateTimeReader

__all__ = ["parse_rep"]

_TYPE_RE = re.compile(r";([A-Za-z][A-Za-z0-9_]*):")
_COLONLESS_TYPES = frozenset({"TRACKSPLIT"})


def _split_lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def parse_rep(text: str, *, source_name: str | None = None) -> RepResult:
    """Parse the text of a REP file.

    Returns one track feature per platform (in order of first appearance, fixes sorted by time,
    equal times in file order), then the annotations in file order: narratives (positioned at
    the nearest fix in time of their platform when that platform has fixes in the file),
    ``;TEXT:`` labels and ``;CIRCLE:``/``;RECT:``/``;POLY:`` zones. Lines that cannot be read are
    in ``errors``; recognised annotation types that are not imported are in ``skipped``.

    Ids are stable across imports of the same file and unique across files: a track is
    ``rep-<platform>`` (the same platform in two files is the same ship, so the same id); every
    other feature is ``rep-<source>-<type>-<n>``, numbered per type in file order, where
    ``<source>`` is ``source_name`` without its suffix, slugged (``exercise/boat1.rep`` ->
    ``exercise-boat1``), or for text with no source name a short hash of the text.
    """
    result = RepResult()
    lines = _split_lines(text)
    result.line_count = len(lines)
    clock = DateTimeReader()
    tracks: dict[str, Track] = {}
    # annotations in file order: a narrative, or a finished feature without an id
    annotations: list[Narrative | tuple[str, dict[str, Any]]] = []
    errors = result.errors
    fix_count = 0

    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line[0] != ";":
            if fast_fix(line, clock, tracks):
                fix_count += 1
                continue
            try:
                name, symbol, layer, fix = parse_fix(line, clock)
            except Truncated as exc:
                count, needed = field_counts(line)
                reason = f"expected at least {needed} fields, got {count} (truncated line?): {exc}"
                errors.append(line_issue(number, raw, reason))
                continue
            except LineError as exc:
                errors.append(line_issue(number, raw, str(exc)))
                continue
            track = tracks.get(name)
            if track is None:
                track = tracks[name] = Track(name, symbol, layer)
            track.add(fix)
            fix_count += 1
            continue

        if line.startswith(";;"):
            continue  # comment
        found = _TYPE_RE.match(line)
        if found is None:
            word = line[1:].split(maxsplit=1)[0] if len(line) > 1 else ""
            if word in _COLONLESS_TYPES:
                result.skipped.append(line_issue(number, raw, f"not imported: {word}"))
            continue  # "; free text" is a comment
        kind = found.group(1).upper()
        rest = line[found.end() :]
        try:
            if kind in ("NARRATIVE", "NARRATIVE2"):
                annotations.append(parse_narrative(rest, kind == "NARRATIVE2", clock))
            elif kind == "TEXT":
                annotations.append(("text", parse_text(rest)))
            elif kind == "CIRCLE":
                annotations.append(("circle", parse_circle(rest, clock)))
            elif kind == "RECT":
                annotations.append(("rect", parse_rect(rest, clock)))
            elif kind == "POLY":
                annotations.append(("poly", parse_poly(rest, clock)))
            else:
                result.skipped.append(line_issue(number, raw, f"not imported: {kind}"))
        except NotImported as exc:
            result.skipped.append(line_issue(number, raw, f"not imported: {exc}"))
        except LineError as exc:
            reason = str(exc)
            if not reason.startswith(kind):
                reason = f"{kind}: {reason}"
            errors.append(line_issue(number, raw, reason))

    ids = FeatureIds()
    features = result.features
    for name, track in tracks.items():
        slug = slugify(name)
        feature_id = ids.take(f"rep-{slug}" if slug else "rep-track")
        features.append(track_feature(track, feature_id, source_name))

    scope = source_scope(source_name, "\n".join(lines))  # line endings and a BOM change no id
    counters: dict[str, int] = {}
    for item in annotations:
        if isinstance(item, Narrative):
            counters["narrative"] = counters.get("narrative", 0) + 1
            feature_id = ids.take(f"rep-{scope}-narrative-{counters['narrative']}")
            feature = narrative_feature(item, feature_id, tracks.get(item.track))
        else:
            prefix, feature = item
            counters[prefix] = counters.get(prefix, 0) + 1
            feature = {"type": "Feature", "id": ids.take(f"rep-{scope}-{prefix}-{counters[prefix]}"), **feature}
        if source_name is not None:
            feature["properties"]["source"] = source_name
        features.append(feature)

    result.fix_count = fix_count
    result.narrative_count = counters.get("narrative", 0)
    return result
