"""Every answer built from stored outlines is about the files as they are now (issue 23 §1).

Real code (``tests/data/servers``), edited by the test between calls without telling the server:
a renamed function searched by its old and new names, ``find_references`` after an edit, the
outline of a file never parsed, a parse after a read refreshed the file (``refreshed_since``), a
budget of 0 marking hits stale with the call that refreshes them, and the edits editors and git
make (atomic saves, folders removed and made again, touches, same-size rewrites). Where a line
number is checked, the reference is the file's own text (a regular expression over its lines), not
the outline. Each test runs with inotify and, where it matters, without (every question then
compares the files).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from llmem.code import freshness as freshness_module
from llmem.code.artifacts import Llmem
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.errors import InvalidArgument
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, ROOT, call, console_script, subprocess_env

GIT = "src/git/src/mcp_server_git/server.py"
TIME = "src/time/src/mcp_server_time/server.py"
PATHS = "src/filesystem/path-utils.ts"
#: (file, old name, new name, the definition's pattern with {name}) of a rename in each language.
RENAMES = {
    "python": (GIT, "git_status", "git_state", r"^def {name}\("),
    "typescript": (PATHS, "expandHome", "expandHomeDir", r"^export function {name}\("),
}


@pytest.fixture
def servers(tmp_path: Path) -> Path:
    """A copy of the servers repository's code, in a folder whose name has a space and an ü."""
    ws = tmp_path / "servers ü"
    shutil.copytree(DATA / "servers", ws)
    return ws.resolve()


@pytest.fixture(params=["inotify", "stat"])
def watching(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """With inotify (Linux), and without: every question then compares every outlined file."""
    if request.param == "stat":
        monkeypatch.setattr(freshness_module, "watcher", lambda: None)
    elif freshness_module.watcher() is None:
        pytest.skip("no inotify here")
    return str(request.param)


def line_of(file: Path, pattern: str) -> int:
    """The 1-based number of the only line matching ``pattern``, read from the file itself."""
    found = [n for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1) if re.search(pattern, line)]
    assert len(found) == 1, (pattern, found)
    return found[0]


