"""A distance as answers' texts and pictures' labels write it: four significant figures below
1,000 (``119.5``, ``28.03``), whole and grouped from 1,000 (``4,560``), so a label reads what
the answer beside it says (a CPA of 119.544 yd is "119.5 yd" in both, never "120 yd")."""

from __future__ import annotations

__all__ = ["distance_figure"]


def distance_figure(value: float) -> str:
    """The number, without its unit."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
