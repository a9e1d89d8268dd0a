"""llmem's domain operations on the artifact store: parse, read, list, delete, prompt, store.

Plain functions of a workspace and a store, knowing nothing about MCP; ``server.py`` wires
them to tools. Each returns the ``data`` of an envelope, or raises a :class:`SuiteError`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from llmem import tasks as llm_tasks
from llmem.callback import CallbackProtocol, PreparedPrompt, Validated
from llmem.config import Limits
from llmem.envelope import Envelope
from llmem.errors import ArtifactNotFound, InvalidArgument, SourceNotFound, UnsupportedTask
from llmem.paths import ResolvedPath, resolve_in_workspace
from llmem.store import ArtifactRecord, ArtifactStore, Fingerprint, fingerprint_file, source_status

__all__ = ["NAMESPACE", "Llmem", "Progress", "ProgressSink"]

NAMESPACE = "llmem"
PRODUCER = "llmem-mcp"
OUTLINE = "outline"
LIST_PAGE_DEFAULT = 50
LIST_PAGE_MAX = 500
SKIPPED_SHOWN = 50


class ProgressSink(Protocol):
    """Where long work reports progress; the server adapts it to MCP progress notifications."""

    def report(self, done: int, total: int | None, message: str) -> None: ...


class Progress:
    """A sink that drops progress (direct callers that do not watch)."""

    def report(self, done: int, total: int | None, message: str) -> None:
        return None


def _read_header_fingerprint(file: Path) -> Fingerprint | None:
    """The stored source fingerprint, read from the head of the artifact file without parsing it all."""
    try:
        with file.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "ignore")
    except OSError:
        return None
    at = head.find('"source": ')
    if at < 0:
        return None
    try:
        raw, _ = json.JSONDecoder().raw_decode(head, at + len('"source": '))
    except ValueError:
        return None
    return Fingerprint.from_dict(raw) if isinstance(raw, dict) else None


@dataclass
class ParseCounts:
    parsed: int = 0
    unchanged: int = 0
    fallback: int = 0


class Llmem:
    def __init__(self, store: ArtifactStore, limits: Limits):
        self.store = store
        self.ws = store.workspace
        self.limits = limits
        self.callback = CallbackProtocol(
            store,
            namespace=NAMESPACE,
            producer=PRODUCER,
            target_field="path",
            max_steps=limits.max_steps,
            ticket_ttl_s=limits.ticket_ttl_s,
            result_chars=limits.result_chars,
            prompt_chars=max(2_000, limits.answer_chars - 3_000),
        )

    # -- paths ---------------------------------------------------------------------------

    def resolve(self, path: str, field: str = "path") -> ResolvedPath:
        return resolve_in_workspace(self.ws, path, field=field)

    def _existing(self, path: str) -> ResolvedPath:
        rp = self.resolve(path)
        if not rp.abs.exists():
            raise SourceNotFound(
                f"{rp.key!r} does not exist in the workspace {str(self.ws)!r}",
                details={"path": rp.key},
                next_action="Check the path with list_artifacts or your file listing; paths are workspace-relative.",
            )
        return rp

    # -- parse -----------------------------------------------------------------------------

    def parse(self, path: str, progress: ProgressSink | None = None) -> dict[str, Any]:
        rp = self._existing(path)
        if rp.abs.is_file():
            return self._parse_one_file(rp)
        return self._parse_folder(rp, progress or Progress())

    def _parse_one_file(self, rp: ResolvedPath) -> dict[str, Any]:
        from llmem.outline import detect_language

        if rp.abs.stat().st_size > self.limits.max_file_bytes:
            raise InvalidArgument(
                f"{rp.key!r} is over the {self.limits.max_file_bytes}-byte file cap; it is not outlined",
                details={"path": rp.key, "rule": "max_file_bytes", "limit": self.limits.max_file_bytes},
            )
        counts = ParseCounts()
        outline = self._outline_if_changed(rp.key, rp.abs, counts)
        record = self.store.get(NAMESPACE, rp.key, OUTLINE)
        content = record.doc["content"]
        return {
            "path": rp.key,
            "parsed": counts.parsed,
            "unchanged": counts.unchanged,
            "skipped": 0,
            "failed": 0,
            "language": detect_language(rp.key),
            "mode": content.get("mode"),
            "symbols": _count_symbols(content.get("symbols", [])),
            "reparsed": outline is not None,
        }

    def _outline_if_changed(
        self, key: str, abs_path: Path, counts: ParseCounts, seen: tuple[int, int] | None = None
    ) -> Any:
        """Store a fresh outline unless the stored one still matches (size+mtime, then sha256).

        ``seen`` is the (size, mtime_ns) a folder walk already read, saving a second stat.
        """
        from llmem.outline import build_outline

        file = self.store.artifact_file(NAMESPACE, key, OUTLINE)
        stored = _read_header_fingerprint(file)
        if seen is None:
            st = abs_path.stat()
            seen = (st.st_size, st.st_mtime_ns)
        if stored is not None and (stored.size, stored.mtime_ns) == seen:
            counts.unchanged += 1
            return None
        data = abs_path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        fp = Fingerprint(len(data), abs_path.stat().st_mtime_ns, sha)
        if stored is not None and stored.sha256 == sha:
            # Same bytes, new mtime (a checkout, a touch): refresh the fingerprint so the next run is cheap.
            record = self.store.get_or_none(NAMESPACE, key, OUTLINE)
            if record is not None:
                self.store.put(
                    NAMESPACE,
                    key,
                    OUTLINE,
                    content=record.doc["content"],
                    fmt="json",
                    provenance=record.doc.get("provenance", {}),
                    source=fp,
                )
                counts.unchanged += 1
                return None
        outline = build_outline(key, data)
        if outline.mode == "fallback":
            counts.fallback += 1
        self.store.put(
            NAMESPACE,
            key,
            OUTLINE,
            content=outline.model_dump(mode="json", exclude_defaults=False),
            fmt="json",
            provenance={
                "producer": PRODUCER,
                "tool": "generate_artifact",
                "task": "parse",
                "parser": "ast" if outline.language == "python" else "tree-sitter" if outline.language else "none",
            },
            source=fp,
        )
        counts.parsed += 1
        return outline

    def _parse_folder(self, rp: ResolvedPath, progress: ProgressSink) -> dict[str, Any]:
        from llmem.walk import walk_workspace

        walked = walk_workspace(self.ws, rp.abs, max_file_bytes=self.limits.max_file_bytes)
        skipped = [{"path": s.rel_path, "reason": s.reason} for s in walked.skipped]
        failed: list[dict[str, str]] = []
        counts = ParseCounts()
        total = len(walked.files)
        progress.report(0, total, f"outlining {total} files under {rp.key}")
        step = max(1, total // 20)
        for n, entry in enumerate(walked.files, 1):
            try:
                # The walk only yields files of a supported language; a binary one gets a fallback outline.
                self._outline_if_changed(entry.rel_path, entry.abs_path, counts, (entry.size, entry.mtime_ns))
            except OSError as exc:
                failed.append({"path": entry.rel_path, "reason": f"{exc.__class__.__name__}: {exc.strerror or exc}"})
            if n % step == 0 or n == total:
                progress.report(n, total, f"{n}/{total} files")
        by_reason: dict[str, int] = {}
        for s in skipped:
            by_reason[s["reason"]] = by_reason.get(s["reason"], 0) + 1
        return {
            "path": rp.key,
            "parsed": counts.parsed,
            "unchanged": counts.unchanged,
            "skipped": len(skipped),
            "failed": len(failed),
            "fallback_outlines": counts.fallback,
            "complete": not failed,
            "skipped_by_reason": by_reason,
            "skipped_files": skipped[:SKIPPED_SHOWN],
            "skipped_truncated": len(skipped) > SKIPPED_SHOWN,
            "failed_files": failed[:SKIPPED_SHOWN],
        }

    # -- read ------------------------------------------------------------------------------

    def status(self, record: ArtifactRecord) -> str:
        src = record.doc.get("source")
        if not isinstance(src, dict):
            return "fresh"
        if src.get("type") == "folder":
            folder = self.ws.joinpath(*Path(record.key).parts) if record.key != "." else self.ws
            if not folder.is_dir():
                return "orphaned"
            return "fresh" if self.folder_fingerprint(folder).sha256 == src.get("sha256") else "stale"
        return source_status(self.ws / record.key, Fingerprint.from_dict(src))

    def get(self, path: str, kind: str, offset: int, limit: int | None) -> dict[str, Any]:
        rp = self.resolve(path)
        record = self.store.get(NAMESPACE, rp.key, kind)
        status = self.status(record)
        doc = record.doc
        out: dict[str, Any] = {
            "path": rp.key,
            "kind": kind,
            "status": status,
            "format": doc.get("format"),
            "created_at": doc.get("created_at"),
            "updated_at": doc.get("updated_at"),
            "provenance": doc.get("provenance"),
            "source": doc.get("source"),
        }
        content = doc.get("content")
        if kind == "annotate" and status != "fresh" and isinstance(content, dict):
            content = self._split_notes(rp, content, status)
        cap = self.limits.answer_chars - 300  # room for the envelope around data
        if offset == 0 and limit is None and record.size + len(json.dumps(out)) <= cap:
            # The file holds the content plus metadata, so it bounds the answer: no need to measure.
            return {**out, "content": content}
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if offset == 0 and (limit is None or len(text) <= limit):
            whole = {**out, "content": content, "total_chars": len(text)}
            if len(json.dumps(whole, ensure_ascii=False, separators=(",", ":"))) <= cap:
                return whole
        if offset > len(text):
            raise InvalidArgument(
                f"offset {offset} is past the end of the content ({len(text)} characters)",
                details={"field": "offset", "rule": "within content", "total_chars": len(text)},
            )
        page = min(limit or len(text), len(text) - offset) or 1
        while True:
            chunk = text[offset : offset + page]
            end = offset + len(chunk)
            paged = {
                **out,
                "content_page": chunk,
                "offset": offset,
                "total_chars": len(text),
                "next_offset": end if end < len(text) else None,
            }
            size = len(json.dumps(paged, ensure_ascii=False, separators=(",", ":")))
            if size <= cap or page == 1:
                return paged
            # Escaping (quotes, newlines) makes a page longer on the wire than in the text: every
            # character dropped shrinks the answer by at least one, so this ends within a few rounds.
            page = max(1, len(chunk) - (size - cap))

    def _split_notes(self, rp: ResolvedPath, content: dict[str, Any], status: str) -> dict[str, Any]:
        """Stale notes: keep apart those whose symbol still exists from those whose symbol is gone."""
        symbols = content.get("symbols", {})
        if status == "orphaned":
            return {"symbols": {}, "gone_symbols": symbols, "undescribed": []}
        from llmem.outline import build_outline, iter_symbols

        outline = build_outline(rp.key, rp.abs.read_bytes())
        current = {s.qualified_name for s in iter_symbols(outline)}
        return {
            "symbols": {k: v for k, v in symbols.items() if k in current},
            "gone_symbols": {k: v for k, v in symbols.items() if k not in current},
            "undescribed": sorted(current - set(symbols))[:200],
        }

    # -- list ------------------------------------------------------------------------------

    def list(
        self, directory: str, kind: str | None, status: str | None, limit: int, cursor: str | None
    ) -> dict[str, Any]:
        rp = self.resolve(directory, "directory")
        after = _decode_cursor(cursor) if cursor else None
        pending_by_key: dict[str, list[dict[str, Any]]] = {}
        for t in self.store.pending(NAMESPACE, rp.key):
            pending_by_key.setdefault(str(t["path"]), []).append(t)
        keys = self.store.iter_keys(NAMESPACE, rp.key, after)
        pend_keys = sorted((k for k in pending_by_key if after is None or _parts(k) > _parts(after)), key=_parts)
        entries: list[dict[str, Any]] = []
        last: str | None = None
        more = False
        for key, kinds in _merge(keys, pend_keys):
            items = []
            for kd in kinds:
                if kind and kd != kind:
                    continue
                rec = self.store.get_or_none(NAMESPACE, key, kd)
                if rec is None:
                    continue
                st = self.status(rec)
                if status and st != status:
                    continue
                items.append({"kind": kd, "status": st, "updated_at": rec.doc.get("updated_at")})
            for t in pending_by_key.get(key, []):
                if (kind and t["kind"] != kind) or (status and status != "pending"):
                    continue
                items.append(
                    {
                        "kind": t["kind"],
                        "status": "pending",
                        "ticket": t["ticket"],
                        "expires_at": t["expires_at"],
                    }
                )
            if not items:
                continue
            if len(entries) >= limit:
                more = True
                break
            entries.append({"path": key, "kinds": items})
            last = key
        tree: dict[str, list[dict[str, Any]]] = {}
        for e in entries:
            parent = e["path"].rsplit("/", 1)[0] if "/" in e["path"] else "."
            tree.setdefault(parent, []).append(e)
        return {
            "directory": rp.key,
            "folders": [{"path": f, "entries": es} for f, es in tree.items()],
            "count": len(entries),
            "next_cursor": _encode_cursor(last) if more and last else None,
        }

    # -- delete ----------------------------------------------------------------------------

    def delete(self, path: str, kind: str | None) -> dict[str, Any]:
        rp = self.resolve(path)
        has_own = bool(self.store.kinds(NAMESPACE, rp.key))
        is_folder = rp.abs.is_dir() or (not has_own and not rp.abs.exists())
        if kind is not None:
            deleted = self.store.delete(NAMESPACE, rp.key, kind)
            if not deleted and not is_folder:
                raise ArtifactNotFound(
                    f"no {kind!r} artifact for {rp.key!r}",
                    details={
                        "path": rp.key,
                        "kind": kind,
                        "available_kinds": self.store.kinds(NAMESPACE, rp.key),
                    },
                )
            if is_folder and rp.key != ".":
                deleted += sum(
                    self.store.delete(NAMESPACE, k, kind)
                    for k, kinds in list(self.store.iter_keys(NAMESPACE, rp.key))
                    if kind in kinds and k != rp.key
                )
        else:
            deleted = self.store.delete(NAMESPACE, rp.key, None, recursive=is_folder)
        if deleted == 0:
            raise ArtifactNotFound(f"no artifacts for {rp.key!r}", details={"path": rp.key, "kind": kind})
        return {"path": rp.key, "kind": kind, "deleted": deleted}

    # -- callback tasks -------------------------------------------------------------------------

    def folder_fingerprint(self, folder: Path) -> Fingerprint:
        from llmem.walk import walk_workspace

        walked = walk_workspace(self.ws, folder, max_file_bytes=self.limits.max_file_bytes)
        digest = hashlib.sha256()
        newest = 0
        for f in walked.files:
            digest.update(f"{f.rel_path}\0{f.size}\0{f.mtime_ns}\n".encode())
            newest = max(newest, f.mtime_ns)
        return Fingerprint(len(walked.files), newest, digest.hexdigest())

    def prompt(self, path: str, task: str) -> Envelope:
        if task not in llm_tasks.TASKS:
            raise UnsupportedTask(
                f"task {task!r} is not one of {', '.join(llm_tasks.TASKS)} (use generate_artifact for 'parse')",
                details={"field": "task", "allowed": list(llm_tasks.TASKS)},
            )
        rp = self._existing(path)
        if rp.abs.is_dir():
            if task not in llm_tasks.FOLDER_TASKS:
                raise UnsupportedTask(
                    f"task {task!r} works on files; for the folder {rp.key!r} only 'summarize' is offered",
                    details={"field": "task", "allowed": sorted(llm_tasks.FOLDER_TASKS)},
                )
            return self.callback.issue(self._folder_prompt(rp))
        if rp.abs.stat().st_size > self.limits.max_file_bytes:
            raise InvalidArgument(
                f"{rp.key!r} is over the {self.limits.max_file_bytes}-byte file cap",
                details={"path": rp.key, "rule": "max_file_bytes"},
            )
        from llmem.outline import build_outline, iter_symbols

        data = rp.abs.read_bytes()
        fp = fingerprint_file(rp.abs, data)
        outline = build_outline(rp.key, data)
        text = data.decode("utf-8", "replace")
        if task == "annotate":
            names = [s.qualified_name for s in iter_symbols(outline)]
            if not names:
                raise UnsupportedTask(
                    f"{rp.key!r} has no symbols to annotate ({outline.reason or 'no classes or functions'}); "
                    "use task 'summarize' or 'document'",
                    details={"path": rp.key, "mode": outline.mode},
                )
            prompt = llm_tasks.annotate_prompt(rp.key, outline, text)
            return self.callback.issue(
                PreparedPrompt(
                    task,
                    rp.key,
                    task,
                    prompt,
                    "json",
                    fp,
                    {"symbols": names},
                    {"symbols": len(names), "language": outline.language},
                )
            )
        prompt = llm_tasks.file_prompt(task, rp.key, outline, text)
        return self.callback.issue(
            PreparedPrompt(task, rp.key, task, prompt, "markdown", fp, {}, {"language": outline.language})
        )

    def _folder_prompt(self, rp: ResolvedPath) -> PreparedPrompt:
        from llmem.walk import walk_workspace

        walked = walk_workspace(self.ws, rp.abs, max_file_bytes=self.limits.max_file_bytes)
        entries: list[dict[str, Any]] = []
        subfolders: set[str] = set()
        prefix = "" if rp.key == "." else rp.key + "/"
        for f in walked.files:
            rest = f.rel_path[len(prefix) :]
            if "/" in rest:
                subfolders.add(prefix + rest.split("/", 1)[0])
                continue
            entry: dict[str, Any] = {"path": f.rel_path}
            summary = self.store.get_or_none(NAMESPACE, f.rel_path, "summarize")
            outline = self.store.get_or_none(NAMESPACE, f.rel_path, OUTLINE)
            if summary is not None:
                entry["summary"] = summary.doc.get("content")
            elif outline is not None:
                entry["symbols"] = [s.get("name") for s in outline.doc["content"].get("symbols", [])]
            else:
                entry["note"] = "(not outlined yet: run generate_artifact on the folder first)"
            entries.append(entry)
        for sub in sorted(subfolders):
            entry = {"path": sub, "folder": True}
            summary = self.store.get_or_none(NAMESPACE, sub, "summarize")
            entry["summary" if summary else "note"] = summary.doc.get("content") if summary else "(no summary yet)"
            entries.append(entry)
        fp = self.folder_fingerprint(rp.abs)
        prompt = llm_tasks.folder_summary_prompt(rp.key, entries)
        return PreparedPrompt(
            "summarize",
            rp.key,
            "summarize",
            prompt,
            "markdown",
            Fingerprint(fp.size, fp.mtime_ns, fp.sha256),
            {"folder": True},
            {"files": len(walked.files), "subfolders": len(subfolders)},
        )

    def probe(self, key: str) -> Fingerprint | None:
        target = self.ws if key == "." else self.ws / key
        try:
            if target.is_dir():
                return self.folder_fingerprint(target)
            return fingerprint_file(target)
        except OSError:
            return None

    def store_result(self, ticket: str, path: str, task: str, result: str, model: str | None) -> Envelope:
        rp = self.resolve(path)

        def validate(answer: str, doc: dict[str, Any]) -> Validated:
            if doc["task"] == "annotate":
                notes, missing = llm_tasks.validate_annotate(answer, list(doc["context"].get("symbols", [])))
                return Validated(
                    {"symbols": notes},
                    "json",
                    data={"described": len(notes), "missing_symbols": missing[:100]},
                )
            text = llm_tasks.validate_markdown(answer)
            return Validated(text, "markdown", data={"chars": len(text)})

        envelope = self.callback.accept(
            ticket=ticket,
            target=rp.key,
            task=task,
            result=result,
            model=model,
            probe=lambda doc: self.probe(str(doc["path"])),
            validate=validate,
            regenerate_hint=f"generate_prompt({rp.key!r}, {task!r})",
        )
        rec = self.store.get_or_none(NAMESPACE, rp.key, task)
        if rec is not None and rec.doc.get("source") is not None and (self.ws / rp.key).is_dir():
            # Folder fingerprints are digests of the listing; mark them so status() recomputes them.
            src = dict(rec.doc["source"], type="folder")
            self.store.put(
                NAMESPACE,
                rp.key,
                task,
                content=rec.doc["content"],
                fmt=rec.doc["format"],
                provenance=rec.doc["provenance"],
                source=None,
                extra={"source": src},
            )
        return envelope


def _count_symbols(symbols: list[dict[str, Any]]) -> int:
    return sum(1 + _count_symbols(s.get("children", [])) for s in symbols)


def _parts(key: str) -> tuple[str, ...]:
    return () if key == "." else tuple(key.split("/"))


def _merge(keys: Any, pending: list[str]) -> Any:
    """Merge the store's (key, kinds) stream with keys that only have pending tickets, in path order."""
    pend = iter(pending)
    nxt = next(pend, None)
    for key, kinds in keys:
        while nxt is not None and _parts(nxt) < _parts(key):
            yield nxt, []
            nxt = next(pend, None)
        if nxt == key:
            nxt = next(pend, None)
        yield key, kinds
    while nxt is not None:
        yield nxt, []
        nxt = next(pend, None)


def _encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": key}).encode()).decode()


def _decode_cursor(cursor: str) -> str:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return str(value["after"])
    except (ValueError, KeyError, TypeError):
        raise InvalidArgument(
            "cursor is not one this server issued; pass next_cursor from the previous page unchanged",
            details={"field": "cursor", "rule": "opaque cursor"},
        ) from None
