"""A picture of one stretch of time: the plot's tracks cut to the window by
:func:`debrief_calc.tracks.times.cut_feature` (the fixes inside and a fix interpolated at each
edge, as every tool cuts them; a sensor's cuts inside it), so that nothing before the start or
after the end is drawn; an
end cut so is not marked as the track's start or end. Which zones, points and narrative entries
show is decided as without a window (active at the current time), and without a current time by
whether they are active at some time in the window; a narrative entry shows only when logged
inside it."""

from __future__ import annotations

from typing import Any

from debrief_calc.errors import ValidationFailed, validation_failed
from debrief_calc.plots.render._common import Item
from debrief_calc.tracks.features import feature_kind, time_span
from debrief_calc.tracks.times import SOURCES, Window, active_at, cut_feature, iso

__all__ = ["cut_tracks", "shown", "tracks_span"]


def cut_tracks(
    features: list[Any], window: Window | None, *, strict: bool = True
) -> tuple[list[Any], list[str], str | None]:
    """The features with every track and sensor cut to the window (a sensor with no cut in it left
    out), the ids of the tracks left out (nothing in it), and a note when no track is left. With ``strict``, a window asked for (``time_start``)
    that no track has data in is a ValidationFailed naming ``time_start`` (the tracks' period said,
    to choose another); the plot's saved window is drawn even then, and the note says so."""
    if window is None or window.source == "data":
        return features, [], None
    out: list[Any] = []
    left_out: list[str] = []
    periods: list[tuple[float, float]] = []
    for n, f in enumerate(features):
        if isinstance(f, dict) and feature_kind(f) == "sensor":  # its cuts inside the window
            try:
                kept = cut_feature(f, window)
            except ValidationFailed:
                kept = f  # not one time per cut: drawn as it is, read leniently (:mod:`._cuts`)
            if kept is not None:
                out.append(kept)
            continue
        if not isinstance(f, dict) or feature_kind(f) != "track":
            out.append(f)
            continue
        if (period := time_span(f)) is not None:
            periods.append(period)
        cut = cut_feature(f, window)
        if cut is None:
            left_out.append(str(f.get("id")) if f.get("id") is not None else f"#{n}")
        else:
            out.append(cut)
    if not left_out or len(left_out) < len(periods):
        return out, left_out, None
    run = f"{iso(min(p[0] for p in periods))} to {iso(max(p[1] for p in periods))}"
    why = f"no track has data in the window {window.text} ({SOURCES[window.source]}); the tracks run {run}"
    if strict and window.source == "asked":
        raise validation_failed("time_start", f"{why}: choose time_start/time_end inside that, or leave them out")
    return out, left_out, why


def tracks_span(items: list[Item]) -> tuple[float, float] | None:
    """The period the tracks drawn cover (None without a timed track)."""
    drawn = [it.track for it in items if it.kind == "track" and it.track is not None and len(it.track)]
    if not drawn:
        return None
    return min(float(tr.t[0]) for tr in drawn), max(float(tr.t[-1]) for tr in drawn)


def shown(it: Item, q: float | None, window: Window | None) -> bool:
    """Whether the item is drawn: active at ``q`` (with no ``q``, at some time in the window);
    a narrative entry only when logged inside the window."""
    if window is None or window.source == "data":
        return active_at(it.active, q)
    if it.at is not None and not window.logged_in(it.at):
        return False
    return active_at(it.active, q) if q is not None else window.overlaps(it.active)
