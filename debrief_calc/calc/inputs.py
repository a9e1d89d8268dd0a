"""The features a calc call names, read and cut to the window it uses.

``run_tool`` and ``render_series`` take their features inline, as references (``{"ref": …}``
items, each with an optional window of its own) or from a plot (``plot``); this module reads
them, and cuts them to the window (:mod:`debrief_calc.tracks.times`, the one place that cuts):

* a window asked for (``time_start``/``time_end``, or ``plot.time_start``/``plot.time_end``; two
  different ones are refused) cuts every input;
* otherwise a measuring tool (one whose results are ``analysis-result``) reads what came from a
  plot (``plot``, or a ``debrief-state:plots`` reference without a window of its own) through that
  plot's saved window, as the plot's picture draws it; a reference's own window cuts what it
  stands for; inline features and stored results are read whole;
* the answer states the window used, :func:`window_answer` (one shape everywhere, with the
  whole data's period when the window cut some of it, so a model can ask for all of it).

A tool that edits a plot (delete-features, resample-track, import-rep) reads whole features
unless a window is asked for: a saved window is what the analyst looks at, not what they delete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from debrief_calc.errors import FeatureNotFound, InvalidContext, ValidationFailed
from debrief_calc.plots import plotstate
from debrief_calc.tracks._feature_parts import feature_kind
from debrief_calc.tracks.times import (
    Window,
    cut_features,
    data_window,
    left_out_text,
    parse_iso,
    parse_window,
    saved_window,
)

if TYPE_CHECKING:
    from debrief_calc.analysis.registry import Registry
    from llmem.core.store import ArtifactStore

__all__ = [
    "PLOT_MEMBERS",
    "Inputs",
    "cut_ends",
    "expand_refs",
    "plot_features",
    "read_inputs",
    "skipped_text",
    "window_answer",
]

PLOT_MEMBERS = frozenset({"filename", "feature_ids", "selection", "time_start", "time_end"})
#: the tools that read files into features: a window has nothing to cut (hosts given are read whole)
IMPORTS = frozenset({"import-rep", "import-dpf"})
#: kinds never handed to a tool from a whole plot: the plot's own settings and its map backdrops
_NOT_DATA = frozenset({"metadata", "backdrop"})


@dataclass
class _Group:
    """Features read from one place, and the window they were (or are to be) cut to."""

    features: list[Any]
    whole: bool  # read from a whole plot: kinds the tool does not take are left out, not refused
    window: Window | None  # their own window (a reference's), applied already
    default: Window | None = None  # the plot's saved window, for a measuring tool with no window asked


@dataclass
class Inputs:
    """What a call reads: the features (cut), the windows applied and what they left out."""

    features: list[Any] | None
    where: str
    windows: list[tuple[Window, list[str]]] = field(default_factory=list)  # each window applied, ids in it
    left_out: list[str] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)  # of a whole plot, by kind
    takes: str = ""  # the kinds the tool takes (for the skipped warning)
    time_state: dict[str, str] | None = None  # of the one plot read: the tote's current time
    asked: Window | None = None
    asked_field: str = "time_start"
    uncut: list[Any] = field(default_factory=list)  # the features before the cut (their period)

    def left_out_text(self) -> str:
        """The warning for the features the window left out."""
        window = self.asked or next((w for w, _ in self.windows), None)
        return left_out_text(window, self.left_out) if window is not None else ""

    @property
    def current(self) -> float | None:
        """The current time of the plot read (None without one)."""
        state = self.time_state
        if not state or not isinstance(state.get("current"), str):
            return None
        try:
            return parse_iso(state["current"])
        except ValidationFailed:
            return None


def read_inputs(
    store: ArtifactStore,
    registry: Registry,
    tool: str | None,
    features: Sequence[Any] | None,
    plot: Mapping[str, Any] | None,
    time_start: object = None,
    time_end: object = None,
) -> Inputs:
    """The inputs of a call of ``tool`` (None: a picture, which measures), cut as the module
    docstring says. SuiteError naming the field for what cannot be read or cut."""
    if features is not None and plot is not None:
        raise ValidationFailed(
            "give features (inline features or {ref} items) or plot (features of a .plot.json), not both",
            details={"field": "features", "rule": "one of features, plot"},
        )
    asked, asked_field = _asked(plot, time_start, time_end)
    measures = _measures(registry, tool)
    if plot is not None:
        found, state, saved = plot_features(store, plot)
        whole = plot.get("feature_ids") is None and not plot.get("selection")
        groups = [_Group(found, whole, None, saved if measures else None)]
        where = f"read from {plot.get('filename')!r}"
    elif isinstance(features, list) and any(plotstate.is_ref(f) for f in features):
        groups, state = _expanded(store, features, measures)
        where = "given (references expanded)"
    else:
        groups, state = ([_Group(list(features), False, None)] if features is not None else []), None
        where = "given"
    out = Inputs(None if features is None and plot is None else [], where, time_state=state)
    out.asked, out.asked_field = asked, asked_field
    if asked is not None and tool in IMPORTS:
        raise ValidationFailed(
            f"{asked_field}: {tool!r} reads whole files, so a window has nothing to cut (the tracks given as hosts "
            "are read whole); run it without time_start/time_end and pass its answer's ref with the window to the "
            "analysis",
            details={"field": asked_field, "rule": "features to window"},
        )
    if out.features is None:
        if asked is not None:  # import-rep: a window would be ignored
            raise ValidationFailed(
                f"{asked_field}: {tool!r} is given no features, so a window has nothing to cut; run it without "
                "time_start/time_end and pass its answer's ref with the window to the analysis",
                details={"field": asked_field, "rule": "features to window"},
            )
        return out
    if tool is not None:
        for group in groups:
            if group.whole:
                group.features, skipped, out.takes = _accepted(registry, tool, group.features)
                for kind, ids in skipped.items():
                    out.skipped.setdefault(kind, []).extend(ids)
    out.uncut = [f for g in groups for f in g.features]
    kept: list[Any] = []
    for group in groups:
        if group.window is not None:
            out.windows.append((group.window, _ids(group.features)))
        window = asked or group.default
        if window is None:
            kept += group.features
            continue
        cut, left = cut_features(group.features, window, where=where, field=asked_field, require=False)
        kept += cut
        out.left_out += left
        out.windows.append((window, _ids(cut)))
    if out.uncut and not kept:
        window = asked or next(w for w, _ in out.windows)
        raise InvalidContext(
            f"none of the {len(out.uncut)} feature(s) {where} has data in the window {window.text}: "
            "widen time_start/time_end or leave them out",
            details={"field": asked_field, "received_count": 0, "window": window.answer()},
        )
    out.features = kept
    return out


def window_answer(inputs: Inputs) -> dict[str, Any]:
    """The answer's ``window``: ``{start, end, source}`` of the one window the inputs were cut to
    (``"data"``: none, the features' whole period), ``left_out`` (ids with nothing in it),
    ``data`` (the whole data's ``[start, end]``, when the window cut some of it) and, when inputs
    were cut to different windows, ``inputs`` (each window with the ids cut to it)."""
    distinct: list[Window] = []
    for window, _ids_in in inputs.windows:
        if not any(window == w for w in distinct):
            distinct.append(window)
    extra: dict[str, Any] = {}
    if inputs.left_out:
        extra["left_out"] = inputs.left_out[:100]
        if len(inputs.left_out) > 100:
            extra["left_out_count"] = len(inputs.left_out)
    if not distinct:
        return data_window(inputs.features or []).answer(**extra)
    whole = data_window(inputs.uncut)
    if len(distinct) == 1:
        window = distinct[0]
    else:
        window = Window.spanning(distinct)
        extra["inputs"] = [{**w.answer(), "ids": ids[:20]} for w, ids in inputs.windows[:20]]
    if any(window.cut_ends(whole)):
        extra["data"] = whole.shown
    return window.answer(**extra)


def cut_ends(inputs: Inputs) -> tuple[bool, bool]:
    """Whether the window the inputs were read through left out some of their data before its
    start, and after its end."""
    window = inputs.asked or next((w for w, _ in inputs.windows), None)
    return window.cut_ends(data_window(inputs.uncut)) if window is not None else (False, False)


def _ids(features: list[Any]) -> list[str]:
    return [str(f.get("id")) for f in features if isinstance(f, Mapping)]


def _measures(registry: Registry, tool: str | None) -> bool:
    """Whether the tool measures (its results are analysis results; None: a picture)."""
    if tool is None:
        return True
    return tool in registry and registry.get(tool).output_kind == "analysis-result"


def _asked(plot: Mapping[str, Any] | None, time_start: object, time_end: object) -> tuple[Window | None, str]:
    """The one window asked for and the field that gave it: ``time_start``/``time_end``, or a
    plot reference's own; both given and different is a ValidationFailed."""
    window = parse_window(time_start, time_end)
    if plot is None:
        return window, "time_start"
    own = parse_window(plot.get("time_start"), plot.get("time_end"), prefix="plot.")
    if window is not None and own is not None and not window.same_span(own):
        raise ValidationFailed(
            f"two different windows: time_start/time_end ({window.text}) and plot.time_start/plot.time_end "
            f"({own.text}); give the window once, as time_start/time_end (it windows every input)",
            details={"field": "plot.time_start", "rule": "one window", "window": window.answer()},
        )
    return (window, "time_start") if window is not None else (own, "plot.time_start")


def plot_features(
    store: ArtifactStore, plot: Mapping[str, Any]
) -> tuple[list[Any], dict[str, str] | None, Window | None]:
    """The features a ``plot`` argument names (uncut, the plot cache's own: not to be changed), the
    plot's time state (the saved one, else its timed features' period) and its saved window."""
    from debrief_calc.formats.metadata import derived_time_state, get_time_state
    from debrief_calc.formats.plotfile import PLOT_CACHE, relative_name, validate_plot_filename

    if unknown := sorted(set(plot) - PLOT_MEMBERS):
        raise ValidationFailed(
            f"plot has no member {unknown[0]!r}: it takes {', '.join(sorted(PLOT_MEMBERS))}",
            details={"field": f"plot.{unknown[0]}", "rule": "known members"},
        )
    filename = plot.get("filename")
    if not isinstance(filename, str):
        raise ValidationFailed("plot.filename must be a .plot.json name", details={"field": "plot.filename"})
    path = validate_plot_filename(store.workspace, filename)
    doc = PLOT_CACHE.get(path, name=filename)
    saved = get_time_state(doc.data)
    state = saved or derived_time_state(doc.data)
    ids = plot.get("feature_ids")
    use_selection = bool(plot.get("selection"))
    if ids is not None and use_selection:
        raise ValidationFailed(
            "give plot.feature_ids or plot.selection, not both", details={"field": "plot", "rule": "one of"}
        )
    if use_selection:
        ids = plotstate.read_selection(store, relative_name(store.workspace, path))
        if not ids:
            raise InvalidContext(
                f"nothing is selected in {filename!r}: select features first (debrief_set_selection) "
                "or pass plot.feature_ids",
                details={"field": "plot.selection", "received_count": 0, "filename": filename},
            )
    if ids is None:
        return list(doc.features), state, saved_window(saved)
    if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
        raise ValidationFailed("plot.feature_ids must be a list of ids", details={"field": "plot.feature_ids"})
    by_id = {str(f.get("id")): f for f in doc.features if isinstance(f, dict)}
    missing = [str(i) for i in ids if str(i) not in by_id]
    if missing:
        raise FeatureNotFound(
            f"{len(missing)} id(s) are not features of {filename!r}: {', '.join(missing[:20])}",
            details={"missing_ids": missing[:100], "filename": filename},
        )
    return [by_id[str(i)] for i in ids], state, saved_window(saved)


def _expanded(store: ArtifactStore, items: Sequence[Any], measures: bool) -> tuple[list[_Group], dict[str, str] | None]:
    """Each item as a group of features: a reference expanded (cut to its own window), an inline
    feature as it is; and the time state of the plot the plot references read (one plot only)."""
    from debrief_calc.formats.metadata import get_time_state
    from debrief_calc.formats.plotfile import PLOT_CACHE, validate_plot_filename

    groups: list[_Group] = []
    times: dict[str, dict[str, str] | None] = {}
    for i, item in enumerate(items):
        if not plotstate.is_ref(item):
            groups.append(_Group([item], False, None))
            continue
        field_name = f"features[{i}].ref"
        ref = plotstate.parse_ref(item, field=field_name)
        if ref.kind != "plot":
            groups.append(_Group(plotstate.stored_features(store, ref, field=field_name), False, ref.window))
            continue
        found, times[ref.key] = plotstate.plot_ref_features(store, ref, field=field_name, shared=True)
        default = None
        if measures and ref.window is None:
            doc = PLOT_CACHE.get(validate_plot_filename(store.workspace, ref.key), name=ref.key)
            default = saved_window(get_time_state(doc.data))
        groups.append(_Group(found, ref.ids is None, ref.window, default))
    return groups, next(iter(times.values())) if len(times) == 1 else None


def _accepted(registry: Registry, tool: str, features: list[Any]) -> tuple[list[Any], dict[str, list[str]], str]:
    """The features of a whole plot without those of a kind the tool does not take (and without
    its metadata and backdrops), the ids left out by kind, and the kinds it takes."""
    from debrief_calc.analysis.registry import ANY_KIND

    if tool not in registry:
        return features, {}, ""
    spec = registry.get(tool)
    kept: list[Any] = []
    skipped: dict[str, list[str]] = {}
    for f in features:
        kind = feature_kind(f) if isinstance(f, dict) else "unknown"
        if kind not in _NOT_DATA and (ANY_KIND in spec.input_kinds or spec.accepts_kind(kind)):
            kept.append(f)
        else:
            skipped.setdefault(kind, []).append(str(f.get("id")) if isinstance(f, dict) else "?")
    return kept, skipped, ", ".join(spec.input_kinds) or "no features"


def skipped_text(skipped: dict[str, list[str]], takes: str) -> str:
    """The warning for the features of a whole plot left out (``skipped``: ids by kind)."""
    listed = "; ".join(
        f"{kind}: {', '.join(ids[:10])}" + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        for kind, ids in skipped.items()
    )
    return (
        f"left out {sum(map(len, skipped.values()))} feature(s) of the whole plot that this tool does not take "
        f"({listed}); it takes {takes}"
    )


def expand_refs(store: ArtifactStore, items: Sequence[Any]) -> list[dict[str, Any]]:
    """The items with their references expanded (each cut to its own window), inline ones as they are."""
    groups, _state = _expanded(store, items, measures=False)
    return [f for g in groups for f in g.features if isinstance(f, dict)]
