"""The calc server's operations: the registry served, plot references read, results kept.

Plain functions of a workspace and a store, knowing nothing about MCP. ``run`` reads its
features inline, from references to stored results (``{"ref": …}`` items, mixed with inline
ones) or from a ``.plot.json`` of the workspace (by ids or by the plot's current selection,
which the plot-state server keeps in the store), keeps every result feature in the store for
the narrate/summarize tasks, and, when the answer would pass the size cap, stores the run's
features once and answers summaries and one reference, which ``run_tool``,
``debrief_create_plot`` and ``debrief_apply_command`` accept and ``get_result`` reads back.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.registry import Registry
from debrief_calc.calc.inputs import IMPORTS, Inputs, plot_features, read_inputs, skipped_text, window_answer
from debrief_calc.errors import ValidationFailed
from debrief_calc.plots import plotstate
from debrief_calc.tracks._feature_parts import feature_kind
from debrief_calc.tracks.times import Window, parse_window
from llmem.core.callback import CallbackProtocol, PreparedPrompt, Validated
from llmem.core.config import Limits
from llmem.core.envelope import Envelope
from llmem.core.errors import ResultInvalid, SuiteError, UnsupportedTask
from llmem.core.paths import resolve_in_workspace
from llmem.core.store import ArtifactStore, Fingerprint

__all__ = ["TASKS", "CalcService"]

TASKS = ("narrate-result", "summarize-analysis")
MAX_SUMMARY_TARGETS = 20
#: features summarised in an answer over the cap (the rest are read with get_result)
_SUMMARIES = 50
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
            read_hint="get_result(ref='" + plotstate.REF_PREFIX + "{key}/{kind}')",
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
        """The features a plot reference names, uncut (the plot cache's own: not to be changed)."""
        return [f for f in plot_features(self.store, plot)[0] if isinstance(f, dict)]

    def read_inputs(
        self,
        tool: str | None,
        features: Sequence[Any] | None,
        plot: Mapping[str, Any] | None,
        time_start: object = None,
        time_end: object = None,
    ) -> Inputs:
        """The features of a call, read and cut to its window (:mod:`debrief_calc.calc.inputs`)."""
        return read_inputs(self.store, self.registry, tool, features, plot, time_start, time_end)

    def run(
        self,
        tool: str,
        features: Sequence[Mapping[str, Any]] | None,
        plot: Mapping[str, Any] | None,
        bounds: Sequence[float] | None,
        parameters: Mapping[str, Any] | None,
        time_start: str | None = None,
        time_end: str | None = None,
    ) -> dict[str, Any]:
        from debrief_calc.analysis import executor

        try:
            inputs = self.read_inputs(tool, features, plot, time_start, time_end)
        except SuiteError as err:
            return executor.RunResult(success=False, tool=str(tool), error=err.to_dict()).to_dict()
        expanded = inputs.where.startswith("given (")
        skipped, takes, left_out = inputs.skipped, inputs.takes, inputs.left_out
        result = executor.run(
            self.registry,
            tool,
            inputs.features,
            parameters,
            bounds=bounds,
            read_text=self.read_text,
            current_time=inputs.current,
        )
        if skipped and not result.success and result.error:
            result.error["message"] += f" ({skipped_text(skipped, takes)})"
        window = window_answer(inputs) if inputs.features is not None else None
        if not result.success:
            if expanded and result.error and "features[" in str(result.error.get("message")):
                # the executor counts the features after the references were expanded
                result.error["message"] += (
                    f" (features counted after expanding the references: {len(inputs.features or [])})"
                )
            if left_out and result.error and window is not None:
                result.error["message"] += f" ({inputs.left_out_text()})"
            return result.to_dict()
        if window is not None:
            stated = {k: window[k] for k in ("start", "end", "source")}
            for feature in result.features:  # every result says the window its inputs were read through
                props = feature.get("properties")
                if isinstance(props, dict) and isinstance(props.get("provenance"), dict):
                    props["provenance"]["window"] = stated
            if left_out:
                result.warnings.append(inputs.left_out_text())
        if skipped:
            result.warnings.append(skipped_text(skipped, takes))
        answer = result.to_dict()
        if skipped:
            answer["skipped"] = {kind: ids[:50] for kind, ids in skipped.items()}  # the warning counts them all
        if window is not None:
            answer["window"] = window
        if result.tool in IMPORTS and (repeats := self._earlier_imports(result.features)):
            answer["warnings"] = [*answer.get("warnings", []), *repeats]
        for feature in result.features:
            plotstate.store_result(self.store, feature, result.tool)
        if keep := _keep(result.features, result.commands):
            answer["keep"] = keep
        stored = self._stored_for_plot(answer)
        if result.tool in IMPORTS and stored is not None:
            _compact_narratives(answer, stored["ref"])
        return self._within_cap(answer, stored)

    def _stored_for_plot(self, answer: dict[str, Any]) -> dict[str, str] | None:
        """A run whose features go into a plot (an addFeatures command carrying them: import-rep,
        resample-track) keeps them once whatever their size: the command carries the run's
        reference and the answer says where it goes (``stored``), so every such answer holds
        the ``{"ref"}`` the guides tell to pass to debrief_create_plot. Returns that reference;
        None for other runs. A command adding only some of the run's features (track-legs' leg
        marks beside its results) carries a reference to those alone, kept apart; the answer's
        ``stored`` then says what it holds, and None is returned (the run as a whole is not kept)."""
        features = answer.get("features") or []
        commands = answer.get("commands") or []
        if not features:
            return None
        if any(c.get("command") == "addFeatures" and _carries(c.get("payload"), features) for c in commands):
            ref = plotstate.stash_features(self.store, uuid.uuid4().hex[:12], features)
            answer["commands"] = [
                {**c, "payload": ref}
                if c.get("command") == "addFeatures" and _carries(c.get("payload"), features)
                else c
                for c in commands
            ]
            answer["stored"] = _stored_note(ref["ref"], features, True, None)
            return ref
        out = []
        for command in commands:
            part = _part_carried(command.get("payload"), features) if command.get("command") == "addFeatures" else None
            c = command
            if part is not None:
                ref = plotstate.stash_features(self.store, uuid.uuid4().hex[:12], part)
                c = {**command, "payload": ref}
                ids = [str(f.get("id")) for f in part]
                answer["stored"] = {
                    **_stored_note(ref["ref"], part, True, None),
                    "feature_ids": ids,
                    "holds": (
                        f"{len(part)} of the {len(features)} features above: the one(s) the addFeatures command adds "
                        f"({', '.join(ids[:5])}{', …' if len(ids) > 5 else ''}); the others (the analysis result) "
                        "are the answer itself, not under this ref"
                    ),
                }
            out.append(c)
        answer["commands"] = out
        return None

    def _earlier_imports(self, features: list[dict[str, Any]]) -> list[str]:
        """One sentence per imported track whose id an earlier import of other data already made
        (the same platform in another file): a plot holds one feature per id, and the stored
        result of that id is replaced by this one."""
        notes: list[str] = []
        for feature in features:
            fid = str(feature.get("id"))
            key = "results/" + plotstate.safe_segment(fid)
            if (
                feature_kind(feature) != "track"
                or not self.store.artifact_file(plotstate.CALC_NS, key, "result").is_file()
            ):
                continue
            try:
                old = plotstate.load_result(self.store, fid)
            except SuiteError:
                continue
            if old.get("geometry") == feature.get("geometry"):
                continue  # the same data again (a re-import of the same file)
            old_props = old.get("properties")
            source = old_props.get("source") if isinstance(old_props, dict) else None
            where = repr(source) if isinstance(source, str) else "other REP text"
            name = (feature.get("properties") or {}).get("name") or fid
            notes.append(
                f"track {fid!r} ({name}) was also imported from {where}, with other fixes: one platform keeps one "
                f"id, so a plot holds only one of the two (addFeatures refuses a repeated id), and "
                f"{plotstate.REF_PREFIX}{key} now holds this import's track"
            )
        return notes

    def expand_refs(self, features: Sequence[Any]) -> list[dict[str, Any]]:
        """``features`` with each ``{"ref": …}`` item replaced by the features it stands for (cut to
        the reference's own window when it has one)."""
        from debrief_calc.calc.inputs import expand_refs

        return expand_refs(self.store, features)

    def _within_cap(self, answer: dict[str, Any], stored: dict[str, str] | None = None) -> dict[str, Any]:
        """The answer as it is when it fits the cap; else summaries and one reference (``stored``:
        the run's features already kept, which the commands carry)."""
        size = len(json.dumps(answer, separators=(",", ":"), default=str))
        if size <= self.limits.answer_chars - 500:
            return answer
        run_id = uuid.uuid4().hex[:12]
        features = answer.get("features", [])
        ref = stored or (plotstate.stash_features(self.store, run_id, features) if features else None)
        commands, carried = [], stored is not None
        for n, command in enumerate(answer.get("commands", [])):
            payload = command.get("payload")
            if stored is not None and payload == stored:
                pass
            elif ref is not None and _carries(payload, features):
                payload, carried = ref, True
            elif len(json.dumps(payload, default=str)) > 2_000:
                payload = plotstate.stash_payload(self.store, run_id, n, payload)
            commands.append({**command, "payload": payload})
        summaries = [_summary(f) for f in features[:_SUMMARIES]]
        slim = {**answer, "features": summaries, "commands": commands}
        if ref is not None and "keep" in answer:
            slim["keep"] = _keep_text([ref])
        # an import's narrative entries are in brief in ``narratives``, out of the features
        total = len(features) + int((answer.get("narratives") or {}).get("count", 0))
        if ref is not None:
            slim["stored"] = _stored_note(ref["ref"], features, carried, "summaries", total)
        elif commands:
            slim["stored"] = {
                "commands": "large command payloads are stored: pass each command as it is to debrief_apply_command"
            }
        if len(json.dumps(slim, separators=(",", ":"), default=str)) > self.limits.answer_chars - 200:
            slim["features"] = [{"id": f.get("id"), **plotstate.result_ref(str(f.get("id")))} for f in features[:100]]
            if ref is not None:
                slim["stored"] = _stored_note(ref["ref"], features, carried, "ids", total)
            if isinstance(slim.get("report"), dict):
                slim["report"] = _trimmed(slim["report"])
        return slim

    # -- stored results ---------------------------------------------------------------------------

    def get_result(
        self, ref: str, cursor: str | None, kinds: list[str] | None = None, fmt: str | None = None
    ) -> dict[str, Any]:
        from debrief_calc.calc.results import read_stored

        budget = self.limits.answer_chars - 1_500
        return read_stored(self.store, ref, cursor, budget=budget, kinds=kinds, fmt=fmt)

    # -- callback tasks ---------------------------------------------------------------------------

    def _fingerprint(self, result_ids: list[str]) -> Fingerprint:
        digest = hashlib.sha256()
        for rid in result_ids:
            digest.update(json.dumps(plotstate.load_result(self.store, rid), sort_keys=True).encode())
        return Fingerprint(len(result_ids), 0, digest.hexdigest())

    def prompt(
        self, target: str | list[str], task: str, time_start: str | None = None, time_end: str | None = None
    ) -> Envelope:
        """The narrate/summarize prompt; with a window (``time_start``/``time_end``), the prompt
        says it and keeps only the rows of the results' series inside it (saying how many went)."""
        window = parse_window(time_start, time_end)
        if task not in TASKS:
            raise UnsupportedTask(
                f"task {task!r} is not one of {', '.join(TASKS)}", details={"field": "task", "allowed": list(TASKS)}
            )
        ids = [rid for t in ([target] if isinstance(target, str) else list(target)) for rid in self._result_ids(t)]
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
        from debrief_calc.analysis.figures import result_text

        blocks = [result_text(r, per) for r in (_windowed(r, window) for r in results)]
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
        if window is not None:
            ask += (
                f" The analyst asks about the window {window.text}: tell what happened within it; the rows of "
                "the series below are only those inside it."
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
            {"results": ids, **({"window": window.shown} if window is not None else {})},
        )
        return self.callback.issue(prepared)

    def _result_ids(self, target: object) -> list[Any]:
        """The result ids a target names: a result id, its reference, or a run reference (all
        the results of that run)."""
        if not isinstance(target, str) or not target.startswith(plotstate.REF_PREFIX):
            return [target]
        ref = plotstate.parse_ref(target, field="target")
        if ref.kind == "result":
            return [ref.key.split("/", 1)[1]]
        return [str(f.get("id")) for f in plotstate.stored_features(self.store, ref, field="target")]

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
            ref = plotstate.text_ref(str(doc["path"]), str(doc["kind"]))
            command = self._narrative_command(text, doc, ref, model, ticket)
            return Validated(
                text,
                "markdown",
                extra={"results": doc["context"]["ids"]},
                data={"ref": ref, "text": text[:4000], "command": command},
            )

        env = self.callback.accept(
            ticket=ticket,
            target=target,
            task=task,
            result=result,
            model=model,
            probe=probe,
            validate=validate,
            regenerate_hint=f"generate_prompt(target, {task!r})",
        )
        if env.data is not None and "command" in env.data:
            env.nextAction = (
                "Stored. To keep it in a plot, call debrief_apply_command(command=data.command) on debrief-state-mcp "
                "(updateFeatures instead when the plot has it already); read it back with "
                f"get_result(ref={env.data['ref']!r})."
            )
        return env

    def _narrative_command(
        self, text: str, doc: dict[str, Any], ref: str, model: str | None, ticket: str
    ) -> dict[str, Any]:
        """The ``addFeatures`` command that keeps a narrative in a plot: an annotation with no
        geometry (it is about results, not a place), one id per narrated target. A long text
        travels as a stored payload, so that the answer stays within the cap."""
        key = str(doc["path"])
        feature = {
            "type": "Feature",
            "id": "narrative-" + hashlib.sha256(key.encode()).hexdigest()[:10],
            "geometry": None,
            "properties": {
                "dataType": "annotation",
                "annotationType": "comment",
                "name": "Analysis narrative" if doc.get("task") == "narrate-result" else "Analysis summary",
                "text": text,
                "provenance": {
                    "producer": "debrief-calc-mcp",
                    "task": doc.get("task"),
                    "results": doc["context"]["ids"],
                    "ref": ref,
                    "model": model,
                    "ticket": ticket,
                },
            },
        }
        payload: Any = [feature]
        if len(json.dumps(text)) > self.limits.answer_chars - 8_000:
            payload = plotstate.stash_payload(self.store, "narrative-" + uuid.uuid4().hex[:12], 0, payload)
        return {"command": "addFeatures", "payload": payload}


def _windowed(result: dict[str, Any], window: Window | None) -> dict[str, Any]:
    """A result as a narration within ``window`` reads it: its series' rows inside the window,
    and ``window_rows_left_out`` saying how many were not."""
    if window is None:
        return result
    from debrief_calc.analysis.figures import rows_in_window

    props, left = rows_in_window(result.get("properties") or {}, window)
    props = {**props, "narrated_window": window.text}
    if left:
        props["window_rows_left_out"] = left
    return {**result, "properties": props}


def _is_narrative(feature: Mapping[str, Any]) -> bool:
    props = feature.get("properties")
    return (  # a REP narrative entry: drawn on its ship's track when the import has it, else no geometry
        feature_kind(feature) == "annotation"
        and isinstance(props, dict)
        and isinstance(props.get("time"), str)
        and isinstance(props.get("text"), str)
        and "track" in props
    )


def _compact_narratives(answer: dict[str, Any], ref: str) -> None:
    """An import's narrative entries in brief (how many, when, logged by which platforms) in
    place of each entry with its provenance; they are all under the run's ``ref``."""
    features = answer.get("features") or []
    entries = [f for f in features if _is_narrative(f)]
    if not entries:
        return
    times = sorted(str(f["properties"]["time"]) for f in entries)
    platforms = Counter(str(f["properties"].get("track") or "unknown") for f in entries)
    answer["features"] = [f for f in features if not _is_narrative(f)]
    answer["narratives"] = {
        "count": len(entries),
        "time_start": times[0],
        "time_end": times[-1],
        "platforms": dict(platforms.most_common()),
        "ref": ref,
        "read": f"get_result(ref={ref!r}, kinds=['annotation']) reads every entry (time, platform, text)",
    }
    if not answer["features"] and isinstance(stored := answer.get("stored"), dict):
        stored["note"] = f"features is empty: all {len(entries)} are narrative entries, in brief in narratives"


#: most result references a ``keep`` hint lists (a run over the cap gives its one run reference)
_KEEP_REFS = 20


def _drawable(feature: dict[str, Any]) -> bool:
    from debrief_calc.tracks.paging import point_count

    return point_count(feature) > 0


def _keep(features: list[dict[str, Any]], commands: list[dict[str, Any]]) -> str | None:
    """How to keep a run's drawable results in a plot, with their references; None when no
    result has a geometry to draw, or when a command of the run already adds its features
    (import-rep, resample-track)."""
    if any(c.get("command") == "addFeatures" for c in commands):
        return None
    refs = [plotstate.result_ref(str(f.get("id"))) for f in features if _drawable(f)]
    if not refs:
        return None
    text = _keep_text(refs[:_KEEP_REFS])
    if len(refs) > _KEEP_REFS:
        text += f" (the first {_KEEP_REFS} of {len(refs)}: add the others' refs alike)"
    if bare := [str(f.get("id")) for f in features if not _drawable(f)]:
        more = f" and {len(bare) - 5} more" if len(bare) > 5 else ""
        text += f"; {len(bare)} result(s) with no geometry (nothing to draw) left out: {', '.join(bare[:5])}{more}"
    return text


def _keep_text(refs: list[dict[str, str]]) -> str:
    command = json.dumps({"command": "addFeatures", "payload": refs}, separators=(", ", ": "))
    return f"to keep these results in a plot: debrief_apply_command(command={command}) on debrief-state-mcp"


def _carries(payload: object, features: list[dict[str, Any]]) -> bool:
    """The payload is the run's features themselves (import-rep's, resample-track's addFeatures)."""
    carried = payload.get("features") if isinstance(payload, dict) and len(payload) == 1 else payload
    return isinstance(carried, list) and carried == features


def _part_carried(payload: object, features: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The features an addFeatures payload carries when they are some of the run's features
    (track-legs' leg marks); else None."""
    carried = payload.get("features") if isinstance(payload, dict) and len(payload) == 1 else payload
    if not isinstance(carried, list) or not carried or not all(isinstance(f, dict) for f in carried):
        return None
    ids = {f.get("id") for f in features}
    return carried if all(f.get("id") is not None and f.get("id") in ids for f in carried) else None


_PLOTTABLE = ("track", "zone", "point", "annotation")


def _summary(feature: dict[str, Any]) -> dict[str, Any]:
    """A result feature in brief: where and when for what goes on a plot, the figures (long
    lists left out) for an analysis result; with the reference of that one result."""
    from debrief_calc.analysis.figures import elided
    from debrief_calc.tracks.features import feature_summary

    ref = plotstate.result_ref(str(feature.get("id")))
    if feature_kind(feature) in _PLOTTABLE:
        return {**feature_summary(feature), **ref}
    props = feature.get("properties")
    return {"id": feature.get("id"), "properties": elided(props if isinstance(props, dict) else {}), **ref}


def _stored_note(
    ref: str, features: list[dict[str, Any]], carried: bool, listed: str | None, total: int | None = None
) -> dict[str, Any]:
    """The answer's ``stored`` member: the run's one reference and, in words, where it goes;
    ``listed`` says what the answer's features are when they are not the whole features
    (``summaries`` or ``ids``; None: whole); ``total``: how many the ref holds, when the
    answer lists only some (an import's narrative entries are in ``narratives``)."""
    total = len(features) if total is None else total
    uses = ""
    if any(feature_kind(f) in _PLOTTABLE for f in features):
        command = (
            "the addFeatures payload (the command above already carries it)" if carried else "an addFeatures payload"
        )
        uses = (
            f'pass {{"ref": "{ref}"}} as an item of run_tool features, as debrief_create_plot\'s features '
            f"(debrief-state), or as {command}; "
        )
    note: dict[str, Any] = {"ref": ref, "feature_count": total}
    if listed is not None:
        shown = min(len(features), _SUMMARIES if listed == "summaries" else 100)
        note["features"] = (
            f"the features above are {listed} ({shown} of {total}"
            + (
                f"; the {total - len(features)} narrative entries are in brief in narratives"
                if total > len(features)
                else ""
            )
            + "), each with the ref of that one result; the full features are stored under this ref"
        )
    note["use"] = uses + "read the features whole with get_result(ref)"
    return note


def _trimmed(report: dict[str, Any]) -> dict[str, Any]:
    out = dict(report)
    for key, value in report.items():
        if isinstance(value, list) and len(value) > 20:
            out[key] = value[:20]
            out[f"{key}_total"] = len(value)
    return out
