"""Which names of one Python file resolve, found with ``ast``: the per-file half of ``check_references``.

Python's own scope rules decide where a bare name is looked up: the function's locals (every
name it binds anywhere: assignments, parameters, imports, ``for``/``with``/``except`` targets,
``match`` captures, walrus targets, nested ``def``/``class``), the enclosing functions' (class
bodies are not seen from the methods inside them), the module's (any binding at module level,
under ``if``/``try`` too, and ``global`` assignments in functions), then the builtins. A bare name
found nowhere is *unbound*. Attribute chains rooted at a name (``GitTools.DIFF``,
``mod.func``, ``self.cache``) are kept with how their root is bound, for the workspace half
(:mod:`llmem.code.check`) to follow across files; classes keep their members (class-body
bindings, what their methods store on ``self``, ``__slots__``) and bases. Nothing here reads
another file, knows about the store or about MCP.

What cannot be judged from the text is flagged rather than guessed: a module ``__getattr__``,
``globals()``/``exec`` at module level, a class with ``__getattr__``, ``setattr(self, name)``,
``self.__dict__``, a metaclass or an unknown decorator, names under ``try … except NameError``.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

from llmem.code.check_getattr import module_literals, served_names, strings_of
from llmem.code.check_signatures import ArityFacts, arity_facts

__all__ = [
    "BUILTINS",
    "BUILTIN_TYPES",
    "EXPRESSION_ATTRIBUTE",
    "Binding",
    "NameUse",
    "PyClass",
    "PyFile",
    "python_file",
]

#: Names Python always has: the running interpreter's builtins, those newer versions add, the
#: type checkers' pseudo-builtins (only reached under ``TYPE_CHECKING``).
BUILTINS = frozenset(dir(builtins)) | {
    "PythonFinalizationError",
    "reveal_type",
    "reveal_locals",
    "WindowsError",
    "__builtins__",
    "frozendict",  # 3.15
}
#: The builtin types a value is known to be of (``x = []``, ``x: dict[str, int]``, ``list(…)``):
#: a receiver of one of these is not an instance of a class of the workspace.
BUILTIN_TYPES = frozenset(
    {"list", "dict", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float", "bool", "complex"}
)
#: ``not_checked``'s reason for an attribute of an expression whose type is not followed.
EXPRESSION_ATTRIBUTE = "attribute of an expression (a call, a subscript …)"
#: ``typing``'s names for them, in annotations.
_TYPING_ALIASES = {
    "List": "list",
    "Dict": "dict",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Tuple": "tuple",
    "Text": "str",
}
#: Builtin functions whose result is of a known builtin type.
_RESULT_TYPES = {
    **{t: t for t in BUILTIN_TYPES},
    "sorted": "list",
    "repr": "str",
    "format": "str",
    "chr": "str",
    "ascii": "str",
    "len": "int",
    "ord": "int",
}
#: ``str`` methods that give a ``str``.
_STR_TO_STR = frozenset(
    {"format", "join", "strip", "lstrip", "rstrip", "lower", "upper", "replace", "title", "casefold", "removeprefix",
     "removesuffix", "expandtabs", "center", "ljust", "rjust", "zfill", "swapcase", "capitalize"}
)  # fmt: skip
#: Class decorators that add no attribute a use could name (dataclass fields are in the body).
#: Functions whose name says they set attributes: ``f(C, "x", …)`` may give C an attribute x.
_SETS_ATTRIBUTES = re.compile(r"(?i)attr|prop")
#: Methods of the pickling and copying protocols: a ``setattr(self, name, v)`` or ``self.__dict__``
#: there restores or reads the attributes the class's own code set, it makes no new ones.
_STATE_METHODS = frozenset({"__getstate__", "__setstate__", "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__"})
_PLAIN_DECORATORS = frozenset(
    {"dataclass", "total_ordering", "unique", "final", "runtime_checkable", "verify", "dataclass_transform"}
)


@dataclass(frozen=True)
class Binding:
    """How a name is bound in a scope: ``kind`` is ``def``, ``class`` (``target``: its qualified
    name), ``from`` (``target``: the module, ``name``: what is taken from it, ``level``: leading
    dots), ``module`` (``import a.b [as x]``: ``target`` the dotted module the name stands for),
    ``param``, ``self`` (``target``: the class whose method has it as first parameter),
    ``typed`` (a parameter annotated ``x: C`` or ``C | None``, a name assigned ``x = C(…)``:
    ``target`` the dotted class, ``via`` how its first name is bound where the function or the
    assignment is), ``union`` (annotated ``A | B``, ``Union[A, B]``, ``Optional[Union[…]]``:
    ``via`` a ``typed`` binding per member), ``builtin`` (a value of a builtin type: ``x = []``, ``x = list(…)``,
    ``x: dict[str, int]``; ``target`` the type), ``alias`` (``x = y``: ``via`` how ``y`` is bound
    there), ``augmented`` (``x += …``: whatever ``x`` was, again) or ``value`` (anything else: an
    assignment, a loop target …)."""

    kind: str
    target: str = ""
    name: str = ""
    level: int = 0
    via: tuple[Binding, ...] = ()


@dataclass
class NameUse:
    """A name, or an attribute chain rooted at a name, used in the file.

    ``chain`` is the root then each attribute (``("GitTools", "DIFF")``), ``places`` the
    (line, byte column) of each; ``kind`` ``call`` or ``reference`` (of the last part); ``bound`` the
    bindings of the root where Python would find it (empty: unbound), ``scope_kind`` where:
    ``local``, ``global``, ``builtin``, ``star`` (only a star import could bind it),
    ``unbound``, ``guarded`` (under ``except NameError``)."""

    chain: tuple[str, ...]
    places: tuple[tuple[int, int], ...]
    kind: str
    scope_kind: str = ""
    bound: tuple[Binding, ...] = ()
    guard: str = ""


@dataclass
class ImportName:
    """A name taken by an import: ``from m import name`` (``name`` set) or ``import m`` (``name`` empty)."""

    line: int
    col: int
    module: str
    level: int
    name: str
    local: str
    in_function: bool


@dataclass
class PyClass:
    qualname: str
    line: int
    #: each base as dotted text ("?" when not a dotted name), and the metaclass keyword if any
    bases: list[str] = field(default_factory=list)
    metaclass: str | None = None
    #: names bound in the class body (fields, enum members, methods, nested classes)
    members: set[str] = field(default_factory=set)
    #: names its methods store on their first parameter (``self.x = …``)
    instance: set[str] = field(default_factory=set)
    #: why its attributes cannot be judged, if they cannot
    dynamic: str | None = None
    #: how its bases' and metaclass's names are bound where the class is defined
    base_bindings: dict[str, tuple[Binding, ...]] = field(default_factory=dict)
    #: instance attributes its methods set from one class's constructor or one builtin type
    #: (``self.headers = Headers(…)``, ``self._dict = {…}``), properties annotated with a class:
    #: name → that binding; None where they are set from several, or otherwise
    typed_members: dict[str, Binding | None] = field(default_factory=dict)


@dataclass
class PyFile:
    """What one Python file binds and uses, for the workspace check."""

    globals: dict[str, list[Binding]] = field(default_factory=dict)
    classes: dict[str, PyClass] = field(default_factory=dict)
    uses: list[NameUse] = field(default_factory=list)
    imports: list[ImportName] = field(default_factory=list)
    #: ``from m import *`` at module level: (module, level, line)
    stars: list[tuple[str, int, int]] = field(default_factory=list)
    #: ``__all__`` entries (name, line, column), when ``__all__`` is a literal list or tuple
    exports: list[tuple[str, int, int]] = field(default_factory=list)
    #: why the module's own names cannot all be known (a module ``__getattr__``, ``globals()`` …)
    dynamic: str | None = None
    #: the names a module ``__getattr__`` serves, when its code says them all (:mod:`llmem.code.check_getattr`)
    served: frozenset[str] | None = None
    #: attribute names stored anywhere in the file (``x.name = …``), for attributes set from outside
    stored_attrs: set[str] = field(default_factory=set)
    #: every name the file binds in any scope (the near names of an unbound one)
    all_bound: set[str] = field(default_factory=set)
    #: names ``from __future__ import …`` binds: never a name a use meant (no near name)
    future: set[str] = field(default_factory=set)
    #: attributes stored on a bare name from outside its class (``timezone.utc = …`` after the class,
    #: ``setattr(C, "x", …)``, ``defproperty(C, "x", …)``): name → attributes
    stored_on: dict[str, set[str]] = field(default_factory=dict)
    #: submodules a package's ``__init__`` imports relatively (``from .runners import *`` binds
    #: ``runners`` in the package as a side effect)
    submodules: set[str] = field(default_factory=set)
    #: attributes taken from a value of a known builtin type that is no name (``[a].insert``,
    #: ``", ".join``, ``list(x).pop``): (line, byte column of the attribute) → the type
    builtin_receivers: dict[tuple[int, int], str] = field(default_factory=dict)
    #: the other attributes taken from an expression (``f().x``, ``d["k"].x``): (line, byte column
    #: of the attribute, its name, kind), counted in ``not_checked`` (:data:`EXPRESSION_ATTRIBUTE`)
    expression_members: list[tuple[int, int, str, str]] = field(default_factory=list)
    #: attributes taken from ``super()`` (line, byte column of the attribute): the class's bases'
    super_places: set[tuple[int, int]] = field(default_factory=set)
    #: attributes stored (``x.name = …``, ``del x.name``): (line, byte column of the attribute)
    stored_places: set[tuple[int, int]] = field(default_factory=set)
    #: functions and methods whose own body yields (a call of one makes a generator), by qualified name
    generators: set[str] = field(default_factory=set)
    #: uses not judged, by reason
    not_checked: Counter[str] = field(default_factory=Counter)
    #: its functions' parameters and its calls' arguments (:mod:`llmem.code.check_arity` judges them)
    arity: ArityFacts | None = None
    error: str | None = None


class _Scope:
    __slots__ = ("bindings", "declared_global", "kind", "parent", "qualname", "self_class", "self_name")

    def __init__(self, kind: str, parent: _Scope | None, qualname: str) -> None:
        self.kind = kind  # module, class, function, comprehension
        self.parent = parent
        self.qualname = qualname
        self.bindings: dict[str, list[Binding]] = {}
        self.declared_global: set[str] = set()
        self.self_name: str | None = None  # a method's first parameter
        self.self_class: str | None = None

    def module(self) -> _Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


def _loop_names(
    name: ast.expr, loops: list[ast.For | ast.AsyncFor], literals: dict[str, frozenset[str]]
) -> frozenset[str] | None:
    """The names a computed ``setattr`` name can be, when a loop around it says them all: ``n``
    of ``for n in ("a", "b")`` (or of a module-level literal of strings), ``m.__name__`` of
    ``for m in (cls.a, cls.b)``. None when the code does not say them."""
    dunder = isinstance(name, ast.Attribute) and name.attr == "__name__"
    var = name.value if isinstance(name, ast.Attribute) and dunder else name
    if not isinstance(var, ast.Name):
        return None
    loop = next((lp for lp in reversed(loops) if isinstance(lp.target, ast.Name) and lp.target.id == var.id), None)
    if loop is None or any(
        isinstance(lp.target, ast.Name) and lp.target.id == var.id for lp in loops if lp is not loop
    ):
        return None
    items = loop.iter
    if not dunder:
        if isinstance(items, ast.Name):
            return literals.get(items.id)
        return strings_of(items)
    if not isinstance(items, ast.Tuple | ast.List | ast.Set):
        return None
    names = [e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else None for e in items.elts]
    return None if None in names else frozenset(n for n in names if n is not None)


def _method_of(scope: _Scope) -> str | None:
    """The name of the method ``scope`` is in (a function defined in a class body), or None."""
    while scope.parent is not None:
        if scope.kind == "function" and scope.parent.kind == "class":
            return scope.qualname.rsplit(".", 1)[-1]
        scope = scope.parent
    return None


def _in_module_getattr(scope: _Scope) -> bool:
    """Whether ``scope`` is in a module-level ``__getattr__`` (its ``globals()[…]`` reads the names it serves)."""
    while scope.parent is not None and scope.parent.parent is not None:
        scope = scope.parent
    return scope.kind == "function" and scope.qualname == "__getattr__"


@dataclass
class _Pending:
    scope: _Scope
    use: NameUse
    guard: str | None  # why an unbound name here is not judged


def python_file(data: bytes) -> PyFile:
    """The bindings, classes and uses of one Python file (``error`` set when it does not parse)."""
    out = PyFile()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError) as exc:
        out.error = f"does not parse ({type(exc).__name__}: {getattr(exc, 'msg', exc)})"
        return out
    _Binder(out).run(tree)
    out.arity = arity_facts(tree)
    return out


def _annotated(node: ast.expr) -> ast.expr | None:
    """What an annotation says a value is, less ``None``: ``C`` of ``C``, ``"C"``, ``C | None``
    and ``Optional[C]`` (None: a union of several types, or a string that is no expression)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [n for n in (node.left, node.right) if not (isinstance(n, ast.Constant) and n.value is None)]
        return _annotated(sides[0]) if len(sides) == 1 else None
    if isinstance(node, ast.Subscript) and _dotted(node.value).rsplit(".", 1)[-1] == "Optional":
        return _annotated(node.slice)
    return node


