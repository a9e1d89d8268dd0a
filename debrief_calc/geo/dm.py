"""Positions as a navigator writes them: degrees and decimal minutes with the hemisphere,
``22°07.41'N 021°46.41'W``, the one place every answer and picture takes that text from.

Minutes are rounded once, on the whole angle in units of the last decimal, so that 59.996' never
reads ``60.00'``: it carries into the degrees (``23°00.00'``). Longitudes are first put in
(-180, 180]; a value that rounds to zero reads north or east.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

__all__ = ["MINUTE_DECIMALS", "latitude_dm", "longitude_dm", "position_dm"]

#: decimals of the minutes in answers: 0.01' is about 18 m of latitude
MINUTE_DECIMALS: Final = 2


def _dm(value: float, width: int, hemispheres: tuple[str, str], decimals: int, *, limit: int) -> str:
    scale = 10**decimals
    units = round(abs(value) * 60 * scale)  # the whole angle in units of the last decimal of a minute
    degrees, rest = divmod(units, 60 * scale)
    whole, fraction = divmod(rest, scale)
    minutes = f"{whole:02d}" + (f".{fraction:0{decimals}d}" if decimals else "")
    # zero, and the antimeridian (limit) once rounded, lie in neither hemisphere: they read N or E
    side = hemispheres[1] if value < 0 and 0 < units < limit * 60 * scale else hemispheres[0]
    return f"{degrees:0{width}d}°{minutes}'{side}"


def latitude_dm(lat: float, decimals: int = MINUTE_DECIMALS) -> str:
    """``22°07.41'N``: degrees (two digits), minutes to ``decimals`` places, N or S."""
    if not math.isfinite(lat) or abs(lat) > 90:
        raise ValueError(f"latitude {lat!r} is not within [-90, 90]")
    return _dm(lat, 2, ("N", "S"), decimals, limit=91)


def longitude_dm(lon: float, decimals: int = MINUTE_DECIMALS) -> str:
    """``021°46.41'W``: degrees (three digits), minutes to ``decimals`` places, E or W; any
    longitude is read in (-180, 180] first."""
    if not math.isfinite(lon):
        raise ValueError(f"longitude {lon!r} is not a finite number")
    return _dm(180.0 - (180.0 - lon) % 360.0, 3, ("E", "W"), decimals, limit=180)


def position_dm(position: Sequence[float], decimals: int = MINUTE_DECIMALS) -> str:
    """``22°07.41'N 021°46.41'W`` for a GeoJSON position ``[lon, lat]`` (latitude first, as written)."""
    return f"{latitude_dm(float(position[1]), decimals)} {longitude_dm(float(position[0]), decimals)}"
