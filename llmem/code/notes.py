"""Notes written by the host's model: prompts for the four tasks and the answers stored.

The generate_prompt → store_llm_result protocol of ``callback.py`` applied to llmem's tasks
(``tasks.py``): file prompts carry an outline and capped excerpts, folder summaries build on the
outlines and summaries of what the folder holds, and answers are validated before storing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmem.code import carry, note_deps, note_keys
from llmem.code import tasks as llm_tasks
from llmem.code.parsing import NAMESPACE, OUTLINE, PRODUCER
from llmem.core.callback import CallbackProtocol, PreparedPrompt, Validated
from llmem.core.config import Limits
from llmem.core.envelope import Envelope
from llmem.core.errors import InvalidArgument, ResultInvalid, UnsupportedTask
from llmem.core.paths import ResolvedPath
from llmem.core.store import ArtifactRecord, ArtifactStore, Fingerprint, fingerprint_file

if TYPE_CHECKING:
    from llmem.code.freshness import Refresher

#: README names a folder summary reads, first found wins.
_READMES = ("README.md", "README.rst", "README.txt", "README", "readme.md")


def _readme(folder: Path) -> tuple[str, str] | None:
    """The folder's README: its name and (at most 16,000 characters of) its text."""
    for name in _READMES:
        file = folder / name
        if file.is_file():
            try:
                with file.open("rb") as handle:
                    return name, handle.read(16_000).decode("utf-8", "replace")
            except OSError:
                return None
    return None


__all__ = ["Notes"]

#: The store document of notes whose symbol went with no new home found yet, and how many it keeps.
_GONE_NOTES = "gone-notes"
_GONE_NOTES_KEPT = 500
#: At most this many files (renamed) and moves a parse answer lists; notes_carried counts them all.
_CARRIED_SHOWN = 100

#: Symbol kinds that hold data rather than code: after functions and classes in a folder prompt.
_DATA_KINDS = frozenset({"constant", "variable", "field", "attribute", "property", "member", "enum-member"})

#: Decorator calls that configure a function rather than register it somewhere.
_PLAIN_DECORATORS = ("functools.", "lru_cache", "cache", "dataclass", "pytest.", "overload", "wraps")

#: Names that mark an entry point, whatever their decorators.
_ENTRY_NAMES = frozenset({"main", "serve", "run", "app", "cli", "handler", "handle", "start"})


