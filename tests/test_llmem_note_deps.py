"""Notes that know what they depend on (issue 23 §3), on real code of modelcontextprotocol/servers
(tests/data/servers) copied to tmp_path and edited by the tests between calls: a note depends on
the code it describes and on the symbols it names elsewhere; when one of those changes or goes,
the note reads stale and says which, and its refresh prompt shows that code. A summary that
names a symbol gone since lists it in gone_names_mentioned, a folder's summary too."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from llmem.code.note_deps import names_in
from tests.conftest import call, console_script, subprocess_env

pytestmark = pytest.mark.anyio

LIB = "src/filesystem/lib.ts"
PATH_UTILS = "src/filesystem/path-utils.ts"
GIT = "src/git/src/mcp_server_git/server.py"
GIT_INIT = "src/git/src/mcp_server_git/__init__.py"

#: What the trial's agent wrote on path-utils.ts: which callers expand ``~`` first. It names
#: ``validatePath`` (defined in lib.ts), its own file's ``normalizePath`` and ``expandHome``, and
#: English words that are also names somewhere ("path", "server": SearchResult.path, index.ts's server).
FILE_NOTE = (
    "Path helpers for the filesystem server. The callers of `normalizePath` outside this file: "
    "validatePath in lib.ts calls expandHome first, so a `~` path is expanded before it is normalized."
)
NORMALIZE_NOTE = "Normalizes a path for the platform; its callers (validatePath) expand ~ first."


def _line_of(servers_ws: Path, path: str, pattern: str) -> int:
    """Where ``pattern`` first stands in the file (1-based): the test's own reading of the source."""
    lines = (servers_ws / path).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if re.search(pattern, line))


def _insert_after(servers_ws: Path, path: str, pattern: str, added: str) -> None:
    """An edit as an agent makes one: a line added after the first line matching ``pattern``."""
    file = servers_ws / path
    lines = file.read_text(encoding="utf-8").split("\n")
    at = next(n for n, line in enumerate(lines) if re.search(pattern, line))
    lines.insert(at + 1, added)
    file.write_text("\n".join(lines), encoding="utf-8")


async def _annotate(servers_client: Client, path: str, answer: dict[str, Any]) -> dict[str, Any]:
    err, out = await call(servers_client, "generate_prompt", path=path, task="annotate")
    assert not err, out
    err, stored = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    assert not err and stored["status"] == "success", stored
    return dict(stored["data"])


