"""TypeScript, TSX and JavaScript/JSX outlines from a tree-sitter tree (one grammar family)."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import TYPE_CHECKING

from llmem.code.outline._common import VALUE_CAP, cap, drop_shadowed, one_line
from llmem.code.outline._ts_common import Member, Source, first_row, last_row, members
from llmem.code.outline.model import ImportRef, Symbol, SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["extract"]

_COMMENTS = frozenset({"comment", "html_comment"})
_DECORATORS = frozenset({"decorator"})
_UPPER = re.compile(r"_*[A-Z][A-Z0-9_]*\Z")
_FUNCTION_VALUES = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
        "generator_function_declaration",
    }
)
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_signature"})
_METHODS = frozenset({"method_definition", "abstract_method_signature", "method_signature"})
_FIELDS = frozenset({"public_field_definition", "field_definition"})
#: Test blocks, by the callee's first name (``describe``, ``it.only``, ``test.each(...)``).
_TEST_CALLS = frozenset({"describe", "it", "test", "suite", "context", "specify", "bench"})
#: Member calls that register a handler under a name: ``server.registerTool("read_file", …)``,
#: ``program.command("x")``, ``server.setRequestHandler(Schema, …)``; each with the fewest
#: arguments such a call has (``map.get("k")`` has one).
_REGISTRATIONS = {
    "registerTool": 2,
    "registerResource": 2,
    "registerPrompt": 2,
    "tool": 2,
    "resource": 2,
    "prompt": 2,
    "addTool": 2,
    "addResource": 2,
    "addPrompt": 2,
    "setRequestHandler": 2,
    "setNotificationHandler": 2,
    "command": 1,
    "handle": 2,
}
#: Routes: ``app.get("/path", …)``, ``router.post("/", …)``, ``app.use("/api", router)``,
#: ``app.route("/book")``: the first argument is a path, so ``headers.delete("x")`` is not one.
_ROUTES = {
    "get": 2,
    "post": 2,
    "put": 2,
    "patch": 2,
    "delete": 2,
    "all": 2,
    "options": 2,
    "head": 2,
    "use": 2,
    "route": 1,
}
#: Receivers that send requests rather than serve them: ``this.http.get("/items", opts)``.
_CLIENTS = re.compile(r"(?i)(?:http|axios|client|fetch\w*|request|supertest|agent|api)\Z")
#: A function body is walked only when its text holds something that may make a symbol or an
#: import: a declaration keyword, a function value assigned, a dynamic import or require, a
#: test block, a registration, or a method in an object literal. Most bodies hold none, and
#: plain substring tests (and patterns that start with a literal) answer that fast.
_DECLARING_WORDS = (
    b"function",
    b"class",
    b"import",
    b"require",
    b"describe",
    b"test",
    b"suite",
    b"bench",
    b"context(",
    b"specify(",
)
_IT_CALL = re.compile(rb"it\s*[(.]")
_ASSIGNED_FUNCTION = re.compile(rb"=\s*(?:async\b|<|\(|[\w$]+\s*=>)")
#: ``key: () => …`` in an object literal (TypeScript's ``cb: (e) => void`` matches too: a walk for nothing).
_PAIR_ARROW = re.compile(rb":\s*(?:async\s*)?(?:\([^()]*\)|[\w$]+)\s*=>")
_REGISTERING_CALL = re.compile(
    rb"\.\s*(?:"
    + "|".join(_REGISTRATIONS).encode()
    + rb")\s*[(<]|\.\s*(?:"
    + "|".join(_ROUTES).encode()
    + rb")\s*\(\s*[\"'`][/*]"
)
_OBJECT_METHOD = re.compile(
    rb"[{,]\s*+(?!(?:if|for|while|switch|catch|with|return)\b)(?:async\s+|get\s+|set\s+)?\*?\s*[\w$\"'\]]+\s*"
    rb"\([^()]*\)\s*(?::[^{};]+)?\{"
)


_BEFORE_IT = frozenset(b" \t\r\n;{}(,")


def declaring_offsets(data: bytes) -> list[int]:
    """Sorted offsets in ``data`` where something may make a symbol or an import: a function body
    holding none of them is not walked.

    The one thing it can miss is an object-literal method 400 bytes or more past the object's
    ``{`` in a body holding nothing else (the test suite checks walked and filtered outlines agree
    on real code)."""
    found: list[int] = []
    for word in _DECLARING_WORDS:
        start = data.find(word)
        while start >= 0:
            found.append(start)
            start = data.find(word, start + 1)
    found += [m.start() for m in _IT_CALL.finditer(data) if m.start() == 0 or data[m.start() - 1] in _BEFORE_IT]
    for pattern in (_ASSIGNED_FUNCTION, _REGISTERING_CALL, _PAIR_ARROW):
        found += [m.start() for m in pattern.finditer(data)]
    for opener in (b"({", b", {", b"= {"):  # an object literal: is there a method in its first lines?
        start = data.find(opener)
        while start >= 0:
            brace, end = start + len(opener) - 1, start + 400
            # a method needs a ")" and its body's "{": most objects have neither, and no pattern is tried
            if data.find(b")", brace, end) >= 0 and data.find(b"{", brace + 1, end) >= 0:
                method = _OBJECT_METHOD.search(data, brace, end)
                if method is not None:
                    found.append(method.start())
            start = data.find(opener, start + 1)
    found.sort()
    return found


#: What a function body may hold that is worth a symbol of its own, looked for at any depth.
_NESTED_DECLARATIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",
    }
)
#: Nodes whose subtrees never hold a declaration or a call worth outlining.
_LEAVES = frozenset(
    {
        "string",
        "template_string",
        "number",
        "identifier",
        "property_identifier",
        "comment",
        "regex",
        "type_annotation",
        "type_identifier",
        "predefined_type",
        "jsx_text",
        "import_statement",
    }
)


def _own_decorators(src: Source, node: Node) -> list[str]:
    """Decorators parsed as children of the declaration itself (they lead it)."""
    if not node.child_count or node.child(0).type != "decorator":
        return []
    return [src.decorator(d) for d in node.children if d.type == "decorator"]


def _string(src: Source, node: Node | None) -> str:
    return src.text(node).strip("\"'`") if node is not None else ""


class _Extractor:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.imports: list[ImportRef] = []
        self._declaring: list[int] | None = None

    def may_declare(self, node: Node) -> bool:
        """Whether ``node``'s text holds any of :func:`declaring_offsets` (found once per file)."""
        if self._declaring is None:
            self._declaring = declaring_offsets(self.src.data)
        i = bisect_left(self._declaring, node.start_byte)
        return i < len(self._declaring) and self._declaring[i] < node.end_byte

    def statements(self, children: list[Node], prefix: str) -> list[Symbol]:
        out: list[Symbol] = []
        for member in members(children, self.src, _COMMENTS, _DECORATORS):
            self.statement(member, member.node, prefix, out, exported=False)
        return drop_shadowed(out)

    def statement(self, member: Member, node: Node, prefix: str, out: list[Symbol], exported: bool) -> None:
        t = node.type
        if t == "import_statement":
            self.import_(node)
        elif t == "export_statement":
            self.export(member, node, prefix, out)
        elif t in _CLASSES:
            out.append(self.klass(member, node, prefix, "default"))
        elif t in _FUNCTIONS:
            out.append(self.function(member, node, prefix, "function"))
        elif t == "interface_declaration":
            out.append(self.with_members(self.simple(member, node, prefix, "interface"), node))
        elif t == "type_alias_declaration":
            out.append(self.simple(member, node, prefix, "type", whole=True))
        elif t == "enum_declaration":
            out.append(self.with_members(self.simple(member, node, prefix, "enum"), node))
        elif t in ("lexical_declaration", "variable_declaration"):
            self.variables(member, node, prefix, out, exported)
        elif t in ("internal_module", "module"):
            out.append(self.module(member, node, prefix))
        elif t in ("ambient_declaration", "expression_statement", "ERROR"):
            for child in node.named_children:
                self.statement(member, child, prefix, out, exported)
        elif t == "call_expression":
            self.call(member, node, prefix, out)
        elif t == "assignment_expression":
            self.assignment(member, node, prefix, out)
        elif t in ("await_expression", "parenthesized_expression", "sequence_expression"):
            for child in node.named_children:
                self.statement(member, child, prefix, out, exported)

    def assignment(self, member: Member, node: Node, prefix: str, out: list[Symbol]) -> None:
        """``Anchor.prototype.attach = function (…) {…}``, ``exports.run = async () => …``: a function
        named by the property it is assigned to."""
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is None or right is None or left.type not in ("member_expression", "identifier"):
            return
        if right.type not in _FUNCTION_VALUES and right.type not in _CLASSES:
            if right.type in ("call_expression", "new_expression"):
                self.statement(member, right, prefix, out, exported=False)
            return
        dotted = self.src.text(left)
        name = dotted.rsplit(".", 1)[-1]
        own = self._name(right)
        if own and name in ("exports", "default"):  # module.exports = function applyBind() {…}
            name = dotted = own
        if right.type in _CLASSES:
            symbol = self.klass(member, right, prefix, name)
        else:
            body = right.child_by_field_name("body")
            sig = one_line(dotted + " = " + self.src.signature(right.start_byte, body, right.end_byte))
            symbol = self.src.symbol("function", name, prefix, sig, node.start_point.row, node=node, member=member)
            if body is not None and body.type == "statement_block":
                symbol.children = self.nested(body, prefix + dotted + ".")
        symbol.qualified_name = prefix + dotted
        out.append(symbol)

    # -- calls: test blocks, registrations, dynamic imports ------------------------------

    def call(self, member: Member, node: Node, prefix: str, out: list[Symbol]) -> None:
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if func is None:
            return
        if func.type == "import" or self.src.text(func) == "require":
            first = args.named_children[0] if args is not None and args.named_child_count else None
            if first is not None and first.type in ("string", "template_string"):
                self.imports.append(ImportRef(module=_string(self.src, first), names=[], line=node.start_point.row + 1))
            return
        callee = func
        while callee.type == "call_expression":  # ``describe.each(table)("name", fn)``
            inner = callee.child_by_field_name("function")
            if inner is None:
                break
            callee = inner
        if callee.type == "member_expression":  # (function () { … }).call(this)
            obj = callee.child_by_field_name("object")
            if obj is not None and obj.type == "parenthesized_expression":
                callee = obj
        iife = None
        if callee.type == "parenthesized_expression" and callee.named_child_count:
            iife = callee.named_children[0]  # (async () => { … })(): its body is code like any other
        elif callee.type in _FUNCTION_VALUES:
            iife = callee  # (function () { … }()), how compiled classes are written
        if iife is not None:
            body = iife.child_by_field_name("body") if iife.type in _FUNCTION_VALUES else None
            if body is not None and body.type == "statement_block":
                out.extend(self.nested(body, prefix))
        head, last = _callee_names(self.src, callee)
        if args is None or args.type != "arguments":
            return  # a tagged template: sql`…`
        first = args.named_children[0] if args.named_child_count else None
        if head in _TEST_CALLS and first is not None and first.type in ("string", "template_string"):
            self.block(member, node, prefix, out, "test", _string(self.src, first), args)
        elif first is not None and func.type == "member_expression" and self._registers(func, last, first, args):
            # named by a string, or by a schema: setRequestHandler(ListToolsRequestSchema, …)
            quoted = first.type in ("string", "template_string")
            name = _string(self.src, first) if quoted else self.src.text(first)
            self.block(member, node, prefix, out, "registration", name, args)
        else:
            # Any other call: functions declared in its callbacks still count (main().then(() => …)).
            if func.type == "member_expression":
                obj = func.child_by_field_name("object")
                if obj is not None and obj.type == "call_expression":
                    before = len(out)
                    self.call(member, obj, prefix, out)
                    if (
                        len(out) > before
                        and out[-1].kind == "registration"
                        and out[-1].start_line == obj.start_point.row + 1
                    ):
                        # program.command("x").description(…).action(cb): one registration, cb inside it
                        registration = out[-1]
                        registration.end_line = max(registration.end_line, last_row(node) + 1)
                        self.callbacks(args, registration.qualified_name + ".", registration.children)
                        return
            self.callbacks(args, prefix, out)

    def _registers(self, func: Node, last: str, first: Node, args: Node) -> bool:
        """Whether ``<receiver>.<last>(first, …)`` registers a handler (see :data:`_REGISTRATIONS`)."""
        count = args.named_child_count
        least = _REGISTRATIONS.get(last)
        if least is not None:
            if first.type in ("string", "template_string"):
                return count >= least
            # setRequestHandler(ListToolsRequestSchema, …) is named by its schema
            return last.startswith("set") and first.type in ("identifier", "member_expression") and count >= least
        least = _ROUTES.get(last)
        if least is None or count < least or first.type not in ("string", "template_string"):
            return False
        if not _string(self.src, first).startswith(("/", "*")):
            return False
        receiver = func.child_by_field_name("object")
        name = self.src.text(receiver).rsplit(".", 1)[-1] if receiver is not None else ""
        return not _CLIENTS.search(name)

    def block(
        self, member: Member, node: Node, prefix: str, out: list[Symbol], kind: SymbolKind, name: str, args: Node
    ) -> None:
        """A test block or a registration: named by its first argument, its callbacks' contents as children."""
        name = " ".join(name.split())[:120] or "(anonymous)"
        children: list[Symbol] = []
        self.callbacks(args, prefix + name + ".", children)
        func = node.child_by_field_name("function")
        callee = self.src.text(func) if func is not None else ""
        first = args.named_children[0] if args.named_child_count else None
        shown = self.src.text(first) if first is not None else ""
        more = ", …" if args.named_child_count > 1 else ""
        sig = one_line(f"{callee}({shown}{more})")
        out.append(
            self.src.symbol(kind, name, prefix, sig, node.start_point.row, node=node, member=member, children=children)
        )

    def callbacks(self, args: Node, prefix: str, out: list[Symbol]) -> None:
        for arg in args.named_children:
            while arg.type == "parenthesized_expression" and arg.named_child_count:
                arg = arg.named_children[0]  # noqa: PLW2901 - ((exports) => { … }) is the function itself
            if arg.type in _FUNCTION_VALUES:
                body = arg.child_by_field_name("body")
                if body is not None:
                    out.extend(self.nested(body, prefix))
            elif arg.type == "call_expression":
                self.call(Member(arg, None, []), arg, prefix, out)
            elif arg.type == "object":  # new ReadableStream({ pull() { … }, cancel: () => { … } })
                for item in arg.named_children:
                    if item.type == "method_definition":
                        out.append(self.function(Member(item, None, []), item, prefix, "method"))
                    elif item.type == "pair":
                        value = item.child_by_field_name("value")
                        body = value.child_by_field_name("body") if value is not None else None
                        if value is not None and value.type in _FUNCTION_VALUES and body is not None:
                            out.extend(self.nested(body, prefix))

    def nested(self, body: Node, prefix: str) -> list[Symbol]:
        """Declarations inside a function body or a callback, at any depth of blocks, each once."""
        out: list[Symbol] = []
        if not self.may_declare(body):
            return out
        stack = [body]
        while stack:
            node = stack.pop()
            if node.type == "statement_block" or node is body:
                for member in members(node.children, self.src, _COMMENTS, _DECORATORS):
                    self.nested_statement(member, prefix, out, stack)
            elif node.type == "call_expression":
                self.call(Member(node, None, []), node, prefix, out)  # its callbacks are walked by call()
            elif node.type == "new_expression":
                args = node.child_by_field_name("arguments")
                if args is not None:
                    self.callbacks(args, prefix, out)
            else:
                stack.extend(reversed([c for c in node.named_children if c.type not in _LEAVES]))
        out.sort(key=lambda s: s.start_line)
        return out

    def nested_statement(self, member: Member, prefix: str, out: list[Symbol], stack: list[Node]) -> None:
        node = member.node
        t = node.type
        if t in _FUNCTIONS and t != "function_signature":
            out.append(self.function(member, node, prefix, "function"))
        elif t in _CLASSES:
            out.append(self.klass(member, node, prefix, "default"))
        elif t in ("lexical_declaration", "variable_declaration"):
            # Function values, and calls (dynamic imports, callbacks) in initialisers.
            self.variables(member, node, prefix, out, exported=False, functions_only=True)
        elif t == "expression_statement":
            for child in node.named_children:
                inner = (
                    child.named_children[0] if child.type == "await_expression" and child.named_child_count else child
                )
                if inner.type == "call_expression":
                    self.call(member, inner, prefix, out)
                elif inner.type == "assignment_expression":
                    self.assignment(member, inner, prefix, out)
                else:
                    stack.append(child)
        elif t not in _LEAVES:
            stack.append(node)

    # -- imports and exports -------------------------------------------------------------

    def import_(self, node: Node) -> None:
        names: list[str] = []
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is not None:
            for part in clause.named_children:
                if part.type == "identifier":
                    names.append("default")
                elif part.type == "namespace_import":
                    names.append("*")
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type == "import_specifier":
                            names.append(_string(self.src, spec.child_by_field_name("name")))
        source = _string(self.src, node.child_by_field_name("source"))
        self.imports.append(ImportRef(module=source, names=names, line=node.start_point.row + 1))

    def export(self, member: Member, node: Node, prefix: str, out: list[Symbol]) -> None:
        source = node.child_by_field_name("source")
        if source is not None:  # a re-export: export { a } from "./x" / export * from "./x"
            names: list[str] = []
            for child in node.named_children:
                if child.type == "export_clause":
                    names += [
                        _string(self.src, spec.child_by_field_name("name"))
                        for spec in child.named_children
                        if spec.type == "export_specifier"
                    ]
                elif child.type == "namespace_export":
                    names.append("*")
            if not names:
                names = ["*"]
            self.imports.append(ImportRef(module=_string(self.src, source), names=names, line=node.start_point.row + 1))
            return
        decorators = _own_decorators(self.src, node)
        if decorators:
            member = Member(member.node, member.doc, member.decorators + decorators)
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            self.statement(member, declaration, prefix, out, exported=True)
            return
        value = node.child_by_field_name("value")  # export default <expression>
        if value is None:
            return
        if value.type in _CLASSES:
            out.append(self.klass(member, value, prefix, "default"))
        elif value.type in _FUNCTION_VALUES:
            name = self._name(value) or "default"
            sig = self.src.signature(value.start_byte, value.child_by_field_name("body"), value.end_byte)
            out.append(self.src.symbol("function", name, prefix, sig, value.start_point.row, node=value, member=member))

    # -- declarations --------------------------------------------------------------------

    def _name(self, node: Node) -> str:
        name = node.child_by_field_name("name")
        return self.src.text(name) if name is not None else ""

    def simple(self, member: Member, node: Node, prefix: str, kind: SymbolKind, whole: bool = False) -> Symbol:
        body = None if whole else node.child_by_field_name("body")
        start = first_row(node, _DECORATORS)
        sig = self.src.signature(node.start_byte, body, node.end_byte)
        return self.src.symbol(kind, self._name(node), prefix, sig, start, node=node, member=member)

    def data_sig(self, start: int, value: Node | None, end: int) -> str:
        """``name: type = value`` from ``start``, the value cut short (a huge literal stays a few bytes)."""
        if value is None:
            return self.src.span(start, end).rstrip(" ;,")
        head = self.src.span(start, value.start_byte).rstrip(" =")
        return one_line(head + " = " + cap(self.src.span(value.start_byte, value.end_byte, VALUE_CAP), VALUE_CAP))

    def with_members(self, symbol: Symbol, node: Node) -> Symbol:
        """An interface's properties (``field``) and method signatures (``method``), an enum's members."""
        body = node.child_by_field_name("body")
        if body is None:
            return symbol
        prefix = symbol.qualified_name + "."
        src = self.src
        out = symbol.children
        for m in members(body.children, src, _COMMENTS):
            item = m.node
            t = item.type
            if t in ("property_signature", "method_signature"):
                name_node = item.child_by_field_name("name")
                if name_node is None:
                    continue
                kind: SymbolKind = "field" if t == "property_signature" else "method"
                sig = src.span(item.start_byte, item.end_byte).rstrip(" ;,")
                out.append(
                    src.symbol(kind, _string(src, name_node), prefix, sig, item.start_point.row, node=item, member=m)
                )
            elif t in ("property_identifier", "string", "enum_assignment"):
                name_node = item.child_by_field_name("name") if t == "enum_assignment" else item
                if name_node is None:
                    continue
                value = item.child_by_field_name("value")
                sig = self.data_sig(item.start_byte, value, item.end_byte)
                out.append(
                    src.symbol(
                        "enum_member", _string(src, name_node), prefix, sig, item.start_point.row, node=item, member=m
                    )
                )
        symbol.children = drop_shadowed(out)
        return symbol

    def function(self, member: Member, node: Node, prefix: str, kind: SymbolKind) -> Symbol:
        symbol = self.simple(member, node, prefix, kind)
        body = node.child_by_field_name("body")
        if body is not None:
            symbol.children = self.nested(body, symbol.qualified_name + ".")
        return symbol

    def klass(self, member: Member, node: Node, prefix: str, default_name: str) -> Symbol:
        name = self._name(node) or default_name
        body = node.child_by_field_name("body")
        start_child = next((c for c in node.children if c.type != "decorator"), node)
        sig = self.src.signature(start_child.start_byte, body, node.end_byte)
        decorators = _own_decorators(self.src, node)
        if decorators:
            member = Member(member.node, member.doc, member.decorators + decorators)
        children: list[Symbol] = []
        if body is not None:
            qualified = prefix + name + "."
            for m in members(body.children, self.src, _COMMENTS, _DECORATORS):
                self.class_member(m, qualified, children)
            children = drop_shadowed(children)
        return self.src.symbol(
            "class",
            name,
            prefix,
            sig,
            start_child.start_point.row,
            node=node,
            member=member,
            children=children,
        )

    def class_member(self, member: Member, prefix: str, out: list[Symbol]) -> None:
        node = member.node
        t = node.type
        if t in _METHODS:
            inner = _own_decorators(self.src, node)
            if inner:
                member = Member(node, member.doc, member.decorators + inner)
            out.append(self.function(member, node, prefix, "method"))
            if out[-1].name == "constructor":
                self.parameter_properties(node, prefix, out)
        elif t in _FIELDS:
            value = node.child_by_field_name("value")
            name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
            if name_node is None:
                return
            inner = _own_decorators(self.src, node)
            if inner:
                member = Member(node, member.doc, member.decorators + inner)
            start = first_row(node, _DECORATORS)
            start_child = next((c for c in node.children if c.type != "decorator"), node)
            if value is None or value.type not in _FUNCTION_VALUES:
                sig = self.data_sig(start_child.start_byte, value, node.end_byte)
                name = _string(self.src, name_node)
                out.append(self.src.symbol("field", name, prefix, sig, start, node=node, member=member))
                return
            body = value.child_by_field_name("body")
            sig = self.src.signature(start_child.start_byte, body, node.end_byte)
            method = self.src.symbol("method", self.src.text(name_node), prefix, sig, start, node=node, member=member)
            if body is not None and body.type == "statement_block":
                method.children = self.nested(body, method.qualified_name + ".")
            out.append(method)
        elif t == "ERROR":
            for child in members(node.children, self.src, _COMMENTS, _DECORATORS):
                self.class_member(child, prefix, out)

    def parameter_properties(self, constructor: Node, prefix: str, out: list[Symbol]) -> None:
        """``constructor(private readonly http: HttpClient)``: a parameter with a modifier is a
        property of the class too (``field``), declared on the parameter's line."""
        params = constructor.child_by_field_name("parameters")
        if params is None:
            return
        for param in params.named_children:
            if param.type not in ("required_parameter", "optional_parameter"):
                continue
            if not any(c.type in ("accessibility_modifier", "readonly") for c in param.children):
                continue
            name_node = param.child_by_field_name("pattern")
            if name_node is None or name_node.type != "identifier":
                continue
            start = next((c for c in param.children if c.type != "decorator"), param)
            sig = self.src.span(start.start_byte, param.end_byte)
            name = self.src.text(name_node)
            out.append(self.src.symbol("field", name, prefix, sig, start.start_point.row, node=param))

    def variables(
        self, member: Member, node: Node, prefix: str, out: list[Symbol], exported: bool, functions_only: bool = False
    ) -> None:
        kind_node = node.child_by_field_name("kind")
        keyword = self.src.text(kind_node) if kind_node is not None else node.children[0].type
        for declarator in node.named_children:
            if declarator.type != "variable_declarator":
                continue
            name_node = declarator.child_by_field_name("name")
            value = declarator.child_by_field_name("value")
            if value is not None and value.type == "call_expression" and self._require(value, declarator):
                continue
            while value is not None and value.type == "parenthesized_expression" and value.named_child_count:
                value = value.named_children[0]  # var Range = /** @class */ (function () { … }())
            if value is not None and value.type in ("await_expression", "call_expression", "new_expression"):
                inner = (
                    value.named_children[0] if value.type == "await_expression" and value.named_child_count else value
                )
                if inner.type == "call_expression":
                    self.call(member, inner, prefix, out)  # const { X } = await import("./x.js"), callbacks
                elif inner.type == "new_expression":
                    args = inner.child_by_field_name("arguments")
                    if args is not None:
                        self.callbacks(args, prefix, out)  # new Promise((resolve) => { const f = … })
            if name_node is None or name_node.type != "identifier":
                continue
            name = self.src.text(name_node)
            kind: SymbolKind
            if value is not None and value.type in _CLASSES:  # var Name = class extends … { … }
                klass = self.klass(member, value, prefix, name)
                klass.name, klass.qualified_name = name, prefix + name
                out.append(klass)
                continue
            if value is not None and value.type == "object":
                methods = self.object_methods(value, prefix + name + ".")
                if methods:  # const def = { code(cxt) { … } }: an object of methods, outlined like a class
                    sig = one_line(f"{keyword} {self.src.span(declarator.start_byte, value.start_byte)}").rstrip(" =")
                    symbol = self.src.symbol(
                        "constant", name, prefix, sig, declarator.start_point.row, node=declarator, member=member
                    )
                    symbol.children = methods
                    out.append(symbol)
                    continue
            if value is not None and value.type in _FUNCTION_VALUES:
                kind = "function"
                body = value.child_by_field_name("body")
            elif functions_only:
                continue
            elif keyword == "const" and (exported or _UPPER.match(name)):
                kind = "constant"
                body = None
            else:  # let/var, and a const neither exported nor in capitals: a module variable
                sig = keyword + " " + self.data_sig(declarator.start_byte, value, declarator.end_byte)
                out.append(
                    self.src.symbol(
                        "variable", name, prefix, sig, declarator.start_point.row, node=declarator, member=member
                    )
                )
                continue
            sig = one_line(keyword + " " + self.src.signature(declarator.start_byte, body, declarator.end_byte))
            symbol = self.src.symbol(
                kind, name, prefix, sig, declarator.start_point.row, node=declarator, member=member
            )
            if body is not None and body.type == "statement_block":
                symbol.children = self.nested(body, symbol.qualified_name + ".")
            out.append(symbol)

    def object_methods(self, obj: Node, prefix: str, depth: int = 0) -> list[Symbol]:
        """The methods of an object literal (``run() {…}``, ``run: () => …``), and of the objects
        nested in it (``methods: { … }``), each with what its body declares."""
        out: list[Symbol] = []
        for member in members(obj.children, self.src, _COMMENTS, _DECORATORS):
            item = member.node
            if item.type == "method_definition":
                out.append(self.function(member, item, prefix, "method"))
            elif item.type == "pair":
                key = item.child_by_field_name("key")
                value = item.child_by_field_name("value")
                if key is None or value is None:
                    continue
                name = _string(self.src, key)
                if value.type in _FUNCTION_VALUES:
                    body = value.child_by_field_name("body")
                    sig = self.src.signature(item.start_byte, body, item.end_byte)
                    method = self.src.symbol(
                        "method", name, prefix, sig, item.start_point.row, node=item, member=member
                    )
                    if body is not None and body.type == "statement_block":
                        method.children = self.nested(body, method.qualified_name + ".")
                    out.append(method)
                elif value.type == "object" and depth < 2:
                    inner = self.object_methods(value, prefix + name + ".", depth + 1)
                    if inner:
                        sig = name + ": {…}"
                        group = self.src.symbol(
                            "constant", name, prefix, sig, item.start_point.row, node=item, member=member
                        )
                        group.children = inner
                        out.append(group)
        return out

    def _require(self, call: Node, declarator: Node) -> bool:
        """``const x = require("m")`` (CommonJS) is an import, not a symbol."""
        func = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        if func is None or args is None or self.src.text(func) != "require":
            return False
        first = args.named_children[0] if args.named_child_count else None
        if first is None or first.type != "string":
            return False
        name = declarator.child_by_field_name("name")
        names: list[str] = []
        if name is not None and name.type == "object_pattern":
            for prop in name.named_children:
                key = prop.child_by_field_name("key") if prop.type == "pair_pattern" else prop
                if key is not None:
                    names.append(self.src.text(key))
        self.imports.append(ImportRef(module=_string(self.src, first), names=names, line=call.start_point.row + 1))
        return True

    def module(self, member: Member, node: Node, prefix: str) -> Symbol:
        name_node = node.child_by_field_name("name")
        name = _string(self.src, name_node)
        body = node.child_by_field_name("body")
        children = self.statements(body.children, prefix + name + ".") if body is not None else []
        sig = self.src.signature(node.start_byte, body, node.end_byte)
        return self.src.symbol(
            "module", name, prefix, sig, node.start_point.row, node=node, member=member, children=children
        )


def _callee_names(src: Source, func: Node) -> tuple[str, str]:
    """The first and last names of a callee: ``describe.each`` → (describe, each); ``server.tool`` →
    (server, tool); ``it`` → (it, it)."""
    text = src.text(func) if func.type in ("identifier", "member_expression") else ""
    parts = [p for p in re.split(r"[.\s]+", text) if p]
    if not parts:
        return "", ""
    return parts[0], parts[-1]


def extract(root: Node, src: Source) -> tuple[list[ImportRef], list[Symbol]]:
    extractor = _Extractor(src)
    symbols = extractor.statements(root.children, "")
    return extractor.imports, symbols
