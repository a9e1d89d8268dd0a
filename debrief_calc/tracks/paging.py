"""Features in pages that fit an answer, a feature too big for one answer in parts.

Pure domain code (no MCP, no store): the calc server's ``get_result`` and the state server's
``debrief_get_features(detail="full")`` page with it, so that no feature is ever left out
because it is big. A page holds whole features while they fit its ``budget`` (characters of
compact JSON, as the answer cap counts them). A feature over the budget comes in **parts**:

* by points, when its geometry is a LineString, MultiPoint, MultiLineString, Polygon or
  MultiPolygon of two points or more: each part is a copy of the feature whose geometry holds
  the points ``[a, b)`` of its flattened point list (nested geometries keep the structure of
  what remains: the lines, rings or polygons that hold those points, in order), and whose
  per-point array properties (a top-level list property with exactly one item per point:
  ``timestamps``, ``speeds``, ``courses``, ``times``, ``positions`` …) are sliced alike. It
  carries ``"part": {"points": [a, b], "of": N}``, plus ``"first"`` (nested geometries: the
  index of the line or ring, or ``[polygon, ring]``, that point ``a`` lies in) and ``"arrays"``
  (the names of the properties sliced), and nothing else changes;
* by items otherwise, or when what is left without the points would not fit half a page (a
  result whose figures are long lists beside a short geometry, such as per-leg segments, or
  range-bearing's ``series`` of columns beside its two-point line of sight): each part is a
  copy whose largest list property holds items ``[a, b)``, with
  ``"part": {"items": [a, b], "of": M, "at": ["properties", …]}``; when the largest is an
  object of lists of one length (columns of one table) they are sliced alike, ``at`` naming
  the object and ``"arrays"`` the lists.

Concatenating the parts in order gives the feature back exactly (:func:`join_parts`). A
:data:`Position` ``(feature index, first point or item of it not yet sent)`` says where a page
starts; the callers wrap it in their own cursors. Slices are sized from the measured size per
point and then corrected, so a page of a 100,000-point track costs a handful of encodings of
about one page each, never an encoding of the whole track.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from debrief_calc.tracks._feature_parts import geometry_of, properties_of

__all__ = [
    "Position",
    "compact_size",
    "join_parts",
    "page_features",
    "point_count",
    "slice_points",
]

Position = tuple[int, int]

#: how deep the position lists of each splittable geometry type are nested
_DEPTH: Final[dict[str, int]] = {
    "LineString": 1,
    "MultiPoint": 1,
    "MultiLineString": 2,
    "Polygon": 2,
    "MultiPolygon": 3,
}
_SAMPLE: Final = 64
_MAX_TRIES: Final = 12


def compact_size(value: Any) -> int:
    """Characters of ``value`` as compact JSON, non-ASCII kept (as the answer cap counts them)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str))


# -- points of a geometry -------------------------------------------------------------------------


def _count(node: Any, depth: int) -> int:
    if not isinstance(node, list):
        return 0
    if depth == 1:
        return len(node)
    return sum(_count(child, depth - 1) for child in node)


def _well_formed(node: Any, depth: int) -> bool:
    if not isinstance(node, list):
        return False
    return depth == 1 or all(_well_formed(child, depth - 1) for child in node)


def _splittable(feature: Mapping[str, Any]) -> tuple[list[Any], int] | None:
    """The coordinates and their nesting depth, when the geometry can be cut by points."""
    geom = geometry_of(feature)
    depth = _DEPTH.get(str(geom.get("type"))) if geom is not None else None
    coords = geom.get("coordinates") if geom is not None else None
    if depth is None or not isinstance(coords, list) or (depth > 1 and not _well_formed(coords, depth)):
        return None
    return coords, depth


def point_count(feature: Mapping[str, Any]) -> int:
    """The positions of the feature's geometry (a GeometryCollection's summed; 0 without one)."""
    return _geometry_points(geometry_of(feature), 0)


def _geometry_points(geom: Mapping[str, Any] | None, level: int) -> int:
    if geom is None or level > 16:
        return 0
    gtype = geom.get("type")
    if gtype == "GeometryCollection":
        members = geom.get("geometries")
        return sum(
            _geometry_points(g, level + 1)
            for g in (members if isinstance(members, list) else [])
            if isinstance(g, dict)
        )
    coords = geom.get("coordinates")
    if gtype == "Point":
        return 1 if isinstance(coords, list) and coords else 0
    depth = _DEPTH.get(str(gtype))
    return _count(coords, depth) if depth is not None else 0


