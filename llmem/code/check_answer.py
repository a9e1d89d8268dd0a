"""The answer of ``check_references(path?)``: the findings of :mod:`llmem.code.check`, paged.

Every use under ``path`` (a file or a folder; the whole workspace by default) is judged against
the workspace as it is on disk now; findings come in code files first, then test files
(:func:`llmem.code.outline.is_test_path`), each by path and line, with exact totals (by kind, by
file, in tests) and what was not judged, by reason. Each finding names the likely intended
name: the one the store knows it was renamed to (:mod:`llmem.code.symbol_history`), else the
nearest names of where it was looked for.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmem.code.answer_pages import cursor_after, fill_page, question_tag, start_after
from llmem.code.check import CheckRun, check_files, near_names
from llmem.code.check_resolve import Finding
from llmem.code.outline import is_test_path
from llmem.code.references_parse import language_of
from llmem.code.references_unresolved import gone_symbol_of
from llmem.core.errors import SourceNotFound

if TYPE_CHECKING:
    from llmem.code.references import ReferenceFinder
    from llmem.code.symbol_history import SymbolHistory

__all__ = ["broken_around", "check_answer", "finding_item"]

BY_FILE_SHOWN = 50
#: Uses that may break (judged by name only) shown in one answer; the rest are counted.
BY_NAME_SHOWN = 20
#: The last check of each finder, with what it was made from.
_RUNS: weakref.WeakKeyDictionary[ReferenceFinder, tuple[Any, CheckRun]] = weakref.WeakKeyDictionary()
USES_SHOWN = 10
_CHECKED = frozenset({"python", "typescript", "tsx", "javascript", "go", "rust", "java"})


def _order(f: Finding) -> tuple[bool, str, int, int]:
    return (is_test_path(f.path), f.path, f.line, f.column)


def check_answer(
    finder: ReferenceFinder,
    path: str | None,
    limit: int,
    cursor: str | None,
    answer_chars: int,
    history: SymbolHistory | None = None,
) -> dict[str, Any]:
    """Call with the finder's lock held (its files are shared with find_references)."""
    from llmem.core.paths import resolve_in_workspace

    src = finder.src
    paths = src.paths()
    files = {k: f for k in paths if (f := src.file(k)) is not None}
    under = "."
    keys = [k for k in files if language_of(k) in _CHECKED]
    if path is not None and path.strip() not in ("", "."):
        rp = resolve_in_workspace(finder.ws, path, field="path")
        under = rp.key
        keys = [k for k in keys if k == under or k.startswith(under + "/")]
        if not keys and not rp.abs.exists():
            import difflib

            raise SourceNotFound(
                f"path {under!r} does not exist in the workspace",
                details={"field": "path", "rule": "a file or folder of the workspace",
                         "close_matches": difflib.get_close_matches(under, list(files), n=5, cutoff=0.5)},
                next_action="Leave path out to check the whole workspace.",
            )  # fmt: skip
    # The same question of the same files (the next page, a second look) is answered from memory.
    versions = (under, tuple((k, files[k].size, files[k].mtime_ns) for k in sorted(files)))
    memo = (versions, history.version() if history is not None else None)
    kept = _RUNS.get(finder)
    if kept is not None and kept[0] == memo:
        run = kept[1]
    else:
        run = check_files(
            src,
            files,
            sorted(keys),
            history.remembered if history is not None else None,
            history.gone_member if history is not None else None,
            gone_symbol_of(finder.src, history),
        )
        _RUNS[finder] = (memo, run)
    findings = sorted(run.findings, key=_order)
    tag = question_tag("check", under)
    start = start_after(cursor, tag, [_order(f) for f in findings], "path") if cursor else 0
    by_kind: dict[str, int] = {}
    by_file: dict[str, int] = {}
    for finding in findings:
        by_kind[finding.kind] = by_kind.get(finding.kind, 0) + 1
        by_file[finding.path] = by_file.get(finding.path, 0) + 1
    in_tests = sum(1 for finding in findings if is_test_path(finding.path))
    out: dict[str, Any] = {
        "path": under,
        "files_checked": sum(run.files.values()),
        "by_language": dict(run.files),
        "total": len(findings),
        "by_kind": by_kind,
        "by_file": dict(list(by_file.items())[:BY_FILE_SHOWN]),
        **({"by_file_more": len(by_file) - BY_FILE_SHOWN} if len(by_file) > BY_FILE_SHOWN else {}),
        "in_tests": in_tests,
        "not_checked": {"total": sum(run.not_checked.values()), "by_reason": dict(run.not_checked.most_common())},
    }
    if run.not_parsed:
        out["not_parsed"] = {"count": len(run.not_parsed), "paths": run.not_parsed[:5],
                             "why": "syntax errors: their names are not checked"}  # fmt: skip
    if run.by_name:
        maybe = sorted(run.by_name, key=_order)
        out["may_break_by_name"] = {
            "total": len(maybe),
            "means": "x.name where x's type is not known and name is a member a parse saw go (its class no longer "
            "has it, nor any other class of the workspace): each may break, judged by name only (by_name: true); "
            "not counted in total",
            "results": [finding_item(finder, f, history) | {"by_name": True} for f in maybe[:BY_NAME_SHOWN]],
        }
    if run.known_gone:
        gone = sorted(run.known_gone, key=_order)
        out["known_gone"] = {
            "total": len(gone),
            "means": "names taken from a module whose __getattr__ the check cannot read (so not judged by the "
            "code), which a parse saw defined in that module and go: each is most likely broken; "
            "not counted in total",
            "results": [finding_item(finder, f, history) | {"known_gone": True} for f in gone[:BY_NAME_SHOWN]],
        }
    if not findings:
        apart = [f"{len(run.known_gone)} are known gone (known_gone)"] if run.known_gone else []
        apart += [f"{len(run.by_name)} may break (may_break_by_name)"] if run.by_name else []
        out["note"] = (
            f"Every name judged under {under} resolves ({sum(run.files.values())} files); "
            f"{out['not_checked']['total']} uses could not be judged (not_checked, by reason)"
            + (f"; of those not judged, {' and '.join(apart)}." if apart else ".")
        )
    room = answer_chars - len(json.dumps(out, ensure_ascii=False)) - 600
    results, pos = fill_page(len(findings), start, limit, room, lambda i: finding_item(finder, findings[i], history))
    out["count"] = len(results)
    out["results"] = results
    out["next_cursor"] = cursor_after(tag, _order(findings[pos - 1])) if pos < len(findings) and results else None
    return out


