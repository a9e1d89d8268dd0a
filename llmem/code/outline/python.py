"""Python outlines through the standard library's ``ast``: exact line ranges, no guessing.

Speed matters (a folder parse outlines thousands of files), so nothing here walks the whole
tree: only statement lists are visited, and signatures are rebuilt from source slices of the
small annotation and default nodes instead of ``ast.unparse``.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import tokenize
from collections import deque

from llmem.code.outline._common import (
    DECORATOR_CAP,
    DOC_CAP,
    SIGNATURE_CAP,
    VALUE_CAP,
    OutlineFailure,
    cap,
    clean_comment,
    drop_shadowed,
    exports_doc,
    one_line,
)
from llmem.code.outline.model import ImportRef, Symbol, SymbolKind

__all__ = ["outline_python"]

_UPPER = re.compile(r"_*[A-Z][A-Z0-9_]*\Z")
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})
_TYPE_FACTORIES = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: Calls that register a handler under a route or a name (decorators like ``@app.get`` are
#: already on their functions).
_REGISTRATIONS = frozenset(
    {"add_url_rule", "add_api_route", "add_api_websocket_route", "add_route", "add_websocket_route", "add_typer"}
)
#: Decorators that register the function as an MCP handler (``@server.list_tools()``,
#: ``@server.call_tool()``, ``@mcp.tool()``, FastMCP's ``@app.tool``): the function is outlined as
#: a ``registration``, as TypeScript's ``server.registerTool(…)`` is.
_MCP_HANDLERS = frozenset(
    {
        "tool",
        "resource",
        "prompt",
        "list_tools",
        "call_tool",
        "list_resources",
        "list_resource_templates",
        "read_resource",
        "list_prompts",
        "get_prompt",
        "subscribe_resource",
        "unsubscribe_resource",
        "completion",
        "progress_notification",
        "set_logging_level",
    }
)
_DYNAMIC_IMPORTS = frozenset({"import_module", "__import__"})
#: ``x = attr.ib()``, ``x = field(...)``, ``x = Column(...)``: a field declared by a call, not annotated
#: (also any ``…Field(...)``: pydantic's ``Field``, Django's ``CharField``).
_FIELD_CALLS = frozenset({"ib", "attrib", "field", "Column", "mapped_column", "relationship"})
_TYPE_ALIAS = getattr(ast, "TypeAlias", None)  # the ``type X = ...`` statement, Python 3.12+
_TRY_STAR = getattr(ast, "TryStar", None)
_Located = ast.expr | ast.stmt | ast.arg | ast.keyword
_COMPOUND: tuple[type[ast.stmt], ...] = tuple(
    t for t in (ast.If, ast.Try, _TRY_STAR, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While) if t is not None
)


def _decode(data: bytes) -> tuple[str, bytes]:
    """The text ``ast`` sees and its UTF-8 bytes (``col_offset`` counts UTF-8 bytes)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise OutlineFailure(f"undecodable: {exc.msg}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise OutlineFailure(f"undecodable: not valid {encoding} at byte {exc.start}") from None
    except LookupError:
        raise OutlineFailure(f"undecodable: unknown encoding {encoding}") from None
    if encoding == "utf-8":
        return text, data
    if encoding == "utf-8-sig":
        return text, data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    return text, text.encode("utf-8")


class _Extractor:
    def __init__(self, source: bytes, test_file: bool = False) -> None:
        self.lines = source.splitlines()
        self.imports: list[ImportRef] = []
        self.test_file = test_file

    # -- source slices -------------------------------------------------------------------

    def seg(self, node: _Located, limit: int = SIGNATURE_CAP) -> str:
        """The source text of ``node`` on one line, read no further than ``limit`` characters."""
        l0 = node.lineno - 1
        l1 = (node.end_lineno or node.lineno) - 1
        c0 = node.col_offset
        c1 = node.end_col_offset
        lines = self.lines
        if l0 == l1:
            return lines[l0][c0:c1].decode("utf-8", "replace")
        parts = [lines[l0][c0:]]
        size = len(parts[0])
        for i in range(l0 + 1, l1):
            if size > limit:
                break
            parts.append(lines[i])
            size += len(lines[i])
        else:
            parts.append(lines[l1][:c1])
        return one_line(b" ".join(parts).decode("utf-8", "replace"), limit)

    def leading_comment(self, first_line: int) -> str | None:
        """The ``#`` comment block directly above 1-based ``first_line``, if any."""
        i = first_line - 2
        lines = self.lines
        start = i
        while i >= 0 and lines[i].lstrip().startswith(b"#"):
            i -= 1
        if i == start:
            return None
        block = b"\n".join(line.strip() for line in lines[i + 1 : start + 1])
        return clean_comment(block.decode("utf-8", "replace"))

    # -- pieces of a symbol --------------------------------------------------------------

    def doc(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
        body = node.body
        if body and type(body[0]) is ast.Expr:
            value = body[0].value
            if type(value) is ast.Constant and type(value.value) is str:
                return cap(inspect.cleandoc(value.value), DOC_CAP) or None
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        return self.leading_comment(first)

    def param(self, arg: ast.arg, default: ast.expr | None, prefix: str = "") -> str:
        text = prefix + arg.arg
        if arg.annotation is not None:
            text += ": " + self.seg(arg.annotation)
            if default is not None:
                text += " = " + self.seg(default)
        elif default is not None:
            text += "=" + self.seg(default)
        return text

    def params(self, a: ast.arguments) -> str:
        out: list[str] = []
        positional = a.posonlyargs + a.args
        first_default = len(positional) - len(a.defaults)
        for i, arg in enumerate(positional):
            out.append(self.param(arg, a.defaults[i - first_default] if i >= first_default else None))
            if i == len(a.posonlyargs) - 1:
                out.append("/")
        if a.vararg is not None:
            out.append(self.param(a.vararg, None, "*"))
        elif a.kwonlyargs:
            out.append("*")
        for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            out.append(self.param(arg, default))
        if a.kwarg is not None:
            out.append(self.param(a.kwarg, None, "**"))
        return ", ".join(out)

    def type_params(self, node: ast.AST) -> str:
        params = getattr(node, "type_params", None)
        return "[" + ", ".join(self.seg(p) for p in params) + "]" if params else ""

    # -- statements ----------------------------------------------------------------------

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, kind: SymbolKind) -> Symbol:
        head = "async def " if type(node) is ast.AsyncFunctionDef else "def "
        sig = f"{head}{node.name}{self.type_params(node)}({self.params(node.args)})"
        if node.returns is not None:
            sig += " -> " + self.seg(node.returns)
        if self.test_file and node.name.startswith("test") and (kind == "method" or not prefix):
            kind = "test"  # what pytest and unittest collect
        elif kind == "function" and any(_mcp_handler(d) for d in node.decorator_list):
            kind = "registration"
        qualified = prefix + node.name
        return self.definition(node, kind, qualified, sig, self.statements(node.body, qualified + ".", "function"))

    def klass(self, node: ast.ClassDef, prefix: str) -> Symbol:
        qualified = prefix + node.name
        bases = [self.seg(b) for b in node.bases] + [self.seg(k) for k in node.keywords]
        sig = f"class {node.name}{self.type_params(node)}"
        if bases:
            sig += "(" + ", ".join(bases) + ")"
        kind: SymbolKind = "test" if self.test_file and node.name.startswith("Test") else "class"
        for base in node.bases:
            name = base.id if type(base) is ast.Name else base.attr if type(base) is ast.Attribute else ""
            if name in _ENUM_BASES:
                kind = "enum"
                break
        children = drop_shadowed(self.statements(node.body, qualified + ".", kind if kind == "enum" else "class"))
        return self.definition(node, kind, qualified, sig, children)

    def definition(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
        kind: SymbolKind,
        qualified: str,
        sig: str,
        children: list[Symbol],
    ) -> Symbol:
        """A function's or class's symbol: its lines, doc and decorators, as every ``def`` has them."""
        return Symbol(
            kind=kind,
            name=node.name,
            qualified_name=qualified,
            signature=one_line(sig, SIGNATURE_CAP),
            start_line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            doc=self.doc(node),
            decorators=[self.seg(d, DECORATOR_CAP) for d in node.decorator_list],
            children=children,
        )

    def variable(self, node: ast.stmt, name: str, kind: SymbolKind) -> Symbol:
        return Symbol(
            kind=kind,
            name=name,
            qualified_name=name,
            signature=self.seg(node),
            start_line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            doc=self.leading_comment(node.lineno),
        )

    def assignment(self, node: ast.Assign | ast.AnnAssign, out: list[Symbol]) -> None:
        if isinstance(node, ast.AnnAssign):
            target = node.target
            if isinstance(target, ast.Name):
                ann = node.annotation
                is_alias = (type(ann) is ast.Name and ann.id == "TypeAlias") or (
                    type(ann) is ast.Attribute and ann.attr == "TypeAlias"
                )
                out.append(self.variable(node, target.id, "type" if is_alias else "constant"))
                if target.id == "__all__":
                    out[-1].doc = self.exports(node.value, out[-1]) or out[-1].doc
            return
        assert type(node) is ast.Assign
        value = node.value
        if type(value) is ast.Call:
            func = value.func
            fname = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
            if fname in _TYPE_FACTORIES and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                out.append(self.variable(node, node.targets[0].id, "type"))
                return
        for each in node.targets:
            names: list[ast.expr] = each.elts if isinstance(each, ast.Tuple | ast.List) else [each]
            for name in names:
                if isinstance(name, ast.Name) and _UPPER.match(name.id):
                    out.append(self.variable(node, name.id, "constant"))
        self.module_variables(node, out)

    def value_sig(self, node: ast.Assign | ast.AnnAssign) -> str:
        """``name: type = value`` with the value cut short: a huge literal costs a few bytes here."""
        if isinstance(node, ast.AnnAssign):
            sig = self.seg(node.target) + ": " + self.seg(node.annotation)
        else:
            sig = " = ".join(self.seg(t) for t in node.targets)
        if node.value is not None:
            sig += " = " + cap(self.seg(node.value, VALUE_CAP).replace("( ", "(").replace(" )", ")"), VALUE_CAP)
        return one_line(sig, SIGNATURE_CAP)

    def member(
        self, node: ast.Assign | ast.AnnAssign, name: str, prefix: str, kind: SymbolKind, doc: str | None
    ) -> Symbol:
        """A new-kind data symbol: field, attribute, enum member or module variable."""
        return Symbol(
            kind=kind,
            name=name,
            qualified_name=prefix + name,
            signature=self.value_sig(node),
            start_line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            doc=doc if doc is not None else self.leading_comment(node.lineno),
        )

    def class_assignment(
        self, node: ast.Assign | ast.AnnAssign, prefix: str, scope: str, doc: str | None, out: list[Symbol]
    ) -> None:
        """Class-level names: annotated ones are fields, enum assignments are members, the rest attributes."""
        targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
        kind: SymbolKind
        if isinstance(node, ast.AnnAssign):
            kind = "enum_member" if scope == "enum" and node.value is not None else "field"
        elif scope == "enum":
            kind = "enum_member"
        else:
            kind = "attribute"
            value = node.value
            if type(value) is ast.Call:
                func = value.func
                fname = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
                if fname in _FIELD_CALLS or fname.endswith("Field"):
                    kind = "field"
        for each in targets:
            names: list[ast.expr] = each.elts if isinstance(each, ast.Tuple | ast.List) else [each]
            for name in names:
                if type(name) is ast.Name:
                    sunder = name.id.startswith("_") and name.id.endswith("_") and len(name.id) > 2
                    out.append(
                        self.member(
                            node, name.id, prefix, "attribute" if kind == "enum_member" and sunder else kind, doc
                        )
                    )

    def module_variables(self, node: ast.Assign, out: list[Symbol]) -> None:
        """Module-level names the constant rule leaves out (lowercase ones, ``__all__``): variables."""
        for each in node.targets:
            names: list[ast.expr] = each.elts if isinstance(each, ast.Tuple | ast.List) else [each]
            for name in names:
                if type(name) is ast.Name and not _UPPER.match(name.id):
                    symbol = self.member(node, name.id, "", "variable", None)
                    if name.id == "__all__":
                        symbol.doc = self.exports(node.value, symbol) or symbol.doc
                    out.append(symbol)

    def exports(self, value: ast.expr | None, symbol: Symbol) -> str | None:
        """``__all__``'s names, listed (the doc the outline shows), when it is a literal list of strings."""
        if not isinstance(value, ast.List | ast.Tuple):
            return None
        names = [e.value for e in value.elts if type(e) is ast.Constant and type(e.value) is str]
        if len(names) != len(value.elts):
            return None
        return exports_doc(names, symbol.start_line, symbol.end_line)

    def import_(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.imports.append(ImportRef(module=alias.name, names=[], line=node.lineno))
        else:
            module = "." * node.level + (node.module or "")
            names = [alias.name for alias in node.names]
            self.imports.append(ImportRef(module=module, names=names, line=node.lineno))

    def statements(self, body: list[ast.stmt], prefix: str, scope: str) -> list[Symbol]:
        """Symbols of one statement list; ``scope`` is "module", "class" or "function".

        Compound statements (``if``, ``try``, ``with``, loops, ``match``) are looked into, so a
        definition under ``if TYPE_CHECKING:`` or ``try: ... except ImportError:`` is found; inside
        functions, nested functions and classes are children of the function (no variables).
        """
        out: list[Symbol] = []
        in_class = scope in ("class", "enum")
        for i, node in enumerate(body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append(self.function(node, prefix, "method" if in_class else "function"))
            elif isinstance(node, ast.ClassDef):
                out.append(self.klass(node, prefix))
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.import_(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                if scope == "module":
                    self.assignment(node, out)
                elif in_class:
                    self.class_assignment(node, prefix, scope, _attribute_doc(body, i), out)
            elif isinstance(node, _COMPOUND):
                out += self.statements(getattr(node, "body", []), prefix, scope)
                out += self.statements(getattr(node, "orelse", []), prefix, scope)
                for handler in getattr(node, "handlers", ()):
                    out += self.statements(handler.body, prefix, scope)
                out += self.statements(getattr(node, "finalbody", []), prefix, scope)
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    out += self.statements(case.body, prefix, scope)
            elif _TYPE_ALIAS is not None and isinstance(node, _TYPE_ALIAS) and scope == "module":
                out.append(self.variable(node, node.name.id, "type"))
            elif type(node) is ast.Expr and not in_class:
                call = node.value
                if type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in _REGISTRATIONS:
                    registration = self.registration(node, call, prefix)
                    if registration is not None:
                        out.append(registration)
        return out

    def registration(self, node: ast.Expr, call: ast.Call, prefix: str) -> Symbol | None:
        """``app.add_url_rule("/x", view_func=…)``, ``router.add_api_route("/items", handler)``:
        a route registered by a call, named by its first argument."""
        if not call.args:
            return None
        first = call.args[0]
        if type(first) is ast.Constant and type(first.value) is str:
            name = first.value
        elif type(first) in (ast.Name, ast.Attribute):
            name = self.seg(first)
        else:
            return None
        more = ", …" if len(call.args) + len(call.keywords) > 1 else ""
        return Symbol(
            kind="registration",
            name=name,
            qualified_name=prefix + name,
            signature=one_line(f"{self.seg(call.func)}({self.seg(first)}{more})", SIGNATURE_CAP),
            start_line=node.lineno,
            end_line=node.end_lineno or node.lineno,
            doc=self.leading_comment(node.lineno),
        )


def outline_python(data: bytes, test_file: bool = False) -> tuple[list[ImportRef], list[Symbol]]:
    """Imports and symbols of a Python source; raises :class:`OutlineFailure` when it cannot.

    In a test file (``test_file``), ``test*`` functions and ``Test*`` classes and their ``test*``
    methods have the kind ``test``."""
    text, source = _decode(data)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise OutlineFailure(f"syntax error at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise OutlineFailure(f"cannot parse: {type(exc).__name__}: {exc}") from None
    extractor = _Extractor(source, test_file)
    symbols = drop_shadowed(extractor.statements(tree.body, "", "module"))
    if b"import_module(" in source or b"__import__(" in source:
        extractor.imports += _dynamic_imports(tree, extractor.lines)
    return extractor.imports, symbols


#: What a line naming a dynamic import holds (any non-ASCII byte too: an identifier may be
#: written in a form NFKC normalises to one of these names).
_DYNAMIC_WORDS = re.compile(rb"import_module|__import__|[\x80-\xff]")


def _mentions(lines: list[bytes], first: int, last: int, pattern: re.Pattern[bytes]) -> bool:
    """Whether ``pattern`` matches on the 1-based lines ``first`` to ``last`` of ``lines``."""
    return pattern.search(b"\n".join(lines[first - 1 : last])) is not None


def _first_line(node: ast.stmt) -> int:
    """Where a statement starts, its decorators included."""
    decorators = getattr(node, "decorator_list", None)
    return min(d.lineno for d in decorators) if decorators else node.lineno


def _mcp_handler(decorator: ast.expr) -> bool:
    """``@x.tool``, ``@x.tool(…)``, ``@server.call_tool()`` …: an MCP handler's registration."""
    target = decorator.func if type(decorator) is ast.Call else decorator
    return type(target) is ast.Attribute and target.attr in _MCP_HANDLERS


def _attribute_doc(body: list[ast.stmt], i: int) -> str | None:
    """The string right under a class-level assignment: the attribute docstring Sphinx reads."""
    if i + 1 < len(body):
        after = body[i + 1]
        if type(after) is ast.Expr and type(after.value) is ast.Constant and type(after.value.value) is str:
            return cap(inspect.cleandoc(after.value.value), DOC_CAP) or None
    return None


def _dynamic_imports(tree: ast.Module, lines: list[bytes]) -> list[ImportRef]:
    """``importlib.import_module("x")`` and ``__import__("x")`` with a literal name, anywhere.

    The nodes are visited in ``ast.walk``'s order, less the statements whose lines do not name
    ``import_module`` or ``__import__`` (a walk of what is left finds the same calls in the
    same order: no call lies in what is left out)."""
    found: list[ImportRef] = []
    todo: deque[ast.AST] = deque(tree.body)
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.stmt) and not _mentions(
            lines, _first_line(node), node.end_lineno or node.lineno, _DYNAMIC_WORDS
        ):
            continue
        todo.extend(ast.iter_child_nodes(node))
        if type(node) is not ast.Call or not node.args:
            continue
        func = node.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
        first = node.args[0]
        if name in _DYNAMIC_IMPORTS and type(first) is ast.Constant and type(first.value) is str:
            found.append(ImportRef(module=first.value, names=[], line=node.lineno))
    found.sort(key=lambda ref: ref.line)
    return found
