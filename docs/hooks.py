"""MkDocs hooks: the parts of pages that the code already says, made from it at build time.

A page holds a marker where such a part goes; the build puts the part there, so the page can
never drift from the code:

- ``<!-- docstring: llmem/host/chat_socket.py -->``: that module's docstring (read with ``ast``,
  nothing imported): the host's WebSocket and HTTP protocol live in their modules' docstrings;
- ``<!-- analysis-tools -->``: the analysis tools of debrief-calc-mcp as its registry describes
  them to a model (``list_tools`` and ``describe_tool``): a table of all, then each with its
  parameters. A tool added to the registry appears here with no edit of the page;
- ``<!-- api: debrief_calc.Workspace -->``: a class's docstring and each public method's
  signature and docstring, in the order the class's bases define them. The docstrings are
  Google-style with Sphinx roles (``:class:`X```); each section becomes Markdown as written
  (several exceptions on one line of ``Raises`` stay together), a doctest a ``pycon`` block.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_MARKER = re.compile(r"<!-- (docstring|analysis-tools|api)(?:: (\S+))? -->")
_SECTION = re.compile(r"^(Args|Returns|Raises|Example|Examples|Note):$")
_ITEM = re.compile(r"^\s*([A-Za-z_][\w.]*)( \([^)]*\))?:")  # "name:" or "name (type):" opens an item
_ROLE = re.compile(r":\w+:`~?(?:[\w.]+\.)?(\w+)`")  # :class:`~llmem.host.access.Access` -> `Access`


def on_page_markdown(markdown: str, **_: Any) -> str:
    return _MARKER.sub(lambda m: _part(m.group(1), m.group(2)), markdown)


def _part(kind: str, arg: str | None) -> str:
    if kind == "analysis-tools":
        return analysis_tools()
    if not arg:
        raise ValueError(f"<!-- {kind}: … --> needs what it is about")
    return docstring(ROOT / arg) if kind == "docstring" else api(arg)


def docstring(path: Path) -> str:
    """A module's docstring as Markdown (Sphinx roles become code)."""
    text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not text:
        raise ValueError(f"{path} has no module docstring")
    return _ROLE.sub(r"`\1`", text)


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def analysis_tools() -> str:
    """The registry's analysis tools: a summary table, then each tool with its parameters."""
    import debrief_calc as dc

    with tempfile.TemporaryDirectory() as folder:
        ws = dc.Workspace(folder, store=str(Path(folder) / "store"))
        tools = [ws.describe_tool(t["name"]).model_dump(mode="json") for t in ws.list_tools().tools]
    lines = ["| tool | context | takes | gives |", "|---|---|---|---|"]
    for t in tools:
        takes = ", ".join(t["input_kinds"]) or "—"
        lines.append(
            f"| [`{t['name']}`](#{t['name']}) | {', '.join(t['context_types'])} | {takes} | {', '.join(t['output_kinds'])} |"
        )
    for t in tools:
        lines += ["", f"### `{t['name']}` {{#{t['name']}}}", ""]
        lines += [
            f"*version {t['version']} · context {', '.join(t['context_types'])}*",
            "",
            _cell(t["description"]),
            "",
        ]
        if not t["parameters"]:
            lines.append("No parameters.")
            continue
        lines += ["| parameter | type | default | meaning |", "|---|---|---|---|"]
        for p in t["parameters"]:
            kind = p["type"] + (" (required)" if p["required"] else "")
            default = "" if p["default"] is None else f"`{_cell(p['default'])}`"
            extra = []
            if p.get("choices"):
                extra.append("one of " + ", ".join(f"`{c}`" for c in p["choices"]))
            if p.get("unit"):
                extra.append(f"unit {p['unit']}")
            bounds = [(p.get("minimum"), ">" if p.get("exclusive_minimum") else "≥"), (p.get("maximum"), "≤")]
            extra += [f"{sign} {value}" for value, sign in bounds if value is not None]
            meaning = _cell(p["description"]) + (f" ({'; '.join(extra)})" if extra else "")
            lines.append(f"| `{p['name']}` | {kind} | {default} | {meaning} |")
    return "\n".join(lines)


def api(target: str) -> str:
    """A class and its public methods and properties, from their signatures and docstrings."""
    module, _, name = target.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    out = [_google_md(inspect.getdoc(cls) or "")]
    seen: set[str] = set()
    for base in cls.__mro__[:-1]:
        for attr, member in base.__dict__.items():
            if attr.startswith("_") or attr in seen:
                continue
            seen.add(attr)
            if isinstance(member, property | functools.cached_property):
                head = [f"### `ws.{attr}` {{#{attr}}}", "", "*a property*"]
            elif callable(member):
                head = [f"### `ws.{attr}()` {{#{attr}}}", "", "```python", f"ws.{attr}{_signature(member)}", "```"]
            else:
                continue
            out += ["", *head, "", _google_md(inspect.getdoc(member) or "")]
    return "\n".join(out)


def _signature(fn: Any) -> str:
    """``(tool, *, features=None, …) -> RunAnswer``: names and defaults (the annotations are the
    tool's JSON Schema, which the docstring says in words)."""
    sig = inspect.signature(fn)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values() if p.name != "self"]
    returns = sig.return_annotation
    shown = str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))
    return shown + (f" -> {returns}" if returns is not inspect.Signature.empty else "")


def _google_md(doc: str) -> str:
    """A Google-style docstring as Markdown: the summary, then each section as a bold title and
    a list of its items (``name: text``, continuation lines joined), or a doctest block."""
    doc = _ROLE.sub(r"`\1`", doc)
    out: list[str] = []
    section: str | None = None
    items: list[str] = []

    def flush() -> None:
        if section in ("Example", "Examples"):
            out.extend(["```pycon", *(re.sub(r"\s*# doctest:.*$", "", i) for i in items), "```", ""])
        elif items:
            out.extend([*((f"- {i}" if section != "Returns" else i) for i in items), ""])
        items.clear()

    for line in doc.splitlines():
        found = _SECTION.match(line)
        if found:
            flush()
            section = found.group(1)
            out.append(f"**{section}**")
            out.append("")
        elif section is None:
            out.append(line)
        elif section in ("Example", "Examples"):
            if line.strip():
                items.append(line[4:])
        elif not line.strip():
            continue
        elif section in ("Returns", "Note") and items:
            items[-1] += " " + line.strip()  # one paragraph
        elif items and (line.startswith("        ") or not _ITEM.match(line)):
            items[-1] += " " + line.strip()  # an item goes on
        else:
            items.append(_ITEM.sub(r"`\1`\2:", line.strip(), count=1))
    flush()
    return "\n".join(out).strip()
