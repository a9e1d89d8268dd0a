"""Walk through llmem-mcp as an IDE agent would: launch it over stdio, parse, prompt, store, read.

Run from the repository root after installing the package::

    python examples/walkthrough.py

The example project in ``examples/sample_project`` is copied to a temporary folder (so the
artifact store never lands in this checkout), ``llmem-mcp`` is started there as a client starts
it, and the callback protocol is played end to end. The host LLM's part is played by
``stand_in_llm`` below: a clearly labelled, deterministic stand-in, not a model.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent


def stand_in_llm(prompt: str, task: str) -> str:
    """STAND-IN FOR THE HOST'S MODEL: answers from the prompt's own outline, deterministically."""
    if task == "annotate":
        names = re.findall(r"^- (\S+)$", prompt, flags=re.MULTILINE)
        return json.dumps(
            {"symbols": {n: {"description": f"(stand-in) {n.rsplit('.', 1)[-1]} as outlined"} for n in names}}
        )
    symbols = re.findall(r"`([^`]+)` \(lines", prompt)
    listed = "\n".join(f"- `{s}`" for s in symbols[:12]) or "- (no symbols)"
    return f"# {task} (written by the stand-in, not a model)\n\nMain symbols:\n{listed}\n"


def show(step: str, started: float, detail: str) -> None:
    print(f"[{(time.perf_counter() - started) * 1000:7.1f} ms] {step}: {detail}")


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    payload = result.structured_content or {}
    if result.is_error:
        raise SystemExit(f"{tool} failed: {json.dumps(payload, indent=2)}")
    return payload


async def main() -> None:
    exe = Path(sys.executable).with_name("llmem-mcp")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "llmem"]
    with tempfile.TemporaryDirectory(prefix="llmem walkthrough ") as tmp:
        workspace = Path(tmp) / "sample project"
        shutil.copytree(HERE / "sample_project", workspace)
        params = StdioServerParameters(
            command=command[0], args=[*command[1:], "--workspace", str(workspace), "--log-level", "warning"]
        )
        print(f"Workspace: {workspace}\nServer:    {' '.join(command)} --workspace <workspace>\n")
        async with Client(params, mode="legacy") as client:
            t = time.perf_counter()
            tools = [tool.name for tool in (await client.list_tools()).tools]
            show("tools/list", t, ", ".join(tools))

            t = time.perf_counter()
            guide = (await client.get_prompt("tool-descriptions")).messages[0].content
            show("tool-descriptions", t, f"{len(getattr(guide, 'text', ''))} characters of guide")

            t = time.perf_counter()
            parsed = (await call(client, "generate_artifact", path="."))["data"]
            show(
                "parse the project",
                t,
                f"parsed={parsed['parsed']} unchanged={parsed['unchanged']} "
                f"skipped={parsed['skipped']} failed={parsed['failed']}",
            )

            t = time.perf_counter()
            outline = (await call(client, "get_artifact", path="inventory/models.py"))["data"]
            names = [s["qualified_name"] for s in outline["content"]["symbols"]]
            show("outline of inventory/models.py", t, ", ".join(names))

            for path, task in [("inventory/models.py", "annotate"), ("web/api.ts", "summarize")]:
                t = time.perf_counter()
                ready = await call(client, "generate_prompt", path=path, task=task)
                show(f"generate_prompt {task} {path}", t, f"{len(ready['promptForHostLLM'])}-character prompt")
                answer = stand_in_llm(ready["promptForHostLLM"], task)
                if task == "annotate":
                    t = time.perf_counter()
                    bad = await client.call_tool("store_llm_result", {**ready["callbackArgs"], "result": "oops"})
                    error = (bad.structured_content or {}).get("error", {})
                    show("store a malformed answer", t, f"refused with {error.get('code')}; retry allowed")
                t = time.perf_counter()
                stored = await call(
                    client, "store_llm_result", **ready["callbackArgs"], result=answer, model="stand-in"
                )
                show(f"store_llm_result {task}", t, f"stored at step {stored['data']['step']}")

            t = time.perf_counter()
            notes = (await call(client, "get_artifact", path="inventory/models.py", kind="annotate"))["data"]
            show(
                "read the notes back",
                t,
                f"{len(notes['content']['symbols'])} symbols described, status {notes['status']}",
            )

            (workspace / "inventory" / "models.py").write_text(
                (workspace / "inventory" / "models.py").read_text() + "\n\ndef restock() -> None:\n    pass\n"
            )
            t = time.perf_counter()
            notes = (await call(client, "get_artifact", path="inventory/models.py", kind="annotate"))["data"]
            show(
                "after editing the file",
                t,
                f"status {notes['status']}; undescribed: {notes['content']['undescribed']}",
            )

            t = time.perf_counter()
            listing = (await call(client, "list_artifacts"))["data"]
            rows = [
                f"{e['path']}[{','.join(k['kind'] + ':' + k['status'] for k in e['kinds'])}]"
                for f in listing["folders"]
                for e in f["entries"]
            ]
            show("list_artifacts", t, "; ".join(rows))
    print("\nDone: parse → prompt → store → read, over real stdio.")


if __name__ == "__main__":
    anyio.run(main)
