"""Time, in one place: a time window, what it cuts, and the clock's text.

Every tool, picture, view and the Python API use this module; none keeps a copy of its logic
(``tests/test_layers.py`` checks that no other module reads a window's bounds).

**Text.** An answer prints an instant to the millisecond (:func:`iso`); a display shows the
nearest second (:func:`second`, :func:`clock`, :func:`dtg`, :func:`iso_second`, :func:`stamp`):
see :mod:`._time_text`. Times are read by :func:`parse_iso` and :func:`parse_times`.

**A window** (:class:`Window`) is ``[start, end]`` in epoch seconds, either end open, with where
it came from (its ``source``): ``"asked"`` (a call's ``time_start``/``time_end``, or a
reference's own), ``"plot"`` (the plot's saved window, ``debrief_set_time``: the default of
everything drawn or measured from a plot) or ``"data"`` (none: the whole data, uncut). Every
answer states the window it used in one shape, :meth:`Window.answer`.

**What a window cuts** (:func:`cut_feature`, :func:`cut_features`): a track keeps its fixes
inside and gains a fix interpolated exactly at each edge that falls between two of its fixes
(:mod:`._time_cut`); a sensor keeps its cuts inside; a bound is an exact instant, and a fix within :data:`TOLERANCE` (half a
millisecond) of it is inside, so an instant an answer printed and a model passed back loses no
fix. Another feature is kept whole while active in the window and left out when not; a feature
with no time at all is kept.

**Active at a time** (zones, points, narrative entries: :func:`active_at`): a time asked as a
whole second stands for the instants that read as that second (nearest second: from half a
second before to half a second after), one with a fraction for that millisecond
(:func:`reading`); so a narrative entry logged at ``10:45:08.902`` shows at ``10:45:09``, as its
label reads, and not at ``10:45:08``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.tracks._feature_parts import feature_kind
from debrief_calc.tracks._time_text import TOLERANCE, clock, dtg, iso, iso_many, iso_second, parse_iso, second, stamp

if TYPE_CHECKING:
    from debrief_calc.geo._arrays import FloatArray

__all__ = [
    "SOURCES",
    "TOLERANCE",
    "Source",
    "Window",
    "active_at",
    "clock",
    "cut_feature",
    "cut_features",
    "data_window",
    "dtg",
    "iso",
    "iso_many",
    "iso_second",
    "left_out_text",
    "parse_iso",
    "parse_times",
    "parse_window",
    "reading",
    "saved_window",
    "second",
    "stamp",
]

Source = Literal["asked", "plot", "data"]
#: where a window came from, as every answer's ``window.source`` says it
SOURCES: Final[dict[str, str]] = {
    "asked": "the time_start/time_end asked for",
    "plot": "the plot's saved window (debrief_set_time); pass time_start/time_end to use another",
    "data": "no window: the whole data",
}


@dataclass(frozen=True)
class Window:
    """``[start, end]`` in epoch seconds (None: open at that end) and where it came from.

    The bounds are private to this module: every other module asks the window what it needs
    (:meth:`contains`, :meth:`mask`, :meth:`clamp`, :meth:`at_edge`, :meth:`cut_ends`,
    :meth:`answer`) or this module to cut (:func:`cut_feature`), so that nothing else compares
    times with a window's bounds (``tests/test_layers.py`` checks it)."""

    _start: float | None
    _end: float | None
    source: Source = "asked"

    @classmethod
    def spanning(cls, windows: Sequence[Window]) -> Window:
        """The least window holding all of ``windows`` (open where one is), source ``"asked"``
        when any was asked for, else ``"plot"``."""
        starts = [w._start for w in windows]
        ends = [w._end for w in windows]
        return cls(
            None if None in starts else min(s for s in starts if s is not None),
            None if None in ends else max(e for e in ends if e is not None),
            "asked" if any(w.source == "asked" for w in windows) else "plot",
        )

    def closed_by(self, period: Window) -> Window:
        """This window with an open end taken from ``period`` (e.g. the period of what it cut)."""
        return replace(
            self,
            _start=self._start if self._start is not None else period._start,
            _end=self._end if self._end is not None else period._end,
        )

    @property
    def closed(self) -> bool:
        return self._start is not None and self._end is not None

    @property
    def shown(self) -> list[str | None]:
        """``[start, end]`` as ISO-8601 (null where open)."""
        return [iso(t) if t is not None else None for t in (self._start, self._end)]

    @property
    def text(self) -> str:
        return " to ".join(t or "open" for t in self.shown)

    def answer(self, **extra: Any) -> dict[str, Any]:
        """The window as every answer states it: ``{start, end, source}`` and ``extra``."""
        return {"start": self.shown[0], "end": self.shown[1], "source": self.source, **extra}

    def same_span(self, other: Window | None) -> bool:
        return other is not None and (self._start, self._end) == (other._start, other._end)

    def contains(self, t: float) -> bool:
        """Whether the instant ``t`` is in the window (within :data:`TOLERANCE` of a bound)."""
        return (self._start is None or t >= self._start - TOLERANCE) and (
            self._end is None or t <= self._end + TOLERANCE
        )

    def mask(self, times: FloatArray) -> Any:
        """:meth:`contains` of each of an array of times, as a boolean array."""
        import numpy as np

        keep = np.ones(np.shape(times), dtype=bool)
        if self._start is not None:
            keep &= times >= self._start - TOLERANCE
        if self._end is not None:
            keep &= times <= self._end + TOLERANCE
        return keep

    def at_edge(self, t: float) -> Literal["start", "end"] | None:
        """Which bound ``t`` is at (within :data:`TOLERANCE`), or None."""
        if self._start is not None and abs(t - self._start) <= TOLERANCE:
            return "start"
        if self._end is not None and abs(t - self._end) <= TOLERANCE:
            return "end"
        return None

    def cut_ends(self, whole: Window) -> tuple[bool, bool]:
        """Whether this window leaves out some of ``whole`` (the data's period) before its start,
        and after its end."""
        return (
            self._start is not None and (whole._start is None or self._start > whole._start + TOLERANCE),
            self._end is not None and (whole._end is None or self._end < whole._end - TOLERANCE),
        )

    def clamp(self, t: float) -> float:
        """``t`` moved inside the window, to the nearer bound when outside."""
        lo = -math.inf if self._start is None else self._start
        hi = math.inf if self._end is None else self._end
        return min(max(t, lo), hi)

    def logged_in(self, t: float) -> bool:
        """Whether an event at ``t`` (a narrative entry) belongs to the window, each bound read at
        its precision (:func:`reading`)."""
        return (self._start is None or t >= reading(self._start)[0]) and (
            self._end is None or t < reading(self._end)[1]
        )

    def overlaps(self, period: tuple[float, float] | None) -> bool:
        """Whether a feature active over ``period`` (None: always) is active at some time in the window."""
        return active_at(
            period, -math.inf if self._start is None else self._start, math.inf if self._end is None else self._end
        )


