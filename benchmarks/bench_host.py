"""llmem-host's own cost: a chat turn through the host beside the same work done bare.

A turn of the analyst's kind, one tool call: the page's message → the model (a loopback fake of
the OpenAI API, answering at once) asks for ``debrief-calc:describe_tool`` → the host runs it →
the model answers in words → ``done``. Measured over the real WebSocket against the real
``llmem-host`` and its real servers. The baseline does the same work without the host, turn by
turn alternating with it: the very requests the host sent to the model (its system prompt with
the three servers' guides, the 33 tools, the history), replayed against the same fake twice:
with the openai SDK's ``create()`` as client code usually calls it, and as plain JSON over httpx
with the SSE lines parsed by hand (the floor); the tool call through a bare coordinator on
another copy of the same server. The ratio is what the host adds (the WebSocket, the session,
the tool-block parser, validation, frames to the page). Also: the first text frame of a
streamed answer beside the first content chunk.

    python benchmarks/bench_host.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_models import FakeOpenAI, Reply, call, say  # noqa: E402
from tests.host_harness import KEY, make_workspace, running_host, write_config  # noqa: E402

ASK, STREAM = "what does track-stats do?", "stream please"


def model(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return say("track-stats gives the statistics of each track.", 8)
    if last["content"] == STREAM:
        return say("word " * 40, 5)
    return call("debrief-calc__describe_tool", {"name": "track-stats"})


async def host_turn(socket: Any, text: str) -> tuple[float, float | None]:
    started, first = time.perf_counter(), None
    await socket.send(json.dumps({"type": "message", "payload": {"text": text}}))
    while True:
        frame = json.loads(await socket.recv())
        if frame["type"] == "text" and first is None:
            first = time.perf_counter() - started
        if frame["type"] == "done":
            return time.perf_counter() - started, first


async def run(ws_url: str, fake: FakeOpenAI, config: Path, ws: Path, turns: int) -> dict[str, list[float]]:
    import httpx
    import openai
    from websockets.asyncio.client import connect

    from llmem.host import Coordinator, load_config

    client = openai.AsyncOpenAI(api_key=KEY, base_url=fake.base_url, max_retries=0)
    specs = [s for s in load_config(config, {"${workspaceFolder}": str(ws)}) if s.name == "debrief-calc"]
    figures: dict[str, list[float]] = {
        k: [] for k in ("host turn", "bare turn", "raw turn", "host first", "bare first", "raw first")
    }
    http = httpx.AsyncClient(base_url=fake.base_url, headers={"Authorization": f"Bearer {KEY}"})

    async def raw(body: dict[str, Any]) -> float:
        """The same request as plain JSON over httpx, the SSE lines read and parsed: the floor."""
        started, first = time.perf_counter(), 0.0
        async with http.stream("POST", "/chat/completions", content=json.dumps(body)) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: {"):
                    delta = json.loads(line[6:])["choices"][0]["delta"]
                    if not first and delta.get("content"):
                        first = time.perf_counter() - started
        return first

    async def completion(body: dict[str, Any]) -> float:
        started, first = time.perf_counter(), 0.0
        stream = await client.chat.completions.create(**body)
        async for chunk in stream:
            if not first and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - started
        return first

    async with connect(ws_url) as socket, Coordinator(specs) as bare:
        await socket.recv()
        for _ in range(3):  # warm up the host and its servers; then take the host's own requests
            await host_turn(socket, ASK)
            await host_turn(socket, STREAM)
        asked = next(b for b in reversed(fake.requests) if b["messages"][-1].get("content") == ASK)
        answered = next(b for b in reversed(fake.requests) if b["messages"][-1]["role"] == "tool")
        streamed = next(b for b in reversed(fake.requests) if b["messages"][-1].get("content") == STREAM)
        for _ in range(turns):
            whole, _first = await host_turn(socket, ASK)
            figures["host turn"].append(whole)
            started = time.perf_counter()
            await completion(asked)
            await bare.call("debrief-calc:describe_tool", {"name": "track-stats"})
            await completion(answered)
            figures["bare turn"].append(time.perf_counter() - started)
            started = time.perf_counter()
            await raw(asked)
            await bare.call("debrief-calc:describe_tool", {"name": "track-stats"})
            await raw(answered)
            figures["raw turn"].append(time.perf_counter() - started)
            _whole, first = await host_turn(socket, STREAM)
            figures["host first"].append(first or 0.0)
            figures["bare first"].append(await completion(streamed))
            figures["raw first"].append(await raw(streamed))
    await client.close()
    await http.aclose()
    figures["size"] = [float(len(json.dumps(asked))), float(len(asked.get("tools", [])))]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(model) as fake:
        root = Path(tmp)
        ws = make_workspace(root)
        config = write_config(ws, root / "mcp.json")
        flags = (
            "--provider",
            "openai",
            "--base-url",
            fake.base_url,
            "--model",
            "m",
            "--rate",
            "1000",
            "--burst",
            "1000",
        )
        env = {"OPENAI_API_KEY": KEY, "LLMEM_HOST_LOG_LEVEL": "warning"}
        with running_host(config, ws, *flags, "--log-level", "warning", env=env) as host:
            f = asyncio.run(run(host.ws_url, fake, config, ws, args.turns))
    size, tools = f["size"]
    print(f"llmem-host beside the same work done bare: {args.turns} turns each, alternating; a loopback fake")
    print(f"model; the same {size:,.0f}-byte requests (system prompt with three guides, {tools:.0f} tools)")
    print(f"{'figure (p50)':34} {'host':>9} {'baseline':>9} {'ratio':>6}  baseline")
    for name, ours, base, what in (
        ("turn with one tool call", f["host turn"], f["bare turn"], "openai SDK create() + bare coordinator"),
        ("turn with one tool call", f["host turn"], f["raw turn"], "httpx POST + SSE lines + bare coordinator"),
        ("first text of a streamed answer", f["host first"], f["bare first"], "openai SDK create()"),
        ("first text of a streamed answer", f["host first"], f["raw first"], "httpx POST + SSE lines"),
    ):
        o, b = statistics.median(ours), statistics.median(base)
        print(f"{name:34} {o * 1000:7.1f}ms {b * 1000:7.1f}ms {o / b:5.2f}x  {what}")


if __name__ == "__main__":
    main()
