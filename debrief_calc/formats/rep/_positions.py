"""Latitude, longitude and symbol fields shared by fix lines and shape annotations."""

from __future__ import annotations

import re

from debrief_calc.formats.rep._results import LineError, Truncated
from debrief_calc.formats.rep._tokens import finite_number

__all__ = ["read_position", "read_symbol"]

_LAYER_RE = re.compile(r"LAYER=([^,\]]*)")

_AXES = {
    "latitude": ("NS", 90.0, "S"),
    "longitude": ("EW", 180.0, "W"),
}
_PART_NAMES = ("degrees", "minutes", "seconds")


def _is_hemisphere(token: str, hemispheres: str) -> bool:
    if token[0] not in hemispheres:
        return False
    # legacy files may glue the latitude hemisphere to the longitude degrees: "N021"
    return len(token) == 1 or (hemispheres == "NS" and finite_number(token[1:]) is not None)


def _read_coordinate(tokens: list[str], start: int, axis: str, problems: list[str]) -> tuple[float | None, int]:
    """Read one latitude or longitude starting at ``tokens[start]``.

    Returns (decimal degrees or None when a value is out of range, index after the
    hemisphere). A glued ``N021`` is split in place so the longitude can be read next.
    Structural problems (missing hemisphere, line too short) raise.
    """
    hemispheres, limit, negative = _AXES[axis]
    count = len(tokens)
    parts: list[str] = []
    index = start
    while index < count and len(parts) < 3 and not _is_hemisphere(tokens[index], hemispheres):
        parts.append(tokens[index])
        index += 1
    if index >= count:
        shown = " ".join(parts)
        raise Truncated(f"{axis} incomplete" + (f" after '{shown}'" if shown else ""))
    hem_token = tokens[index]
    if not _is_hemisphere(hem_token, hemispheres):
        expected = " or ".join(hemispheres)
        raise LineError(f"expected {axis} hemisphere {expected} after '{' '.join(parts)}', got '{hem_token}'")
    if not parts:
        raise LineError(f"{axis} has no degrees before hemisphere '{hem_token[0]}'")
    if len(hem_token) > 1:
        tokens[index : index + 1] = [hem_token[0], hem_token[1:]]
    values: list[float] = []
    ok = True
    for name, text in zip(_PART_NAMES, parts, strict=False):
        value = finite_number(text)
        if value is None:
            problems.append(f"bad {axis} {name} '{text}'")
            ok = False
        elif value < 0:
            problems.append(f"{axis} {name} {text} must not be negative (the hemisphere gives the sign)")
            ok = False
        elif name == "degrees" and value > limit:
            problems.append(f"{axis} degrees {text} out of range [0, {limit:g}]")
            ok = False
        elif name != "degrees" and value > 60:  # 60 itself occurs in real files ("59 60 00.00 N" is 60°N)
            problems.append(f"{axis} {name} {text} out of range [0, 60]")
            ok = False
        values.append(value if value is not None else 0.0)
    if not ok:
        return None, index + 1
    total = values[0]
    if len(values) > 1:
        total += values[1] / 60.0
    if len(values) > 2:
        total += values[2] / 3600.0
    if total > limit:
        problems.append(f"{axis} {' '.join(parts)} {hem_token[0]} is beyond {limit:g}°")
        return None, index + 1
    return (-total if hem_token[0] == negative else total), index + 1


def read_position(tokens: list[str], start: int, problems: list[str]) -> tuple[tuple[float, float] | None, int]:
    """(lon, lat) or None, and the index after the longitude hemisphere."""
    lat, index = _read_coordinate(tokens, start, "latitude", problems)
    lon, index = _read_coordinate(tokens, index, "longitude", problems)
    if lat is None or lon is None:
        return None, index
    return (lon, lat), index


def read_symbol(tokens: list[str], start: int) -> tuple[str, str | None, int]:
    """The symbol code, its ``[LAYER=...]`` value if any, and the index after them."""
    count = len(tokens)
    symbol = tokens[start]
    index = start + 1
    block = ""
    if "[" in symbol:
        symbol, block = symbol.split("[", 1)
        block = "[" + block
    elif index < count and tokens[index].startswith("["):
        block = tokens[index]
        index += 1
    while block and "]" not in block and index < count:
        block += " " + tokens[index]
        index += 1
    if block and "]" not in block:
        raise LineError(f"unterminated symbol attributes '{block}'")
    if not symbol or finite_number(symbol) is not None:
        raise LineError(f"expected a symbol such as @A, got '{symbol or block}'")
    layer = None
    if block:
        found = _LAYER_RE.search(block)
        if found is not None:
            layer = found.group(1).strip()
    return symbol, layer, index