def parse_times(values: object, *, field: str = "times", label: str = "track", fid: str | None = None) -> FloatArray:
    """A list of times (ISO-8601 strings, or epoch numbers: milliseconds from 1e11 up, seconds
    below) as epoch seconds, vectorised. ValidationFailed names the first bad index and its value."""
    from debrief_calc.tracks._time_arrays import parse_times as parse

    return parse(values, field=field, label=label, fid=fid)


def parse_window(time_start: object, time_end: object, *, prefix: str = "", source: Source = "asked") -> Window | None:
    """The window of two ISO-8601 times (either may be None), or None when both are.
    ValidationFailed naming ``<prefix>time_start`` / ``<prefix>time_end`` and the rule."""
    ends: list[float | None] = []
    for key, value in (("time_start", time_start), ("time_end", time_end)):
        if value is None:
            ends.append(None)
            continue
        field = prefix + key
        if isinstance(value, str):
            try:
                ends.append(parse_iso(value))
                continue
            except ValidationFailed:
                pass
        raise ValidationFailed(
            f"{field} {str(value)[:60]!r} is not an ISO-8601 time (e.g. 1995-12-12T09:00:00Z)",
            details={"field": field, "rule": "iso-time"},
        )
    start, end = ends
    if start is None and end is None:
        return None
    if start is not None and end is not None and start > end:
        raise ValidationFailed(
            f"{prefix}time_end ({time_end}) is before {prefix}time_start ({time_start}): swap them",
            details={"field": prefix + "time_end", "rule": "order"},
        )
    return Window(start, end, source)


