"""What a coding agent stumbled on in the code memory over modelcontextprotocol/servers, through
the server, on real files of that repository (tests/data/servers) copied to tmp_path."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.server import build_server
from llmem.core.config import ServerConfig
from tests.conftest import ROOT, call

SERVERS = ROOT / "tests" / "data" / "servers"
GIT = "src/git/src/mcp_server_git/server.py"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    shutil.copytree(SERVERS / "src", tmp_path / "src")
    shutil.copytree(SERVERS / ".github", tmp_path / ".github")
    (tmp_path / "src" / "git" / ".python-version").write_text("3.10\n", encoding="utf-8")
    # A lock file as uv writes one (abridged): thousands of lines of names in a real workspace.
    (tmp_path / "src" / "git" / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "gitpython"\nversion = "3.1.44"\n\n'
        '[[package]]\nname = "mcp-server-git"\ndependencies = [\n    { name = "gitpython" },\n]\n',
        encoding="utf-8",
    )
    async with Client(build_server(ServerConfig("llmem-mcp", tmp_path)), mode="auto") as c:
        err, _ = await call(c, "generate_artifact", path=".")
        assert not err
        yield c


@pytest.mark.anyio
async def test_a_stale_summary_names_what_it_mentions_that_is_gone_and_how_to_refresh(
    client: Client, tmp_path: Path
) -> None:
    err, out = await call(client, "generate_prompt", path=GIT, task="summarize")
    assert not err
    summary = "# server.py\n\nThe git server: `serve` wires the tools; `git_status` and `git_log` read the repo."
    err, out = await call(client, "store_llm_result", **out["callbackArgs"], result=summary)
    assert not err and out["status"] == "success"
    err, out = await call(client, "list_artifacts", directory="src/git", status="stale")
    assert not err and "To refresh" not in out["nextAction"]  # nothing stale: no advice
    source = tmp_path / GIT
    source.write_text(re.sub(r"\bgit_status\b", "git_state", source.read_text("utf-8")), encoding="utf-8")
    err, out = await call(client, "list_artifacts", directory="src/git", status="stale")
    assert not err and out["data"]["count"] >= 1
    assert "generate_artifact(path)" in out["nextAction"] and "generate_prompt(path, task)" in out["nextAction"]
    err, out = await call(client, "get_artifact", path=GIT, kind="summarize")
    assert not err and out["data"]["status"] == "stale"
    assert out["data"]["gone_names_mentioned"] == ["git_status"]  # git_log and serve are still there
    assert "gone_names_mentioned" in out["nextAction"] and f"generate_prompt('{GIT}', 'summarize')" in out["nextAction"]


def _grep_i(root: Path, text: str) -> set[tuple[str, int]]:
    found = set()
    for path in root.rglob("*"):
        if path.is_file() and ".llmem" not in path.parts:
            for n, line in enumerate(path.read_text("utf-8", "replace").split("\n"), 1):
                if text.lower() in line.lower():
                    found.add((path.relative_to(root).as_posix(), n))
    return found


@pytest.mark.anyio
async def test_files_are_found_by_name_and_read_whole(client: Client, tmp_path: Path) -> None:
    err, out = await call(client, "search_artifacts", query="Dockerfile")
    assert not err
    files = [h["path"] for h in out["data"]["results"] if h["match"] == "file"]
    assert set(files) == {"src/git/Dockerfile", "src/filesystem/Dockerfile"}
    err, out = await call(client, "search_artifacts", query="workflow", scope="files")
    assert not err and [h["path"] for h in out["data"]["results"]] == [".github/workflows/python.yml"]
    err, out = await call(client, "search_artifacts", query=".python-version", scope="files")
    assert not err and [h["path"] for h in out["data"]["results"]] == ["src/git/.python-version"]
    assert out["data"]["total"] == 1 and out["data"]["results"][0]["kind"] == "file"
    # get_artifact(kind='source') without symbol: the whole file.
    err, out = await call(client, "get_artifact", path="src/git/Dockerfile", kind="source")
    assert not err and out["data"]["content"] == (tmp_path / "src/git/Dockerfile").read_text("utf-8")
    err, out = await call(client, "search_artifacts", query="workflow", scope="files", kind="function")
    assert err and out["error"]["details"]["field"] == "kind"


@pytest.mark.anyio
async def test_lock_files_are_left_out_of_line_search_and_counted(client: Client, tmp_path: Path) -> None:
    grepped = _grep_i(tmp_path, "gitpython")
    lock = {(p, n) for p, n in grepped if p == "src/git/uv.lock"}
    assert len(lock) == 2
    err, out = await call(client, "search_artifacts", query="gitpython", scope="lines", limit=100)
    assert not err
    data = out["data"]
    assert {(h["path"], h["start_line"]) for h in data["results"]} == grepped - lock
    assert data["total"] == len(grepped - lock)
    assert data["lock_files_skipped"]["lock_files"] == 1 and data["lock_files_skipped"]["lines"] == 2
    assert "directory=" in data["lock_files_skipped"]["how"]
    err, out = await call(client, "search_artifacts", query="gitpython", scope="lines", directory="src/git/uv.lock")
    assert not err and {(h["path"], h["start_line"]) for h in out["data"]["results"]} == lock
    assert "lock_files_skipped" not in out["data"]


@pytest.mark.anyio
async def test_an_empty_query_says_what_to_pass(client: Client) -> None:
    err, out = await call(client, "search_artifacts", query="  ")
    assert err and out["error"]["details"]["field"] == "query"
    assert (
        "at least one character" in out["error"]["message"] and "list_artifacts(directory=" in out["error"]["message"]
    )


@pytest.mark.anyio
async def test_counts_agree_with_what_was_asked(client: Client) -> None:
    from llmem.code.outline import DATA_KINDS, build_outline, iter_symbols

    # The annotate prompt: the symbols asked apart from the data members shown for context.
    err, out = await call(client, "generate_prompt", path=GIT, task="annotate")
    assert not err
    data = out["data"]
    outline = build_outline(GIT, (SERVERS / GIT).read_bytes())
    members = sum(1 for s in iter_symbols(outline) if s.kind in DATA_KINDS)
    assert data["data_members_for_context"] == members > 0
    asked = data["asked"]
    assert data["asked"] == data["symbols"]
    for part in range(2, data["parts"] + 1):
        err, out = await call(client, "generate_prompt", path=GIT, task="annotate", part=part)
        assert not err and out["data"]["symbols_in_file"] == data["symbols_in_file"]
        asked += out["data"]["asked"]
    assert asked + members == data["symbols_in_file"]
    # store_status(directory): only the parse jobs of that folder, or of a folder holding it.
    err, _ = await call(client, "generate_artifact", path="src/git")
    assert not err
    err, out = await call(client, "store_status", directory="src/filesystem")
    assert not err and {j["path"] for j in out["data"]["parse_jobs"]} <= {"."}
    err, out = await call(client, "store_status", directory="src/git/src")
    assert not err and "src/git" in {j["path"] for j in out["data"]["parse_jobs"]}
    # find_references with a kind: by_kind counts what total counts; by_kind_all every kind.
    err, out = await call(client, "find_references", symbol="validatePath", kind="call")
    assert not err
    refs = out["data"]
    assert sum(refs["by_kind"].values()) == refs["total"] == refs["by_kind_all"]["call"]
    assert sum(refs["by_kind_all"].values()) > refs["total"]
    err, out = await call(client, "find_references", symbol="validatePath")
    assert not err and out["data"]["by_kind"] == refs["by_kind_all"] and "by_kind_all" not in out["data"]


@pytest.mark.anyio
async def test_after_a_rename_the_old_name_is_flagged_through_the_server(client: Client, tmp_path: Path) -> None:
    lib = tmp_path / "src" / "filesystem" / "lib.ts"
    lib.write_text(
        lib.read_text("utf-8").replace("export async function validatePath(", "export async function checkPath("),
        encoding="utf-8",
    )
    err, out = await call(client, "find_references", symbol="validatePath", limit=500)
    assert not err
    data = out["data"]
    assert data["definitions"] == []
    assert data["unresolved_imports"] == [{"path": "src/filesystem/index.ts", "line": 20, "from": "./lib.js"}]
    assert data["note"].startswith("no definition of validatePath in the workspace: these ")
    assert "renamed or removed?" in data["note"]
    # Its uses no longer resolve (check_references' judgement), and the stored outline, older
    # than the file, still lists validatePath: where it was and what it became.
    assert data["unresolved"] is True and "check_references()" in out["nextAction"]
    assert data["last_defined"]["path"] == "src/filesystem/lib.ts" and data["last_defined"]["renamed_to"] == "checkPath"
    assert "'checkPath'" in out["nextAction"]


@pytest.mark.anyio
async def test_a_file_of_data_only_and_a_file_of_overloads_are_annotated_whole(client: Client, tmp_path: Path) -> None:
    import json

    # A settings module (Sphinx's docs/conf.py, click's): variables and nothing else. It has no
    # class or function whose note covers them, so they are asked for themselves.
    (tmp_path / "conf.py").write_text(
        'project = "Click"\nrelease, version = "8.2", "8.2"\nextensions = [\n    "sphinx.ext.autodoc",\n]\n',
        encoding="utf-8",
    )
    err, out = await call(client, "generate_prompt", path="conf.py", task="annotate")
    assert not err, out
    data = out["data"]
    assert data["asked"] == data["symbols_in_file"] == 4 and data["data_members_for_context"] == 0
    for name in ("project", "release", "version", "extensions"):
        assert f"- {name}\n" in out["promptForHostLLM"]
    answer = {
        "symbols": {
            n: {"description": f"{n} of the docs build"} for n in ("project", "release", "version", "extensions")
        }
    }
    err, stored = await call(client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    assert not err and not stored["data"].get("refused"), stored
    # @overload: three definitions, one qualified name, one note: asked once, not three times.
    (tmp_path / "ctx.py").write_text(
        "import typing as t\n\n\n@t.overload\ndef current(silent: t.Literal[False] = False) -> int: ...\n\n\n"
        "@t.overload\ndef current(silent: bool = ...) -> int | None: ...\n\n\n"
        "def current(silent: bool = False) -> int | None:\n    return None\n\n\ndef push() -> None:\n    pass\n",
        encoding="utf-8",
    )
    err, out = await call(client, "generate_prompt", path="ctx.py", task="annotate")
    assert not err
    assert out["data"]["asked"] == 2 and out["promptForHostLLM"].count("\n- current\n") == 1
