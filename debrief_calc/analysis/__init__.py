"""The built-in analysis tools, one module per tool or family; each exposes its ToolSpec.

The arrows run one way: the tools import :mod:`debrief_calc.analysis.registry`, never the reverse.
"""

from __future__ import annotations

import functools

from debrief_calc.analysis.registry import Registry, ToolSpec

__all__ = ["builtin_specs", "default_registry"]


def builtin_specs() -> tuple[ToolSpec, ...]:
    """The built-in tools, in the order ``list_tools`` shows them."""
    from debrief_calc.analysis import (
        bearing_residuals,
        close_quarters,
        commands,
        cpa,
        import_dpf,
        import_rep,
        range_bearing,
        resample,
        speed_filter,
        tma_solve,
        tote,
        track_legs,
        track_stats,
        zone_overlaps,
        zones,
    )

    return (
        track_stats.SPEC,
        track_legs.SPEC,
        range_bearing.SPEC,
        tote.SPEC,
        cpa.SPEC,
        close_quarters.SPEC,
        zones.TRANSITS_SPEC,
        zone_overlaps.SPEC,
        speed_filter.SPEC,
        zones.AREA_SPEC,
        resample.SPEC,
        commands.SPEC,
        import_rep.SPEC,
        import_dpf.SPEC,
        bearing_residuals.SPEC,
        tma_solve.SPEC,
    )


@functools.lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The built-in analysis tools (built once)."""
    return Registry(builtin_specs())
