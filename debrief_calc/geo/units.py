"""Units of distance and speed used by the analysis tools.

Distances: ``nm`` (international nautical mile, 1852 m; the default), ``m``, ``km``, ``yd``
(0.9144 m), ``kyd`` (914.4 m, legacy Debrief's range unit) and ``mi`` (statute mile,
1609.344 m). Speeds: ``kn`` (knots, nm per hour; the default), ``m/s``, ``km/h`` and ``mph``.

Unit names are case-insensitive and a few spellings are accepted (``knots``, ``kt``, ``NM``,
``metres``…); anything else is a :class:`ValidationFailed` that lists the allowed values.
Conversions work on floats and on numpy arrays alike.
"""

from __future__ import annotations

from typing import Final, overload

import numpy as np
from numpy.typing import NDArray

from debrief_calc.errors import ValidationFailed

__all__ = [
    "DEFAULT_DISTANCE_UNIT",
    "DEFAULT_SPEED_UNIT",
    "DISTANCE_UNITS",
    "METRES_PER_UNIT",
    "MPS_PER_UNIT",
    "SPEED_UNITS",
    "distance_unit",
    "from_metres",
    "from_mps",
    "speed_unit",
    "to_metres",
    "to_mps",
]

METRES_PER_UNIT: Final[dict[str, float]] = {
    "nm": 1852.0,
    "m": 1.0,
    "km": 1000.0,
    "yd": 0.9144,
    "kyd": 914.4,
    "mi": 1609.344,
}
MPS_PER_UNIT: Final[dict[str, float]] = {
    "kn": 1852.0 / 3600.0,
    "m/s": 1.0,
    "km/h": 1000.0 / 3600.0,
    "mph": 1609.344 / 3600.0,
}
DISTANCE_UNITS: Final[tuple[str, ...]] = tuple(METRES_PER_UNIT)
SPEED_UNITS: Final[tuple[str, ...]] = tuple(MPS_PER_UNIT)
DEFAULT_DISTANCE_UNIT: Final = "nm"
DEFAULT_SPEED_UNIT: Final = "kn"

_DISTANCE_ALIASES: Final[dict[str, str]] = {
    "nmi": "nm",
    "nautical_mile": "nm",
    "nautical_miles": "nm",
    "metre": "m",
    "metres": "m",
    "meter": "m",
    "meters": "m",
    "kilometre": "km",
    "kilometres": "km",
    "kilometer": "km",
    "kilometers": "km",
    "yard": "yd",
    "yards": "yd",
    "yds": "yd",
    "kyds": "kyd",
    "kiloyard": "kyd",
    "kiloyards": "kyd",
    "mile": "mi",
    "miles": "mi",
}
_SPEED_ALIASES: Final[dict[str, str]] = {
    "knot": "kn",
    "knots": "kn",
    "kt": "kn",
    "kts": "kn",
    "mps": "m/s",
    "kph": "km/h",
    "kmh": "km/h",
}


def _normalise(unit: object, table: dict[str, float], aliases: dict[str, str], field: str) -> str:
    if isinstance(unit, str):
        key = unit.strip().lower()
        key = aliases.get(key, key)
        if key in table:
            return key
    allowed = list(table)
    raise ValidationFailed(
        f"{field} {unit!r} is not a known unit: use one of {', '.join(allowed)}",
        details={"field": field, "rule": "choices", "value": repr(unit), "allowed": allowed},
    )


def distance_unit(unit: object, *, field: str = "distance_unit") -> str:
    """The canonical name of a distance unit (``"NM"`` → ``"nm"``); ValidationFailed otherwise."""
    return _normalise(unit, METRES_PER_UNIT, _DISTANCE_ALIASES, field)


def speed_unit(unit: object, *, field: str = "speed_unit") -> str:
    """The canonical name of a speed unit (``"knots"`` → ``"kn"``); ValidationFailed otherwise."""
    return _normalise(unit, MPS_PER_UNIT, _SPEED_ALIASES, field)


@overload
def to_metres(value: float, unit: str = DEFAULT_DISTANCE_UNIT) -> float: ...
@overload
def to_metres(value: NDArray[np.float64], unit: str = DEFAULT_DISTANCE_UNIT) -> NDArray[np.float64]: ...
def to_metres(value: float | NDArray[np.float64], unit: str = DEFAULT_DISTANCE_UNIT) -> float | NDArray[np.float64]:
    """A distance given in ``unit``, in metres."""
    return value * METRES_PER_UNIT[distance_unit(unit)]


@overload
def from_metres(metres: float, unit: str = DEFAULT_DISTANCE_UNIT) -> float: ...
@overload
def from_metres(metres: NDArray[np.float64], unit: str = DEFAULT_DISTANCE_UNIT) -> NDArray[np.float64]: ...
def from_metres(metres: float | NDArray[np.float64], unit: str = DEFAULT_DISTANCE_UNIT) -> float | NDArray[np.float64]:
    """A distance in metres, in ``unit``."""
    return metres / METRES_PER_UNIT[distance_unit(unit)]


@overload
def to_mps(value: float, unit: str = DEFAULT_SPEED_UNIT) -> float: ...
@overload
def to_mps(value: NDArray[np.float64], unit: str = DEFAULT_SPEED_UNIT) -> NDArray[np.float64]: ...
def to_mps(value: float | NDArray[np.float64], unit: str = DEFAULT_SPEED_UNIT) -> float | NDArray[np.float64]:
    """A speed given in ``unit``, in metres per second."""
    return value * MPS_PER_UNIT[speed_unit(unit)]


@overload
def from_mps(mps: float, unit: str = DEFAULT_SPEED_UNIT) -> float: ...
@overload
def from_mps(mps: NDArray[np.float64], unit: str = DEFAULT_SPEED_UNIT) -> NDArray[np.float64]: ...
def from_mps(mps: float | NDArray[np.float64], unit: str = DEFAULT_SPEED_UNIT) -> float | NDArray[np.float64]:
    """A speed in metres per second, in ``unit``."""
    return mps / MPS_PER_UNIT[speed_unit(unit)]
