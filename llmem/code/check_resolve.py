"""The workspace half of ``check_references`` for Python: following a file's names into the files that define them.

Each file's own half (:mod:`llmem.code.check_python`, :mod:`llmem.code.check_treesitter`) says
what it binds and uses; here those uses are followed across files the way ``find_references``
follows imports (:mod:`llmem.code.references_imports`: Python module names, relative
TypeScript specifiers) and judged: resolved, *missing* (a :class:`Finding`), or not judged (a
reason counted in ``not_checked``). Python: imported names and modules, ``__all__``, bare names,
and attribute chains through modules and classes (members of the class body, what methods store
on ``self``, bases inside the workspace or of the standard library; for ``self.x`` also what
subclasses define and any ``obj.x = …`` of the workspace). TypeScript/JavaScript: imported and
re-exported names, local ``export {x}``, members of enums, classes and namespaces, and calls of
names the file does not bind. Go: calls of names the package does not declare.
"""

from __future__ import annotations

import builtins
import importlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from posixpath import dirname
from typing import Any

from llmem.code.check_python import BUILTINS, Binding, NameUse, PyClass, PyFile, python_file, union_binding
from llmem.code.check_treesitter import TsFile, treesitter_file
from llmem.code.references_files import SourceFile, WorkspaceFiles
from llmem.code.references_imports import absolute_module, module_name
from llmem.code.references_parse import language_of

__all__ = ["Finding", "Missing", "PythonWorld", "Target", "file_analysis"]

#: Standard-library modules whose classes may be imported to list a base's attributes
#: (an enum's, a dict's …): modules without side effects on import.
_STDLIB_BASES = frozenset(
    {
        "abc", "enum", "typing", "collections", "collections.abc", "dataclasses", "numbers", "string", "json",
        "pathlib", "threading", "io", "datetime", "decimal", "fractions", "argparse", "logging",
        "logging.handlers", "contextlib", "functools", "types", "unittest", "asyncio", "queue", "socketserver",
        "http.server", "html.parser", "subprocess", "os", "ast", "configparser", "struct", "array", "weakref",
        "codecs", "random", "shlex", "textwrap", "itertools", "operator", "urllib.parse", "email.message",
    }
)  # fmt: skip
#: ``typing`` names that are not classes but make one: what their instances' classes carry.
_SPECIAL_BASES = {
    "NamedTuple": {"_fields", "_field_defaults", "_make", "_replace", "_asdict", "count", "index"},
    "TypedDict": set(dir(dict)),
}
#: Bases whose instances carry nothing ``dir()`` of the class does not list (their own ``_x_`` aside).
_BARE_INSTANCES = frozenset(
    {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag", "enum.ReprEnum", "abc.ABC",
     "typing.Protocol", "typing.Generic", "typing.NamedTuple", "typing.TypedDict"}
)  # fmt: skip
_ENUM_INSTANCE = {"_name_", "_value_", "_sort_order_"}
_JS_FAMILY = frozenset({"typescript", "tsx", "javascript"})


@dataclass
class Finding:
    """One use that no longer resolves. ``column`` is 0-based (bytes); ``missing`` the part of
    ``name`` that is not found in ``container`` (a module, a class, a file, the scope)."""

    path: str
    line: int
    column: int
    kind: str  # import, re-export, call, reference
    name: str
    missing: str
    container: str
    why: str
    defined_in: tuple[str, int] | None = None  # where the container is (path, line)
    candidates: frozenset[str] = frozenset()
    uses: list[int] = field(default_factory=list)  # lines using a broken import's name
    elsewhere: list[str] = field(default_factory=list)  # files that define the name (not imported here)
    last_defined: dict[str, Any] | None = None  # what the store remembers, when the check used it


def file_analysis(src: WorkspaceFiles, key: str, f: SourceFile) -> PyFile | TsFile | None:
    """The binder's answer for one file, kept on the file while it is unchanged."""
    if f.checked is None and f.data is not None:
        lang = language_of(key)
        try:
            if lang == "python":
                f.checked = python_file(f.data)
            elif lang in _JS_FAMILY or lang == "go":
                f.checked = treesitter_file(lang, f.data)
        except Exception as exc:  # a binder that fails costs the file its check, never the call
            f.checked = TsFile(lang, error=f"not analysed: {type(exc).__name__}")
    return f.checked  # type: ignore[no-any-return]


