"""What a sensor, target-solution or coverage-arc line says, before its host track is known.

REP lines (``;SENSOR:``, ``;TMA_POS:``, ``;SENSORARC:`` …) and ``.dpf`` elements hang off a host
track named in the line: the records here hold what the line gives, field by field, and where it
came from, so that one builder (:mod:`.sensors`, :mod:`.solutions`, :mod:`.arcs`) makes the
features of both file kinds once the host is found (:mod:`.hosts`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ArcLine", "Cut", "Origin", "SolutionFix", "Where"]

#: (lon, lat) in degrees
Origin = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Where:
    """Where a record was read: the file, its 1-based line (REP) or element path (.dpf), the text."""

    source: str | None
    line: int | None
    text: str


@dataclass(slots=True)
class Cut:
    """One sensor contact. Bearings are true degrees as given (normalised when the feature is
    built); ``range_yd`` None when the line gave 0 or NULL; ``origin`` None when the line gave
    NULL (the host's position at that time)."""

    where: Where
    line_type: str  # SENSOR | SENSOR2 | SENSOR3
    key: int  # microseconds since the epoch, for sorting
    time: str  # ISO-8601 UTC
    host_name: str
    sensor: str
    symbol: str | None
    origin: Origin | None
    bearing: float | None = None
    ambiguous: float | None = None
    frequency: float | None = None
    range_yd: float | None = None
    bearing_accuracy: float | None = None
    frequency_accuracy: float | None = None
    label: str | None = None
    comment: str | None = None
    colour: str | None = None
    visible: bool = True


@dataclass(slots=True)
class SolutionFix:
    """One point of a target solution: a position, or a bearing and range from the host."""

    where: Where
    line_type: str  # TMA_POS | TMA_RB | DPF
    key: int
    time: str
    host_name: str
    solution: str
    symbol: str | None
    position: Origin | None
    bearing: float | None
    range_yd: float | None
    ellipse: dict[str, float] | None  # {orientation_deg, semiMajorYd, semiMinorYd}
    course: float | None
    speed: float | None
    depth: float | None
    label: str | None = None
    colour: str | None = None


@dataclass(slots=True)
class ArcLine:
    """A ``;SENSORARC:`` line: coverage arcs relative to the host's heading over a period."""

    where: Where
    start: tuple[int, str] | None  # (key, ISO) or None: from the host's first fix
    end: tuple[int, str] | None
    host_name: str
    symbol: str | None
    arcs: list[tuple[float, float, float, float]]  # (left, right, inner_yd, outer_yd)
    name: str
    extra: dict[str, Any] = field(default_factory=dict)
