"""Legacy Debrief ``.dpf`` plots (XML) as plot features, read with a hardened parser.

:func:`parse_dpf` reads ``<plot><session><layers>…`` (or a bare ``<layers>`` document, as legacy
Debrief's own test files are): tracks and their fixes, TMA segments included (``segments``
lists each with its type, figures and times; a track with TMA segments has ``trackType``
``tma-solution``), composite tracks' planning legs worked out into fixes (``trackType``
``planned``), narratives, and the shapes and labels of layers (:mod:`._layers`). Sensors with
their contacts, ``<tma>`` solutions and dynamic coverage hang off their track: they come back as
records (``batch``) for :mod:`debrief_calc.formats.hosted` to make into features. What is not
converted (chart furniture, external files, SATC state, the view) is listed with the reason, and
any element that cannot be read is an error naming it; the rest is still read. Sources: the
handlers of ``debrief/debrief``'s ``Debrief/ReaderWriter/XML`` and its ``debrief_plot.xsd``."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Final
from xml.etree.ElementTree import Element

import numpy as np

from debrief_calc.formats.dpf._layers import read_layer
from debrief_calc.formats.dpf._tracks import read_track
from debrief_calc.formats.dpf._values import DpfError, child, children, tag, when
from debrief_calc.formats.dpf._xml import read_xml
from debrief_calc.formats.hosted.attach import Batch
from debrief_calc.formats.rep._features import FeatureIds, slugify, source_scope
from debrief_calc.formats.rep._tokens import DateTimeReader
from debrief_calc.tracks.times import parse_times

__all__ = ["DPF_SUFFIXES", "DpfResult", "parse_dpf"]

DPF_SUFFIXES: Final = (".dpf", ".xml")

#: elements of <layers> that are not data, and why they are left out
_NOT_DATA: Final[dict[str, str]] = {
    "ChartFolio": "a folio of chart images",
    "externalDatafile": "a reference to a file outside the plot (a chart image or map layer)",
    "topo": "a bathymetry display setting",
    "etopo": "a bathymetry display setting",
    "pattern": "a search pattern of legacy Debrief's planner",
    "satc_solution": "SATC solver settings (legacy Debrief itself discards them on load)",
    "dynamicLayer": "a clock display of legacy Debrief's view",
}


@dataclass
class DpfResult:
    features: list[dict[str, Any]] = field(default_factory=list)
    batch: Batch = field(default_factory=lambda: Batch("", None))
    not_converted: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    current_time: str | None = None


def _layers_of(root: Element, where: str) -> Element:
    if tag(root) == "layers":
        return root
    session = child(root, "session") if tag(root) == "plot" else None
    layers = child(session, "layers") if session is not None else None
    if layers is None:
        from debrief_calc.errors import ValidationFailed

        raise ValidationFailed(
            f"{where} is not a Debrief plot: expected <plot><session><layers>…, found <{tag(root)}>"
            + ("" if tag(root) != "plot" else " without <session><layers>"),
            details={"field": "path", "rule": "a <plot> with <session><layers>"},
        )
    return layers


def _narratives(
    element: Element, clock: DateTimeReader, tracks: dict[str, dict[str, Any]], add: Any, error: Any
) -> None:
    for n, entry in enumerate(children(element, "narrative_entry"), start=1):
        try:
            _key, time = when(entry, "Dtg", clock)
        except DpfError as exc:
            error(f"narrative {element.get('Name')}/narrative_entry {n}", str(exc))
            continue
        platform = entry.get("Track") or ""
        props: dict[str, Any] = {
            "dataType": "annotation",
            "kind": "annotation",
            "annotationType": "comment",
            "text": entry.get("Entry") or "",
            "time": time,
            "track": platform,
        }
        if entry.get("Type"):
            props["narrativeType"] = entry.get("Type")
        geometry = None
        track = tracks.get(platform)
        if track is not None:
            times = parse_times(track["properties"]["timestamps"])
            coords = track["geometry"]["coordinates"]
            coords = [coords] if track["geometry"]["type"] == "Point" else coords
            t = float(parse_times([time])[0])
            i = int(np.argmin(np.abs(times - t)))
            geometry = {"type": "Point", "coordinates": list(coords[i])}
            props["positionTime"] = track["properties"]["timestamps"][i]
        add("narrative", {"type": "Feature", "geometry": geometry, "properties": props})


def parse_dpf(text: str, *, source_name: str | None = None) -> DpfResult:
    """Read a ``.dpf``'s text; a ValidationFailed when it is not a plot or not safe to read."""
    where = repr(source_name) if source_name else "the .dpf text"
    root = read_xml(text, where)
    layers = _layers_of(root, where)
    clock = DateTimeReader()
    result = DpfResult()
    stem = re.sub(r"\.(dpf|xml)\Z", "", source_name, flags=re.IGNORECASE) if source_name else None
    scope = source_scope(stem, text) if stem else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    result.batch = Batch(scope, source_name)
    ids = FeatureIds()
    counters: dict[str, int] = {}
    annotations: list[dict[str, Any]] = []

    def error(path: str, reason: str) -> None:
        result.errors.append({"element": path, "reason": reason})

    def not_converted(element: str, name: str, reason: str) -> None:
        for item in result.not_converted:
            if item["element"] == element and item["reason"] == reason:
                item["count"] += 1
                return
        result.not_converted.append({"element": element, "name": name, "count": 1, "reason": reason})

    def add(prefix: str, feature: dict[str, Any]) -> None:
        counters[prefix] = counters.get(prefix, 0) + 1
        feature["id"] = ids.take(f"dpf-{scope}-{prefix}-{counters[prefix]}")
        if source_name is not None:
            feature["properties"]["source"] = source_name
        annotations.append({"type": "Feature", "id": feature["id"], **{k: v for k, v in feature.items() if k != "id"}})

    tracks: dict[str, dict[str, Any]] = {}
    narrative_layers: list[Element] = []
    for item in layers:
        name = tag(item)
        if name in ("track", "composite_track"):
            read = read_track(item, clock, source_name, error)
            batch = result.batch
            batch.cuts += read.cuts
            batch.solutions += read.solutions
            batch.arcs += read.arcs
            batch.settings.update(read.settings)
            if read.feature is not None:
                feature = {"type": "Feature", "id": ids.take(f"dpf-{slugify(read.name) or 'track'}"), **read.feature}
                if source_name is not None:
                    feature["properties"]["source"] = source_name
                tracks.setdefault(read.name, feature)
                result.features.append(feature)
            elif not (read.cuts or read.solutions or read.arcs):
                not_converted(name, read.name, "a track with no fixes")
        elif name in ("layer", "dynamicShapeLayer"):
            read_layer(item, clock, add, not_converted, error)
        elif name == "narrative":
            narrative_layers.append(item)
        else:
            not_converted(
                name,
                item.get("Name") or item.get("LayerName") or "",
                _NOT_DATA.get(name, "not a kind of data this reader knows"),
            )
    for item in narrative_layers:
        _narratives(item, clock, tracks, add, error)
    result.features += annotations
    session = child(root, "session") if tag(root) == "plot" else None
    if session is not None:
        for item in session:
            if tag(item) == "projection":
                not_converted(
                    "projection", "", "the legacy view's extent: the plot's viewport is fitted to its features"
                )
            elif tag(item) == "gui":
                stepper = next(
                    (c for c in item.iter() if tag(c) == "property" and c.get("Name") == "CurrentTime"), None
                )
                if stepper is not None:
                    try:
                        result.current_time = when(stepper, "Value", clock)[1]
                    except DpfError:
                        pass
                not_converted(
                    "gui",
                    "",
                    "legacy Debrief's window settings (tote, stepper, background)"
                    + (f"; its current time was {result.current_time}" if result.current_time else ""),
                )
    return result
