"""Notes written by the host's model: prompts for the four tasks and the answers stored.

The generate_prompt → store_llm_result protocol of ``callback.py`` applied to llmem's tasks
(``tasks.py``): file prompts carry an outline and capped excerpts, folder summaries build on the
outlines and summaries of what the folder holds, and answers are validated before storing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from llmem.code import tasks as llm_tasks
from llmem.code.parsing import NAMESPACE, OUTLINE, PRODUCER
from llmem.core.callback import CallbackProtocol, PreparedPrompt, Validated
from llmem.core.config import Limits
from llmem.core.envelope import Envelope
from llmem.core.errors import InvalidArgument, UnsupportedTask
from llmem.core.paths import ResolvedPath
from llmem.core.store import ArtifactStore, Fingerprint, fingerprint_file

#: README names a folder summary reads, first found wins.
_READMES = ("README.md", "README.rst", "README.txt", "README", "readme.md")


def _readme(folder: Path) -> str | None:
    for name in _READMES:
        file = folder / name
        if file.is_file():
            try:
                with file.open("rb") as handle:
                    return handle.read(8_000).decode("utf-8", "replace")
            except OSError:
                return None
    return None


__all__ = ["Notes"]


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

    def prompt(self, rp: ResolvedPath, task: str, part: int | None = None) -> Envelope:
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
        from llmem.code.outline import build_outline, iter_symbols, symbol_hashes

        data = rp.abs.read_bytes()
        fp = fingerprint_file(rp.abs, data)
        outline = build_outline(rp.key, data)
        hashes = symbol_hashes(outline)
        text = data.decode("utf-8", "replace")
        if task == "annotate":
            if not any(True for _ in iter_symbols(outline)):
                raise UnsupportedTask(
                    f"{rp.key!r} has no symbols to annotate ({outline.reason or 'no classes or functions'}); "
                    "use task 'summarize' or 'document'",
                    details={"path": rp.key, "mode": outline.mode},
                )
            parts = llm_tasks.annotate_parts(outline, text)
            k = part if part is not None else self._first_part_to_do(rp.key, parts, hashes)
            if not 1 <= k <= len(parts):
                raise InvalidArgument(
                    f"part {k} does not exist: {rp.key!r} is annotated in {len(parts)} part(s)",
                    details={"field": "part", "rule": f"1..{len(parts)}", "parts": len(parts)},
                )
            units = parts[k - 1]
            names = [n for u in units for n in u.names]
            prompt = llm_tasks.annotate_prompt(rp.key, outline, units, k, len(parts))
            return self.callback.issue(
                PreparedPrompt(
                    task,
                    rp.key,
                    task,
                    prompt,
                    "json",
                    fp,
                    {"symbols": names, "symbol_hashes": hashes, "part": k, "parts": len(parts)},
                    {
                        "part": k,
                        "parts": len(parts),
                        "symbols": len(names),
                        "symbols_in_file": len(hashes),
                        "language": outline.language,
                    },
                    part=k if len(parts) > 1 else None,
                )
            )
        prompt = llm_tasks.file_prompt(task, rp.key, outline, text)
        return self.callback.issue(
            PreparedPrompt(
                task, rp.key, task, prompt, "markdown", fp, {"symbol_hashes": hashes}, {"language": outline.language}
            )
        )

    def _first_part_to_do(self, key: str, parts: list[list[llm_tasks.SourceUnit]], hashes: dict[str, str]) -> int:
        """The first part with a symbol not yet described (as the code is now), else part 1."""
        done = self._described_now(key, hashes)
        for k, units in enumerate(parts, 1):
            if any(n not in done for u in units for n in u.names):
                return k
        return 1

    def _described_now(self, key: str, hashes: dict[str, str]) -> set[str]:
        """Symbols whose stored note was written from the code as it is now."""
        record = self.store.get_or_none(NAMESPACE, key, "annotate")
        if record is None or not isinstance(record.doc.get("content"), dict):
            return set()
        stored = record.doc.get("symbol_hashes")
        notes = record.doc["content"].get("symbols", {})
        if not isinstance(stored, dict):
            return set()
        return {k for k in notes if k in hashes and stored.get(k) == hashes[k]}

    def _folder_prompt(self, rp: ResolvedPath) -> PreparedPrompt:
        from llmem.code.walk import walk_workspace

        walked = walk_workspace(self.ws, rp.abs, max_file_bytes=self.limits.max_file_bytes)
        entries: list[dict[str, Any]] = []
        subfolders: set[str] = set()
        prefix = "" if rp.key == "." else rp.key + "/"
        for f in walked.files:
            rest = f.rel_path[len(prefix) :]
            if "/" in rest:
                subfolders.add(prefix + rest.split("/", 1)[0])
                continue
            entries.append(self._known_of(f.rel_path))
        for sub in sorted(subfolders):
            entry = {"path": sub, "folder": True}
            summary = self.store.get_or_none(NAMESPACE, sub, "summarize")
            entry["summary" if summary else "note"] = summary.doc.get("content") if summary else "(no summary yet)"
            entries.append(entry)
        fp = self.folder_fingerprint(rp.abs)
        prompt = llm_tasks.folder_summary_prompt(rp.key, entries, _readme(rp.abs))
        return PreparedPrompt(
            "summarize",
            rp.key,
            "summarize",
            prompt,
            "markdown",
            Fingerprint(fp.size, fp.mtime_ns, fp.sha256),
            {"folder": True, "files": self.file_states(rp.abs)},
            {"files": len(walked.files), "subfolders": len(subfolders)},
        )

    def _known_of(self, key: str) -> dict[str, Any]:
        """What the store knows of one file: its summary, else its notes, else its doc comments."""
        entry: dict[str, Any] = {"path": key}
        summary = self.store.get_or_none(NAMESPACE, key, "summarize")
        if summary is not None and isinstance(summary.doc.get("content"), str):
            entry["summary"] = summary.doc["content"]
            return entry
        notes = self.store.get_or_none(NAMESPACE, key, "annotate")
        content = notes.doc.get("content") if notes is not None else None
        if isinstance(content, dict) and (content.get("symbols") or content.get("file")):
            described: dict[str, str] = {}
            if isinstance(content.get("file"), dict):
                described[""] = str(content["file"].get("description", ""))
            for name, note in (content.get("symbols") or {}).items():
                if isinstance(note, dict):
                    described[str(name)] = str(note.get("description", ""))
            entry["notes"] = described
            return entry
        outline = self.store.get_or_none(NAMESPACE, key, OUTLINE)
        if outline is None:
            entry["note"] = "(not outlined yet: run generate_artifact on the folder first)"
            return entry
        symbols = outline.doc["content"].get("symbols", [])
        docs = {str(s.get("qualified_name")): str(s["doc"]).splitlines()[0] for s in symbols if s.get("doc")}
        if docs:
            entry["docs"] = docs
        else:
            entry["symbols"] = [s.get("name") for s in symbols]
        return entry

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
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """This answer's notes merged into the stored ones (called under the artifact's lock):
        earlier parts' notes are kept while their symbols are unchanged."""
        hashes = dict(context.get("symbol_hashes") or {})
        merged: dict[str, Any] = {"symbols": {}}
        record = self.store.get_or_none(NAMESPACE, key, "annotate")
        if record is not None and isinstance(record.doc.get("content"), dict):
            old = record.doc["content"]
            old_hashes = record.doc.get("symbol_hashes") or {}
            merged["symbols"] = {
                k: v for k, v in (old.get("symbols") or {}).items() if k in hashes and old_hashes.get(k) == hashes[k]
            }
            if isinstance(old.get("file"), dict):
                merged["file"] = old["file"]
        merged["symbols"].update(notes)
        if file_note is not None:
            merged["file"] = file_note
        return merged, hashes

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
                notes, missing, file_note = llm_tasks.validate_annotate(answer, list(context.get("symbols", [])))
                content, hashes = self._merged_notes(rp.key, notes, file_note, context)
                extra["symbol_hashes"] = hashes
                data: dict[str, Any] = {"described": len(notes), "missing_symbols": missing[:100]}
                if context.get("parts", 1) > 1:
                    data.update(part=context.get("part"), parts=context.get("parts"))
                return Validated(content, "json", extra=extra, data=data)
            text = llm_tasks.validate_markdown(answer)
            return Validated(text, "markdown", extra=extra, data={"chars": len(text)})

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
                extra={"source": src, **{k: rec.doc[k] for k in ("files",) if k in rec.doc}},
            )
        return envelope