class Notes:
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
        #: Makes what re-parses outlines behind their files (the service that owns these notes).
        self.refresher: Callable[[], Refresher] | None = None

    def folder_fingerprint(self, folder: Path) -> Fingerprint:
        from llmem.code.walk import walk_workspace

        walked = walk_workspace(self.ws, folder, max_file_bytes=self.limits.max_file_bytes)
        digest = hashlib.sha256()
        newest = 0
        for f in walked.files:
            digest.update(f"{f.rel_path}\0{f.size}\0{f.mtime_ns}\n".encode())
            newest = max(newest, f.mtime_ns)
        return Fingerprint(len(walked.files), newest, digest.hexdigest())

    def file_states(self, folder: Path) -> dict[str, dict[str, Any]]:
        """``{path: {sha256, size, mtime_ns}}`` of the files a folder summary is written from."""
        from llmem.code.walk import walk_workspace
        from llmem.core.store import sha256_file

        walked = walk_workspace(self.ws, folder, max_file_bytes=self.limits.max_file_bytes)
        out: dict[str, dict[str, Any]] = {}
        for f in walked.files:
            try:
                out[f.rel_path] = {"sha256": sha256_file(f.abs_path), "size": f.size, "mtime_ns": f.mtime_ns}
            except OSError:
                continue
        return out

    def changed_files(self, folder: Path, files: dict[str, Any]) -> dict[str, list[str]]:
        """Which of a folder summary's files changed, were added or removed since it was written
        (size and mtime first, sha256 only for files whose stat moved)."""
        from llmem.code.walk import walk_workspace
        from llmem.core.store import sha256_file

        walked = walk_workspace(self.ws, folder, max_file_bytes=self.limits.max_file_bytes)
        now = {f.rel_path: f for f in walked.files}
        changed: list[str] = []
        for path, entry in now.items():
            was = files.get(path)
            if not isinstance(was, dict):
                continue
            if (was.get("size"), was.get("mtime_ns")) == (entry.size, entry.mtime_ns):
                continue
            try:
                if sha256_file(entry.abs_path) != was.get("sha256"):
                    changed.append(path)
            except OSError:
                changed.append(path)
        return {
            "changed": sorted(changed),
            "added": sorted(p for p in now if p not in files),
            "removed": sorted(p for p in files if p not in now),
        }

    @staticmethod
    def check_task(task: str) -> None:
        if task not in llm_tasks.TASKS:
            raise UnsupportedTask(
                f"task {task!r} is not one of {', '.join(llm_tasks.TASKS)} (use generate_artifact for 'parse')",
                details={"field": "task", "allowed": list(llm_tasks.TASKS)},
            )

    def prompt(
        self, rp: ResolvedPath, task: str, part: int | None = None, symbols: list[str] | None = None
    ) -> Envelope:
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
        from llmem.code.check_answer import broken_around
        from llmem.code.outline import DATA_KINDS, build_outline, iter_symbols, symbol_hashes

        data = rp.abs.read_bytes()
        fp = fingerprint_file(rp.abs, data)
        outline = build_outline(rp.key, data)
        hashes = symbol_hashes(outline)
        text = data.decode("utf-8", "replace")
        # What no longer resolves in the file (a half-done rename): check_references' hook.
        from llmem.code.symbol_history import SymbolHistory

        broken, broken_count = broken_around(self.ws, rp.key, SymbolHistory(self.store))
        broken += self._renames_unfinished(rp.key, SymbolHistory(self.store))
        if task == "annotate":
            if not any(True for _ in iter_symbols(outline)):
                raise UnsupportedTask(
                    f"{rp.key!r} has no symbols to annotate ({outline.reason or 'no classes or functions'}); "
                    "use task 'summarize' or 'document'",
                    details={"path": rp.key, "mode": outline.mode},
                )
            parts = llm_tasks.annotate_parts(outline, text)
            stored = self.store.get_or_none(NAMESPACE, rp.key, "annotate")
            changes = self.dependency_changes(stored)
            fresh: list[str] = []
            file_note_asked = False
            refresh = [] if symbols or part is not None else self._to_refresh(stored, outline, hashes, changes)
            refresh_left = 0
            symbols_left: list[str] = []
            if symbols:  # these symbols (and their members), in the given order, as many as one part holds
                asked, names, symbols_left = llm_tasks.chosen_units(outline, text, symbols)
                k, count = 1, 1
            elif refresh:  # the stale and new symbols only, as many as one prompt holds
                asked, names, refresh_left = _refresh_units(outline, text, refresh)
                k, count = 1, 1
            if symbols or refresh:
                file_note_asked = bool(refresh) and any(note_deps.FILE_NOTE in c["notes"] for c in changes)
                fresh = sorted(self._described_now(rp.key, hashes, changes) - set(names)) if refresh else []
            else:
                k, count = part if part is not None else self._first_part_to_do(rp.key, parts, hashes), len(parts)
                asked, names, fresh, file_note_asked = self._part_asked(rp.key, parts, k, hashes, changes)
            before = _notes_of(stored)
            again = {n: before[n] for n in names if n in before}
            resigned = self._signatures_changed(rp.key, stored, outline, names)
            if file_note_asked and note_deps.FILE_NOTE in before:
                again[note_deps.FILE_NOTE] = before[note_deps.FILE_NOTE]
            prompt, answer_format = llm_tasks.annotate_prompt(
                rp.key,
                outline,
                asked,
                k,
                count,
                names=names,
                described=fresh,
                changed_code=note_deps.signatures_section(resigned)
                + note_deps.changed_code(changes, str(self.ws), renamed=self._renamed_to, old_uses=self._old_uses),
                file_note_asked=file_note_asked,
                around=broken,
                previous=llm_tasks.previous_notes(again),
            )
            stale_again = sum(1 for n in names if n in before)
            asked_set = set(names)
            envelope = self.callback.issue(
                PreparedPrompt(
                    task,
                    rp.key,
                    task,
                    prompt,
                    "json",
                    fp,
                    {
                        "symbols": names,
                        "symbol_hashes": hashes,
                        "part": k,
                        "parts": count,
                        **({"symbols_left": symbols_left} if symbols_left else {}),
                        "symbol_signatures": note_deps.callable_signatures(outline),
                    },
                    {
                        "part": k,
                        "parts": count,
                        **({"only_symbols": names[:50], "file_parts": len(parts)} if symbols or refresh else {}),
                        **(self._never_described(rp.key, parts, stored, names) if refresh else {}),
                        # asked by the same call again once this answer is stored (still stale or new then)
                        **({"refresh_left": refresh_left} if refresh_left else {}),
                        **(_symbols_left(rp.key, symbols_left) if symbols else {}),
                        "symbols": len(names),
                        "asked": len(names),
                        "symbols_in_file": len(hashes),
                        # fields, attributes, enum members, variables: shown with their class, not asked
                        "data_members_for_context": sum(
                            1
                            for s in iter_symbols(outline)
                            if s.kind in DATA_KINDS and s.qualified_name not in asked_set
                        ),
                        "already_described": len(fresh),  # fresh notes, kept
                        # asked again: notes gone stale (their old text in the prompt), and never written
                        "described_but_stale": stale_again,
                        "not_yet_described": len(names) - stale_again,
                        **({"named_code_changed": len(changes)} if changes else {}),
                        **({"signatures_changed": resigned} if resigned else {}),
                        "language": outline.language,
                        **({"broken_uses": broken_count} if broken_count else {}),
                    },
                    part=k if count > 1 else None,
                    tail=answer_format,
                )
            )
            if symbols_left:
                envelope.nextAction = (
                    f"{envelope.nextAction} Then {len(symbols_left)} symbol(s) asked are left for the next prompt "
                    f"(symbols_left): {asking_for(rp.key, symbols_left)}."
                )
            return envelope
        changed = note_deps.changed_code(
            self.dependency_changes(self.store.get_or_none(NAMESPACE, rp.key, task)),
            str(self.ws),
            renamed=self._renamed_to,
            old_uses=self._old_uses,
        )
        prompt, rules = llm_tasks.file_prompt(task, rp.key, outline, text, around=broken, changed_code=changed)
        summary = {"language": outline.language, **({"broken_uses": broken_count} if broken_count else {})}
        return self.callback.issue(
            PreparedPrompt(task, rp.key, task, prompt, "markdown", fp, {"symbol_hashes": hashes}, summary, tail=rules)
        )

    def _part_asked(
        self,
        key: str,
        parts: list[list[llm_tasks.SourceUnit]],
        k: int,
        hashes: dict[str, str],
        changes: list[dict[str, Any]],
    ) -> tuple[list[llm_tasks.SourceUnit], list[str], list[str], bool]:
        """What part ``k`` asks for: its units, the names asked, the names kept (described from the
        code as it is) and whether the file's note is asked again.

        A refresh asks only the part's symbols whose note is missing or stale (changed code, new
        symbols, code elsewhere it names changed); the notes still fresh are kept and only named.
        A part all fresh is asked whole, unless only the file's note is to be redone."""
        if not 1 <= k <= len(parts):
            raise InvalidArgument(
                f"part {k} does not exist: {key!r} is annotated in {len(parts)} part(s)",
                details={"field": "part", "rule": f"1..{len(parts)}", "parts": len(parts)},
            )
        units = parts[k - 1]
        done = self._described_now(key, hashes, changes)
        file_note_asked = any(note_deps.FILE_NOTE in c["notes"] for c in changes)
        asked = [u for u in units if any(n not in done for n in u.names)]
        # dict.fromkeys: overloads (@overload, TS signatures) share one qualified name and one note
        names = list(dict.fromkeys(n for u in asked for n in u.names if n not in done))
        if not asked and not file_note_asked:
            asked, names = units, list(dict.fromkeys(n for u in units for n in u.names))
        return asked, names, sorted(done - set(names)), file_note_asked

    @staticmethod
    def _to_refresh(
        record: ArtifactRecord | None, outline: Any, hashes: dict[str, str], changes: list[dict[str, Any]]
    ) -> list[str]:
        """What a refresh of a file whose notes went stale asks for, each in source order: the
        notes whose code changed or whose named code changed or went, then the symbols new since
        they were written; [] when no note of it is stale."""
        from llmem.code.outline import DATA_KINDS, iter_symbols

        notes = _notes_of(record)
        written = record.doc.get("symbol_hashes") if record is not None else None
        if not notes or not isinstance(written, dict):
            return []
        named_changed = {n for c in changes for n in c["notes"]}
        stale = {k for k in notes if k in hashes and (written.get(k) != hashes[k] or k in named_changed)}
        if not stale:
            return []
        code = [s.qualified_name for s in iter_symbols(outline) if s.kind not in DATA_KINDS]
        return [q for q in code if q in stale] + [q for q in code if q not in written and q not in stale]

    @staticmethod
    def _never_described(
        key: str, parts: list[list[llm_tasks.SourceUnit]], record: ArtifactRecord | None, asked: list[str]
    ) -> dict[str, Any]:
        """How many symbols of the file a refresh leaves out as never described, and the call
        that asks for them."""
        notes = _notes_of(record)
        left = {n for units in parts for u in units for n in u.names if n not in notes and n not in asked}
        if not left:
            return {"never_described": 0}
        first = next(k for k, units in enumerate(parts, 1) if any(n in left for u in units for n in u.names))
        return {
            "never_described": len(left),
            "never_described_with": f"generate_prompt(path={key!r}, task='annotate', part={first})",
        }

    def _first_part_to_do(self, key: str, parts: list[list[llm_tasks.SourceUnit]], hashes: dict[str, str]) -> int:
        """The first part with a symbol not yet described (as the code is now), else part 1."""
        done = self._described_now(key, hashes)
        for k, units in enumerate(parts, 1):
            if any(n not in done for u in units for n in u.names):
                return k
        return 1

    def _described_now(self, key: str, hashes: dict[str, str], changes: list[dict[str, Any]] | None = None) -> set[str]:
        """Symbols whose stored note was written from the code as it is now: their own code, and
        the code elsewhere they name (``changes``: :meth:`dependency_changes`, found when not given)."""
        record = self.store.get_or_none(NAMESPACE, key, "annotate")
        if record is None or not isinstance(record.doc.get("content"), dict):
            return set()
        stored = record.doc.get("symbol_hashes")
        notes = record.doc["content"].get("symbols", {})
        if not isinstance(stored, dict):
            return set()
        if changes is None:
            changes = self.dependency_changes(record)
        named_changed = {n for c in changes for n in c["notes"]}
        return {k for k in notes if k in hashes and stored.get(k) == hashes[k] and k not in named_changed}

    def _signatures_changed(
        self, key: str, record: ArtifactRecord | None, outline: Any, names: list[str]
    ) -> list[dict[str, Any]]:
        """The symbols asked whose signature changed since their note was written: was and now,
        with their callers (:func:`note_deps.callers_of`)."""
        was = record.doc.get("symbol_signatures") if record is not None else None
        if not isinstance(was, dict):
            return []
        from llmem.code.references import finder_for

        now = note_deps.callable_signatures(outline)
        changed = [n for n in names if n in was and n in now and was[n] != now[n]][:20]
        return [
            {"symbol": n, "signature_was": was[n], "signature_now": now[n],
             **note_deps.callers_of(finder_for(self.ws), key, n)}
            for n in changed
        ]  # fmt: skip

    # -- what notes name elsewhere (note_deps.py) ------------------------------------------

    def _renamed_to(self, symbol: str, path: str) -> str | None:
        """What the store knows ``symbol`` of ``path`` (gone) was renamed to."""
        from llmem.code.symbol_history import SymbolHistory

        return SymbolHistory(self.store).renamed_to(symbol, path)

    def _renames_unfinished(self, key: str, history: Any) -> str:
        """A prompt's section on the renames that moved notes of ``key`` whose old name is still used."""
        from llmem.code.references import finder_for
        from llmem.code.rename_uses import unfinished_renames, unfinished_section

        record = self.store.get_or_none(NAMESPACE, key, "annotate")
        renamed = record.doc.get("renamed") if record is not None else None
        if not isinstance(renamed, dict) or not renamed:
            return ""
        olds = {str(k): str(v) for k, v in renamed.items()}
        return unfinished_section(unfinished_renames(finder_for(self.ws), olds, history))

    def _old_uses(self, symbol: str) -> list[Any]:
        """The uses of the workspace that still name ``symbol``, gone (a rename not finished)."""
        from llmem.code.references import finder_for
        from llmem.code.rename_uses import old_name_uses

        return old_name_uses(finder_for(self.ws), symbol)

    def dependency_changes(self, record: ArtifactRecord | None) -> list[dict[str, Any]]:
        """The symbols a stored note names elsewhere whose code changed or went since it was written."""
        deps = record.doc.get("depends_on") if record is not None else None
        if not deps:
            return []
        from llmem.code.references import finder_for

        finder = finder_for(self.ws)
        return note_deps.check(
            deps, str(self.ws), finder.symbol_hashes, lambda paths: note_deps.signatures(finder, paths)
        )

    def _depends_on(
        self, texts: dict[str, str], key: str, *, folder: bool = False, own_symbols: bool = False
    ) -> tuple[list[Any], list[Any]]:
        """The dependencies of the notes ``texts`` of ``key`` as the code is now, and the names
        left out as ambiguous (:func:`note_deps.resolve`)."""
        if not any(texts.values()):
            return [], []
        from llmem.code.references import finder_for

        return note_deps.resolve(finder_for(self.ws), texts, key, folder=folder, own_symbols=own_symbols)

    def _folder_prompt(self, rp: ResolvedPath) -> PreparedPrompt:
        from llmem.code.search import search_index_for
        from llmem.code.walk import walk_workspace

        # Built on the outlines of what the folder holds: those behind their files first re-parsed.
        refresh = search_index_for(self.store, self.limits.max_file_bytes).freshness.bring_up_to_date(
            rp.key, by="generate_prompt", budget_s=self.limits.refresh_budget_ms / 1000, refresher=self.refresher
        )
        walked = walk_workspace(self.ws, rp.abs, max_file_bytes=self.limits.max_file_bytes)
        entries: list[llm_tasks.FolderEntry] = []
        subfolders: dict[str, int] = {}
        prefix = "" if rp.key == "." else rp.key + "/"
        for f in walked.files:
            rest = f.rel_path[len(prefix) :]
            if "/" in rest:
                sub = prefix + rest.split("/", 1)[0]
                subfolders[sub] = subfolders.get(sub, 0) + 1
                continue
            entries.append(self._known_of(f.rel_path))
        entries.extend(self._known_of_folder(sub, files) for sub, files in sorted(subfolders.items()))
        fp = self.folder_fingerprint(rp.abs)
        limit = self.callback.prompt_chars - 1_000
        readme = _readme(rp.abs)
        stale = sorted(refresh.left)
        warning = (
            f"\n(The outlines of {len(stale)} file(s) here changed since they were parsed and could not be "
            f"re-parsed in time; what is shown of them may be out of date: {', '.join(stale[:20])}"
            + (" …" if len(stale) > 20 else "")
            + ")\n"
            if stale
            else ""
        )
        prompt = llm_tasks.folder_summary_prompt(
            rp.key,
            entries,
            readme[1] if readme else None,
            limit - len(warning),
            readme_path=(prefix + readme[0]) if readme else None,
        )
        prompt += note_deps.changed_code(
            self.dependency_changes(self.store.get_or_none(NAMESPACE, rp.key, "summarize")), str(self.ws)
        )
        prompt += warning
        return PreparedPrompt(
            "summarize",
            rp.key,
            "summarize",
            prompt,
            "markdown",
            Fingerprint(fp.size, fp.mtime_ns, fp.sha256),
            {"folder": True, "files": self.file_states(rp.abs)},
            {"files": len(walked.files), "subfolders": len(subfolders), "freshness": refresh.summary(rp.key)},
        )

    def _known_of_folder(self, key: str, files: int) -> llm_tasks.FolderEntry:
        """A subfolder: its summary; else the summaries of the nearest folders below it that have
        one (``src/`` of ``src/pkg/``, say); else how many files it holds."""
        entry = llm_tasks.FolderEntry(key, folder=True, read_with=f"get_artifact(path={key!r}, kind='summarize')")
        summary = self._summary_of(key)
        if summary is not None:
            entry.summary = summary
            return entry
        # No summary of its own: what is known below it — the nearest summarised folders, then
        # the summaries and notes of files not under one, ranked as one list (summaries first,
        # then notes by importance: entry points, public, code, outer, most referenced).
        below: list[str] = []
        ranked: list[tuple[tuple[Any, ...], str, str]] = []
        files_known = 0
        for k, kinds in self.store.iter_keys(NAMESPACE, key):
            if k == key or any(k.startswith(b + "/") for b in below):
                continue
            if "summarize" in kinds and (self.ws / k).is_dir():
                if (text := self._summary_of(k)) is not None:
                    below.append(k)
                    ranked.append(((0, len(below)), k, text))
                continue
            if (self.ws / k).is_dir() or not ({"summarize", "annotate"} & set(kinds)):
                continue
            files_known += 1
            file_entry = self._known_of(k)
            if file_entry.summary is not None:
                ranked.append(((1, files_known), k, file_entry.summary))
                continue
            ranks = file_entry.ranks or {}
            for name, text in file_entry.items:
                if not name:  # the file's own note
                    ranked.append(((1, files_known), k, text))
                else:
                    ranked.append(((2, *ranks.get(name, (1, True, 1, 9, 0, 0, 0)), files_known), f"{k}: {name}", text))
        if ranked:
            ranked.sort(key=lambda r: r[0])
            entry.items = [(name, text) for _, name, text in ranked]
            entry.items_are = "summaries and notes from below it"
            parts = []
            if below:
                parts.append(f"{len(below)} folder(s) below it have a summary")
            if files_known:
                parts.append(f"{files_known} file(s) below it have notes or a summary")
            entry.head = "no summary of its own; " + ", ".join(parts)
            entry.read_with = (
                "get_artifact(path='<file>', kind='annotate') for a file's notes, "
                "get_artifact(path='<path>', kind='summarize') for a summary"
            )
            return entry
        entry.note = f"{files} file(s); no summary yet (generate_prompt({key!r}, 'summarize') writes one)"
        return entry

    def _summary_of(self, key: str) -> str | None:
        record = self.store.get_or_none(NAMESPACE, key, "summarize")
        content = record.doc.get("content") if record is not None else None
        return content if isinstance(content, str) and content.strip() else None

    def _known_of(self, key: str) -> llm_tasks.FolderEntry:
        """What the store knows of one file: its summary, else its notes, else its doc comments,
        notes and doc lines most important first (:meth:`_by_importance`)."""
        entry = llm_tasks.FolderEntry(key)
        summary = self._summary_of(key)
        if summary is not None:
            entry.summary = summary
            entry.read_with = f"get_artifact(path={key!r}, kind='summarize')"
            return entry
        outline_rec = self.store.get_or_none(NAMESPACE, key, OUTLINE)
        outline = outline_rec.doc.get("content") if outline_rec is not None else None
        symbols = outline.get("symbols", []) if isinstance(outline, dict) else []
        notes = self.store.get_or_none(NAMESPACE, key, "annotate")
        content = notes.doc.get("content") if notes is not None else None
        if isinstance(content, dict) and (content.get("symbols") or content.get("file")):
            described = {
                str(name): str(note.get("description", ""))
                for name, note in (content.get("symbols") or {}).items()
                if isinstance(note, dict)
            }
            rank = self._importance(key, symbols)
            entry.ranks = {n: rank(n) for n in described}
            items = [(n, described[n]) for n in sorted(described, key=rank)]
            if isinstance(content.get("file"), dict):
                items.insert(0, ("", str(content["file"].get("description", ""))))
            entry.items = items
            entry.read_with = f"get_artifact(path={key!r}, kind='annotate')"
            return entry
        if outline is None:
            entry.note = "(not outlined yet: run generate_artifact on the folder first)"
            return entry
        docs = {
            str(s.get("qualified_name")): str(s["doc"]).splitlines()[0]
            for s in carry.symbol_dicts(symbols)
            if s.get("doc") and str(s["doc"]).strip()
        }
        if docs:
            entry.items = [(n, docs[n]) for n in self._by_importance(key, symbols, list(docs), references=False)]
            entry.items_are = "doc comments"
            entry.read_with = f"get_artifact(path={key!r}, kind='outline')"
            return entry
        names = [str(s.get("name")) for s in symbols]
        shown = ", ".join(names[:12])
        entry.head = (
            f"symbols {shown}" + (f" … ({len(names)} in all: get_artifact(path={key!r}))" if len(names) > 12 else "")
            if names
            else "no symbols"
        )
        return entry

    def _by_importance(self, key: str, symbols: list[Any], names: list[str], references: bool = True) -> list[str]:
        """``names`` most important first (:meth:`_importance`)."""
        return sorted(names, key=self._importance(key, symbols, references))

    def _importance(
        self, key: str, symbols: list[Any], references: bool = True
    ) -> Callable[[str], tuple[int, bool, int, int, int, int, int]]:
        """The sort key of a symbol's importance, most important first: entry points (``main``, ``serve``, registered handlers
        such as ``@server.call_tool()``), then public before private (a private class's methods
        too), code before constants and fields, outer before nested, the most referenced in the
        file (with ``references``: the file is read), the largest; source order last."""
        info: dict[str, tuple[int, bool, int, int, int, int]] = {}
        order = 0
        stack = [(s, 0) for s in reversed(symbols) if isinstance(s, dict)]
        while stack:
            sym, depth = stack.pop()
            qn = str(sym.get("qualified_name"))
            name = str(sym.get("name") or carry.leaf(qn))
            # A decorator call registers a handler (``@server.call_tool()``, ``@app.get("/")``).
            decorated = any("(" in d and not d.startswith(_PLAIN_DECORATORS) for d in sym.get("decorators") or [])
            entry = name in _ENTRY_NAMES or decorated or sym.get("kind") in ("registration", "entry-point")
            private = any(part.startswith("_") and not part.startswith("__") for part in qn.split("."))
            data = 1 if sym.get("kind") in _DATA_KINDS else 0
            size = int(sym.get("end_line") or 0) - int(sym.get("start_line") or 0)
            info.setdefault(qn, (0 if entry else 1, private, data, depth, size, order))
            order += 1
            children = sym.get("children")
            if isinstance(children, list):
                stack.extend((c, depth + 1) for c in reversed(children) if isinstance(c, dict))
        text = self._source_text(key) if references else ""
        words: dict[str, int] = {}
        if text:
            for w in re.findall(r"[A-Za-z_$][\w$]*", text):
                words[w] = words.get(w, 0) + 1

        def rank(n: str) -> tuple[int, bool, int, int, int, int, int]:
            entry, private, data, depth, size, pos = info.get(n, (1, n.startswith("_"), 1, 9, 0, 1 << 30))
            return (entry, private, data, depth, -words.get(carry.leaf(n), 0), -size, pos)

        return rank

    def _source_text(self, key: str) -> str:
        try:
            with (self.ws / key).open("rb") as handle:
                return handle.read(self.limits.max_file_bytes).decode("utf-8", "replace")
        except OSError:
            return ""

    def cancel(self, ticket: str | None, path: str | None, task: str | None) -> dict[str, Any]:
        """Cancel one pending ticket, or every pending ticket of a path (and task). None is no error."""
        if ticket is None and path is None:
            raise InvalidArgument(
                "give a ticket, or a path (and task) whose pending prompts to cancel",
                details={"field": "ticket", "rule": "ticket or path"},
            )
        cancelled = self.callback.cancel(ticket, path, task)
        return {"cancelled": len(cancelled), "tickets": cancelled}

    def probe(self, key: str) -> Fingerprint | None:
        target = self.ws if key == "." else self.ws / key
        try:
            if target.is_dir():
                return self.folder_fingerprint(target)
            return fingerprint_file(target)
        except OSError:
            return None

    def _point_at_next_part(self, rp: ResolvedPath, envelope: Envelope) -> None:
        from llmem.code.outline import build_outline, symbol_hashes

        try:
            data = rp.abs.read_bytes()
        except OSError:
            return
        outline = build_outline(rp.key, data)
        hashes = symbol_hashes(outline)
        parts = llm_tasks.annotate_parts(outline, data.decode("utf-8", "replace"))
        done = self._described_now(rp.key, hashes)
        todo = [k for k, units in enumerate(parts, 1) if any(n not in done for u in units for n in u.names)]
        if envelope.data is None:
            return
        envelope.data["parts_done"] = len(parts) - len(todo)
        envelope.data["next_part"] = todo[0] if todo else None
        if todo:
            envelope.nextAction = (
                f"Stored. Next: generate_prompt({rp.key!r}, 'annotate', part={todo[0]}) "
                f"({len(todo)} part(s) still to describe)."
            )

    def _merged_notes(
        self, key: str, notes: dict[str, dict[str, str]], file_note: dict[str, str] | None, context: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, str], list[str]]:
        """This answer's notes merged into the stored ones (called under the artifact's lock):
        notes of unchanged symbols are kept; a stale note the answer did not replace is kept with
        the hash it was written from (so it still reads as stale); notes of symbols gone from the
        file are dropped and named. Returns the content, its symbol hashes and the dropped names."""
        hashes = dict(context.get("symbol_hashes") or {})
        merged: dict[str, Any] = {"symbols": {}}
        written = dict(hashes)
        gone: list[str] = []
        record = self.store.get_or_none(NAMESPACE, key, "annotate")
        if record is not None and isinstance(record.doc.get("content"), dict):
            old = record.doc["content"]
            old_hashes = record.doc.get("symbol_hashes") or {}
            for name, note in (old.get("symbols") or {}).items():
                if name not in hashes:
                    gone.append(name)
                elif name not in notes:
                    merged["symbols"][name] = note
                    if old_hashes.get(name) != hashes[name]:
                        written[name] = str(old_hashes.get(name) or "unknown")
            if isinstance(old.get("file"), dict):
                merged["file"] = old["file"]
        merged["symbols"].update(notes)
        if file_note is not None:
            merged["file"] = file_note
        return merged, written, sorted(gone)

    # -- notes that follow their code ------------------------------------------------------

    def carry_notes(self, keys: list[str]) -> dict[str, Any]:
        """Move the notes of symbols renamed or moved with their code unchanged (``carry.py``)
        to the symbols' new names and files; ``keys`` are the files whose outlines were just made
        anew. The parse answer gains ``renamed: {path: {old: new}}`` and
        ``moved: {"old_path#old": "new_path#new"}``.

        A note whose symbol went and found no new home here is remembered (the store's
        ``gone-notes`` document) so that a later parse of the file the symbol moved to finds it."""
        batch = set(keys)
        gone: list[carry.Gone] = []
        noted: dict[str, set[str]] = {}
        for key in keys:
            if not self.store.artifact_file(NAMESPACE, key, "annotate").is_file():
                continue
            record = self.store.get_or_none(NAMESPACE, key, "annotate")
            content = record.doc.get("content") if record is not None else None
            stored = record.doc.get("symbol_hashes") if record is not None else None
            if not isinstance(content, dict) or not isinstance(stored, dict):
                continue
            current = self._outline_hashes(key)
            described = set(content.get("symbols") or {})
            noted[key] = described
            gone += [carry.Gone(key, n, str(stored[n])) for n in described if n not in current and n in stored]
        here = list(gone)
        waiting = self.store.read_doc(NAMESPACE, _GONE_NOTES, {})
        waiting = {k: v for k, v in waiting.items() if isinstance(v, dict)} if isinstance(waiting, dict) else {}
        gone += [
            carry.Gone(str(v["path"]), str(v["name"]), str(v["hash"]))
            for v in waiting.values()
            if v.get("path") not in batch and {"path", "name", "hash"} <= set(v)
        ]
        if not gone:
            if any(v.get("path") in batch for v in waiting.values()):
                self._remember_gone(batch, [], [])  # forget what these files no longer miss
            return {}
        new: list[carry.New] = []
        sources: dict[str, tuple[bytes, str | None]] = {}
        for key in keys:
            record = self.store.get_or_none(NAMESPACE, key, OUTLINE)
            outline = record.doc.get("content") if record is not None else None
            if not isinstance(outline, dict):
                continue
            counts: dict[str, int] = {}
            for sym in carry.symbol_dicts(outline.get("symbols", [])):
                counts[str(sym.get("qualified_name"))] = counts.get(str(sym.get("qualified_name")), 0) + 1
            for sym in carry.symbol_dicts(outline.get("symbols", [])):
                name, digest = str(sym.get("qualified_name")), sym.get("hash")
                # Overloads share one combined hash: they are never carried one by one.
                if name in noted.get(key, ()) or not isinstance(digest, str) or counts[name] > 1:
                    continue
                new.append(carry.New(key, name, digest, int(sym["start_line"]), int(sym["end_line"])))
            if any(g.path == key for g in here):
                try:
                    sources[key] = ((self.ws / key).read_bytes(), outline.get("language"))
                except OSError:
                    continue
        moves = carry.match(gone, new, sources)
        answer = self._apply_moves(moves) if moves else {}
        unmatched = [g for g in here if all(m.old != g for m in moves)]
        if unmatched or moves or any(v.get("path") in batch for v in waiting.values()):
            self._remember_gone(batch, unmatched, moves)
        return answer

    def _remember_gone(self, batch: set[str], unmatched: list[carry.Gone], moves: list[carry.Move]) -> None:
        done = {f"{m.old.path}#{m.old.name}" for m in moves}

        def update(current: Any) -> tuple[Any, None]:
            kept = {
                k: v
                for k, v in (current if isinstance(current, dict) else {}).items()
                if k not in done and isinstance(v, dict) and v.get("path") not in batch
            }
            kept.update({f"{g.path}#{g.name}": {"path": g.path, "name": g.name, "hash": g.hash} for g in unmatched})
            return dict(list(kept.items())[-_GONE_NOTES_KEPT:]), None

        self.store.update_doc(NAMESPACE, _GONE_NOTES, {}, update)

    def _outline_hashes(self, key: str) -> dict[str, str]:
        from llmem.code.outline import hashes_of_symbol_dicts

        record = self.store.get_or_none(NAMESPACE, key, OUTLINE)
        outline = record.doc.get("content") if record is not None else None
        return hashes_of_symbol_dicts(outline.get("symbols", [])) if isinstance(outline, dict) else {}

    def _apply_moves(self, moves: list[carry.Move]) -> dict[str, Any]:
        """Write the carried notes through the store (so every index of it follows): the new
        home first, then the old one, each under its artifact's lock; a note moved to another
        file is never lost between the two writes, at worst briefly in both."""
        notes: dict[tuple[str, str], Any] = {}
        deps: dict[tuple[str, str], list[Any]] = {}  # what each moving note names elsewhere
        for m in moves:
            record = self.store.get_or_none(NAMESPACE, m.old.path, "annotate")
            content = record.doc.get("content") if record is not None else None
            if isinstance(content, dict):
                notes[(m.old.path, m.old.name)] = (content.get("symbols") or {}).get(m.old.name)
                deps[(m.old.path, m.old.name)] = note_deps.keep_notes(
                    record.doc.get("depends_on") if record is not None else None,
                    {m.new.name},
                    {m.old.name: m.new.name},
                )
        # A remembered note rewritten since (its answer replaced), or whose symbol is back in its
        # file, has nothing to carry.
        moves = [
            m
            for m in moves
            if isinstance(notes.get((m.old.path, m.old.name)), dict)
            and m.old.name not in self._outline_hashes(m.old.path)
        ]
        renamed: dict[str, dict[str, str]] = {}
        moved: dict[str, str] = {}
        by_target: dict[str, list[carry.Move]] = {}
        for m in moves:
            by_target.setdefault(m.new.path, []).append(m)
            if m.old.path == m.new.path:
                renamed.setdefault(m.old.path, {})[m.old.name] = m.new.name
            else:
                moved[f"{m.old.path}#{m.old.name}"] = f"{m.new.path}#{m.new.name}"
        for target, arriving in by_target.items():
            self._rewrite_note(
                target,
                add={m.new.name: (notes[(m.old.path, m.old.name)], m.new.hash) for m in arriving},
                add_deps=[d for m in arriving for d in deps.get((m.old.path, m.old.name), [])],
                remove={m.old.name for m in arriving if m.old.path == target},
                renamed=renamed.get(target, {}),
                moved={k: v for k, v in moved.items() if v.startswith(target + "#")},
                carried_from=sorted({m.old.path for m in arriving if m.old.path != target}),
            )
        for source in sorted({m.old.path for m in moves if m.old.path != m.new.path}):
            leaving = [m for m in moves if m.old.path == source and m.new.path != source]
            self._rewrite_note(
                source,
                add={},
                remove={m.old.name for m in leaving},
                renamed={},
                moved={k: v for k, v in moved.items() if k.startswith(source + "#")},
                carried_from=[],
                add_deps=[],
            )
        if not moves:
            return {}
        out: dict[str, Any] = {"notes_carried": len(moves)}
        if renamed:
            out["renamed"] = dict(list(renamed.items())[:_CARRIED_SHOWN])
        if moved:
            out["moved"] = dict(list(moved.items())[:_CARRIED_SHOWN])
        if len(renamed) > _CARRIED_SHOWN or len(moved) > _CARRIED_SHOWN:
            out["carried_note"] = (
                f"renamed and moved show the first {_CARRIED_SHOWN} files and moves; "
                "get_artifact(path, kind='annotate') of each file lists its own"
            )
        return out

    def _rewrite_note(
        self,
        key: str,
        add: dict[str, tuple[Any, str]],
        remove: set[str],
        renamed: dict[str, str],
        moved: dict[str, str],
        carried_from: list[str],
        add_deps: list[Any],
    ) -> None:
        with self.store.lock(self.store.artifact_file(NAMESPACE, key, "annotate")):
            record = self.store.get_or_none(NAMESPACE, key, "annotate")
            doc: dict[str, Any] = record.doc if record is not None else {}
            stored = doc.get("content")
            content: dict[str, Any] = stored if isinstance(stored, dict) else {"symbols": {}}
            symbols = {k: v for k, v in (content.get("symbols") or {}).items() if k not in remove}
            hashes = {k: v for k, v in (doc.get("symbol_hashes") or {}).items() if k not in remove}
            added: set[str] = set()
            for name, (note, digest) in add.items():
                # A note written for the new name meanwhile (another process) is newer: it stays.
                if isinstance(note, dict) and name not in symbols:
                    symbols[name] = note
                    hashes[name] = digest
                    added.add(name)
            content = {**content, "symbols": symbols}
            if not symbols and "file" not in content:
                self.store.delete(NAMESPACE, key, "annotate")
                return
            # What the last carries did, chained: a→b then b→c reads a→c; entries whose new
            # name has no note any more are dropped.
            was = dict(doc.get("renamed") or {})
            chained = {old: renamed.get(new, new) for old, new in was.items()}
            chained.update({old: new for old, new in renamed.items() if old not in was.values()})
            chained = {old: new for old, new in chained.items() if new in symbols and old != new}
            moves = {**(doc.get("moved") or {}), **moved}
            extra: dict[str, Any] = {"symbol_hashes": hashes}
            # What the notes name follows them.
            kept = set(symbols) | ({note_deps.FILE_NOTE} if "file" in content else set())
            arriving = note_deps.keep_notes(add_deps, added)
            staying = note_deps.keep_notes(doc.get("depends_on"), kept - added, renamed)
            deps = note_deps.combine(note_deps.own_file(staying + arriving, key))
            if deps:
                extra["depends_on"] = deps
            kept_stale = [k for k in doc.get("kept_stale") or [] if k in symbols]
            if kept_stale:
                extra["kept_stale"] = kept_stale
            if chained:
                extra["renamed"] = chained
            if moves:
                extra["moved"] = dict(list(moves.items())[-100:])
            source = doc.get("source")
            provenance = dict(doc.get("provenance") or {"producer": PRODUCER, "tool": "generate_artifact"})
            if carried_from:
                provenance["carried_from"] = sorted({*provenance.get("carried_from", []), *carried_from})
            self.store.put(
                NAMESPACE,
                key,
                "annotate",
                content=content,
                fmt="json",
                provenance=provenance,
                source=Fingerprint.from_dict(source) if isinstance(source, dict) else self.probe(key),
                extra=extra,
            )

    def store_result(self, ticket: str, rp: ResolvedPath, task: str, result: str, model: str | None) -> Envelope:

        def validate(answer: str, doc: dict[str, Any]) -> Validated:
            context = doc.get("context") or {}
            # What the note was written from, so that reads can tell which of it went stale.
            extra: dict[str, Any] = {}
            if isinstance(context.get("symbol_hashes"), dict):
                extra["symbol_hashes"] = context["symbol_hashes"]
            if isinstance(context.get("files"), dict):
                extra["files"] = context["files"]
            if doc["task"] == "annotate":
                return self._validated_notes(rp.key, answer, context, extra)
            text = llm_tasks.validate_markdown(answer)
            deps, ambiguous = self._depends_on({note_deps.FILE_NOTE: text}, rp.key, folder=rp.abs.is_dir())
            if deps:
                extra["depends_on"] = deps
            return Validated(text, "markdown", extra=extra, data={"chars": len(text), **_named(deps, ambiguous)})

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
        if task == "annotate" and envelope.data and int(envelope.data.get("parts") or 1) > 1:
            self._point_at_next_part(rp, envelope)
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
                extra={"source": src, **{k: rec.doc[k] for k in ("files", "depends_on") if k in rec.doc}},
            )
        ask_next = (envelope.data or {}).get("ask_next")
        if ask_next:
            envelope.nextAction = (
                f"Stored. {ask_next['count']} symbol(s) asked are not described yet (missing_symbols, then "
                f"what the prompt left for the next one): {ask_next['with']} asks for them. "
                + (envelope.nextAction or "").removeprefix("Stored. ")
            ).rstrip()
        refused = (envelope.data or {}).get("refused")
        if refused:
            envelope.nextAction = (
                f"Stored the valid notes (stored lists them); {len(refused)} key(s) refused: each entry of "
                "refused says why and the call that gets a ticket for it. " + (envelope.nextAction or "")
            )
        return envelope

    def _validated_notes(self, key: str, answer: str, context: dict[str, Any], extra: dict[str, Any]) -> Validated:
        """An annotate answer checked and merged with the notes kept (under the artifact's lock):
        the keys naming symbols of the outline are stored, the others refused with their reason
        (:mod:`note_keys`); an answer with nothing valid at all is an invalid answer."""
        raw, file_note = llm_tasks.validate_annotate(answer)
        keys = self._sort_keys(key, list(raw), context)
        notes = {qn: raw[k] for k, qn in keys.accepted.items()}
        if not notes and file_note is None:
            why = "; ".join(f"{r['reason']}" + (f" ({r['call']})" if r["call"] else "") for r in keys.refused[:5])
            raise ResultInvalid(
                "the answer describes no symbol of the file" + (f": {why}" if why else ""),
                details={
                    "field": "result.symbols",
                    "rule": "known-symbol" if keys.refused else "non-empty",
                    "unknown": [r["key"] for r in keys.refused][:100],
                    "refused": keys.refused[:50],
                },
            )
        before = self.store.get_or_none(NAMESPACE, key, "annotate")
        content, hashes, gone = self._merged_notes(key, notes, file_note, context)
        extra["symbol_hashes"] = hashes
        current = context.get("symbol_hashes") or {}
        signed = _signatures_written(context, before, set(notes), content["symbols"])
        if signed:
            extra["symbol_signatures"] = signed
        kept_stale = sorted(k for k in content["symbols"] if hashes.get(k) != current.get(k))
        if kept_stale:
            extra["kept_stale"] = kept_stale[:1000]
        # What the notes name elsewhere: the new ones' as the code is now, the kept ones' as recorded.
        texts = {qn: _note_text(note) for qn, note in notes.items()}
        if file_note is not None:
            texts[note_deps.FILE_NOTE] = file_note["description"]
        new_deps, ambiguous = self._depends_on(texts, key, own_symbols=True)
        kept = (set(content["symbols"]) - set(notes)) | (
            {note_deps.FILE_NOTE} if file_note is None and "file" in content else set()
        )
        old_deps = before.doc.get("depends_on") if before is not None else None
        deps = note_deps.combine(new_deps, note_deps.keep_notes(old_deps, kept))
        if deps:
            extra["depends_on"] = deps
        asked = list(context.get("symbols", []))
        missing = [n for n in asked if n not in notes]
        data: dict[str, Any] = {
            "described": len(notes),
            "stored": sorted(notes)[:100],
            "missing_symbols": missing[:100],
            "notes_in_file": len(content["symbols"]),
        }
        # what this prompt asked and the answer left out, then what the prompt left for the next one
        to_ask = list(dict.fromkeys(missing + [n for n in context.get("symbols_left") or [] if n not in notes]))
        if to_ask:
            data["ask_next"] = {"count": len(to_ask), "with": asking_for(key, to_ask)}
            if len(to_ask) > 50:
                data["ask_next"]["then"] = "the same call with the names after the first 50"
        if keys.refused:
            data["refused"] = keys.refused[:50]
        if keys.mapped:
            data["keys_mapped"] = dict(list(keys.mapped.items())[:50])
        if gone:
            data["dropped_gone_notes"] = gone[:100]
        data.update(_named(new_deps, ambiguous))
        if context.get("parts", 1) > 1:
            data.update(part=context.get("part"), parts=context.get("parts"))
        return Validated(content, "json", extra=extra, data=data)

    def _sort_keys(self, key: str, keys: list[str], context: dict[str, Any]) -> note_keys.SortedKeys:
        """:func:`note_keys.sort_keys` for an answer on ``key`` (unchanged since its prompt: checked)."""
        from llmem.code.outline import build_outline

        hashes = context.get("symbol_hashes") or {}
        if all(k in hashes for k in keys):
            return note_keys.SortedKeys(accepted={k: k for k in keys})
        data = (self.ws / key).read_bytes()
        parts = llm_tasks.annotate_parts(build_outline(key, data), data.decode("utf-8", "replace"))
        shown_in = {n: k for k, units in enumerate(parts, 1) for u in units for n in u.names}

        def part_of(name: str) -> int | None:
            while name and name not in shown_in:  # a data member: the part of what holds it
                name = name.rpartition(".")[0]
            return shown_in[name] if name and len(parts) > 1 else None

        record = self.store.get_or_none(NAMESPACE, key, "annotate")
        renamed = record.doc.get("renamed") if record is not None else None
        content = record.doc.get("content") if record is not None else None
        gone = {n for n in (content.get("symbols") or {}) if n not in hashes} if isinstance(content, dict) else set()
        waiting = self.store.read_doc(NAMESPACE, _GONE_NOTES, {})
        if isinstance(waiting, dict):
            gone |= {str(v.get("name")) for v in waiting.values() if isinstance(v, dict) and v.get("path") == key}

        def elsewhere(names: list[str]) -> dict[str, list[str]]:
            from llmem.code.references import finder_for

            defs = finder_for(self.ws).definitions_of({carry.leaf(n) for n in names})
            return {
                n: sorted({d["path"] for d in note_deps.matching(n, defs.get(carry.leaf(n), [])) if d["path"] != key})
                for n in names
            }

        return note_keys.sort_keys(
            keys,
            key,
            hashes,
            part_of,
            renamed=renamed if isinstance(renamed, dict) else {},
            gone=gone,
            elsewhere=elsewhere,
        )


