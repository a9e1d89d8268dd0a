"""Files attached in the chat page as a person attaches them, in Debian's chromium against the real
``llmem-host``, the stand-in and the three real servers: a REP file dragged onto the page (the
hint says what a drop does), the same file again (nothing asked, nothing written), another file
of a taken name (the person chooses: replace it), and what the import warned of shown on its
step and in the answer. ``LLMEM_SCREENSHOTS=<folder>`` keeps what it saw."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests._browser import shot
from tests.conftest import DATA
from tests.host_harness import HostProcess, running_host, write_config
from tests.test_host_page_people import CPA, ask, open_page

pytestmark = pytest.mark.slow

#: COLLINGWOOD's fixes with one line no REP reader can read, as a hand-edited log has
BROKEN_LINE = "951212 114600.000 COLLINGWOOD @C 22 07 notafix\n"


@pytest.fixture(scope="module")
def one_ship(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    """The stand-in on a workspace that holds NELSON's REP file alone: COLLINGWOOD's is attached."""
    root = tmp_path_factory.mktemp("files")
    ws = root / "plots"
    ws.mkdir()
    shutil.copy(DATA / "rep" / "valid_boat1.rep", ws / "valid_boat1.rep")
    config = write_config(ws, root / "mcp.json")
    with running_host(config, ws, "--provider", "stand-in", "--rate", "50", "--burst", "50") as process:
        yield process


def drag_in(page: Any, name: str, content: str, picture: str = "") -> str:
    """A file dragged over the page, its hint's text read, then dropped."""
    moved = page.evaluate_handle(
        "([name, text]) => { const dt = new DataTransfer(); dt.items.add(new File([text], name)); return dt; }",
        [name, content],
    )
    page.dispatch_event("#scroller", "dragenter", {"dataTransfer": moved})
    hint = page.locator("#drop-zone .drop-hint")
    assert hint.is_visible()
    said = str(hint.inner_text())
    if picture:
        shot(page, picture)
    page.dispatch_event("#scroller", "drop", {"dataTransfer": moved})
    assert not page.is_visible("#drop-zone")
    return said


def chip(page: Any, name: str) -> Any:
    found = page.locator(f".attachments .file-chip[data-state='saved']:has-text('{name}')")
    found.wait_for(timeout=30_000)
    return found


def test_a_rep_file_dropped_kept_or_replaced_and_its_warnings_shown(browser: Any, one_ship: HostProcess) -> None:
    ws = one_ship.workspace
    context, page, errors = open_page(browser, one_ship.url)
    broken = (DATA / "rep" / "valid_boat2.rep").read_text(encoding="utf-8") + BROKEN_LINE
    hint = drag_in(page, "valid_boat2.rep", broken, "host-drop-hint.png")
    assert hint == "Drop REP, DSF or plot files here to save them in the workspace"
    assert "saved" in chip(page, "valid_boat2.rep").inner_text()
    assert (ws / "valid_boat2.rep").read_text(encoding="utf-8") == broken
    # the very same file again: it is the one there, nothing asked, nothing written
    page.locator(".attachments .file-remove").click()
    written = (ws / "valid_boat2.rep").stat().st_mtime_ns
    drag_in(page, "valid_boat2.rep", broken)
    assert "already in the workspace" in chip(page, "valid_boat2.rep").inner_text()
    assert not page.is_visible("#conflict-dialog") and (ws / "valid_boat2.rep").stat().st_mtime_ns == written
    assert sorted(p.name for p in ws.iterdir()) == ["valid_boat1.rep", "valid_boat2.rep"]
    # NELSON's file with other bytes under its name: the person is asked, and replaces it
    page.locator(".attachments .file-remove").click()
    nelson = (DATA / "rep" / "valid_boat1.rep").read_text(encoding="utf-8")
    shorter = "".join(nelson.splitlines(keepends=True)[:-1])  # without its last fix
    drag_in(page, "valid_boat1.rep", shorter)
    page.wait_for_selector("#conflict-dialog[open]", timeout=30_000)
    assert "valid_boat1.rep is already in the workspace" in page.inner_text("#conflict-text")
    page.click("#conflict-replace")
    assert "replacing the old one" in chip(page, "valid_boat1.rep").inner_text()
    assert (ws / "valid_boat1.rep").read_text(encoding="utf-8") == shorter
    page.locator(".attachments .file-remove").click()
    (ws / "valid_boat1.rep").write_text(nelson, encoding="utf-8")  # NELSON whole again for the question

    # imported for the question: the line it could not read is told on its step and in the answer
    ask(page, CPA)
    imports = page.locator(".tool-step:has-text('import-rep')")
    assert imports.count() == 2
    marks = [imports.nth(k).inner_text() for k in range(2)]
    # NELSON's speed column; COLLINGWOOD's too, and its broken line
    assert [("NELSON" in m, "⚠ 1 warning" in m, "⚠ 2 warnings" in m) for m in marks] == [
        (True, True, False),
        (False, False, True),
    ], marks
    answer = page.locator(".msg.assistant .msg-body").last.inner_text()
    assert "The tools warned:" in answer and "1 line(s) could not be read" in answer, answer
    assert "The closest approach between NELSON and COLLINGWOOD was" in answer
    shot(page, "host-import-warned.png")
    assert errors == []
    context.close()