def finding_item(finder: ReferenceFinder, f: Finding, history: SymbolHistory | None) -> dict[str, Any]:
    """One finding as answered: where, what, why, and the likely intended name."""
    src = finder.src
    file = src.file(f.path)
    item: dict[str, Any] = {
        "path": f.path,
        "line": f.line,
        "column": f.column + 1,
        "kind": f.kind,
        "name": f.name,
        "missing": f.missing,
        "in": src.enclosing(f.path, file, f.line, f.column) if file is not None else None,
        "text": file.line_text(f.line) if file is not None and file.data is not None else "",
        "why": f.why,
    }
    if f.defined_in is not None:
        item["defined_in"] = f"{f.defined_in[0]}:{f.defined_in[1]}"
    guesses: list[str] = []
    arity = f.kind == "call-arguments"  # a parameter, not a symbol the store remembers
    if f.last_defined is not None or (history is not None and not arity and not f.missing.startswith(".")):
        where = f.defined_in[0] if f.defined_in is not None else f.path
        last = f.last_defined
        if last is None and history is not None:
            last = history.last_defined(f.missing, where, finder.src.outline_content(where))
        if last is not None:
            item["last_defined"] = {k: last[k] for k in ("path", "line", "symbol", "source") if k in last}
            if "renamed_to" in last:
                item["renamed_to"] = last["renamed_to"]
                guesses.append(str(last["renamed_to"]).rsplit(".", 1)[-1])
    guesses += [n for n in near_names(f.missing, f.candidates) if n not in guesses]
    if guesses:
        item["did_you_mean"] = guesses[:3]
    if f.uses:
        item["uses"] = {"count": len(f.uses), "lines": f.uses[:USES_SHOWN]}
    if f.elsewhere:
        item["exported_by"] = f.elsewhere
    return item


#: At most this much of a prompt goes to the uses broken around the file.
BROKEN_CHARS = 1_500


def broken_around(workspace: Path, key: str, history: SymbolHistory | None = None) -> tuple[str, int]:
    """The uses of ``key`` that no longer resolve, as a section for a note's prompt, and how many:
    a note refreshed after a half-done rename should say what is broken, not only what changed.
    ("", 0) when nothing is broken (or the file is not one the check reads)."""
    from llmem.code.references import finder_for

    try:
        finder = finder_for(workspace)
        findings = sorted(finder.broken_in(key, history), key=_order)
        with finder.lock:  # the likely intended name as check_references gives it: a rename first
            guesses = [finding_item(finder, f, history).get("did_you_mean", []) for f in findings]
    except Exception:  # the check is advice for the prompt: it never costs the prompt itself
        return "", 0
    if not findings:
        return "", 0
    lines: list[str] = []
    size = 0
    for f, guess in zip(findings, guesses, strict=True):
        line = f"- line {f.line}: `{f.name}` ({f.kind}) — {f.why}" + (
            f"; did you mean {', '.join(f'`{g}`' for g in guess)}?" if guess else ""
        )
        size += len(line) + 1
        if size > BROKEN_CHARS:
            lines.append(f"- … and {len(findings) - len(lines)} more: check_references(path={key!r})")
            break
        lines.append(line)
    section = (
        f"\n## Broken around it ({len(findings)} use(s) in this file no longer resolve — check_references)\n"
        "Where your notes describe the code using these names, say that they are broken:\n" + "\n".join(lines) + "\n"
    )
    return section, len(findings)