def _note_text(note: dict[str, str]) -> str:
    """The words of a symbol's note, as the search index takes them."""
    return " ".join(str(note.get(k) or "") for k in ("description", "inputs", "outputs")).strip()


def _named(deps: list[dict[str, Any]], ambiguous: list[dict[str, Any]]) -> dict[str, Any]:
    """What a store answer says of the code its notes name elsewhere."""
    out: dict[str, Any] = {}
    if deps:
        out["depends_on"] = [{k: d[k] for k in ("name", "symbol", "path")} for d in deps[:20]]
        out["depends_on_total"] = len(deps)
    if ambiguous:
        out["names_not_followed"] = {
            "why": "defined more than once (defined_in), and this file imports none of them by that name: "
            "qualify the name (Class.member) or name the file",
            "names": ambiguous[:10],
        }
    return out


def _signatures_written(
    context: dict[str, Any], before: ArtifactRecord | None, written: set[str], described: dict[str, Any]
) -> dict[str, str]:
    """The signature each described symbol's note was written from: the prompt's for the notes of
    this answer, the earlier record's for the notes kept."""
    now = context.get("symbol_signatures") or {}
    old = before.doc.get("symbol_signatures") if before is not None else None
    old = old if isinstance(old, dict) else {}
    out = {}
    for name in described:
        sig = old.get(name) if name not in written and name in old else now.get(name)
        if isinstance(sig, str):
            out[name] = sig
    return out