def _cut(node: list[Any], depth: int, a: int, b: int, offset: int, total: int) -> tuple[list[Any] | None, list[int]]:
    """The part of ``node`` (whose first point is number ``offset``) holding points ``[a, b)``,
    or None when none of it belongs there, and the index path of its first kept child.

    An empty line or ring belongs to the part whose range holds its position (the last part
    when it ends the geometry), so that every one comes back exactly once."""
    if depth == 1:
        size = len(node)
        lo, hi = max(a - offset, 0), min(b - offset, size)
        if lo < hi or (size == 0 and (a <= offset < b or offset == b == total)):
            return node[lo:hi], []
        return None, []
    out: list[Any] = []
    first: list[int] = []
    for i, child in enumerate(node):
        n = _count(child, depth - 1)
        if offset + n >= a and offset <= b:  # children wholly before a or after b are skipped
            piece, sub = _cut(child, depth - 1, a, b, offset, total)
            if piece is not None:
                if not out:
                    first = [i, *sub]
                out.append(piece)
        offset += n
        if offset > b:
            break
    if out:
        return out, first
    if not node and (a <= offset < b or offset == b == total):
        return [], []
    return None, []


def _per_point_names(props: Mapping[str, Any], n: int) -> list[str]:
    return [k for k, v in props.items() if isinstance(v, list) and len(v) == n]


def _slice(feature: Mapping[str, Any], a: int, b: int, n: int) -> tuple[dict[str, Any], list[int], list[str]]:
    """The copy holding points ``[a, b)`` of ``n``; the first-index path and the names sliced."""
    out = dict(feature)
    first: list[int] = []
    split = _splittable(feature)
    geom = geometry_of(feature)
    if split is not None and geom is not None and _count(split[0], split[1]) == n:
        coords, depth = split
        piece, first = _cut(coords, depth, a, b, 0, n)
        out["geometry"] = {**geom, "coordinates": piece if piece is not None else []}
    props = properties_of(feature)
    names = _per_point_names(props, n)
    if names:
        out["properties"] = {k: (v[a:b] if k in names else v) for k, v in props.items()}
    return out, first, names


def slice_points(feature: Mapping[str, Any], a: int, b: int) -> dict[str, Any]:
    """A copy of the feature holding points ``[a, b)`` of its geometry, per-point arrays sliced
    alike (no ``part`` member: :func:`page_features` adds that). A Point is never split."""
    n = point_count(feature)
    if _splittable(feature) is None:
        return dict(feature)
    a, b = max(0, min(a, n)), max(0, min(b, n))
    return _slice(feature, a, max(a, b), n)[0]


# -- splitting one feature ---------------------------------------------------------------------------


class _Splitter:
    """Makes part ``[a, b)`` of one feature, by points, by the items of one list, or by the
    rows of an object of equal-length lists (``columns``: their names)."""

    def __init__(
        self,
        feature: Mapping[str, Any],
        total: int,
        path: tuple[str, ...] | None,
        columns: tuple[str, ...] = (),
    ) -> None:
        self.feature = feature
        self.total = total
        self.path = path  # None: by points
        self.columns = columns

    def make(self, a: int, b: int) -> dict[str, Any]:
        if self.path is None:
            out, first, names = _slice(self.feature, a, b, self.total)
            part: dict[str, Any] = {"points": [a, b], "of": self.total}
            if first:
                part["first"] = first if len(first) > 1 else first[0]
            if names:
                part["arrays"] = names
        else:
            out = _replace_at(self.feature, self.path, a, b, self.columns)
            part = {"items": [a, b], "of": self.total, "at": list(self.path)}
            if self.columns:
                part["arrays"] = list(self.columns)
        out["part"] = part
        return out

    def take(self, a: int, room: int) -> tuple[dict[str, Any], int, int] | None:
        """The longest part starting at ``a`` that fits ``room`` (its size and end), or None
        when not even one point fits. Sized from the measured size per point, then corrected."""
        rest = self.total - a
        base = compact_size(self.make(a, a))
        if base >= room or rest <= 0:
            return None
        m = min(rest, _SAMPLE)
        sample = self.make(a, a + m)
        size = compact_size(sample)
        good: tuple[dict[str, Any], int, int] | None = (sample, size, a + m) if size <= room else None
        if good is not None and m == rest:
            return good
        lo, hi = (m, rest + 1) if good is not None else (0, m)  # lo fits (0: nothing yet), hi does not
        per = max((size - base) / m, 1.0)
        for _ in range(_MAX_TRIES):
            if hi - lo <= 1:
                break
            guess = int((room - base) / per)
            k = min(max(guess, lo + 1), hi - 1)
            part = self.make(a, a + k)
            size = compact_size(part)
            per = max((size - base) / k, 1.0)
            if size <= room:
                lo, good = k, (part, size, a + k)
                if room - size < 2 * per:  # within two points of full: good enough
                    break
            else:
                hi = k
        while good is None and hi - lo > 1:  # the estimate kept overshooting: bisect
            k = (lo + hi) // 2
            part = self.make(a, a + k)
            size = compact_size(part)
            if size <= room:
                lo, good = k, (part, size, a + k)
            else:
                hi = k
        return good

    def one(self, a: int) -> tuple[dict[str, Any], int, int]:
        part = self.make(a, a + 1)
        return part, compact_size(part), a + 1


