"""The Python API, ``debrief_calc.Workspace``: one method per tool of both Debrief servers, with
the same parameters, checks, answers, errors and store as the tools; documented; never MCP."""

from __future__ import annotations

import base64
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import debrief_calc as dc
from debrief_calc._workspace import Workspace
from llmem.core.arguments import unchecked
from llmem.core.config import ServerConfig, resolve_store_root
from llmem.core.serve import SuiteServer
from tests.conftest import DATA, MODES, ROOT, call

pytestmark = pytest.mark.anyio

SERVERS = {"debrief-calc-mcp": "debrief_calc.calc.server", "debrief-state-mcp": "debrief_calc.state.server"}
LARGE = "large-sample.plot.json"
PNG = b"\x89PNG\r\n\x1a\n"


def build(script: str, workspace: Path, store: str = "workspace") -> SuiteServer:
    module = importlib.import_module(SERVERS[script])
    server: SuiteServer = module.build_server(ServerConfig(script, workspace, store=store))
    return server


@pytest.fixture
def ws_dir(workspace: Path) -> Path:
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        shutil.copy(DATA / "rep" / name, workspace / name)
    shutil.copy(DATA / "plots" / LARGE, workspace / LARGE)
    return workspace


@pytest.fixture(params=MODES)
async def clients(request: pytest.FixtureRequest, ws_dir: Path) -> AsyncIterator[tuple[Client, Client]]:
    """debrief-calc-mcp and debrief-state-mcp in process, in one protocol era, on ``ws_dir``."""
    calc, state = build("debrief-calc-mcp", ws_dir), build("debrief-state-mcp", ws_dir)
    async with Client(calc, mode=request.param) as c, Client(state, mode=request.param) as s:
        yield c, s


def tool_methods() -> dict[str, Any]:
    """The Workspace's public methods, by name."""
    return {
        name: member for name, member in inspect.getmembers(Workspace, inspect.isfunction) if not name.startswith("_")
    }


# -- one method per tool, the same parameters ------------------------------------------------------


@pytest.mark.parametrize("script", SERVERS)
async def test_every_tool_is_a_workspace_method_with_the_same_parameters(script: str, workspace: Path) -> None:
    server = build(script, workspace)
    for tool in await server.list_tools():
        registered = server._tool_manager.get_tool(tool.name)
        assert registered is not None
        method = getattr(registered.fn, "__workspace_method__", None)
        assert method is not None, f"{script}: {tool.name} is not made from a Workspace method"
        assert tool_methods()[method.__name__] is method
        params = {n: p for n, p in inspect.signature(unchecked(method)).parameters.items() if n != "self"}
        schema = tool.input_schema
        assert list(schema.get("properties", {})) == list(params), tool.name
        required = [n for n, p in params.items() if p.default is inspect.Parameter.empty]
        assert schema.get("required", []) == required, tool.name
        for name, param in params.items():
            if param.default not in (inspect.Parameter.empty, None):
                assert schema["properties"][name].get("default") == param.default, (tool.name, name)


async def test_every_public_workspace_method_is_a_tool_of_one_server(workspace: Path) -> None:
    served: list[str] = []
    for script in SERVERS:
        server = build(script, workspace)
        served += [
            getattr(server._tool_manager.get_tool(t.name).fn, "__workspace_method__").__name__  # noqa: B009
            for t in await server.list_tools()
        ]
    assert sorted(served) == sorted(tool_methods()), "a Workspace method no tool serves, or one served twice"
    # the callback pairs of the two servers do not collide in Python
    assert {"generate_analysis_prompt", "store_analysis_llm_result", "generate_plot_prompt"} <= set(served)


