"""llmem-mcp through the real protocol, in process, in both protocol eras."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from tests.conftest import MODES, call

pytestmark = pytest.mark.anyio

TOOLS = {
    "generate_artifact",
    "list_artifacts",
    "get_artifact",
    "generate_prompt",
    "store_llm_result",
    "delete_artifact",
    "search_artifacts",
    "store_status",
    "cancel_prompt",
    "find_references",
    "check_references",
}


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, sample_project: Path) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("llmem-mcp", sample_project, limits=Limits(max_steps=3)))
    async with Client(server, mode=request.param) as c:
        yield c


async def test_tools_are_listed_with_honest_annotations(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert t.description and len(t.description) < 200
        a = t.annotations
        assert a is not None and a.open_world_hint is False
        assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        assert t.output_schema is not None
    reads = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert reads == {
        "list_artifacts",
        "get_artifact",
        "generate_prompt",
        "search_artifacts",
        "store_status",
        "find_references",
        "check_references",
    }
    assert tools["delete_artifact"].annotations.destructive_hint is True  # type: ignore[union-attr]
    size = sum(len(json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"))) for t in tools.values())
    assert size / len(tools) <= 700


async def test_tool_descriptions_prompt(client: Client, sample_project: Path) -> None:
    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert "tool-descriptions" in prompts
    text = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
    for tool in TOOLS:
        assert f"`{tool}`" in text
    assert str(sample_project) in text
    assert "store_llm_result" in text and "SOURCE_CHANGED" in text


async def test_unknown_tool_is_a_protocol_error(client: Client) -> None:
    with pytest.raises(MCPError) as info:
        await client.call_tool("no_such_tool", {})
    assert info.value.error.code == -32602


async def test_parse_folder_then_read_outline(client: Client) -> None:
    err, out = await call(client, "generate_artifact", path=".")
    assert not err and out["status"] == "success"
    data = out["data"]
    assert data["parsed"] == 2 and data["failed"] == 0 and data["complete"] is True
    reasons = {s["path"]: s["reason"] for s in data["skipped_files"]}
    assert reasons.get("generated/") == "gitignored"
    assert reasons.get("debug.log") == "gitignored"
    assert reasons.get("node_modules/") == "dependency-dir"
    err, out = await call(client, "get_artifact", path="src/app.py")
    assert not err and out["data"]["status"] == "fresh"
    content = out["data"]["content"]
    names = {s["qualified_name"] for s in content["symbols"]} | {
        c["qualified_name"] for s in content["symbols"] for c in s["children"]
    }
    assert {"Greeter", "Greeter.hello", "main", "MAX_ITEMS"} <= names
    err, out = await call(client, "get_artifact", path="src/util.ts")
    ts_names = {s["name"] for s in out["data"]["content"]["symbols"]}
    assert {"add", "Shape", "Box"} <= ts_names
    # incremental: a second run redoes nothing
    err, out = await call(client, "generate_artifact", path=".")
    assert out["data"]["parsed"] == 0 and out["data"]["unchanged"] == 2


async def test_full_callback_cycle_with_a_retry_on_the_same_ticket(client: Client) -> None:
    await call(client, "generate_artifact", path="src/app.py")
    err, out = await call(client, "generate_prompt", path="src/app.py", task="annotate")
    assert not err and out["status"] == "prompt_ready"
    assert out["callbackTool"] == "store_llm_result"
    assert "Greeter.hello" in out["promptForHostLLM"]
    args = out["callbackArgs"]
    # pending is visible while the host works on it
    _, listing = await call(client, "list_artifacts", status="pending")
    kinds = [k for f in listing["data"]["folders"] for e in f["entries"] for k in e["kinds"]]
    assert kinds and kinds[0]["status"] == "pending" and kinds[0]["ticket"] == args["ticket"]
    err, bad = await call(client, "store_llm_result", **args, result="Here you go: not JSON")
    assert err and bad["error"]["code"] == "RESULT_INVALID"
    assert bad["callbackArgs"] == args and "same ticket" in bad["nextAction"]
    err, bad = await call(
        client, "store_llm_result", **args, result=json.dumps({"symbols": {"Nope": {"description": "x"}}})
    )
    assert err and bad["error"]["details"]["unknown"] == ["Nope"]
    answer = {
        "symbols": {
            "Greeter": {"description": "Says hello."},
            "Greeter.hello": {"description": "Greets.", "inputs": "name", "outputs": "greeting"},
        }
    }
    err, ok = await call(
        client,
        "store_llm_result",
        **args,
        result="```json\n" + json.dumps(answer) + "\n```",
        model="test-model",
    )
    assert not err, ok
    assert ok["data"]["step"] == 3 and "main" in ok["data"]["missing_symbols"]
    err, again = await call(client, "store_llm_result", **args, result=json.dumps(answer))
    assert err and again["error"]["code"] == "TICKET_UNKNOWN"
    err, got = await call(client, "get_artifact", path="src/app.py", kind="annotate")
    assert got["data"]["content"]["symbols"]["Greeter.hello"]["outputs"] == "greeting"
    assert got["data"]["provenance"]["model"] == "test-model"


async def test_step_limit_closes_the_ticket(client: Client) -> None:
    _, out = await call(client, "generate_prompt", path="src/app.py", task="annotate")
    args = out["callbackArgs"]
    codes = [(await call(client, "store_llm_result", **args, result="nope"))[1]["error"]["code"] for _ in range(4)]
    assert codes == ["RESULT_INVALID", "RESULT_INVALID", "STEP_LIMIT", "STEP_LIMIT"]


async def test_source_changed_and_stale(client: Client, sample_project: Path) -> None:
    await call(client, "generate_artifact", path="src/app.py")
    _, out = await call(client, "generate_prompt", path="src/app.py", task="summarize")
    args = out["callbackArgs"]
    _, _done = await call(client, "store_llm_result", **args, result="# App\nSays hello.")
    _, out = await call(client, "generate_prompt", path="src/app.py", task="annotate")
    src = sample_project / "src" / "app.py"
    src.write_text(src.read_text().replace("class Greeter:", "class Welcomer:").replace("def main", "def run"))
    err, changed = await call(
        client,
        "store_llm_result",
        **out["callbackArgs"],
        result=json.dumps({"symbols": {"Greeter": {"description": "x"}}}),
    )
    assert err and changed["error"]["code"] == "SOURCE_CHANGED"
    assert "generate_prompt" in changed["nextAction"]
    _, got = await call(client, "get_artifact", path="src/app.py", kind="summarize")
    assert got["data"]["status"] == "stale"
    # the class and the function kept their bodies under new names: gone, and renamed to them
    assert {"symbol": "Greeter", "change": "gone", "renamed_to": "Welcomer"} in got["data"]["stale_symbols"]
    assert {"symbol": "main", "change": "gone", "renamed_to": "run"} in got["data"]["stale_symbols"]
    assert "Welcomer" in got["data"]["new_symbols"]
    _, got = await call(client, "get_artifact", path="src/app.py")
    assert got["data"]["status"] == "fresh"  # outlines are made again on read, never stale
    assert "Welcomer" in json.dumps(got["data"]["content"])
    src.unlink()
    _, got = await call(client, "get_artifact", path="src/app.py")
    assert got["data"]["status"] == "orphaned"
    _, listing = await call(client, "list_artifacts", directory="src")
    statuses = {k["status"] for f in listing["data"]["folders"] for e in f["entries"] for k in e["kinds"]}
    assert "orphaned" in statuses


async def test_stale_annotations_keep_gone_symbols_apart(client: Client, sample_project: Path) -> None:
    _, out = await call(client, "generate_prompt", path="src/app.py", task="annotate")
    answer = {"symbols": {"Greeter": {"description": "a"}, "main": {"description": "b"}}}
    await call(client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    src = sample_project / "src" / "app.py"
    # Renamed and changed: not the same code, so the note does not follow (a plain rename does).
    src.write_text(src.read_text().replace("def main", "def run").replace("return 0", "return 1"))
    _, got = await call(client, "get_artifact", path="src/app.py", kind="annotate")
    content = got["data"]["content"]
    assert got["data"]["status"] == "stale" and "renamed" not in got["data"]
    assert set(content["symbols"]) == {"Greeter"} and set(content["gone_symbols"]) == {"main"}
    assert "run" in content["undescribed"]


async def test_folder_summary_builds_on_file_summaries(client: Client) -> None:
    await call(client, "generate_artifact", path=".")
    _, out = await call(client, "generate_prompt", path="src/app.py", task="summarize")
    await call(client, "store_llm_result", **out["callbackArgs"], result="APP-SUMMARY-MARKER")
    err, out = await call(client, "generate_prompt", path="src", task="summarize")
    assert not err and "APP-SUMMARY-MARKER" in out["promptForHostLLM"]
    _, ok = await call(client, "store_llm_result", **out["callbackArgs"], result="# src\nThe app.")
    assert ok["status"] == "success"
    _, got = await call(client, "get_artifact", path="src", kind="summarize")
    assert got["data"]["status"] == "fresh"
    err, bad = await call(client, "generate_prompt", path="src", task="annotate")
    assert err and bad["error"]["code"] == "UNSUPPORTED_TASK"


async def test_pagination_of_listing_and_content(client: Client, sample_project: Path) -> None:
    for i in range(7):
        (sample_project / "src" / f"m{i}.py").write_text("def f():\n    pass\n" * 400)
    await call(client, "generate_artifact", path="src")
    seen: list[str] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"directory": "src", "limit": 3}
        if cursor:
            args["cursor"] = cursor
        _, page = await call(client, "list_artifacts", **args)
        seen += [e["path"] for f in page["data"]["folders"] for e in f["entries"]]
        cursor = page["data"]["next_cursor"]
        if not cursor:
            break
    assert seen == sorted(seen) and len(seen) == 9 and len(set(seen)) == 9
    _, got = await call(client, "get_artifact", path="src/m0.py", limit=150)
    symbols = got["data"]["content"]["symbols"]
    assert got["data"]["paged"] and len(symbols) <= 150
    while got["data"]["next_offset"] is not None:
        _, got = await call(client, "get_artifact", path="src/m0.py", offset=got["data"]["next_offset"], limit=150)
        symbols += got["data"]["content"]["symbols"]
    assert len(symbols) == got["data"]["total_symbols"] == 400


async def test_delete_says_how_many(client: Client) -> None:
    await call(client, "generate_artifact", path=".")
    _, out = await call(client, "delete_artifact", path="src/app.py", kind="outline")
    assert out["data"]["deleted"] == 1
    err, out = await call(client, "delete_artifact", path="src/app.py", kind="outline")
    assert not err and out["data"]["deleted"] == 0  # nothing to delete is no error
    _, out = await call(client, "delete_artifact", path="src", dry_run=True)
    assert out["data"]["recursive"] and out["data"]["deleted"] == 0 and out["data"]["matched"] == 1
    assert out["data"]["would_delete"] == [{"path": "src/util.ts", "kind": "outline"}]
    _, out = await call(client, "delete_artifact", path="src")
    assert out["data"]["deleted"] == 1 and out["data"]["recursive"]
    _, listing = await call(client, "list_artifacts")
    assert listing["data"]["count"] == 0


HOSTILE = ["../outside.py", "/etc/passwd", "src/app.py\x00", "C:\\Windows\\win.ini", "\\\\srv\\share\\a.py"]


@pytest.mark.parametrize("path", HOSTILE)
async def test_hostile_paths_for_every_path_tool(client: Client, path: str, sample_project: Path) -> None:
    before = sorted(str(p) for p in sample_project.rglob("*"))
    for tool, extra in [
        ("generate_artifact", {}),
        ("get_artifact", {}),
        ("generate_prompt", {"task": "summarize"}),
        ("delete_artifact", {}),
        ("store_llm_result", {"ticket": "abc", "task": "summarize", "result": "x"}),
    ]:
        err, out = await call(client, tool, path=path, **extra)
        assert err and out["error"]["code"] == "PATH_OUTSIDE_WORKSPACE", (tool, out)
    err, out = await call(client, "list_artifacts", directory=path)
    assert err and out["error"]["code"] == "PATH_OUTSIDE_WORKSPACE"
    assert sorted(str(p) for p in sample_project.rglob("*")) == before


async def test_symlink_out_and_prefix_sibling_are_refused(client: Client, sample_project: Path) -> None:
    secret = sample_project.parent / (sample_project.name + "_secret")
    secret.mkdir()
    (secret / "key.py").write_text("SECRET = 1\n")
    (sample_project / "escape").symlink_to(secret)
    for path in ["escape/key.py", "escape", str(secret / "key.py")]:
        for tool, extra in [
            ("generate_artifact", {}),
            ("get_artifact", {}),
            ("generate_prompt", {"task": "summarize"}),
        ]:
            err, out = await call(client, tool, path=path, **extra)
            assert err and out["error"]["code"] == "PATH_OUTSIDE_WORKSPACE", (tool, path, out)
    err, out = await call(client, "generate_artifact", path=".")
    assert {"path": "escape/", "reason": "symlink-outside"} in out["data"]["skipped_files"]
    assert not list((sample_project / ".llmem").rglob("key.py"))


BAD_ARGS: list[tuple[str, dict[str, Any], str]] = [
    ("generate_artifact", {"path": 5}, "path"),
    ("generate_artifact", {"task": "explode"}, "task"),
    ("get_artifact", {}, "path"),
    ("get_artifact", {"path": "src/app.py", "offset": -1}, "offset"),
    ("get_artifact", {"path": "src/app.py", "limit": 0}, "limit"),
    ("get_artifact", {"path": "src/app.py", "kind": "x" * 100}, "kind"),
    ("list_artifacts", {"limit": 100000}, "limit"),
    ("list_artifacts", {"status": "rotten"}, "status"),
    ("list_artifacts", {"cursor": "not-a-cursor"}, "cursor"),
    ("generate_prompt", {"path": "src/app.py"}, "task"),
    ("generate_prompt", {"path": "src/app.py", "task": "poem"}, "task"),
    ("store_llm_result", {"path": "src/app.py", "task": "summarize", "result": "x"}, "ticket"),
    (
        "store_llm_result",
        {"ticket": "../../x", "path": "src/app.py", "task": "summarize", "result": "x"},
        "ticket",
    ),
    (
        "store_llm_result",
        {"ticket": "a" * 65, "path": "src/app.py", "task": "summarize", "result": "x"},
        "ticket",
    ),
    ("delete_artifact", {"path": None}, "path"),
    ("delete_artifact", {"path": "src/app.py", "kind": "../x"}, "kind"),
]


@pytest.mark.parametrize(("tool", "args", "field"), BAD_ARGS)
async def test_bad_arguments_get_clear_errors_and_change_nothing(
    client: Client, sample_project: Path, tool: str, args: dict[str, Any], field: str
) -> None:
    store = sample_project / ".llmem"
    before = sorted(str(p) for p in store.rglob("*")) if store.exists() else []
    err, out = await call(client, tool, **args)
    assert err and out["status"] == "error"
    assert field in json.dumps(out["error"]), out
    after = sorted(str(p) for p in store.rglob("*")) if store.exists() else []
    assert [p for p in after if "/pending/" not in p] == [p for p in before if "/pending/" not in p]
    err, _ = await call(client, "list_artifacts")  # still serving
    assert not err


async def test_oversized_arguments_are_refused(client: Client) -> None:
    err, out = await call(
        client, "store_llm_result", ticket="abc", path="src/app.py", task="summarize", result="x" * 6_000_000
    )
    assert err and out["error"]["code"] == "PAYLOAD_TOO_LARGE"


async def test_result_too_large_for_the_ticket(client: Client) -> None:
    _, out = await call(client, "generate_prompt", path="src/app.py", task="summarize")
    err, bad = await call(client, "store_llm_result", **out["callbackArgs"], result="y" * 300_000)
    assert err and bad["error"]["code"] == "RESULT_TOO_LARGE"


async def test_generate_artifact_with_llm_task_answers_prompt_ready(client: Client) -> None:
    err, out = await call(client, "generate_artifact", path="src/util.ts", task="test-plan")
    assert not err and out["status"] == "prompt_ready" and out["callbackArgs"]["task"] == "test-plan"


async def test_expired_ticket(client: Client, sample_project: Path) -> None:
    _, out = await call(client, "generate_prompt", path="src/app.py", task="summarize")
    ticket = out["callbackArgs"]["ticket"]
    file = sample_project / ".llmem" / "pending" / f"{ticket}.json"
    doc = json.loads(file.read_text())
    doc["expires_at_ts"] = 0
    file.write_text(json.dumps(doc))
    err, bad = await call(client, "store_llm_result", **out["callbackArgs"], result="ok")
    assert err and bad["error"]["code"] == "TICKET_EXPIRED"


async def test_missing_source(client: Client) -> None:
    err, out = await call(client, "generate_artifact", path="src/missing.py")
    assert err and out["error"]["code"] == "SOURCE_NOT_FOUND"
    err, out = await call(client, "get_artifact", path="src/missing.py")
    assert err and out["error"]["code"] == "ARTIFACT_NOT_FOUND"


async def test_store_is_shared_with_a_second_server_instance(sample_project: Path) -> None:
    a = build_server(ServerConfig("llmem-mcp", sample_project))
    b = build_server(ServerConfig("llmem-mcp", sample_project))
    async with Client(a, mode="legacy") as ca, Client(b) as cb:
        _, out = await call(ca, "generate_prompt", path="src/app.py", task="document")
        _, ok = await call(cb, "store_llm_result", **out["callbackArgs"], result="# Docs")
        assert ok["status"] == "success"
        _, got = await call(ca, "get_artifact", path="src/app.py", kind="document")
        assert got["data"]["content"] == "# Docs"
    assert os.path.exists(sample_project / ".llmem" / "artifacts" / "llmem" / "src" / "app.py" / "document.json")
