"""The trial findings' answers through the real llmem-mcp console script over stdio, as a client
launches it, on an excerpt of simonw/sqlite-utils (tests/data/sqlite-utils): a member's callers
judged by receiver, a CLI command as an entry point, one symbol's outline, a prompt for a few
symbols, a removed method's untyped uses, a search's coverage."""

from __future__ import annotations

import ast
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import call, console_script, subprocess_env

DB = "sqlite_utils/db.py"


@pytest.mark.anyio
async def test_the_trial_findings_over_stdio(sqlite_utils_ws: Path) -> None:
    ws = sqlite_utils_ws
    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(180):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, out = await call(c, "find_references", symbol="insert", path=DB, kind="call", tests="exclude")
            assert not err and out["data"]["resolution"] == "receivers" and out["data"]["left_out"]["count"] >= 3
            err, out = await call(c, "find_references", symbol="insert_files", path="sqlite_utils/cli.py")
            assert not err and out["data"]["entry_point"].endswith("`insert-files`")
            err, out = await call(c, "get_artifact", path=DB, symbol="Table.lookup")
            assert not err and out["data"]["content"]["symbols"][0]["qualified_name"] == "Table.lookup"
            err, out = await call(c, "generate_prompt", path=DB, task="annotate", symbols=["Table.lookup"])
            assert not err and out["data"]["only_symbols"] == ["Table.lookup"]
            err, out = await call(c, "generate_artifact", path=".")
            assert not err
            err, out = await call(c, "search_artifacts", query="lookup", scope="symbols")
            assert not err and out["data"]["coverage"]["outlined_files"] >= 6
            # Table.lookup removed: its uses on values of unknown type may break (by name).
            source = (ws / DB).read_text("utf-8")
            [table] = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Table"]
            [fn] = [n for n in table.body if isinstance(n, ast.FunctionDef) and n.name == "lookup"]
            lines = source.splitlines(keepends=True)
            (ws / DB).write_text("".join(lines[: fn.lineno - 1] + lines[fn.end_lineno or 0 :]), encoding="utf-8")
            err, out = await call(c, "generate_artifact", path=DB)
            assert not err
            err, out = await call(c, "check_references")
            assert not err and out["data"]["may_break_by_name"]["total"] >= 20
