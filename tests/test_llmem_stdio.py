"""llmem-mcp as clients launch it: the installed console script over real stdio."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests._stdio import exchange
from tests.conftest import MODES, console_script, subprocess_env

pytestmark = pytest.mark.anyio


def params(workspace: Path | None, *extra: str, cwd: Path | None = None, **env: str) -> StdioServerParameters:
    args = ([] if workspace is None else ["--workspace", str(workspace)]) + list(extra)
    return StdioServerParameters(
        command=console_script("llmem-mcp"),
        args=args,
        env=subprocess_env(**env),
        cwd=str(cwd) if cwd else None,
    )


def rpc(id_: int | None, method: str, params_: dict[str, Any] | None = None) -> str:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        msg["id"] = id_
    if params_ is not None:
        msg["params"] = params_
    return json.dumps(msg)


def test_stdout_carries_only_json_rpc(sample_project: Path) -> None:
    lines = [
        rpc(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        ),
        rpc(None, "notifications/initialized"),
        rpc(2, "tools/list"),
        rpc(3, "tools/call", {"name": "generate_artifact", "arguments": {"path": "."}}),
        rpc(4, "tools/call", {"name": "get_artifact", "arguments": {"path": "src/app.py"}}),
        rpc(5, "tools/call", {"name": "nope", "arguments": {}}),
        rpc(6, "tools/call", {"name": "get_artifact", "arguments": {"path": "../../etc/passwd"}}),
        rpc(7, "prompts/get", {"name": "tool-descriptions"}),
        "this line is not JSON",
        rpc(8, "tools/call", {"name": "list_artifacts", "arguments": {}}),
    ]
    by_id, stderr = exchange("llmem-mcp", sample_project, lines, {1, 2, 3, 4, 5, 6, 7, 8})
    assert {1, 2, 3, 4, 5, 6, 7, 8} <= set(by_id)
    assert by_id[5]["error"]["code"] == -32602
    assert by_id[6]["result"]["isError"] is True
    assert by_id[6]["result"]["structuredContent"]["error"]["code"] == "PATH_OUTSIDE_WORKSPACE"
    parsed = by_id[3]["result"]["structuredContent"]["data"]
    # get_artifact (4) ran at the same time: it outlines a file never parsed, and the parse says so.
    assert parsed["parsed"] == 2 or [r["path"] for r in parsed["refreshed_since"]] == ["src/app.py"]
    assert by_id[8]["result"]["isError"] is False
    # One structured log line per call, on stderr and in the rotating file alike.
    calls = [json.loads(line) for line in stderr.splitlines() if '"msg": "tool call"' in line]
    # (requests 3 to 8 were all in flight at once: their lines come in any order)
    assert sorted(c["tool"] for c in calls) == ["generate_artifact", "get_artifact", "get_artifact", "list_artifacts"]
    assert all(c["level"] == "info" and c["server"] == "llmem-mcp" and c["duration_ms"] >= 0 for c in calls)
    assert ("get_artifact", False, "PATH_OUTSIDE_WORKSPACE") in {
        (c["tool"], c["success"], c["error_code"]) for c in calls
    }
    assert ("list_artifacts", True, None) in {(c["tool"], c["success"], c["error_code"]) for c in calls}
    log_file = Path(os.environ["LLMEM_LOG_DIR"]) / "llmem-mcp.log"
    logged = log_file.read_text(encoding="utf-8").splitlines()
    assert all(json.dumps(c, ensure_ascii=False) in logged for c in calls)


@pytest.mark.parametrize("mode", MODES)
async def test_console_script_round_trip(sample_project: Path, mode: str) -> None:
    with anyio.fail_after(60):
        async with Client(params(sample_project), mode=mode) as c:  # type: ignore[arg-type]
            assert {t.name for t in (await c.list_tools()).tools} >= {"get_artifact", "store_llm_result"}
            r = await c.call_tool("generate_artifact", {"path": "src"})
            assert r.structured_content and r.structured_content["data"]["parsed"] == 2
            r = await c.call_tool("generate_prompt", {"path": "src/app.py", "task": "summarize"})
            assert r.structured_content
            args = r.structured_content["callbackArgs"]
            r = await c.call_tool("store_llm_result", {**args, "result": "# Summary"})
            assert not r.is_error
            r = await c.call_tool("get_artifact", {"path": "src/app.py", "kind": "summarize"})
            assert r.structured_content and r.structured_content["data"]["content"] == "# Summary"
            with pytest.raises(MCPError):
                await c.call_tool("missing_tool", {})


async def test_several_processes_store_results_at_once(sample_project: Path) -> None:
    files = [f"src/f{i}.py" for i in range(24)]
    for f in files:
        (sample_project / f).write_text(f"def f{f[-4]}():\n    return 1\n")

    async def worker(mine: list[str]) -> None:
        async with Client(params(sample_project), mode="legacy") as c:  # type: ignore[arg-type]
            for f in mine:
                r = await c.call_tool("generate_prompt", {"path": f, "task": "document"})
                assert r.structured_content
                args = r.structured_content["callbackArgs"]
                r = await c.call_tool("store_llm_result", {**args, "result": f"# {f}"})
                assert not r.is_error, r.structured_content

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for k in range(4):
                tg.start_soon(worker, files[k::4])
    for f in files:
        doc = json.loads((sample_project / ".llmem" / "artifacts" / "llmem" / f / "document.json").read_text())
        assert doc["content"] == f"# {f}"


async def test_workspace_from_env_cwd_and_user_store(sample_project: Path, tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(params(None, LLMEM_WORKSPACE=str(sample_project)), mode="legacy") as c:  # type: ignore[arg-type]
            r = await c.call_tool("generate_artifact", {"path": "src/app.py"})
            assert not r.is_error
        assert (sample_project / ".llmem" / "artifacts" / "llmem" / "src" / "app.py" / "outline.json").exists()
        async with Client(params(None, "--store", "user", cwd=sample_project), mode="legacy") as c:  # type: ignore[arg-type]
            r = await c.call_tool("generate_artifact", {"path": "src/util.ts"})
            assert not r.is_error
            prompt = (await c.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
            assert str(sample_project) in prompt
    data_dir = Path(subprocess_env()["LLMEM_DATA_DIR"])
    assert list(data_dir.rglob("util.ts/outline.json"))


def test_help_version_and_bad_options() -> None:
    exe = console_script("llmem-mcp")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "llmem-mcp" in out.stdout
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "--workspace" in out.stdout and "LLMEM_WORKSPACE" not in out.stderr
    out = subprocess.run([exe, "--workspace", "/no/such/folder"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stdout == "" and "--workspace" in out.stderr
    out = subprocess.run([exe, "--transport", "carrier-pigeon"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stdout == ""