def saved_window(time_state: Mapping[str, Any] | None) -> Window | None:
    """A plot's saved window (its time state's ``start`` and ``end``) with source ``"plot"``; None
    when the plot has none, or one that cannot be read (then the whole data is used)."""
    if not isinstance(time_state, Mapping):
        return None
    try:
        return parse_window(time_state.get("start"), time_state.get("end"), source="plot")
    except ValidationFailed:
        return None


def data_window(features: Sequence[Any]) -> Window:
    """No window: the whole data, its ``start``/``end`` the first and last time of the features
    (None without any), with source ``"data"``. It cuts nothing."""
    from debrief_calc.tracks.features import time_span

    spans = [s for f in features if isinstance(f, Mapping) and (s := time_span(f)) is not None]
    if not spans:
        return Window(None, None, "data")
    return Window(min(s[0] for s in spans), max(s[1] for s in spans), "data")


def reading(t: float) -> tuple[float, float]:
    """The instants a time asked as ``t`` stands for, ``[lo, hi)``: a whole second the instants
    that read as it (nearest second), a time with a fraction that millisecond."""
    half = 0.5 if float(t).is_integer() else 0.0005
    return t - half, t + half


def active_at(period: tuple[float, float] | None, t: float | None, until: float | None = None) -> bool:
    """Whether a feature active over ``period`` (None: always) is active at ``t`` (everything is,
    without a time), or with ``until`` at some time from ``t`` to ``until``; each time read at its
    precision (:func:`reading`)."""
    if t is None or period is None:
        return True
    return period[0] < reading(t if until is None else until)[1] and reading(t)[0] <= period[1]


def cut_feature(feature: Mapping[str, Any], window: Window | None) -> dict[str, Any] | None:
    """The feature within the window (module docstring), or None when nothing of it is in it. A
    ``"data"`` window (the whole data) or None cuts nothing."""
    from debrief_calc.tracks._time_cut import cut_sensor, cut_track
    from debrief_calc.tracks.features import active_period

    if window is None or window.source == "data":
        return dict(feature)
    if feature_kind(feature) == "track":
        return cut_track(feature, window._start, window._end)
    if feature_kind(feature) == "sensor":
        return cut_sensor(feature, window._start, window._end)
    return dict(feature) if window.overlaps(active_period(feature)) else None


def cut_features(
    features: Sequence[Any], window: Window | None, *, where: str, field: str = "time_start", require: bool = True
) -> tuple[list[Any], list[str]]:
    """The features cut to ``window`` and the ids of those it left out entirely (nothing of
    them inside); with ``require``, none left at all is an InvalidContext naming ``field`` and
    ``where`` the features came from. Items that are not features pass untouched (the caller
    says what they are)."""
    if window is None or window.source == "data":
        return list(features), []
    kept: list[Any] = []
    left_out: list[str] = []
    for n, feature in enumerate(features):
        if not isinstance(feature, Mapping):
            kept.append(feature)
            continue
        cut = cut_feature(feature, window)
        if cut is None:
            left_out.append(str(feature.get("id", f"#{n}")))
        else:
            kept.append(cut)
    if require and features and not kept:
        raise InvalidContext(
            f"none of the {len(features)} feature(s) {where} has data in the window {window.text}: "
            f"widen {field.rsplit('time_', 1)[0]}time_start/time_end or leave them out",
            details={"field": field, "received_count": 0, "window": window.answer(), "left_out": left_out[:100]},
        )
    return kept, left_out


def left_out_text(window: Window, left_out: list[str]) -> str:
    shown = ", ".join(left_out[:20]) + (f" and {len(left_out) - 20} more" if len(left_out) > 20 else "")
    return f"{len(left_out)} feature(s) with nothing in the window {window.text} left out: {shown}"
