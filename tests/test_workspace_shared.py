"""A script through the Python API and a running ``debrief-state-mcp`` (the console script, over
stdio) on the same plot: each sees the other's writes, nothing is lost when both write at once,
and a stale ``expected_revision`` is refused with ``Conflict`` (code ``CONFLICT``) on either side.

The server does not watch files: it notifies its subscribers of the writes made through it only.
What a client sees of a script's write is the plot as it is in the file: every read answers it,
and the live view, which polls ``debrief_view_data`` with the revision it drew, redraws.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import DATA, MODES, ROOT, call, console_script, subprocess_env

pytestmark = pytest.mark.anyio

LARGE = "large-sample.plot.json"
WRITES = 25  # each side

#: A script of an analyst's: waits for the word, then adds its notes one write at a time.
BURST = """
import json, sys
import debrief_calc as dc

ws = dc.Workspace(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
revisions = []
for i in range(int(sys.argv[3])):
    note = {"type": "Feature", "id": f"script-{i}", "geometry": None,
            "properties": {"dataType": "annotation", "annotationType": "comment", "text": f"script {i}"}}
    revisions.append(ws.apply_command({"command": "addFeatures", "payload": [note]}, filename=sys.argv[2]).revision)
print(json.dumps(revisions), flush=True)
"""

#: A script that writes on a revision it read earlier (argv[3]), then on the one it reads now.
STALE_THEN_FRESH = """
import json, sys
import debrief_calc as dc

ws, name, stale = dc.Workspace(sys.argv[1]), sys.argv[2], sys.argv[3]
note = {"type": "Feature", "id": "script-note", "geometry": {"type": "Point", "coordinates": [-4.0, 36.0]},
        "properties": {"dataType": "reference-point", "name": "script mark"}}
out = {}
try:
    ws.apply_command({"command": "addFeatures", "payload": [note]}, filename=name, expected_revision=stale)
except dc.Conflict as err:
    out["refused"] = {"class": type(err).__name__, "code": err.code, "details": err.details}
now = ws.get_features(filename=name, ids=["server-note"])
out["seen"] = {"revision": now.revision, "ids": [f["id"] for f in now.features]}
out["written"] = ws.apply_command(
    {"command": "addFeatures", "payload": [note]}, filename=name, expected_revision=now.revision
).revision
print(json.dumps(out), flush=True)
"""


@pytest.fixture
def plot_ws(workspace: Path) -> Path:
    shutil.copy(DATA / "plots" / LARGE, workspace / LARGE)
    return workspace


def server(workspace: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )


def note(fid: str) -> dict[str, Any]:
    return {"type": "Feature", "id": fid, "geometry": None, "properties": {"dataType": "annotation"}}


def ids_in_file(workspace: Path) -> list[str]:
    return [str(f.get("id")) for f in json.loads((workspace / LARGE).read_bytes())["features"]]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_a_script_and_a_running_server_write_one_plot_at_once_and_lose_nothing(plot_ws: Path, mode: str) -> None:
    original = ids_in_file(plot_ws)
    script = subprocess.Popen(
        [sys.executable, "-c", BURST, str(plot_ws), LARGE, str(WRITES)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    assert script.stdout is not None and script.stdin is not None
    try:
        with anyio.fail_after(240):
            ready = await anyio.to_thread.run_sync(script.stdout.readline)
            assert ready.strip() == "ready", script.stderr.read() if script.stderr else ""
            server_revisions: list[str] = []
            async with Client(server(plot_ws), mode=mode) as client:  # type: ignore[arg-type]

                async def server_writes() -> None:
                    for i in range(WRITES):
                        command = {"command": "addFeatures", "payload": [note(f"server-{i}")]}
                        failed, content = await call(client, "debrief_apply_command", filename=LARGE, command=command)
                        assert not failed, content
                        server_revisions.append(content["revision"])

                script.stdin.write("go\n")
                script.stdin.flush()
                outcome: dict[str, Any] = {}

                async def script_writes() -> None:
                    outcome["out"], outcome["err"] = await anyio.to_thread.run_sync(script.communicate)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(server_writes)
                    tg.start_soon(script_writes)
                assert script.returncode == 0, outcome["err"]
                # the server reads every write, its own and the script's
                failed, content = await call(
                    client, "debrief_get_features", filename=LARGE, kinds=["annotation"], limit=1000
                )
                assert not failed
                listed = {f["id"] for f in content["features"]}
    finally:
        if script.poll() is None:
            script.kill()
    script_revisions = json.loads(outcome["out"])
    ids = ids_in_file(plot_ws)
    wanted = {f"server-{i}" for i in range(WRITES)} | {f"script-{i}" for i in range(WRITES)}
    assert wanted <= set(ids) and wanted <= listed
    assert len(ids) == len(original) + 2 * WRITES  # nothing lost, nothing doubled
    assert ids[: len(original)] == original  # nothing else touched
    # every write made a revision of its own: none was applied on top of a state it did not see
    assert len(set(server_revisions) | set(script_revisions)) == 2 * WRITES


async def test_each_side_sees_the_other_and_a_stale_revision_is_a_conflict_on_both(plot_ws: Path) -> None:
    with anyio.fail_after(180):
        async with Client(server(plot_ws)) as client:
            _failed, first = await call(client, "debrief_get_features", filename=LARGE, limit=1)
            stale = first["revision"]
            failed, written = await call(
                client,
                "debrief_apply_command",
                filename=LARGE,
                command={"command": "addFeatures", "payload": [note("server-note")]},
            )
            assert not failed
            run = functools.partial(
                subprocess.run,
                [sys.executable, "-c", STALE_THEN_FRESH, str(plot_ws), LARGE, stale],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
                env=subprocess_env(),
            )
            done = await anyio.to_thread.run_sync(run)
            assert done.returncode == 0, done.stderr
            out = json.loads(done.stdout)
            # the script's stale write is refused as the tool refuses it, and the script sees the server's write
            assert out["refused"]["class"] == "Conflict" and out["refused"]["code"] == "CONFLICT"
            assert out["refused"]["details"]["revision"] == written["revision"]
            assert out["seen"] == {"revision": written["revision"], "ids": ["server-note"]}
            after_script = out["written"]

            # the server sees the script's write: reads, resources, and the view's poll
            failed, content = await call(client, "debrief_get_features", filename=LARGE, ids=["script-note"])
            assert not failed and content["revision"] == after_script
            # (the view's own tool answers over the model's cap: it feeds the view, not a model)
            seen = await client.call_tool(
                "debrief_view_data", {"filename": LARGE, "since_revision": written["revision"]}
            )
            polled = seen.structured_content or {}
            assert not seen.is_error and polled["changed"] is True and polled["revision"] == after_script
            assert "script-note" in {f.get("id") for f in polled["features"]}  # drawn at once
            again = await client.call_tool("debrief_view_data", {"filename": LARGE, "since_revision": after_script})
            assert (again.structured_content or {})["changed"] is False
            resource = await client.read_resource(f"plot://{LARGE}/features")
            listed = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
            assert listed["revision"] == after_script

            # and the server's stale write is refused in turn, naming the script's revision
            failed, refused = await call(
                client,
                "debrief_apply_command",
                filename=LARGE,
                command={"command": "addFeatures", "payload": [note("late")]},
                expected_revision=written["revision"],
            )
            assert failed and refused["error"]["code"] == "CONFLICT"
            assert refused["error"]["details"]["revision"] == after_script
    assert "late" not in ids_in_file(plot_ws)


async def test_a_running_calc_server_and_a_script_read_each_other_s_results(workspace: Path) -> None:
    import debrief_calc as dc

    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        shutil.copy(DATA / "rep" / name, workspace / name)
    ws = dc.Workspace(workspace)
    mine = ws.run_tool("import-rep", parameters={"path": "valid_boat1.rep"}).stored
    assert mine is not None
    calc = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(calc) as client:
            failed, page = await call(client, "get_result", ref=mine["ref"])  # the script's import, read there
            assert not failed and page["total"] == 1 and page["features"][0]["id"] == "rep-nelson"
            failed, theirs = await call(client, "run_tool", tool="import-rep", parameters={"path": "valid_boat2.rep"})
            assert not failed
            failed, cpa = await call(
                client,
                "run_tool",
                tool="closest-approach",
                features=[{"ref": mine["ref"]}, {"ref": theirs["stored"]["ref"]}],
                parameters={"distance_unit": "yd"},
            )
            assert not failed
    # and the server's results, read here
    found = cpa["features"][0]
    kept = ws.get_result(found["id"])
    assert kept.features and kept.features[0]["properties"]["range"] == found["properties"]["range"]
    again = ws.run_tool(
        "closest-approach",
        features=[{"ref": mine["ref"]}, {"ref": theirs["stored"]["ref"]}],
        parameters={"distance_unit": "yd"},
    )
    assert again.features[0]["properties"]["range"] == found["properties"]["range"]
