"""``llmem-host`` from the outside: the real command, three real servers on real REP files, a
fake OpenAI-compatible model server on loopback, and a real WebSocket client (``websockets``).

The fake model is a script that reads the conversation the host sends it, as a model would:
the person's question, then each tool result, and decides the next call from them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from llmem.host.providers.base import CALLBACK_SYSTEM
from llmem.host.providers.standin import GUIDE, stand_in_answer
from llmem.host.providers.standin_plays import SUGGESTIONS
from llmem.host.sessions import MAX_PAGES
from llmem.host.steps import clock
from tests.fake_models import FakeOpenAI, Reply, call, say
from tests.host_harness import KEY, HostProcess, make_workspace, running_host, write_config
from tests.test_analyst_workflow import independent_figures

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
PLOT = "chat.plot.json"


def since_question(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The person's last question and the tool results that came after it."""

    def is_result(m: dict[str, Any]) -> bool:
        return m["role"] == "tool" or (m["role"] == "user" and (m["content"] or "").startswith("[tool"))

    last = max(i for i, m in enumerate(messages) if m["role"] == "user" and not is_result(m))
    return messages[last]["content"], [m for m in messages[last + 1 :] if is_result(m)]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def model(body: dict[str, Any]) -> Reply:
    messages = body["messages"]
    if messages[0]["content"] == CALLBACK_SYSTEM:  # the host runs a tool's prompt with its model
        prompt = messages[-1]["content"]
        return say(stand_in_answer(prompt, "annotate" if '"symbols"' in prompt else "summarize-plot"), 40)
    question, results = since_question(messages)
    data = [_json(r["content"]) if r["role"] == "tool" else None for r in results]
    step = len(results)
    if "narrate" in question:
        if step == 0:
            earlier = [_json(m["content"]) for m in messages if m["role"] == "tool"]
            cpa_id = next(
                d["features"][0]["id"]
                for d in reversed(earlier)
                if isinstance(d, dict) and d.get("features") and d["features"][0]["properties"].get("range")
            )
            return call("debrief-calc__generate_prompt", {"target": cpa_id, "task": "narrate-result"}, call_id="nar")
        return say("The narrative is stored: " + results[0]["content"][-80:])
    if "closest approach" in question:
        if step < 2:
            name = ("valid_boat1.rep", "valid_boat2.rep")[step]
            reply = call(
                "debrief-calc__run_tool", {"tool": "import-rep", "parameters": {"path": name}}, call_id=f"imp{step}"
            )
            reply.text = ["Importing ", "the REP ", "files."] if step == 0 else []
            return reply
        refs = [{"ref": d["stored"]["ref"]} for d in data[:2]]
        if step == 2:
            return call("debrief-state__debrief_create_plot", {"filename": PLOT, "features": refs}, call_id="mk")
        if step == 3:
            args = {"tool": "closest-approach", "features": refs, "parameters": {"distance_unit": "yd"}}
            return call("debrief-calc__run_tool", args, call_id="cpa", pieces=11)
        cpa = data[3]["features"][0]["properties"]
        return say(f"The closest approach was {cpa['range']:.1f} yd at {cpa['time']}.", 6)
    if "picture" in question:
        if step == 0:
            return call("debrief-state__debrief_render_plot", {"filename": PLOT, "fit": "all"}, call_id="png")
        return say("Here is the plot.")
    if "clean" in question:
        if step == 0:
            return call("llmem__delete_artifact", {"path": "app.py"}, call_id="del")
        return say("You declined, so nothing was deleted." if "declined" in results[0]["content"] else "Deleted.")
    if "torpedo" in question:
        if step == 0:
            return call("debrief-calc__launch_torpedo", {"target": "NELSON"}, call_id="bad")
        return say("There is no such tool; I can analyse tracks instead.")
    if "annotate" in question:
        if step == 0:
            return call("llmem__generate_prompt", {"path": "app.py", "task": "annotate"}, call_id="ann")
        return say("The notes are stored.")
    if "block" in question:
        if step == 0:
            text = 'Listing.\n```tool\n{"tool": "debrief-state:debrief_list_plots", "arguments": {}}\n```'
            return Reply(text=[text[i : i + 5] for i in range(0, len(text), 5)])
        return say("Two plots, and the new one.")
    if "slow" in question:
        return Reply(text=["word "] * 400, delay_s=0.05)
    return say("Hello! Ask me about your plots.")


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(model) as fake:
        yield fake


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, fake_model: FakeOpenAI) -> Iterator[HostProcess]:
    root = tmp_path_factory.mktemp("host")
    ws = make_workspace(root)
    config = write_config(ws, root / "mcp.json")
    args = (
        "--provider",
        "openai",
        "--base-url",
        fake_model.base_url,
        "--model",
        "fake-model",
        "--rate",
        "50",
        "--burst",
        "50",
    )
    with running_host(config, ws, *args, env={"OPENAI_API_KEY": KEY}) as process:
        yield process