async def test_a_note_reads_stale_when_a_symbol_it_names_in_another_file_changes(
    servers_client: Client, servers_ws: Path
) -> None:
    stored = await _annotate(
        servers_client,
        PATH_UTILS,
        {"file": {"description": FILE_NOTE}, "symbols": {"normalizePath": {"description": NORMALIZE_NOTE}}},
    )
    # validatePath is defined in lib.ts, normalizePath and expandHome in the note's own file (the
    # test's grep of the sources says where); "path" and "server" are English here, not followed.
    assert _line_of(servers_ws, LIB, r"^export async function validatePath\(") > 0
    own = (servers_ws / PATH_UTILS).read_text(encoding="utf-8")
    assert re.search(r"^export function normalizePath\(", own, re.M) and re.search(
        r"^export function expandHome\(", own, re.M
    )
    assert sorted((d["path"], d["symbol"]) for d in stored["depends_on"]) == [
        (LIB, "validatePath"),
        (PATH_UTILS, "expandHome"),  # of the file's note: no symbol's own hash covers it
        (PATH_UTILS, "normalizePath"),
    ]
    err, out = await call(servers_client, "get_artifact", path=PATH_UTILS, kind="annotate")
    assert not err and out["data"]["status"] == "fresh"

    # Another function of lib.ts changes: the note names nothing of it, it stays fresh.
    _insert_after(servers_ws, LIB, r"^export function formatSize\(", "  // sizes are binary (KiB)")
    err, out = await call(servers_client, "get_artifact", path=PATH_UTILS, kind="annotate")
    assert not err and out["data"]["status"] == "fresh"

    # validatePath changes: the note reads stale, says which and why, and what to read.
    _insert_after(servers_ws, LIB, r"^export async function validatePath\(", "  requestedPath = requestedPath.trim();")
    err, out = await call(servers_client, "get_artifact", path=PATH_UTILS, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    assert out["data"]["stale_dependencies"] == [
        {
            "name": "validatePath",
            "symbol": "validatePath",
            "path": LIB,
            "change": "changed",
            "named_in": ["normalizePath", "the file note"],
            "read_with": f"get_artifact(path={LIB!r}, kind='source', symbol='validatePath')",
        }
    ]
    assert "stale_dependencies" in out["nextAction"] and f"generate_prompt({PATH_UTILS!r}" in out["nextAction"]
    content = out["data"]["content"]
    assert content["naming_changed_code"] == {"normalizePath": {"description": NORMALIZE_NOTE}}
    assert "normalizePath" not in content["symbols"]  # not answered as current
    err, listed = await call(servers_client, "list_artifacts", directory="src/filesystem", status="stale")
    assert not err and PATH_UTILS in [e["path"] for f in listed["data"]["folders"] for e in f["entries"]]

    # The refresh prompt asks for those notes again and shows the code as it is now.
    err, out = await call(servers_client, "generate_prompt", path=PATH_UTILS, task="annotate")
    assert not err and out["data"]["named_code_changed"] == 1
    prompt = out["promptForHostLLM"]
    assert "requestedPath = requestedPath.trim();" in prompt and "## Code named in what was written" in prompt
    assert '"file" is asked for' in prompt
    asked = [line[2:] for line in prompt.split("qualified names", 1)[1].splitlines() if line[:2] == "- "]
    assert "normalizePath" in asked
    answer = {
        "file": {"description": FILE_NOTE + " It trims the path first now."},
        "symbols": {"normalizePath": {"description": NORMALIZE_NOTE}},
    }
    err, stored_again = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    assert not err and stored_again["data"]["depends_on"][0]["symbol"] == "validatePath"
    err, out = await call(servers_client, "get_artifact", path=PATH_UTILS, kind="annotate")
    assert not err and out["data"]["status"] == "fresh"


async def test_a_named_symbol_that_is_gone_is_said_gone(servers_client: Client, servers_ws: Path) -> None:
    await _annotate(servers_client, PATH_UTILS, {"file": {"description": FILE_NOTE}})
    lib = servers_ws / LIB
    lib.write_text(
        re.sub(r"\bvalidatePath\b", "validateRequestedPath", lib.read_text(encoding="utf-8")), encoding="utf-8"
    )
    err, out = await call(servers_client, "get_artifact", path=PATH_UTILS, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    (gone,) = out["data"]["stale_dependencies"]
    assert gone["change"] == "gone" and gone["symbol"] == "validatePath" and gone["named_in"] == ["the file note"]
    assert gone["read_with"] == "find_references('validatePath')"
    err, out = await call(servers_client, "generate_prompt", path=PATH_UTILS, task="annotate")
    assert not err and "`validatePath` (src/filesystem/lib.ts#validatePath): gone" in out["promptForHostLLM"]


async def test_a_symbols_note_naming_another_symbol_of_its_file_goes_stale_with_it(
    servers_client: Client, servers_ws: Path
) -> None:
    """The trial's half-done rename: GitTools.DIFF renamed where it is defined only. serve.list_tools
    is unchanged, but its note names GitTools.DIFF: it is the note that must read stale."""
    notes = {
        "serve.list_tools": {"description": "Lists the tools: one Tool per `GitTools` member, `GitTools.DIFF` too."},
        "GitTools": {"description": "The tool names: STATUS, DIFF (`GitTools.DIFF`) and the rest."},
    }
    stored = await _annotate(servers_client, GIT, {"symbols": notes})
    named = {(d["symbol"], d["path"]) for d in stored["depends_on"]}
    assert named == {("GitTools", GIT), ("GitTools.DIFF", GIT)}  # of serve.list_tools; GitTools' own are its own
    source = servers_ws / GIT
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('    DIFF = "git_diff"\n', '    DIFF_BRANCHES = "git_diff"\n'), encoding="utf-8")
    assert "GitTools.DIFF," in source.read_text(encoding="utf-8")  # its uses are left as they were
    err, out = await call(servers_client, "get_artifact", path=GIT, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    assert out["data"]["stale_symbols"] == [{"symbol": "GitTools", "change": "changed"}]
    changes = {d["symbol"]: (d["change"], d["named_in"]) for d in out["data"]["stale_dependencies"]}
    assert changes == {"GitTools": ("changed", ["serve.list_tools"]), "GitTools.DIFF": ("gone", ["serve.list_tools"])}
    assert list(out["data"]["content"]["naming_changed_code"]) == ["serve.list_tools"]
    err, out = await call(servers_client, "generate_prompt", path=GIT, task="annotate")
    assert not err  # the refresh asks for both notes: GitTools' code changed, serve.list_tools' names went
    parts = [out]
    for k in range(2, out["data"]["parts"] + 1):
        err, more = await call(servers_client, "generate_prompt", path=GIT, task="annotate", part=k)
        parts.append(more)
    asked = {
        line[2:]
        for p in parts
        for line in p["promptForHostLLM"].split("qualified names", 1)[1].splitlines()
        if line[:2] == "- "
    }
    assert {"GitTools", "serve.list_tools"} <= asked
    # Each part's prompt shows both: the code its notes named that changed (GitTools.DIFF gone) and
    # what no longer resolves in the file (check_references: every line grep finds GitTools.DIFF on).
    broken = [
        n
        for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"GitTools\.DIFF\b", line)
    ]
    assert broken
    for p in parts:
        head = p["promptForHostLLM"].split("## Answer format", 1)[0]
        named = head.split("## Code named in what was written", 1)[1].split("## Broken around it", 1)[0]
        # Renamed where it is defined only: said unfinished, with the uses that still name it.
        assert f"`GitTools.DIFF` ({GIT}#GitTools.DIFF): the rename is not finished" in named
        assert sorted({int(m) for m in re.findall(rf"{re.escape(GIT)}:(\d+) `", named)}) == broken[:10]
        around = head.split("## Broken around it", 1)[1]
        assert sorted(int(m) for m in re.findall(r"^- line (\d+): `GitTools\.DIFF`", around, re.M)) == broken
        assert p["data"]["broken_uses"] == len(broken) and p["data"]["named_code_changed"] == 2


async def test_summaries_list_the_named_symbols_a_half_done_rename_took_away(
    servers_client: Client, servers_ws: Path
) -> None:
    """The trial: summaries of the git server and of its folder named DIFF; GitTools.DIFF is then
    renamed where it is defined and nowhere else (the uses still say GitTools.DIFF)."""
    summary = (
        "# The git server\n\n`serve` registers one tool per `GitTools` member: STATUS, DIFF_UNSTAGED, "
        "DIFF (`git_diff` between branches) and the rest; `call_tool` dispatches on them."
    )
    for target in ("src/git", GIT):
        err, out = await call(servers_client, "generate_prompt", path=target, task="summarize")
        assert not err
        err, stored = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=summary)
        assert not err and stored["status"] == "success"
    source = servers_ws / GIT
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('    DIFF = "git_diff"\n', '    DIFF_BRANCHES = "git_diff"\n'), encoding="utf-8")
    # The truth, by ast: GitTools has no DIFF now, and the code still uses GitTools.DIFF.
    tree = ast.parse(source.read_text(encoding="utf-8"))
    tools = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "GitTools")
    members = {t.id for a in tools.body if isinstance(a, ast.Assign) for t in a.targets if isinstance(t, ast.Name)}
    assert "DIFF" not in members and "DIFF_BRANCHES" in members
    assert any(isinstance(n, ast.Attribute) and n.attr == "DIFF" for n in ast.walk(tree))
    for target in ("src/git", GIT):
        err, out = await call(servers_client, "get_artifact", path=target, kind="summarize")
        assert not err and out["data"]["status"] == "stale", target
        assert out["data"]["gone_names_mentioned"] == ["GitTools.DIFF"], target
        assert "gone_names_mentioned" in out["nextAction"]
    err, out = await call(servers_client, "get_artifact", path="src/git", kind="summarize")
    assert {"name": "DIFF", "symbol": "GitTools.DIFF", "path": GIT, "change": "gone"}.items() <= next(
        d for d in out["data"]["stale_dependencies"] if d["symbol"] == "GitTools.DIFF"
    ).items()