def test_a_method_is_checked_against_its_own_signature(ws_dir: Path) -> None:
    ws = dc.Workspace(ws_dir)
    with pytest.raises(TypeError):  # what Python itself refuses stays a TypeError
        ws.get_features(no_such_argument=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):  # optional arguments are keyword-only, by the tool's names
        ws.apply_command({"command": "showText", "payload": "x"}, LARGE)  # type: ignore[misc]
    with pytest.raises(dc.ValidationFailed) as caught:
        ws.render_plot(filename=LARGE, width=5000)
    assert caught.value.code == "VALIDATION_FAILED" and caught.value.details["field"] == "width"
    with pytest.raises(dc.ValidationFailed) as caught:
        ws.run_tool("track-stats", plot={"filename": 3})  # type: ignore[arg-type]
    assert caught.value.details["field"] == "plot.filename"
    # a dict is taken for the argument model, as JSON is by the tool
    assert ws.set_time({"current": "2024-11-14T21:00:00Z"}, filename=LARGE).timeState is not None


# -- the same answers and errors as the tools --------------------------------------------------------


async def test_reads_answer_what_the_tools_answer(clients: tuple[Client, Client], ws_dir: Path) -> None:
    calc, state = clients
    ws = dc.Workspace(ws_dir)
    run = ws.run_tool("import-rep", parameters={"path": "valid_boat1.rep"})
    assert run.stored is not None
    pairs: list[tuple[Any, str, dict[str, Any], Any]] = [
        (calc, "list_tools", {"kinds": ["track"]}, ws.list_tools(kinds=["track"])),
        (calc, "describe_tool", {"name": "track-legs"}, ws.describe_tool("track-legs")),
        (calc, "get_result", {"ref": run.stored["ref"]}, ws.get_result(run.stored["ref"])),
        (state, "debrief_list_plots", {}, ws.list_plots()),
        (state, "debrief_get_features", {"filename": LARGE}, ws.get_features(filename=LARGE)),
        (
            state,
            "debrief_get_features",
            {"filename": LARGE, "detail": "full", "limit": 2, "time_start": "2024-11-14T21:30:00Z"},
            ws.get_features(filename=LARGE, detail="full", limit=2, time_start="2024-11-14T21:30:00Z"),
        ),
        (state, "debrief_get_time", {"filename": LARGE}, ws.get_time(filename=LARGE)),
        (state, "debrief_get_viewport", {"filename": LARGE}, ws.get_viewport(filename=LARGE)),
        (state, "debrief_get_selection", {"filename": LARGE}, ws.get_selection(filename=LARGE)),
    ]
    for client, tool, args, answer in pairs:
        failed, content = await call(client, tool, **args)
        assert not failed, content
        assert content == answer.model_dump(mode="json"), tool


async def test_pictures_are_the_tools_pictures(clients: tuple[Client, Client], ws_dir: Path) -> None:
    _calc, state = clients
    ws = dc.Workspace(ws_dir)
    args = {"filename": LARGE, "width": 320, "height": 240, "fit": "all"}
    answer = ws.render_plot(**args)  # type: ignore[arg-type]
    result = await state.call_tool("debrief_render_plot", args)
    assert result.structured_content == answer.model_dump(mode="json")
    assert "images" not in answer.model_dump(mode="json")
    sent = [c for c in result.content if c.type == "image"]
    assert [base64.b64decode(c.data) for c in sent] == [i.data for i in answer.images]
    assert answer.images[0].data.startswith(PNG) and answer.images[0].media_type == "image/png"
    saved = answer.save_image(ws_dir / "out" / "plot.png")
    assert saved.read_bytes() == answer.images[0].data


