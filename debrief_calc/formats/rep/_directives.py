"""Display settings a REP file may give legacy Debrief's own views (its ``ImportFixFormatter``,
``ImportNameAtEndFormatter`` and ``ImportHideLayerFormatter``)::

    ;FORMAT_FIX: NAME ATTRIBUTE (TRACK | NULL) (SYMB | NULL) REGULAR interval_ms
    ;FORMAT_TRACK_NAME_AT_END: NAME [TRACK …]
    ;FORMAT_LAYER_HIDE: NAME [LAYER …]

They draw nothing: they are read, listed in the import's ``report.directives`` and applied where the
suite has the setting (a hidden layer's features get ``visible: false``; a track named at its end
gets ``nameAtEnd: true``); a fix-label frequency is listed only (pictures label fixes their own way)."""

from __future__ import annotations

from typing import Any

from debrief_calc.formats.rep._fields import Fields

__all__ = ["DIRECTIVES", "apply_directives", "parse_directive"]

DIRECTIVES = ("FORMAT_FIX", "FORMAT_TRACK_NAME_AT_END", "FORMAT_LAYER_HIDE")


def parse_directive(kind: str, rest: str) -> dict[str, Any]:
    f = Fields(rest, kind)
    name = f.name("format name")
    if kind == "FORMAT_FIX":
        attribute = f.take("attribute")
        track = f.name("track name (or NULL)")
        symbol = f.take("symbology (or NULL)")
        regular = f.take("regular-times flag").lower() == "true"
        interval = f.number("interval (ms)")
        return {
            "type": kind,
            "name": name,
            "attribute": attribute,
            "track": None if track == "NULL" else track,
            "symbology": None if symbol == "NULL" else symbol,
            "regularIntervals": regular,
            "intervalMs": interval,
            "applied": False,
            "note": "a fix label/symbol frequency for legacy Debrief's view: listed, not applied",
        }
    names: list[str] = []
    while f.more():
        names.append(f.name("name"))
    return {"type": kind, "name": name, "targets": names, "applied": False}


def apply_directives(directives: list[dict[str, Any]], features: list[dict[str, Any]]) -> None:
    """Apply what the suite has a setting for, and say so in each directive."""
    for directive in directives:
        if directive["type"] == "FORMAT_FIX":
            continue
        targets = set(directive["targets"])
        touched: list[str] = []
        for feature in features:
            props = feature["properties"]
            named = props.get("name") in targets or props.get("layer") in targets
            if directive["type"] == "FORMAT_TRACK_NAME_AT_END":
                if named and props.get("kind") == "track":
                    props["nameAtEnd"] = True
                    touched.append(str(feature["id"]))
            elif named:
                props["visible"] = False
                touched.append(str(feature["id"]))
        directive["applied"] = bool(touched)
        directive["features"] = touched[:50]
        if not targets:
            directive["note"] = "names no tracks or layers: nothing to apply"
