"""Sensor, solution and arc records of one or more files made into features on their hosts.

Every host name the records give is resolved once, over all the files of one import
(:class:`~debrief_calc.formats.hosted.hosts.HostTracks`: a name that finds no track is one error
naming them all, before anything is built); then each file's records become its features, with
ids ``<prefix>-<file>-sensor-<host>-<sensor>``, ``<prefix>-<file>-tma-<solution>`` and
``<prefix>-<file>-sensorarc-<line>-<step>``, unique among ``taken``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from debrief_calc.formats.hosted.arcs import build_arcs
from debrief_calc.formats.hosted.hosts import Host, HostTracks
from debrief_calc.formats.hosted.records import ArcLine, Cut, SolutionFix, Where
from debrief_calc.formats.hosted.sensors import SensorSettings, build_sensors
from debrief_calc.formats.hosted.solutions import build_solutions
from debrief_calc.formats.rep._features import slugify

__all__ = ["Batch", "Built", "attach"]


@dataclass
class Batch:
    """The hosted records of one file."""

    scope: str
    source: str | None
    cuts: list[Cut] = field(default_factory=list)
    solutions: list[SolutionFix] = field(default_factory=list)
    arcs: list[ArcLine] = field(default_factory=list)
    settings: dict[tuple[str, str], SensorSettings] = field(default_factory=dict)


@dataclass
class Built:
    """What :func:`attach` made: each batch's features, the records it could not place, and the
    host track (its feature id) of every feature made."""

    features: list[list[dict[str, Any]]]
    errors: list[tuple[Where, str]]
    host_of: dict[str, str]


def _slug(text: str) -> str:
    return slugify(text) or "x"


class _Ids:
    def __init__(self, taken: set[str]) -> None:
        self.taken = taken

    def take(self, wanted: str) -> str:
        candidate, n = wanted, 2
        while candidate in self.taken:
            candidate, n = f"{wanted}-{n}", n + 1
        self.taken.add(candidate)
        return candidate


def attach(
    batches: Sequence[Batch], candidates: Sequence[Host], host: str | None, *, prefix: str, taken: set[str]
) -> Built:
    records: list[Cut | SolutionFix | ArcLine] = []
    for b in batches:
        records += [*b.cuts, *b.solutions, *b.arcs]
    names = Counter(r.host_name for r in records)
    built = Built([[] for _ in batches], [], {})
    tracks = HostTracks(candidates, host)  # a malformed host is refused even with nothing to host
    if not names:
        return built
    kinds = sorted({"SENSORARC" if isinstance(r, ArcLine) else r.line_type for r in records})
    hosts = tracks.resolve(names, f"the {'/'.join(kinds)} lines")
    ids = _Ids(taken)
    for n, batch in enumerate(batches):
        scope = f"{prefix}-{batch.scope}"

        def sensor_id(h: Host, sensor: str, scope: str = scope) -> str:
            return ids.take(f"{scope}-sensor-{_slug(h.name)}-{_slug(sensor)}")

        def solution_id(h: Host, name: str, scope: str = scope) -> str:
            return ids.take(f"{scope}-tma-{_slug(name)}")

        def arc_id(line: ArcLine, step: int, scope: str = scope) -> str:
            return ids.take(f"{scope}-sensorarc-{line.where.line}-{step}")

        made: list[dict[str, Any]] = []
        solutions, errors = build_solutions(batch.solutions, hosts, solution_id, source=batch.source)
        made += solutions
        built.errors += errors
        sensors, errors = build_sensors(batch.cuts, hosts, sensor_id, settings=batch.settings, source=batch.source)
        made += sensors
        built.errors += errors
        arcs, errors = build_arcs(batch.arcs, hosts, arc_id)
        if batch.source is not None:
            for arc in arcs:
                arc["properties"]["source"] = batch.source
        made += arcs
        built.errors += errors
        for feature in made:
            host_id = feature["properties"].get("host") or feature["properties"].get("specifics", {}).get("host")
            built.host_of[str(feature["id"])] = str(host_id)
        built.features[n] = made
    return built
