"""What a note depends on beside the code it describes: the symbols its text names.

A note on ``path-utils.ts`` that says which callers expand ``~`` first names ``validatePath``,
defined in ``lib.ts``: when ``validatePath`` changes, the note may be wrong although
``path-utils.ts`` did not change. So when a note is stored, the identifiers of its text
(:func:`names_in`: words in backticks, and words shaped like code — ``camelCase``,
``snake_case``, ``Dotted.names``, ``CONSTANTS``, ``calls()``; plain English words are not) that
resolve to a definition through ``find_references``' resolver
(:meth:`~llmem.code.references.ReferenceFinder.definitions_of`) are recorded with the outline's
hash of that definition and its file's size and mtime (the artifact's ``depends_on``). A read
compares them with the code as it is now (:func:`check`): a file whose size and mtime are
unchanged costs one ``stat``; otherwise its outline is made and the symbol's hash compared.

Which definition a name means: a name the note's own file defines is that definition. It is a
dependency of the file's own note and of the notes of the file's other symbols
(the note on ``git_diff`` naming ``GitTools.DIFF``), not of the note of a symbol that holds it or
that it holds (that note's own hash covers its code), nor of a summary of the whole file (which
watches every symbol of it already). A name defined once elsewhere is that one; a name defined in
several files is the one in the file linked to the note's by an import, when exactly one is
(and, of several there, the top-level one the note's file imports by that name: ``UNSET`` of
``from ._utils import UNSET``, not ``Sentinel.UNSET``); otherwise it is ambiguous, not recorded, and the store's answer says so. A folder summary has no
file of its own: it records what it names, preferring definitions inside it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from posixpath import basename
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmem.code.outline import Outline
    from llmem.code.references import ReferenceFinder
    from llmem.code.rename_uses import OldUse

__all__ = [
    "FILE_NOTE",
    "callable_signatures",
    "callers_of",
    "changed_code",
    "check",
    "combine",
    "keep_notes",
    "matching",
    "names_in",
    "own_file",
    "resolve",
    "shown",
    "signatures",
    "signatures_section",
]

#: The note key of a file's own note (annotate's ``file``) and of a whole summary.
FILE_NOTE = ""
#: At most this many names are looked up per note, and this many dependencies kept per artifact.
NAMES_PER_NOTE = 64
DEPS_KEPT = 200
#: The uses still naming a renamed symbol a refresh prompt lists.
USES_SHOWN = 10
#: The changed code a refresh prompt shows, in characters.
CHANGED_CODE_CHARS = 2_500

_BACKTICKS = re.compile(r"`([^`\n]{1,200})`")
_IDENTIFIER_PATH = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _code_shaped(word: str, after: str) -> bool:
    """Whether a word outside backticks reads as an identifier rather than English."""
    if after.startswith("("):
        return True
    if "." in word:
        return all(len(part) > 1 for part in word.split("."))  # not "e.g" or "i.e"
    return "_" in word or "$" in word or bool(_CAMEL.search(word)) or (len(word) >= 3 and word.isupper())


def names_in(text: str, limit: int = NAMES_PER_NOTE) -> list[str]:
    """The identifiers a note's text names, in order of first mention: every identifier in
    backticks, and the words shaped like code elsewhere."""
    found: dict[str, None] = {}
    for span in _BACKTICKS.findall(text):
        for m in _IDENTIFIER_PATH.finditer(span):
            found.setdefault(m.group().strip("$"), None)
    for m in _IDENTIFIER_PATH.finditer(text):
        if _code_shaped(m.group(), text[m.end() : m.end() + 1]):
            found.setdefault(m.group(), None)
    return [n for n in found if n][:limit]


def matching(name: str, defs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The definitions a written name can mean: a bare name any of them; ``A.b`` those whose
    qualified name ends so, or ``b`` in a module imported as ``A`` (``lib.validatePath``)."""
    if "." not in name:
        return defs
    qualified = [d for d in defs if d["symbol"] == name or d["symbol"].endswith("." + name)]
    if qualified:
        return qualified
    module = name.rsplit(".", 1)[0].rsplit(".", 1)[-1]
    return [d for d in defs if d["symbol"] == _leaf(name) and basename(d["path"]).split(".", 1)[0] == module]