async def test_errors_are_the_tools_errors_and_change_nothing(clients: tuple[Client, Client], ws_dir: Path) -> None:
    calc, state = clients
    ws = dc.Workspace(ws_dir)
    before = (ws_dir / LARGE).read_bytes()
    revision = ws.get_features(filename=LARGE, limit=1).revision
    stale = "0" * len(revision)
    cases: list[tuple[Any, str, dict[str, Any], Any, type[dc.SuiteError]]] = [
        (calc, "run_tool", {"tool": "no-such-tool"}, lambda: ws.run_tool("no-such-tool"), dc.ToolNotFound),
        (calc, "describe_tool", {"name": "nope"}, lambda: ws.describe_tool("nope"), dc.ToolNotFound),
        (
            calc,
            "run_tool",
            {"tool": "track-stats", "plot": {"filename": "missing.plot.json"}},
            lambda: ws.run_tool("track-stats", plot={"filename": "missing.plot.json"}),  # type: ignore[arg-type]
            dc.PlotNotFound,
        ),
        (
            state,
            "debrief_get_features",
            {"filename": "missing.plot.json"},
            lambda: ws.get_features(filename="missing.plot.json"),
            dc.PlotNotFound,
        ),
        (
            state,
            "debrief_get_features",
            {"filename": "../outside.plot.json"},
            lambda: ws.get_features(filename="../outside.plot.json"),
            dc.InvalidFilename,
        ),
        (
            state,
            "debrief_render_plot",
            {"filename": LARGE, "width": 5000},
            lambda: ws.render_plot(filename=LARGE, width=5000),
            dc.ValidationFailed,
        ),
        (
            state,
            "debrief_apply_command",
            {"filename": LARGE, "command": {"command": "explode", "payload": 1}},
            lambda: ws.apply_command({"command": "explode", "payload": 1}, filename=LARGE),
            dc.InvalidCommand,
        ),
        (
            state,
            "debrief_apply_command",
            {"filename": LARGE, "command": {"command": "showText", "payload": "x"}, "expected_revision": stale},
            lambda: ws.apply_command({"command": "showText", "payload": "x"}, filename=LARGE, expected_revision=stale),
            dc.Conflict,
        ),
        (
            state,
            "debrief_set_time",
            {"filename": LARGE, "timeState": {"current": "not a time"}},
            lambda: ws.set_time({"current": "not a time"}, filename=LARGE),  # type: ignore[arg-type]
            dc.ValidationFailed,
        ),
        (
            state,
            "debrief_set_selection",
            {"filename": LARGE, "selectedIds": ["no-such-id"]},
            lambda: ws.set_selection(["no-such-id"], filename=LARGE),
            dc.FeatureNotFound,
        ),
        (
            state,
            "debrief_create_plot",
            {"filename": LARGE},
            lambda: ws.create_plot(LARGE),
            dc.PlotExists,
        ),
    ]
    for client, tool, args, through_api, cls in cases:
        failed, content = await call(client, tool, **args)
        assert failed, (tool, content)
        with pytest.raises(dc.SuiteError) as caught:
            through_api()
        err = caught.value
        assert type(err) is cls, (tool, type(err))
        assert err.code == content["error"]["code"] == cls.code, tool
        assert err.message == content["error"]["message"], tool
        assert err.details.get("field") == content["error"]["details"].get("field"), tool
    assert (ws_dir / LARGE).read_bytes() == before
    assert not (ws_dir.parent / "outside.plot.json").exists()


def test_error_from_gives_the_exception_of_each_code() -> None:
    from debrief_calc.errors import error_from

    for cls in (dc.Conflict, dc.ValidationFailed, dc.ToolNotFound, dc.PlotNotFound, dc.ArtifactNotFound):
        err = error_from({"code": cls.code, "message": "m", "details": {"a": 1}})
        assert type(err) is cls and err.code == cls.code and err.details["a"] == 1
    expired = error_from({"code": "TICKET_EXPIRED", "message": "late"})
    assert isinstance(expired, dc.TicketError) and expired.code == "TICKET_EXPIRED"
    unknown = error_from({"code": "SOMETHING_NEW", "message": "m"})
    assert type(unknown) is dc.SuiteError and unknown.code == "SOMETHING_NEW"


# -- the same store and the same writes ---------------------------------------------------------------


@pytest.mark.parametrize("store", ["workspace", "user", "path"])
async def test_the_api_and_a_server_share_the_store_the_servers_name(store: str, ws_dir: Path, tmp_path: Path) -> None:
    """A selection lives in the store, not in the file: both sides see it only if they share it."""
    setting = str(tmp_path / "elsewhere") if store == "path" else store
    ws = dc.Workspace(ws_dir, store=setting)
    assert ws.store_path == resolve_store_root(setting, ws_dir)
    ws.set_selection(["f-2"], filename=LARGE)
    async with Client(build("debrief-state-mcp", ws_dir, store=setting)) as state:
        _failed, content = await call(state, "debrief_get_selection", filename=LARGE)
        assert content["selectedIds"] == ["f-2"]
        await call(state, "debrief_set_selection", filename=LARGE, selectedIds=["z-3"])
    assert ws.get_selection(filename=LARGE).selectedIds == ["z-3"]
    other = "user" if store != "user" else "workspace"
    assert dc.Workspace(ws_dir, store=other).get_selection(filename=LARGE).selectedIds == []