def asking_for(key: str, names: list[str]) -> str:
    """The call that asks for ``names`` of ``key`` (at most 50, the cap of symbols=)."""
    return f"generate_prompt(path={key!r}, task='annotate', symbols={names[:50]!r})"


def _symbols_left(key: str, left: list[str]) -> dict[str, Any]:
    """What a symbols= prompt leaves for the next one (one part's source holds so much)."""
    if not left:
        return {"symbols_left": {"count": 0}}
    return {
        "symbols_left": {
            "count": len(left),
            "names": left[:50],
            "why": "one prompt holds one part's source; these come next",
            "with": asking_for(key, left) + (" (then the rest of names)" if len(left) > 50 else ""),
        }
    }


def _refresh_units(outline: Any, text: str, wanted: list[str]) -> tuple[list[llm_tasks.SourceUnit], list[str], int]:
    """The units and names of a refresh asking for ``wanted`` (the stale notes first, then the new
    symbols): only those names, not the other members of a class asked, and only as many units as
    one part's source holds; how many of ``wanted`` are left for the next prompt."""
    units, _, _ = llm_tasks.chosen_units(outline, text, wanted, fill=False)
    rank = {n: i for i, n in enumerate(wanted)}
    units = sorted(
        (u for u in units if rank.keys() & set(u.names)), key=lambda u: min(rank.get(n, 1 << 30) for n in u.names)
    )
    kept: list[llm_tasks.SourceUnit] = []
    used = 0
    for u in units:
        size = len(u.text) + 80
        if kept and used + size > llm_tasks.ANNOTATE_SOURCE_CHARS:
            continue
        kept.append(u)
        used += size
    kept.sort(key=lambda u: u.start_line)
    names = list(dict.fromkeys(n for u in kept for n in u.names if n in rank))
    return kept, names, len(set(wanted) - set(names))


def _notes_of(record: ArtifactRecord | None) -> dict[str, Any]:
    """The stored notes of an annotate record: qualified name → note, and ``FILE_NOTE`` → the file's note."""
    content = record.doc.get("content") if record is not None else None
    if not isinstance(content, dict):
        return {}
    symbols = content.get("symbols")
    out: dict[str, Any] = dict(symbols) if isinstance(symbols, dict) else {}
    if content.get("file"):
        out[note_deps.FILE_NOTE] = content["file"]
    return out
