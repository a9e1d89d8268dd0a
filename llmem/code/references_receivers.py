"""Whether one use of a name is a use of the definitions asked about, judged by what it is taken from.

``find_references`` finds a name as a word; a method's name is also every other object's member
of that name (``column_items.insert(0, …)`` is ``list.insert``, not ``Table.insert``) and a
function's name may be a local of the same name (a parameter ``upsert``). A :class:`Judge`
answers, for a use, ``yes`` (its receiver is an instance of the class or of one of its family:
``self``, ``x: Table``, ``x = Table(…)``; a bare name bound to the function), ``no`` (provably
something else: a list, a dict, a str — a literal, a comprehension, ``list(…)``, a parameter
annotated ``list[str]`` —, a module, a class outside the workspace or another class of it; a local
or a parameter of the same name; a bare name where a method is asked about) or ``maybe`` (the
receiver's type is unknown: an unannotated parameter, a call's result, a subscript), each with
why. Python receivers are followed with the binder of ``check_references``
(:mod:`llmem.code.check_python`, :class:`llmem.code.check_resolve.PythonWorld`); TypeScript and
JavaScript ones with :class:`llmem.code.references_ts.TypeWorld`: ``this.x`` inside the class is
that class's; ``C.x`` (the class, or an import of it) is a use of a static member and of nothing
else; an instance (``x: C``, ``x = new C()``, a call whose declared return type is C) is a use of
an instance member and never of a static one; a global (``Object``, ``JSON``), a package's name, an
interface or another class of the workspace is not a use. Nothing here knows about MCP or the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmem.code.check_python import NameUse, PyFile
from llmem.code.check_resolve import PythonWorld, Target, file_analysis
from llmem.code.references_parse import language_of
from llmem.code.references_ts import TypeWorld, ts_types

if TYPE_CHECKING:
    from llmem.code.references_files import SourceFile, Use, WorkspaceFiles

__all__ = ["MAYBE", "NO", "YES", "Judge", "Verdict", "member_owner"]

YES, NO, MAYBE = "yes", "no", "maybe"

#: Definition kinds (as :class:`~llmem.code.references_parse.Facts` files them) that hold members.
_CLASS_KINDS = frozenset(
    {"class", "class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration"}
)
_JS_FAMILY = frozenset({"typescript", "tsx", "javascript"})
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")


@dataclass(frozen=True)
class Verdict:
    verdict: str  # YES, NO or MAYBE
    why: str
    #: a NO that is no receiver's type: an attribute set (``x.name = …``)
    stored: bool = False
    #: the ``left_out`` reason of a NO other than the receiver's type (a key of references.NOT_IT)
    left: str = ""


def member_owner(defn: dict[str, Any], defs_of_file: list[tuple[str, int, int, str, str]]) -> str | None:
    """The qualified name of the class ``defn`` is a member of (a method, a class attribute, a
    nested class), or None for a module-level or nested function, class or variable."""
    qn = str(defn["symbol"])
    if "." not in qn:
        return None
    parent = qn.rsplit(".", 1)[0]
    return parent if any(q == parent and kind in _CLASS_KINDS for _n, _l, _c, kind, q in defs_of_file) else None


class Judge:
    """Judges uses against one set of definitions (``find_references``' ``definitions``)."""

    def __init__(self, src: WorkspaceFiles, files: dict[str, SourceFile], definitions: list[dict[str, Any]]) -> None:
        self.src = src
        self.files = files
        #: (file, class qualified name) of the classes the definitions are members of
        self.owners: set[tuple[str, str]] = set()
        #: files of the definitions that are no member (functions, classes, variables)
        self.function_files: set[str] = set()
        for d in definitions:
            f = files.get(d["path"])
            if f is None or f.data is None:
                continue
            owner = member_owner(d, src.facts(d["path"], f).defs)
            if owner is not None:
                self.owners.add((d["path"], owner))
            else:
                self.function_files.add(d["path"])
        self._world: PythonWorld | None = None
        self._places: dict[str, dict[tuple[int, int], tuple[NameUse, int]]] = {}
        self._families: set[tuple[str, str]] | None = None
        self._types: TypeWorld | None = None
        self._ts_family: tuple[set[tuple[str, str]], set[tuple[str, str]]] | None = None
        leaves = {str(d["symbol"]).rsplit(".", 1)[-1] for d in definitions}
        #: whether the members asked about are static (TypeScript/JavaScript): all, some or none
        self.static = {self._is_static(path, cls, leaves) for path, cls in self.owners}

    @property
    def members_only(self) -> bool:
        return bool(self.owners) and not self.function_files

    def world(self) -> PythonWorld:
        if self._world is None:
            self._world = PythonWorld(self.src, self.files)
        return self._world

    def judge(self, u: Use) -> Verdict:
        """Whether ``u`` (an identifier of code: a call or a reference) is a use of the definitions."""
        lang = language_of(u.path)
        if lang == "python":
            return self._python(u)
        if u.qualifier == "":
            if self.members_only:
                return Verdict(NO, "a bare name, where only members of a class are asked about")
            return Verdict(YES, "the name itself")
        if lang in _JS_FAMILY:
            return self._js(u)
        return Verdict(MAYBE, f"the type of {u.qualifier[:60]} is not known here")

    # -- TypeScript / JavaScript ------------------------------------------------------------

    def _is_static(self, path: str, cls: str, leaves: set[str]) -> bool:
        f = self.files.get(path)
        if f is None or language_of(path) not in _JS_FAMILY:
            return False
        info = ts_types(self.src, path, f).classes.get(cls.rsplit(".", 1)[-1])
        return info is not None and bool(leaves & info.static)

    def types(self) -> TypeWorld:
        if self._types is None:
            self._types = TypeWorld(self.src, self.files)
        return self._types

    def ts_family(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """The classes asked about with their subclasses in the workspace (found where a family
        name stands as a word), and the classes and interfaces they extend or implement."""
        if self._ts_family is None:
            world = self.types()
            family = {(p, c.rsplit(".", 1)[-1]) for p, c in self.owners}
            grew = True
            while grew:
                grew = False
                names = {c for _p, c in family}
                for key, f in self.files.items():
                    if language_of(key) not in _JS_FAMILY or f.data is None or not any(f.offsets(n) for n in names):
                        continue
                    for name, info in ts_types(self.src, key, f).classes.items():
                        if (key, name) in family or info.extends is None:
                            continue
                        base = world.type_named(key, info.extends, info.line, 0)
                        if base[0] == "class" and (base[1], base[2]) in family:
                            family.add((key, name))
                            grew = True
            supers: set[tuple[str, str]] = set()
            for p, c in self.owners:
                own = world.class_info(p, c.rsplit(".", 1)[-1])
                for name in ([own.extends] if own and own.extends else []) + (own.implements if own else []):
                    got = world.type_named(p, name, own.line if own else 0, 0)
                    if got[0] in ("class", "type"):
                        supers.add((got[1], got[2]))
            self._ts_family = (family, supers)
        return self._ts_family

    def _js(self, u: Use) -> Verdict:
        f = self.files.get(u.path)
        if f is not None and (u.line, u.column) in ts_types(self.src, u.path, f).stored:
            return Verdict(NO, f"{u.qualifier}.{u.name} = …: an attribute set, not a use", stored=True)
        if u.qualifier == "this":
            return self._this(u)
        q = u.qualifier.rstrip("!")  # k!.x: k, not null
        if not _IDENTIFIER.match(q):
            return Verdict(MAYBE, f"the type of {q[:60]} is not followed (an expression)")
        got = self.types().value(u.path, q, u.line)
        family, supers = self.ts_family()
        kind = got[0]
        if kind not in ("class", "instance", "type"):
            return Verdict(NO if kind == "other" else MAYBE, got[1])
        place = (got[1], got[2])
        if kind == "type":
            return Verdict(MAYBE, f"{q} names the type {got[2]} ({got[1]}), whose values are not followed")
        if kind == "class":
            if place not in family:
                return Verdict(NO, f"{q} is the class {got[2]} ({got[1]}), none of the classes asked about")
            if True in self.static:
                return Verdict(YES, f"{q} is the class {got[2]}")
            return Verdict(NO, f"{q} is the class {got[2]} itself, and {u.name} is not one of its static members")
        if place in family:
            if False in self.static:
                return Verdict(YES, f"{q}: {got[2]}")
            return Verdict(
                NO, f"{q} is an instance of {got[2]}: a static member is used through its class", left="static"
            )
        if place in supers:
            return Verdict(MAYBE, f"{q} is a {got[2]}, which the class extends or implements: it may be one")
        return Verdict(NO, f"{q} is a {got[2]} ({got[1]}), none of the classes asked about")

    def _this(self, u: Use) -> Verdict:
        f = self.files.get(u.path)
        where = self.src.facts(u.path, f).enclosing(u.line) if f is not None and f.data is not None else None
        classes = {q for k, q in self.owners if k == u.path}
        if where is not None and any(where == q or where.startswith(q + ".") for q in classes):
            return Verdict(YES, "this, in the class")
        return Verdict(MAYBE, "this, in another class (a subclass's?)")

    # -- Python ---------------------------------------------------------------------------------

    def _info(self, key: str) -> PyFile | None:
        f = self.files.get(key)
        got = file_analysis(self.src, key, f) if f is not None and f.data is not None else None
        return got if isinstance(got, PyFile) and got.error is None else None

    def _place(self, key: str, info: PyFile, at: tuple[int, int]) -> tuple[NameUse, int] | None:
        places = self._places.get(key)
        if places is None:
            places = self._places[key] = {p: (use, i) for use in info.uses for i, p in enumerate(use.places)}
        return places.get(at)

    def _python(self, u: Use) -> Verdict:
        info = self._info(u.path)
        if info is None:
            return Verdict(MAYBE, "the file does not parse")
        at = (u.line, u.column)
        if at in info.stored_places:
            return Verdict(NO, f"{u.qualifier or 'x'}.{u.name} = …: an attribute set, not a use", stored=True)
        if u.qualifier == "":
            return self._bare(u, info, at)
        if at in info.super_places:
            return self._super(u, info)
        builtin = info.builtin_receivers.get(at)
        if builtin is not None:
            return Verdict(NO, f"{builtin}.{u.name} (a {builtin} value)")
        found = self._place(u.path, info, at)
        if found is None or found[1] == 0:
            return Verdict(
                MAYBE, "taken from an expression (a call's result, a subscript …) whose type is not followed"
            )
        use, i = found
        members = self.world().union_at(u.path, use, i)
        if members is not None:
            return self._union(use, i, members)
        holder = self._holder(u.path, use, i)
        return self._verdict(u, use, i, holder)

    def _union(self, use: NameUse, i: int, members: list[Target]) -> Verdict:
        """``x.m`` where ``x: A | B``: a use of each member's ``m`` (of the one asked about among them)."""
        world = self.world()
        shown = " | ".join(str(t[2]) if t[0] == "instance" else "?" for t in members)
        receiver = ".".join(use.chain[:i])
        for t in members:
            if t[0] == "instance" and self.owners & world.family(t[1], t[2]):
                return Verdict(YES, f"{receiver}: {shown} ({t[2]})")
        if all(t[0] == "instance" for t in members):
            return Verdict(NO, f"{receiver} is a {shown}, none of the classes asked about")
        return Verdict(MAYBE, f"the type of {receiver} is not known (a member of {shown} is not followed)")

    def _super(self, u: Use, info: PyFile) -> Verdict:
        """``super().m`` in a method of class C: the first class after C in its MRO that defines m."""
        f = self.files[u.path]
        where = self.src.facts(u.path, f).enclosing(u.line) or ""
        parts = where.split(".")
        cls = next((q for n in range(len(parts) - 1, 0, -1) if (q := ".".join(parts[:n])) in info.classes), None)
        if cls is None:
            return Verdict(MAYBE, "super() outside a method of a class the check reads")
        world = self.world()
        mro = world.mro(u.path, cls)[1:]
        if not any(t[0] == "unknown" or (t[0] == "class" and (t[1], t[2]) in self.owners) for t in mro):
            # a base from outside the workspace cannot derive from a class of it: none asked about is reached
            bases = ", ".join(t[2] if t[0] == "class" else t[1] for t in mro) or "object"
            return Verdict(NO, f"super() in {cls}: its MRO ({bases}) holds none of the classes asked about")
        for t in mro:
            if t[0] != "class":
                return Verdict(
                    MAYBE, f"super() in {cls}: a base before the one defining {u.name} is not followed ({t[1]})"
                )
            found = world.info(t[1])
            base = found.classes.get(t[2]) if found is not None else None
            if base is not None and u.name in base.members:
                if (t[1], t[2]) in self.owners:
                    return Verdict(YES, f"super() in {cls}: {t[2]}.{u.name}")
                return Verdict(NO, f"super() in {cls} reaches {t[2]}.{u.name}, none of the definitions asked about")
        return Verdict(NO, f"super() in {cls}: no base of it defines {u.name}")

    def _bare(self, u: Use, info: PyFile, at: tuple[int, int]) -> Verdict:
        if self.members_only:
            return Verdict(NO, "a bare name, where only members of a class are asked about")
        found = self._place(u.path, info, at)
        if found is not None and found[1] == 0:
            use = found[0]
            kinds = {b.kind for b in use.bound}
            if (
                use.scope_kind == "local"
                and kinds
                and kinds <= {"param", "value", "builtin", "alias", "augmented", "walrus", "typed", "self"}
            ):
                return Verdict(NO, f"a local {u.name} of the function it lies in (a parameter or a variable)")
        return Verdict(YES, "the name itself")

    def _holder(self, key: str, use: NameUse, i: int) -> Target:
        world = self.world()
        if use.scope_kind == "builtin":
            target: Target = ("builtin", use.chain[0])
        elif use.scope_kind in ("local", "global"):
            target = world.binding(key, use.bound)
        else:
            return ("unknown", f"{use.chain[0]} is not bound where it is used")
        for part in use.chain[1:i]:
            target = world.attribute(target, part)
        return target

    def _verdict(self, u: Use, use: NameUse, i: int, holder: Target) -> Verdict:
        shown = ".".join(use.chain[:i])
        kind = holder[0]
        if kind in ("instance", "class"):
            world = self.world()
            family = world.family(holder[1], holder[2])
            if self.owners & family:
                what = "self" if shown in ("self", "cls") else f"{shown}: {holder[2]}"
                return Verdict(YES, what)
            return Verdict(NO, f"{shown} is a {holder[2]} ({holder[1]}), which is none of the classes asked about")
        if kind == "module":
            keys = set(self.world().by_module.get(holder[1], []))
            if keys & self.function_files:
                return Verdict(YES, f"module {holder[1]}")
            return Verdict(NO, f"an attribute of module {holder[1]}")
        if kind == "outside":
            return Verdict(NO, f"{shown} is {holder[1]}, from outside the workspace")
        if kind == "builtin":
            return Verdict(NO, f"{shown} is a {holder[1]}")
        if kind == "missing":
            return Verdict(MAYBE, f"{shown} no longer resolves")
        kinds = {b.kind for b in use.bound} if i == 1 else set()
        if kinds == {"param"}:
            return Verdict(MAYBE, f"{shown} is a parameter without a type")
        reason = holder[1] if kind == "unknown" and len(holder) > 1 else "a value of unknown type"
        return Verdict(MAYBE, f"the type of {shown} is not known ({reason})")