def _parameters(finder: ReferenceFinder, key: str, symbols: set[str]) -> dict[str, set[str]]:
    """The names of the parameters and keyword arguments in each of ``symbols`` of ``key``, as
    ``find_references`` files them (kind ``parameter``)."""
    f = finder.src.file(key)
    if f is None or f.data is None:
        return {}
    facts = finder.src.facts(key, f)
    out: dict[str, set[str]] = {}
    for (line, col), (kind, _of) in facts.ids.items():
        if kind != "parameter":
            continue
        where = facts.enclosing(line)
        if where in symbols:
            f.line_of(0)  # the line starts, made once
            assert f.line_starts is not None
            at = f.line_starts[line - 1] + col
            m = _WORD.match(f.data[at : at + 200].decode("utf-8", "replace"))
            if m:
                out.setdefault(where, set()).add(m.group())
    return out


def _imported_names(finder: ReferenceFinder, key: str) -> dict[str, str]:
    """The names ``key``'s imports bind: ``{local name: imported name}`` (``from ._utils import UNSET``)."""
    with finder.lock:
        f = finder.src.file(key)
        if f is None or f.data is None:
            return {}
        return {local: name for imp in finder.src.facts(key, f).imports for name, local in imp.names if name != "*"}


_PY_BASES = re.compile(r"^class\s+[\w$]+\s*(?:\[[^\]]*\])?\s*\((.*)\)\s*$")
_TS_BASE = re.compile(r"\bextends\s+([\w$.]+)")


def _bases(signature: str) -> list[str]:
    """The names of the classes a class signature derives from (``class Option(Parameter)``,
    ``class Ky extends Base``), each by its last name."""
    m = _PY_BASES.match(signature)
    if m:
        return [
            b.split("[", 1)[0].strip().rsplit(".", 1)[-1] for b in m.group(1).split(",") if "=" not in b and b.strip()
        ]
    return [b.rsplit(".", 1)[-1] for b in _TS_BASE.findall(signature)]


def _overridden(finder: ReferenceFinder, key: str, notes: Iterable[str]) -> dict[str, list[str]]:
    """For each note on a method of a class of ``key``: the same-named members of its base
    classes it may override (``Option.value_from_envvar`` → ``Parameter.value_from_envvar``), as
    names to resolve like those the note writes."""
    from llmem.code.outline import iter_symbols

    with finder.lock:
        f = finder.src.file(key)
        outline = finder.src.outline(key, f) if f is not None else None
    if outline is None:
        return {}
    classes = {s.qualified_name: s for s in iter_symbols(outline) if s.kind == "class"}
    out: dict[str, list[str]] = {}
    for note in notes:
        owner, _, member = note.rpartition(".")
        if owner in classes and member:
            out[note] = [f"{base}.{member}" for base in _bases(classes[owner].signature) if base != owner]
    return out


def signatures(finder: ReferenceFinder, paths: Iterable[str]) -> dict[str, dict[str, str]]:
    """The signatures of the functions and methods of ``paths`` as their outlines list them now:
    ``{path: {qualified name: signature}}`` (recorded with a dependency, so that a change can say
    what a signature was and is: a required parameter added)."""

    out: dict[str, dict[str, str]] = {}
    with finder.lock:
        for path in paths:
            f = finder.src.file(path)
            outline = finder.src.outline(path, f) if f is not None else None
            if outline is not None:
                out[path] = callable_signatures(outline)
    return out


#: The outline kinds whose signature is a call's: what a dependency's signature is recorded for.
_CALLABLE = frozenset({"function", "method", "constructor", "test"})