# -- Python --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Missing:
    """A name not found where a use looks for it: in ``container`` (defined at ``defined_in``)."""

    name: str
    container: str
    why: str
    defined_in: tuple[str, int] | None
    candidates: frozenset[str]
    #: where the store saw the name last defined, when that is what makes it missing
    last_defined: dict[str, Any] | None = None


#: What a name stands for: ("module", dotted) | ("class", key, qualname) | ("instance", key,
#: qualname) | ("builtin", type) | ("value",) | ("outside", dotted) | ("unknown", reason) | ("missing", Missing)
Target = tuple[Any, ...]


class PythonWorld:
    """Python modules of one workspace, resolved on demand (a call's worth of memo)."""

    def __init__(self, src: WorkspaceFiles, files: dict[str, SourceFile]) -> None:
        self.src = src
        self.files = files
        keys = set(files)
        self.module_of: dict[str, str] = {}
        self.by_module: dict[str, list[str]] = {}
        for key in sorted(files):
            if language_of(key) == "python" and files[key].data is not None:
                mod = module_name(key, keys)
                self.module_of[key] = mod
                self.by_module.setdefault(mod, []).append(key)
        # .py before .pyi: the stub says the same names
        for mods in self.by_module.values():
            mods.sort(key=lambda k: k.endswith(".pyi"))
        self.packages = {m for k, m in self.module_of.items() if k.endswith("__init__.py")}
        # namespace packages (a folder without __init__.py inside a package): modules with no file
        self.namespaces = {
            m.rpartition(".")[0] for m in self.by_module if "." in m and m.rpartition(".")[0] not in self.by_module
        }
        self._members: dict[tuple[str, str, bool], set[str] | str] = {}
        self._instances: dict[tuple[str, str], set[str] | str] = {}
        self._typed: dict[tuple[str, str, str], Target] = {}
        self._subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._parents: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._stored: set[str] | None = None
        self._member_names: set[str] | None = None

    def info(self, key: str) -> PyFile | None:
        f = self.files.get(key)
        got = file_analysis(self.src, key, f) if f is not None else None
        return got if isinstance(got, PyFile) and got.error is None else None

    # -- modules ---------------------------------------------------------------------------

    def module(self, dotted: str) -> Target:
        if dotted in self.by_module or dotted in self.namespaces:
            return ("module", dotted)
        parent = dotted.rpartition(".")[0]
        if parent and parent in self.packages and not self._on_disk(parent, dotted.rpartition(".")[2]):
            subs = {m.rpartition(".")[2] for m in self.by_module if m.rpartition(".")[0] == parent}
            key = self.by_module[parent][0]
            return self._miss(
                dotted.rpartition(".")[2], f"package {parent}", f"no module {dotted} in the workspace", (key, 1), subs
            )
        return ("outside", dotted)

    def _on_disk(self, package: str, name: str) -> bool:
        """A module the walk does not keep (compiled, generated, ignored) but that is there."""
        folder = dirname(self.by_module[package][0])
        try:
            entries = os.listdir(os.path.join(self.src.ws, folder))  # noqa: PTH118
        except OSError:
            return False
        return any(e == name or e.startswith(name + ".") for e in entries)

    def _miss(
        self, name: str, container: str, why: str, defined_in: tuple[str, int] | None, candidates: set[str]
    ) -> Target:
        return ("missing", Missing(name, container, why, defined_in, frozenset(candidates)))

    def module_names(self, dotted: str) -> set[str]:
        names = {m.rpartition(".")[2] for m in self.by_module if m.rpartition(".")[0] == dotted}
        for key in self.by_module.get(dotted, []):
            info = self.info(key)
            if info is not None:
                names |= (set(info.globals) - info.future) | (info.served or set())
        return names

    # -- attributes --------------------------------------------------------------------------

    def attribute(self, target: Target, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> Target:
        """What ``name`` of ``target`` is."""
        kind = target[0]
        if name.startswith("__") and name.endswith("__") and kind != "missing":
            return ("value",)  # a dunder: Python's own (a module's __file__, a class's __name__ …)
        if kind == "module":
            return self._module_attribute(target[1], name, seen)
        if kind == "outside":
            return ("outside", f"{target[1]}.{name}")
        if kind in ("class", "instance"):
            key, qual = target[1], target[2]
            members = self.class_members(key, qual) if kind == "class" else self.instance_members(key, qual)
            if isinstance(members, str):
                return ("unknown", members)
            if name in members:
                info = self.info(key)
                nested = f"{qual}.{name}"
                if info is not None and nested in info.classes and kind == "class":
                    return ("class", key, nested)
                return self._typed_member(key, qual, name, seen) if kind == "instance" else ("value",)
            info = self.info(key)
            cls = info.classes[qual] if info is not None else None
            what = "class" if kind == "class" else "instances of"
            # near names from the class itself, not from every attribute the workspace stores
            own = self.class_members(key, qual, instance=True) if kind == "instance" else members
            return self._miss(
                name,
                f"{what} {qual}",
                f"{qual} has no attribute {name}",
                (key, cls.line if cls else 1),
                own if isinstance(own, set) else members,
            )
        if kind == "value":
            return ("unknown", "attribute of a function or a value of unknown type")
        if kind == "builtin":
            return ("unknown", "an attribute of a value of a builtin type (a list, a str …)")
        return target  # unknown, missing: as they are

    def _module_attribute(self, dotted: str, name: str, seen: frozenset[tuple[str, str]]) -> Target:
        sub = f"{dotted}.{name}"
        if sub in self.by_module:
            return ("module", sub)
        keys = self.by_module.get(dotted, [])
        for key in keys:
            info = self.info(key)
            if info is None:
                return ("unknown", f"module {dotted} does not parse")
            if name in info.globals:
                if (key, name) in seen:
                    return ("unknown", "an import cycle")
                return self.binding(key, tuple(info.globals[name]), seen | {(key, name)})
        for key in keys:
            info = self.info(key)
            assert info is not None
            for module, level, _line in info.stars:
                base = absolute_module(module, level, self.module_of[key], key)
                found = self.module(base)
                if found[0] != "module":
                    return ("unknown", "a star import from a module outside the workspace")
                got = self._module_attribute(base, name, seen | {(key, "*")}) if (key, "*") not in seen else None
                if got is not None and got[0] != "missing":
                    return got
            if info.served is not None and name in info.served:
                return ("value",)  # served by its __getattr__
            if info.dynamic:
                return ("unknown", f"a module with {info.dynamic}")
        if keys and self._on_disk(dotted, name) and keys[0].endswith("__init__.py"):
            return ("unknown", "a module the walk does not read (compiled or ignored)")
        if not keys:
            return ("unknown", f"module {dotted} is not read")
        served = next((i.served for k in keys if (i := self.info(k)) is not None and i.served is not None), None)
        why = f"{dotted} defines no {name}" + (" (nor does its __getattr__ serve it)" if served is not None else "")
        return self._miss(name, f"module {dotted}", why, (keys[0], 1), self.module_names(dotted))

    def binding(
        self, key: str, bindings: tuple[Binding, ...], seen: frozenset[tuple[str, str]] = frozenset()
    ) -> Target:
        """What a name bound by ``bindings`` in ``key`` stands for; several bindings must agree
        (``x += …`` keeps what ``x`` was)."""
        kept = [b for b in dict.fromkeys(bindings) if b.kind != "augmented"] or [Binding("value")]
        targets = {self._one(key, b, seen) for b in kept}
        if len(targets) == 1:
            return targets.pop()
        if any(t[0] == "missing" for t in targets) and all(t[0] in ("missing", "value", "builtin") for t in targets):
            return next(t for t in targets if t[0] != "missing")  # try: from x import y / except: y = None
        return ("unknown", "a name bound several ways (an import in try/except, a conditional definition)")

    def _one(self, key: str, b: Binding, seen: frozenset[tuple[str, str]]) -> Target:
        if b.kind == "class":
            return ("class", key, b.target)
        if b.kind == "typed":  # x: C, x = C(…): an instance of C when C is a class of the workspace
            target = holder = self.binding(key, b.via, seen)
            parts = b.target.split(".")[1:]
            for part in parts:
                holder, target = target, self.attribute(target, part, seen)
            if target[0] == "class":
                return ("instance", target[1], target[2], "typed")
            if self._makes_generator(key, b, holder, parts):
                return ("builtin", "generator")
            return ("value",)
        if b.kind == "self":
            return ("instance", key, b.target)
        if b.kind == "builtin":
            return ("builtin", b.target)
        if b.kind == "alias":  # x = y: what y is there
            return self.binding(key, b.via, seen) if b.via else ("value",)
        if b.kind == "module":
            return self.module(b.target)
        if b.kind == "from":
            base = absolute_module(b.target, b.level, self.module_of.get(key, ""), key)
            mod = self.module(base)
            if mod[0] == "outside":
                return ("outside", f"{base}.{b.name}")
            return self.attribute(mod, b.name, seen) if mod[0] == "module" else mod
        return ("value",)

    def union_members(self, key: str, b: Binding) -> list[Target]:
        """What each member of a ``union`` binding in ``key`` stands for."""
        return [self._one(key, m, frozenset()) for m in b.via]

    def union_at(self, key: str, use: NameUse, i: int) -> list[Target] | None:
        """What each member stands for when ``use.chain[i - 1]`` is annotated with a union of
        classes (``x: A | B``; ``self.p`` where the class sets ``self.p: A | B`` or has a property
        ``p -> A | B``); None when it is not."""
        if i == 1:
            root = union_binding(use)
            return self.union_members(key, root) if root is not None else None
        if use.scope_kind not in ("local", "global"):
            return None
        holder = self.binding(key, use.bound)
        for part in use.chain[1 : i - 1]:
            holder = self.attribute(holder, part)
        if holder[0] != "instance":
            return None
        member = use.chain[i - 1]
        for t in self.mro(holder[1], holder[2]):
            info = self.info(t[1]) if t[0] == "class" else None
            cls = info.classes.get(t[2]) if info is not None else None
            if cls is None or member not in cls.typed_members:
                continue
            typed = cls.typed_members[member]
            return self.union_members(t[1], typed) if typed is not None and typed.kind == "union" else None
        return None

    def _typed_member(self, key: str, qual: str, name: str, seen: frozenset[tuple[str, str]]) -> Target:
        """``x.name`` of an instance of ``qual``: an instance of C where the class (or a base) sets
        ``self.name = C(…)`` or has a property ``name`` annotated ``-> C``, and nothing else sets it."""
        memo = self._typed.get((key, qual, name))
        if memo is not None:
            return memo
        result: Target = ("value",)
        info = self.info(key)
        own = info.classes.get(qual) if info is not None else None
        if own is not None and name in own.typed_members:
            order = [(key, qual)]
        else:  # set in a base, as a rule
            subclasses = set(self.all_subclasses(key, qual))
            order = sorted(self.family(key, qual) - subclasses - {(key, qual)})
        for k, q in order:
            found = self.info(k)
            cls = found.classes.get(q) if found is not None else None
            if cls is None or name not in cls.typed_members:
                continue
            typed = cls.typed_members[name]
            if typed is not None and (k, name) not in seen:
                got = self._one(k, typed, seen | {(k, name)})
                result = got if got[0] in ("instance", "builtin") else ("value",)
            break
        if not seen:
            self._typed[(key, qual, name)] = result
        return result

    def _makes_generator(self, key: str, b: Binding, holder: Target, parts: list[str]) -> bool:
        """Whether ``x = f(…)`` (``b``: typed by ``f``) binds a generator: ``f`` a function of
        the file, or a method of the holder's class or its family, whose body yields."""
        if not parts:
            defs = [v.target for v in b.via if v.kind == "def"]
            info = self.info(key)
            return bool(defs) and info is not None and all(q in info.generators for q in defs)
        if holder[0] not in ("instance", "class") or len(holder) < 3:
            return False
        for k, q in self.family(holder[1], holder[2]):
            info = self.info(k)
            if info is not None and f"{q}.{parts[-1]}" in info.generators:
                return True
        return False

    # -- classes -----------------------------------------------------------------------------

    def class_members(self, key: str, qual: str, depth: int = 0, instance: bool = False) -> set[str] | str:
        """The attributes of a class (its body, its methods' ``self.x``, its bases'), or why they
        cannot be known; ``instance``: of its instances, whose attributes a base from outside the
        workspace may set where no ``dir()`` sees them."""
        memo = self._members.get((key, qual, instance))
        if memo is not None:
            return memo
        self._members[(key, qual, instance)] = "an inheritance cycle"
        result = self._class_members(key, qual, depth, instance)
        self._members[(key, qual, instance)] = result
        return result

    def _class_members(self, key: str, qual: str, depth: int, instance: bool) -> set[str] | str:
        info = self.info(key)
        cls: PyClass | None = info.classes.get(qual) if info is not None else None
        if cls is None:
            return "a class that could not be read"
        if cls.dynamic:
            return f"a class with {cls.dynamic}"
        members = set(cls.members) | cls.instance | {"mro"}
        if "." not in qual and info is not None:  # timezone.utc = …, setattr(C, "x", …) after the class
            members |= info.stored_on.get(qual, set())
        for base in [*cls.bases, *([cls.metaclass] if cls.metaclass else [])]:
            got = self._base_members(key, cls, base, depth, instance)
            if isinstance(got, str):
                return got
            members |= got
        return members

    def _base_members(self, key: str, cls: PyClass, base: str, depth: int, instance: bool) -> set[str] | str:
        if base == "?":
            return "a class whose base is an expression"
        root, *rest = base.split(".")
        bindings = cls.base_bindings.get(root, ())
        if not bindings:
            builtin = getattr(builtins, root, None) if root in BUILTINS and not rest else None
            if isinstance(builtin, type):
                return _type_attributes(builtin)
            return f"a class whose base {base} is not found"
        target = self.binding(key, bindings)
        for part in rest:
            target = self.attribute(target, part)
        if target[0] == "class" and depth < 30:
            return self.class_members(target[1], target[2], depth + 1, instance)
        if target[0] == "outside":
            return _outside_members(target[1], instance)
        return f"a class whose base {base} is not a class the check knows"

    def instance_members(self, key: str, qual: str) -> set[str] | str:
        """What ``self.x`` may name: the class's attributes, what its subclasses define (a mixin's
        ``self.x`` is often theirs), and any attribute the workspace stores on some object."""
        memo = self._instances.get((key, qual))
        if memo is not None:
            return memo
        members = self.class_members(key, qual, instance=True)
        if isinstance(members, str):
            self._instances[(key, qual)] = members
            return members
        out = set(members)
        for sub_key, sub_qual in self.all_subclasses(key, qual):
            more = self.class_members(sub_key, sub_qual, instance=True)
            if isinstance(more, str):
                self._instances[(key, qual)] = more
                return more
            out |= more
        result: set[str] | str = out | self._stored_attributes()
        self._instances[(key, qual)] = result
        return result

    def _hierarchy(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Each class of the workspace → its subclasses there (bases resolved as a use would be)."""
        if self._subclasses is None:
            self._subclasses = {}
            for k in self.module_of:
                info = self.info(k)
                for q, cls in (info.classes if info is not None else {}).items():
                    for base in cls.bases:
                        root, *rest = base.split(".")
                        bindings = cls.base_bindings.get(root, ())
                        if not bindings:
                            continue
                        target = self.binding(k, bindings)
                        for part in rest:
                            target = self.attribute(target, part)
                        if target[0] == "class":
                            self._subclasses.setdefault((target[1], target[2]), []).append((k, q))
        return self._subclasses

    def all_subclasses(self, key: str, qual: str) -> Iterator[tuple[str, str]]:
        subclasses = self._hierarchy()
        stack, seen = [(key, qual)], {(key, qual)}
        while stack:
            for sub in subclasses.get(stack.pop(), []):
                if sub not in seen:
                    seen.add(sub)
                    stack.append(sub)
                    yield sub

    def bases_of(self, key: str, qual: str) -> list[Target]:
        """The bases of a class in the order written, each as a use of its name there would resolve
        (``object`` left out; an expression base is ``unknown``)."""
        info = self.info(key)
        cls = info.classes.get(qual) if info is not None else None
        out: list[Target] = []
        for base in cls.bases if cls is not None else []:
            root, *rest = base.split(".")
            bindings = cls.base_bindings.get(root, ()) if cls is not None else ()
            if base == "?" or (not bindings and not (root in BUILTINS and not rest)):
                out.append(("unknown", f"a base {base} the check does not follow"))
            elif not bindings:
                if root != "object":
                    out.append(("outside", f"builtins.{root}"))
            else:
                target = self.binding(key, bindings)
                for part in rest:
                    target = self.attribute(target, part)
                out.append(target)
        return out

    def mro(self, key: str, qual: str, depth: int = 0) -> list[Target]:
        """The class then its bases in Python's method resolution order (C3), as far as the
        workspace tells: a base from outside (or not followed) stands as one entry."""
        me: Target = ("class", key, qual)
        bases = self.bases_of(key, qual) if depth < 30 else []
        seqs = [self.mro(b[1], b[2], depth + 1) if b[0] == "class" else [b] for b in bases] + [list(bases)]
        out = [me]
        while any(seqs):
            seqs = [s for s in seqs if s]
            head = next((s[0] for s in seqs if not any(s[0] in t[1:] for t in seqs)), None)
            if head is None:  # no consistent order (Python would refuse the class): each base's, depth first
                return out + [t for s in seqs for t in s if t not in out]
            out.append(head)
            seqs = [s[1:] if s[0] == head else s for s in seqs]
        return out

    def subclasses_defining(self, key: str, qual: str, name: str) -> list[str]:
        """The subclasses of ``qual`` that define or set ``name`` when ``qual`` and its bases do not
        (empty when they do, or when its members cannot be known)."""
        own = self.class_members(key, qual, instance=True)
        if isinstance(own, str) or name in own:
            return []
        out = []
        for sub_key, sub_qual in self.all_subclasses(key, qual):
            info = self.info(sub_key)
            cls = info.classes.get(sub_qual) if info is not None else None
            if cls is not None and (name in cls.members or name in cls.instance):
                out.append(sub_qual)
        return out

    def family(self, key: str, qual: str) -> set[tuple[str, str]]:
        """The class, its subclasses and its bases in the workspace: the classes whose instances
        may run a method the class defines (a subclass inherits it, a base's may dispatch to it)."""
        if self._parents is None:
            self._parents = {}
            for base, subs in self._hierarchy().items():
                for sub in subs:
                    self._parents.setdefault(sub, []).append(base)
        out = {(key, qual), *self.all_subclasses(key, qual)}
        stack = [(key, qual)]
        while stack:
            for base in self._parents.get(stack.pop(), []):
                if base not in out:
                    out.add(base)
                    stack.append(base)
        return out

    def member_names(self) -> set[str]:
        """Every name a class of the workspace has (its body, its methods' ``self.x``)."""
        if self._member_names is None:
            self._member_names = set()
            for k in self.module_of:
                info = self.info(k)
                for cls in info.classes.values() if info is not None else ():
                    self._member_names |= cls.members | cls.instance
        return self._member_names

    def _stored_attributes(self) -> set[str]:
        if self._stored is None:
            self._stored = set()
            for k in self.module_of:
                info = self.info(k)
                if info is not None:
                    self._stored |= info.stored_attrs
        return self._stored


def _outside_members(dotted: str, instance: bool) -> set[str] | str:
    """The attributes of a standard-library class used as a base (``enum.Enum``, ``dict`` …); of
    its instances only when ``dir()`` shows them all (a class of C, an enum, an ABC)."""
    module, _, name = dotted.rpartition(".")
    if name in _SPECIAL_BASES and module in ("typing", "typing_extensions"):
        return set(_SPECIAL_BASES[name])
    if module not in _STDLIB_BASES:
        return f"a class with a base from outside the workspace ({dotted})"
    if instance and dotted not in _BARE_INSTANCES:
        return f"an instance attribute of a class based on {dotted} (set where dir() does not see it)"
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return f"a class whose base {dotted} is not found"
    if not isinstance(obj, type):
        return f"a class whose base {dotted} is not a class"
    return _type_attributes(obj) | (_ENUM_INSTANCE if module == "enum" else set())


def _type_attributes(obj: type) -> set[str]:
    """What a class of Python's own carries: ``dir()`` (which an enum's hides: ``name``, ``value``),
    every class of its MRO's own names, and its metaclass's."""
    return set(dir(obj)) | set(dir(type(obj))) | {k for c in obj.__mro__ for k in vars(c)}
