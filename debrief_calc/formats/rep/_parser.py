"""The line loop of :func:`parse_rep`: every line imported, reported or a comment."""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from typing import Any

from debrief_calc.formats.hosted.records import Where
from debrief_calc.formats.rep._annotations import (
    Narrative,
    parse_circle,
    parse_narrative,
    parse_poly,
    parse_rect,
    parse_text,
)
from debrief_calc.formats.rep._directives import DIRECTIVES, apply_directives, parse_directive
from debrief_calc.formats.rep._features import FeatureIds, narrative_feature, slugify, source_scope, track_feature
from debrief_calc.formats.rep._fixes import Track, fast_fix, field_counts, parse_fix
from debrief_calc.formats.rep._hosted_lines import fast_sensor, parse_arc, parse_sensor, parse_solution
from debrief_calc.formats.rep._results import LineError, NotImported, RepResult, Truncated, line_issue
from debrief_calc.formats.rep._shapes import (
    DynamicShape,
    parse_brg,
    parse_dynamic,
    parse_ellipse,
    parse_line,
    parse_periodtext,
    parse_polyline,
    parse_timetext,
    parse_vector,
    parse_wheel,
    time_dynamic_shapes,
)
from debrief_calc.formats.rep._tokens import DateTimeReader

__all__ = ["parse_rep"]

_TYPE_RE = re.compile(r";([A-Za-z][A-Za-z0-9_]*):")
#: types written without the colon (``;SENSORARC`` in older files)
_COLONLESS_TYPES = frozenset({"TRACKSPLIT", "SENSORARC"})

#: annotation types that draw a shape or label, and the prefix of their ids
_SHAPES: dict[str, tuple[str, Callable[[str, DateTimeReader], dict[str, Any]]]] = {
    "TEXT": ("text", lambda rest, _clock: parse_text(rest)),
    "CIRCLE": ("circle", parse_circle),
    "RECT": ("rect", parse_rect),
    "POLY": ("poly", parse_poly),
    "LINE": ("line", lambda rest, _clock: parse_line(rest)),
    "VECTOR": ("vector", lambda rest, _clock: parse_vector(rest)),
    "BRG": ("brg", parse_brg),
    "ELLIPSE": ("ellipse", parse_ellipse),
    "WHEEL": ("wheel", parse_wheel),
    "POLYLINE": ("polyline", parse_polyline),
    "TIMETEXT": ("timetext", parse_timetext),
    "PERIODTEXT": ("periodtext", parse_periodtext),
}
_DYNAMIC = frozenset({"DYNAMIC_RECT", "DYNAMIC_CIRCLE", "DYNAMIC_POLY"})
_SENSORS = frozenset({"SENSOR", "SENSOR2", "SENSOR3"})
_SOLUTIONS = frozenset({"TMA_POS", "TMA_RB"})
_ARCS = frozenset({"SENSORARC", "SENSOR_ARC"})

#: why the types legacy Debrief's REP importer does not read are not imported
_NOT_READ = {
    "TRACKSPLIT": "an instruction of legacy Debrief's track editor, not data its REP importer reads",
    "SPLIT_TRACK": "an instruction of legacy Debrief's track editor, not data its REP importer reads",
    "ELLIPSE2": "legacy Debrief's REP importer has this reader switched off",
}
_TOWED_ARRAY = "towed-array data read by a legacy Debrief plug-in, not by its REP importer"


def _split_lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _skip_reason(kind: str) -> str:
    if kind in _NOT_READ:
        return f"not imported: {kind} ({_NOT_READ[kind]})"
    if kind.startswith("TA_"):
        return f"not imported: {kind} ({_TOWED_ARRAY})"
    return f"not imported: {kind} (not a line type legacy Debrief reads)"