def callable_signatures(outline: Outline) -> dict[str, str]:
    """Qualified name → signature of the functions and methods of one outline."""
    from llmem.code.outline import iter_symbols

    return {s.qualified_name: s.signature for s in iter_symbols(outline) if s.kind in _CALLABLE}


CALLS_SHOWN = 20


def calls_not_matching(finder: ReferenceFinder, path: str, symbol: str) -> list[dict[str, Any]]:
    """The calls of the workspace whose arguments no longer fit ``symbol`` of ``path`` as it is
    now, judged as check_references judges them (:mod:`llmem.code.check_arity`: Python), each
    ``{path, line, why}``; only the files naming it are checked."""
    from llmem.code.check import check_files
    from llmem.code.check_arity import KIND

    leaf = _leaf(symbol)
    with finder.lock:
        files = {k: f for k in finder.src.paths() if (f := finder.src.file(k)) is not None}
        naming = [k for k, f in files.items() if k.endswith(".py") and f.data is not None and f.offsets(leaf)]
        run = check_files(finder.src, files, naming)
    return [
        {"path": f.path, "line": f.line, "why": f.why}
        for f in run.findings
        if f.kind == KIND and f.defined_in is not None and f.defined_in[0] == path
        and f.container.startswith(symbol + "(")
    ]  # fmt: skip


def callers_of(finder: ReferenceFinder, path: str, symbol: str) -> dict[str, Any]:
    """What a refresh prompt says of the callers of ``symbol`` of ``path`` whose signature changed:
    how many uses the workspace has and the call that lists them, and for Python the calls that no
    longer fit it (:func:`calls_not_matching`)."""
    listing = f"find_references({symbol!r}, path={path!r})"
    found = finder.find(symbol, path, limit=1)
    out: dict[str, Any] = {"uses": int(found.get("total") or 0), "list_with": listing}
    if path.endswith(".py"):
        broken = calls_not_matching(finder, path, symbol)
        out.update(calls_not_matching=broken[:CALLS_SHOWN], calls_not_matching_total=len(broken))
    return out


def signatures_section(changed: list[dict[str, Any]]) -> str:
    """A refresh prompt's section on the symbols asked whose signature changed since their note."""
    if not changed:
        return ""
    lines = []
    for c in changed:
        callers = f"{c['uses']} use(s) in the workspace ({c['list_with']} lists them)"
        if "calls_not_matching" in c:
            callers += (
                f"; {c['calls_not_matching_total']} call(s) no longer fit it: "
                + "; ".join(f"{b['path']}:{b['line']} ({b['why']})" for b in c["calls_not_matching"][:10])
                if c["calls_not_matching_total"]
                else "; every call judged fits it"
            )
        else:
            callers += ": calls written for the old signature may no longer fit it"
        lines.append(f"- `{c['symbol']}`: was `{c['signature_was']}`, now `{c['signature_now']}`; {callers}.")
    return (
        "\n## Signatures that changed since the notes were written\n"
        "Describe each as it is now:\n" + "\n".join(lines) + "\n"
    )


def _inside(path: str, folder: str) -> bool:
    return folder == "." or path.startswith(folder + "/")


def _related(note: str, symbol: str) -> bool:
    """Whether a symbol's note covers ``symbol`` by its own hash: itself, what holds it, what it holds."""
    return note != FILE_NOTE and (note == symbol or symbol.startswith(note + ".") or note.startswith(symbol + "."))


