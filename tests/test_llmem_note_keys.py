"""store_llm_result takes a note on any symbol the current outline lists (issue 23 §3), on real
code of modelcontextprotocol/servers (tests/data/servers): the trial's ``serve.list_tools`` (line
322 of the git server, shown in another part than the one asked) and a module variable were
refused as "not symbols of the current outline" and cost an attempt. Now every symbol the
outline lists is stored whatever part the ticket was for; a key naming none is refused with its
exact reason and the call that gets a ticket for it, and the valid keys are stored at no cost."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import call

pytestmark = pytest.mark.anyio

GIT = "src/git/src/mcp_server_git/server.py"


def _every_symbol(symbols: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for s in symbols:
        yield s
        yield from _every_symbol(s.get("children") or [])


def test_every_symbol_the_outline_lists_is_stored_from_the_first_part_of_any_file(servers_ws: Path) -> None:
    llmem = Llmem(ArtifactStore(servers_ws / ".llmem", servers_ws), Limits())
    llmem.parse(".")
    code = sorted(
        p.relative_to(servers_ws).as_posix()
        for p in servers_ws.rglob("*")
        if p.suffix in (".py", ".ts") and ".llmem" not in p.parts
    )
    assert len(code) >= 8
    for path in code:
        outline = llmem.get(path, "outline", 0, 100_000)["content"]
        names = list(dict.fromkeys(s["qualified_name"] for s in _every_symbol(outline["symbols"])))
        if not names:
            continue
        out = llmem.prompt(path, "annotate", 1)  # the first part, whatever the file holds beyond it
        assert out.callbackArgs is not None
        answer = {"symbols": {n: {"description": f"What {n} is for."} for n in names}}
        stored = llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")
        assert stored.status == "success" and stored.data is not None, (path, stored)
        assert stored.data["step"] == 1 and "refused" not in stored.data, (path, stored.data.get("refused"))
        assert stored.data["stored"] == sorted(names)[:100] and stored.data["notes_in_file"] == len(names)
        notes = llmem.get(path, "annotate", 0, None)
        assert notes["status"] == "fresh" and set(notes["content"]["symbols"]) == set(names), path


async def test_the_trials_keys_are_stored_from_a_ticket_for_another_part(
    servers_client: Client, servers_ws: Path
) -> None:
    err, out = await call(servers_client, "generate_prompt", path=GIT, task="annotate", part=1)
    assert not err and out["data"]["parts"] > 1
    shown = out["promptForHostLLM"]
    assert "serve.list_tools" not in shown  # part 1 neither shows nor asks it
    assert _line(servers_ws, r"async def list_tools\(") == 322
    keys = ["serve.list_tools", "DEFAULT_CONTEXT_LINES", "GitTools.DIFF", "GitStatus.repo_path"]
    answer = {"symbols": {k: {"description": f"{k}: what it is."} for k in keys}}
    err, stored = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    assert not err and stored["data"]["step"] == 1 and stored["data"]["stored"] == sorted(keys)
    err, notes = await call(servers_client, "get_artifact", path=GIT, kind="annotate")
    assert not err and set(notes["data"]["content"]["symbols"]) == set(keys)


def _line(servers_ws: Path, pattern: str) -> int:
    lines = (servers_ws / GIT).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if re.search(pattern, line))


async def test_a_partly_invalid_answer_stores_the_valid_keys_and_costs_no_attempt(
    servers_client: Client, servers_ws: Path
) -> None:
    # The test's own reading of the file: which classes have a repo_path field (an ambiguous bare name).
    tree = ast.parse((servers_ws / GIT).read_text(encoding="utf-8"))
    with_repo_path = sorted(
        f"{c.name}.repo_path"
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef)
        and any(isinstance(a, ast.AnnAssign) and getattr(a.target, "id", "") == "repo_path" for a in c.body)
    )
    assert len(with_repo_path) > 3
    err, out = await call(servers_client, "generate_prompt", path=GIT, task="annotate")
    assert not err
    args = out["callbackArgs"]
    answer = {
        "symbols": {
            "git_status": {"description": "Shows the working tree status."},
            "list_repos": {"description": "Lists the repositories the roots hold."},  # one symbol's own name
            "normalizePath": {"description": "Not of this file."},
            "serve.list_tool": {"description": "A typo."},
            "repo_path": {"description": "Ambiguous."},
        }
    }
    err, stored = await call(servers_client, "store_llm_result", **args, result=json.dumps(answer))
    assert not err and stored["status"] == "success"
    data = stored["data"]
    assert data["step"] == 1 and data["stored"] == ["git_status", "serve.list_repos"]
    assert data["keys_mapped"] == {"list_repos": "serve.list_repos"}
    refused = {r["key"]: r for r in data["refused"]}
    assert set(refused) == {"normalizePath", "serve.list_tool", "repo_path"}
    assert refused["normalizePath"]["reason"] == (
        f"'normalizePath' is a symbol of src/filesystem/path-utils.ts, not of {GIT}"
    )
    assert refused["normalizePath"]["call"] == "generate_prompt('src/filesystem/path-utils.ts', 'annotate')"
    assert "did you mean 'serve.list_tools'" in refused["serve.list_tool"]["reason"]
    assert refused["serve.list_tool"]["call"].startswith(f"generate_prompt({GIT!r}, 'annotate', part=")
    assert f"names {len(with_repo_path)} symbols" in refused["repo_path"]["reason"]
    assert all(name in refused["repo_path"]["reason"] for name in with_repo_path[:5])
    assert "refused" in stored["nextAction"]
    err, notes = await call(servers_client, "get_artifact", path=GIT, kind="annotate")
    assert not err and set(notes["data"]["content"]["symbols"]) == {"git_status", "serve.list_repos"}
    err, again = await call(servers_client, "store_llm_result", **args, result=json.dumps(answer))
    assert err and again["error"]["code"] == "TICKET_UNKNOWN"  # used: its answer is stored

    # Nothing valid at all is an invalid answer (it costs that attempt), with every reason.
    err, out = await call(servers_client, "generate_prompt", path=GIT, task="annotate")
    assert not err
    only_bad = {"symbols": {"normalizePath": {"description": "Not of this file."}}}
    err, bad = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(only_bad))
    assert err and bad["error"]["code"] == "RESULT_INVALID"
    assert bad["error"]["details"]["step"] == 1 and bad["error"]["details"]["unknown"] == ["normalizePath"]
    assert "src/filesystem/path-utils.ts" in bad["error"]["message"]


async def test_a_key_renamed_since_says_its_new_name(servers_client: Client, servers_ws: Path) -> None:
    err, out = await call(servers_client, "generate_prompt", path=GIT, task="annotate")
    assert not err
    note = {"symbols": {"git_status": {"description": "Shows the working tree status."}}}
    err, _ = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(note))
    assert not err
    source = servers_ws / GIT
    source.write_text(re.sub(r"\bgit_status\b", "git_state", source.read_text(encoding="utf-8")), encoding="utf-8")
    err, parsed = await call(servers_client, "generate_artifact", path=GIT)
    assert not err and parsed["data"]["renamed"] == {GIT: {"git_status": "git_state"}}
    err, out = await call(servers_client, "generate_prompt", path=GIT, task="annotate")
    assert not err
    answer = {"symbols": {"git_status": {"description": "old name"}, "git_diff": {"description": "Diffs."}}}
    err, stored = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    assert not err and stored["data"]["stored"] == ["git_diff"]
    (refused,) = stored["data"]["refused"]
    assert (
        refused["reason"]
        == "'git_status' was renamed to 'git_state' (its note moved with it): describe it as 'git_state'"
    )