def parse_rep(text: str, *, source_name: str | None = None) -> RepResult:
    """Parse the text of a REP file.

    Returns one track feature per platform (in order of first appearance, fixes sorted by time,
    equal times in file order), then the annotations in file order: narratives (positioned at
    the nearest fix in time of their platform when that platform has fixes in the file), labels,
    lines and zones of every shape line legacy Debrief writes (:mod:`._annotations`,
    :mod:`._shapes`). Sensor cuts, target-solution points and coverage arcs hang off host tracks
    that may be in another file: they come back as records in ``cuts``, ``solutions`` and
    ``arcs`` (:mod:`debrief_calc.formats.hosted` makes their features once the hosts are known).
    ``;FORMAT_…:`` display settings are in ``directives``. Lines that cannot be read are in
    ``errors``; lines of a type legacy Debrief does not read are in ``skipped``, with the reason.

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
    dynamic: list[DynamicShape] = []
    # A file of 100,000 cuts makes as many records: the collector's passes over them, which
    # find no cycles (records hold strings, numbers and tuples), would cost a third of the read.
    collecting = gc.isenabled()
    gc.disable()
    try:
        fix_count = _read_lines(lines, result, clock, tracks, annotations, dynamic, source_name)
    finally:
        if collecting:
            gc.enable()
    return _finish(result, lines, tracks, annotations, dynamic, source_name, fix_count)


def _read_lines(
    lines: list[str],
    result: RepResult,
    clock: DateTimeReader,
    tracks: dict[str, Track],
    annotations: list[Narrative | tuple[str, dict[str, Any]]],
    dynamic: list[DynamicShape],
    source_name: str | None,
) -> int:
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
            if word.upper() not in _COLONLESS_TYPES:
                continue  # "; free text" is a comment
            kind, rest = word.upper(), line[1 + len(word) :]
        else:
            kind, rest = found.group(1).upper(), line[found.end() :]
        where = Where(source_name, number, raw[:200])
        try:
            if kind in ("NARRATIVE", "NARRATIVE2"):
                annotations.append(parse_narrative(rest, kind == "NARRATIVE2", clock))
            elif kind in _SHAPES:
                prefix, reader = _SHAPES[kind]
                annotations.append((prefix, reader(rest, clock)))
            elif kind in _DYNAMIC:
                shape = parse_dynamic(kind, rest, clock)
                dynamic.append(shape)
                annotations.append((kind.lower().replace("_", "-"), shape.feature))
            elif kind in _SENSORS:
                cut = fast_sensor(kind, line, clock, where)
                result.cuts.append(cut if cut is not None else parse_sensor(kind, rest, clock, where))
            elif kind in _SOLUTIONS:
                result.solutions.append(parse_solution(kind, rest, clock, where))
            elif kind in _ARCS:
                result.arcs.append(parse_arc(kind, rest, clock, where))
            elif kind in DIRECTIVES:
                result.directives.append({"line": number, **parse_directive(kind, rest)})
            else:
                result.skipped.append(line_issue(number, raw, _skip_reason(kind)))
                continue
            result.annotation_lines += 1
        except NotImported as exc:
            result.skipped.append(line_issue(number, raw, f"not imported: {exc}"))
        except LineError as exc:
            reason = str(exc)
            if not reason.startswith(kind):
                reason = f"{kind}: {reason}"
            errors.append(line_issue(number, raw, reason))

    return fix_count


def _finish(
    result: RepResult,
    lines: list[str],
    tracks: dict[str, Track],
    annotations: list[Narrative | tuple[str, dict[str, Any]]],
    dynamic: list[DynamicShape],
    source_name: str | None,
    fix_count: int,
) -> RepResult:
    time_dynamic_shapes(dynamic)
    ids = FeatureIds()
    features = result.features
    for name, track in tracks.items():
        slug = slugify(name)
        feature_id = ids.take(f"rep-{slug}" if slug else "rep-track")
        features.append(track_feature(track, feature_id, source_name))

    scope = source_scope(source_name, "\n".join(lines))  # line endings and a BOM change no id
    result.scope = scope
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
    apply_directives(result.directives, features)

    result.fix_count = fix_count
    result.narrative_count = counters.get("narrative", 0)
    return result