def resolve(
    finder: ReferenceFinder,
    texts: Mapping[str, str],
    own: str,
    *,
    folder: bool = False,
    own_symbols: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The dependencies of notes ``{note key: text}`` of ``own`` (a file, or a folder with
    ``folder``), and the names left out as ambiguous (``{name, defined_in}``).

    A name its own file defines means that definition. With ``own_symbols`` (the notes of one
    file's symbols, each watching only its own code) it is a dependency of the notes that name
    it, but of none that holds it or that it holds; without (a summary of the whole file, which
    watches every symbol of it already) it is not recorded. A bare name that is a parameter (or
    a keyword argument) in the noted symbol is that, not a definition elsewhere of the same name
    (``timeout`` in a note on ``request(…, timeout)``)."""
    local = _parameters(finder, own, set(texts)) if own_symbols else {}
    by_note = {
        key: [n for n in names_in(text) if "." in n or n not in local.get(key, ())] for key, text in texts.items()
    }
    # An override's note depends on the member it overrides: when that goes, it overrides nothing.
    overrides = _overridden(finder, own, texts) if own_symbols else {}
    overrides = {note: [n for n in names if n not in by_note.get(note, [])] for note, names in overrides.items()}
    for note, names in overrides.items():
        by_note[note] = list(dict.fromkeys([*by_note.get(note, []), *names]))
    implicit = {n for names in overrides.values() for n in names}
    written = list(dict.fromkeys(n for names in by_note.values() for n in names))
    if not written:
        return [], []
    defs = finder.definitions_of({_leaf(n) for n in written}, near=None if folder else own)
    imported = {} if folder else _imported_names(finder, own)
    meant: dict[str, dict[str, Any]] = {}
    ambiguous: list[dict[str, Any]] = []
    for name in written:
        found = [d for d in matching(name, defs.get(_leaf(name), [])) if d["hash"] is not None]
        if not folder and any(d["path"] == own for d in found):
            found = [d for d in found if d["path"] == own] if own_symbols else []
        if not found:
            continue  # not a symbol of the workspace's outlines (or of the summary's own file)
        if folder:
            found = [d for d in found if _inside(d["path"], own)] or found
        distinct = list({(d["path"], d["symbol"]): d for d in found}.values())
        if len(distinct) > 1:
            distinct = [d for d in distinct if d["linked"]] or distinct
        if len(distinct) > 1 and name in imported:  # what the import binds: that module's top-level name
            distinct = [d for d in distinct if d["linked"] and d["symbol"] == imported[name]] or distinct
        if len(distinct) > 1:
            if name not in implicit:
                ambiguous.append({"name": name, "defined_in": sorted({d["path"] for d in distinct})[:5]})
            continue
        meant[name] = distinct[0]
    signature_of = signatures(finder, {d["path"] for d in meant.values()})
    deps: dict[tuple[str, str], dict[str, Any]] = {}
    for note, names in by_note.items():
        for name in names:
            d = meant.get(name)
            if d is None or _related(note, d["symbol"]):
                continue
            entry = deps.setdefault(
                (d["path"], d["symbol"]),
                {
                    "name": name,
                    "symbol": d["symbol"],
                    "path": d["path"],
                    "hash": d["hash"],
                    "size": d["size"],
                    "mtime_ns": d["mtime_ns"],
                    **({"signature": sig} if (sig := signature_of.get(d["path"], {}).get(d["symbol"])) else {}),
                    "notes": [],
                },
            )
            if note not in entry["notes"]:
                entry["notes"].append(note)
            if name in overrides.get(note, ()):
                entry.setdefault("overridden_by", []).append(note)
    return list(deps.values())[:DEPS_KEPT], ambiguous


def _valid(deps: Any) -> list[dict[str, Any]]:
    keys = {"symbol", "path", "hash"}
    return [d for d in deps if isinstance(d, dict) and keys <= set(d)] if isinstance(deps, list) else []


def keep_notes(deps: Any, kept: Iterable[str], renamed: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The recorded dependencies of the notes kept (under their new names when ``renamed``)."""
    keep = set(kept)
    renamed = renamed or {}
    out = []
    for d in _valid(deps):
        notes = [renamed.get(n, n) for n in d.get("notes") or [FILE_NOTE]]
        notes = [n for n in notes if n in keep]
        if notes:
            entry = {**d, "notes": notes}
            if d.get("overridden_by"):
                entry["overridden_by"] = [m for m in (renamed.get(n, n) for n in d["overridden_by"]) if m in notes]
            out.append(entry)
    return out


def own_file(deps: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """``deps`` of notes now in ``path`` (moved or renamed there): a note does not depend on a
    symbol of its own file that holds it or that it holds (its own hash covers that code)."""
    out = []
    for d in deps:
        notes = [n for n in d["notes"] if not (d["path"] == path and _related(n, d["symbol"]))]
        if notes:
            out.append({**d, "notes": notes})
    return out


def combine(*groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One list of dependencies: entries of one definition at one hash merged (their notes joined)."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for d in (d for group in groups for d in _valid(group)):
        key = (d["path"], d["symbol"], d["hash"])
        if key in merged:
            notes = merged[key]["notes"]
            merged[key]["notes"] = notes + [n for n in d.get("notes") or [] if n not in notes]
        else:
            merged[key] = {**d, "notes": list(d.get("notes") or [])}
    return list(merged.values())[:DEPS_KEPT]


def check(
    deps: Any,
    workspace: str,
    hashes_of: Callable[[str], dict[str, str] | None],
    signatures_of: Callable[[list[str]], dict[str, dict[str, str]]] | None = None,
) -> list[dict[str, Any]]:
    """The recorded dependencies whose definition changed or is gone, as the code is now: each
    with ``name`` (as the note wrote it), ``symbol``, ``path``, ``change`` and ``notes``; a
    changed function whose signature was recorded and is another now (``signatures_of``: paths →
    :func:`signatures`) with ``signature_was`` and ``signature_now``."""
    changes: list[dict[str, Any]] = []
    now: dict[str, dict[str, str] | None] = {}
    for d in _valid(deps):
        path = str(d["path"])
        try:
            st = os.stat(os.path.join(workspace, *path.split("/")))  # noqa: PTH116, PTH118 - a read's hot path
        except OSError:
            current = None
        else:
            if (st.st_size, st.st_mtime_ns) == (d.get("size"), d.get("mtime_ns")):
                continue
            if path not in now:
                now[path] = hashes_of(path)
            current = now[path]
        digest = current.get(str(d["symbol"])) if current is not None else None
        if digest == d["hash"]:
            continue
        notes = list(d.get("notes") or [FILE_NOTE])
        overriding = [n for n in d.get("overridden_by") or [] if n in notes]
        if digest is not None and overriding:
            # A base member that changed leaves its override's note as it was (it is named for the
            # override, not described): only those notes that also name it go stale.
            notes = [n for n in notes if n not in overriding]
            overriding = []
            if not notes:
                continue
        changes.append(
            {
                "name": str(d.get("name") or d["symbol"]),
                "symbol": str(d["symbol"]),
                "path": path,
                "change": "changed" if digest is not None else "gone",
                "notes": notes,
                **({"overridden_by": overriding} if overriding else {}),
                **({"signature_was": d["signature"]} if digest is not None and d.get("signature") else {}),
            }
        )
    with_signature = [c for c in changes if "signature_was" in c]
    now_signed = signatures_of(sorted({c["path"] for c in with_signature})) if signatures_of and with_signature else {}
    for c in with_signature:
        now_sig = now_signed.get(c["path"], {}).get(c["symbol"])
        if now_sig is None or now_sig == c["signature_was"]:
            del c["signature_was"]  # its body changed, not how it is called
        else:
            c["signature_now"] = now_sig
    return changes


def shown(changes: list[dict[str, Any]], per_note: bool) -> list[dict[str, Any]]:
    """Changes as an answer shows them: what changed, which notes name it, the call that reads it."""
    out = []
    for c in changes[:100]:
        item = {k: c[k] for k in ("name", "symbol", "path", "change")}
        if per_note:
            item["named_in"] = ["the file note" if n == FILE_NOTE else n for n in c["notes"]]
        if c.get("overridden_by"):
            item["overridden_by"] = c["overridden_by"]  # their notes describe an override of it
        if c.get("signature_now"):
            item.update(signature_was=c["signature_was"], signature_now=c["signature_now"])
        item["read_with"] = (
            f"get_artifact(path={c['path']!r}, kind='source', symbol={c['symbol']!r})"
            if c["change"] == "changed"
            else f"find_references({_leaf(c['symbol'])!r})"
        )
        out.append(item)
    return out


def _unfinished(head: str, symbol: str, new: str, left: list[OldUse]) -> str:
    """A rename made where the symbol is defined only: what the note must say of the code as it is."""
    shown = "; ".join(f"{u.path}:{u.line} `{u.text[:120]}`" for u in left[:USES_SHOWN])
    more = f" (and {len(left) - USES_SHOWN} more: find_references({_leaf(symbol)!r}))" if len(left) > USES_SHOWN else ""
    return (
        f"{head}: the rename is not finished — its definition is now `{new}`, but {len(left)} use(s) still "
        f"name the old `{_leaf(symbol)}` and no longer resolve: {shown}{more}. Describe the code as it is: "
        f"such a use is a bug to mention (it fails when run), not a use of `{new}`."
    )


def changed_code(
    changes: list[dict[str, Any]],
    workspace: str,
    limit: int = CHANGED_CODE_CHARS,
    renamed: Callable[[str, str], str | None] | None = None,
    old_uses: Callable[[str], list[OldUse]] | None = None,
) -> str:
    """A refresh prompt's section: the code named by the notes that changed, as it is now (whole
    lines, within ``limit``; what does not fit is named with the call that reads it); a gone one
    with the name it was renamed to when ``renamed`` (symbol, path → new name) knows it, and
    whether that rename is finished: the uses that still name the old symbol (``old_uses``)."""
    if not changes:
        return ""
    from llmem.code.outline import build_outline, iter_symbols

    blocks: list[str] = []
    room = limit
    for c in changes:
        head = f"- `{c['name']}` ({c['path']}#{c['symbol']})" + (
            f", which {', '.join(f'`{n}`' for n in c['overridden_by'])} overrode (an override of nothing now?)"
            if c.get("overridden_by")
            else ""
        )
        if c["change"] == "gone":
            new = renamed(c["symbol"], c["path"]) if renamed is not None else None
            left = old_uses(c["symbol"]) if old_uses is not None and new else []
            if left:
                blocks.append(_unfinished(head, c["symbol"], str(new), left))
            elif new:
                blocks.append(
                    f"{head}: gone — renamed to `{new}`, and no use of the old name remains; write the new name."
                )
            else:
                blocks.append(f"{head}: gone — nothing defines it now (renamed or removed?); fix or drop the mention.")
            continue
        try:
            data = Path(workspace, *c["path"].split("/")).read_bytes()
        except OSError:
            blocks.append(f"{head}: changed (unreadable now).")
            continue
        outline = build_outline(c["path"], data)
        sym = next((s for s in iter_symbols(outline) if s.qualified_name == c["symbol"]), None)
        if sym is None:
            blocks.append(f"{head}: changed.")
            continue
        if c.get("signature_now"):
            head += f" — its signature changed: was `{c['signature_was']}`, now `{c['signature_now']}`"
        lines = data.decode("utf-8", "replace").splitlines()[sym.start_line - 1 : sym.end_line]
        call = f"get_artifact(path={c['path']!r}, kind='source', symbol={c['symbol']!r})"
        body: list[str] = []
        used = 0
        for line in lines:
            if used + len(line) + 1 > room - 200:
                body.append(f"… (the rest is left out for size: {call} reads it)")
                break
            body.append(line)
            used += len(line) + 1
        room -= used
        fence = f"```{outline.language or ''}"
        blocks.append(f"{head}, lines {sym.start_line}-{sym.end_line}, changed:\n{fence}\n" + "\n".join(body) + "\n```")
    return (
        "\n## Code named in what was written before that changed since\n"
        "Check what it says about this code against the code as it is now:\n" + "\n".join(blocks) + "\n"
    )
