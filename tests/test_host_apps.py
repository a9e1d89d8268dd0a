"""MCP Apps in the chat host (SEP-1865): which tools the model sees and which only a view may
call, the view a tool result links, the view's requests passed to its own server only, the
sandbox proxy on a second origin with the policy the view declares, and the history that
brings a view back after a reload.

The rules against in-process servers (``Attached``); the protocol against the real
``llmem-host`` with the three real servers and the scripted fake model. The browser side is
in ``test_host_page_apps.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent, Tool
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from llmem.host import Attached, Coordinator
from llmem.host.apps import APP_MIME, ViewRefused, view_csp, view_of, visibility
from llmem.host.errors import UnknownTool
from tests.fake_models import FakeOpenAI, Reply, call, say
from tests.host_harness import KEY, HostProcess, make_workspace, running_host, write_config
from tests.test_host_web import Chat, since_question, steps

pytestmark = pytest.mark.anyio

VIEW = "ui://plots/view"
PLOT = "sample.plot.json"


def apps_server(name: str) -> MCPServer:
    """A server with a view, a tool that links it, an app-only tool and a model-only tool."""
    srv: MCPServer = MCPServer(name)

    @srv.tool(description="Show the plot.", meta={"ui": {"resourceUri": VIEW}})
    def show(filename: str) -> str:
        return f"shown {filename}"

    @srv.tool(description="The view's data.", meta={"ui": {"resourceUri": VIEW, "visibility": ["app"]}})
    def view_data(filename: str) -> str:
        return f"data of {filename}"

    @srv.tool(description="Only for the model.", meta={"ui": {"visibility": ["model"]}})
    def summary() -> str:
        return "a summary"

    @srv.resource(VIEW, name="view", mime_type=APP_MIME, meta={"ui": {"csp": {}}})
    def view() -> str:
        return "<!doctype html><html><head></head><body>view</body></html>"

    return srv


async def test_the_model_never_sees_an_app_only_tool_and_a_view_calls_only_its_own_server() -> None:
    servers = [Attached("one", apps_server("one")), Attached("two", apps_server("two"))]
    async with Coordinator(servers) as host:
        assert [e.qualified_name for e in host.tools()] == ["one:show", "one:summary", "two:show", "two:summary"]
        assert "one:view_data" in [e.qualified_name for e in host.tools(include_app_only=True)]
        assert "view_data" not in host.descriptions("one")  # the guide written from tools/list leaves it out too
        with pytest.raises(UnknownTool, match="callable only by the views of server 'one'"):
            host.resolve("one:view_data")
        with pytest.raises(UnknownTool, match="no tool named 'view_data'"):
            host.resolve("view_data")

        # a view of server one: its app-only tool and its shared tools, nothing else
        answer = await host.call_from_view("one", "view_data", {"filename": PLOT})
        assert answer.text == f"data of {PLOT}" and not answer.is_error
        assert (await host.call_from_view("one", "show", {"filename": PLOT})).text == f"shown {PLOT}"
        with pytest.raises(ViewRefused, match=r"visibility is \['model'\], without \"app\"") as model_only:
            await host.call_from_view("one", "summary", {})
        assert model_only.value.code == INVALID_PARAMS
        with pytest.raises(ViewRefused, match="may call only that server's tools, and it has no tool 'nothing'"):
            await host.call_from_view("one", "nothing", {})
        with pytest.raises(ViewRefused, match=r"break its schema at \$: 'filename' is a required property"):
            await host.call_from_view("one", "view_data", {})
        assert host.tools(include_app_only=True)[1].calls == 1  # the refused call was never sent

        # the view's HTML, read once per server and address
        first = await host.read_resource("one", VIEW)
        assert first.contents[0].mime_type == APP_MIME
        assert await host.read_resource("one", VIEW) is first
        assert await host.read_resource("two", VIEW) is not first


def test_visibility_view_and_policy_follow_the_specification() -> None:
    def tool(meta: dict[str, Any] | None) -> Tool:
        return Tool(name="t", input_schema={"type": "object"}, _meta=meta)

    assert visibility(tool(None)) == ("model", "app")
    assert visibility(tool({"ui": {"visibility": "app"}})) == ("model", "app")  # unreadable: the default
    assert visibility(tool({"ui": {"visibility": ["app"]}})) == ("app",)
    done = CallToolResult(content=[TextContent(type="text", text="ok")], structured_content={"filename": PLOT})
    linked = tool({"ui/resourceUri": VIEW})  # the deprecated flat key still links
    view = view_of("s", linked, {"filename": PLOT}, done)
    assert view == {
        "server": "s",
        "uri": VIEW,
        "tool": "t",
        "toolInput": {"filename": PLOT},
        "toolResult": {
            "content": [{"type": "text", "text": "ok"}],
            "structuredContent": {"filename": PLOT},
            "isError": False,
            "resultType": "complete",
        },
    }
    failed = CallToolResult(content=[TextContent(type="text", text="no")], is_error=True)
    assert view_of("s", linked, {}, failed) is None
    assert view_of("s", tool({"ui": {"resourceUri": "https://x.example/view"}}), {}, done) is None

    # the specification's restrictive default, and declared origins only where declared
    assert view_csp({}) == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
        "object-src 'none'; base-uri 'self'"
    )
    declared = view_csp(
        {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://*.cdn.example.com", "https://x.example.com/path", "'unsafe-eval'"],
            "frameDomains": ["https://video.example.com; script-src *"],
        }
    )
    assert "connect-src https://api.example.com wss://live.example.com;" in declared
    assert "script-src 'self' 'unsafe-inline' https://*.cdn.example.com;" in declared
    assert "path" not in declared and "unsafe-eval" not in declared and "frame-src 'none'" in declared


# -- against the real host -------------------------------------------------------------------


def model(body: dict[str, Any]) -> Reply:
    question, results = since_question(body["messages"])
    if "live" in question:
        if not results:
            return call("debrief-state__debrief_render_plot", {"filename": PLOT, "fit": "all"}, call_id="live")
        return say("Here is the plot, live: move the slider to change its time.")
    if "view data" in question:
        if not results:
            return call("debrief-state__debrief_view_data", {"filename": PLOT}, call_id="sneak")
        return say("I cannot call that tool.")
    return say("Hello.")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(model)
    with fake:
        yield fake


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[HostProcess]:
    root = tmp_path_factory.mktemp("apps")
    ws = make_workspace(root)
    config = write_config(ws, root / "mcp.json")
    args = ("--provider", "openai", "--base-url", fake.base_url, "--model", "fake-model")
    with running_host(config, ws, *args, env={"OPENAI_API_KEY": KEY}) as process:
        yield process


async def test_a_tool_result_brings_its_view_and_the_view_reaches_only_its_server(
    host: HostProcess, fake: FakeOpenAI
) -> None:
    async with connect(host.ws_url) as socket:
        hello = json.loads(await socket.recv())["payload"]
        assert isinstance(hello["appsPort"], int) and hello["appsPort"] != int(host.url.rsplit(":", 1)[1].strip("/"))
        chat = Chat(socket)
        frames = await chat.turn("Show me the plot live")

        # the model's tool list and prompt: no app-only tool
        offered = [t["function"]["name"] for t in fake.requests[-1]["tools"]]
        assert "debrief-state__debrief_render_plot" in offered or "debrief-state:debrief_render_plot" in " ".join(
            offered
        )
        assert not [n for n in offered if "view_data" in n]
        assert "debrief_view_data" not in fake.requests[-1]["messages"][0]["content"]

        done = steps(frames)[0]
        app = done["data"]["app"]
        assert (app["server"], app["uri"], app["tool"]) == (
            "debrief-state",
            "ui://debrief-state/plot-view",
            "debrief_render_plot",
        )
        assert app["toolInput"] == {"filename": PLOT, "fit": "all"}
        assert app["toolResult"]["content"][0]["type"] in ("text", "image")
        assert any(f["type"] == "image" for f in frames)  # the PNG stays, for the model and for other clients

        async def ask(payload: dict[str, Any]) -> dict[str, Any]:
            await socket.send(json.dumps({"type": "app", "payload": payload}))
            while True:
                frame = await chat.next()
                if frame["type"] == "app" and frame["payload"]["id"] == payload["id"]:
                    return dict(frame["payload"])

        read = await ask(
            {"id": 1, "server": "debrief-state", "method": "resources/read", "params": {"uri": app["uri"]}}
        )
        content = read["result"]["contents"][0]
        assert content["mimeType"] == APP_MIME and content["_meta"]["ui"]["csp"] == {}
        assert "<html" in content["text"].lower()

        data = await ask(
            {"id": 2, "server": "debrief-state", "method": "tools/call",
             "params": {"name": "debrief_view_data", "arguments": {"filename": PLOT}}}
        )  # fmt: skip
        assert not data["result"].get("isError") and data["result"]["structuredContent"]["features"]

        elsewhere = await ask(
            {"id": 3, "server": "debrief-calc", "method": "tools/call",
             "params": {"name": "debrief_view_data", "arguments": {"filename": PLOT}}}
        )  # fmt: skip
        assert elsewhere["error"]["code"] == INVALID_PARAMS
        assert "may call only that server's tools" in elsewhere["error"]["message"]
        odd = await ask({"id": 4, "server": "debrief-state", "method": "prompts/get", "params": {}})
        assert odd["error"]["code"] == -32601 and "tools/call or resources/read" in odd["error"]["message"]
        nameless = await ask({"id": 6, "server": "debrief-state", "method": "tools/call", "params": {"arguments": []}})
        assert nameless["error"]["code"] == INVALID_PARAMS and "params.name (a string)" in nameless["error"]["message"]
        nowhere = await ask({"id": 7, "server": "debrief-state", "method": "resources/read", "params": {}})
        assert "params.uri" in nowhere["error"]["message"]
        unknown = await ask(
            {"id": 8, "server": "debrief-state", "method": "resources/read", "params": {"uri": "ui://x"}}
        )
        assert "could not read ui://x" in unknown["error"]["message"]
        nobody = await ask({"id": 5, "server": "nobody", "method": "tools/call", "params": {"name": "x"}})
        assert "payload.server must name a running server" in nobody["error"]["message"]

        # the model asking for the app-only tool by name is told there is none for it, and not run
        refused = steps(await chat.turn("Get me the view data"))[0]["data"]
        assert refused["isError"] and refused["result"].startswith("There is no tool named")
        assert "view_data" not in refused["result"].split("The tools are:")[1]

    # a reload: the history carries what recreates the view
    session = hello["sessionId"]
    async with connect(f"{host.ws_url}?session={session}") as socket:
        assert json.loads(await socket.recv())["payload"]["state"] == "reconnected"
        history = json.loads(await socket.recv())["payload"]["messages"]
        tools = [m for m in history if m["role"] == "tool"]
        assert tools[0]["app"] == app and tools[0]["images"]
        assert "app" not in tools[1]
    assert KEY not in "".join(chat.raw)


async def test_the_sandbox_proxy_is_another_origin_that_cannot_drive_the_host(host: HostProcess) -> None:
    async with connect(host.ws_url) as socket:
        apps_port = json.loads(await socket.recv())["payload"]["appsPort"]
    proxy = f"http://127.0.0.1:{apps_port}"
    page_origin = host.url.rstrip("/")
    async with httpx.AsyncClient() as http:
        page = await http.get(host.url)
        assert f"frame-src http://127.0.0.1:{apps_port} " in page.headers["content-security-policy"] + " "
        declared = {"connectDomains": ["https://api.example.com"]}
        served = await http.get(f"{proxy}/sandbox.html", params={"host": page_origin, "csp": json.dumps(declared)})
        assert served.status_code == 200 and "sandbox.js" in served.text
        policy = served.headers["content-security-policy"]
        assert policy.startswith(view_csp(declared) + "; frame-ancestors ")
        assert policy.endswith(f"; frame-ancestors {page_origin}")
        assert (await http.get(f"{proxy}/sandbox.js")).status_code == 200
        assert (await http.get(f"{proxy}/")).status_code == 404  # the page is not served there
        bad = await http.get(f"{proxy}/sandbox.html", params={"host": page_origin, "csp": "{not json"})
        assert bad.status_code == 400
        framed_elsewhere = await http.get(f"{proxy}/sandbox.html", params={"host": "http://evil.example"})
        assert framed_elsewhere.status_code == 403 and "origin of this host's chat page" in framed_elsewhere.text
        rebinding = await http.get(f"{proxy}/sandbox.html", headers={"Host": "evil.example"})
        assert rebinding.status_code == 403
    with pytest.raises(InvalidStatus) as foreign:  # the proxy's origin may not drive the chat
        async with connect(host.ws_url, origin=proxy):  # type: ignore[arg-type]
            pass
    assert foreign.value.response.status_code == 403
    with pytest.raises(InvalidStatus):  # and the proxy has no socket of its own
        async with connect(f"ws://127.0.0.1:{apps_port}/ws"):
            pass
    assert any("sandbox proxy serves a view under the CSP" in line for line in host.stderr)


async def test_beyond_loopback_the_proxy_serves_the_page_under_any_of_its_names(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    config = write_config(ws, tmp_path / "mcp.json")
    token = "host-token-0123456789abcdef"
    with running_host(
        config, ws, "--host", "0.0.0.0", "--provider", "stand-in", env={"LLMEM_HOST_AUTH_TOKEN": token}
    ) as host:
        base = host.url.replace("0.0.0.0", "127.0.0.1")
        async with connect(base.replace("http://", "ws://") + f"ws?token={token}") as socket:
            apps_port = json.loads(await socket.recv())["payload"]["appsPort"]
        page_port = int(base.rstrip("/").rsplit(":", 1)[1])
        proxy = f"http://127.0.0.1:{apps_port}/sandbox.html"
        async with httpx.AsyncClient() as http:
            for name in ("127.0.0.1", "analyst-box.local"):
                served = await http.get(proxy, params={"host": f"http://{name}:{page_port}"})
                assert served.status_code == 200  # static, no secret: no token needed
                assert served.headers["content-security-policy"].endswith(f"frame-ancestors http://{name}:{page_port}")
            for wrong in (f"http://127.0.0.1:{apps_port}", f"http://127.0.0.1:{page_port}/x", "javascript:alert(1)"):
                assert (await http.get(proxy, params={"host": wrong})).status_code == 403
