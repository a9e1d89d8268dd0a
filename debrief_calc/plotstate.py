"""What the calc and plot-state servers share through the artifact store.

Both servers run as separate processes (often started by different clients), so the little
state they share lives in the store under agreed names:

- the selection of a plot: the document ``selection/<plot>`` of the ``debrief-state`` namespace,
  ``{"selectedIds": [...]}``, read and written under the store's cross-process lock;
- analysis results: every result feature ``run_tool`` returns is kept as the artifact
  ``results/<feature id>`` (kind ``result``) of the ``debrief-calc`` namespace, which the
  narrate/summarize callback tasks read;
- payloads too large for an answer: kept as ``runs/<run id>/<n>`` (kind ``payload``) and handed
  out as ``{"ref": "debrief-calc:runs/<run id>/<n>"}``, which ``debrief_apply_command`` accepts
  in place of the payload.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from debrief_calc.errors import FeatureNotFound, ValidationFailed
from llmem.errors import ArtifactNotFound
from llmem.store import ArtifactStore

__all__ = [
    "CALC_NS",
    "REF_PREFIX",
    "STATE_NS",
    "load_result",
    "prune_runs",
    "read_selection",
    "resolve_ref",
    "stash_payload",
    "store_result",
    "update_selection",
]

STATE_NS = "debrief-state"
CALC_NS = "debrief-calc"
REF_PREFIX = "debrief-calc:"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


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


def stash_payload(store: ArtifactStore, run_id: str, index: int, payload: Any) -> dict[str, str]:
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


def resolve_ref(store: ArtifactStore, value: dict[str, Any]) -> Any:
    """The payload a ``{"ref": "debrief-calc:runs/…"}`` stands for."""
    ref = value.get("ref", value.get("$ref", value.get("resultRef")))
    if not isinstance(ref, str) or not ref.startswith(REF_PREFIX + "runs/"):
        raise ValidationFailed(
            f"reference {ref!r} is not one debrief-calc issued (expected '{REF_PREFIX}runs/<run>/<n>')",
            details={"field": "ref", "rule": "issued reference"},
        )
    key = ref[len(REF_PREFIX) :]
    parts = key.split("/")
    if len(parts) != 3 or any(safe_segment(p) != p for p in parts[1:]):
        raise ValidationFailed(f"reference {ref!r} is malformed", details={"field": "ref", "rule": "format"})
    try:
        return store.get(CALC_NS, key, "payload").doc.get("content")
    except ArtifactNotFound:
        raise ValidationFailed(
            f"reference {ref!r} points to nothing in this workspace's store (deleted, or another store?)",
            details={"field": "ref", "rule": "exists"},
        ) from None
