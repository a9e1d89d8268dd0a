"""Several real processes changing the same plots at once: nothing is lost, everything is shared."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import ROOT, console_script, subprocess_env

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parent / "data" / "plots"
LARGE = "large-sample.plot.json"
SAMPLE = "sample.plot.json"


@pytest.fixture
def plots(workspace: Path) -> Path:
    shutil.copy(DATA / LARGE, workspace / LARGE)
    shutil.copy(DATA / SAMPLE, workspace / SAMPLE)
    return workspace


def params(workspace: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )


def point(fid: str) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "Point", "coordinates": [-4.0, 36.0]},
        "properties": {"dataType": "reference-point", "name": fid},
    }


async def test_console_scripts_adding_features_at_once_lose_nothing(plots: Path) -> None:
    original = json.loads((plots / LARGE).read_bytes())

    async def worker(k: int, mode: str) -> None:
        async with Client(params(plots), mode=mode) as c:  # type: ignore[arg-type]
            for i in range(10):
                command = {"command": "addFeatures", "payload": [point(f"w{k}-{i}")]}
                r = await c.call_tool("debrief_apply_command", {"filename": LARGE, "command": command})
                assert not r.is_error, r.structured_content

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for k in range(4):
                tg.start_soon(worker, k, "legacy" if k % 2 else "auto")
    data = json.loads((plots / LARGE).read_bytes())
    ids = [str(f.get("id")) for f in data["features"]]
    assert {f"w{k}-{i}" for k in range(4) for i in range(10)} <= set(ids)
    assert data["features"][: len(original["features"])] == original["features"]  # nothing else touched
    assert len(ids) == len(original["features"]) + 40
    history = plots / ".llmem" / "docs" / "debrief-state" / "history" / LARGE / "index.json"
    assert len(json.loads(history.read_text())["entries"]) == 20  # bounded, and every write recorded


async def test_selection_and_open_set_are_seen_across_processes(plots: Path) -> None:
    with anyio.fail_after(60):
        async with Client(params(plots), mode="legacy") as a, Client(params(plots)) as b:
            r = await a.call_tool("debrief_open_plot", {"filename": LARGE})
            assert not r.is_error
            r = await a.call_tool("debrief_set_selection", {"selectedIds": ["f-2", "z-3"]})
            assert not r.is_error
            r = await b.call_tool("debrief_get_selection", {})
            assert r.structured_content and r.structured_content["filename"] == LARGE
            assert r.structured_content["selectedIds"] == ["f-2", "z-3"]
            r = await b.call_tool("debrief_set_selection", {"selectedIds": ["p-3"]})
            r = await a.call_tool("debrief_get_selection", {})
            assert r.structured_content and r.structured_content["selectedIds"] == ["p-3"]
            # a write in one process is undone from the other: the history is shared too
            r = await b.call_tool(
                "debrief_set_time",
                {
                    "timeState": {
                        "current": "2024-11-15T00:00:00Z",
                        "start": "2024-11-14T00:00:00Z",
                        "end": "2024-11-16T00:00:00Z",
                    }
                },
            )
            assert not r.is_error
            r = await a.call_tool("debrief_undo", {})
            assert r.structured_content and r.structured_content["undone"].startswith("time set to")
    assert (plots / LARGE).read_bytes() == (DATA / LARGE).read_bytes()


WORKER = """
import sys
from pathlib import Path
from debrief_calc.state.service import StateService
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

ws, k = Path(sys.argv[1]), int(sys.argv[2])
svc = StateService(ArtifactStore(ws / ".llmem", ws), Limits())
print("ready", flush=True)
sys.stdin.readline()  # the starting gun: every worker is loaded before any writes
svc.open_plot(f"p{k}.plot.json")
for i in range(15):
    feature = {"type": "Feature", "id": f"s{k}-{i}", "geometry": None, "properties": {"dataType": "annotation"}}
    svc.apply({"command": "addFeatures", "payload": [feature]}, "shared.plot.json", None)
print("done", flush=True)
"""


def test_service_processes_lose_no_write_and_no_open_plot(plots: Path) -> None:
    n = 6
    shutil.copy(DATA / SAMPLE, plots / "shared.plot.json")
    for k in range(n):
        shutil.copy(DATA / SAMPLE, plots / f"p{k}.plot.json")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(plots), str(k)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=subprocess_env(),
        )
        for k in range(n)
    ]
    with ThreadPoolExecutor(n) as pool:
        assert all(p.stdout is not None and p.stdin is not None for p in procs)
        ready = [pool.submit(p.stdout.readline) for p in procs]  # type: ignore[union-attr]
        assert [f.result(timeout=60).strip() for f in ready] == ["ready"] * n
        for p in procs:
            p.stdin.write("go\n")  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]
        done = [pool.submit(p.communicate, timeout=120) for p in procs]
        outputs = [f.result()[0].strip() for f in done]
    assert outputs == ["done"] * n and [p.returncode for p in procs] == [0] * n
    data = json.loads((plots / "shared.plot.json").read_bytes())
    ids = {str(f.get("id")) for f in data["features"]}
    assert {f"s{k}-{i}" for k in range(n) for i in range(15)} <= ids
    open_doc = json.loads((plots / ".llmem" / "docs" / "debrief-state" / "open.json").read_text())
    assert sorted(open_doc["open"]) == [f"p{k}.plot.json" for k in range(n)]
