"""llmem's operations on the artifact store: the facade ``server.py`` wires to tools.

Reading, listing and deleting live here; outlining is ``parsing.py`` and the notes written
through the callback protocol are ``notes.py``. Nothing here knows about MCP: each method
returns the ``data`` of an envelope or raises a :class:`SuiteError`.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from llmem._readcache import Signature
from llmem.config import Limits
from llmem.envelope import Envelope
from llmem.errors import ArtifactNotFound, InvalidArgument, SourceNotFound
from llmem.notes import Notes
from llmem.parsing import NAMESPACE, Parser, Progress, ProgressSink
from llmem.paths import ResolvedPath, resolve_in_workspace
from llmem.store import ArtifactRecord, ArtifactStore, Fingerprint, source_status

__all__ = ["NAMESPACE", "Llmem", "Progress", "ProgressSink"]

#: What the answer adds to what the artifact file holds: its ``status``.
_STATUS_ROOM = len(', "status": "orphaned"')


class Llmem:
    def __init__(self, store: ArtifactStore, limits: Limits):
        self.store = store
        self.ws = store.workspace
        self._ws = str(store.workspace)
        self.limits = limits
        self.parser = Parser(store, limits)
        self.notes = Notes(store, limits)
        self._answers = _AnswerMemo()

    # -- paths ---------------------------------------------------------------------------

    def resolve(self, path: str, field: str = "path") -> ResolvedPath:
        return resolve_in_workspace(self.ws, path, field=field)

    def _existing(self, path: str) -> ResolvedPath:
        rp = self.resolve(path)
        try:
            exists = rp.abs.exists()
        except OSError as exc:  # a name the file system refuses (too long, say)
            raise InvalidArgument(
                f"{rp.key[:200]!r} cannot be looked up: {exc.strerror or exc}",
                details={"field": "path", "rule": "os"},
            ) from None
        if not exists:
            raise SourceNotFound(
                f"{rp.key!r} does not exist in the workspace {str(self.ws)!r}",
                details={"path": rp.key},
                next_action="Check the path with list_artifacts or your file listing; paths are workspace-relative.",
            )
        return rp

    # -- parse -----------------------------------------------------------------------------

    def parse(self, path: str, progress: ProgressSink | None = None) -> dict[str, Any]:
        return self.parser.parse(self._existing(path), progress)

    # -- notes (the callback protocol) -----------------------------------------------------

    def prompt(self, path: str, task: str) -> Envelope:
        self.notes.check_task(task)
        return self.notes.prompt(self._existing(path), task)

    def store_result(self, ticket: str, path: str, task: str, result: str, model: str | None) -> Envelope:
        return self.notes.store_result(ticket, self.resolve(path), task, result, model)

    # -- read ------------------------------------------------------------------------------

    def status(self, record: ArtifactRecord) -> str:
        src = record.doc.get("source")
        if not isinstance(src, dict):
            return "fresh"
        if src.get("type") == "folder":
            folder = self.ws.joinpath(*Path(record.key).parts) if record.key != "." else self.ws
            if not folder.is_dir():
                return "orphaned"
            return "fresh" if self.notes.folder_fingerprint(folder).sha256 == src.get("sha256") else "stale"
        return source_status(os.path.join(self._ws, record.key), Fingerprint.from_dict(src))  # noqa: PTH118

    def get(self, path: str, kind: str, offset: int, limit: int | None) -> dict[str, Any]:
        rp = self.resolve(path)
        # Shared with other reads of the same unchanged file: everything below only reads it.
        record = self.store.get(NAMESPACE, rp.key, kind, shared=True)
        status = self.status(record)
        content = record.doc.get("content")
        if kind == "annotate" and status != "fresh" and isinstance(content, dict):
            # Depends on the source as it is now, not only on the artifact: never memoised.
            return self._answer(rp.key, record, status, self._split_notes(rp, content, status), offset, limit)
        memo_key = (rp.key, kind, offset, limit)
        found = self._answers.get(memo_key, record.version, status)
        if found is not None:
            return found
        answer = self._answer(rp.key, record, status, content, offset, limit)
        self._answers.put(memo_key, record.version, status, answer)
        return answer

    def _answer(
        self, key: str, record: ArtifactRecord, status: str, content: Any, offset: int, limit: int | None
    ) -> dict[str, Any]:
        doc = record.doc
        out: dict[str, Any] = {
            "path": key,
            "kind": record.kind,
            "status": status,
            "format": doc.get("format"),
            "created_at": doc.get("created_at"),
            "updated_at": doc.get("updated_at"),
            "provenance": doc.get("provenance"),
            "source": doc.get("source"),
        }
        cap = self.limits.answer_chars - 300  # room for the envelope around data
        if offset == 0 and limit is None and record.size + _STATUS_ROOM <= cap and content is doc.get("content"):
            # The file holds the content and this metadata, written with spaces the answer does
            # not have, so its size bounds the answer: no need to measure.
            return {**out, "content": content}
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if offset == 0 and len(text) <= cap and (limit is None or len(text) <= limit):
            whole = {**out, "content": content, "total_chars": len(text)}
            if _wire_len(whole) <= cap:
                return whole
        if offset > len(text):
            raise InvalidArgument(
                f"offset {offset} is past the end of the content ({len(text)} characters)",
                details={"field": "offset", "rule": "within content", "total_chars": len(text)},
            )
        paged = {**out, "content_page": "", "offset": offset, "total_chars": len(text), "next_offset": len(text)}
        overhead = _wire_len(paged)  # the answer around an empty page
        # Every character takes at least one on the wire: no page longer than the room left fits.
        page = min(limit or len(text), len(text) - offset, max(1, cap - overhead + 2)) or 1
        while True:
            chunk = text[offset : offset + page]
            # Escaping (quotes, newlines) makes a page longer on the wire than in the text: every
            # character dropped shrinks the answer by at least one, so this ends within a few rounds.
            size = overhead + _wire_len(chunk) - 2
            if size <= cap or page == 1:
                end = offset + len(chunk)
                return {**paged, "content_page": chunk, "next_offset": end if end < len(text) else None}
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


class _AnswerMemo:
    """The last answers of ``get``, each reused while its artifact file and its status are unchanged.

    An answer is only kept for a file version the store can tell apart from any later one (its
    ``version``); what the answer holds is bounded by the answer cap, so the memo stays small.
    """

    def __init__(self, size: int = 128):
        self.size = size
        self._items: OrderedDict[tuple[str, str, int, int | None], tuple[Signature, str, dict[str, Any]]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()  # tools run in worker threads, several at once

    def get(
        self, key: tuple[str, str, int, int | None], version: Signature | None, status: str
    ) -> dict[str, Any] | None:
        if version is None:
            return None
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] != version or item[1] != status:
                return None
            self._items.move_to_end(key)
        return dict(item[2])  # a copy of the top level: the caller may add to it

    def put(
        self, key: tuple[str, str, int, int | None], version: Signature | None, status: str, answer: dict[str, Any]
    ) -> None:
        if version is None:
            return
        with self._lock:
            self._items[key] = (version, status, dict(answer))
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _wire_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


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
