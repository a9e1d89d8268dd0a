"""The parts of a feature dict, read without trusting it: kind, id, name, properties and
geometry; and the :class:`~debrief_calc.errors.ValidationFailed` that names a feature's field
and the rule it broke."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

from debrief_calc.errors import ValidationFailed

__all__ = [
    "KINDS",
    "POLYGON_TYPES",
    "Kind",
    "feature_id",
    "feature_kind",
    "feature_label",
    "feature_name",
    "field_failure",
    "float_or_nan",
    "geometry_of",
    "is_number",
    "properties_of",
    "raw_id",
]

Kind = Literal[
    "track",
    "sensor",
    "zone",
    "point",
    "annotation",
    "buoyfield",
    "backdrop",
    "metadata",
    "analysis-result",
    "unknown",
]
KINDS: Final[tuple[str, ...]] = get_args(Kind)

POLYGON_TYPES: Final = ("Polygon", "MultiPolygon")


def properties_of(feature: object) -> Mapping[str, Any]:
    props = feature.get("properties") if isinstance(feature, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def geometry_of(feature: object) -> Mapping[str, Any] | None:
    geom = feature.get("geometry") if isinstance(feature, Mapping) else None
    return geom if isinstance(geom, Mapping) else None


def _geometry_type(feature: object) -> str | None:
    geom = geometry_of(feature)
    gtype = geom.get("type") if geom is not None else None
    return gtype if isinstance(gtype, str) else None


def feature_kind(feature: Mapping[str, Any]) -> str:
    """The feature's kind, one of :data:`KINDS` for every known spelling; never raises.

    ``properties.kind`` wins over ``properties.dataType``. An unknown value comes back
    lower-cased; a feature with neither is ``"unknown"``.
    """
    props = properties_of(feature)
    for key in ("kind", "dataType"):
        value = props.get(key)
        if isinstance(value, str) and value.strip():
            kind = value.strip().lower()
            if kind == "reference-point":
                return "point"
            if kind == "annotation" and _geometry_type(feature) in POLYGON_TYPES:
                return "zone"
            return kind
    return "unknown"


def raw_id(feature: object) -> str | None:
    fid = feature.get("id") if isinstance(feature, Mapping) else None
    if isinstance(fid, bool) or not isinstance(fid, str | int | float) or fid == "":
        return None
    return str(fid)


def feature_id(feature: Mapping[str, Any], index: int | None = None) -> str:
    """The feature's id as a string (ids may be numbers); ValidationFailed when it has none."""
    fid = raw_id(feature)
    if fid is None:
        where = f"feature #{index}" if index is not None else "a feature"
        name = feature_name(feature)
        named = f" ({name!r})" if name else ""
        raise ValidationFailed(
            f"{where}{named} has no id: give each feature a string or number 'id'",
            details={"feature_id": None, "field": "id", "rule": "required", "index": index},
        )
    return fid


def feature_name(feature: Mapping[str, Any]) -> str | None:
    """``properties.name`` when it is a non-empty string, else None."""
    name = properties_of(feature).get("name")
    return name if isinstance(name, str) and name else None


def feature_label(feature: object, index: int | None, noun: str = "feature") -> str:
    fid = raw_id(feature)
    name = properties_of(feature).get("name")
    parts = [noun]
    if isinstance(name, str) and name:
        parts.append(repr(name))
    if fid is not None:
        parts.append(f"(id {fid!r})")
    elif index is not None:
        parts.append(f"(#{index})")
    return " ".join(parts)


def field_failure(label: str, fid: str | None, field: str, rule: str, message: str, **extra: Any) -> ValidationFailed:
    details: dict[str, Any] = {"feature_id": fid, "field": field, "rule": rule}
    details.update(extra)
    return ValidationFailed(f"{label}: {message}", details=details)


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def float_or_nan(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.nan
