"""One parsed plot: :class:`PlotDoc`, its state helpers, drafts and layout-keeping encoding.

A doc from the cache is frozen and shared by every reader. :meth:`PlotDoc.draft` gives a
mutable copy (deep by default, or shallow for changes that replace features and never alter
them) that remembers which of its features came from the base, so that encoding it reuses the
base's text for every feature whose value did not change and re-encodes only the rest.
"""

from __future__ import annotations

import contextlib
import gc
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from debrief_calc.errors import validation_failed
from debrief_calc.formats import metadata
from debrief_calc.formats.jsonfmt import DEFAULT_FORMAT, JsonFormat, dump_document, dump_feature

__all__ = ["PlotDoc", "no_gc"]


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cycle collector while building a large acyclic JSON value: each of its
    collections would walk every object of every cached plot (several ms on a 577 KB plot)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _same(a: Any, b: Any) -> bool:
    """Equal values with the same key order and scalar types in every dict not inside a list."""
    return bool(a == b) and _same_shape(a, b)


def _same_shape(a: Any, b: Any) -> bool:
    if not isinstance(a, dict):
        return True
    if list(a) != list(b):
        return False
    for key, value in a.items():
        other = b[key]
        if type(value) is not type(other) or (isinstance(value, dict) and not _same_shape(value, other)):
            return False
    return True


class PlotDoc:
    """One plot: ``path``, the whole parsed ``data``, its ``features`` list and its ``revision``."""

    def __init__(
        self,
        path: Path,
        data: dict[str, Any],
        *,
        revision: str,
        fmt: JsonFormat = DEFAULT_FORMAT,
        size: int = 0,
        texts: list[str] | None = None,
        frozen: bool = True,
    ):
        self.path = path
        self.data = data
        self.revision = revision
        self.fmt = fmt
        self.size = size
        self.frozen = frozen
        self._texts: list[str | None] = list(texts) if texts is not None else [None] * len(self.features)
        self._index: dict[str, int] | None = None
        self._base: PlotDoc | None = None
        self._origin: dict[int, int] = {}
        self._keep: list[Any] = []
        self._shallow = False

    def __repr__(self) -> str:
        return f"PlotDoc({self.path.name!r}, {len(self.features)} features, revision={self.revision})"

    @property
    def features(self) -> list[dict[str, Any]]:
        feats: list[dict[str, Any]] = self.data["features"]
        return feats

    def index_by_id(self) -> dict[str, int]:
        """Feature id (as a string) → position; the first wins when ids repeat."""
        if self._index is not None and self.frozen:
            return self._index
        index: dict[str, int] = {}
        for i, f in enumerate(self.features):
            fid = f.get("id")
            if fid is not None:
                index.setdefault(str(fid), i)
        if self.frozen:
            self._index = index
        return index

    def get_feature(self, fid: str) -> dict[str, Any] | None:
        i = self.index_by_id().get(str(fid))
        return None if i is None else self.features[i]

    def get_time_state(self) -> dict[str, str] | None:
        return metadata.get_time_state(self.data)

    def get_viewport(self) -> dict[str, list[float]] | None:
        return metadata.get_viewport(self.data)

    def set_time_state(self, state: dict[str, Any] | None = None, **times: str) -> dict[str, str]:
        """Validate ``{current, start, end}`` (a dict or keywords) and write it into the time
        metadata feature."""
        self._check_mutable()
        clean = metadata.check_time_state({**(state or {}), **times})
        old = self.get_feature(metadata.TIME_ID)
        metadata.put_feature(self.features, metadata.time_feature(clean, old))
        return clean

    def set_viewport(self, bounds: Any) -> list[float]:
        """Validate ``[w, s, e, n]`` (or ``{bounds}``) and write it into the viewport feature."""
        self._check_mutable()
        clean = metadata.check_bounds(bounds)
        old = self.get_feature(metadata.VIEWPORT_ID)
        metadata.put_feature(self.features, metadata.viewport_feature(clean, old))
        return clean

    def _check_mutable(self) -> None:
        if self.frozen:
            raise RuntimeError("this PlotDoc is shared by the cache; change plots through modify_plot()")

    def draft(self, *, shallow: bool = False) -> PlotDoc:
        """A mutable copy that remembers which of its features came from here.

        Deep by default. ``shallow``: only the top-level dict and the features list are new and
        the feature objects are shared with this doc, so a change must replace a feature, never
        alter one in place (``apply_command`` works that way); a copy then costs microseconds.
        """
        if shallow:
            data = dict(self.data)
            data["features"] = list(self.features)
        else:
            with no_gc():
                data = pickle.loads(pickle.dumps(self.data, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301
        out = PlotDoc(self.path, data, revision=self.revision, fmt=self.fmt, size=self.size, frozen=False)
        out._base = self
        out._shallow = shallow
        out._keep = list(out.features)  # keeps the ids in _origin from being reused
        out._origin = {id(f): i for i, f in enumerate(out._keep)}
        return out

    def feature_text(self, i: int) -> str:
        """Feature ``i`` as encoded in the file (memoised while the doc is frozen)."""
        if not self.frozen:
            return dump_feature(self.features[i], self.fmt)
        text = self._texts[i]
        if text is None:
            text = self._texts[i] = dump_feature(self.features[i], self.fmt)
        return text

    def adopt_texts(self, older: PlotDoc) -> None:
        """Reuse the encoded texts of an earlier version's unchanged features (matched by id), so
        that a plot another process changed costs a parse but not a full re-encode."""
        if older.fmt != self.fmt or all(t is None for t in older._texts):
            return
        index = older.index_by_id()
        for i, f in enumerate(self.features):
            j = index.get(str(f["id"])) if f.get("id") is not None else None
            if j is not None and older._texts[j] is not None and _same(f, older.features[j]):
                self._texts[i] = older._texts[j]

    def _kept(self, f: Any, i: int | None) -> bool:
        """Whether draft feature ``f``, copied from base feature ``i``, still holds its value."""
        if i is None or self._base is None:
            return False
        return self._shallow or _same(f, self._base.features[i])

    def unchanged(self) -> bool:
        """True when this draft still holds its base's value, feature for feature (cheaper than
        encoding it to find out)."""
        base = self._base
        if base is None or list(self.data) != list(base.data) or len(self.features) != len(base.features):
            return False
        if any(k != "features" and not _same(v, base.data[k]) for k, v in self.data.items()):
            return False
        return all(self._origin.get(id(f)) == i and self._kept(f, i) for i, f in enumerate(self.features))

    def to_bytes(self) -> tuple[bytes, list[str]]:
        """The file's bytes in the doc's layout, and the per-feature texts used."""
        data = self.data
        if not (isinstance(data, dict) and data.get("type") == "FeatureCollection"):
            raise validation_failed("plot", "must stay a GeoJSON FeatureCollection object")
        feats = data.get("features")
        if not isinstance(feats, list) or not all(isinstance(f, dict) for f in feats):
            raise validation_failed("plot.features", "must stay a list of Feature objects")
        base = self._base
        texts: list[str] = []
        for f in feats:
            i = self._origin.get(id(f))
            if base is not None and i is not None and self._kept(f, i):
                texts.append(base.feature_text(i))
            else:
                texts.append(dump_feature(f, self.fmt))
        return dump_document(data, texts, self.fmt), texts
