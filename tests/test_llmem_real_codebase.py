"""A real codebase nobody here wrote, parsed through the server, checked against ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.server import build_server
from llmem.core.config import ServerConfig

pytestmark = pytest.mark.anyio


def ast_symbols(source: str) -> set[tuple[str, int, int]]:
    """(qualified name, first line, last line) of classes, functions and methods, by an independent walk."""
    out: set[tuple[str, int, int]] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + node.name
                out.add((name, node.lineno, node.end_lineno or node.lineno))
                visit(node.body, name + ".")  # nested functions too
            else:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []) or [], prefix)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix)
                for case in getattr(node, "cases", []) or []:
                    visit(case.body, prefix)

    visit(ast.parse(source).body, "")
    return out


def _join_windows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Page items back into symbols: consecutive windows of one symbol's children joined."""
    out: list[dict[str, Any]] = []
    for item in items:
        window = item.get("children_window")
        if window and window[0] > 0 and out and out[-1]["qualified_name"] == item["qualified_name"]:
            out[-1]["children"] = out[-1]["children"] + item["children"]
        else:
            out.append({k: v for k, v in item.items() if k != "children_window"})
    return out


def outline_symbols(symbols: list[dict[str, Any]]) -> set[tuple[str, int, int]]:
    out: set[tuple[str, int, int]] = set()
    for s in symbols:
        if s["kind"] in ("class", "function", "method", "enum", "test"):
            out.add((s["qualified_name"], s["start_line"], s["end_line"]))
        out |= outline_symbols(s["children"])
    return out


async def test_mcp_package_outlines_match_ast(mcp_source: Path) -> None:
    server = build_server(ServerConfig("llmem-mcp", mcp_source))
    files = sorted(mcp_source.rglob("*.py"))
    assert len(files) > 100
    async with Client(server, mode="legacy") as c:
        r = await c.call_tool("generate_artifact", {"path": "mcp"})
        data = (r.structured_content or {})["data"]
        assert data["parsed"] == len(files) and data["failed"] == 0
        mismatches = []
        for f in files:
            rel = f.relative_to(mcp_source).as_posix()
            r = await c.call_tool("get_artifact", {"path": rel, "limit": 100_000})
            got = (r.structured_content or {})["data"]
            content = got["content"]
            if got["paged"]:  # pages of whole top-level symbols (a huge class: windows of its children)
                items, nxt = list(got["content"]["symbols"]), got["next_offset"]
                while nxt is not None:
                    r = await c.call_tool("get_artifact", {"path": rel, "offset": nxt, "limit": 100_000})
                    page = (r.structured_content or {})["data"]
                    items, nxt = items + page["content"]["symbols"], page["next_offset"]
                content = {**got["content"], "symbols": _join_windows(items)}
            assert content["mode"] == "full", rel
            if outline_symbols(content["symbols"]) != ast_symbols(f.read_text(encoding="utf-8")):
                mismatches.append(rel)
        assert mismatches == []