class Chat:
    """A page's side of the socket: every frame kept raw, turns run to their ``done``."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.raw: list[str] = []

    async def next(self) -> dict[str, Any]:
        with anyio.fail_after(120):
            text = await self.socket.recv()
        assert isinstance(text, str)
        self.raw.append(text)
        frame: dict[str, Any] = json.loads(text)
        return frame

    async def turn(self, text: str, *, approve: bool | None = None) -> list[dict[str, Any]]:
        await self.socket.send(json.dumps({"type": "message", "payload": {"text": text}}))
        frames = []
        while True:
            frame = await self.next()
            frames.append(frame)
            if frame["type"] == "confirm":
                assert approve is not None, frame
                answer = {"requestId": frame["payload"]["requestId"], "approve": approve}
                await self.socket.send(json.dumps({"type": "confirm", "payload": answer}))
            if frame["type"] == "done":
                return frames

    async def turn_with(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """A message with a payload of the test's own (files attached), run to its ``done``."""
        return await self.send_and_wait({"type": "message", "payload": payload})

    async def send_and_wait(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        """Any frame (an edit, a regeneration), then every frame up to the turn's ``done``."""
        await self.socket.send(json.dumps(frame))
        frames = [await self.next()]
        while frames[-1]["type"] != "done":
            frames.append(await self.next())
        return frames


def text_of(frames: list[dict[str, Any]]) -> str:
    return "".join(f["payload"]["content"] for f in frames if f["type"] == "text")


def steps(frames: list[dict[str, Any]], state: str = "complete") -> list[dict[str, Any]]:
    return [f["payload"] for f in frames if f["type"] == "status" and f["payload"]["state"] == state]


async def test_an_analysts_conversation_end_to_end(host: HostProcess, fake_model: FakeOpenAI) -> None:
    ws = host.workspace
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        hello = await chat.next()
        assert hello["type"] == "connection" and hello["payload"]["state"] == "connected"
        assert hello["payload"]["standIn"] is False and "fake-model" in hello["payload"]["provider"]
        assert set(hello["payload"]["servers"]) == {"debrief-calc", "debrief-state", "llmem"}

        # streamed text, tool steps, and the closest approach answered from the tool's result
        frames = await chat.turn("What was the closest approach between NELSON and COLLINGWOOD?")
        assert [f["type"] for f in frames][:3] == ["text", "text", "text"]
        done = steps(frames)
        assert [s["tool"] for s in done] == [
            "debrief-calc:run_tool",
            "debrief-calc:run_tool",
            "debrief-state:debrief_create_plot",
            "debrief-calc:run_tool",
        ]
        assert not any(s["data"]["isError"] for s in done), done
        cpa = done[-1]["data"]["result"]["features"][0]["properties"]
        facts = independent_figures()
        assert abs(cpa["range"] - facts.cpa_yd) <= 0.5
        answer = text_of(frames)
        assert f"{cpa['range']:.1f} yd" in answer and len([f for f in frames if f["type"] == "text"]) > 5
        assert (ws / PLOT).is_file()

        # "narrate that closest approach": the calc server's prompt, answered by the host's model
        frames = await chat.turn("Now narrate that closest approach")
        stored, asked = steps(frames)
        assert asked["tool"] == "debrief-calc:generate_prompt" and not asked["data"]["isError"]
        assert stored["tool"] == "debrief-calc:store_llm_result" and not stored["data"]["isError"]
        assert "narrative" in json.dumps(stored["data"]["result"])
        narration_request = next(r for r in fake_model.requests if r["messages"][0]["content"] == CALLBACK_SYSTEM)
        assert "tools" not in narration_request and "yd" in narration_request["messages"][1]["content"]

        # an image the tool returned, inline
        frames = await chat.turn("Show me a picture of it")
        (image,) = [f["payload"] for f in frames if f["type"] == "image"]
        png = base64.b64decode(image["data"], validate=True)
        assert image["mimeType"] == "image/png" and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000

        # a destructive call held for confirmation and refused: nothing deleted
        parsed = await chat.turn("Parse the project first, so there is something: annotate app.py")
        assert "stored" in text_of(parsed)
        # the callback closed by the host: the prompt answered by the host's model, stored
        callback = steps(parsed)
        assert [s["tool"] for s in callback] == ["llmem:store_llm_result", "llmem:generate_prompt"]
        assert not callback[0]["data"]["isError"] and callback[0]["message"].startswith("Stored through")
        notes = ws / ".llmem" / "artifacts"
        stored_before = sorted(p.name for p in notes.rglob("*.json"))
        assert any("annotate" in name for name in stored_before), stored_before
        frames = await chat.turn("Please clean the store", approve=False)
        (confirm,) = [f["payload"] for f in frames if f["type"] == "confirm"]
        assert confirm["tool"] == "llmem:delete_artifact" and confirm["arguments"] == {"path": "app.py"}
        assert text_of(frames) == "You declined, so nothing was deleted."
        assert sorted(p.name for p in notes.rglob("*.json")) == stored_before

        # a hallucinated tool survived: the model hears of it, the next turn works
        frames = await chat.turn("Fire a torpedo at NELSON")
        (bad,) = steps(frames)
        assert bad["data"]["isError"] and "no tool named" in bad["data"]["result"]
        assert text_of(frames).startswith("There is no such tool")
        frames = await chat.turn("And now use a block, please")
        assert [s["tool"] for s in steps(frames)] == ["debrief-state:debrief_list_plots"]
        assert PLOT in json.dumps(steps(frames)[0]["data"]["result"]) and text_of(frames).startswith("Listing.")

        # what the model was sent: the system prompt with each server's guide, tools by wire name
        first = fake_model.requests[0]
        assert (
            "debrief_create_plot" in first["messages"][0]["content"] and "import-rep" in first["messages"][0]["content"]
        )
        assert {"debrief-calc__run_tool", "llmem__delete_artifact"} <= {t["function"]["name"] for t in first["tools"]}
        assert all(h["authorization"] == f"Bearer {KEY}" for h in fake_model.headers)

    # no key in anything sent to the page, nor in the host's logs
    assert not any(KEY in raw for raw in chat.raw)
    assert not any(KEY in line for line in host.stderr)
    # every line of a turn carries the turn's correlation id
    turn_lines = [json.loads(line) for line in host.stderr if line.startswith("{") and "llmem.host" in line]
    started = [line["cid"] for line in turn_lines if line["msg"] == "turn started"]
    assert started and all(cid.startswith("t-") for cid in started)
    assert {line["cid"] for line in turn_lines if line["msg"].startswith("tool call")} <= set(started)


async def test_a_session_resumes_after_a_dropped_connection(host: HostProcess) -> None:
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        session = (await chat.next())["payload"]["sessionId"]
        await chat.turn("hello there")
    async with connect(host.ws_url + f"?session={session}") as socket:
        chat = Chat(socket)
        back = await chat.next()
        assert back["payload"]["state"] == "reconnected" and back["payload"]["sessionId"] == session
        history = await chat.next()
        assert history["type"] == "history"
        assert [m["role"] for m in history["payload"]["messages"]] == ["user", "assistant"]
    async with connect(host.ws_url + "?session=gone-long-ago") as socket:
        fresh = await Chat(socket).next()
        assert fresh["payload"]["state"] == "connected" and "gone" in fresh["payload"]["message"]


async def until(chat: Chat, kind: str) -> list[dict[str, Any]]:
    """The frames up to and with the first of ``kind``."""
    frames = [await chat.next()]
    while frames[-1]["type"] != kind:
        frames.append(await chat.next())
    return frames


async def test_every_page_on_a_session_gets_every_frame(host: HostProcess) -> None:
    """A phone and a desktop on one ``?session=``: each sees the other's question, every step,
    the confirmation and its answer, and the turn's end."""
    async with connect(host.ws_url) as phone_socket:
        phone = Chat(phone_socket)
        session = (await phone.next())["payload"]["sessionId"]
        async with connect(host.ws_url + f"?session={session}") as desktop_socket:
            desktop = Chat(desktop_socket)
            assert (await desktop.next())["payload"]["state"] == "reconnected"
            assert (await desktop.next())["type"] == "history"
            # the desktop asks: its step and answer reach both, the phone sees the question too
            mine = await desktop.turn("hello from the desktop")
            theirs = await until(phone, "done")
            assert theirs[0] == {"type": "user", "payload": {"text": "hello from the desktop", "attachments": []}}
            assert text_of(mine) == text_of(theirs) == "Hello! Ask me about your plots."
            assert not any(f["type"] == "user" for f in mine)  # the asking page drew its own bubble
            # the phone asks for something destructive and declines it: the desktop sees the
            # question, the card, the card settled, the declined step and the end of the turn
            await phone.turn("clean the notes", approve=False)
            seen = await until(desktop, "done")
            kinds = [f["type"] for f in seen]
            assert kinds[0] == "user" and "confirm" in kinds and "confirmed" in kinds
            confirmed = next(f for f in seen if f["type"] == "confirmed")["payload"]
            card = next(f for f in seen if f["type"] == "confirm")["payload"]
            assert confirmed == {"requestId": card["requestId"], "approve": False}
            assert steps(seen)[-1]["data"]["outcome"] == "declined"
            assert "declined" in text_of(seen)


async def test_a_page_beyond_the_limit_is_told_it_was_replaced(host: HostProcess) -> None:
    async with connect(host.ws_url) as first_socket:
        first = Chat(first_socket)
        session = (await first.next())["payload"]["sessionId"]
        async with anyio.create_task_group() as tg:
            opened: list[ClientConnection] = []

            async def open_one() -> None:
                socket = await connect(host.ws_url + f"?session={session}")
                opened.append(socket)

            for _ in range(MAX_PAGES):
                tg.start_soon(open_one)
        told = await first.next()
        assert told["type"] == "connection" and told["payload"]["state"] == "replaced"
        assert f"more than {MAX_PAGES} pages" in told["payload"]["message"]
        for socket in opened:
            await socket.close()


async def test_stop_cancels_a_slow_answer(host: HostProcess) -> None:
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        await socket.send(json.dumps({"type": "message", "payload": {"text": "a slow answer please"}}))
        while (await chat.next())["type"] != "text":
            pass
        await socket.send(json.dumps({"type": "message", "payload": {"text": "another"}}))
        await socket.send(json.dumps({"type": "cancel"}))
        frames = []
        while not frames or frames[-1]["type"] != "done":
            frames.append(await chat.next())
        assert any(f["type"] == "error" and "still working" in f["payload"]["message"] for f in frames)
        assert steps(frames)[-1]["data"] == {"cancelled": True}
        assert len(text_of(frames)) < 400 * 5  # the stream was cut, not run out
        frames = await chat.turn("hello again")  # and the session goes on
        assert text_of(frames) == "Hello! Ask me about your plots."


async def test_bad_frames_get_clear_errors_and_the_socket_stays(host: HostProcess) -> None:
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        for frame, says in [
            ("not json", "one JSON object"),
            (json.dumps({"type": "message", "payload": {"text": ""}}), "payload.text"),
            (json.dumps({"type": "confirm", "payload": {"requestId": "r-x", "approve": True}}), "no confirmation"),
            (json.dumps({"type": "shout"}), "unknown frame type"),
        ]:
            await socket.send(frame)
            reply = await chat.next()
            assert reply["type"] == "error" and says in reply["payload"]["message"], reply
            if '"message"' in frame:  # a refused message still ends the turn the page began
                assert (await chat.next())["type"] == "done"
        await socket.send(b"\x00binary")
        reply = await chat.next()
        assert reply["type"] == "error" and "JSON text frames" in reply["payload"]["message"]
        assert text_of(await chat.turn("hello")) == "Hello! Ask me about your plots."


async def test_a_foreign_origin_is_refused_and_the_own_origin_admitted(host: HostProcess) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(host.ws_url, origin="http://evil.example"):  # type: ignore[arg-type]
            pass
    assert refused.value.response.status_code == 403
    own = host.url.rstrip("/")
    async with connect(host.ws_url, origin=own) as socket:  # type: ignore[arg-type]
        assert json.loads(await socket.recv())["type"] == "connection"
    async with httpx.AsyncClient() as http:
        health = (await http.get(host.url + "health")).json()
        assert health["status"] == "ok" and health["tools"] > 20 and KEY not in json.dumps(health)
        page = await http.get(host.url)
        assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
        rebinding = await http.get(host.url, headers={"Host": "evil.example"})
        assert rebinding.status_code == 403


def test_beyond_loopback_the_host_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    import subprocess

    from tests.conftest import console_script, subprocess_env

    ws = make_workspace(tmp_path)
    config = write_config(ws, tmp_path / "mcp.json")
    done = subprocess.run(
        [console_script("llmem-host"), "--config", str(config), "--host", "0.0.0.0", "--provider", "stand-in"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "beyond loopback" in done.stderr and "LLMEM_HOST_AUTH_TOKEN" in done.stderr
    assert done.stdout == ""


async def test_with_a_token_every_request_and_the_socket_need_it(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    config = write_config(ws, tmp_path / "mcp.json", llmem={"excludeTools": ["delete_*"]})
    token = "host-token-0123456789abcdef"
    args = ("--host", "0.0.0.0", "--provider", "stand-in")
    with running_host(config, ws, *args, env={"LLMEM_HOST_AUTH_TOKEN": token}) as host:
        base = host.url.replace("0.0.0.0", "127.0.0.1")
        async with httpx.AsyncClient() as http:
            assert (await http.get(base + "health")).status_code == 401
            assert (await http.get(base + "health", headers={"Authorization": "Bearer nope"})).status_code == 401
            assert (await http.get(base, params={"token": "nope"})).status_code == 401
            assert (await http.get(base + "sessions")).status_code == 401  # the list of chats too
            opened = await http.get(base, params={"token": token})
            assert opened.status_code == 200 and "httponly" in opened.headers["set-cookie"].lower()
            assert (await http.get(base + "health", headers={"Authorization": f"Bearer {token}"})).json()["standIn"]
            assert (await http.get(base + "sessions", params={"token": token})).json()["sessions"] == []
        socket_url = base.replace("http://", "ws://") + "ws"
        with pytest.raises(InvalidStatus):
            async with connect(socket_url):
                pass
        async with connect(socket_url + f"?token={token}") as socket:
            chat = Chat(socket)
            hello = await chat.next()
            assert hello["payload"]["standIn"] is True
            # what it can do, for a person: in words, no tool names, and where a real model is connected
            helped = text_of(await chat.turn("What can you do?"))
            assert "deterministic stand-in" in helped and GUIDE in helped and "closest approach" in helped
            assert "get_artifact" not in helped and "--provider" not in helped
            listing = text_of(await chat.turn("tools"))  # the developer's listing
            assert "llmem:get_artifact" in listing
            assert "delete_artifact" not in listing  # the config's excludeTools
            assert not any(token in raw for raw in chat.raw)
            # the session's rate limit (1 a second, bursts of 10 by default): a flood is refused
            for _ in range(15):
                await socket.send(json.dumps({"type": "shout"}))
            replies = [(await chat.next())["payload"]["message"] for _ in range(15)]
            assert sum("too many requests" in r for r in replies) >= 4, replies


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
async def test_the_other_providers_drive_the_same_turn(provider: str, tmp_path: Path) -> None:
    from tests.fake_models import FakeAnthropic, FakeGemini

    def reply(body: dict[str, Any]) -> Reply:
        last = (body.get("messages") or body.get("contents"))[-1]
        text = json.dumps(last)
        if "tool_result" in text or "functionResponse" in text:
            return say("track-stats gives each track's statistics.", 5)
        return call("debrief-calc__describe_tool", {"name": "track-stats"}, call_id="call_x", pieces=5)

    fake_class = FakeAnthropic if provider == "anthropic" else FakeGemini
    key_name = "ANTHROPIC_API_KEY" if provider == "anthropic" else "GEMINI_API_KEY"
    ws = make_workspace(tmp_path)
    config = write_config(ws, tmp_path / "mcp.json")
    with fake_class(reply) as fake:
        args = ("--provider", provider, "--base-url", fake.base_url, "--model", "fake-model")
        with running_host(config, ws, *args, env={key_name: KEY}) as host:
            async with connect(host.ws_url) as socket:
                chat = Chat(socket)
                hello = await chat.next()
                assert hello["payload"]["provider"].startswith(provider)
                frames = await chat.turn("What does track-stats do?")
    (step,) = steps(frames)
    assert step["tool"] == "debrief-calc:describe_tool" and not step["data"]["isError"]
    assert text_of(frames) == "track-stats gives each track's statistics."
    assert not any(KEY in raw for raw in chat.raw) and len(fake.requests) == 2


async def test_settings_and_the_key_can_come_from_a_dotenv_file(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    config = write_config(ws, tmp_path / "mcp.json")
    # the model writes the key, cut across the pieces of its stream: no frame, nor the page, gets it
    leak = f"from the file; your key is {KEY}, as I read it"
    with FakeOpenAI(lambda body: say(leak, 5)) as fake:
        dotenv = tmp_path / "host.env"
        dotenv.write_text(
            f"LLMEM_HOST_PROVIDER=openai\nLLMEM_HOST_BASE_URL={fake.base_url}\nLLMEM_HOST_MODEL=model-of-the-file\n"
            f"OPENAI_API_KEY={KEY}\n"
        )
        with running_host(config, ws, "--env-file", str(dotenv)) as host:
            async with connect(host.ws_url) as socket:
                chat = Chat(socket)
                assert "model-of-the-file" in (await chat.next())["payload"]["provider"]
                assert text_of(await chat.turn("hello")) == "from the file; your key is [redacted], as I read it"
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"
    assert not any(KEY in raw for raw in chat.raw)


async def test_the_stand_in_plays_the_readmes_question_through_the_real_servers(tmp_path: Path) -> None:
    """The README's "try it": two REP files, the stand-in, the README's question. Each step is
    found through the tools and named with its result; the answer's figure is the analysis's own
    (checked against GeographicLib); "Open full size" draws the picture again, larger; a reload
    finds every step with its outcome; the chats are listed."""
    ws = tmp_path / "plots"
    ws.mkdir()
    for name in ("valid_boat1.rep", "valid_boat2.rep", "valid_narrative.rep"):
        (ws / name).write_bytes((Path(__file__).parent / "data" / "rep" / name).read_bytes())
    config = write_config(ws, tmp_path / "mcp.json")
    with running_host(config, ws, "--provider", "stand-in", "--rate", "50", "--burst", "50") as host:
        async with connect(host.ws_url) as socket:
            chat = Chat(socket)
            hello = (await chat.next())["payload"]
            assert hello["standIn"] is True and hello["suggestions"] == list(SUGGESTIONS)
            frames = await chat.turn("What was the closest approach between NELSON and COLLINGWOOD?")
            done = steps(frames)
            assert [s["data"]["title"] for s in done] == [
                "debrief_list_plots",
                "run_tool · import-rep",
                "run_tool · import-rep",
                "debrief_create_plot",
                "run_tool · closest-approach",
                "debrief_render_plot",
            ]
            assert all(s["data"]["outcome"] == "done" for s in done), done
            calls = [s["data"]["arguments"] for s in steps(frames, "processing")]
            # each call's input read from an earlier answer: the files listed, the refs imported; the
            # question names its ships, so no file is read once both are found (the log is not)
            assert [c["parameters"]["path"] for c in calls[1:3]] == done[0]["data"]["result"]["rep_files"][:2]
            refs = [f["ref"] for s in done[1:3] for f in s["data"]["result"]["features"]]
            assert [f["ref"] for f in calls[3]["features"]] == refs
            assert refs == [f["ref"] for f in calls[4]["features"]]
            # each step says what the plot holds
            assert done[3]["data"]["headline"].startswith(f"{calls[3]['filename']} with 2 tracks")
            cpa = done[4]["data"]["result"]["features"][0]["properties"]
            facts = independent_figures()
            assert abs(cpa["range"] - facts.cpa_yd) <= 0.5 and abs(_epoch(cpa["time"]) - facts.cpa_time) <= 2
            assert (
                done[4]["data"]["headline"]
                == f"{cpa['range']:.1f} yd at {clock(cpa['time'])}"
                == "119.5 yd at 10:45:09Z"
            )
            assert calls[5]["cpa"] == ["rep-nelson", "rep-collingwood"] and calls[5]["time"] == cpa["time"]
            answer = text_of(frames)
            sentence = (
                f"The closest approach between NELSON and COLLINGWOOD was {cpa['range']:.1f} yd "
                f"at {clock(cpa['time'])} on 12 Dec 1995."
            )
            assert answer.startswith(sentence) and "{" not in answer
            (image,) = [f["payload"] for f in frames if f["type"] == "image"]
            assert image["callId"] == done[5]["data"]["callId"]
            small = _png_size(image["data"])

            # "Open full size": the render again, as large as the tool draws, without the model
            drawn = done[5]["data"]["result"]  # what the inline picture drew: its time, revision, selection
            zoom = {"zoomId": "z-1", "tool": done[5]["tool"], "arguments": calls[5], "drawn": drawn}
            await socket.send(json.dumps({"type": "zoom", "payload": zoom}))
            zoomed = (await chat.next())["payload"]
            assert zoomed["zoomId"] == "z-1" and "error" not in zoomed and zoomed["changed"] is False, zoomed
            # the plot changed since the step drew it: redrawn now, and said so
            since = {**zoom, "zoomId": "z-3", "drawn": {**drawn, "revision": "an-older-one"}}
            await socket.send(json.dumps({"type": "zoom", "payload": since}))
            assert (await chat.next())["payload"]["changed"] is True
            await socket.send(json.dumps({"type": "zoom", "payload": {**zoom, "zoomId": "z-4", "drawn": "10:45"}}))
            assert "payload.drawn" in (await chat.next())["payload"]["error"]
            large = _png_size(zoomed["data"])
            assert large == (zoomed["width"], zoomed["height"]) and max(large) == 2048
            assert large[0] > 2 * small[0] and large[1] > 2 * small[1]
            await socket.send(json.dumps({"type": "zoom", "payload": {"zoomId": "z-0"}}))
            missing = (await chat.next())["payload"]
            assert missing == {"zoomId": "z-0", "error": missing["error"]} and "payload.tool" in missing["error"]
            bad = {"zoomId": "z-2", "tool": "debrief-state:debrief_list_plots", "arguments": {}}
            await socket.send(json.dumps({"type": "zoom", "payload": bad}))
            refused = (await chat.next())["payload"]
            assert refused["zoomId"] == "z-2" and "does not draw pictures" in refused["error"]

            # the other requests it offers: the listing, read from the tool; what it can do
            listed = text_of(await chat.turn(SUGGESTIONS[3]))
            plot = calls[5]["filename"]
            assert listed == (
                f"The workspace has 1 plot ({plot}) and 3 REP files (valid_boat1.rep, valid_boat2.rep, "
                "valid_narrative.rep).\n"
            )
            assert "closest approach between NELSON and COLLINGWOOD" in text_of(await chat.turn("What can you do?"))

            # a step that fails, and one declined: each says so, and a reload keeps it so
            frames = await chat.turn(
                '/tool debrief-calc:run_tool {"tool": "import-rep", "parameters": {"path": "no.rep"}}'
            )
            (failed,) = steps(frames)
            assert failed["data"]["outcome"] == "failed" and "'no.rep' is not a file" in failed["data"]["headline"]
            assert "`run_tool · import-rep` failed: 'no.rep' is not a file in the workspace" in text_of(frames)
            frames = await chat.turn(f'/tool debrief-state:debrief_undo {{"filename": "{plot}"}}', approve=False)
            (confirm,) = [f["payload"] for f in frames if f["type"] == "confirm"]
            assert confirm["change"] == f"undo the last change to {plot}"
            assert steps(frames)[0]["data"]["outcome"] == "declined" and "was declined" in text_of(frames)
            session = hello["sessionId"]

        async with connect(host.ws_url + f"?session={session}") as socket:
            chat = Chat(socket)
            assert (await chat.next())["payload"]["state"] == "reconnected"
            history = (await chat.next())["payload"]["messages"]
            tools = [(m["title"], m["outcome"], m["headline"]) for m in history if m["role"] == "tool"]
            assert tools[4] == ("run_tool · closest-approach", "done", "119.5 yd at 10:45:09Z")
            assert [t[1] for t in tools[7:]] == ["failed", "declined"] and len(tools) == 9
            assert len(history[6]["images"]) == 1  # the picture comes back with its step
            shown = [m for m in history if m["role"] == "tool"]
            # the durations measured once: a reload shows what the steps showed
            assert [m["durationMs"] for m in shown[:6]] == [s["data"]["durationMs"] for s in done]
            # a declined step reads as the person's choice, not as an error addressed to the model
            assert shown[-1]["result"] == "You declined; nothing ran."

        async with httpx.AsyncClient() as http:
            listed = (await http.get(host.url + "sessions")).json()["sessions"]
        assert [(s["id"], s["title"], s["messages"]) for s in listed] == [
            (session, "What was the closest approach between NELSON and COLLINGWOOD?", 5)
        ]


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _png_size(data: str) -> tuple[int, int]:
    png = base64.b64decode(data, validate=True)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
