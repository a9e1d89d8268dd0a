"""The stdio transport (llmem/stdio.py) on real pipes and files, byte for byte.

Every console script serves stdio through it; these tests pin what the SDK's threaded transport
guaranteed and the event-loop one must keep: lines of any length and in any chunking, stray
output kept off the wire, descriptors handed back as they were, and the SDK's own path for
stdin that is not a pipe.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmem.core.stdio import READ_CHUNK, _lines, pipe_capable
from tests._stdio import INIT, RawServer, rpc_line
from tests.conftest import console_script, subprocess_env

pytestmark = pytest.mark.anyio


async def _collect(chunks: list[bytes]) -> list[str]:
    reader = asyncio.StreamReader()
    for chunk in chunks:
        reader.feed_data(chunk)
    reader.feed_eof()
    return [line async for line in _lines(reader)]


async def test_lines_of_any_length_in_any_chunking() -> None:
    long_line = b'{"x": "' + b"a" * (3 * READ_CHUNK + 17) + b'"}\n'
    chunks = [
        b'{"a": 1}\n{"b"',  # one whole line and the start of the next
        b": 2}\n",
        long_line[:100],
        long_line[100:],  # a line longer than a read, in two writes
        b"\xff\xfe not utf-8\n",  # undecodable bytes are replaced, as the SDK does
        b"{}\r\n",  # CRLF: the CR is JSON whitespace
        b"no newline at EOF",
    ]
    lines = await _collect(chunks)
    assert lines == [
        '{"a": 1}\n',
        '{"b": 2}\n',
        long_line.decode(),
        "\ufffd\ufffd not utf-8\n",
        "{}\r\n",
        "no newline at EOF",
    ]


async def test_many_lines_in_one_chunk() -> None:
    data = b"".join(b'{"n": %d}\n' % i for i in range(5000))
    lines = await _collect([data])
    assert [json.loads(line)["n"] for line in lines] == list(range(5000))


def test_pipes_and_sockets_qualify_files_do_not(tmp_path: Path) -> None:
    import os
    import socket

    r, w = os.pipe()
    a, b = socket.socketpair()
    with (tmp_path / "f").open("wb") as f:
        try:
            assert pipe_capable(r) and pipe_capable(w) and pipe_capable(a.fileno())
            assert not pipe_capable(f.fileno())
        finally:
            os.close(r)
            os.close(w)
            a.close()
            b.close()


def test_pipelined_split_and_huge_requests_over_real_pipes(workspace: Path, tmp_path: Path) -> None:
    server = RawServer("llmem-mcp", workspace, tmp_path / "stderr.log", "--log-level", "debug")
    try:
        server.initialize()
        # Three requests in one write, then one request in three writes.
        ids = [server.next_id() for _ in range(4)]
        server.send_lines([rpc_line(i, "tools/list") for i in ids[:3]])
        line = (rpc_line(ids[3], "tools/list") + "\n").encode()
        for part in (line[:5], line[5:40], line[40:]):
            server.send_raw(part)
        server.wait_for(ids, timeout=60)
        assert all("tools" in server.answer(i)["result"] for i in ids)
        # A 1 MB argument arrives whole: the answer is the path-length rule, not a parse failure.
        result = server.call_tool("get_artifact", {"path": "a" * 1_000_000})
        assert result["isError"] is True
        assert result["structuredContent"]["error"]["code"] == "INVALID_ARGUMENT"
        assert "1000000 characters" in result["structuredContent"]["error"]["message"]
        assert server.bad_lines == []
    finally:
        assert server.close() == 0
    assert "served from the event loop" in server.stderr_path.read_text(encoding="utf-8")


NOISY_SERVER = """
import os, sys
import anyio
from mcp.server.mcpserver import MCPServer
from llmem.core.stdio import run_stdio

server = MCPServer("noisy")

@server.tool()
def noisy() -> str:
    \"\"\"Writes to stdout three ways, as careless code does.\"\"\"
    print("stray print", flush=True)
    os.write(1, b"stray os.write\\n")
    os.system("echo stray child")
    return "ok"

blocking = (os.get_blocking(0), os.get_blocking(1))
anyio.run(run_stdio, server._lowlevel_server)
print("after", blocking == (os.get_blocking(0), os.get_blocking(1)), flush=True)
"""


def test_stray_output_stays_off_the_wire_and_descriptors_come_back(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY_SERVER, encoding="utf-8")
    requests = [
        rpc_line(1, "initialize", INIT),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        rpc_line(2, "tools/call", {"name": "noisy", "arguments": {}}),
    ]
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=subprocess_env(),
        )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(("\n".join(requests[:2]) + "\n").encode())
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())  # the answer to initialize: the server is serving
    assert first["id"] == 1
    proc.stdin.write((requests[2] + "\n").encode())
    proc.stdin.flush()
    second = json.loads(proc.stdout.readline())
    assert second["id"] == 2 and second["result"]["isError"] is False, second
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0, stderr.read_text(encoding="utf-8")
    # After serving, fd 1 is the wire again and both descriptors are blocking as before.
    assert proc.stdout.read().decode().splitlines() == ["after True"]
    proc.stdout.close()
    for stray in ("stray print", "stray os.write", "stray child"):
        assert stray in stderr.read_text(encoding="utf-8")


def test_stdin_from_a_file_is_served_by_the_sdk(workspace: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "\n".join(
            [
                rpc_line(1, "initialize", INIT),
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                rpc_line(2, "tools/list"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [console_script("llmem-mcp"), "--workspace", str(workspace), "--log-level", "debug"],
            stdin=stdin,
            capture_output=True,
            env=subprocess_env(),
            timeout=60,
        )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    # Requests still in flight at EOF are cancelled, as the SDK does (the client is gone), so only
    # the handshake's answer is certain.
    assert answers[0]["id"] == 1 and "result" in answers[0]
    assert "served by the SDK's threads" in done.stderr.decode()


def test_a_client_that_stops_reading_ends_the_server_quietly(workspace: Path, tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as err_file:
        proc = subprocess.Popen(
            [console_script("llmem-mcp"), "--workspace", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=subprocess_env(),
        )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.close()  # the client's end of stdout is gone before the first answer
    proc.stdin.write((rpc_line(1, "initialize", INIT) + "\n").encode())
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0, stderr.read_text(encoding="utf-8")
    log = stderr.read_text(encoding="utf-8")
    assert "Traceback" not in log
    assert "closed its end of stdout" in log


@pytest.mark.parametrize("script", ["llmem-mcp", "debrief-state-mcp", "debrief-calc-mcp"])
def test_requests_piped_before_eof_are_all_answered(script: str, workspace: Path) -> None:
    """``printf '<requests>' | server``: stdin ends right after the requests; every one is answered."""
    lines = [
        rpc_line(
            1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INIT["clientInfo"]}
        ),
        rpc_line(None, "notifications/initialized", notification=True),
        rpc_line(2, "tools/list"),
        rpc_line(3, "prompts/get", {"name": "tool-descriptions"}),
        rpc_line(4, "tools/list"),
    ]
    out = subprocess.run(
        [console_script(script), "--workspace", str(workspace)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    answers = {m["id"]: m for m in map(json.loads, out.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3, 4]
    assert answers[2]["result"]["tools"] and answers[4]["result"] == answers[2]["result"]