def grep_w(file: Path, word: str) -> set[int]:
    """The lines holding ``word`` as a whole word, as ``grep -w`` finds them."""
    text = file.read_text(encoding="utf-8").splitlines()
    return {n for n, line in enumerate(text, 1) if re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", line)}


def edit(file: Path, old: str, new: str, count: int = 1) -> None:
    """Edit in place, as an editor without atomic saves does (the folder's mtime does not move)."""
    text = file.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    file.write_text(text.replace(old, new, count), encoding="utf-8")


def exact(answer: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [h for h in answer["results"] if h["match"] == "exact-name" and h["symbol"] == name]


def settle(ws: Path) -> None:
    """Wait until this process has compared every outlined file once (begun by its first question,
    in the background): from then on every change comes as an event, whatever the machine's load."""
    from llmem.code.search import search_index_for

    freshness = search_index_for(ArtifactStore(ws / ".llmem", ws)).freshness
    deadline = time.monotonic() + 60
    while not freshness.complete and time.monotonic() < deadline:
        time.sleep(0.01)
    assert freshness.complete


async def ask_until_compared(c: Client, **args: Any) -> dict[str, Any]:
    """Search; ask again while the server says it is still comparing files (as the guide says)."""
    for _ in range(600):
        err, answer = await call(c, "search_artifacts", **args)
        assert not err
        if "not_yet_compared" not in answer["data"]["freshness"]:
            return answer
        await anyio.sleep(0.05)
    raise AssertionError("still comparing after 30 s")


# -- in process, both protocol eras ---------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, servers: Path, watching: str) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("llmem-mcp", servers, limits=Limits()))
    async with Client(server, mode=request.param) as c:
        err, parsed = await call(c, "generate_artifact", path=".")
        assert not err and parsed["data"]["parsed"] >= 10
        await call(c, "search_artifacts", query="serve")  # the first question: the comparison begins
        settle(servers)
        yield c


@pytest.mark.anyio
@pytest.mark.parametrize("language", sorted(RENAMES))
async def test_a_renamed_function_is_answered_by_its_new_name_only(
    client: Client, servers: Path, language: str
) -> None:
    path, old, new, pattern = RENAMES[language]
    file = servers / path
    err, before = await call(client, "search_artifacts", query=old)
    assert not err and len(exact(before["data"], old)) == 1
    assert before["data"]["freshness"] == {"refreshed": 0, "stale_files": 0}
    edit(file, f" {old}(", f" {new}(")  # the definition only: the callers still say the old name
    err, gone = await call(client, "search_artifacts", query=old)
    assert not err
    assert exact(gone["data"], old) == []  # the symbol is gone: never answered as current
    assert gone["data"]["freshness"] == {"refreshed": 1, "stale_files": 0}
    assert not any(h.get("stale") for h in gone["data"]["results"])
    err, found = await call(client, "search_artifacts", query=new)
    assert not err
    [hit] = exact(found["data"], new)
    assert (hit["path"], hit["start_line"]) == (path, line_of(file, pattern.format(name=new)))
    assert found["data"]["freshness"] == {"refreshed": 0, "stale_files": 0}


@pytest.mark.anyio
async def test_find_references_after_an_edit(client: Client, servers: Path) -> None:
    """Definitions, lines and enclosing symbols as the file is after an edit that shifts every
    line and adds a caller, then after a half-done rename."""
    file = servers / GIT
    err, before = await call(client, "find_references", symbol="git_status")
    assert not err and [d["line"] for d in before["data"]["definitions"]] == [line_of(file, r"^def git_status\(")]
    text = file.read_text(encoding="utf-8")
    file.write_text("def status_twice(repo):\n    return git_status(repo) * 2\n\n\n" + text, encoding="utf-8")
    err, after = await call(client, "find_references", symbol="git_status", path=GIT)
    assert not err
    assert [d["line"] for d in after["data"]["definitions"]] == [line_of(file, r"^def git_status\(")]
    uses = {(r["line"], r["in"]) for r in after["data"]["results"] if r["path"] == GIT}
    assert {line for line, _ in uses} | {after["data"]["definitions"][0]["line"]} == grep_w(file, "git_status")
    assert (2, "status_twice") in uses
    assert (line_of(file, r"status = git_status\(repo\)"), "serve.call_tool") in uses
    edit(file, "def git_status(", "def git_state(")
    err, half = await call(client, "find_references", symbol="git_status")
    assert not err and half["data"]["definitions"] == []
    assert {r["line"] for r in half["data"]["results"] if r["path"] == GIT and r["kind"] == "call"} == {
        2,
        line_of(file, r"status = git_status\(repo\)"),
    }


@pytest.mark.anyio
async def test_a_parse_after_a_read_refresh_says_refreshed_since(client: Client, servers: Path) -> None:
    edit(servers / GIT, "def git_status(", "def git_state(")
    err, _ = await call(client, "search_artifacts", query="git_state")
    assert not err
    err, parsed = await call(client, "generate_artifact", path=GIT)
    assert not err
    data = parsed["data"]
    assert (data["parsed"], data["unchanged"]) == (0, 1)
    assert [(r["path"], r["by"]) for r in data["refreshed_since"]] == [(GIT, "search_artifacts")]
    assert data["refreshed_since_total"] == 1 and "refreshed_since" in parsed["nextAction"]
    err, again = await call(client, "generate_artifact", path=GIT)
    assert not err and "refreshed_since" not in again["data"]  # said once
    # A folder parse reports what reads refreshed under it; get_artifact counts as a read.
    edit(servers / TIME, "def get_local_tz(", "def local_tz(")
    err, outline = await call(client, "get_artifact", path=TIME)
    assert not err and "local_tz" in [s["name"] for s in outline["data"]["content"]["symbols"]]
    err, folder = await call(client, "generate_artifact", path="src")
    assert not err and folder["data"]["parsed"] == 0
    assert [(r["path"], r["by"]) for r in folder["data"]["refreshed_since"]] == [(TIME, "get_artifact")]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_get_artifact_outlines_a_file_never_parsed(servers: Path, mode: str) -> None:
    server = build_server(ServerConfig("llmem-mcp", servers, limits=Limits()))
    async with Client(server, mode=mode) as c:
        err, py = await call(c, "get_artifact", path=TIME)
        assert not err and py["data"]["status"] == "fresh"
        tree = ast.parse((servers / TIME).read_text(encoding="utf-8"))
        top = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        assert top and top <= {s["name"] for s in py["data"]["content"]["symbols"]}
        err, ts = await call(c, "get_artifact", path=PATHS)
        assert not err
        exported = set(re.findall(r"^export function (\w+)", (servers / PATHS).read_text(encoding="utf-8"), re.M))
        assert exported and exported <= {s["name"] for s in ts["data"]["content"]["symbols"]}
        # Only files: a folder has no outline, a missing file is not found.
        err, folder = await call(c, "get_artifact", path="src/time")
        assert err and folder["error"]["code"] == "ARTIFACT_NOT_FOUND"
        err, missing = await call(c, "get_artifact", path="src/nope.py")
        assert err and missing["error"]["code"] == "ARTIFACT_NOT_FOUND"
        err, parsed = await call(c, "generate_artifact", path="src")
        assert not err
        assert sorted(r["path"] for r in parsed["data"]["refreshed_since"]) == sorted([TIME, PATHS])


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_budget_of_zero_marks_hits_stale_with_the_call_that_refreshes_them(
    servers: Path, mode: str, watching: str
) -> None:
    server = build_server(ServerConfig("llmem-mcp", servers, limits=Limits(refresh_budget_ms=0)))
    async with Client(server, mode=mode) as c:
        await call(c, "generate_artifact", path=".")
        await call(c, "search_artifacts", query="serve")
        settle(servers)
        edit(servers / GIT, "def git_status(", "def git_state(")
        err, answer = await call(c, "search_artifacts", query="git_status")
        assert not err
        data = answer["data"]
        [hit] = exact(data, "git_status")  # not refreshed in time: answered, but marked
        assert hit["stale"] is True and hit["refresh_with"] == f"generate_artifact(path={GIT!r})"
        stale = [h for h in data["results"] if h.get("stale")]
        assert {h["path"] for h in stale} == {GIT}
        assert data["freshness"]["stale_files"] == 1 and data["freshness"]["stale_hits"] == len(stale)
        assert (
            data["freshness"]["stale_paths"] == [GIT]
            and data["freshness"]["refresh_with"] == "generate_artifact(path='.')"
        )
        assert "generate_artifact(path='.')" in answer["nextAction"]
        # A hit elsewhere is not marked.
        err, other = await call(c, "search_artifacts", query="get_local_tz")
        assert not err and other["data"]["results"] and not any(h.get("stale") for h in other["data"]["results"])
        # The call it names refreshes it.
        call_args = re.fullmatch(r"generate_artifact\(path='(.*)'\)", hit["refresh_with"])
        assert call_args is not None
        err, _ = await call(c, "generate_artifact", path=call_args.group(1))
        assert not err
        err, gone = await call(c, "search_artifacts", query="git_status")
        assert not err and exact(gone["data"], "git_status") == [] and gone["data"]["freshness"]["stale_files"] == 0
        # A read about one file brings it up to date whatever the budget.
        edit(servers / TIME, "def get_local_tz(", "def local_tz(")
        err, outline = await call(c, "get_artifact", path=TIME)
        assert not err and outline["data"]["status"] == "fresh"
        assert "local_tz" in [s["name"] for s in outline["data"]["content"]["symbols"]]


# -- over stdio, through the real console script ----------------------------------------------------


@pytest.mark.anyio
async def test_the_real_server_answers_edits_made_before_it_started_and_while_it_runs(servers: Path) -> None:
    Llmem(ArtifactStore(servers / ".llmem", servers), Limits()).parse(".")
    edit(servers / GIT, "def git_status(", "def git_state(")  # while no server runs
    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(servers)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, old = await call(c, "search_artifacts", query="git_status")
            assert not err and exact(old["data"], "git_status") == []
            err, new = await call(c, "search_artifacts", query="git_state")
            assert not err
            [hit] = exact(new["data"], "git_state")
            assert hit["start_line"] == line_of(servers / GIT, r"^def git_state\(")
            await ask_until_compared(c, query="git_state")  # every folder watched from here on
            edit(servers / PATHS, "function expandHome(", "function expandHomeDir(")  # while it runs
            err, ts = await call(c, "search_artifacts", query="expandHomeDir")
            assert not err
            [hit] = exact(ts["data"], "expandHomeDir")
            assert hit["start_line"] == line_of(servers / PATHS, r"^export function expandHomeDir\(")
            assert ts["data"]["freshness"]["refreshed"] == 1
            err, old_ts = await call(c, "search_artifacts", query="expandHome", scope="symbols")
            assert not err and exact(old_ts["data"], "expandHome") == []


# -- the domain, in process ----------------------------------------------------------------------


@pytest.fixture
def llmem(servers: Path, watching: str) -> Iterator[Llmem]:
    svc = Llmem(ArtifactStore(servers / ".llmem", servers), Limits())
    svc.parse(".")
    svc.search("git_status", None, ".", 5, None)  # the first question: the comparison begins
    settle(servers)  # the watches are in place from here on
    yield svc


def _search(llmem: Llmem, query: str) -> dict[str, Any]:
    return llmem.search(query, None, ".", 20, None)


def test_the_edits_editors_and_git_make(llmem: Llmem, servers: Path) -> None:
    file = servers / GIT
    # An atomic save: a new file renamed over the old one.
    tmp = file.with_name(".server.py.swp")
    tmp.write_text(file.read_text(encoding="utf-8").replace("def git_status(", "def git_state("), encoding="utf-8")
    os.replace(tmp, file)
    assert exact(_search(llmem, "git_state"), "git_state") and not exact(_search(llmem, "git_status"), "git_status")
    # A touch: the bytes are the same, nothing is re-parsed.
    st = file.stat()
    os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert _search(llmem, "git_state")["freshness"] == {"refreshed": 0, "stale_files": 0}
    # The same size, a new name: the mtime moved, the sha256 tells.
    edit(file, "def git_state(", "def git_stats(")
    os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns + 9_000_000_000))
    assert exact(_search(llmem, "git_stats"), "git_stats")
    # A folder removed and made again (a branch switch): its new files are seen.
    folder = servers / "src" / "time"
    saved = folder.parent / "time.saved"
    shutil.copytree(folder, saved)
    shutil.rmtree(folder)
    edit(saved / "src" / "mcp_server_time" / "server.py", "def get_local_tz(", "def local_timezone(")
    shutil.copytree(saved, folder)
    shutil.rmtree(saved)
    found = _search(llmem, "local_timezone")
    assert [h["path"] for h in exact(found, "local_timezone")] == [TIME]
    assert not exact(_search(llmem, "get_local_tz"), "get_local_tz")


