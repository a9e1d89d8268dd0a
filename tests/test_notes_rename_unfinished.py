"""A note carried by a rename says the rename is unfinished while code anywhere still uses the old
name (trial t23f: ``Router.url_path_for`` → ``Router.reverse`` in encode/starlette, tests/data/starlette,
uses of the old name left in other files; the note stayed ``fresh`` and said nothing).
The uses are check_references' findings whose ``renamed_to`` is the new name; requests.py's union
receiver is checked against ``ast``."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests._servers import parsed_client
from tests.conftest import DATA, MODES, call
from tests.test_check_union import REQUESTS, ROUTING, _rename_in_router, _union_calls

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    shutil.copytree(DATA / "starlette", tmp_path / "ws")
    return tmp_path / "ws"


@pytest.fixture(params=MODES)
async def client(ws: Path, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with parsed_client(ws, request.param) as c:
        yield c


async def _noted_then_renamed(c: Client, ws: Path) -> None:
    err, out = await call(c, "generate_prompt", path=ROUTING, task="annotate", symbols=["Router.url_path_for"])
    assert not err
    note = {"symbols": {"Router.url_path_for": {"description": "The URL path of a named route."}}}
    err, stored = await call(c, "store_llm_result", **out["callbackArgs"], result=json.dumps(note))
    assert not err and stored["status"] == "success"
    _rename_in_router(ws)
    err, _ = await call(c, "generate_artifact", path=ROUTING)
    assert not err


async def _old_name_findings(c: Client) -> list[dict[str, Any]]:
    err, out = await call(c, "check_references", limit=500)
    assert not err
    return [r for r in out["data"]["results"] if r.get("renamed_to") == "Router.reverse"]


async def test_a_renamed_note_says_the_rename_is_unfinished_until_no_old_use_remains(client: Client, ws: Path) -> None:
    await _noted_then_renamed(client, ws)
    left = await _old_name_findings(client)
    err, out = await call(client, "get_artifact", path=ROUTING, kind="annotate")
    assert not err
    data = out["data"]
    assert data["renamed"] == {"Router.url_path_for": "Router.reverse"}
    [unfinished] = data["rename_unfinished"]
    assert unfinished["old"] == "Router.url_path_for" and unfinished["uses"] == len(left) >= 2
    assert unfinished["list_with"] == "check_references()"
    places = sorted((r["path"], r["line"]) for r in left)
    assert unfinished["at"] == [f"{p}:{n}" for p, n in places[: len(unfinished["at"])]]
    assert {f"{REQUESTS}:{n}" for n in _union_calls(ws, "Router", "url_path_for")} <= {f"{p}:{n}" for p, n in places}
    assert all(not p.startswith(ROUTING) for p, _ in places[:2])  # outside the note's file

    err, out = await call(client, "generate_prompt", path=ROUTING, task="annotate")
    assert not err
    section = out["promptForHostLLM"].split("## Rename not finished", 1)[1].split("\n## ", 1)[0]
    assert f"{len(left)} use(s) still name the old name" in section and unfinished["at"][0] in section

    # Every use renamed too: nothing unfinished any more.
    for path in {p for p, _ in places}:
        file = ws / path
        lines = file.read_text("utf-8").splitlines(keepends=True)
        for p, n in places:
            if p == path:
                lines[n - 1] = lines[n - 1].replace("url_path_for(", "reverse(")
        file.write_text("".join(lines), encoding="utf-8")
    assert await _old_name_findings(client) == []
    err, out = await call(client, "get_artifact", path=ROUTING, kind="annotate")
    assert not err and "rename_unfinished" not in out["data"]


async def test_over_stdio_the_renamed_note_says_unfinished(ws: Path) -> None:
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    server = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    async with Client(server, mode="legacy") as c:  # type: ignore[arg-type]
        err, _ = await call(c, "generate_artifact", path=".")
        assert not err
        await _noted_then_renamed(c, ws)
        left = await _old_name_findings(c)
        err, out = await call(c, "get_artifact", path=ROUTING, kind="annotate")
    assert not err and out["data"]["rename_unfinished"][0]["uses"] == len(left) >= 2
