"""llmem's operations on the artifact store: the facade ``server.py`` wires to tools.

Reading, listing and deleting live here; outlining is ``parsing.py`` and the notes written
through the callback protocol are ``notes.py``. Nothing here knows about MCP: each method
returns the ``data`` of an envelope or raises a :class:`SuiteError`.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmem.code.notes import Notes
from llmem.code.parsing import NAMESPACE, OUTLINE, Parser, Progress, ProgressSink
from llmem.core._readcache import Signature
from llmem.core.config import Limits
from llmem.core.envelope import Envelope
from llmem.core.errors import ArtifactNotFound, InvalidArgument, SourceNotFound
from llmem.core.paths import ResolvedPath, resolve_in_workspace
from llmem.core.store import ArtifactRecord, ArtifactStore, Fingerprint, source_status

if TYPE_CHECKING:
    from llmem.code.freshness import OutlineFreshness, Refresh
    from llmem.code.parse_pool import Replaced
    from llmem.code.search import Searcher, SearchIndex

__all__ = ["KINDS", "NAMESPACE", "SOURCE", "Llmem", "Progress", "ProgressSink", "page_content"]

log = logging.getLogger("llmem.code.artifacts")

#: ``get_artifact``'s kind for the current text of a file or of one symbol (not stored).
SOURCE = "source"
#: Every kind ``get_artifact`` reads: the parser's outline, the notes of the four tasks, the source.
KINDS = (OUTLINE, "annotate", "summarize", "document", "test-plan", SOURCE)


class Llmem:
    def __init__(self, store: ArtifactStore, limits: Limits):
        self.store = store
        self.ws = store.workspace
        self._ws = str(store.workspace)
        self.limits = limits
        self.parser = Parser(store, limits)
        self.notes = Notes(store, limits)
        # Outlines made anew (a parse, or a read re-deriving one) carry notes of renamed and moved
        # symbols, and go into the search database at once.
        self.parser.after_parse = self._after_parse
        self.parser.after_replace = self._after_replace
        self.parser.while_parsing = self._index_catch_up
        self._answers = _AnswerMemo()
        # Reads that find an outline behind its file have this service re-parse it.
        self.outlines().refresher = self
        self.notes.refresher = lambda: self

    def _after_replace(self, replaced: list[Replaced]) -> None:
        """Remember what replaced outlines no longer list (check_references' likely new names)."""
        from llmem.code.symbol_history import remember_replaced

        try:
            remember_replaced(self.store, replaced)
        except Exception:  # a memory for later answers: never the parse's failure
            log.warning("what the parse replaced could not be remembered", exc_info=True)

    def _after_parse(self, changed: list[str]) -> dict[str, Any]:
        carried = self.notes.carry_notes(changed)
        self._index_catch_up()
        return carried

    def _index_catch_up(self) -> None:
        """The parsing process pays for indexing what it wrote, so that the first search of the
        next process (every client starts its own) builds nothing: catching up 1,800 outlines
        costs a few hundred milliseconds, small beside the parse, large beside a search. A large
        parse catches up while its workers go on, too, leaving little for the end."""
        try:
            self.searcher().catch_up()
        except Exception:  # the files stay the truth: the next search catches up instead
            log.warning("the search database could not catch up after a parse", exc_info=True)

    def outlines(self) -> OutlineFreshness:
        """Which outlines differ from their files, and bringing them up to date (the one place)."""
        freshness = self.searcher().freshness
        if freshness.refresher is None:  # a store's index made anew (another workspace on its root)
            freshness.refresher = self
        return freshness

    def refresh_outlines(self, keys: list[str], deadline: float, at_least: int) -> list[str]:
        """Re-parse ``keys`` where changed, until ``deadline`` but ``at_least`` of them (for
        :class:`llmem.code.freshness.OutlineFreshness`)."""
        return self.parser.refresh_files(keys, deadline, at_least)

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

    def parse(self, path: str, progress: ProgressSink | None = None, budget_s: float | None = None) -> dict[str, Any]:
        """Outline a file or folder; with ``budget_s`` a folder parse still running then goes on
        in the background (see :mod:`llmem.code.parsing`). What reads re-parsed under the path
        since the last parse reported it is answered too (``refreshed_since``): a file a search
        already took in after an edit counts as ``unchanged`` here, and must not look unseen."""
        rp = self._existing(path)
        answer = self.parser.parse(rp, progress, budget_s)
        since = self.outlines().take_refreshed_since(rp.key)
        if since:
            answer["refreshed_since"] = since[:_REFRESHED_SHOWN]
            answer["refreshed_since_total"] = len(since)
            answer["refreshed_since_means"] = (
                "outlines that reads (by) re-parsed after their files changed, before this parse: "
                "counted in unchanged here, but taken in when said"
            )
        return answer

    # -- notes (the callback protocol) -----------------------------------------------------

    def prompt(self, path: str, task: str, part: int | None = None, symbols: list[str] | None = None) -> Envelope:
        self.notes.check_task(task)
        for name, given in (("part", part), ("symbols", symbols)):
            if given is not None and task != "annotate":
                raise InvalidArgument(
                    f"{name} is only taken with task='annotate' (not {task!r})",
                    details={"field": name, "rule": "task='annotate' only"},
                )
        if symbols is not None and not 1 <= len(symbols) <= 50:
            raise InvalidArgument(
                f"symbols: {len(symbols)} names; give 1 to 50 (or leave symbols out for the whole file)",
                details={"field": "symbols", "rule": "1..50 qualified names"},
            )
        if part is not None and symbols:
            raise InvalidArgument(
                "pass part or symbols, not both: symbols asks for just those, whatever part they are in",
                details={"field": "symbols", "rule": "not with part"},
            )
        return self.notes.prompt(self._existing(path), task, part, symbols)

    def cancel(self, ticket: str | None, path: str | None, task: str | None) -> dict[str, Any]:
        key = self.resolve(path).key if path is not None else None
        return self.notes.cancel(ticket, key, task)

    def store_result(self, ticket: str, path: str, task: str, result: str, model: str | None) -> Envelope:
        return self.notes.store_result(ticket, self.resolve(path), task, result, model)

    # -- read ------------------------------------------------------------------------------

    def status(self, record: ArtifactRecord, by: str = "list_artifacts") -> str:
        return self.freshness(record, by)[0]

    def freshness(self, record: ArtifactRecord, by: str = "get_artifact") -> tuple[str, dict[str, Any]]:
        """The artifact's status and what the answer says about it beside (stale symbols, changed
        files, and ``stale_dependencies``: code elsewhere that its notes name and that changed).

        A file note that records the hashes of the symbols it was written from stays fresh while
        those symbols are unchanged: a comment edited above a function changes nothing. Telling
        that may bring the file's outline up to date (as read ``by`` that tool).
        """
        status, about = self._own_freshness(record, by)
        if status == "orphaned" or not record.doc.get("depends_on"):
            return status, self._renames_of_gone(record.key, about)
        changes = self.notes.dependency_changes(record)
        if not changes:
            return status, self._renames_of_gone(record.key, about)
        from llmem.code.note_deps import shown

        about = {**about, "stale_dependencies": shown(changes, per_note=record.kind == "annotate")}
        return "stale", self._renames_of_gone(record.key, about)

    def _renames_of_gone(self, key: str, about: dict[str, Any]) -> dict[str, Any]:
        """Each gone symbol of ``about`` (its own, or code its notes name) that the store knows was
        renamed says ``renamed_to``: renamed and gone read apart."""
        gone = [
            e
            for e in [*about.get("stale_symbols", []), *about.get("stale_dependencies", [])]
            if e.get("change") == "gone"
        ]
        if not gone:
            return about
        from llmem.code.symbol_history import SymbolHistory

        history = SymbolHistory(self.store)
        for e in gone:
            new = history.renamed_to(str(e["symbol"]), str(e.get("path") or key))
            if new is not None:
                e["renamed_to"] = new
        return about

    def _own_freshness(self, record: ArtifactRecord, by: str) -> tuple[str, dict[str, Any]]:
        """:meth:`freshness` as far as the code the artifact describes goes (its file or folder)."""
        src = record.doc.get("source")
        if not isinstance(src, dict):
            return "fresh", {}
        if src.get("type") == "folder":
            return self._folder_freshness(record, src)
        status = source_status(os.path.join(self._ws, record.key), Fingerprint.from_dict(src))  # noqa: PTH118
        hashes = record.doc.get("symbol_hashes")
        # A note may keep stale notes of a file unchanged since (a refresh that did not replace them).
        kept_stale = status == "fresh" and bool(record.doc.get("kept_stale"))
        if (status != "stale" and not kept_stale) or not isinstance(hashes, dict) or record.kind == OUTLINE:
            return status, {}
        current = self.current_symbol_hashes(record.key, by)
        if current is None:
            return "orphaned", {}
        return _compare_symbols(record, hashes, current)

    def _folder_freshness(self, record: ArtifactRecord, src: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        folder = self.ws.joinpath(*Path(record.key).parts) if record.key != "." else self.ws
        if not folder.is_dir():
            return "orphaned", {}
        files = record.doc.get("files")
        if not isinstance(files, dict):
            fresh = self.notes.folder_fingerprint(folder).sha256 == src.get("sha256")
            return ("fresh" if fresh else "stale"), {}
        changed = self.notes.changed_files(folder, files)
        if not any(changed.values()):
            return "fresh", {}
        return "stale", {"changed_files": {k: v[:50] for k, v in changed.items()}}

    def current_symbol_hashes(self, key: str, by: str = "get_artifact") -> dict[str, str] | None:
        """The symbol hashes of ``key`` as the file is now (its outline brought up to date)."""
        outline = self.outlines().current_outline(key, by=by)
        if outline is None:
            return None
        return _hashes_of(outline.get("symbols", []))

    def get(self, path: str, kind: str, offset: int, limit: int | None, symbol: str | None = None) -> dict[str, Any]:
        if kind == SOURCE:
            return self.source(path, symbol, offset, limit)
        if symbol is not None and kind != OUTLINE:
            raise InvalidArgument(
                f"symbol is only taken with kind='source' or 'outline' (not {kind!r})",
                details={"field": "symbol", "rule": "kind='source' or 'outline' only"},
                next_action=f"Call get_artifact({path!r}, kind='source', symbol={symbol!r}).",
            )
        rp = self.resolve(path)
        try:
            # Shared with other reads of the same unchanged file: everything below only reads it.
            record = self.store.get(NAMESPACE, rp.key, kind, shared=True)
        except ArtifactNotFound:
            if kind != OUTLINE or not rp.abs.is_file():
                raise
            # A file never outlined: outline it now (one file), as its source and references read.
            self.outlines().refresh({rp.key: "changed"}, by="get_artifact", budget_s=0, at_least=1)
            if self.store.get_or_none(NAMESPACE, rp.key, kind) is None:
                self.parser.parse(rp)  # it could not be: the parse says why (over the file cap)
            record = self.store.get(NAMESPACE, rp.key, kind, shared=True)
        status, about = self.freshness(record)
        if kind == "annotate" and status == "stale":
            # Re-deriving the outline may just have carried notes of renamed symbols: read again.
            record = self.store.get(NAMESPACE, rp.key, kind, shared=True)
            status, about = self.freshness(record)
        if kind == OUTLINE and status == "stale":
            # An outline is mechanical: bring it up to date rather than answer a stale one.
            self.outlines().refresh({rp.key: "changed"}, by="get_artifact", budget_s=0, at_least=1)
            record = self.store.get(NAMESPACE, rp.key, kind, shared=True)
            status, about = self.freshness(record)
        content = record.doc.get("content")
        if symbol is not None:  # the outline of one symbol (its members too), however big the file
            return self._answer(rp.key, record, status, _outline_of_symbol(rp.key, content, symbol), 0, None, about)
        renamed_here = record.doc.get("renamed") if kind == "annotate" else None
        unfinished = _rename_unfinished(self.ws, renamed_here, self.store) if isinstance(renamed_here, dict) else []
        if status == "fresh" and not about and not unfinished:
            memo_key = (rp.key, kind, offset, limit)
            found = self._answers.get(memo_key, record.version, status)
            if found is not None:
                return found
            answer = self._answer(rp.key, record, status, content, offset, limit)
            self._answers.put(memo_key, record.version, status, answer)
            return answer
        # Depends on the source as it is now, not only on the artifact: never memoised.
        _mark_unfinished_renames(self.ws, about)
        if kind == "annotate" and isinstance(content, dict) and (about or status != "fresh"):
            content = self._split_notes(rp, record, content, status, about)
        if unfinished:
            about = {**about, "rename_unfinished": unfinished}
        if status == "stale" and isinstance(content, str):
            named = _gone_names_mentioned(content, about)
            renamed = _renamed_to(about)
            about = {**about, "gone_names_mentioned": named}  # gone by that name, renamed or not
            if any(n in renamed for n in named):
                about["renamed_names_mentioned"] = {n: renamed[n] for n in named if n in renamed}
        answer = self._answer(rp.key, record, status, content, offset, limit, about)
        return answer

    def _answer(
        self,
        key: str,
        record: ArtifactRecord,
        status: str,
        content: Any,
        offset: int,
        limit: int | None,
        about: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        doc = record.doc
        out: dict[str, Any] = {
            "path": key,
            "kind": record.kind,
            "status": status,
            **(about or {}),
            "format": doc.get("format"),
            "created_at": doc.get("created_at"),
            "updated_at": doc.get("updated_at"),
            "provenance": doc.get("provenance"),
            "source": doc.get("source"),
            **{k: doc[k] for k in ("renamed", "moved") if doc.get(k)},
        }
        cap = self.limits.answer_chars - 300
        if record.kind == OUTLINE and isinstance(content, dict) and isinstance(content.get("symbols"), list):
            return page_outline(out, content, offset, limit, cap)
        return page_content(out, content, offset, limit, cap)

    def _split_notes(
        self, rp: ResolvedPath, record: ArtifactRecord, content: dict[str, Any], status: str, about: dict[str, Any]
    ) -> dict[str, Any]:
        """Stale notes: keep apart those whose symbol is unchanged, changed, or gone."""
        symbols = content.get("symbols", {})
        file_note = {"file": content["file"]} if "file" in content else {}
        if status == "orphaned":
            return {"symbols": {}, "gone_symbols": symbols, "undescribed": [], **file_note}
        current = self.current_symbol_hashes(rp.key, "get_artifact") or {}
        stale = {s["symbol"]: s["change"] for s in about.get("stale_symbols", [])}
        if not isinstance(record.doc.get("symbol_hashes"), dict):
            # Written before symbols had hashes: a symbol that still exists keeps its note.
            stale = {k: "gone" for k in symbols if k not in current}
        # Notes whose own symbol is unchanged but which name code elsewhere that changed.
        named = {n for c in about.get("stale_dependencies", []) for n in c.get("named_in", [])}
        return {
            "symbols": {k: v for k, v in symbols.items() if k not in stale and k not in named},
            "changed_symbols": {k: v for k, v in symbols.items() if stale.get(k) == "changed"},
            "gone_symbols": {k: v for k, v in symbols.items() if stale.get(k) == "gone"},
            **(
                {"naming_changed_code": {k: v for k, v in symbols.items() if k in named and k not in stale}}
                if named
                else {}
            ),
            **_undescribed(rp.key, current, symbols, record.doc.get("symbol_hashes")),
            **file_note,
        }

    # -- source ----------------------------------------------------------------------------

    def source(self, path: str, symbol: str | None, offset: int, limit: int | None) -> dict[str, Any]:
        """The current text of a file, or of one of its symbols, with its line range; paged."""
        rp = self._existing(path)
        if not rp.abs.is_file():
            raise InvalidArgument(
                f"{rp.key!r} is a folder; kind='source' reads a file",
                details={"field": "path", "rule": "a file"},
                next_action=f"List its files with list_artifacts({rp.key!r}).",
            )
        size = rp.abs.stat().st_size
        if size > self.limits.max_file_bytes:
            raise InvalidArgument(
                f"{rp.key!r} is {size} bytes, over the {self.limits.max_file_bytes}-byte file cap",
                details={"field": "path", "rule": "max_file_bytes", "limit": self.limits.max_file_bytes},
            )
        data = rp.abs.read_bytes()
        if b"\0" in data[:8192]:
            raise InvalidArgument(
                f"{rp.key!r} is a binary file; kind='source' reads text",
                details={"field": "path", "rule": "text file"},
            )
        import hashlib

        text = data.decode("utf-8", "replace")
        out: dict[str, Any] = {
            "path": rp.key,
            "kind": SOURCE,
            "status": "fresh",
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        if symbol is None:
            return page_content({**out, "format": "text"}, text, offset, limit, self.limits.answer_chars - 300)
        from llmem.code.outline import build_outline, iter_symbols

        outline = build_outline(rp.key, data)
        found = _find_symbol(rp.key, list(iter_symbols(outline)), symbol)
        lines = text.splitlines(keepends=True)
        body = "".join(lines[found.start_line - 1 : found.end_line])
        out.update(
            symbol=found.qualified_name,
            symbol_kind=found.kind,
            signature=found.signature,
            start_line=found.start_line,
            end_line=found.end_line,
            hash=found.hash,
            language=outline.language,
            format="text",
        )
        return page_content(out, body, offset, limit, self.limits.answer_chars - 300)

    # -- list ------------------------------------------------------------------------------

    def _list_entry(
        self, key: str, kinds: list[str], pending: list[dict[str, Any]], kind: str | None, status: str | None
    ) -> dict[str, Any] | None:
        items: list[dict[str, Any]] = []
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
        shown = [t for t in pending if not (kind and t["kind"] != kind) and status in (None, "pending")]
        for t in shown[:_PENDING_SHOWN]:
            item = {"kind": t["kind"], "status": "pending", "ticket": t["ticket"], "expires_at": t["expires_at"]}
            if t.get("part"):
                item["part"] = t["part"]
            items.append(item)
        if not items:
            return None
        entry: dict[str, Any] = {"path": key, "kinds": items}
        if len(shown) > _PENDING_SHOWN:
            entry["more_pending"] = len(shown) - _PENDING_SHOWN
        return entry

    def _total(
        self, directory: str, kind: str | None, status: str | None, pending_by_key: dict[str, list[dict[str, Any]]]
    ) -> dict[str, Any]:
        """``total``: the paths under the folder with an artifact (of ``kind``) or a pending ticket.

        Counting needs no artifact read; with a ``status`` filter every artifact's status would
        have to be worked out, so ``total`` then counts the paths before that filter.
        """
        searcher = self.searcher()
        if searcher.loaded:
            total = searcher.count(directory, kind)
        else:  # no index in this process yet: walking the folder is cheaper than building one
            total = sum(1 for _, kinds in self.store.iter_keys(NAMESPACE, directory) if kind is None or kind in kinds)
        for key, tickets in pending_by_key.items():
            if (kind is None or any(t["kind"] == kind for t in tickets)) and not self.store.kinds(NAMESPACE, key):
                total += 1  # a path with only a pending ticket
        out: dict[str, Any] = {"total": total}
        if status is not None:
            out["total_is"] = "paths before the status filter"
        return out

    # -- delete ----------------------------------------------------------------------------

    def delete(self, path: str, kind: str | None, dry_run: bool = False) -> dict[str, Any]:
        """Delete one kind or every kind of a path; under a folder, recursively. Deleting nothing
        is no error (``deleted: 0``); ``dry_run`` says what would go and deletes nothing."""
        rp = self.resolve(path)
        has_own = bool(self.store.kinds(NAMESPACE, rp.key))
        is_folder = rp.abs.is_dir() or (not has_own and not rp.abs.exists())
        targets: list[tuple[str, str]] = []
        for key, kinds in (
            self.store.iter_keys(NAMESPACE, rp.key) if is_folder else [(rp.key, self.store.kinds(NAMESPACE, rp.key))]
        ):
            targets.extend((key, kd) for kd in kinds if kind is None or kd == kind)
        deleted = 0
        if not dry_run:
            deleted = sum(self.store.delete(NAMESPACE, key, kd) for key, kd in targets)
        shown = [{"path": k, "kind": kd} for k, kd in targets[:_DELETED_SHOWN]]
        out: dict[str, Any] = {
            "path": rp.key,
            "kind": kind,
            "recursive": is_folder,
            "dry_run": dry_run,
            "deleted": deleted,
            "would_delete" if dry_run else "artifacts": shown,
            "more": max(0, len(targets) - _DELETED_SHOWN),
        }
        if dry_run:
            out["matched"] = len(targets)
        return out

    # -- search ----------------------------------------------------------------------------

    def searcher(self) -> SearchIndex:
        return self._search().index()

    def _search(self) -> Searcher:
        from llmem.code.search import Searcher

        return Searcher(self.store, self.limits)

    def search(
        self, query: str, kind: str | None, directory: str, limit: int, cursor: str | None, scope: str = "auto"
    ) -> dict[str, Any]:
        return self._search().search(
            query, kind, directory, limit, cursor, scope, refresher=lambda: self, notes=lambda: self
        )

    def mark_stale_notes(self, hits: list[dict[str, Any]]) -> int:
        """Mark each hit of a note (a file's or a symbol's, a summary) whose code changed or went
        since it was written, or that names code that did: ``note_stale`` says what, and
        ``refresh_with`` the prompt that writes it again. How many were marked."""
        status: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        marked = 0
        for hit in hits:
            kind = hit.get("from")
            if kind not in KINDS or kind in (OUTLINE, SOURCE):
                continue
            at = (str(hit["path"]), str(kind))
            if at not in status:
                record = self.store.get_or_none(NAMESPACE, at[0], at[1])
                status[at] = self.freshness(record, "search_artifacts") if record is not None else ("fresh", {})
            state, about = status[at]
            why = _why_stale(state, about, hit.get("symbol"))
            if why is None:
                continue
            hit["note_stale"] = why
            hit["refresh_with"] = f"generate_prompt(path={at[0]!r}, task={at[1]!r})"
            marked += 1
        return marked

    # -- references --------------------------------------------------------------------------

    def references(
        self,
        symbol: str,
        path: str | None,
        kind: str | None,
        limit: int,
        cursor: str | None,
        tests: str = "include",
        depth: int = 1,
    ) -> dict[str, Any]:
        """Every use of ``symbol`` in the workspace (of the definition in ``path`` when given); with
        ``depth`` > 1 its callers as a tree."""
        from llmem.code.references import finder_for
        from llmem.code.symbol_history import SymbolHistory

        refresh = self._outlines_now("find_references")
        chars = self.limits.answer_chars - 400
        finder = finder_for(self.ws)
        if depth == 1:
            beside = None
            if symbol.rsplit(".", 1)[-1] in ("__init__", "__new__"):  # C(...) runs C.__init__: listed beside
                from functools import partial

                from llmem.code.references_constructors import constructor_calls_beside

                beside = partial(constructor_calls_beside, finder)
            found = finder.find(symbol, path, kind, limit, cursor, chars, tests, SymbolHistory(self.store), beside)
            return _with_freshness(found, refresh)
        from llmem.code.references_callers import caller_tree

        with finder.lock:
            return caller_tree(finder, symbol, path, depth, tests, limit, cursor, chars)

    def check_references(self, path: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
        """The uses under ``path`` (the workspace by default) that no longer resolve to a definition."""
        from llmem.code.check_answer import check_answer
        from llmem.code.references import finder_for
        from llmem.code.symbol_history import SymbolHistory

        refresh = self._outlines_now("check_references")
        finder = finder_for(self.ws)
        with finder.lock:
            answer = check_answer(
                finder, path, limit, cursor, self.limits.answer_chars - 400, SymbolHistory(self.store)
            )
        return _with_freshness(answer, refresh)

    def _outlines_now(self, by: str) -> Refresh:
        """Which members are gone, and what they became, is what parses saw: the outlines behind
        their files (anywhere: a class used under a path may be defined elsewhere) are re-parsed
        first, within the read's budget."""
        return self.outlines().bring_up_to_date(".", by=by, budget_s=self.limits.refresh_budget_ms / 1000)

    # -- store status ----------------------------------------------------------------------

    def store_status(self, directory: str = ".") -> dict[str, Any]:
        """What the store holds under a folder: artifacts by kind and by status, bytes, pending
        tickets, and parse jobs (running first)."""
        rp = self.resolve(directory, "directory")
        by_kind: dict[str, dict[str, int]] = {}
        by_status: dict[str, int] = {}
        paths = 0
        size = 0
        for key, kinds in self.store.iter_keys(NAMESPACE, rp.key):
            paths += 1
            for kd in kinds:
                rec = self.store.get_or_none(NAMESPACE, key, kd)
                if rec is None:
                    continue
                size += rec.size
                st = self.status(rec, "store_status")
                counts = by_kind.setdefault(kd, {})
                counts[st] = counts.get(st, 0) + 1
                by_status[st] = by_status.get(st, 0) + 1
        pending = self.store.pending(NAMESPACE, rp.key)
        for t in pending:
            by_status["pending"] = by_status.get("pending", 0) + 1
            counts = by_kind.setdefault(str(t["kind"]), {})
            counts["pending"] = counts.get("pending", 0) + 1
        # The jobs that parse this folder: those under it, and those of a folder holding it.
        jobs = [j for j in self.parser.jobs() if _overlaps(str(j.get("path", ".")), rp.key)]
        return {
            "directory": rp.key,
            "store": str(self.store.root),
            "paths": paths,
            "artifacts": sum(n for st, n in by_status.items() if st != "pending"),
            "bytes": size,
            "by_kind": {k: dict(sorted(v.items())) for k, v in sorted(by_kind.items())},
            "by_status": dict(sorted(by_status.items())),
            "pending_tickets": len(pending),
            "parse_jobs": jobs,
        }

    # -- list (last: its name shadows the builtin in the class body) ---------------------

    def list(
        self, directory: str, kind: str | None, status: str | None, limit: int, cursor: str | None
    ) -> dict[str, Any]:
        """One page of the tree under ``directory``: never over the answer cap, a folder kept whole
        on one page where it fits, and the total of paths under the folder."""
        rp = self.resolve(directory, "directory")
        after = _decode_cursor(cursor) if cursor else None
        pending_by_key: dict[str, list[dict[str, Any]]] = {}
        for t in self.store.pending(NAMESPACE, rp.key):
            pending_by_key.setdefault(str(t["path"]), []).append(t)
        keys = self.store.iter_keys(NAMESPACE, rp.key, after)
        pend_keys = sorted((k for k in pending_by_key if after is None or _parts(k) > _parts(after)), key=_parts)
        cap = self.limits.answer_chars - 1_200  # room for the envelope, the folders' own keys and the total
        entries: list[dict[str, Any]] = []
        used = 0
        more = False
        for key, kinds in _merge(keys, pend_keys):
            entry = self._list_entry(key, kinds, pending_by_key.get(key, []), kind, status)
            if entry is None:
                continue
            size = _wire_len(entry) + 1
            if len(entries) >= limit or (entries and used + size > cap):
                more = True
                # End the page before the folder it would cut, when that folder started mid-page.
                parent = _parent(key)
                first = next((i for i, e in enumerate(entries) if _parent(e["path"]) == parent), None)
                if first is not None and first > 0 and all(_parent(e["path"]) == parent for e in entries[first:]):
                    entries = entries[:first]
                break
            entries.append(entry)
            used += size
        tree: dict[str, list[dict[str, Any]]] = {}
        for e in entries:
            tree.setdefault(_parent(e["path"]), []).append(e)
        last = entries[-1]["path"] if entries else None
        return {
            "directory": rp.key,
            "folders": [{"path": f, "entries": es} for f, es in tree.items()],
            "count": len(entries),
            **self._total(rp.key, kind, status, pending_by_key),
            "next_cursor": _encode_cursor(last) if more and last else None,
        }

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


_PENDING_SHOWN = 5
_REFRESHED_SHOWN = 50
_DELETED_SHOWN = 50


def _parent(key: str) -> str:
    return key.rsplit("/", 1)[0] if "/" in key else "."


def _wire_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _json_len(value: Any) -> int:
    """Characters of ``value`` as JSON with the spaces clients print (the larger measure)."""
    return len(json.dumps(value, ensure_ascii=False))


def _outline_items(symbols: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """Top-level symbols as page items; one too big for a page comes as windows of its children,
    each a copy of the symbol with ``children_window: [first, end, total]``."""
    items: list[dict[str, Any]] = []
    for sym in symbols:
        if _json_len(sym) <= room or not sym.get("children"):
            items.append(sym)
            continue
        children = sym["children"]
        head = {k: v for k, v in sym.items() if k != "children"}
        start = 0
        while start < len(children):
            end = start + 1
            used = _json_len(head) + 60 + _json_len(children[start])
            while end < len(children) and used + _json_len(children[end]) + 1 <= room:
                used += _json_len(children[end]) + 1
                end += 1
            items.append({**head, "children": children[start:end], "children_window": [start, end, len(children)]})
            start = end
    return items


def page_outline(
    out: dict[str, Any], content: dict[str, Any], offset: int, limit: int | None, cap: int
) -> dict[str, Any]:
    """An outline whole, or in pages of whole top-level symbols: ``content`` is always an outline
    object; ``offset``/``next_offset`` count symbols (page items), ``total`` says how many."""
    symbols = content["symbols"]
    whole = {**out, "content": content, "offset": 0, "total_chars": None, "next_offset": None, "paged": False}
    if offset == 0 and limit is None and _json_len(whole) <= cap:
        return whole
    meta = {k: v for k, v in content.items() if k != "symbols"}
    items = _outline_items(symbols, max(1_000, cap - _json_len(meta) - 2_000))
    if offset > len(items):
        raise InvalidArgument(
            f"offset {offset} is past the last symbol of the outline ({len(items)} page items)",
            details={"field": "offset", "rule": "within the outline's symbols", "total": len(items)},
        )
    if offset > 0:
        meta["imports"] = []  # the first page carries them
        meta["imports_on_page"] = 0
    page: dict[str, Any] = {
        **out,
        "content": {**meta, "symbols": []},
        "offset": offset,
        "total_chars": None,
        "next_offset": None,
        "paged": True,
        "total_symbols": len(items),
        "content_is": "an outline whose symbols are those from offset to next_offset; call again with offset=next_offset",
    }
    used = _json_len(page)
    end = offset
    while end < len(items) and (limit is None or end - offset < max(1, limit)):
        size = _json_len(items[end]) + 1
        if end > offset and used + size > cap:
            break
        used += size
        end += 1
    page["content"]["symbols"] = items[offset:end]
    page["next_offset"] = end if end < len(items) else None
    return page


def page_content(out: dict[str, Any], content: Any, offset: int, limit: int | None, cap: int) -> dict[str, Any]:
    """``out`` with ``content`` in one shape, whole or paged: ``content``, ``offset``, ``total_chars``,
    ``next_offset`` (null on the last page) and ``paged``.

    Content that must be paged is cut as text: a JSON content (an outline, notes) then comes as
    slices of its JSON text, to be joined before parsing (``content_is`` says so).
    """
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    total = len(text)
    if offset == 0 and (limit is None or total <= limit):
        whole = {**out, "content": content, "offset": 0, "total_chars": total, "next_offset": None, "paged": False}
        if total <= cap and _wire_len(whole) <= cap:
            return whole
    if offset > total:
        raise InvalidArgument(
            f"offset {offset} is past the end of the content ({total} characters)",
            details={"field": "offset", "rule": "within content", "total_chars": total},
        )
    paged = {
        **out,
        "content": "",
        "offset": offset,
        "total_chars": total,
        "next_offset": total,
        "paged": True,
        **({} if isinstance(content, str) else {"content_is": "a slice of the content's JSON text; join all pages"}),
    }
    overhead = _wire_len(paged)  # the answer around an empty page
    # Every character takes at least one on the wire: no page longer than the room left fits.
    page = min(limit or total, total - offset, max(1, cap - overhead + 2)) or 1
    while True:
        chunk = text[offset : offset + page]
        # Escaping (quotes, newlines) makes a page longer on the wire than in the text: every
        # character dropped shrinks the answer by at least one, so this ends within a few rounds.
        size = overhead + _wire_len(chunk) - 2
        if size <= cap or page == 1:
            end = offset + len(chunk)
            return {**paged, "content": chunk, "next_offset": end if end < total else None}
        page = max(1, len(chunk) - (size - cap))


def _hashes_of(symbols: list[dict[str, Any]]) -> dict[str, str]:
    """``symbol_hashes`` of an outline's content (dicts), as :func:`llmem.code.outline.symbol_hashes`."""
    from llmem.code.outline import hashes_of_symbol_dicts

    return hashes_of_symbol_dicts(symbols)


def _why_stale(status: str, about: dict[str, Any], symbol: str | None) -> str | None:
    """Why one note of an artifact reads stale (a symbol's note: only its own symbol's change, or
    a name it holds that changed; the file's note or a summary: any), or None while it is current."""
    if status == "fresh":
        return None
    if status == "orphaned":
        return "its file is gone"
    own = sorted(  # the gone first: what a search for an old name is about
        (s for s in about.get("stale_symbols", []) if symbol is None or s["symbol"] == symbol),
        key=lambda s: s["change"] != "gone",
    )
    named = [d for d in about.get("stale_dependencies", []) if symbol is None or symbol in d.get("named_in", [symbol])]
    if own:
        more = f" and {len(own) - 5} more" if len(own) > 5 else ""
        return "; ".join(f"{s['symbol']} {s['change']}" for s in own[:5]) + more + " since the note was written"
    if named:
        return "names code that changed since: " + ", ".join(f"{d['name']} ({d['change']})" for d in named[:5])
    if symbol is None and about.get("changed_files"):
        return "files of the folder changed since it was written"
    return None if symbol is not None else "its code changed since it was written"


def _compare_symbols(
    record: ArtifactRecord, hashes: dict[str, Any], current: dict[str, str]
) -> tuple[str, dict[str, Any]]:
    """Fresh while the symbols a note was written from are unchanged; else which changed or went."""
    if record.kind == "annotate":
        content = record.doc.get("content")
        described = content.get("symbols", {}) if isinstance(content, dict) else {}
        watched = [k for k in hashes if k in described] or list(hashes)
    else:
        watched = list(hashes)
    stale = [
        {"symbol": k, "change": "gone" if k not in current else "changed"}
        for k in sorted(watched)
        if current.get(k) != hashes[k]
    ]
    added = sorted(set(current) - set(hashes)) if record.kind != "annotate" else []
    if not stale and not added:
        return "fresh", {}
    about: dict[str, Any] = {"stale_symbols": stale[:200]}
    if added:
        about["new_symbols"] = added[:200]
    return "stale", about


def _overlaps(a: str, b: str) -> bool:
    """Whether one of two workspace folders holds the other (``.`` holds everything)."""
    return a == b or "." in (a, b) or a.startswith(b + "/") or b.startswith(a + "/")


#: The uses still naming a symbol renamed where it is defined only that an answer lists.
OLD_USES_SHOWN = 5


def _rename_unfinished(workspace: Path, renamed: dict[str, Any], store: Any) -> list[dict[str, object]]:
    """The renames that moved notes (``renamed``: old → new) whose old name is still used
    anywhere in the workspace (``rename_unfinished``)."""
    if not renamed:
        return []
    from llmem.code.references import finder_for
    from llmem.code.rename_uses import unfinished_renames
    from llmem.code.symbol_history import SymbolHistory

    olds = {str(k): str(v) for k, v in renamed.items()}
    return unfinished_renames(finder_for(workspace), olds, SymbolHistory(store))


def _mark_unfinished_renames(workspace: Path, about: dict[str, Any]) -> None:
    """Each code a note names that was renamed where it is defined only, its uses left as they
    were, says so (``rename_unfinished``): the new name is not yet what the code calls."""
    renamed = [d for d in about.get("stale_dependencies", []) if d.get("renamed_to")]
    if not renamed:
        return
    from llmem.code.references import finder_for
    from llmem.code.rename_uses import old_name_uses

    finder = finder_for(workspace)
    for d in renamed:
        left = old_name_uses(finder, str(d["symbol"]))
        if left:
            d["rename_unfinished"] = {
                "uses": len(left),
                "at": [f"{u.path}:{u.line}" for u in left[:OLD_USES_SHOWN]],
                "means": "these uses still name the old symbol and no longer resolve",
            }


#: The symbols without a note a stale annotate answer names; the rest are counted.
UNDESCRIBED_SHOWN = 10


def _undescribed(key: str, current: dict[str, str], notes: dict[str, Any], written: Any) -> dict[str, Any]:
    """The file's symbols without a note: those new since the notes were written first, then in
    source order (as they were then); the first few named, all counted, and where the rest are."""
    written = written if isinstance(written, dict) else {}
    missing = [k for k in current if k not in notes]
    ordered = [k for k in missing if k not in written] + [k for k in written if k in current and k not in notes]
    out: dict[str, Any] = {"undescribed": ordered[:UNDESCRIBED_SHOWN], "undescribed_total": len(ordered)}
    if len(ordered) > UNDESCRIBED_SHOWN:
        out["undescribed_rest"] = (
            f"{len(ordered) - UNDESCRIBED_SHOWN} more: get_artifact({key!r}) lists every symbol of the file; "
            f"generate_prompt({key!r}, 'annotate', part=k) asks for them part by part"
        )
    return out


def _renamed_to(about: dict[str, Any]) -> dict[str, str]:
    """The gone symbols of ``about`` the store knows were renamed: old → new."""
    return {
        str(e["symbol"]): str(e["renamed_to"])
        for e in [*about.get("stale_symbols", []), *about.get("stale_dependencies", [])]
        if e.get("renamed_to")
    }


def _gone_names_mentioned(text: str, about: dict[str, Any]) -> list[str]:
    """The symbols (or, for a folder, files) gone since a summary was written that it still
    names: what a reader must not look for."""
    gone = [s["symbol"] for s in about.get("stale_symbols", []) if s.get("change") == "gone"]
    gone += list(about.get("changed_files", {}).get("removed", []))
    gone += [d["symbol"] for d in about.get("stale_dependencies", []) if d.get("change") == "gone"]
    gone = list(dict.fromkeys(gone))
    # A symbol by its own name (``method`` of ``Class.method``), a file by its file name.
    own = {n: n.rsplit("/", 1)[-1] if "/" in n else n.rsplit(".", 1)[-1] for n in gone}
    return [n for n in gone if re.search(rf"(?<![\w$]){re.escape(own[n])}(?![\w$])", text)][:100]


def _outline_of_symbol(key: str, content: Any, wanted: str) -> dict[str, Any]:
    """An outline's content cut to one symbol (found as ``kind='source'`` finds it) and its
    children; the file's imports are left out (counted in ``imports_left_out``)."""
    from llmem.code.outline import Outline, iter_symbols

    if not isinstance(content, dict) or not isinstance(content.get("symbols"), list):
        raise ArtifactNotFound(f"{key!r} has no outline of symbols", details={"path": key, "symbol": wanted})
    outline = Outline.model_validate(content)
    found = _find_symbol(key, list(iter_symbols(outline)), wanted)
    return {
        **{k: v for k, v in content.items() if k not in ("symbols", "imports")},
        "imports_left_out": len(outline.imports),
        "symbol": found.qualified_name,
        "symbols": [found.model_dump(mode="json")],
    }


def _find_symbol(key: str, symbols: list[Any], wanted: str) -> Any:
    """The symbol named ``wanted``: its qualified name, or a plain name that only one symbol has."""
    from llmem.code.outline import DATA_KINDS

    exact = [s for s in symbols if s.qualified_name == wanted]
    if not exact:
        exact = [s for s in symbols if s.name == wanted]
        code = [s for s in exact if s.kind not in DATA_KINDS]
        if code and len(code) < len(exact) and all(s.qualified_name == code[0].qualified_name for s in code):
            exact = code  # a plain name keeps naming the one class/function it named before fields were outlined
    if len(exact) == 1 or (exact and all(s.qualified_name == exact[0].qualified_name for s in exact)):
        if len(exact) > 1:  # overloads: one name, several declarations: answer them all as one range
            first = min(exact, key=lambda s: s.start_line)
            last = max(exact, key=lambda s: s.end_line)
            return first.model_copy(update={"end_line": last.end_line})
        return exact[0]
    if exact:
        raise InvalidArgument(
            f"{wanted!r} names {len(exact)} symbols of {key!r}; pass the qualified name",
            details={
                "field": "symbol",
                "rule": "one symbol",
                "candidates": [
                    {"symbol": s.qualified_name, "start_line": s.start_line, "end_line": s.end_line} for s in exact[:20]
                ],
            },
        )
    import difflib

    names = sorted({s.qualified_name for s in symbols})
    close = difflib.get_close_matches(wanted, names, n=8, cutoff=0.5)
    close += [n for n in names if wanted.lower() in n.lower() and n not in close][:8]
    raise ArtifactNotFound(
        f"{key!r} has no symbol {wanted!r}" + (f"; did you mean {', '.join(close[:5])}?" if close else ""),
        details={"path": key, "symbol": wanted, "close_matches": close[:8], "symbols": len(names)},
        next_action=f"Pick a qualified name from get_artifact({key!r}) or search_artifacts({wanted!r}).",
    )


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


def _with_freshness(answer: dict[str, Any], refresh: Refresh) -> dict[str, Any]:
    """An answer resting on what parses saw (gone members, renames) says which outlines it brought
    up to date first, and which it could not in time."""
    if refresh.changed:
        answer["freshness"] = refresh.summary(".")
        if refresh.left:
            answer["freshness"]["stale_means"] = (
                "changed since outlined and not re-parsed in time: members gone from them are not known as "
                "gone, so uses of them on values of unknown type may be missing or not marked unresolved"
            )
    return answer
