"""The chats a host keeps, without the web: renamed, searched, deleted and brought back, rewound
for an edit; exported as Markdown (pictures inside) and JSON; the files a person attaches (names
checked, nothing outside the workspace, nothing overwritten without asking); the models to choose
from; the log's human lines."""

from __future__ import annotations

import base64
import json
import logging
import os
import zlib
from pathlib import Path

import pytest

from llmem.core.logsetup import HumanFormatter
from llmem.host.chat import ChatMessage, ToolCall
from llmem.host.models import Models, parse_choice
from llmem.host.providers import ProviderSettings
from llmem.host.providers.standin import StandInProvider
from llmem.host.sessions import SessionManager
from llmem.host.transcript import export_name, page_history, to_json, to_markdown
from llmem.host.uploads import UploadRefused, attachment_note, check_name, free_name, save_upload
from tests._commonmark import render


def png(width: int, height: int) -> bytes:
    """A real PNG (one grey row repeated), made here with zlib: no image library involved."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x00\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def a_chat(manager: SessionManager, question: str, answer: str) -> str:
    session = manager.create()
    call = ToolCall("c1", "debrief-state:debrief_render_plot", {"filename": "x.plot.json", "fit": "all"})
    picture = base64.b64encode(png(4, 3)).decode()
    session.history += [
        ChatMessage(role="user", content=question),
        ChatMessage(role="assistant", content="", tool_calls=[call]),
        ChatMessage(
            role="tool",
            content=json.dumps({"width": 4, "height": 3, "mediaType": "image/png"}),
            tool_call_id="c1",
            tool_name=call.name,
            headline="picture 4×3 px",
            images=[{"mimeType": "image/png", "data": picture}],
            duration_ms=12,
        ),
        ChatMessage(role="assistant", content=answer),
    ]
    return session.id


# -- chats -----------------------------------------------------------------------------------------


def test_a_chat_is_renamed_searched_deleted_and_brought_back() -> None:
    manager = SessionManager()
    cpa = a_chat(manager, "What was the closest approach between NELSON and COLLINGWOOD?", "119.5 yd at 10:45:09Z.")
    legs = a_chat(manager, "Which legs did NELSON steam?", "Four legs.")
    assert [c["id"] for c in manager.listing("nelson")] == [legs, cpa]  # any case, latest first
    (found,) = manager.listing("collingwood 119.5")  # every word, in the questions or the answers
    assert found["id"] == cpa and "COLLINGWOOD" in found["match"]
    assert manager.listing("torpedo") == []

    manager.rename(cpa, "  The  CPA   of the exercise ")
    (named,) = [c for c in manager.listing() if c["id"] == cpa]
    assert named["title"] == "The CPA of the exercise" and named["named"] is True
    assert [c["id"] for c in manager.listing("exercise")] == [cpa]  # its name is searched too
    manager.rename(cpa, "")
    assert next(c for c in manager.listing() if c["id"] == cpa)["title"].startswith("What was the closest approach")

    manager.delete(cpa)
    assert [c["id"] for c in manager.listing()] == [legs] and manager.get(cpa) is None
    assert manager.restore(cpa).id == cpa and manager.get(cpa) is not None
    manager.delete(cpa)
    manager._deleted[cpa] = (manager._deleted[cpa][0], manager._deleted[cpa][1] - manager.undo_s - 1)
    with pytest.raises(KeyError):  # too late: gone for good
        manager.restore(cpa)


def test_a_search_shows_the_line_that_holds_most_of_its_words() -> None:
    """The snippet under a found chat is the line with the most of the words asked (the first
    such), not merely the first line with the first word."""
    manager = SessionManager()
    chat = a_chat(manager, "How fast was COLLINGWOOD going at 9am?", "At 09:00:00Z COLLINGWOOD was making 7.6 kn.")
    (found,) = manager.listing("collingwood 7.6")
    assert found["id"] == chat and found["match"] == "At 09:00:00Z COLLINGWOOD was making 7.6 kn."
    (found,) = manager.listing("collingwood 9am")
    assert found["match"] == "How fast was COLLINGWOOD going at 9am?"  # the question, before the answer


def test_a_question_rewound_for_an_edit_takes_what_followed_with_it() -> None:
    manager = SessionManager()
    session = manager.get(a_chat(manager, "First question", "First answer."))
    assert session is not None
    session.history += [ChatMessage(role="user", content="Second question"), ChatMessage(role="assistant", content="2")]
    removed = session.rewind(1)
    assert removed.content == "Second question" and [m.content for m in session.questions()] == ["First question"]
    assert session.history[-1].content == "First answer."
    with pytest.raises(IndexError, match="1 questions; index 1"):
        session.rewind(1)
    session.rewind(0)
    assert session.history == []


def test_the_export_holds_the_chat_with_its_picture() -> None:
    manager = SessionManager()
    session = manager.get(a_chat(manager, "Show me the plot", "Here it is: **x.plot.json**."))
    assert session is not None
    session.history[0].shown, session.history[0].attachments = "Show me the plot", [{"name": "boat.rep", "size": 9}]
    markdown = to_markdown(session, "deterministic stand-in · not a model")
    assert markdown.startswith("# Show me the plot\n")
    assert "## You\n\nShow me the plot\n\nAttached: `boat.rep`" in markdown
    assert "Here it is: **x.plot.json**." in markdown
    assert "- ✓ `debrief-state:debrief_render_plot` done — picture 4×3 px" in markdown
    data = markdown.split("(data:image/png;base64,", 1)[1].split(")", 1)[0]
    assert base64.b64decode(data) == png(4, 3)  # the picture itself, whole, in the one file
    exported = to_json(session, "stand-in")
    assert exported["format"] == "llmem-host chat" and exported["title"] == "Show me the plot"
    assert exported["messages"] == page_history(session.history)
    assert exported["messages"][0] == {
        "role": "user",
        "content": "Show me the plot",
        "attachments": [{"name": "boat.rep", "size": 9}],
    }
    assert export_name(session, ".md") == "show-me-the-plot.md"


def test_the_markdown_export_reads_right_in_a_commonmark_reader() -> None:
    """Rendered as GitHub renders it: each step's arguments and result are code blocks inside its
    folded details, inside its list item, whole (read back, they are the step's own data); its
    picture in its item; a code block of an answer keeps its blank lines."""
    manager = SessionManager()
    answer = "Here is the call:\n\n```python\nfirst()\n\n\n\nsecond()\n```\n\nDone."
    session = manager.get(a_chat(manager, "Show me the plot", answer))
    assert session is not None
    failed = ToolCall("c2", "debrief-calc:run_tool", {"tool": "import-rep", "parameters": {"path": "x.rep"}})
    session.history[-1:-1] = [
        ChatMessage(role="assistant", content="", tool_calls=[failed]),
        ChatMessage(
            role="tool", content="x.rep line 3:\n\n\nnot a fix", tool_call_id="c2", tool_name=failed.name, is_error=True
        ),
    ]
    html, found = render(to_markdown(session, "stand-in"))
    codes = [r for r in found if r.tag == "code"]
    steps = page_history(session.history)
    plot_step, failed_step = (m for m in steps if m["role"] == "tool")
    assert [json.loads(c.text) for c in codes[:2]] == [plot_step["arguments"], plot_step["result"]]
    assert json.loads(codes[2].text) == failed_step["arguments"]
    assert codes[3].text == "x.rep line 3:\n\n\nnot a fix\n"  # a text result, its blank lines kept
    for code in codes[:4]:
        assert code.inside[-4:] == ("ul", "li", "details", "pre"), code
    (picture,) = (r for r in found if r.tag == "img")
    assert picture.inside[-3:] == ("ul", "li", "p") and base64.b64decode(picture.text.split(",", 1)[1]) == png(4, 3)
    assert codes[4].language == "python" and codes[4].text == "first()\n\n\n\nsecond()\n"
    assert codes[4].inside == ("pre",)  # the answer's own block, outside the steps' list
    assert "```" not in html  # no fence left over as text


# -- files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("../x.rep", "folder or a path"),
        ("/etc/passwd", "folder or a path"),
        ("..", "folder or a path"),
        ("sub/x.rep", "folder or a path"),
        ("sub\\x.rep", "folder or a path"),
        ("x\x00.rep", "NUL"),
        ("x\n.rep", "control character"),
        (".env", "hidden"),
        ("C:x.rep", "control character or one of"),
        ("", "empty"),
        ("nul.rep", "Windows"),
        ("x" * 300 + ".rep", "longer than 255 bytes"),
    ],
)
def test_a_hostile_or_unusable_name_is_refused(name: str, rule: str, tmp_path: Path) -> None:
    with pytest.raises(UploadRefused, match=rule) as caught:
        save_upload(tmp_path, name, b"951212 050000.000 NELSON\n")
    assert caught.value.status == 400
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "x.rep").exists()


def test_a_file_is_saved_whole_and_never_over_another_without_asking(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    saved = save_upload(ws, " boat1.rep", b"first")
    assert (saved.name, saved.size, saved.kind, saved.replaced) == ("boat1.rep", 5, "REP file", False)
    with pytest.raises(UploadRefused) as caught:
        save_upload(ws, "boat1.rep", b"second")
    assert caught.value.status == 409 and caught.value.suggested == "boat1 (2).rep"
    assert (ws / "boat1.rep").read_bytes() == b"first"
    save_upload(ws, "boat1 (2).rep", b"second")
    assert free_name(ws, "boat1.rep") == "boat1 (3).rep"
    assert save_upload(ws, "boat1.rep", b"third", overwrite=True).replaced is True
    assert (ws / "boat1.rep").read_bytes() == b"third"
    save_upload(ws, "exercise.plot.json", b"{}")
    assert free_name(ws, "exercise.plot.json") == "exercise (2).plot.json"
    assert sorted(p.name for p in ws.iterdir()) == ["boat1 (2).rep", "boat1.rep", "exercise.plot.json"]


def test_a_file_over_the_limit_or_not_text_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UploadRefused, match="limit is 10") as caught:
        save_upload(tmp_path, "big.rep", b"x" * 11, limit=10)
    assert caught.value.status == 413
    with pytest.raises(UploadRefused, match="not a text file"):
        save_upload(tmp_path, "picture.rep", png(2, 2) + b"\x00")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_a_symlink_of_that_name_pointing_out_is_not_followed(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside.rep"
    ws.mkdir()
    outside.write_bytes(b"keep me")
    (ws / "boat.rep").symlink_to(outside)
    with pytest.raises(UploadRefused) as caught:
        save_upload(ws.resolve(), "boat.rep", b"overwrite?")
    assert caught.value.status in (400, 409) and outside.read_bytes() == b"keep me"


def test_the_model_is_told_where_the_files_are(tmp_path: Path) -> None:
    note = attachment_note(["boat1.rep", "exercise.plot.json"], tmp_path)
    assert f"saved in the workspace ({tmp_path})" in note
    assert "`boat1.rep` (REP file), `exercise.plot.json` (plot)" in note
    assert check_name("  Übung.rep ") == "Übung.rep"


# -- models and the log ----------------------------------------------------------------------------


def test_the_models_a_page_may_choose_from() -> None:
    assert parse_choice("llama3.1:8b", "openai") == ("openai", "llama3.1:8b")  # a colon in a model's name
    assert parse_choice("anthropic:claude-sonnet-4-5", "openai") == ("anthropic", "claude-sonnet-4-5")
    assert parse_choice("stand-in", "openai") == ("stand-in", "deterministic stand-in")
    models = Models.from_options(
        ["stand-in", "openai:gpt-4o-mini", "llama3.1:8b"],
        "openai",
        base_url="http://127.0.0.1:11434/v1",
        environ={},
    )
    assert [m["id"] for m in models.listing()] == ["stand-in", "openai:gpt-4o-mini", "openai:llama3.1:8b"]
    assert models.default == "stand-in" and models.get("nope") is models.get(None)
    assert models.describe("openai:llama3.1:8b")["label"] == "openai · llama3.1:8b at http://127.0.0.1:11434/v1"
    assert models.describe()["standIn"] is True and models.describe()["suggestions"]
    assert len(Models([StandInProvider(ProviderSettings("x")), StandInProvider()])) == 1


def test_a_log_line_for_a_person() -> None:
    record = logging.LogRecord("llmem.host", logging.WARNING, "", 0, "server %s is slow\nsecond line", ("x",), None)
    record.session, record.cid = "abc", "-"
    line = HumanFormatter().format(record)
    assert line.endswith(" warning: server x is slow\n    second line (session=abc)")
    assert line[:8].count(":") == 2 and "{" not in line