async def test_names_of_several_files_follow_the_imports_or_are_left_out(
    servers_client: Client, servers_ws: Path
) -> None:
    # `serve` is defined by the git and the time server; the git package's __init__ imports the git one.
    assert re.search(r"^from \.server import serve$", (servers_ws / GIT_INIT).read_text(encoding="utf-8"), re.MULTILINE)
    err, out = await call(servers_client, "generate_prompt", path=GIT_INIT, task="summarize")
    assert not err
    err, stored = await call(
        servers_client, "store_llm_result", **out["callbackArgs"], result="Runs `serve` from click."
    )
    assert not err and stored["data"]["depends_on"] == [{"name": "serve", "symbol": "serve", "path": GIT}]
    # From lib.ts, nothing links either of them: not followed, and the answer says so.
    err, out = await call(servers_client, "generate_prompt", path=LIB, task="summarize")
    assert not err
    err, stored = await call(
        servers_client, "store_llm_result", **out["callbackArgs"], result="Unlike `serve` it exports."
    )
    assert not err and "depends_on" not in stored["data"]
    (left,) = stored["data"]["names_not_followed"]["names"]
    assert left == {"name": "serve", "defined_in": [GIT, "src/time/src/mcp_server_time/server.py"]}


async def test_the_notes_named_code_follows_a_renamed_note(servers_client: Client, servers_ws: Path) -> None:
    """normalizePath is renamed with its body unchanged: its note follows (renamed), and so does
    what the note names elsewhere."""
    await _annotate(servers_client, PATH_UTILS, {"symbols": {"normalizePath": {"description": NORMALIZE_NOTE}}})
    utils = servers_ws / PATH_UTILS
    utils.write_text(
        re.sub(r"\bnormalizePath\b", "normalizeFsPath", utils.read_text(encoding="utf-8")), encoding="utf-8"
    )
    err, out = await call(servers_client, "generate_artifact", path=PATH_UTILS)
    assert not err and out["data"]["renamed"] == {PATH_UTILS: {"normalizePath": "normalizeFsPath"}}
    _insert_after(servers_ws, LIB, r"^export async function validatePath\(", "  requestedPath = requestedPath.trim();")
    err, out = await call(servers_client, "get_artifact", path=PATH_UTILS, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    assert [d["named_in"] for d in out["data"]["stale_dependencies"]] == [["normalizeFsPath"]]


def test_what_counts_as_a_name_in_a_note() -> None:
    text = (
        "Callers of `normalizePath` check the path first; validatePath in lib.ts does, as does "
        "`GitTools.DIFF` and run() — e.g. the server, Server, JSON, DEFAULT_CONTEXT_LINES and `Path`."
    )
    assert names_in(text) == [
        "normalizePath",
        "GitTools.DIFF",
        "Path",
        "validatePath",
        "lib.ts",
        "run",
        "JSON",
        "DEFAULT_CONTEXT_LINES",
    ]


async def test_over_stdio_keys_are_sorted_notes_go_stale_with_what_they_name_and_words_match(servers_ws: Path) -> None:
    server = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(servers_ws)], env=subprocess_env()
    )
    async with Client(server, mode="legacy") as c:  # type: ignore[arg-type]
        err, _ = await call(c, "generate_artifact", path=".")
        assert not err
        answer = {"symbols": {"normalizePath": {"description": NORMALIZE_NOTE}, "validatePath": {"description": "x"}}}
        stored = await _annotate(c, PATH_UTILS, answer)  # one key of another file: refused, the rest stored
        assert stored["step"] == 1 and stored["stored"] == ["normalizePath"]
        assert stored["refused"][0]["call"] == f"generate_prompt({LIB!r}, 'annotate')"
        assert stored["depends_on"] == [{"name": "validatePath", "symbol": "validatePath", "path": LIB}]
        _insert_after(
            servers_ws, LIB, r"^export async function validatePath\(", "  requestedPath = requestedPath.trim();"
        )
        err, out = await call(c, "get_artifact", path=PATH_UTILS, kind="annotate")
        assert not err and out["data"]["status"] == "stale"
        assert [d["symbol"] for d in out["data"]["stale_dependencies"]] == ["validatePath"]
        err, out = await call(c, "search_artifacts", query="who calls normalizePath", scope="notes")
        assert not err and out["data"]["total"] == 1
        assert {"Normalizes", "callers"} <= set(out["data"]["results"][0]["why"]["terms"])