def test_a_deleted_file_is_never_answered_as_current(llmem: Llmem, servers: Path) -> None:
    (servers / PATHS).unlink()
    answer = _search(llmem, "expandHome")
    [hit] = exact(answer, "expandHome")
    assert hit["stale"] is True and hit["deleted"] is True
    assert hit["refresh_with"] == f"delete_artifact(path={PATHS!r}, kind='outline')"
    assert answer["freshness"]["stale_files"] == 1
    llmem.delete(PATHS, "outline")
    assert not exact(_search(llmem, "expandHome"), "expandHome")


def test_the_search_database_follows_a_refresh(llmem: Llmem, servers: Path) -> None:
    edit(servers / GIT, "def git_status(", "def git_state(")
    _search(llmem, "git_state")
    with sqlite3.connect(llmem.searcher().db.file) as conn:  # what the next process reads
        names = {
            r[0] for r in conn.execute("SELECT lname FROM entries WHERE path = ? AND artifact = 'outline'", (GIT,))
        }
        fp = conn.execute(
            "SELECT size, sha256 FROM artifacts WHERE path = ? AND artifact = 'outline'", (GIT,)
        ).fetchone()
    assert "git_state" in names and "git_status" not in names
    import hashlib

    data = (servers / GIT).read_bytes()
    assert fp == (len(data), hashlib.sha256(data).hexdigest())