def test_the_store_defaults_as_the_servers_do(ws_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert dc.Workspace(ws_dir).store_path == ws_dir / ".llmem"
    monkeypatch.setenv("LLMEM_STORE", "user")  # the servers' --store reads it too
    assert dc.Workspace(ws_dir).store_path == resolve_store_root("user", ws_dir)
    assert dc.Workspace(ws_dir, store="workspace").store_path == ws_dir / ".llmem"
    with pytest.raises(dc.ValidationFailed) as caught:
        dc.Workspace(ws_dir / "no such folder")
    assert caught.value.details["field"] == "path"
    with pytest.raises(dc.ValidationFailed):
        dc.Workspace(ws_dir, store=" ")


async def test_writes_from_either_side_are_one_history(clients: tuple[Client, Client], ws_dir: Path) -> None:
    _calc, state = clients
    ws = dc.Workspace(ws_dir)
    note = {"type": "Feature", "id": "api-note", "geometry": None, "properties": {"dataType": "annotation"}}
    applied = ws.apply_command({"command": "addFeatures", "payload": [note]}, filename=LARGE)
    assert applied.added_ids == ["api-note"] and applied.changed
    _failed, content = await call(state, "debrief_get_features", filename=LARGE, ids=["api-note"])
    assert content["revision"] == applied.revision  # the server reads what the script wrote
    _failed, undone = await call(state, "debrief_undo", filename=LARGE)  # and undoes it: one history
    assert undone["undone"].startswith("added")
    with pytest.raises(dc.FeatureNotFound):
        ws.get_features(filename=LARGE, ids=["api-note"])
    assert (ws_dir / LARGE).read_bytes() == (DATA / "plots" / LARGE).read_bytes()


def test_an_analysis_through_the_api_reaches_a_plot_and_a_picture(ws_dir: Path) -> None:
    ws = dc.Workspace(ws_dir)
    refs = [ws.run_tool("import-rep", parameters={"path": p}).stored for p in ("valid_boat1.rep", "valid_boat2.rep")]
    created = ws.create_plot("pair.plot.json", features=[{"ref": r["ref"]} for r in refs if r])
    assert sorted(created.added_ids) == ["rep-collingwood", "rep-nelson"]
    cpa = ws.run_tool("closest-approach", plot={"filename": "pair.plot.json"}, parameters={"distance_unit": "yd"})  # type: ignore[arg-type]
    props = cpa.features[0]["properties"]
    assert props["between_fixes"] is True
    series = ws.render_series(features=[{"ref": r["ref"]} for r in refs if r], time_start="1995-12-12T10:30:00Z")
    assert series.images[0].data.startswith(PNG) and series.cpa is not None
    kept = ws.apply_command(json.loads(cpa.keep.split("command=", 1)[1].split(") on", 1)[0]), filename="pair.plot.json")  # type: ignore[union-attr]
    assert kept.added_ids == [cpa.features[0]["id"]]
    shown = ws.apply_command(
        {
            "command": "showImage",
            "payload": {"mediaType": "image/png", "data": base64.b64encode(series.images[0].data).decode()},
        },
        filename="pair.plot.json",
    )
    assert shown.images[0].data == series.images[0].data and shown.display[0]["image"] == 0


def test_the_callback_pairs_through_the_api(ws_dir: Path) -> None:
    ws = dc.Workspace(ws_dir)
    run = ws.run_tool("track-stats", plot={"filename": LARGE, "feature_ids": ["f-2"]})  # type: ignore[arg-type]
    env = ws.generate_analysis_prompt(run.features[0]["id"], "narrate-result")
    assert env.status == "prompt_ready" and env.callbackArgs and env.promptForHostLLM
    stored = ws.store_analysis_llm_result(**env.callbackArgs, result="A steady track.")
    assert stored.data and ws.get_result(stored.data["ref"]).text == "A steady track."
    with pytest.raises(dc.TicketError):  # a used ticket
        ws.store_analysis_llm_result(**env.callbackArgs, result="again")
    env = ws.generate_plot_prompt("summarize-plot", target=LARGE)
    assert env.callbackArgs
    kept = ws.store_plot_llm_result(**env.callbackArgs, result="Three tracks.", add_annotation=True)
    assert kept.data and kept.data["annotation"]["added"] is True
    assert ws.undo(filename=LARGE).undone


# -- documented, cheap, and never MCP ----------------------------------------------------------------


def test_all_names_every_export_and_each_is_documented() -> None:
    assert sorted(dc.__all__) == sorted(dc._HOMES) and len(set(dc.__all__)) == len(dc.__all__)
    for name in dc.__all__:
        value = getattr(dc, name)
        assert getattr(value, "__name__", name) == name
        own = vars(value).get("__doc__") if isinstance(value, type) else value.__doc__
        assert own and own.strip(), f"debrief_calc.{name} has no docstring of its own"
    assert set(dc.__all__) <= set(dir(dc))
    with pytest.raises(AttributeError):
        dc.no_such_name  # noqa: B018


def test_every_method_is_documented_as_reference() -> None:
    """Arguments (each by name), what it answers, what it raises, an example: the API page."""
    for name, method in tool_methods().items():
        doc = inspect.getdoc(method) or ""
        params = [n for n in inspect.signature(unchecked(method)).parameters if n != "self"]
        sections = ["Returns:", "Raises:", "Example:", *(["Args:"] if params else [])]
        assert all(s in doc for s in sections), (name, [s for s in sections if s not in doc])
        args = doc.split("Args:", 1)[-1].split("Returns:", 1)[0]
        missing = [p for p in params if not re.search(rf"^\s+{p}:", args, re.M)]
        assert not missing, f"Workspace.{name} does not document {missing}"
        assert ">>> " in doc.split("Example:", 1)[1], name


IMPORT_CHECK = """
import sys, shutil
from pathlib import Path
import debrief_calc as dc
heavy = sorted(m for m in ("pydantic", "numpy", "PIL", "geographiclib", "debrief_calc._workspace") if m in sys.modules)
ws = dc.Workspace(sys.argv[1])
run = ws.run_tool("import-rep", parameters={"path": "valid_boat1.rep"})
plot = ws.create_plot("one.plot.json", features=[{"ref": run.stored["ref"]}])
ws.get_features(filename="one.plot.json", detail="full")
ws.set_time({"current": "1995-12-12T06:00:00Z"}, filename="one.plot.json")
ws.apply_command({"command": "showText", "payload": "hello"}, filename="one.plot.json")
ws.render_plot(filename="one.plot.json", width=200, height=200)
ws.run_tool("track-stats", plot={"filename": "one.plot.json"})
ws.render_series(plot={"filename": "one.plot.json"})
try:
    ws.undo(filename="no.plot.json")
except dc.PlotNotFound:
    pass
print(heavy, sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))
"""


def test_importing_and_using_debrief_calc_never_imports_mcp(ws_dir: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK, str(ws_dir)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] []", out.stdout  # nothing heavy at import, no MCP ever


@pytest.mark.parametrize("script", SERVERS)
def test_the_guides_name_the_api_as_it_is(script: str, workspace: Path) -> None:
    guide = build(script, workspace).guide()
    section = guide.split("## From Python scripts", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`ws\.(\w+)\(", section)) | set(
        re.findall(r"`(\w+_llm_result|generate_\w+_prompt)`", section)
    )
    assert named and named <= set(tool_methods()), named - set(tool_methods())
    assert "dc.Workspace(" in section and all(hasattr(dc, n) for n in re.findall(r"`dc\.(\w+)", section))
