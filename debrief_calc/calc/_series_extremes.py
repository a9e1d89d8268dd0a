"""Each panel's extremes with their times: the answer lists the largest and least value of every
quantity drawn, and the picture marks and labels a signed quantity's largest positive and largest
negative value (bearing rate drawing right and left, range rate opening and closing, rate of turn to
starboard and port), so neither side's peak goes untimed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debrief_calc.calc.series_plot import Marker, Panel
    from debrief_calc.geo._arrays import FloatArray

__all__ = ["Extreme", "signed_extremes"]


@dataclass(frozen=True)
class Extreme:
    """An extreme as the answer gives it (``info``) and, for a signed quantity, its mark (``drawn``)."""

    info: dict[str, Any]
    marker: Marker
    drawn: bool


def _unit(label: str) -> str:
    """The unit in a panel's label: "Bearing rate (°/min, + drawing right)" -> "°/min"."""
    found = re.search(r"\(([^,)]*)", label)
    return found.group(1).strip() if found else ""


def signed_extremes(panel: Panel, times: FloatArray) -> list[Extreme]:
    """The panel's largest and least values with their times (the curve drawn, or the samples);
    marked when the quantity is signed and the value on that side of zero."""
    import numpy as np

    from debrief_calc.calc.series_plot import Marker
    from debrief_calc.tracks.times import clock, iso

    t = panel.times if panel.times is not None else times
    values = panel.values
    finite = np.flatnonzero(np.isfinite(values))
    if not finite.size or panel.dots:
        return []
    unit = _unit(panel.label)
    unit = unit if unit.startswith("°") or not unit else f" {unit}"
    source = "curve" if panel.times is not None else "sampled"
    out = []
    for kind, k in (("max", finite[np.argmax(values[finite])]), ("min", finite[np.argmin(values[finite])])):
        value, when = float(values[k]), float(t[k])
        side = None
        if panel.sign is not None and value != 0:
            side = panel.sign[0] if value > 0 else panel.sign[1]
        shown = f"{value:+.1f}{unit}" if panel.sign is not None else f"{value:.1f}{unit}"
        # the curve holds a fix twice, each side's value: say which the extreme is
        leg = "before" if k + 1 < t.size and t[k + 1] == when else "after" if k > 0 and t[k - 1] == when else None
        at_fix = f" (leg {leg} the fix)" if leg else ""
        text = f"{'Peak' if side else kind.title()} {shown}{f' ({side})' if side else ''} at {clock(when)}{at_fix}"
        drawn = side is not None and (kind == "max") == (value > 0)
        info = {"kind": kind, "value": round(value, 4), "time": iso(when), "label": text, "source": source}
        info["marked"] = drawn
        if leg:
            info["at_fix"] = f"leg {leg}"
        if side:
            info["side"] = side
        out.append(Extreme(info, Marker(when, text, panel.name, value), drawn))
    return out