def union_binding(use: NameUse) -> Binding | None:
    """The ``union`` binding of ``use``'s root when that is all that binds it (``x: A | B``)."""
    kept = {b for b in use.bound if b.kind != "augmented"}
    one = next(iter(kept)) if len(kept) == 1 else None
    return one if one is not None and one.kind == "union" else None


def _union_members(node: ast.expr) -> list[ast.expr] | None:
    """The members, less ``None``, of an annotation that is a union of two or more types
    (``A | B``, ``Union[A, B]``, ``Optional[Union[A, B]]``, as a string too); else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return None
    out: list[ast.expr] = []

    def flat(n: ast.expr) -> None:
        last = _dotted(n.value).rsplit(".", 1)[-1] if isinstance(n, ast.Subscript) else ""
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            flat(n.left)
            flat(n.right)
        elif last in ("Union", "Optional"):
            for m in n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]:  # type: ignore[attr-defined]
                flat(m)
        elif not (isinstance(n, ast.Constant) and n.value is None):
            out.append(n)

    flat(node)
    return out if len(out) >= 2 else None


class _Binder:
    def __init__(self, out: PyFile) -> None:
        self.out = out
        self.pending: list[_Pending] = []
        #: why names of the code being visited are not judged: under ``except NameError``, or
        #: under ``if sys.version_info >= (a newer Python)`` (its new builtins)
        self.guards: list[str] = []
        #: attribute names checked by ``hasattr(x, "name")`` around the code being visited
        self.hasattr_names: list[set[str]] = []
        self.class_stack: list[PyClass] = []
        #: the ``for`` loops around the code being visited, innermost last
        self.loops: list[ast.For | ast.AsyncFor] = []
        self.literals: dict[str, frozenset[str]] = {}

    def run(self, tree: ast.Module) -> None:
        module = _Scope("module", None, "")
        self.module = module
        self.literals = module_literals(tree.body)
        for stmt in tree.body:
            self.visit(stmt, module)
        self.out.globals = module.bindings
        if "__getattr__" in module.bindings:  # def __getattr__, or __getattr__ = getattr_migration(…)
            defs = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "__getattr__"]
            if len(module.bindings["__getattr__"]) == 1 and len(defs) == 1:
                self.out.served = served_names(defs[0], module_literals(tree.body))
            if self.out.served is None:
                self.out.dynamic = self.out.dynamic or "a module __getattr__"
        for p in self.pending:
            self._resolve(p)

    # -- binding -----------------------------------------------------------------------------

    def bind(self, scope: _Scope, name: str, binding: Binding) -> None:
        if scope.kind == "comprehension" and binding.kind == "walrus":
            while scope.kind == "comprehension" and scope.parent is not None:
                scope = scope.parent
            binding = Binding("value")
        if name in scope.declared_global:
            scope = scope.module()
        scope.bindings.setdefault(name, []).append(binding)
        self.out.all_bound.add(name)

    def bind_target(self, node: ast.AST, scope: _Scope, walrus: bool = False) -> None:
        """Bind the names an assignment target stores; attributes and subscripts stored are visited."""
        if isinstance(node, ast.Name):
            self.bind(scope, node.id, Binding("walrus" if walrus else "value"))
        elif isinstance(node, ast.Tuple | ast.List):
            for elt in node.elts:
                self.bind_target(elt, scope)
        elif isinstance(node, ast.Starred):
            self.bind_target(node.value, scope)
        else:
            self.visit(node, scope)

    # -- the walk ------------------------------------------------------------------------------

    def visit(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self._function(node, scope)
        elif isinstance(node, ast.Lambda):
            self._arguments_outside(node.args, scope, annotations=False)
            inner = _Scope("function", scope, scope.qualname)
            self._bind_params(node.args, inner, scope)
            self.visit(node.body, inner)
        elif isinstance(node, ast.ClassDef):
            self._class(node, scope)
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            self._comprehension(node, scope)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self._use(scope, (node.id,), ((node.lineno, node.col_offset),), "reference")
            else:
                self.bind(scope, node.id, Binding("value"))
        elif isinstance(node, ast.Attribute):
            self._attribute(node, scope, "reference")
        elif isinstance(node, ast.Call):
            self._call(node, scope)
        elif isinstance(node, ast.Assign):
            self.visit(node.value, scope)
            made = self._value_binding(node.value, scope)
            if made is not None and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.bind(scope, node.targets[0].id, made)  # x = C(…): an instance of C, if C is a class
            else:
                if len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
                    self._typed_member(node.targets[0], made, scope)
                for target in node.targets:
                    self.bind_target(target, scope)
            self._dunder_all(node.targets, node.value, scope)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.visit(node.value, scope)
            self._annotation(node.annotation, scope)
            builtin = self._annotation_type(node.annotation, scope) if isinstance(node.target, ast.Name) else None
            union = self._union(node.annotation, scope) if isinstance(node.target, ast.Name) else None
            if builtin is not None and isinstance(node.target, ast.Name):
                self.bind(scope, node.target.id, Binding("builtin", builtin))
            elif union is not None and isinstance(node.target, ast.Name):
                self.bind(scope, node.target.id, union)
            else:
                if isinstance(node.target, ast.Attribute):  # self.x: A | B = …
                    self._typed_member(node.target, self._union(node.annotation, scope), scope)
                self.bind_target(node.target, scope)
            self._dunder_all([node.target], node.value, scope)
        elif isinstance(node, ast.AugAssign):
            self.visit(node.value, scope)
            if isinstance(node.target, ast.Name):
                self._use(scope, (node.target.id,), ((node.target.lineno, node.target.col_offset),), "reference")
                self.bind(scope, node.target.id, Binding("augmented"))
            else:
                self.visit(node.target, scope)
            self._dunder_all([node.target], node.value, scope, extend=True)
        elif isinstance(node, ast.NamedExpr):
            self.visit(node.value, scope)
            self.bind_target(node.target, scope, walrus=True)
        elif isinstance(node, ast.For | ast.AsyncFor):
            self.visit(node.iter, scope)
            self.bind_target(node.target, scope)
            self.loops.append(node)
            for stmt in node.body:
                self.visit(stmt, scope)
            self.loops.pop()
            for stmt in node.orelse:
                self.visit(stmt, scope)
        elif isinstance(node, ast.withitem):
            self.visit(node.context_expr, scope)
            # with C(…) as x: x is what C's __enter__ returns, an instance of C as a rule (self)
            made = self._value_binding(node.context_expr, scope)
            if made is not None and made.kind == "typed" and isinstance(node.optional_vars, ast.Name):
                self.bind(scope, node.optional_vars.id, made)
            elif node.optional_vars is not None:
                self.bind_target(node.optional_vars, scope)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            self._import(node, scope)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            if isinstance(node, ast.Global) and scope.kind != "module":
                scope.declared_global.update(node.names)
        elif isinstance(node, ast.Try | ast.TryStar):
            self._try(node, scope)
        elif isinstance(node, ast.If) and _newer_python(node.test) is not None:
            self._version_if(node, scope)
        elif isinstance(node, ast.If | ast.IfExp) and _hasattr_names(node.test):
            self.visit(node.test, scope)
            self.hasattr_names.append(_hasattr_names(node.test))
            for part in node.body if isinstance(node.body, list) else [node.body]:
                self.visit(part, scope)
            self.hasattr_names.pop()
            for part in node.orelse if isinstance(node.orelse, list) else [node.orelse]:
                self.visit(part, scope)
        elif isinstance(node, ast.ExceptHandler):
            if node.type is not None:
                self.visit(node.type, scope)
            if node.name:
                self.bind(scope, node.name, Binding("value"))
            for stmt in node.body:
                self.visit(stmt, scope)
        elif isinstance(node, ast.MatchAs | ast.MatchStar):
            if node.name:
                self.bind(scope, node.name, Binding("value"))
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)
        elif isinstance(node, ast.MatchMapping):
            if node.rest:
                self.bind(scope, node.rest, Binding("value"))
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)
        elif isinstance(node, ast.Subscript) and _dotted(node.value) == "sys.modules" and _is_own_name(node.slice):
            self.out.dynamic = self.out.dynamic or "sys.modules[__name__] (its globals set from outside)"
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if not isinstance(target, ast.Name):
                    self.visit(target, scope)
        else:
            if isinstance(node, ast.Yield | ast.YieldFrom):
                self._yielded(scope)
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)

    def _yielded(self, scope: _Scope) -> None:
        """A yield: the function it is in makes a generator when called."""
        while scope.kind != "function" and scope.parent is not None:
            scope = scope.parent
        if scope.kind == "function":
            self.out.generators.add(scope.qualname)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope) -> None:
        for d in node.decorator_list:
            self.visit(d, scope)
        self._arguments_outside(node.args, scope, annotations=True)
        if node.returns is not None:
            self._annotation(node.returns, scope)
        qual = f"{scope.qualname}.{node.name}" if scope.qualname else node.name
        self.bind(scope, node.name, Binding("def", qual))
        inner = _Scope("function", scope, qual)
        self._bind_params(node.args, inner, scope)
        if scope.kind == "class" and self.class_stack:
            decorators = {_dotted(d).rsplit(".", 1)[-1] for d in node.decorator_list}
            params = node.args.posonlyargs + node.args.args
            if params and "staticmethod" not in decorators:
                inner.self_name = params[0].arg
                inner.self_class = self.class_stack[-1].qualname
                inner.bindings[params[0].arg] = [Binding("self", self.class_stack[-1].qualname)]
        if scope.kind == "class" and self.class_stack and node.returns is not None:
            names = {_dotted(d) for d in node.decorator_list}
            if names & {"property", "functools.cached_property", "cached_property"}:  # x.prop -> C: a C
                typed = self._typed(node.returns, scope) or self._union(node.returns, scope)
                cls = self.class_stack[-1]
                if node.name in cls.typed_members and cls.typed_members[node.name] != typed:
                    typed = None
                cls.typed_members[node.name] = typed
        for stmt in node.body:
            self.visit(stmt, inner)

    def _arguments_outside(self, args: ast.arguments, scope: _Scope, annotations: bool) -> None:
        """Defaults and annotations are evaluated where the function is defined."""
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default, scope)
        if annotations:
            every = args.posonlyargs + args.args + args.kwonlyargs
            every += [a for a in (args.vararg, args.kwarg) if a is not None]
            for a in every:
                if a.annotation is not None:
                    self._annotation(a.annotation, scope)

    def _bind_params(self, args: ast.arguments, inner: _Scope, outer: _Scope) -> None:
        every = args.posonlyargs + args.args + args.kwonlyargs
        for a in every:
            typed = self._typed(a.annotation, outer) if a.annotation is not None else None
            builtin = self._annotation_type(a.annotation, outer) if a.annotation is not None and not typed else None
            union = self._union(a.annotation, outer) if a.annotation is not None and not typed else None
            binding = typed or (Binding("builtin", builtin) if builtin else union or Binding("param"))
            inner.bindings.setdefault(a.arg, []).append(binding)
            self.out.all_bound.add(a.arg)
        for rest, packed in ((args.vararg, "tuple"), (args.kwarg, "dict")):
            if rest is not None:  # *args is a tuple, **kwargs a dict, whatever their annotation
                inner.bindings.setdefault(rest.arg, []).append(Binding("builtin", packed))
                self.out.all_bound.add(rest.arg)

    def _typed(self, node: ast.expr, scope: _Scope) -> Binding | None:
        """``C``, ``mod.C``, ``C | None``, ``Optional[C]``, ``"C"``: an instance of the class named,
        its first name looked up where the annotation or the call is (None: not one of those)."""
        core = _annotated(node)
        chain = _chain(core) if core is not None else None
        if chain is None:
            return None
        where, bindings = self._lookup(scope, chain[0])
        if where in ("unbound", "builtin") or not bindings:
            return None
        return Binding("typed", ".".join(chain), via=tuple(bindings))

    def _union(self, node: ast.expr, scope: _Scope) -> Binding | None:
        """``A | B``, ``Union[A, B]``: a ``union`` binding when each member is a class name bound
        here (None: not a union, or a member that is a builtin, a generic, a literal …)."""
        members = _union_members(node)
        if members is None:
            return None
        typed = [self._typed(m, scope) for m in members]
        if any(t is None for t in typed):
            return None
        return Binding("union", via=tuple(t for t in typed if t is not None))

    def _value_binding(self, value: ast.expr, scope: _Scope) -> Binding | None:
        """How ``x = value`` binds ``x`` when that says what it is: an instance of a class
        (``C(…)``), a value of a builtin type, another name's value (``x = y``); else None."""
        builtin = self._value_type(value, scope)
        if builtin is not None:
            return Binding("builtin", builtin)
        if isinstance(value, ast.Call):
            return self._typed(value.func, scope)
        if isinstance(value, ast.Name):
            where, bindings = self._lookup(scope, value.id)
            if where in ("local", "global") and bindings:
                return Binding("alias", value.id, via=tuple(bindings))
        return None

    def _value_type(self, node: ast.expr, scope: _Scope) -> str | None:
        """The builtin type of an expression when its form says it: a literal, a comprehension,
        a call of a builtin (``list(…)``, ``sorted(…)``) or ``typing.cast(T, …)``, a ``str``
        method of a ``str``, ``a + b`` of a ``str``, a list or a tuple."""
        if isinstance(node, ast.List | ast.ListComp):
            return "list"
        if isinstance(node, ast.Dict | ast.DictComp):
            return "dict"
        if isinstance(node, ast.Set | ast.SetComp):
            return "set"
        if isinstance(node, ast.Tuple):
            return "tuple"
        if isinstance(node, ast.JoinedStr):
            return "str"
        if isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, type(...)):
            return type(node.value).__name__
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult | ast.Mod):
            left = self._value_type(node.left, scope)
            return left if left in ("str", "list", "tuple", "bytes") else None
        if isinstance(node, ast.IfExp):
            body = self._value_type(node.body, scope)
            return body if body is not None and body == self._value_type(node.orelse, scope) else None
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Name) and func.id in _RESULT_TYPES and self._lookup(scope, func.id)[0] == "builtin":
            return _RESULT_TYPES[func.id]
        if _dotted(func).rsplit(".", 1)[-1] == "cast" and node.args:
            return self._annotation_type(node.args[0], scope)
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _STR_TO_STR
            and self._value_type(func.value, scope) == "str"
        ):
            return "str"
        return None

    def _annotation_type(self, node: ast.expr, scope: _Scope) -> str | None:
        """The builtin type an annotation names: ``list``, ``list[str]``, ``List[str]``,
        ``dict | None``, ``Optional[str]``, ``"str"``; else None."""
        core = _annotated(node)
        if core is None:
            return None
        node = core.value if isinstance(core, ast.Subscript) else core
        if isinstance(node, ast.Name) and node.id in BUILTIN_TYPES:
            return node.id if self._lookup(scope, node.id)[0] == "builtin" else None
        last = _dotted(node).rsplit(".", 1)[-1]
        return _TYPING_ALIASES.get(last)

    def _class(self, node: ast.ClassDef, scope: _Scope) -> None:
        for d in node.decorator_list:
            self.visit(d, scope)
        for base in node.bases:
            self.visit(base, scope)
        for kw in node.keywords:
            self.visit(kw.value, scope)
        qual = f"{scope.qualname}.{node.name}" if scope.qualname else node.name
        self.bind(scope, node.name, Binding("class", qual))
        cls = PyClass(
            qual, node.lineno, bases=[_dotted(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases]
        )
        for kw in node.keywords:
            if kw.arg == "metaclass":
                cls.metaclass = _dotted(kw.value)
        unknown = [_dotted(d) for d in node.decorator_list]
        unknown = [d for d in unknown if d.rsplit(".", 1)[-1] not in _PLAIN_DECORATORS]
        if unknown:
            cls.dynamic = f"a class decorator ({unknown[0]})"
        if qual in self.out.classes:  # class M: … then class M: … again: a use may mean either
            cls.dynamic = "several definitions in one scope"
        self.out.classes[qual] = cls
        # Where its bases are bound (judged in the workspace half); the class scope is not
        # visible from its body's functions, so the outer scope is asked.
        for dotted in [*cls.bases, *([cls.metaclass] if cls.metaclass else [])]:
            root = dotted.split(".", 1)[0]
            cls.base_bindings[root] = tuple(self._lookup(scope, root)[1])
        inner = _Scope("class", scope, qual)
        self.class_stack.append(cls)
        for stmt in node.body:
            self.visit(stmt, inner)
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and _slots(stmt):
                cls.members.update(_slots(stmt))
        self.class_stack.pop()
        cls.members.update(inner.bindings)
        for dunder in ("__getattr__", "__getattribute__"):
            if dunder in inner.bindings:
                cls.dynamic = cls.dynamic or f"a {dunder}"

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: _Scope) -> None:
        first, *rest = node.generators
        self.visit(first.iter, scope)
        inner = _Scope("comprehension", scope, scope.qualname)
        self.bind_target(first.target, inner)
        for cond in first.ifs:
            self.visit(cond, inner)
        for gen in rest:
            self.visit(gen.iter, inner)
            self.bind_target(gen.target, inner)
            for cond in gen.ifs:
                self.visit(cond, inner)
        if isinstance(node, ast.DictComp):
            self.visit(node.key, inner)
            self.visit(node.value, inner)
        else:
            self.visit(node.elt, inner)

    def _import(self, node: ast.Import | ast.ImportFrom, scope: _Scope) -> None:
        in_function = scope.kind != "module"
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.bind(scope, a.asname, Binding("module", a.name))
                else:
                    top = a.name.split(".", 1)[0]
                    self.bind(scope, top, Binding("module", top))
                local = a.asname or a.name.split(".", 1)[0]
                self.out.imports.append(ImportName(a.lineno, a.col_offset, a.name, 0, "", local, in_function))
            return
        module = node.module or ""
        if node.level == 1 and module and scope.kind == "module":
            self.out.submodules.add(module.split(".", 1)[0])
        for a in node.names:
            if a.name == "*":
                if scope.kind == "module":
                    self.out.stars.append((module, node.level, node.lineno))
                continue
            local = a.asname or a.name
            self.bind(scope, local, Binding("from", module, a.name, node.level))
            if module == "__future__" and not node.level:
                self.out.future.add(local)
            self.out.imports.append(ImportName(a.lineno, a.col_offset, module, node.level, a.name, local, in_function))

    def _try(self, node: ast.Try | ast.TryStar, scope: _Scope) -> None:
        guarded = any(_catches_name_error(h.type) for h in node.handlers)
        if guarded:
            self.guards.append("a name under try/except NameError")
        for stmt in node.body:
            self.visit(stmt, scope)
        if guarded:
            self.guards.pop()
        for part in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(part, scope)

    def _version_if(self, node: ast.If, scope: _Scope) -> None:
        """``if sys.version_info >= (3, 15):``: the branch for a newer Python than this one may use
        its new builtins; they are not judged there."""
        newer = _newer_python(node.test)
        self.visit(node.test, scope)
        for branch, stmts in (("body", node.body), ("orelse", node.orelse)):
            if branch == newer:
                self.guards.append("a name under sys.version_info of a newer Python")
            for stmt in stmts:
                self.visit(stmt, scope)
            if branch == newer:
                self.guards.pop()

    def _annotation(self, node: ast.expr, scope: _Scope) -> None:
        """An annotation; string forward references in it are parsed and their names used."""
        for sub in _forward_strings(node):
            if isinstance(sub.value, str):
                try:
                    parsed = ast.parse(sub.value.strip(), mode="eval")
                except (SyntaxError, ValueError):
                    continue
                for name in ast.walk(parsed):
                    if isinstance(name, ast.Name | ast.Attribute):
                        ast.copy_location(name, sub)
                        name.end_lineno, name.end_col_offset = sub.lineno, sub.col_offset
                self._forward(parsed.body, scope, sub)
        self.visit(node, scope)

    def _forward(self, node: ast.expr, scope: _Scope, at: ast.Constant) -> None:
        """Names of a string annotation, placed at the string (their own columns are inside it)."""
        chain = _chain(node)
        if chain is not None:
            self._use(scope, chain, ((at.lineno, at.col_offset),) * len(chain), "reference")
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._forward(child, scope, at)

    def _call(self, node: ast.Call, scope: _Scope) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            self._use(scope, (func.id,), ((func.lineno, func.col_offset),), "call")
            if _SETS_ATTRIBUTES.search(func.id) and func.id not in ("getattr", "hasattr"):
                self._stored_by_call(node)
            if func.id in ("setattr", "delattr") and node.args:
                self._setattr(node, scope)
            elif func.id in ("globals", "exec") and not (func.id == "globals" and _in_module_getattr(scope)):
                self.out.dynamic = self.out.dynamic or f"its code calls {func.id}()"
            elif func.id in ("getattr", "hasattr") and len(node.args) > 1:
                self.out.not_checked["getattr/hasattr with a name in a string"] += 1
        elif isinstance(func, ast.Attribute):
            if func.attr == "__setattr__" and len(node.args) > 1:
                self._setattr(node, scope, first=1)
            if func.attr in ("_convert_", "_convert"):  # enum's _convert_ makes module globals
                self.out.dynamic = self.out.dynamic or f"{func.attr}() making globals"
            self._attribute(func, scope, "call")
        else:
            self.visit(func, scope)
        for arg in node.args:
            self.visit(arg, scope)
        for kw in node.keywords:
            self.visit(kw.value, scope)

    def _stored_by_call(self, node: ast.Call) -> None:
        """``setattr(C, "x", v)``, ``defproperty(C, "x", …)``: a name and an attribute in a string."""
        if len(node.args) > 1 and isinstance(node.args[0], ast.Name):
            second = node.args[1]
            if isinstance(second, ast.Constant) and isinstance(second.value, str):
                self.out.stored_on.setdefault(node.args[0].id, set()).add(second.value)

    def _setattr(self, node: ast.Call, scope: _Scope, first: int = 0) -> None:
        """``setattr(self, "x", v)`` adds a member; ``setattr(self, name, v)`` makes the class dynamic."""
        target, name = node.args[first], node.args[first + 1] if len(node.args) > first + 1 else None
        cls = self._self_class(target, scope)
        if cls is None:
            return
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            cls.instance.add(name.value)
        elif name is not None and (names := _loop_names(name, self.loops, self.literals)) is not None:
            cls.instance.update(names)  # for n in ("a", "b"): setattr(self, n, …) sets a and b only
        elif (method := _method_of(scope)) not in _STATE_METHODS:
            cls.dynamic = cls.dynamic or f"setattr on self with a computed name (in {method or 'a method'})"

    def _typed_member(self, target: ast.Attribute, made: Binding | None, scope: _Scope) -> None:
        """``self.x = C(…)`` (or ``= {…}``, ``= list(…)``): x of the class's instances is what that
        makes, unless set otherwise elsewhere."""
        cls = self._self_class(target.value, scope)
        if cls is None:
            return
        typed = made if made is not None and made.kind in ("typed", "builtin", "union") else None
        if target.attr in cls.typed_members and cls.typed_members[target.attr] != typed:
            typed = None
        cls.typed_members[target.attr] = typed

    def _self_class(self, node: ast.expr, scope: _Scope) -> PyClass | None:
        if not isinstance(node, ast.Name):
            return None
        found, bindings = self._lookup(scope, node.id)
        if found and len(bindings) == 1 and bindings[0].kind == "self":
            return self.out.classes.get(bindings[0].target)
        return None

    def _attribute(self, node: ast.Attribute, scope: _Scope, kind: str) -> None:
        chain = _chain(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.out.stored_attrs.add(node.attr)
            if node.end_lineno is not None and node.end_col_offset is not None:
                self.out.stored_places.add((node.end_lineno, node.end_col_offset - len(node.attr)))
            if isinstance(node.value, ast.Name):
                self.out.stored_on.setdefault(node.value.id, set()).add(node.attr)
            cls = self._self_class(node.value, scope)
            if cls is not None:
                cls.instance.add(node.attr)
            self.visit(node.value, scope)
            return
        if node.attr == "__dict__":
            cls = self._self_class(node.value, scope)
            if cls is not None and (method := _method_of(scope)) not in _STATE_METHODS:
                cls.dynamic = cls.dynamic or f"self.__dict__ used (in {method or 'a method'})"
        if chain is None:
            self.out.not_checked[EXPRESSION_ATTRIBUTE] += 1
            builtin = self._value_type(node.value, scope)
            if node.end_lineno is not None and node.end_col_offset is not None:
                at = (node.end_lineno, node.end_col_offset - len(node.attr))
                if builtin is not None:
                    self.out.builtin_receivers[at] = builtin
                else:
                    if isinstance(node.value, ast.Call) and _dotted(node.value.func) == "super":
                        self.out.super_places.add(at)
                    self.out.expression_members.append((*at, node.attr, kind))
            self.visit(node.value, scope)
            return
        self._use(scope, chain, _chain_places(node), kind)

    def _use(self, scope: _Scope, chain: tuple[str, ...], places: tuple[tuple[int, int], ...], kind: str) -> None:
        use = NameUse(chain, places, kind)
        if len(chain) > 1 and any(chain[-1] in names for names in self.hasattr_names):
            use.guard = "an attribute checked with hasattr first"
        self.pending.append(_Pending(scope, use, self.guards[-1] if self.guards else None))

    def _dunder_all(self, targets: list[ast.expr], value: ast.expr | None, scope: _Scope, extend: bool = False) -> None:
        if scope.kind != "module" or not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return
        if isinstance(value, ast.List | ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            if not extend:
                self.out.exports = []
            self.out.exports += [(str(e.value), e.lineno, e.col_offset + 1) for e in value.elts]  # type: ignore[attr-defined]
        else:
            self.out.not_checked["__all__ built by code"] += 1

    # -- resolving -------------------------------------------------------------------------------

    def _lookup(self, scope: _Scope, name: str) -> tuple[str, list[Binding]]:
        """Where Python finds ``name`` used in ``scope``: (``local``/``global``/``builtin``/``unbound``, bindings)."""
        if name in scope.declared_global:
            scope = scope.module()
        s: _Scope | None = scope
        crossed = False
        while s is not None:
            if s.kind == "class" and crossed:
                s = s.parent
                continue
            found = s.bindings.get(name)
            if found:
                return ("global" if s.parent is None else "local"), found
            if s.kind == "function":
                crossed = True
            s = s.parent
        if name in BUILTINS or (name.startswith("__") and name.endswith("__")):
            return "builtin", []
        return "unbound", []

    def _resolve(self, p: _Pending) -> None:
        use = p.use
        where, bindings = self._lookup(p.scope, use.chain[0])
        if where == "unbound":
            if p.guard is not None:
                where = "guarded"
                use.guard = p.guard
            elif self.out.stars:
                where = "star"
        use.scope_kind = where
        use.bound = tuple(bindings)
        self.out.uses.append(use)


def _forward_strings(node: ast.expr) -> list[ast.Constant]:
    """The strings of an annotation that are forward references: not ``Literal["a"]``'s values,
    nor ``Annotated``'s metadata, nor the arguments of a call (``Field(description="…")``)."""
    if isinstance(node, ast.Constant):
        return [node] if isinstance(node.value, str) else []
    if isinstance(node, ast.Call):
        return []
    if isinstance(node, ast.Subscript):
        base = _dotted(node.value).rsplit(".", 1)[-1]
        if base == "Literal":
            return []
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [s for a in (args[:1] if base == "Annotated" else args) for s in _forward_strings(a)]
    return [s for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr) for s in _forward_strings(child)]


def _is_own_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "__name__"


def _hasattr_names(test: ast.expr) -> set[str]:
    """The attribute names ``hasattr(x, "name")`` checks in a condition (``and``-ed ones too)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return {
        p.args[1].value
        for p in parts
        if isinstance(p, ast.Call)
        and isinstance(p.func, ast.Name)
        and p.func.id == "hasattr"
        and len(p.args) > 1
        and isinstance(p.args[1], ast.Constant)
        and isinstance(p.args[1].value, str)
    }


def _newer_python(test: ast.expr) -> str | None:
    """Which branch of ``if sys.version_info <op> (x, y)`` runs only on a Python newer than this one."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Tuple)):
        return None
    left = test.left.value if isinstance(test.left, ast.Subscript) else test.left
    if _dotted(left) not in ("sys.version_info", "version_info"):
        return None
    elts = test.comparators[0].elts
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in elts):
        return None
    wanted = tuple(e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, int))
    if wanted <= sys.version_info[: len(wanted)]:
        return None
    op = test.ops[0]
    return "body" if isinstance(op, ast.GtE | ast.Gt) else "orelse" if isinstance(op, ast.Lt | ast.LtE) else None


def _catches_name_error(node: ast.expr | None) -> bool:
    if node is None:
        return False
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(_dotted(n).rsplit(".", 1)[-1] in ("NameError", "UnboundLocalError") for n in names)


def _dotted(node: ast.expr) -> str:
    chain = _chain(node.func if isinstance(node, ast.Call) else node)
    return ".".join(chain) if chain is not None else "?"


def _chain(node: ast.expr) -> tuple[str, ...] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def _chain_places(node: ast.Attribute) -> tuple[tuple[int, int], ...]:
    """The (line, byte column) of each part of a name-rooted chain (an attribute ends where its node ends)."""
    places: list[tuple[int, int]] = []
    cur: ast.expr = node
    while isinstance(cur, ast.Attribute):
        places.append((cur.end_lineno or cur.lineno, (cur.end_col_offset or 0) - len(cur.attr)))
        cur = cur.value
    places.append((cur.lineno, cur.col_offset))
    return tuple(reversed(places))


def _slots(stmt: ast.Assign | ast.AnnAssign) -> set[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if not any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets) or stmt.value is None:
        return set()
    values = stmt.value.elts if isinstance(stmt.value, ast.Tuple | ast.List | ast.Set) else [stmt.value]
    return {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
