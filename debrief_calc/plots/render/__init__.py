"""A PNG picture of a plot that reads like legacy Debrief's, for the analyst and the model to look at.

What it shows: zones filled half-transparent in their colours and named; tracks in their
``stroke`` colour with chevrons showing the direction of travel, an open circle at the first fix
and a bar at the last (with their DTGs), and ticks labelled with Debrief's DTG (``DDHHMMZ``) at an
interval that suits the zoom; with a current time, each track's past solid and its future faint
(or hidden), each ship's marker at its interpolated position pointing the way it moves and
labelled with its name (white-outlined, the upper of two that overlap drawn smaller so both
show), and the zones, buoy fields and reference points that are active then (those in view but
not active are counted below the map and listed in ``hidden_inactive``); optionally the range
line between two tracks, in yards up to 10,000 yd and in nautical miles beyond, with a magnified
inset when it is too short to see. Narrative entries (annotations with a time and a ship's name in
``properties.track``) are small squares on that ship's track where it was then, labelled with
their DTG and text, for 30 minutes after their time, fading as they age (:mod:`._narrative`);
sensor cuts are thin lines from their origins along their bearings, to their range or the plot's
no-range length, ambiguous bearings dashed, shown as narrative entries are (from their time for 30
minutes; inside a window), beyond 60 of a sensor every n-th and the newest, a selected sensor's
labelled with their times; target solutions carry their ellipses at their fixes (:mod:`._cuts`);
those that no track holds are counted below the map and listed in ``unplaced``. Points and
annotations take their ``marker_color`` (``marker-color``, ``color``). The selection gets a thin
translucent cyan highlight under it, faint under the future. A legend of the tracks (long names
shortened at a word) and of the conventions shown, a graticule, the title, the time and a scale
bar in nautical miles frame it. Labels stay inside the map, clear of each other and of the legend;
time labels are dropped rather than laid over a line; a narrative's label gives way to ships'
names and tracks' starts and ends, and time labels give way to it. Land is filled in where the
optional ``land`` extra (GSHHS coastlines) is installed. Text is Pillow's built-in font, its word
spaces widened where they would vanish (:mod:`._labels`).

A window (:class:`~debrief_calc.tracks.times.Window`: asked for, or the plot's saved one) draws the
tracks over that stretch of time alone, cut as every tool cuts them.

Which area: the saved viewport, all the data, the selection, the tracks in the window or explicit
bounds (``fit``), padded
about its middle to at most 2:1 (or 1:2), which ``note`` then says; the image takes that shape
within the maximum size. Rendering never changes the plot. Backdrops, metadata and features with
``visible: false`` are not drawn. Pillow and numpy are imported on the first render, so importing
this package costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from debrief_calc.plots.render._common import HIGHLIGHT, Rendered

if TYPE_CHECKING:
    from debrief_calc.tracks.times import Window

__all__ = ["HIGHLIGHT", "Rendered", "render_plot", "render_plot_png"]


def render_plot(
    doc_data: dict[str, Any],
    *,
    max_width: int = 1024,
    max_height: int = 768,
    selection: Iterable[str] = (),
    current_time: float | None = None,
    fit: str | Sequence[float] = "viewport",
    viewport: Any = None,
    title: str | None = None,
    show_future: bool = True,
    cpa: tuple[str, str] | tuple[str, str, float] | None = None,
    window: Window | None = None,
) -> Rendered:
    """The plot as a PNG no larger than ``max_width`` × ``max_height``.

    ``fit``: ``"viewport"`` (``viewport``, the plot's saved ``[w, s, e, n]`` or ``{bounds}``;
    all the data when it is None), ``"all"`` (everything drawable, whatever the time),
    ``"selection"`` (the features whose ids are in ``selection``), ``"window"`` (what the tracks
    cover in ``window``, the zones they are in and selected features) or ``[w, s, e, n]``.
    ``window``: the tracks drawn only over it (:mod:`._window`; None or a ``"data"`` window: all).
    ``current_time`` in epoch seconds. ``cpa``: two track ids, and optionally a time (epoch
    seconds; default the current time), to draw the range line between them.

    Raises ``ValidationFailed`` naming ``fit``, ``viewport``, ``cpa`` or ``time_start`` when that
    cannot be used (bad bounds, nothing selected, not tracks, no position at the time, no track in
    a window asked for).
    """
    from debrief_calc.plots.render._plot import draw_plot

    return draw_plot(
        doc_data,
        max_width=max_width,
        max_height=max_height,
        selection=selection,
        current_time=current_time,
        fit=fit,
        viewport=viewport,
        title=_title_of(doc_data) if title is None else title,
        show_future=show_future,
        cpa=cpa,
        window=window,
    )


def render_plot_png(
    doc_data: dict[str, Any],
    *,
    width: int = 1024,
    height: int = 768,
    selection: Iterable[str] = (),
    current_time: float | None = None,
    viewport: Any = None,
    title: str | None = None,
) -> bytes:
    """The PNG bytes of :func:`render_plot` fitted to ``viewport`` (all the data without one)."""
    return render_plot(
        doc_data,
        max_width=width,
        max_height=height,
        selection=selection,
        current_time=current_time,
        viewport=viewport,
        title=title,
    ).png


def _title_of(doc_data: dict[str, Any]) -> str:
    props = doc_data.get("properties")
    name = props.get("name") if isinstance(props, dict) else None
    return name if isinstance(name, str) else ""
