"""Outlining files and folders into the store: incremental, honest about what it did.

A folder parse walks the workspace as a developer expects (``walk.py``), skips what is
unchanged (size and mtime, then sha256), and returns ``{parsed, unchanged, skipped, failed}``
with every skipped entry's reason — never success for work it did not do.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from llmem.config import Limits
from llmem.errors import InvalidArgument
from llmem.paths import ResolvedPath
from llmem.store import ArtifactStore, Fingerprint

__all__ = ["NAMESPACE", "OUTLINE", "PRODUCER", "Parser", "Progress", "ProgressSink"]

NAMESPACE = "llmem"
PRODUCER = "llmem-mcp"
OUTLINE = "outline"
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


class Parser:
    """Outlines into ``store``; ``parse`` takes a path already resolved inside the workspace."""

    def __init__(self, store: ArtifactStore, limits: Limits):
        self.store = store
        self.ws = store.workspace
        self.limits = limits

    def parse(self, rp: ResolvedPath, progress: ProgressSink | None = None) -> dict[str, Any]:
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


def _count_symbols(symbols: list[dict[str, Any]]) -> int:
    return sum(1 + _count_symbols(s.get("children", [])) for s in symbols)
