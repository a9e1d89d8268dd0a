"""What the calc and plot-state servers share through the artifact store.

Both servers run as separate processes (often started by different clients), so the little
state they share lives in the store under agreed names:

- the selection of a plot: the document ``selection/<plot>`` of the ``debrief-state`` namespace,
  ``{"selectedIds": [...]}``, read and written under the store's cross-process lock;
- analysis results: every result feature ``run_tool`` returns is kept as the artifact
  ``results/<feature id>`` (kind ``result``) of the ``debrief-calc`` namespace, which the
  narrate/summarize callback tasks read;
- a run's result features, when its answer would pass the size cap: kept once as ``runs/<run id>``
  (kind ``features``, a FeatureCollection) and handed out as one reference; a command payload
  that is not those features and is large is kept as ``runs/<run id>/<n>`` (kind ``payload``);
- the narratives of the callback tasks: ``results/<id>`` kind ``narrative`` and
  ``analyses/<hash>`` kind ``summary`` (text);
- the plot-state server's prompts read the newest results computed from a plot's features
  (:func:`results_about`), so a narrative kept in the plot can tell its analyses.

References are ``{"ref": "debrief-calc:<form>"}`` or ``{"ref": "debrief-state:plots/<form>"}``
(``$ref`` and ``resultRef`` read too), and both servers accept them wherever they take features
or a payload:

==========================================  =============================================
``debrief-calc:runs/<run id>``              all of a run's result features, in order
``debrief-calc:runs/<run id>/<n>``          one stored command payload (also the form
                                            every earlier version issued, features too)
``debrief-calc:results/<result id>``        one result feature (a bare result id works too)
``debrief-calc:results/<result id>/narrative``  the narrative of that result (text)
``debrief-calc:analyses/<hash>/summary``    a summary of several results (text)
``debrief-state:plots/<file>#<feature id>``  one feature of a plot of the workspace, as saved
``debrief-state:plots/<file>``              a plot's features (its time, viewport and
                                            selection metadata left out); ``"ids": [...]``
                                            beside the ref picks some, in that order
==========================================  =============================================

A plot-feature reference may carry ``"id"`` beside it: the copy takes that id (to copy a feature
into a plot that already has one of its id). Any reference to features may carry a window,
``"time_start"``/``"time_end"`` beside it (ISO-8601, either may be left out): what it stands for
is then cut to that window as every tool cuts (:func:`debrief_calc.tracks.times.cut_features`:
tracks to the fixes inside plus a fix interpolated at each edge, other features kept while
active), so that two hours of a million-fix track are copied in one small call.

:func:`features_of_ref` expands one into features, :func:`resolve_ref` into the payload it
stands for; both give the caller its own copy.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from debrief_calc.errors import FeatureNotFound, ValidationFailed
from debrief_calc.tracks.times import Window, cut_features, parse_window
from llmem.core.errors import ArtifactNotFound, SuiteError
from llmem.core.store import ArtifactStore

__all__ = [
    "CALC_NS",
    "PLOT_PREFIX",
    "REF_KEYS",
    "REF_PREFIX",
    "STATE_NS",
    "TEXT_KINDS",
    "Ref",
    "features_in",
    "features_of_ref",
    "is_ref",
    "load_ref",
    "load_result",
    "parse_ref",
    "plain_copy",
    "plot_feature_ref",
    "plot_ref_features",
    "prune_runs",
    "read_selection",
    "resolve_ref",
    "result_ref",
    "results_about",
    "run_ref",
    "stash_features",
    "stash_payload",
    "store_result",
    "stored_features",
    "text_ref",
    "update_selection",
]

STATE_NS = "debrief-state"
CALC_NS = "debrief-calc"
REF_PREFIX = "debrief-calc:"
PLOT_PREFIX = "debrief-state:plots/"
_PLOT_SUFFIX = ".plot.json"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def plain_copy(value: Any) -> Any:
    """A deep copy of plain JSON data (a pickle round trip: several times faster than
    ``copy.deepcopy`` on a long track's lists)."""
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301


def safe_segment(value: str) -> str:
    """A store key segment from an arbitrary id (ids are user data: never trusted as paths)."""
    cleaned = _SAFE.sub("_", value).strip("._") or "_"
    return cleaned[:120]


def _selection_doc(plot: str) -> str:
    return "selection/" + plot


def read_selection(store: ArtifactStore, plot: str) -> list[str]:
    value = store.read_doc(STATE_NS, _selection_doc(plot), {"selectedIds": []})
    ids = value.get("selectedIds", []) if isinstance(value, dict) else []
    return [str(i) for i in ids] if isinstance(ids, list) else []


def update_selection(store: ArtifactStore, plot: str, ids: list[str]) -> list[str]:
    unique = list(dict.fromkeys(str(i) for i in ids))
    store.update_doc(STATE_NS, _selection_doc(plot), {"selectedIds": []}, lambda _old: ({"selectedIds": unique}, None))
    return unique


def store_result(store: ArtifactStore, feature: dict[str, Any], tool: str) -> str:
    key = "results/" + safe_segment(str(feature.get("id")))
    store.put(
        CALC_NS,
        key,
        "result",
        content=feature,
        fmt="geojson",
        provenance={"producer": "debrief-calc-mcp", "tool": tool},
    )
    return key


def load_result(store: ArtifactStore, result_id: str) -> dict[str, Any]:
    try:
        record = store.get(CALC_NS, "results/" + safe_segment(result_id), "result")
    except ArtifactNotFound:
        raise FeatureNotFound(
            f"no stored analysis result with id {result_id!r}; use an id from a run_tool answer",
            details={"missing_ids": [result_id]},
        ) from None
    content = record.doc.get("content")
    if not isinstance(content, dict):
        raise FeatureNotFound(f"the stored result {result_id!r} is unreadable", details={"missing_ids": [result_id]})
    return content


#: how long a stashed payload stays resolvable; older runs are pruned when new ones are stashed
RUNS_TTL_S = 7 * 24 * 3600


def stash_features(store: ArtifactStore, run_id: str, features: list[dict[str, Any]]) -> dict[str, str]:
    """Keep a run's result features once; ``{"ref": "debrief-calc:runs/<run id>"}``."""
    key = f"runs/{safe_segment(run_id)}"
    collection = {"type": "FeatureCollection", "features": features}
    store.put(CALC_NS, key, "features", content=collection, fmt="geojson", provenance={"producer": "debrief-calc-mcp"})
    prune_runs(store)
    return run_ref(run_id)


def stash_payload(store: ArtifactStore, run_id: str, index: int, payload: Any) -> dict[str, str]:
    """Keep command ``index``'s payload of a run; ``{"ref": "debrief-calc:runs/<run id>/<index>"}``."""
    key = f"runs/{safe_segment(run_id)}/{index}"
    store.put(CALC_NS, key, "payload", content=payload, fmt="json", provenance={"producer": "debrief-calc-mcp"})
    if index == 0:
        prune_runs(store)
    return {"ref": REF_PREFIX + key}


def prune_runs(store: ArtifactStore, max_age_s: float = RUNS_TTL_S) -> int:
    """Delete stashed runs older than ``max_age_s``, so the store does not grow without end."""
    folder = store.artifact_file(CALC_NS, "runs", "payload").parent
    cutoff = time.time() - max_age_s
    pruned = 0
    try:
        runs = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for run in runs:
        try:
            if run.stat(follow_symlinks=False).st_mtime < cutoff:
                pruned += store.delete(CALC_NS, f"runs/{run.name}", None, recursive=True)
        except OSError:
            continue
    return pruned


@dataclass(frozen=True)
class Ref:
    """A parsed reference: its canonical text and the artifact (key, kind) it names."""

    text: str
    key: str
    kind: str  # features | payload | result | narrative | summary | plot
    #: a plot reference: the ids it picks (None: every data feature) and the id the copy takes
    ids: tuple[str, ...] | None = None
    new_id: str | None = None
    #: the reference's own window (``time_start``/``time_end`` beside it): what it holds is cut to it
    window: Window | None = None
    field: str = "ref"  # where the reference was given, for the errors about it

    def cut(self, features: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``features`` cut to the reference's own window (as they are without one)."""
        if self.window is None:
            return features
        return cut_features(features, self.window, where=f"of {self.text}", field=_beside(self.field) + "time_start")[0]

    @property
    def holds_text(self) -> bool:
        return self.kind in TEXT_KINDS


TEXT_KINDS = ("narrative", "summary")
REF_KEYS = ("ref", "$ref", "resultRef")
_REF_FORMS = (
    "debrief-calc:runs/<run id>, debrief-calc:results/<result id> (or the bare result id), "
    "debrief-calc:results/<result id>/narrative, debrief-calc:analyses/<hash>/summary, "
    "debrief-state:plots/<file>.plot.json#<feature id>, debrief-state:plots/<file>.plot.json (with optional ids)"
)
_AS_GIVEN = "pass a reference exactly as a run_tool or store_llm_result answer gave it"


def is_ref(value: object) -> bool:
    """``value`` is a reference object (and not a GeoJSON feature that happens to have a ``ref``)."""
    return isinstance(value, Mapping) and value.get("type") != "Feature" and any(k in value for k in REF_KEYS)


def run_ref(run_id: str) -> dict[str, str]:
    return {"ref": f"{REF_PREFIX}runs/{safe_segment(run_id)}"}


def result_ref(result_id: str) -> dict[str, str]:
    return {"ref": f"{REF_PREFIX}results/{safe_segment(result_id)}"}


def plot_feature_ref(filename: str, feature_id: object) -> str:
    """The reference of one feature of a plot, as every answer listing plot features gives it."""
    return f"{PLOT_PREFIX}{filename}#{feature_id}"


def text_ref(key: str, kind: str) -> str:
    """The reference of a narrative stored under ``key`` (``results/<id>``, ``analyses/<hash>``)."""
    return f"{REF_PREFIX}{key}/{kind}"


def _bad(ref: object, field: str, message: str, rule: str) -> ValidationFailed:
    shown = ref[:200] if isinstance(ref, str) else repr(ref)[:200]
    return ValidationFailed(
        f"{field}: {message}", details={"field": field, "rule": rule, "ref": shown, "forms": _REF_FORMS}
    )


def _segments_ok(parts: list[str]) -> bool:
    return all(p and safe_segment(p) == p for p in parts)


def parse_ref(ref: object, *, field: str = "ref") -> Ref:
    """The reference a string (or a ``{"ref": …}`` object) names; ValidationFailed naming
    ``field`` when it is not one of the forms this module hands out."""
    extra: Mapping[str, Any] = {}
    if isinstance(ref, Mapping):
        extra = ref
        ref = next((ref[k] for k in REF_KEYS if k in ref), None)
    parsed = _parse_ref(ref, extra, field)
    if "time_start" in extra or "time_end" in extra:
        prefix = _beside(field)
        window = parse_window(extra.get("time_start"), extra.get("time_end"), prefix=prefix)
        if window is not None and (parsed.holds_text or parsed.kind == "payload"):
            raise _bad(
                parsed.text,
                prefix + "time_start",
                f"{parsed.text!r} holds a {'text' if parsed.holds_text else 'command payload'}: a window cuts "
                "features only; leave time_start/time_end out",
                "window",
            )
        parsed = replace(parsed, window=window)
    return replace(parsed, field=field)


def _beside(field: str) -> str:
    """The prefix of the members beside a reference given at ``field``: ``features[2].ref`` → ``features[2].``."""
    prefix = field.removesuffix("ref")
    return prefix if not prefix or prefix.endswith(".") else prefix + "."


def _parse_ref(ref: object, extra: Mapping[str, Any], field: str) -> Ref:
    if isinstance(ref, str) and ref.strip().startswith(PLOT_PREFIX):
        return _plot_ref(ref.strip(), extra, field)
    if not isinstance(ref, str) or not ref.strip():
        raise _bad(ref, field, f"a reference is a string, one of {_REF_FORMS}; {_AS_GIVEN}", "type")
    text = ref.strip()
    if text.startswith("{"):  # a reference object passed as its JSON text
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, Mapping) and any(isinstance(value.get(k), str) for k in REF_KEYS):
            return parse_ref(value, field=field)
    key = text[len(REF_PREFIX) :] if text.startswith(REF_PREFIX) else text
    parts = key.split("/")
    head = parts[0]
    if len(parts) == 1 and not text.startswith(REF_PREFIX):
        return Ref(f"{REF_PREFIX}results/{safe_segment(key)}", "results/" + safe_segment(key), "result")
    if _segments_ok(parts[1:]):
        if head == "runs" and len(parts) == 2:
            return Ref(REF_PREFIX + key, key, "features")
        if head == "runs" and len(parts) == 3:
            return Ref(REF_PREFIX + key, key, "payload")
        if head == "results" and len(parts) == 2:
            return Ref(REF_PREFIX + key, key, "result")
        if head == "results" and len(parts) == 3 and parts[2] == "narrative":
            return Ref(REF_PREFIX + key, "/".join(parts[:2]), "narrative")
        if head == "analyses" and len(parts) == 3 and parts[2] == "summary":
            return Ref(REF_PREFIX + key, "/".join(parts[:2]), "summary")
    raise _bad(text, field, f"{text[:120]!r} is not a debrief-calc reference ({_REF_FORMS}); {_AS_GIVEN}", "format")


def _plot_ref(text: str, extra: Mapping[str, Any], field: str) -> Ref:
    """``debrief-state:plots/<file>[#<id>]`` with the ``ids``/``id`` members of its object."""
    rest = text[len(PLOT_PREFIX) :]
    end = rest.find(_PLOT_SUFFIX)
    filename = rest[: end + len(_PLOT_SUFFIX)] if end > 0 else rest
    after = rest[len(filename) :]
    if end <= 0 or (after and not after.startswith("#")):
        raise _bad(
            text,
            field,
            f"{text[:120]!r} names no .plot.json file: debrief-state:plots/<file>.plot.json#<feature id>",
            "format",
        )
    one = after[1:] if after else None
    ids = extra.get("ids")
    if ids is not None and (
        one is not None
        or not isinstance(ids, list)
        or not ids
        or not all(isinstance(i, str | int) and not isinstance(i, bool) for i in ids)
    ):
        why = (
            "a reference to one feature (#<id>) takes no ids" if one is not None else "a non-empty list of feature ids"
        )
        raise _bad(ids, f"{field.removesuffix('.ref')}.ids", f"ids: {why}", "ids")
    new_id = extra.get("id")
    if new_id is not None and (
        one is None or not isinstance(new_id, str | int) or isinstance(new_id, bool) or not str(new_id)
    ):
        why = "only a reference to one feature (#<id>) takes a new id" if one is None else "a string or an integer"
        raise _bad(new_id, f"{field.removesuffix('.ref')}.id", f"id: {why}", "id")
    if one == "":
        raise _bad(text, field, f"{text[:120]!r} ends in '#' without a feature id", "format")
    picked = (one,) if one is not None else tuple(str(i) for i in ids) if ids is not None else None
    return Ref(
        PLOT_PREFIX + filename + (f"#{one}" if one is not None else ""),
        filename,
        "plot",
        picked,
        None if new_id is None else str(new_id),
    )


def plot_ref_features(
    store: ArtifactStore, ref: Ref, *, field: str = "ref", shared: bool = False
) -> tuple[list[dict[str, Any]], dict[str, str] | None]:
    """The features a plot reference names, as the caller's own copies (a copy taking ``new_id``
        has it; with ``shared``, the plot cache's own features, as ``run_tool``'s ``plot`` reads
        them: the caller must not change them, and a million-fix track is not copied), cut to the
        reference's own window when it has one, and the plot's time state (``{current, start, end}``: the saved one, else the period of
    its timed features, as debrief_get_time answers; None without either).
        INVALID_FILENAME, PLOT_NOT_FOUND listing the plots there are, or FEATURE_NOT_FOUND with the
        plot's ids closest to the missing ones."""
    import difflib

    from debrief_calc.errors import PlotNotFound
    from debrief_calc.formats.metadata import derived_time_state, get_time_state
    from debrief_calc.formats.plotfile import PLOT_CACHE, list_plot_files, validate_plot_filename

    try:
        path = validate_plot_filename(store.workspace, ref.key)
    except SuiteError as err:
        err.message = f"{field}: {err.message}"
        err.details["field"] = field
        raise
    try:
        doc = PLOT_CACHE.get(path, name=ref.key)
    except PlotNotFound:
        files = list_plot_files(store.workspace, limit=200)
        raise PlotNotFound(
            f"{field}: no plot {ref.key!r} in the workspace ({len(files)} plot file(s) there: "
            f"{', '.join(files[:20]) or 'none'}); use a filename debrief_list_plots gives",
            details={"field": field, "filename": ref.key, "plot_files": files[:50]},
        ) from None
    from debrief_calc.tracks._feature_parts import feature_kind

    if ref.ids is None:
        picked = [f for f in doc.features if feature_kind(f) != "metadata"]
    else:
        index = doc.index_by_id()
        missing = [i for i in ref.ids if i not in index]
        if missing:
            known = list(index)
            close = sorted({c for m in missing for c in difflib.get_close_matches(m, known, n=5, cutoff=0.5)})
            raise FeatureNotFound(
                f"{field}: {len(missing)} id(s) are not features of {ref.key!r}: {', '.join(map(repr, missing[:20]))}"
                + (f"; close ones: {', '.join(map(repr, close[:10]))}" if close else "")
                + "; debrief_get_features lists its features with their refs",
                details={
                    "field": field,
                    "filename": ref.key,
                    "missing_ids": missing[:100],
                    "close_ids": close[:20],
                    "available_ids": known[:50],
                    "available_count": len(known),
                },
            )
        picked = [doc.features[index[i]] for i in ref.ids]
    if ref.window is not None:  # cut first: a copy of two hours of a long track copies those two hours
        picked = ref.cut(picked)
    out = list(picked) if shared else plain_copy(picked)
    if ref.new_id is not None:
        out[0] = {**out[0], "id": ref.new_id}
    return out, get_time_state(doc.data) or derived_time_state(doc.data)


def load_ref(store: ArtifactStore, ref: Ref, *, field: str = "ref", shared: bool = False) -> Any:
    """The stored content a reference names. With ``shared`` it may be the object other
    readers get too (a warm read is one ``stat``): the caller must not change it."""
    try:
        return store.get(CALC_NS, ref.key, ref.kind, shared=shared).doc.get("content")
    except ArtifactNotFound:
        if ref.kind == "result":
            why = "no stored result has that id: use a result id or reference from a run_tool answer"
        elif ref.holds_text:
            why = f"no {ref.kind} is stored there yet: generate_prompt then store_llm_result make one"
        else:
            why = (
                "it points to nothing in this workspace's store (runs are kept "
                f"{RUNS_TTL_S // 86400} days; another workspace has another store): run the tool again"
            )
        raise _bad(ref.text, field, f"{ref.text!r}: {why}", "exists") from None


def features_in(content: Any) -> list[dict[str, Any]] | None:
    """The features a stored content holds (a Feature, a FeatureCollection, ``{features}``, a
    list of Features), or None when it holds something else."""
    if isinstance(content, dict) and content.get("type") == "Feature":
        return [content]
    if isinstance(content, dict) and isinstance(content.get("features"), list):
        content = content["features"]
    if isinstance(content, list) and all(isinstance(f, dict) and f.get("type") == "Feature" for f in content):
        return content
    return None


def stored_features(
    store: ArtifactStore, ref: Ref, *, field: str = "ref", shared: bool = False
) -> list[dict[str, Any]]:
    """The features a parsed reference stands for (see :func:`load_ref` for ``shared``)."""
    if ref.kind == "plot":
        return plot_ref_features(store, ref, field=field)[0]
    if ref.holds_text:
        raise _bad(
            ref.text,
            field,
            f"{ref.text!r} holds a {ref.kind} (text), not features: read it with get_result",
            "features",
        )
    found = features_in(load_ref(store, ref, field=field, shared=shared))
    if found is None:
        raise _bad(ref.text, field, f"{ref.text!r} holds a command payload, not features", "features")
    return ref.cut(found)


def features_of_ref(store: ArtifactStore, value: object, *, field: str = "ref") -> list[dict[str, Any]]:
    """The features a reference stands for, in order, as the caller's own copy: a run's all,
    a result's one, an old ``runs/<run>/<n>`` payload's features. ``value`` is ``{"ref": …}``
    (or the bare string). ValidationFailed naming ``field`` (e.g. ``features[2].ref``) and
    what to pass instead when it is malformed, unknown, or holds no features."""
    return stored_features(store, parse_ref(value, field=field), field=field)


def resolve_ref(store: ArtifactStore, value: object, *, field: str = "ref") -> Any:
    """The payload a reference stands for, as the caller's own copy: a run's features as a
    FeatureCollection, a stored payload as it was stored, a result as its Feature, a
    narrative or summary as its text (a ``showText`` payload)."""
    ref = parse_ref(value, field=field)
    if ref.kind == "plot":
        return {"type": "FeatureCollection", "features": plot_ref_features(store, ref, field=field)[0]}
    content = load_ref(store, ref, field=field)
    if ref.kind == "features":
        features = features_in(content)
        return {"type": "FeatureCollection", "features": ref.cut(features) if features is not None else []}
    if ref.kind == "result" and ref.window is not None and isinstance(content, dict):
        return ref.cut([content])[0]
    return content


#: How many of the newest stored results :func:`results_about` reads at most, whatever it keeps.
RESULTS_SCANNED = 300


def results_about(store: ArtifactStore, feature_ids: set[str], *, limit: int = 10) -> list[dict[str, Any]]:
    """The newest analysis results computed from features of ``feature_ids`` only, one per
    (tool, sources, parameters), newest first: what the plot-state server's prompts tell the
    host's model about a plot's analyses. Bounded: only the newest :data:`RESULTS_SCANNED`
    stored results are read, and unreadable ones are skipped."""
    folder = store.artifact_file(CALC_NS, "results", "result").parent
    try:
        entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    dated: list[tuple[float, str]] = []
    for entry in entries:
        try:
            dated.append((os.stat(os.path.join(entry.path, "result.json")).st_mtime, entry.name))  # noqa: PTH116, PTH118
        except OSError:
            continue
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for _mtime, name in sorted(dated, reverse=True)[:RESULTS_SCANNED]:
        try:
            feature = store.get(CALC_NS, f"results/{name}", "result", shared=True).doc.get("content")
        except (ArtifactNotFound, ValueError, OSError):
            continue
        if not isinstance(feature, dict) or not isinstance(props := feature.get("properties"), dict):
            continue
        prov = props.get("provenance")
        if not isinstance(prov, dict) or props.get("kind") != "analysis-result":
            continue
        sources = sorted(str(s.get("id")) for s in prov.get("sources") or [] if isinstance(s, dict))
        if not sources or not set(sources) <= feature_ids:
            continue
        key = json.dumps([prov.get("tool"), sources, prov.get("parameters")], sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        out.append(feature)
        if len(out) >= limit:
            break
    return out