def test_dropped_events_mean_everything_is_compared_again(llmem: Llmem, servers: Path) -> None:
    freshness = llmem.outlines()
    if freshness._sub is None:
        pytest.skip("compares every file on every question already")
    edit(servers / GIT, "def git_status(", "def git_state(")
    watch = freshness_module.watcher()
    assert watch is not None
    events, _ = watch.take(freshness._sub)  # as if the kernel had dropped them ...
    assert events
    freshness._sub.overflowed = True  # ... and said so
    assert exact(_search(llmem, "git_state"), "git_state")


def test_events_piling_up_unread_mean_everything_is_compared_again(
    llmem: Llmem, servers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if llmem.outlines()._sub is None:
        pytest.skip("compares every file on every question already")
    from llmem.code import watch

    monkeypatch.setattr(watch, "EVENTS_KEPT", 2)
    for n in range(3):
        edit(servers / TIME, f"def get_local_tz{'_' * n}(", f"def get_local_tz{'_' * (n + 1)}(")
    edit(servers / GIT, "def git_status(", "def git_state(")
    sub = llmem.outlines()._sub
    assert sub is not None
    inotify = watch.watcher()
    assert inotify is not None
    events, overflowed = inotify.take(sub)
    assert overflowed and len(events) <= 2  # the pile was dropped, and that said ...
    sub.overflowed = True  # ... (put back for the next question, which reads it)
    assert exact(_search(llmem, "git_state"), "git_state")
    assert exact(_search(llmem, "get_local_tz___"), "get_local_tz___")


def test_outlines_another_process_writes_are_watched_too(llmem: Llmem, servers: Path) -> None:
    """A file first outlined by another process, in a folder this one never watched, then edited."""
    new = servers / "src" / "extra" / "tools.py"
    new.parent.mkdir()
    new.write_text("def first_tool():\n    return 1\n", encoding="utf-8")
    script = (
        "import sys\nfrom pathlib import Path\nfrom llmem.code.artifacts import Llmem\n"
        "from llmem.core.config import Limits\nfrom llmem.core.store import ArtifactStore\n"
        "ws = Path(sys.argv[1]); Llmem(ArtifactStore(ws / '.llmem', ws), Limits()).parse('src/extra')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(servers)], check=True, cwd=ROOT, env=subprocess_env())
    assert exact(_search(llmem, "first_tool"), "first_tool")
    edit(new, "def first_tool(", "def second_tool(")
    assert exact(_search(llmem, "second_tool"), "second_tool")
    assert not exact(_search(llmem, "first_tool"), "first_tool")


def test_a_folder_prompt_is_built_on_current_outlines_or_says_which_are_not(servers: Path, watching: str) -> None:
    store = ArtifactStore(servers / ".llmem", servers)
    llmem = Llmem(store, Limits())
    llmem.parse(".")
    before = llmem.prompt("src/time/src/mcp_server_time", "summarize").promptForHostLLM or ""
    assert "Get current time in specified timezone" in before  # a doc comment, from the outline
    edit(servers / TIME, '"""Get current time in specified timezone"""', '"""Find the clock of a zone"""')
    prompt = llmem.prompt("src/time/src/mcp_server_time", "summarize")
    assert prompt.data["freshness"] == {"refreshed": 1, "stale_files": 0}
    text = prompt.promptForHostLLM or ""
    assert "Find the clock of a zone" in text and "Get current time in specified timezone" not in text
    assert "could not be re-parsed" not in text
    late = Llmem(store, Limits(refresh_budget_ms=0))
    edit(servers / TIME, "def get_local_tz(", "def local_tz(")
    stale = late.prompt("src/time/src/mcp_server_time", "summarize")
    assert stale.data["freshness"]["stale_files"] == 1 and stale.data["freshness"]["stale_paths"] == [TIME]
    assert f"could not be re-parsed in time; what is shown of them may be out of date: {TIME}" in (
        stale.promptForHostLLM or ""
    )


def test_the_budget_is_configurable_and_zero_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Limits().refresh_budget_ms == 1_000
    monkeypatch.setenv("LLMEM_REFRESH_BUDGET_MS", "0")
    assert Limits.from_env().refresh_budget_ms == 0
    monkeypatch.setenv("LLMEM_REFRESH_BUDGET_MS", "-1")
    with pytest.raises(ValueError, match="LLMEM_REFRESH_BUDGET_MS"):
        Limits.from_env()
    monkeypatch.setenv("LLMEM_MAX_STEPS", "0")  # the other limits stay positive
    monkeypatch.delenv("LLMEM_REFRESH_BUDGET_MS")
    with pytest.raises(ValueError, match="positive"):
        Limits.from_env()


@pytest.mark.anyio
async def test_the_guide_says_how_answers_stay_current(client: Client) -> None:
    text = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
    section = text[text.index("Answers about the code as it is now") :]
    for words in ("stale: true", "refresh_with", "refreshed_since", "LLMEM_REFRESH_BUDGET_MS", "never parsed"):
        assert words in section, words


def test_a_file_over_the_cap_is_not_outlined_on_read_and_says_why(servers: Path) -> None:
    llmem = Llmem(ArtifactStore(servers / ".llmem", servers), Limits(max_file_bytes=2_000))
    with pytest.raises(InvalidArgument, match="file cap"):
        llmem.get(GIT, "outline", 0, None)
    assert llmem.store.get_or_none("llmem", GIT, "outline") is None


def test_a_new_process_still_comparing_checks_the_files_each_answer_is_about(
    servers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large workspace is compared in the background after a process starts; meanwhile each
    answer compares the files it is about and says how many are not compared yet."""
    if freshness_module.watcher() is None:
        pytest.skip("no inotify here: every question compares every file")
    script = (
        "import sys\nfrom pathlib import Path\nfrom llmem.code.artifacts import Llmem\n"
        "from llmem.core.config import Limits\nfrom llmem.core.store import ArtifactStore\n"
        "ws = Path(sys.argv[1]); Llmem(ArtifactStore(ws / '.llmem', ws), Limits()).parse('.')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(servers)], check=True, cwd=ROOT, env=subprocess_env())
    edit(servers / GIT, "def git_status(", "def git_state(")  # before this process looks
    edit(servers / TIME, "def get_local_tz(", "def zone_here(")
    edit(servers / PATHS, "function expandHome(", "function homeExpanded(")
    gate = threading.Event()
    compare_all = freshness_module.OutlineFreshness._compare_all

    def held(self: freshness_module.OutlineFreshness, generation: int) -> None:
        gate.wait(60)
        compare_all(self, generation)

    monkeypatch.setattr(freshness_module.OutlineFreshness, "_compare_all", held)
    monkeypatch.setattr(freshness_module, "FIRST_WAIT_S", 0)
    llmem = Llmem(ArtifactStore(servers / ".llmem", servers), Limits())
    old = _search(llmem, "git_status")
    assert not exact(old, "git_status")  # its file was a hit: checked, re-parsed
    assert old["freshness"]["refreshed"] == 1 and old["freshness"]["not_yet_compared"] >= 10
    assert "ask again" in old["freshness"]["not_yet_compared_means"]
    unseen = llmem.search("homeExpanded", None, ".", 20, None, "symbols")
    assert not exact(unseen, "homeExpanded") and unseen["freshness"]["not_yet_compared"] >= 10
    # A folder prompt compares every file it is built on.
    prompt = llmem.prompt("src/time/src/mcp_server_time", "summarize")
    assert prompt.data["freshness"]["refreshed"] == 1
    gate.set()
    for _ in range(600):
        if llmem.outlines().complete:
            break
        time.sleep(0.05)
    assert llmem.outlines().complete
    seen = llmem.search("homeExpanded", None, ".", 20, None, "symbols")  # found by the background
    assert exact(seen, "homeExpanded") and "not_yet_compared" not in seen["freshness"]
