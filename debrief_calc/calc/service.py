"""The calc server's operations: the registry served, plot references read, results kept.

Plain functions of a workspace and a store, knowing nothing about MCP. ``run`` reads its
features inline or from a ``.plot.json`` of the workspace (by ids or by the plot's current
selection, which the plot-state server keeps in the store), keeps every result feature in the
store for the narrate/summarize tasks, and, when the answer would pass the size cap, stores the
heavy parts and returns references that ``debrief_apply_command`` accepts.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from debrief_calc import plotstate
from debrief_calc.analysis import default_registry
from debrief_calc.errors import FeatureNotFound, InvalidContext, ValidationFailed
from debrief_calc.registry import Registry
from llmem.callback import CallbackProtocol, PreparedPrompt, Validated
from llmem.config import Limits
from llmem.envelope import Envelope
from llmem.errors import ResultInvalid, SuiteError, UnsupportedTask
from llmem.paths import resolve_in_workspace
from llmem.store import ArtifactStore, Fingerprint

__all__ = ["TASKS", "CalcService"]

TASKS = ("narrate-result", "summarize-analysis")
MAX_SUMMARY_TARGETS = 20
_NARRATIVE_MAX = 20_000


class CalcService:
    def __init__(self, store: ArtifactStore, limits: Limits, registry: Registry | None = None):
        self.store = store
        self.ws = store.workspace
        self.limits = limits
        self.registry = registry or default_registry()
        self.callback = CallbackProtocol(
            store,
            namespace=plotstate.CALC_NS,
            producer="debrief-calc-mcp",
            target_field="target",
            max_steps=limits.max_steps,
            ticket_ttl_s=limits.ticket_ttl_s,
            result_chars=limits.result_chars,
            prompt_chars=max(2_000, limits.answer_chars - 3_000),
            read_hint="the store artifact {key!r} (kind {kind!r}) of the debrief-calc namespace",
        )

    # -- registry ---------------------------------------------------------------------------

    def list_tools(self, context_type: str | None, kinds: list[str] | None) -> list[dict[str, Any]]:
        return [spec.summary() for spec in self.registry.list(context_type, kinds)]

    def describe(self, name: str) -> dict[str, Any]:
        return self.registry.get(name).describe()

    # -- run ----------------------------------------------------------------------------------

    def read_text(self, path: str) -> str:
        """Workspace files for import-rep: contained, capped, decoded leniently (legacy files)."""
        rp = resolve_in_workspace(self.ws, path)
        if not rp.abs.is_file():
            raise ValidationFailed(f"{rp.key!r} is not a file in the workspace", details={"field": "path"})
        size = rp.abs.stat().st_size
        if size > self.limits.input_bytes * 10:
            raise ValidationFailed(
                f"{rp.key!r} is {size} bytes; at most {self.limits.input_bytes * 10} are read",
                details={"field": "path", "rule": "max size"},
            )
        raw = rp.abs.read_bytes()
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            return raw.decode("latin-1")

    def plot_features(self, plot: Mapping[str, Any]) -> list[dict[str, Any]]:
        from debrief_calc.state.plotfile import PLOT_CACHE, relative_name, validate_plot_filename

        filename = plot.get("filename")
        if not isinstance(filename, str):
            raise ValidationFailed("plot.filename must be a .plot.json name", details={"field": "plot.filename"})
        path = validate_plot_filename(self.ws, filename)
        doc = PLOT_CACHE.get(path, name=filename)
        ids = plot.get("feature_ids")
        use_selection = bool(plot.get("selection"))
        if ids is not None and use_selection:
            raise ValidationFailed(
                "give plot.feature_ids or plot.selection, not both", details={"field": "plot", "rule": "one of"}
            )
        if use_selection:
            ids = plotstate.read_selection(self.store, relative_name(self.ws, path))
            if not ids:
                raise InvalidContext(
                    f"nothing is selected in {filename!r}: select features first (debrief_set_selection) "
                    "or pass plot.feature_ids",
                    details={"field": "plot.selection", "received_count": 0, "filename": filename},
                )
        if ids is None:
            return list(doc.features)
        if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
            raise ValidationFailed("plot.feature_ids must be a list of ids", details={"field": "plot.feature_ids"})
        by_id = {str(f.get("id")): f for f in doc.features if isinstance(f, dict)}
        missing = [str(i) for i in ids if str(i) not in by_id]
        if missing:
            raise FeatureNotFound(
                f"{len(missing)} id(s) are not features of {filename!r}: {', '.join(missing[:20])}",
                details={"missing_ids": missing[:100], "filename": filename},
            )
        return [by_id[str(i)] for i in ids]

    def run(
        self,
        tool: str,
        features: Sequence[Mapping[str, Any]] | None,
        plot: Mapping[str, Any] | None,
        bounds: Sequence[float] | None,
        parameters: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        from debrief_calc import executor

        if features is not None and plot is not None:
            raise ValidationFailed(
                "give the features inline (features) or by reference (plot), not both",
                details={"field": "features", "rule": "one of features, plot"},
            )
        if plot is not None:
            try:
                features = self.plot_features(plot)
            except SuiteError as err:
                return executor.RunResult(success=False, tool=str(tool), error=err.to_dict()).to_dict()
        result = executor.run(self.registry, tool, features, parameters, bounds=bounds, read_text=self.read_text)
        answer = result.to_dict()
        if not result.success:
            return answer
        for feature in result.features:
            plotstate.store_result(self.store, feature, result.tool)
        return self._within_cap(answer)

    def _within_cap(self, answer: dict[str, Any]) -> dict[str, Any]:
        size = len(json.dumps(answer, separators=(",", ":"), default=str))
        if size <= self.limits.answer_chars - 500:
            return answer
        from debrief_calc.features import feature_summary

        run_id = uuid.uuid4().hex[:12]
        commands = []
        for n, command in enumerate(answer.get("commands", [])):
            payload = command.get("payload")
            if len(json.dumps(payload, default=str)) > 2_000:
                payload = plotstate.stash_payload(self.store, run_id, n, payload)
            commands.append({**command, "payload": payload})
        features = answer.get("features", [])
        stored = plotstate.stash_payload(self.store, run_id, len(commands), {"features": features})
        slim = {
            **answer,
            "features": [feature_summary(f) for f in features[:50]],
            "commands": commands,
            "stored": {
                "features_ref": stored,
                "feature_count": len(features),
                "note": "the full result was over the answer cap: the features are stored; pass the refs to "
                "debrief_apply_command (as an addFeatures payload) or read single results by id",
            },
        }
        if len(json.dumps(slim, separators=(",", ":"), default=str)) > self.limits.answer_chars - 200:
            slim["features"] = [{"id": f.get("id")} for f in features[:200]]
        return slim

    # -- callback tasks ---------------------------------------------------------------------------

    def _fingerprint(self, result_ids: list[str]) -> Fingerprint:
        digest = hashlib.sha256()
        for rid in result_ids:
            digest.update(json.dumps(plotstate.load_result(self.store, rid), sort_keys=True).encode())
        return Fingerprint(len(result_ids), 0, digest.hexdigest())

    def prompt(self, target: str | list[str], task: str) -> Envelope:
        if task not in TASKS:
            raise UnsupportedTask(
                f"task {task!r} is not one of {', '.join(TASKS)}", details={"field": "task", "allowed": list(TASKS)}
            )
        ids = [target] if isinstance(target, str) else list(target)
        if not ids or len(ids) > MAX_SUMMARY_TARGETS or not all(isinstance(i, str) and i for i in ids):
            raise ValidationFailed(
                f"target must be a result id or a list of 1–{MAX_SUMMARY_TARGETS} result ids",
                details={"field": "target", "rule": "result ids"},
            )
        if task == "narrate-result" and len(ids) != 1:
            raise ValidationFailed(
                "narrate-result explains one result: give one id (summarize-analysis takes several)",
                details={"field": "target", "rule": "one id"},
            )
        results = [plotstate.load_result(self.store, rid) for rid in ids]
        key = self._key(task, ids)
        per = max(400, (self.limits.answer_chars - 6_000) // len(results))
        blocks = [_result_text(r, per) for r in results]
        if task == "narrate-result":
            ask = (
                "Explain this maritime analysis result for an exercise report: what was computed, on which "
                "tracks, the key figures with their units, and what they mean operationally. Markdown, at most "
                "about 250 words. Do not invent figures that are not below."
            )
        else:
            ask = (
                "Summarise these maritime analysis results for an exercise report: what was analysed, the key "
                "findings with figures and units, and how the results relate. Markdown, at most about 400 words. "
                "Do not invent figures that are not below."
            )
        prompt = ask + "\n\n" + "\n\n".join(blocks)
        prepared = PreparedPrompt(
            task,
            key,
            "narrative" if task == "narrate-result" else "summary",
            prompt,
            "markdown",
            self._fingerprint(ids),
            {"ids": ids},
            {"results": ids},
        )
        return self.callback.issue(prepared)

    @staticmethod
    def _key(task: str, ids: list[str]) -> str:
        if task == "narrate-result":
            return "results/" + plotstate.safe_segment(ids[0])
        digest = hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]
        return "analyses/" + digest

    def store_result(self, ticket: str, target: str, task: str, result: str, model: str | None) -> Envelope:
        if not isinstance(target, str):
            raise ValidationFailed("target must be the target string from callbackArgs", details={"field": "target"})

        def probe(doc: dict[str, Any]) -> Fingerprint | None:
            try:
                return self._fingerprint([str(i) for i in doc["context"]["ids"]])
            except (KeyError, TypeError, SuiteError):
                return None

        def validate(answer: str, doc: dict[str, Any]) -> Validated:
            text = answer.strip()
            if len(text) > _NARRATIVE_MAX:
                raise ResultInvalid(
                    f"the narrative is {len(text)} characters; keep it under {_NARRATIVE_MAX}",
                    details={"field": "result", "rule": "max_length"},
                )
            return Validated(text, "markdown", extra={"results": doc["context"]["ids"]}, data={"text": text[:4000]})

        return self.callback.accept(
            ticket=ticket,
            target=target,
            task=task,
            result=result,
            model=model,
            probe=probe,
            validate=validate,
            regenerate_hint=f"generate_prompt(target, {task!r})",
        )


def _result_text(feature: Mapping[str, Any], limit: int) -> str:
    props = dict(feature.get("properties") or {})
    prov = props.pop("provenance", {}) or {}
    sources = ", ".join(f"{s.get('kind')} {s.get('id')}" for s in prov.get("sources", []))
    body = json.dumps(props, default=str, ensure_ascii=False)
    if len(body) > limit:
        body = body[: limit - 40] + " … (truncated)"
    return (
        f"### Result {feature.get('id')} — tool {prov.get('tool')} v{prov.get('version')} at {prov.get('timestamp')}\n"
        f"Sources: {sources or 'none'}\nParameters: {json.dumps(prov.get('parameters', {}), default=str)}\n"
        f"Figures: {body}"
    )
