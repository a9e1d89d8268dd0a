"""``check_references``: the names used in the workspace that no longer resolve to a definition.

What a half-done rename leaves behind: ``name=GitTools.DIFF`` once the member is ``DIFF_REF``,
``from m import old`` once ``m`` defines ``new``, ``import { normalizePath } from './path-utils.js'``
once that file exports ``normalizeFsPath``, a call of a function renamed in its own file. Each
use is judged by the file's binder (:mod:`llmem.code.check_python` through ``ast``,
:mod:`llmem.code.check_treesitter` for TypeScript, JavaScript and Go) and followed across files
(:mod:`llmem.code.check_resolve`) the way ``find_references`` follows imports; the files are
those ``find_references`` reads (:class:`~llmem.code.references_files.WorkspaceFiles`: the
workspace walk, each file re-read when its size or mtime changed).

A use the check cannot judge is never reported as broken: it is counted in ``not_checked`` by
reason (an attribute of a value of unknown type, a module outside the workspace, a class with a
base from a third-party package, ``getattr``, a star import from outside, Rust and Java …).
Nothing here knows about MCP or the store: what the store remembers of renamed and removed
symbols comes in through ``remembered`` (:mod:`llmem.code.symbol_history`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from posixpath import dirname
from typing import Any

from llmem.code.check_arity import check_call
from llmem.code.check_python import EXPRESSION_ATTRIBUTE, ImportName, NameUse, PyFile
from llmem.code.check_resolve import Finding, Missing, PythonWorld, Target, file_analysis
from llmem.code.check_scripts import GoWorld, ScriptWorld, go_builtin, js_global
from llmem.code.check_treesitter import TsFile
from llmem.code.references_files import SourceFile, WorkspaceFiles
from llmem.code.references_imports import absolute_module
from llmem.code.references_parse import language_of

__all__ = ["CheckRun", "check_files", "near_names"]

_JS_FAMILY = frozenset({"typescript", "tsx", "javascript"})
_UNRESOLVED_LANGUAGES = frozenset({"rust", "java"})
_SILENCED_PY = re.compile(
    r"#\s*(noqa(?!:)|noqa:[^#]*\b(F821|F822|F401|F811|F405)\b|type:\s*ignore(?!\[)|type:\s*ignore\[[^\]]*(name-defined|attr-defined|call-arg))"
)
_SILENCED_TS = re.compile(r"@ts-(ignore|expect-error)")
OUTSIDE = "an attribute of a module or class outside the workspace"


#: What the store remembers of a gone member of a class, by its name: (path, qualified name, line).
GoneMember = Callable[[str], "tuple[str, str, int] | None"]
#: What the store remembers of a symbol gone from a file: (path, qualified name) → where it was
#: (``{path, line, symbol, renamed_to?, source}``), None when nothing is remembered.
GoneSymbol = Callable[[str, str], "dict[str, Any] | None"]
#: ``not_checked``'s reason for ``x.attr`` where ``x: A | B`` and a member class lacks ``attr``
#: (another has it) with no sign the store saw it go from that class.
UNION_MEMBER = "x.attr of a union type whose member class lacks it (another member has it; no sign of a rename)"
#: ``not_checked``'s reason for ``self.x`` that only subclasses of its class define.
SUBCLASS_ONLY = "self.x defined only in subclasses (a template method without an abstract declaration)"


@dataclass
class CheckRun:
    findings: list[Finding] = field(default_factory=list)
    #: uses of a gone member on a value of unknown type (``x.lookup()``, ``f().lookup``): they may
    #: break, judged by name only (no class of the workspace has the member any more)
    by_name: list[Finding] = field(default_factory=list)
    gone_member: GoneMember | None = field(default=None, repr=False)
    gone_symbol: GoneSymbol | None = field(default=None, repr=False)
    #: names taken from a module whose ``__getattr__`` cannot be read, which the store saw defined
    #: there and go: not judged by the code, reported apart
    known_gone: list[Finding] = field(default_factory=list)
    #: ``self.x`` only subclasses of its class define (findings or not): find_references marks them
    subclass_only: list[Finding] = field(default_factory=list)
    #: ``x.attr`` (``x: A | B``) a member class lost (findings): find_references marks them too
    union_member: list[Finding] = field(default_factory=list)
    not_checked: Counter[str] = field(default_factory=Counter)
    files: Counter[str] = field(default_factory=Counter)  # files checked, by language
    not_parsed: list[str] = field(default_factory=list)


def near_names(name: str, candidates: Iterable[str], n: int = 3, strict: bool = False) -> list[str]:
    """Names like ``name``: close by difflib's ratio, or holding it whole (``DIFF`` → ``DIFF_REF``).
    ``strict``: only very close ones (ratio 0.75): enough to take an unbound name for a rename."""
    import difflib

    pool = [c for c in set(candidates) if c != name and not (c.startswith("__") and c.endswith("__"))]
    close = difflib.get_close_matches(name, pool, n=n, cutoff=0.75 if strict else 0.6)
    if len(name) >= 3 and not strict:
        close += sorted((c for c in pool if (name in c or (c in name and len(c) >= 3)) and c not in close), key=len)
    return close[:n]


def check_files(
    src: WorkspaceFiles,
    files: dict[str, SourceFile],
    keys: Iterable[str],
    remembered: Callable[[str], bool] | None = None,
    gone_member: GoneMember | None = None,
    gone_symbol: GoneSymbol | None = None,
) -> CheckRun:
    """Judge every use in ``keys`` (files of ``files``, the whole workspace as read now);
    ``gone_member`` (what the store remembers of removed members) makes ``by_name`` findings,
    ``gone_symbol`` (of a symbol gone from a file) ``known_gone`` ones and renamed ``self.x``."""
    run = CheckRun(gone_member=gone_member, gone_symbol=gone_symbol)
    worlds: dict[str, PythonWorld | ScriptWorld | GoWorld] = {}
    for key in keys:
        before = len(run.findings)
        _judge(src, files, key, run, worlds, remembered)
        if len(run.findings) > before:
            _drop_silenced(files[key], run, before)
    return run


def _drop_silenced(f: SourceFile, run: CheckRun, since: int) -> None:
    """Findings on lines their authors marked (``# noqa: F821``, ``# type: ignore[attr-defined]``,
    ``// @ts-expect-error`` above) are counted as not checked: the author knows."""
    kept = run.findings[:since]
    for finding in run.findings[since:]:
        text = f.line_text(finding.line)
        above = f.line_text(finding.line - 1) if finding.line > 1 else ""
        if _SILENCED_PY.search(text) or _SILENCED_TS.search(above) or _SILENCED_TS.search(text):
            run.not_checked["a use on a line marked noqa, type: ignore or @ts-expect-error"] += 1
        else:
            kept.append(finding)
    run.findings[:] = kept


def _judge(
    src: WorkspaceFiles,
    files: dict[str, SourceFile],
    key: str,
    run: CheckRun,
    worlds: dict[str, PythonWorld | ScriptWorld | GoWorld],
    remembered: Callable[[str], bool] | None,
) -> None:
    f = files.get(key)
    lang = language_of(key)
    if f is None or f.data is None:
        return
    if lang in _UNRESOLVED_LANGUAGES:
        calls = sum(1 for kind, _q in src.facts(key, f).ids.values() if kind == "call")
        run.not_checked["a call in Rust or Java (not resolved: find_references answers them by name)"] += calls
        run.files[lang] += 1
        return
    info = file_analysis(src, key, f)
    if info is None:
        return
    run.files[lang] += 1
    if isinstance(info, PyFile):
        if info.error is not None:
            run.not_parsed.append(key)
            return
        world = worlds.get("python") or worlds.setdefault("python", PythonWorld(src, files))
        assert isinstance(world, PythonWorld)
        _python(world, key, info, run, remembered)
    elif lang == "go":
        go = worlds.get("go") or worlds.setdefault("go", GoWorld(src, files))
        assert isinstance(go, GoWorld)
        _go(go, key, info, run)
    else:
        script = worlds.get("js") or worlds.setdefault("js", ScriptWorld(src, files))
        assert isinstance(script, ScriptWorld)
        _script(script, key, f, info, run, remembered)


# -- Python ------------------------------------------------------------------------------------


def _python(
    world: PythonWorld, key: str, info: PyFile, run: CheckRun, remembered: Callable[[str], bool] | None = None
) -> None:
    run.not_checked.update(info.not_checked)
    own = world.module_of.get(key, "")
    for imp in info.imports:
        if imp.name:
            base = absolute_module(imp.module, imp.level, own, key)
            mod = world.module(base)
            target = world.attribute(mod, imp.name) if mod[0] == "module" else mod
            shown = f"{'.' * imp.level}{imp.module}"
            name = f"{shown}.{imp.name}" if shown.strip(".") else f"{shown}{imp.name}"
        else:
            base = imp.module
            target = world.module(imp.module)
            name = imp.module
        if target[0] == "missing":
            _found(run, key, imp.line, imp.col, "import", name, target[1], uses=_import_uses(info, imp))
        elif target[0] == "outside":
            run.not_checked["an import from a module outside the workspace"] += 1
        elif target[0] == "unknown":
            gone = _known_gone(world, run, base, imp.name, target[1]) if imp.name else None
            if gone is None:
                run.not_checked[f"an import from {target[1]}"] += 1
            else:
                run.known_gone.append(_finding(key, imp.line, imp.col, "import", name, gone, _import_uses(info, imp)))
    for name, line, col in info.exports:
        if name in info.globals:
            continue
        target = world.attribute(("module", own), name) if own in world.by_module else ("unknown", "")
        if target[0] == "missing":
            _found(run, key, line, col, "re-export", name, target[1])
    for use in info.uses:
        _python_use(world, key, info, use, run, remembered)
        check_call(world, key, info, use, run.findings, run.not_checked)
    for line, col, name, kind in info.expression_members:
        why = "taken from an expression (a call's result, a subscript) whose type is not followed"
        if _by_name(world, run, key, line, col, kind, name, name, why):
            run.not_checked[EXPRESSION_ATTRIBUTE] -= 1


def _python_use(
    world: PythonWorld,
    key: str,
    info: PyFile,
    use: NameUse,
    run: CheckRun,
    remembered: Callable[[str], bool] | None = None,
) -> None:
    chain, where = use.chain, use.scope_kind
    if where == "builtin":
        if len(chain) > 1:
            run.not_checked["an attribute of a builtin"] += 1
        return
    if where == "guarded":
        run.not_checked[use.guard] += 1
        return
    if where in ("unbound", "star"):
        if key.endswith("__init__.py") and chain[0] in info.submodules:
            return  # from .runners import *: the package's runners, bound by the import
        if info.dynamic:
            run.not_checked[f"a name in a module with {info.dynamic}"] += 1
            return
        if where == "star":
            starred = _through_stars(world, key, info, chain[0])
            if starred[0] != "missing":
                if starred[0] == "unknown":
                    run.not_checked[starred[1]] += 1
                return
        line, col = use.places[0]
        missing = Missing(
            chain[0], "scope", f"nothing defines {chain[0]} here", None, frozenset(info.all_bound - info.future)
        )
        _found(run, key, line, col, use.kind if len(chain) == 1 else "reference", chain[0], missing)
        return
    if len(chain) == 1:
        return
    target: Target = world.binding(key, use.bound)
    if target[0] == "missing":
        return  # the import it comes from is the finding
    for i, part in enumerate(chain[1:], 1):
        holder = target
        if (i == 1 or holder[0] == "value") and _union_use(world, key, use, i, run):
            return
        target = world.attribute(target, part)
        if target[0] == "missing" and use.guard and i == len(chain) - 1:
            run.not_checked[use.guard] += 1
            return
        # self.x (not x: C, x = C()): a mixin's, an argparse namespace's … unless it reads as a rename
        self_like = holder[0] == "instance" and len(holder) == 3
        if target[0] == "missing" and self_like and not _evidence(part, target[1], remembered):
            run.not_checked["self.x no class of the workspace sets (a subclass's, set dynamically?)"] += 1
            return
        if target[0] == "missing":
            line, col = use.places[i]
            kind = use.kind if i == len(chain) - 1 else "reference"
            _found(run, key, line, col, kind, ".".join(chain[: i + 1]), target[1])
            return
        if target[0] == "unknown":
            line, col = use.places[i]
            kind = use.kind if i == len(chain) - 1 else "reference"
            name = ".".join(chain[: i + 1])
            gone = (
                _known_gone(world, run, holder[1], part, target[1])
                if holder[0] == "module"
                else _known_gone_member(world, run, holder, part, target[1])
                if holder[0] in ("class", "instance")
                else None
            )
            if gone is not None:
                run.known_gone.append(_finding(key, line, col, kind, name, gone))
            elif holder[0] != "value" or not _by_name(world, run, key, line, col, kind, name, part, target[1]):
                run.not_checked[target[1]] += 1
            return
        if self_like and not _subclass_only(world, run, key, use, i, holder):
            return
    if target[0] == "outside":
        run.not_checked[OUTSIDE] += 1


def _import_uses(info: PyFile, imp: ImportName) -> list[int]:
    """The lines using the name an import binds."""
    return [
        u.places[0][0]
        for u in info.uses
        if u.chain[0] == imp.local
        and any(b.kind in ("from", "module") and (b.name or b.target) == (imp.name or imp.module) for b in u.bound)
    ]


def _known_gone(world: PythonWorld, run: CheckRun, dotted: str, name: str, why: str) -> Missing | None:
    """``name`` of module ``dotted``, which the check cannot judge (``why``: its ``__getattr__``
    cannot be read …), as missing when the store saw ``name`` defined in that module and go."""
    if run.gone_symbol is None:
        return None
    for path in world.by_module.get(dotted, []):
        last = run.gone_symbol(path, name)
        if last is not None:
            because = f"not judged by the code ({why}), but {name} was defined in {path}:{last.get('line')} and is gone"
            return Missing(name, f"module {dotted}", because, (path, 1), frozenset(world.module_names(dotted)), last)
    return None


def _known_gone_member(world: PythonWorld, run: CheckRun, holder: Target, name: str, why: str) -> Missing | None:
    """``name`` of a class (or its instances) whose members the check cannot know (``why``: a
    computed ``setattr``, a base from outside …), as missing when the store saw ``C.name`` go
    from the class or one of its bases in the workspace, and none of them defines it now."""
    if run.gone_symbol is None:
        return None
    classes = [t for t in world.mro(holder[1], holder[2]) if t[0] == "class"]
    infos = [(t, world.info(t[1])) for t in classes]
    if any(i is not None and (c := i.classes.get(t[2])) and name in c.members | c.instance for t, i in infos):
        return None
    for (_, key, qual), info in infos:
        last = run.gone_symbol(key, f"{qual}.{name}")
        if last is not None:
            cls = info.classes.get(qual) if info is not None else None
            because = (
                f"not judged by the code ({why}), but {qual}.{name} was defined at {key}:{last.get('line')} and is gone"
            )
            return Missing(name, f"instances of {holder[2]}", because, (key, cls.line if cls else 1), frozenset(), last)
    return None


def _subclass_only(world: PythonWorld, run: CheckRun, key: str, use: NameUse, i: int, holder: Target) -> bool:
    """``self.x`` (``chain[i]``) in class C where neither C nor its bases define or set x, but a
    subclass does: a finding when the store saw ``C.x`` go (a rename done in C only), else
    counted in ``not_checked``. False when it is one of those (the use is judged)."""
    part = use.chain[i]
    if part.startswith("__") and part.endswith("__"):
        return True
    subs = world.subclasses_defining(holder[1], holder[2], part)
    if not subs:
        return True
    last = run.gone_symbol(holder[1], f"{holder[2]}.{part}") if run.gone_symbol is not None else None
    line, col = use.places[i]
    kind, name = use.kind if i == len(use.chain) - 1 else "reference", ".".join(use.chain[: i + 1])
    if last is None:
        run.not_checked[SUBCLASS_ONLY] += 1
        why = f"{holder[2]} and its bases have no {part}; only its subclass {subs[0]} defines it"
        run.subclass_only.append(_finding(key, line, col, kind, name, Missing(part, "", why, None, frozenset())))
        return False
    info = world.info(holder[1])
    cls = info.classes.get(holder[2]) if info is not None else None
    why = (
        f"{holder[2]} and its bases have no {part} (only its subclass {subs[0]} defines it: an override of nothing "
        f"now); {holder[2]}.{part} was defined at {holder[1]}:{last.get('line')} and is gone"
    )
    own = world.class_members(holder[1], holder[2], instance=True)
    missing = Missing(
        part, f"instances of {holder[2]}", why, (holder[1], cls.line if cls else 1),
        frozenset(own if isinstance(own, set) else ()), last,
    )  # fmt: skip
    run.subclass_only.append(_found(run, key, line, col, kind, name, missing))
    return False


def _union_use(world: PythonWorld, key: str, use: NameUse, i: int, run: CheckRun) -> bool:
    """``chain[i]`` of a value annotated with a union of classes of the workspace (``x: A | B``,
    ``self.p`` where ``p: A | B``): judged against each member class. A member lacking it while
    another has it is a finding when the store saw it go from that member (a rename done in one
    class), else counted in ``not_checked``; every member lacking it is a finding, as for ``x: C``.
    False when the value is no such union or every member has it (the use is judged as before)."""
    every = world.union_at(key, use, i)
    if every is None:
        return False
    members = [t for t in every if t[0] == "instance"]
    part, (line, col) = use.chain[i], use.places[i]
    judged = [(m, world.attribute(m, part)) for m in members]
    lacking = [(m, got[1]) for m, got in judged if got[0] == "missing"]
    if not lacking:
        return False
    having = [m[2] for m, got in judged if got[0] != "missing"]
    kind, name = use.kind if i == len(use.chain) - 1 else "reference", ".".join(use.chain[: i + 1])
    quals = " | ".join(m[2] for m in members)
    for m, missing in lacking:
        last = run.gone_symbol(m[1], f"{m[2]}.{part}") if run.gone_symbol is not None else None
        if (having or len(members) < len(every)) and last is None:
            continue  # another member (or one outside the workspace) may have it
        why = f"{'.'.join(use.chain[:i])} is a {quals}; {missing.why}"
        if last is not None:
            why += f" ({m[2]}.{part} was defined at {m[1]}:{last.get('line')} and is gone)"
        if having:
            why += f"; {', '.join(having)} still define{'s' if len(having) == 1 else ''} it"
        found = Missing(missing.name, missing.container, why, missing.defined_in, missing.candidates, last)
        run.union_member.append(_found(run, key, line, col, kind, name, found))
        return True
    run.not_checked[UNION_MEMBER] += 1
    return True


def _by_name(
    world: PythonWorld | ScriptWorld,
    run: CheckRun,
    key: str,
    line: int,
    col: int,
    kind: str,
    name: str,
    member: str,
    why: str,
) -> bool:
    """``x.member`` on a value of unknown type, where ``member`` is a member of a class the store
    saw go and no class of the workspace has it now: a use that may break (``by_name``)."""
    gone = run.gone_member(member) if run.gone_member is not None else None
    if gone is None or member in world.member_names():
        return False
    path, qualname, at = gone
    missing = Missing(
        member,
        f"class {qualname.rsplit('.', 1)[0]}",
        f"{why}; it may be {qualname}, which is gone (no class of the workspace has {member} now)",
        (path, at),
        frozenset(),
    )
    run.by_name.append(_finding(key, line, col, kind, name, missing))
    return True


def _evidence(name: str, missing: Missing, remembered: Callable[[str], bool] | None) -> bool:
    """Whether ``self.name`` missing from its class reads as a rename rather than an attribute set
    where the check cannot see (a subclass, argparse, setattr in a helper): a very near name is a
    member (not the same name with underscores before it: a property and its field), or one it
    begins or that begins it, or the store remembers the name as gone."""
    bare = name.lstrip("_")
    near = [n for n in near_names(name, missing.candidates, strict=True) if n.lstrip("_") != bare]
    if len(bare) >= 4:  # a member it begins, or that begins it: _walk → _walk_tree
        near += [
            n for n in missing.candidates if n != name and (n.startswith(name) or (name.startswith(n) and len(n) >= 4))
        ]
    return bool(near) or (remembered is not None and remembered(name))


def _through_stars(world: PythonWorld, key: str, info: PyFile, name: str) -> Target:
    own = world.module_of.get(key, "")
    last: Target = ("unknown", "a name only a star import from outside the workspace may bind")
    for module, level, _line in info.stars:
        mod = world.module(absolute_module(module, level, own, key))
        if mod[0] != "module":
            return ("unknown", "a name only a star import from outside the workspace may bind")
        got = world.attribute(mod, name)
        if got[0] != "missing":
            return got
        last = got
    return last


# -- TypeScript / JavaScript ---------------------------------------------------------------------


def _script(
    world: ScriptWorld,
    key: str,
    f: SourceFile,
    info: TsFile,
    run: CheckRun,
    remembered: Callable[[str], bool] | None,
) -> None:
    run.not_checked.update(info.not_checked)
    namespaces: dict[str, str] = {}
    imported: dict[str, tuple[str, str]] = {}  # local → (file, name there)
    for imp in info.imports:
        if not imp.spec.startswith("."):
            run.not_checked["an import from a package (not a relative path)"] += 1
            continue
        target = world.resolve(key, imp.spec)
        kind = "re-export" if imp.reexport else "import"
        if target is None:
            if world.exists_on_disk(key, imp.spec):
                run.not_checked["an import of a file the walk does not read"] += 1
                continue
            here = dirname(key) or "."
            missing = Missing(imp.spec, f"folder {here}", f"no file {imp.spec} from {key}", None, frozenset())
            _found(run, key, imp.line, imp.col, kind, imp.spec, missing)
            continue
        if imp.name == "*":
            namespaces[imp.local] = target
            continue
        exports = world.exports(target)
        if isinstance(exports, str):
            run.not_checked[f"an import from {exports}"] += 1
            continue
        imported[imp.local] = (target, imp.name)
        if imp.name not in exports:
            uses = [] if imp.reexport else _uses_of(world, key, f, imp.local, imp.line)
            declared = world.declared_at(target, imp.name)
            if declared is not None:  # the fix is `export` there, not another name
                why = f"declared in {target}:{declared} but not exported (fix: add export to its declaration)"
                missing = Missing(imp.name, f"file {target}", why, (target, declared), frozenset())
            else:
                missing = Missing(
                    imp.name, f"file {target}", f"{target} exports no {imp.name}", (target, 1), frozenset(exports)
                )
            _found(run, key, imp.line, imp.col, kind, imp.name, missing, uses=uses)
    for name, line, col in info.local_exports:
        if not info.bound[name] and not js_global(name):
            missing = Missing(
                name, f"file {key}", f"{key} exports {name} but defines none", (key, 1), frozenset(info.bound)
            )
            _found(run, key, line, col, "re-export", name, missing)
    for obj, prop, line, col, use in info.members:
        _script_member(world, key, info, namespaces, imported, (obj, prop, line, col, use), run)
    pool = set(info.bound)
    for target, _name in imported.values():
        exports = world.exports(target)
        pool |= exports if isinstance(exports, set) else set()
    for name, line, col, kind in info.names:
        if info.bound[name] or js_global(name) or name in world.globals_of_scripts():
            continue
        elsewhere = [k for k in world.declared_elsewhere(name, _JS_FAMILY) if k != key]
        # An unbound name is judged when the workspace or the store knows it (a name other files
        # export, a near one here or one it begins, a rename remembered); others may be globals
        # no list names.
        known = elsewhere or near_names(name, pool, strict=True) or (remembered is not None and remembered(name))
        if not (known or (len(name) >= 4 and any(b.startswith(name) for b in info.bound))):
            run.not_checked["a name the file does not bind and the workspace does not know (a global?)"] += 1
            continue
        why = f"nothing in {key} or its imports defines {name}"
        if elsewhere:
            why += f"; {elsewhere[0]} exports it (not imported here)"
        finding = _found(run, key, line, col, kind, name, Missing(name, "scope", why, None, frozenset(pool)))
        finding.elsewhere = elsewhere[:5]


def _script_member(
    world: ScriptWorld,
    key: str,
    info: TsFile,
    namespaces: dict[str, str],
    imported: dict[str, tuple[str, str]],
    member: tuple[str, str, int, int, str],
    run: CheckRun,
) -> None:
    obj, prop, line, col, use = member
    if not info.bound[obj]:
        return  # a global (console.log): not judged
    members: set[str] | str
    if info.bound[obj] > 1:  # bound twice (a local shadows it): only its binding at the use says what it is
        _typed_member(world, key, member, run)
        return
    if obj in namespaces:
        target = namespaces[obj]
        members, container, at = world.exports(target), f"file {target}", (target, 1)
    elif obj in info.containers:
        box = info.containers[obj]
        members, container, at = world.container_members(key, obj), f"{box.kind} {obj}", (key, box.line)
    elif obj in imported:
        found = world.container(*imported[obj])
        if found is None:
            run.not_checked["a member of a value of unknown type"] += 1
            return
        other = world.info(found[0])
        box_kind = other.containers[found[1]].kind if other is not None else "class"
        line_there = other.containers[found[1]].line if other is not None else 1
        members, container, at = world.container_members(*found), f"{box_kind} {found[1]}", (found[0], line_there)
    else:
        _typed_member(world, key, member, run)
        return
    if isinstance(members, str):
        run.not_checked[members] += 1
    elif prop not in members:
        why = f"{container.split(' ', 1)[-1]} has no member {prop}"
        _found(run, key, line, col, use, f"{obj}.{prop}", Missing(prop, container, why, at, frozenset(members)))


def _typed_member(world: ScriptWorld, key: str, member: tuple[str, str, int, int, str], run: CheckRun) -> None:
    """``x.prop`` where x is a value: judged when x is known to be an instance of a class of the
    workspace whose members can all be known (find_references' receivers: ``new C()``, ``x: C`` …);
    else, when the store saw a ``C.prop`` go and no class has prop now, a use that may break."""
    obj, prop, line, col, use = member
    what = world.types.value(key, obj, line)
    box = None
    if what[0] == "instance":
        info = world.info(what[1])
        box = info.containers.get(what[2]) if info is not None else None
    if box is None or box.kind != "class":
        why = what[-1] if what[0] in ("unknown", "other") and what[-1] else f"the type of {obj} is not followed"
        if not _by_name(world, run, key, line, col, use, f"{obj}.{prop}", prop, why):
            run.not_checked["a member of a value of unknown type"] += 1
        return
    cls_key, cls = what[1], what[2]
    if prop in box.members:
        return
    members = world.container_members(cls_key, cls)
    if isinstance(members, str):
        why = f"{obj} is a {cls} ({cls_key}), {members}"
        if not _by_name(world, run, key, line, col, use, f"{obj}.{prop}", prop, why):
            run.not_checked[members] += 1
        return
    if prop in members:
        return
    last = run.gone_symbol(cls_key, f"{cls}.{prop}") if run.gone_symbol is not None else None
    why = f"{obj} is a {cls} ({cls_key}:{box.line}), which has no member {prop}"
    public = frozenset(m for m in members if not m.startswith("#"))  # #private: not reachable from outside
    missing = Missing(prop, f"instances of {cls}", why, (cls_key, box.line), public, last)
    _found(run, key, line, col, use, f"{obj}.{prop}", missing)


def _uses_of(world: ScriptWorld, key: str, f: SourceFile, local: str, import_line: int) -> list[int]:
    return sorted(
        {
            u.line
            for u in world.src.occurrences(key, f, local)
            if u.kind in ("call", "reference") and u.line != import_line
        }
    )


# -- Go --------------------------------------------------------------------------------------------


def _go(world: GoWorld, key: str, info: TsFile, run: CheckRun) -> None:
    bound = world.package_bound(key)
    for name, line, col in info.calls:
        if bound[name] or go_builtin(name):
            continue
        if info.dot_import:
            run.not_checked["a call in a Go file with a dot import"] += 1
            continue
        folder = dirname(key) or "."
        missing = Missing(name, f"package {folder}", f"no file of {folder}/ declares {name}", None, frozenset(bound))
        _found(run, key, line, col, "call", name, missing)


def _found(
    run: CheckRun, key: str, line: int, col: int, kind: str, name: str, missing: Missing, uses: list[int] | None = None
) -> Finding:
    finding = _finding(key, line, col, kind, name, missing, uses)
    run.findings.append(finding)
    return finding


def _finding(
    key: str, line: int, col: int, kind: str, name: str, missing: Missing, uses: list[int] | None = None
) -> Finding:
    return Finding(
        path=key,
        line=line,
        column=col,
        kind=kind,
        name=name,
        missing=missing.name,
        container=missing.container,
        why=missing.why,
        defined_in=missing.defined_in,
        candidates=missing.candidates,
        uses=uses or [],
        last_defined=missing.last_defined,
    )
