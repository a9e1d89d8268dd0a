"""``find_references``: every place a symbol is used across the workspace, each with its kind.

How it finds them: every file the workspace walk keeps (source, manifests, Markdown, and the
text files of no outlined language such as Dockerfiles, YAML, shell; plus ``.github/``) is
searched for the name as a whole word, exactly as ``grep -w`` would (a word character is a
letter, digit or underscore). Each occurrence is then classified by the file's parser
(:mod:`llmem.code.references_parse`): ``import``, ``call``, ``reference`` (any other identifier:
a name, an attribute, a type, a parameter, a keyword argument), ``entry-point`` (a
``pyproject.toml`` script, a ``package.json`` bin/main/exports line, a Dockerfile
ENTRYPOINT/CMD) or ``text`` (a comment, a string, a file of no parsed language). Definitions
of the name are answered apart (``definitions``) and are not uses; so every line ``grep -w``
finds is answered, as a use or a definition (without ``path``). One entry per occurrence:
``path``, ``line``, ``column`` (1-based, counted in bytes of UTF-8), ``kind``, ``in`` (the
innermost function or class around it, by its qualified name) and the line's text, trimmed;
uses in code come before ``text`` mentions, then by place.

With ``path`` (the file that defines the symbol) only the uses of *that* definition are
answered: those in its own file, and those in files that import it — Python: ``from m import
x [as y]`` with absolute or relative module names, ``import m [as y]`` then ``m.x``,
re-exports through any module that imports it (``__init__``), ``from m import *``; TypeScript
and JavaScript: ``import {x [as y]} from './rel'``, ``import * as ns``, ``export {x} from``,
``export * from`` for relative specifiers. Text and entry-point mentions count in files under
the definition's project folder (the nearest folder above it with a manifest); a pyproject
entry point ``"m:x"`` counts wherever it is when ``m`` resolves to it. When ``symbol`` is the
name the file is imported by (``paths`` for ``llmem/core/paths.py``, the package for an
``__init__.py``, ``lib`` for ``lib.ts``) and the file defines no such symbol, the question is
who imports that module (``resolution: "module"``): the import lines of the files that import it
or anything from it, the uses of a name it is bound to (``import a.mod as m`` then ``m``), and
pyproject entry points in it; the words of its name elsewhere (a README's "server") are left
out, and so is its own file. Go, Rust and Java are not resolved: the uses of the name in code
(not ``text``) in files of the same language are answered, with ``resolution: "by-name"``.
Shadowing (a local of the same name) is not followed. How imports are followed is
:mod:`llmem.code.references_imports`; what is kept of the files, and for how long,
:mod:`llmem.code.references_files`.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmem.code.answer_pages import cursor_after, fill_page, question_tag, start_after
from llmem.code.cli_commands import cli_command
from llmem.code.outline import is_test_path, iter_symbols, symbol_hashes
from llmem.code.references_arity import calls_not_fitting
from llmem.code.references_files import MAX_FILE_BYTES, SourceFile, Use, WorkspaceFiles
from llmem.code.references_imports import (
    RESOLVED,
    absolute_module,
    module_name,
    project_of,
    python_bindings,
    stems,
    ts_bindings,
    ts_resolve,
)
from llmem.code.references_parse import CODE_LANGUAGES, language_of
from llmem.code.references_receivers import MAYBE, NO, Judge, Verdict
from llmem.code.references_unresolved import broken_imports, subclass_only_uses, unresolved_uses
from llmem.core.errors import InvalidArgument, SourceNotFound
from llmem.core.paths import resolve_in_workspace

if TYPE_CHECKING:
    from llmem.code.symbol_history import SymbolHistory

__all__ = ["KINDS", "TESTS", "Found", "ReferenceFinder", "by_file", "finder_for", "tests_kept"]

#: The kinds of a use, in the order ``by_kind`` lists them.
KINDS = ("import", "call", "reference", "parameter", "entry-point", "text")
#: ``tests=``: keep the uses in test files (:func:`llmem.code.outline.is_test_path`), leave them out, or only them.
TESTS = ("include", "exclude", "only")
DEFINITIONS_SHOWN = 50
_SAME = "symbol, path, kind and tests"
BY_FILE_SHOWN = 50


@dataclass
class Found:
    """What :meth:`ReferenceFinder.collect` found: the files read, the definitions, the file asked
    about (``target``), how uses were found, and the uses in answer order; with ``target``, the
    uses of its name judged not to be of it (``dropped``: place → the reason ``left_out`` gives)
    and those that may be (``uncertain``: place → why)."""

    files: dict[str, SourceFile]
    definitions: list[dict[str, Any]]
    target: str | None
    resolution: str
    uses: list[Use]
    dropped: dict[tuple[str, int, int], str] = field(default_factory=dict)
    uncertain: dict[tuple[str, int, int], str] = field(default_factory=dict)


#: Files whose imports check_references judges (Python; TypeScript/JavaScript relative imports).
_IMPORTING = (".py", ".pyi", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
#: ``left_out`` reasons for the uses of the name judged not to be of the definition asked about.
NOT_IT = {
    "parameter": "parameter and keyword-argument names (memory=True, def f(memory)): names of their own",
    "local": "a local of the same name in the function it lies in (a parameter or a variable)",
    "attribute": "x.name in the definition's own file: another object's attribute, not this module-level one",
    "receiver": "x.name on a receiver of another type (a list, a dict, a str, a global such as Object or JSON, "
    "a module, a package's name, another class or interface)",
    "static": "x.name on an instance, where the member is static (it is used through its class: C.name)",
    "bare": "a bare name, where the definition is a member of a class (x.name)",
    "stored": "x.name = …: an attribute set (another object's, or the name replaced), not a call or a read",
    "import": "an import (of a module, or of a module's name), where the definition is a member of a class",
    "unresolved": "unresolved: imported from a module that does not define the name (moved, renamed or removed?) "
    "and the uses of those imports; find_references without path marks each, check_references lists them",
}


def not_it_reason(u: Use, verdict: Verdict, members_only: bool) -> str:
    """The ``left_out`` reason of a use judged not to be of the definitions (``verdict`` NO)."""
    if verdict.stored:
        return NOT_IT["stored"]
    if verdict.left:
        return NOT_IT[verdict.left]
    return NOT_IT["bare" if not u.qualifier and members_only else "local" if not u.qualifier else "receiver"]


def tests_kept(path: str, tests: str) -> bool:
    return tests == "include" or is_test_path(path) == (tests == "only")


def by_file(uses: list[Use]) -> dict[str, Any]:
    """Uses per file, in answer order (code before tests), the first files shown and the rest counted."""
    counts: dict[str, int] = {}
    for u in uses:
        counts[u.path] = counts.get(u.path, 0) + 1
    out: dict[str, Any] = {"by_file": dict(list(counts.items())[:BY_FILE_SHOWN])}
    if len(counts) > BY_FILE_SHOWN:
        out["by_file_more"] = {"files": len(counts) - BY_FILE_SHOWN, "uses": sum(list(counts.values())[BY_FILE_SHOWN:])}
    return out


_SYMBOL = re.compile(r"^[A-Za-z_$][\w$]*$")
_QUALIFIED = re.compile(r"^#?[A-Za-z_$][\w$]*(\.#?[A-Za-z_$][\w$]*)*$")  # Client.request: one definition


class ReferenceFinder:
    """Finds references in one workspace; thread-safe, one per workspace per process (:func:`finder_for`)."""

    def __init__(self, workspace: Path) -> None:
        self.ws = workspace
        self.src = WorkspaceFiles(workspace)
        #: held by every question of this workspace (the files and their caches are shared)
        self.lock = threading.Lock()

    # -- the question -----------------------------------------------------------------------------

    def find(
        self,
        symbol: str,
        path: str | None = None,
        kind: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        answer_chars: int = 20_000,
        tests: str = "include",
        history: SymbolHistory | None = None,
        beside: Callable[[Found, str], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """``beside``: what the answer about one definition adds (the constructor calls of an
        ``__init__``: references_constructors, which reads this module's finder), given the uses
        found and ``tests``."""
        from llmem.code.references_qualified import qualified_target

        symbol = self.validate(symbol, kind, tests)
        with self.lock:  # the caches are shared by every caller of this workspace
            asked, symbol = symbol, self.private_twin(symbol)
            try:
                bare, path, only = qualified_target(self, symbol, path)
            except InvalidArgument as exc:
                gone = self._gone_qualified(symbol, path, history)
                if gone is None:
                    raise
                return self._renamed_away(symbol, path, gone, exc, kind, limit, cursor, answer_chars, tests, history)
            out = self._find(bare, path, kind, limit, cursor, answer_chars, tests, history, only, beside=beside)
            if asked != symbol:
                out["asked"] = asked
                out["note"] = f"nothing is named {asked}; answered for the #private member {symbol}"
            return out

    def _gone_qualified(self, symbol: str, path: str | None, history: SymbolHistory | None) -> dict[str, Any] | None:
        """Where the store saw ``symbol`` (``Class.member``) defined before it went, or None."""
        if history is None or "." not in symbol:
            return None
        key = resolve_in_workspace(self.ws, path, field="path").key if path is not None else None
        return history.gone(key, symbol, self.src.outline_content(key) if key is not None else None)

    def _renamed_away(
        self,
        symbol: str,
        path: str | None,
        gone: dict[str, Any],
        exc: InvalidArgument,
        kind: str | None,
        limit: int,
        cursor: str | None,
        answer_chars: int,
        tests: str,
        history: SymbolHistory | None,
    ) -> dict[str, Any]:
        """``Class.member`` that no longer exists: its uses by name that no longer resolve (the
        ones check_references judges broken), where it was, and the other definitions of the name as a hint."""
        bare = symbol.rsplit(".", 1)[1]
        out = self._find(bare, None, kind, limit, cursor, answer_chars, tests, history, None, True)
        out["qualified"] = symbol
        out["path"] = path  # the path asked: the uses are searched by name, in every file
        out["last_defined"] = gone
        others = (exc.details or {}).get("definitions_of_the_name")
        if others:
            out["other_definitions_of_the_name"] = others
        out["note"] = (
            f"nothing defines {symbol} now (last defined in {gone.get('path')}:{gone.get('line')}"
            + (f", renamed to {gone['renamed_to']}" if gone.get("renamed_to") else "")
            + f"); these {out['total']} uses of {bare} no longer resolve (unresolved: true, with why)"
            + ("; other definitions of the name are a hint only (other_definitions_of_the_name)." if others else ".")
        )
        return out

    def private_twin(self, symbol: str) -> str:
        """``m`` or ``C.m`` when something defines it, else ``#m`` / ``C.#m`` when a class defines
        that #private member (TypeScript/JavaScript: the outline names it with ``#``)."""
        head, _, last = symbol.rpartition(".")
        if last.startswith("#"):
            return symbol
        files = {k: f for k in self.src.paths() if (f := self.src.file(k)) is not None}
        if self.definitions_named(last, files) or not self.definitions_named(f"#{last}", files):
            return symbol
        return f"{head}.#{last}" if head else f"#{last}"

    @staticmethod
    def validate(symbol: str, kind: str | None = None, tests: str = "include") -> str:
        """The symbol stripped, once it, ``kind`` and ``tests`` are checked (errors name the field)."""
        symbol = symbol.strip()
        if not _QUALIFIED.match(symbol):
            last = re.findall(r"[A-Za-z_$][\w$]*", symbol)
            raise InvalidArgument(
                f"symbol {symbol[:100]!r} is not a name",
                details={"field": "symbol", "rule": "an identifier (letters, digits, _ or $), or Class.member"}
                | ({"did_you_mean": last[-1]} if last else {}),
                next_action=f"Give the bare name, e.g. symbol={last[-1]!r}." if last else "Give a bare name.",
            )
        if kind is not None and kind not in KINDS:
            raise InvalidArgument(
                f"kind {kind!r} is not a kind of use",
                details={"field": "kind", "rule": "one of the kinds", "allowed": list(KINDS)},
            )
        if tests not in TESTS:
            raise InvalidArgument(
                f"tests {tests!r} is not one of {', '.join(TESTS)}",
                details={"field": "tests", "rule": "include, exclude or only", "allowed": list(TESTS)},
            )
        return symbol

    def broken_in(self, key: str, history: SymbolHistory | None = None) -> list[Any]:
        """The uses of one file that no longer resolve (a note's refresh prompt lists them), judged
        as check_references judges them: with what ``history`` remembers of symbols gone."""
        from llmem.code.check import check_files
        from llmem.code.references_unresolved import gone_symbol_of

        with self.lock:
            files = {k: f for k in self.src.paths() if (f := self.src.file(k)) is not None}
            if key not in files:
                return []
            return check_files(
                self.src,
                files,
                [key],
                history.remembered if history is not None else None,
                history.gone_member if history is not None else None,
                gone_symbol_of(self.src, history),
            ).findings

    def collect(self, symbol: str, path: str | None, only: str | None = None) -> Found:
        """Every use of ``symbol`` (of its definition in ``path``; ``only``: of the one of those
        with that qualified name), with what the answer says beside."""
        paths = self.src.paths()
        files = {k: f for k in paths if (f := self.src.file(k)) is not None}
        definitions = self.definitions_named(symbol, files)
        if path is None:
            uses = [u for k, f in files.items() for u in self.src.occurrences(k, f, symbol)]
            uses = [u for u in uses if u.kind != "definition"]
            uses.sort(key=Use.order)
            return Found(files, definitions, None, "by-name", uses)
        target = self._target(path, symbol, files, definitions)
        definitions = [d for d in definitions if d["path"] == target]
        if only is not None:
            definitions = [d for d in definitions if d["symbol"] == only] or definitions
        module = not definitions
        if module:
            name = module_name(target, set(files)) if language_of(target) == "python" else target
            definitions = [{"path": target, "line": 1, "column": 1, "kind": "module", "symbol": name}]
            uses, resolution = self._resolved(target, symbol, files, True)
            judge = None
        else:
            judge = Judge(self.src, files, definitions)
            if judge.members_only:
                uses, resolution = self._member_uses(target, symbol, files)
            else:
                uses, resolution = self._resolved(target, symbol, files, False)
        found = Found(files, definitions, target, resolution, [])
        for u in uses:
            if u.kind == "definition":
                continue
            why = self._not_it(u, target, judge, found) if judge is not None else None
            if why is None:
                found.uses.append(u)
            else:
                found.dropped[u.key()] = why
        found.uses.sort(key=Use.order)
        return found

    def _broken_imports(
        self, symbol: str, found: Found, history: SymbolHistory | None
    ) -> tuple[dict[tuple[str, int, int], str], dict[str, Any] | None]:
        """Imports of ``symbol`` (Python, TypeScript/JavaScript) from a workspace module that does not define or export it, and
        their uses; with a definition asked about (``found.target``), among the uses left out,
        which are then left out as unresolved (never as another of the same name)."""
        if not found.definitions or not any(d["path"].endswith(_IMPORTING) for d in found.definitions):
            return {}, None
        uses = found.uses
        if found.target is not None:
            kept = {u.key() for u in found.uses}
            uses = [
                u
                for k, f in found.files.items()
                if k != found.target and k.endswith(_IMPORTING)
                for u in self.src.occurrences(k, f, symbol)
                if u.key() not in kept and u.kind in ("import", "call", "reference")
            ]
        broken, last = broken_imports(self.src, symbol, found.files, uses, history)
        if found.target is not None:
            found.dropped |= dict.fromkeys(broken, NOT_IT["unresolved"])
        return broken, last

    def _not_it(self, u: Use, target: str, judge: Judge, found: Found) -> str | None:
        """Why a use of the name is not one of the definitions (a ``left_out`` reason), or None;
        a use that may be is noted in ``found.uncertain``."""
        if u.kind == "parameter":
            return NOT_IT["parameter"]
        if u.kind == "import" and judge.members_only:
            return NOT_IT["import"]
        if u.kind not in ("call", "reference"):
            return None
        if not judge.members_only and u.qualifier and u.path == target:
            return NOT_IT["attribute"]
        if not judge.members_only and u.qualifier:
            return None  # m.x through a module that imports it: followed by the imports
        verdict = judge.judge(u)
        if verdict.verdict == NO:
            return not_it_reason(u, verdict, judge.members_only)
        if verdict.verdict == MAYBE:
            found.uncertain[u.key()] = verdict.why
        return None

    def _find(
        self,
        symbol: str,
        path: str | None,
        kind: str | None,
        limit: int,
        cursor: str | None,
        answer_chars: int,
        tests: str,
        history: SymbolHistory | None,
        only: str | None = None,
        broken_only: bool = False,
        beside: Callable[[Found, str], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        found = self.collect(symbol, path, only)
        broken: dict[tuple[str, int, int], str] = {}
        misfit: dict[tuple[str, int, int], str] = {}
        imports_broken, last = self._broken_imports(symbol, found, history) if not broken_only else ({}, None)
        if broken_only:  # a qualified name renamed away: only the uses of the name that no longer resolve
            broken = unresolved_uses(self.src, symbol, found.files, found.uses, {}, history)
            found.uses = [u for u in found.uses if u.key() in broken]
        files, definitions, target, resolution = found.files, found.definitions, found.target, found.resolution
        uses = found.uses
        left_out = (
            self._left_out(symbol, target, files, uses, definitions, found.dropped) if target is not None else None
        )
        every_kind = dict.fromkeys(KINDS, 0)
        in_tests = 0
        for u in uses:
            in_tests += u.in_tests() and (kind is None or u.kind == kind)
        kept = [u for u in uses if tests_kept(u.path, tests)]
        for u in kept:
            every_kind[u.kind] += 1
        chosen = [u for u in kept if kind is None or u.kind == kind]

        def order(u: Use) -> tuple[bool, bool, bool, str, int, int]:
            """Answer order: code before text, certain uses before uncertain ones, then Use.order."""
            return (u.kind == "text", u.key() in found.uncertain, *u.order()[1:])

        chosen.sort(key=order)
        # by_kind counts what total counts; with a kind filter the other kinds are in by_kind_all.
        by_kind = every_kind if kind is None else {k: n if k == kind else 0 for k, n in every_kind.items()}
        tag = question_tag(symbol, target, kind, tests, only)
        start = start_after(cursor, tag, [order(u) for u in chosen], _SAME) if cursor else 0
        out: dict[str, Any] = {
            "symbol": symbol,
            **({"qualified": only} if only else {}),
            "path": target,
            "resolution": resolution,
            "definitions": definitions[:DEFINITIONS_SHOWN],
            "definitions_total": len(definitions),
            "total": len(chosen),
            "by_kind": by_kind,
            **({"by_kind_all": every_kind} if kind is not None else {}),
            "files": len({u.path for u in chosen}),
            **by_file(chosen),
            "tests": tests,
            "in_tests": in_tests,
            "scanned_files": len(files),
        }
        if tests != "include":
            matching = sum(1 for u in uses if kind is None or u.kind == kind)
            left = in_tests if tests == "exclude" else matching - in_tests
            if left:
                out["tests_left_out" if tests == "exclude" else "non_tests_left_out"] = left
        if left_out:
            out["left_out"] = left_out
        uncertain = sum(1 for u in chosen if u.key() in found.uncertain)
        if uncertain:
            out["uncertain"] = uncertain
            out["uncertain_means"] = (
                "uses whose receiver's type is not known (an unannotated parameter, a call's result): they may "
                "be of another class's member of the same name; each says why (receiver)"
            )
        if broken_only:
            out |= {"definitions": [], "definitions_total": 0, "unresolved": True, "unresolved_total": len(uses)}
        elif target is None and not definitions:
            out |= self._undefined(symbol, files, uses)
            broken = unresolved_uses(self.src, symbol, files, uses, out, history)
            dropped = out.get("tests_left_out") or out.get("non_tests_left_out")
            if broken and dropped:
                out["note"] += f" ({dropped} of its uses are left out by tests={tests!r}: tests='include' lists them)"
        elif definitions:
            broken = subclass_only_uses(self.src, symbol, files, chosen, history)
            if broken:
                out["unresolved"] = True
                out["unresolved_total"] = len(broken)
                out["unresolved_means"] = (
                    "self.x in a class where neither it nor its bases define x, only a subclass does: it fails on "
                    "an instance of that class (a method renamed in its class only), or is a template method; each says why"
                )
            listed = {u.key() for u in chosen} & imports_broken.keys()
            if listed:
                broken |= {k: imports_broken[k] for k in listed}
                out["unresolved"] = True
                out["unresolved_total"] = len(broken)
                out["note"] = (
                    f"{len(listed)} use(s) import {symbol} from a module of the workspace that does not define or export it, "
                    "or use such an import (unresolved: true, with why): moved, renamed or removed? "
                    "check_references() lists them."
                )
            if imports_broken and last is not None:
                out["last_defined"] = last
            if target is not None:  # one definition's file: do its calls still fit its signature?
                misfit = calls_not_fitting(self.src, files, chosen, definitions, history)
                if misfit:
                    out["calls_not_fitting"] = len(misfit)
                    out["calls_not_fitting_means"] = (
                        "calls whose arguments do not fit the definition's signature as it is now (a required "
                        "parameter added, one removed …): arguments_do_not_fit on each, with why; "
                        "check_references() lists every such call of the workspace"
                    )
                if beside is not None:
                    out |= beside(found, tests)
        unread = sorted(k for k, f in files.items() if f.data is None)
        if unread:
            out["not_searched"] = {
                "count": len(unread),
                "why": f"binary (a NUL byte) or over {MAX_FILE_BYTES:,} bytes",
                "paths": unread[:5],
            }
        entry = self._entry_point(target, definitions, files) if target is not None else None
        if entry is not None:
            out["entry_point"] = entry
        if not chosen and "note" not in out:
            where = f"that definition in {target}" if target else "the name"
            out["note"] = (
                (f"An entry point, {entry}. " if entry else "")
                + f"No use of {where} in the {len(files)} files scanned"
                + (f" of kind {kind!r} ({len(kept)} of other kinds)" if kind and kept else "")
                + (
                    f" outside tests ({in_tests} in tests, left out: tests='exclude')"
                    if tests == "exclude" and in_tests
                    else ""
                )
                + (
                    f" in tests ({out['non_tests_left_out']} outside, left out: tests='only')"
                    if "non_tests_left_out" in out
                    else ""
                )
                + (f"; it is defined {len(definitions)} time(s), listed in definitions." if definitions else ".")
            )

        def item_at(pos: int) -> dict[str, Any]:
            u = chosen[pos]
            item = self.use_item(u, files[u.path], symbol)
            if u.key() in found.uncertain:
                item["uncertain"] = True
                item["receiver"] = found.uncertain[u.key()]
            if u.key() in broken:
                item["unresolved"] = True
                item["why"] = broken[u.key()]
            if u.key() in misfit:
                item["arguments_do_not_fit"] = misfit[u.key()]
            return item

        room = answer_chars - len(json.dumps(out, ensure_ascii=False)) - 600
        results, pos = fill_page(len(chosen), start, limit, room, item_at)
        out["count"] = len(results)
        out["results"] = results
        out["next_cursor"] = cursor_after(tag, order(chosen[pos - 1])) if pos < len(chosen) and results else None
        return out

    def use_item(self, u: Use, f: SourceFile, symbol: str) -> dict[str, Any]:
        """One use as answered: where, its kind, what it lies in, the line's text."""
        item = {
            "path": u.path,
            "line": u.line,
            "column": u.column + 1,
            "kind": u.kind,
            "in": self.src.enclosing(u.path, f, u.line, u.column),
            "text": f.line_text(u.line),
        }
        if u.name != symbol:
            item["as"] = u.name
        call = self.call_text(u, f)
        if call is not None:
            item["call"] = call
        return item

    def _entry_point(self, target: str, definitions: list[dict[str, Any]], files: dict[str, SourceFile]) -> str | None:
        """How the one function asked about is run from outside the code (a CLI command), or None."""
        f = files.get(target)
        outline = self.src.outline(target, f) if f is not None and len(definitions) == 1 else None
        if outline is None:
            return None
        sym = next((s for s in iter_symbols(outline) if s.qualified_name == definitions[0]["symbol"]), None)
        return cli_command(sym.decorators, sym.qualified_name) if sym is not None else None

    def call_text(self, u: Use, f: SourceFile) -> str | None:
        """A call spread over several lines, whole (bounded): its arguments are on the lines after."""
        if u.kind != "call" or f.data is None:
            return None
        span = self.src.facts(u.path, f).calls.get((u.line, u.column))
        if span is None or span[0] == span[2]:
            return None
        return f.span_text((span[0], span[1]), (span[2], span[3]))

    def left_out(self, symbol: str, found: Found) -> dict[str, Any] | None:
        """What ``grep -w symbol`` finds beyond ``found`` (the uses of one definition), by reason."""
        assert found.target is not None
        return self._left_out(symbol, found.target, found.files, found.uses, found.definitions, found.dropped)

    def _left_out(
        self,
        symbol: str,
        target: str,
        files: dict[str, SourceFile],
        uses: list[Use],
        definitions: list[dict[str, Any]],
        dropped: dict[tuple[str, int, int], str],
    ) -> dict[str, Any] | None:
        """What ``grep -w symbol`` finds that the answer for one definition leaves out, by reason,
        so that totals add up: occurrences, as ``total`` counts them (a line with two is two)."""
        kept = {u.key() for u in uses} | {(d["path"], d["line"], d["column"] - 1) for d in definitions}
        project = project_of(target, files)
        reasons: dict[str, int] = {}
        where: dict[str, int] = {}
        for key, f in files.items():
            for u in self.src.occurrences(key, f, symbol):
                if u.key() in kept:
                    continue
                if u.key() in dropped:
                    why = dropped[u.key()]
                elif u.kind == "parameter":
                    why = NOT_IT["parameter"]
                elif u.kind == "definition":
                    why = "definitions of the same name elsewhere (find_references without path lists them)"
                elif key == target:
                    why = "the module's own file"
                elif u.kind == "text" and project and not key.startswith(project + "/"):
                    why = f"text mentions outside the definition's project folder {project}/"
                elif u.kind == "text":
                    why = "text mentions in files that do not import this definition"
                else:
                    why = "uses in files that do not import this definition (another of the same name)"
                reasons[why] = reasons.get(why, 0) + 1
                where[key] = where.get(key, 0) + 1
        if not reasons:
            return None
        ranked = sorted(where.items(), key=lambda kv: -kv[1])
        return {
            "count": sum(reasons.values()),
            "by_reason": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
            "files": len(where),
            "by_file": dict(ranked[:BY_FILE_SHOWN]),
            **({"by_file_more": len(ranked) - BY_FILE_SHOWN} if len(ranked) > BY_FILE_SHOWN else {}),
            "how": f"find_references({symbol!r}) without path answers every occurrence of the name, these too",
        }

    def _undefined(self, symbol: str, files: dict[str, SourceFile], uses: list[Use]) -> dict[str, Any]:
        """A name used in code that nothing in the workspace defines, imported from a workspace
        module: what is left of a rename or a removal. Nothing when no import of it resolves into
        the workspace (a builtin, a name from an installed package)."""
        keys = set(files)
        modules = {module_name(k, keys) for k in keys if language_of(k) == "python"}
        unresolved: list[dict[str, Any]] = []
        for u in uses:
            if u.kind != "import":
                continue
            facts = self.src.facts(u.path, files[u.path])
            for imp in facts.imports:
                if not imp.line <= u.line <= (imp.end_line or imp.line):
                    continue
                if language_of(u.path) == "python":
                    base = absolute_module(imp.module, imp.level, module_name(u.path, keys), u.path)
                    inside = base in modules or f"{base}.{symbol}" in modules
                    shown = "." * imp.level + imp.module
                else:
                    inside = ts_resolve(u.path, imp.module, keys) is not None
                    shown = imp.module
                if inside:
                    unresolved.append({"path": u.path, "line": u.line, "from": shown})
                break
        if not unresolved:
            return {}
        code = [u for u in uses if u.kind in ("import", "call", "reference")]
        imports = sum(1 for u in code if u.kind == "import")
        return {
            "note": f"no definition of {symbol} in the workspace: these {len(code)} uses ({imports} imports) "
            "refer to a name nothing defines — renamed or removed? The import lines that name a module of "
            "the workspace are in unresolved_imports.",
            "unresolved_imports": unresolved[:DEFINITIONS_SHOWN],
            "unresolved_imports_total": len(unresolved),
        }

    def definitions_named(self, symbol: str, files: dict[str, SourceFile]) -> list[dict[str, Any]]:
        """Every definition named ``symbol`` in ``files``."""
        return [d for k, f in files.items() if f.offsets(symbol) for d in self._definitions(k, f, symbol)]

    def _definitions(self, key: str, f: SourceFile, symbol: str) -> list[dict[str, Any]]:
        facts = self.src.facts(key, f)
        return [
            {"path": key, "line": line, "column": col + 1, "kind": kind, "symbol": qn}
            for name, line, col, kind, qn in facts.defs
            if name == symbol
        ]

    def _target(self, path: str, symbol: str, files: dict[str, SourceFile], definitions: list[dict[str, Any]]) -> str:
        where = sorted({d["path"] for d in definitions})
        rp = resolve_in_workspace(self.ws, path, field="path")
        if rp.key not in files:
            close = difflib.get_close_matches(rp.key, list(files), n=5, cutoff=0.5)
            reason = (
                "does not exist"
                if not rp.abs.exists()
                else "is a folder"
                if rp.abs.is_dir()
                else "is not a file the workspace walk keeps (ignored, binary or too large)"
            )
            raise SourceNotFound(
                f"path {rp.key!r} {reason}: give the file that defines {symbol!r}",
                details={
                    "field": "path",
                    "rule": "a file of the workspace",
                    "close_matches": close,
                    "defined_in": where,
                },
                next_action="Call find_references without path to see where the name is defined.",
            )
        if rp.key not in where and symbol not in stems(rp.key):
            raise InvalidArgument(
                f"{rp.key!r} does not define {symbol!r}"
                + (f"; it is defined in {', '.join(where[:5])}" if where else ""),
                details={
                    "field": "path",
                    "rule": "the file that defines the symbol, or a module named as the symbol",
                    "defined_in": where[:20],
                },
                next_action=f"Pass one of defined_in as path, or leave path out to get every use of {symbol!r}; "
                f"symbol={stems(rp.key)[0]!r} asks who imports that file.",
            )
        return rp.key

    # -- resolving one definition -------------------------------------------------------------------

    def _resolved(self, target: str, symbol: str, files: dict[str, SourceFile], module: bool) -> tuple[list[Use], str]:
        lang = language_of(target)
        # A module's own file does not use it; the words of its name elsewhere are mostly not about it.
        uses = [] if module else self.src.occurrences(target, files[target], symbol)
        if module:
            found, importers, entry = self._module_uses(target, symbol, files)
            resolution = "module"
        else:
            found, importers, entry = self._symbol_uses(target, symbol, files)
            resolution = "imports" if lang in RESOLVED else "by-name"
        uses += found
        seen = {u.key() for u in uses}
        project = project_of(target, files)
        for key, f in files.items():
            if key in importers or key == target or language_of(key) in CODE_LANGUAGES or f.data is None:
                continue
            facts = self.src.facts(key, f)
            lines = {line for line, mod, attr in facts.entry_refs if entry(mod, attr)}
            for word in {attr if not module else symbol for line, _mod, attr in facts.entry_refs if line in lines}:
                uses += [u for u in self.src.occurrences(key, f, word) if u.line in lines and u.key() not in seen]
            if not module and (project == "" or key.startswith(project + "/")):
                # an entry point naming another module's attribute of the same name is not a use
                other = {line for line, mod, attr in facts.entry_refs if not entry(mod, attr)}
                uses += [u for u in self.src.occurrences(key, f, symbol) if u.key() not in seen and u.line not in other]
        return _unique(uses), resolution

    def _member_uses(self, target: str, symbol: str, files: dict[str, SourceFile]) -> tuple[list[Use], str]:
        """A member of a class (a method, a class attribute) is used as ``x.name`` wherever ``x``
        may be an instance of it: an object made in another module needs no import of the class.
        So every occurrence in code of the same language is a candidate (judged by its receiver in
        :meth:`collect`), and text mentions count in those files and, outside code, in the
        definition's project folder."""
        lang = language_of(target)
        family = {lang} if lang not in RESOLVED else ({"python"} if lang == "python" else RESOLVED - {"python"})
        project = project_of(target, files)
        uses: list[Use] = []
        for key, f in files.items():
            if f.data is None:
                continue
            here = language_of(key)
            if here in family:
                uses += self.src.occurrences(key, f, symbol)
            elif here not in CODE_LANGUAGES and (project == "" or key.startswith(project + "/")):
                uses += [u for u in self.src.occurrences(key, f, symbol) if u.kind in ("text", "entry-point")]
        return uses, "receivers"

    def _symbol_uses(
        self, target: str, symbol: str, files: dict[str, SourceFile]
    ) -> tuple[list[Use], set[str], Callable[[str, str], bool]]:
        """The uses of the symbol defined in ``target`` outside it, the files that import it, and
        which pyproject entry points (module, attribute) name it."""
        lang = language_of(target)
        uses: list[Use] = []
        if lang == "python":
            bindings, modules = python_bindings(self.src, target, symbol, files)
        elif lang in RESOLVED:
            bindings, modules = ts_bindings(self.src, target, symbol, files)
        else:
            for key, f in files.items():
                if key != target and language_of(key) == lang:
                    uses += [u for u in self.src.occurrences(key, f, symbol) if u.kind != "text"]
            bindings, modules = {}, set()
        names = {n for _, n in modules}
        for key, (locals_, quals) in bindings.items():
            if key == target:
                continue
            f = files[key]
            for word in locals_ | names:
                uses += [
                    u
                    for u in self.src.occurrences(key, f, word)
                    if u.kind == "import"  # in a file that binds it: ``x as y`` names both
                    or (word in locals_ and u.qualifier == "")
                    or (u.qualifier in quals and (quals[u.qualifier], word) in modules)
                    or (word == symbol and u.kind == "text")
                ]
        return uses, set(bindings), lambda mod, attr: (mod, attr) in modules

    def _module_uses(
        self, target: str, symbol: str, files: dict[str, SourceFile]
    ) -> tuple[list[Use], set[str], Callable[[str, str], bool]]:
        """Who imports the module ``target`` (``symbol`` is its name): the import lines, and the
        uses of the name it is bound to (``import a.mod``, ``from a import mod [as m]``, ``import * as m``)."""
        keys = set(files)
        lang = language_of(target)
        own = module_name(target, keys) if lang == "python" else target
        parent = own.rpartition(".")[0]
        uses: list[Use] = []
        importers: set[str] = set()
        for key, f in files.items():
            if key == target or f.data is None or language_of(key) not in (RESOLVED if lang != "python" else {lang}):
                continue
            if lang == "python" and not f.offsets(symbol):
                continue  # every way of importing a Python module names it
            ranges: list[tuple[int, int]] = []
            locals_: set[str] = set()
            for imp in self.src.facts(key, f).imports:
                span = (imp.line, imp.end_line or imp.line)
                if lang != "python":
                    if ts_resolve(key, imp.module, keys) == target:
                        ranges.append(span)
                        locals_ |= {imp.alias} if imp.alias else set()
                    continue
                if imp.alias is not None:  # import a.b.mod [as m]
                    if imp.module == own or imp.module.startswith(own + "."):
                        ranges.append(span)
                        if imp.module == own and imp.alias != own:
                            locals_.add(imp.alias)
                    continue
                base = absolute_module(imp.module, imp.level, module_name(key, keys), key)
                if base == own or base.startswith(own + "."):
                    ranges.append(span)
                for name, local in imp.names:
                    if (f"{base}.{name}" if base else name) == own:
                        ranges.append(span)
                        locals_.add(local)
            if not ranges:
                continue
            importers.add(key)
            for word in locals_ | {symbol}:
                for u in self.src.occurrences(key, f, word):
                    if any(a <= u.line <= b for a, b in ranges):
                        uses.append(Use(u.path, u.line, u.column, "import", u.qualifier, u.name))
                    elif (word in locals_ and u.qualifier == "") or (word == symbol and u.qualifier == parent):
                        uses.append(u)
        return uses, importers, lambda mod, attr: mod == own

    # -- names a note mentions (llmem.code.note_deps) ---------------------------------------------

    def definitions_of(self, names: Collection[str], near: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """The definitions of each bare name across the workspace, as ``find_references`` lists
        them (``path``, ``line``, ``kind``, ``symbol``), each with the outline's ``hash`` of that
        symbol (None when the outline does not list it), its file's ``size`` and ``mtime_ns``, and
        ``linked``: its file imports ``near`` or is imported by it. One pass over the files for
        all the names; only files where one of them stands are parsed."""
        wanted = sorted({n for n in names if _SYMBOL.match(n) and "$" not in n})
        if not wanted:
            return {}
        with self.lock:
            files = {k: f for k in self.src.paths() if (f := self.src.file(k)) is not None and f.data is not None}
            found: dict[str, list[dict[str, Any]]] = {}
            for key, f in files.items():
                present = {n for n in wanted if f.offsets(n)}
                if not present:
                    continue
                defs = [d for d in self.src.facts(key, f).defs if d[0] in present]
                if not defs:
                    continue
                outline = self.src.outline(key, f)
                hashes = symbol_hashes(outline) if outline is not None else {}
                for name, line, _col, kind, qn in defs:
                    found.setdefault(name, []).append(
                        {"path": key, "line": line, "kind": kind, "symbol": qn, "hash": hashes.get(qn),
                         "size": f.size, "mtime_ns": f.mtime_ns, "linked": False}
                    )  # fmt: skip
            if near is not None and near in files:
                keys = set(files)
                imported = self._imported(near, files[near], keys)
                for defs_of_name in found.values():
                    for d in defs_of_name:
                        d["linked"] = d["path"] in imported or near in self._imported(d["path"], files[d["path"]], keys)
            return found

    def symbol_hashes(self, key: str) -> dict[str, str] | None:
        """The outline's symbol hashes of ``key`` as the file is now; None when it is gone or binary."""
        with self.lock:
            f = self.src.file(key)
            outline = self.src.outline(key, f) if f is not None else None
            return symbol_hashes(outline) if outline is not None else None

    def _imported(self, key: str, f: SourceFile, keys: set[str]) -> set[str]:
        """The workspace files ``key`` imports (Python and TypeScript/JavaScript)."""
        lang = language_of(key)
        if lang not in RESOLVED or f.data is None:
            return set()
        imports = self.src.facts(key, f).imports
        if lang != "python":
            return {t for imp in imports if (t := ts_resolve(key, imp.module, keys)) is not None}
        modules = {module_name(k, keys): k for k in keys if language_of(k) == "python"}
        own = module_name(key, keys)
        out: set[str] = set()
        for imp in imports:
            base = absolute_module(imp.module, imp.level, own, key)
            for module in (base, *(f"{base}.{name}" if base else name for name, _ in imp.names)):
                if module in modules:
                    out.add(modules[module])
        return out


def _unique(uses: list[Use]) -> list[Use]:
    seen: dict[tuple[str, int, int], Use] = {}
    for u in uses:
        seen.setdefault(u.key(), u)
    return list(seen.values())


_FINDERS: dict[str, ReferenceFinder] = {}
_FINDERS_GUARD = threading.Lock()


def finder_for(workspace: Path) -> ReferenceFinder:
    """The one finder of ``workspace`` in this process (its caches warm across calls)."""
    key = str(workspace)
    with _FINDERS_GUARD:
        finder = _FINDERS.get(key)
        if finder is None:
            finder = _FINDERS[key] = ReferenceFinder(workspace)
        return finder
