"""The host's chats and files from the outside: the real ``llmem-host`` with the stand-in (and a
fake OpenAI-compatible model beside it), its HTTP API (files saved into the workspace; chats
listed, searched, renamed, exported, deleted and brought back) and the WebSocket frames that go
with it (a question with files, an edit, a regeneration, the model chosen), every page of a chat
seeing the same."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.conftest import DATA
from tests.fake_models import FakeOpenAI, say
from tests.host_harness import HostProcess, running_host, two_ships, write_config
from tests.test_host_web import Chat, text_of, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
NARRATIVE = DATA / "rep" / "valid_narrative.rep"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lambda body: say("The fake model read: " + body["messages"][-1]["content"][-300:])) as model:
        yield model


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[HostProcess]:
    root = tmp_path_factory.mktemp("chats")
    ws = two_ships(root)
    config = write_config(ws, root / "mcp.json")
    args = ("--model", "stand-in", "--model", "openai:fake-model", "--base-url", fake.base_url)
    with running_host(config, ws, *args, "--rate", "50", "--burst", "50", "--max-upload-mb", "0.03") as process:
        yield process


async def test_files_are_saved_into_the_workspace_and_nowhere_else(host: HostProcess) -> None:
    ws = host.workspace
    body = NARRATIVE.read_bytes()
    async with httpx.AsyncClient(base_url=host.url) as http:
        saved = await http.post("files", params={"name": "log of the day.rep"}, content=body)
        assert saved.status_code == 201, saved.text
        assert saved.json() == {"name": "log of the day.rep", "size": len(body), "kind": "REP file", "replaced": False}
        assert (ws / "log of the day.rep").read_bytes() == body
        # taken: never overwritten without asking; a free name is offered
        again = await http.post("files", params={"name": "log of the day.rep"}, content=b"other")
        assert again.status_code == 409 and again.json()["suggested"] == "log of the day (2).rep"
        assert (ws / "log of the day.rep").read_bytes() == body
        replaced = await http.post("files", params={"name": "log of the day.rep", "replace": "1"}, content=b"other")
        assert replaced.status_code == 201 and replaced.json()["replaced"] is True
        # hostile names: refused, nothing written anywhere
        for name in ("../escaped.rep", str(ws.parent / "escaped.rep"), "escaped\x00.rep", ".env", "sub/escaped.rep"):
            refused = await http.post("files", params={"name": name}, content=b"x")
            assert refused.status_code == 400 and "refused" in refused.json()["error"], (name, refused.text)
        assert not (ws.parent / "escaped.rep").exists() and not (ws / ".env").exists()
        too_big = await http.post("files", params={"name": "big.rep"}, content=b"9" * 40_000)
        assert too_big.status_code == 413 and not (ws / "big.rep").exists()
        # another site's page may not write into the workspace
        foreign = await http.post(
            "files", params={"name": "foreign.rep"}, content=b"x", headers={"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403 and not (ws / "foreign.rep").exists()


async def test_a_question_with_files_tells_the_model_where_they_are(host: HostProcess, fake: FakeOpenAI) -> None:
    ws = host.workspace
    (ws / "ships log.rep").write_bytes(NARRATIVE.read_bytes())
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        await chat.next()
        files = [{"name": "ships log.rep", "size": 1}]
        answer = text_of(await chat.turn_with({"text": "Have a look at this", "attachments": files}))
        assert answer.startswith("Your file is saved in the workspace (`ships log.rep`). I cannot answer")
        # the other model reads the note itself
        await socket.send(json.dumps({"type": "model", "payload": {"id": "openai:fake-model"}}))
        assert (await until(chat, "model"))[-1]["payload"]["id"] == "openai:fake-model"
        await chat.turn_with({"text": "And now?", "attachments": files})
        told = fake.requests[-1]["messages"][-1]["content"]
        assert told.startswith("And now?\n\n[The person attached 1 file, saved in the workspace")
        assert "`ships log.rep` (REP file)" in told and str(ws) in told
        # a file the page did not save is refused, and the turn ends
        frames = await chat.turn_with({"text": "x", "attachments": [{"name": "never-saved.rep", "size": 3}]})
        assert [f["type"] for f in frames] == ["error", "done"]
        assert "never-saved.rep is not in the workspace" in frames[0]["payload"]["message"]


async def test_an_edit_and_a_regeneration_rewind_the_chat_on_every_page(host: HostProcess) -> None:
    async with connect(host.ws_url) as desk_socket:
        desk = Chat(desk_socket)
        session = (await desk.next())["payload"]["sessionId"]
        await desk.turn("What can you do?")
        await desk.turn("Is it raining?")
        async with connect(host.ws_url + f"?session={session}") as phone_socket:
            phone = Chat(phone_socket)
            await until(phone, "history")
            # the second question, edited on the desktop: the phone redraws the chat, then sees the new turn
            frames = await desk.send_and_wait({"type": "edit", "payload": {"index": 1, "text": "Is it snowing?"}})
            assert "I cannot answer “Is it snowing?”" in text_of(frames)
            redrawn = await until(phone, "history")
            messages = redrawn[-1]["payload"]["messages"]
            assert [m["content"] for m in messages if m["role"] == "user"] == ["What can you do?"]
            assert (await phone.next()) == {"type": "user", "payload": {"text": "Is it snowing?", "attachments": []}}
            await until(phone, "done")
            # the first one asked again: the chat is that one question and its new answer
            frames = await desk.send_and_wait({"type": "regenerate", "payload": {"index": 0}})
            assert "I can play these requests through" in text_of(frames)
            messages = (await until(phone, "history"))[-1]["payload"]["messages"]
            assert messages == []
            await until(phone, "done")
            # an index that is no question: an error, the turn ends, nothing forgotten
            frames = await desk.send_and_wait({"type": "regenerate", "payload": {"index": 5}})
            assert [f["type"] for f in frames] == ["error", "done"] and "0 to 0" in frames[0]["payload"]["message"]
    async with connect(host.ws_url + f"?session={session}") as socket:
        chat = Chat(socket)
        await chat.next()
        history = (await chat.next())["payload"]["messages"]
        assert [m["content"] for m in history if m["role"] == "user"] == ["What can you do?"]


async def test_the_chats_listed_searched_renamed_exported_deleted_and_brought_back(host: HostProcess) -> None:
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        session = (await chat.next())["payload"]["sessionId"]
        await chat.turn("What was the closest approach between NELSON and COLLINGWOOD?")
        async with httpx.AsyncClient(base_url=host.url) as http:
            found = (await http.get("sessions", params={"q": "collingwood 119.5"})).json()["sessions"]
            assert [c["id"] for c in found] == [session] and "COLLINGWOOD" in found[0]["match"]
            assert (await http.get("sessions", params={"q": "torpedo"})).json()["sessions"] == []
            renamed = await http.patch(f"sessions/{session}", json={"title": "CPA of the exercise"})
            assert renamed.status_code == 200 and renamed.json()["session"]["title"] == "CPA of the exercise"
            listed = (await http.get("sessions")).json()["sessions"]
            assert next(c for c in listed if c["id"] == session)["title"] == "CPA of the exercise"

            md = await http.get(f"sessions/{session}/export", params={"format": "markdown"})
            assert md.headers["content-disposition"] == 'attachment; filename="cpa-of-the-exercise.md"'
            text = md.text
            assert text.startswith("# CPA of the exercise\n")
            assert "The closest approach between NELSON and COLLINGWOOD was 119.5 yd at 10:45:09Z" in text
            picture = base64.b64decode(text.split("(data:image/png;base64,", 1)[1].split(")", 1)[0])
            assert picture[:8] == b"\x89PNG\r\n\x1a\n"
            exported = (await http.get(f"sessions/{session}/export", params={"format": "json"})).json()
            steps = [m for m in exported["messages"] if m["role"] == "tool"]
            assert steps[-2]["headline"] == "119.5 yd at 10:45:09Z" and steps[-1]["images"]

            foreign = await http.delete(f"sessions/{session}", headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403
            deleted = await http.delete(f"sessions/{session}")
            assert deleted.status_code == 200 and deleted.json()["undoS"] > 0
            # the page on it hears so, and is closed
            told = await until(chat, "connection")
            assert told[-1]["payload"]["state"] == "deleted"
            assert session not in [c["id"] for c in (await http.get("sessions")).json()["sessions"]]
            assert (await http.get(f"sessions/{session}/export")).status_code == 404
            restored = await http.post(f"sessions/{session}/restore")
            assert restored.status_code == 200
            assert session in [c["id"] for c in (await http.get("sessions")).json()["sessions"]]


async def test_the_model_is_chosen_per_chat_and_every_page_hears_it(host: HostProcess, fake: FakeOpenAI) -> None:
    async with connect(host.ws_url) as socket:
        chat = Chat(socket)
        hello = (await chat.next())["payload"]
        assert [m["id"] for m in hello["models"]] == ["stand-in", "openai:fake-model"]
        assert hello["model"] == "stand-in" and hello["standIn"] is True
        assert [(s["name"], s["state"]) for s in hello["serverStates"]] == [
            ("debrief-calc", "running"),
            ("debrief-state", "running"),
            ("llmem", "running"),
        ]
        async with connect(host.ws_url + f"?session={hello['sessionId']}") as other_socket:
            other = Chat(other_socket)
            await other.next()
            await socket.send(json.dumps({"type": "model", "payload": {"id": "openai:fake-model"}}))
            for page in (chat, other):
                chosen = (await until(page, "model"))[-1]["payload"]
                assert chosen["standIn"] is False and chosen["label"].startswith("openai · fake-model at http://")
        before = len(fake.requests)
        assert text_of(await chat.turn("hello")).startswith("The fake model read: hello")
        assert len(fake.requests) == before + 1
        await socket.send(json.dumps({"type": "model", "payload": {"id": "gpt-9"}}))
        refused = await chat.next()
        assert refused["type"] == "error" and "stand-in, openai:fake-model" in refused["payload"]["message"]