#: a candidate for splitting by items: (its size, the path of the list or of the object of
#: columns, the columns' names: empty for one list)
_Group = tuple[int, tuple[str, ...], tuple[str, ...]]


def _largest_list(props: Mapping[str, Any], prefix: tuple[str, ...], level: int) -> _Group | None:
    """The biggest list of more than one item among ``props`` and the objects below it, or
    the biggest set of two or more lists of one length in one object (columns of a table,
    cut alike), by compact size."""
    best: _Group | None = None
    by_length: dict[int, list[tuple[str, int]]] = {}
    for key, value in props.items():
        found: _Group | None = None
        if isinstance(value, list) and len(value) > 1:
            size = compact_size(value)
            by_length.setdefault(len(value), []).append((key, size))
            found = (size, (*prefix, key), ())
        elif isinstance(value, Mapping) and level < 4:
            found = _largest_list(value, (*prefix, key), level + 1)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    for lists in by_length.values():
        size = sum(n for _, n in lists)
        if len(lists) > 1 and (best is None or size > best[0]):
            best = (size, prefix, tuple(key for key, _ in lists))
    return best


def _replace_at(
    feature: Mapping[str, Any], path: tuple[str, ...], a: int, b: int, columns: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A copy of the feature whose list at ``path`` (or, with ``columns``, each of those lists
    in the object at ``path``) holds items ``[a, b)``; dicts on the way copied."""
    out = dict(feature)
    node: dict[str, Any] = out
    walk = path if columns else path[:-1]
    for key in walk:
        node[key] = dict(node[key])
        node = node[key]
    for name in columns or path[-1:]:
        node[name] = node[name][a:b]
    return out


def _splitter(feature: Mapping[str, Any], budget: int | None = None) -> _Splitter | None:
    """How to cut a feature: by points when its geometry has several and what remains without
    them fits half of ``budget``; else by the items of its biggest list (or table of columns),
    whichever leaves the smaller remainder; None when it cannot be cut at all. The choice
    depends on the feature and the budget only, so every page of one feature cuts it alike."""
    by_points: _Splitter | None = None
    split = _splittable(feature)
    if split is not None:
        n = _count(split[0], split[1])
        if n > 1:
            by_points = _Splitter(feature, n, None)
    points_rest = 0
    if by_points is not None:
        points_rest = compact_size(by_points.make(0, 0))  # never the whole track: its points left out
        if budget is None or points_rest <= budget // 2:
            return by_points
    props = feature.get("properties")
    found = _largest_list(props, ("properties",), 0) if isinstance(props, Mapping) else None
    if found is None:
        return by_points
    _, path, columns = found
    node: Any = feature
    for key in path:
        node = node[key]
    by_items = _Splitter(feature, len(node[columns[0]]) if columns else len(node), path, columns)
    if by_points is None:
        return by_items
    return by_items if compact_size(by_items.make(0, 0)) < points_rest else by_points


def _size_upto(feature: Mapping[str, Any], cap: int) -> int | None:
    """The feature's compact size when it is at most ``cap``, else None; a long geometry is
    judged from a sample of its points first, so a huge track is never encoded whole."""
    split = _splittable(feature)
    if split is not None:
        n = _count(split[0], split[1])
        if n > 4 * _SAMPLE:
            base = compact_size(_slice(feature, 0, 0, n)[0])
            sample = compact_size(_slice(feature, 0, _SAMPLE, n)[0])
            if base + (sample - base) / _SAMPLE * n > 2 * cap:
                return None
    size = compact_size(feature)
    return size if size <= cap else None


# -- pages ---------------------------------------------------------------------------------------------


def page_features(
    features: Sequence[Mapping[str, Any]], start: Position, *, budget: int, limit: int
) -> tuple[list[dict[str, Any]], Position | None]:
    """One page from ``start``: at most ``limit`` items whose JSON list fits ``budget``
    characters, and where the next page starts (None after the last feature).

    Whole features come as shallow copies; a feature that would fit
    a page of its own waits for the next page rather than be split; a bigger one comes in
    parts (a new page may start mid-feature). A page always makes progress: a part of one
    point (or item), or a feature that cannot be split at all, comes alone on its page even
    when it is over the budget, and the caller's answer cap then says so.
    """
    fi, p = start
    if fi < 0 or p < 0:
        raise ValueError(f"position {start!r} is negative")
    out: list[dict[str, Any]] = []
    used = 2  # the brackets
    while fi < len(features) and len(out) < max(1, limit):
        feature = features[fi]
        room = budget - used - (1 if out else 0)
        if p == 0:
            whole = _size_upto(feature, budget - 2)
            if whole is not None and whole <= room:
                out.append(dict(feature))
                used += whole + (1 if len(out) > 1 else 0)
                fi += 1
                continue
            if whole is not None and out:
                break  # it fits a page of its own: keep it whole
        splitter = _splitter(feature, budget)
        if splitter is None or p >= splitter.total:
            if out:
                break
            out.append(dict(feature))
            fi, p = fi + 1, 0
            break
        taken = splitter.take(p, room)
        if taken is None:
            if out:
                break
            taken = splitter.one(p)
        part, size, end = taken
        out.append(part)
        used += size + (1 if len(out) > 1 else 0)
        if end < splitter.total:
            p = end
            break
        fi, p = fi + 1, 0
    return out, ((fi, p) if fi < len(features) else None)


# -- putting parts back together ---------------------------------------------------------------------


def _merge(acc: list[Any], new: list[Any], first: list[int], depth: int) -> None:
    for j, child in enumerate(new):
        idx = (first[0] if first else 0) + j
        if idx < len(acc):  # the sub-part the previous part ended in goes on
            if depth == 2:
                acc[idx] = acc[idx] + child
            else:
                _merge(acc[idx], child, first[1:] if j == 0 else [], depth - 1)
        else:
            acc.append(child)


def join_parts(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The feature that the parts of one feature (in order, as pages gave them) were cut from."""
    if not parts:
        raise ValueError("no parts to join")
    head = {k: v for k, v in parts[0].items() if k != "part"}
    marker = parts[0].get("part")
    if not isinstance(marker, Mapping):
        return head
    if "items" in marker:
        path = list(marker["at"])
        columns = [str(c) for c in marker.get("arrays", [])]
        joined: dict[str, list[Any]] = {name: [] for name in columns or [""]}
        for part in parts:
            node: Any = part
            for key in path:
                node = node[key]
            for name in joined:
                joined[name] += node[name] if name else node
        if not columns:
            return _set_at(head, tuple(path), joined[""])
        for name in columns:
            head = _set_at(head, (*path, name), joined[name])
        return head
    names = list(marker.get("arrays", []))
    props = dict(properties_of(head))
    for name in names:
        props[name] = [item for part in parts for item in properties_of(part)[name]]
    if names:
        head["properties"] = props
    geom = geometry_of(head)
    split = _splittable(head)
    if geom is not None and split is not None:
        coords, depth = split
        acc: list[Any] = json.loads(json.dumps(coords)) if depth > 1 else list(coords)
        for part in parts[1:]:
            piece = (geometry_of(part) or {}).get("coordinates") or []
            if depth == 1:
                acc += piece
            else:
                first = part["part"].get("first", 0)
                _merge(acc, piece, first if isinstance(first, list) else [first], depth)
        head["geometry"] = {**geom, "coordinates": acc}
    return head


def _set_at(feature: Mapping[str, Any], path: tuple[str, ...], value: list[Any]) -> dict[str, Any]:
    out = dict(feature)
    node: dict[str, Any] = out
    for key in path[:-1]:
        node[key] = dict(node[key])
        node = node[key]
    node[path[-1]] = value
    return out
