"""The faster first parse (issue 23): outlines unchanged, the work shared between this process and
its workers, the workers kept off the protocol, small parses kept in this process."""

from __future__ import annotations

import gc
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from concurrent.futures.process import EXTRA_QUEUED_CALLS
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from llmem.code import parse_pool
from llmem.code.artifacts import Llmem
from llmem.code.outline import build_outline
from llmem.code.walk import walk_workspace
from llmem.core.config import Limits
from llmem.core.store import JOURNAL, ArtifactStore, Fingerprint
from tests._stdio import exchange
from tests.conftest import MODES, ROOT, console_script, subprocess_env

#: The outliner before the speed work. Outlines must come out of today's code byte for byte as
#: they came out of it; a change that alters outlines on purpose moves this to its own commit.
REFERENCE = "3afa310"
#: This repository's code, and the real code of another project (tests/data/servers).
CODE = ("llmem", "debrief_calc", "tests", "benchmarks", "examples")


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


def _outlines_of(files: list[tuple[str, str]]) -> dict[str, str]:
    return {k: json.dumps(build_outline(k, Path(p).read_bytes()).model_dump(mode="json")) for k, p in files}


_DUMP = """
import json, sys
sys.path.insert(0, sys.argv[1])
import llmem
assert llmem.__file__.startswith(sys.argv[1]), llmem.__file__
from llmem.code.outline import build_outline
files = json.load(sys.stdin)
out = {k: json.dumps(build_outline(k, open(p, "rb").read()).model_dump(mode="json")) for k, p in files}
json.dump(out, sys.stdout)
"""


def test_outlines_are_byte_for_byte_those_of_the_outliner_before(tmp_path: Path) -> None:
    if shutil.which("git") is None or _git("cat-file", "-e", f"{REFERENCE}^{{commit}}").returncode != 0:
        pytest.skip(f"needs git and commit {REFERENCE} (a full clone)")
    old = tmp_path / "old"
    old.mkdir()
    archive = _git("archive", REFERENCE, "llmem")
    assert archive.returncode == 0, archive.stderr
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    files = [
        (entry.rel_path, str(entry.abs_path)) for folder in CODE for entry in walk_workspace(ROOT, ROOT / folder).files
    ]
    assert sum(k.startswith("tests/data/servers/") for k, _ in files) >= 15 and len(files) > 250
    proc = subprocess.run(
        [sys.executable, "-c", _DUMP, str(old)],
        input=json.dumps(files),
        capture_output=True,
        text=True,
        check=False,
        env=subprocess_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    before = json.loads(proc.stdout)
    now = _outlines_of(files)
    assert before.keys() == now.keys()
    differ = [k for k in now if now[k] != before[k]]
    assert differ == [], f"{len(differ)} outline(s) changed, e.g. {differ[:5]}"


def _workspace(dest: Path) -> Path:
    shutil.copytree(ROOT / "tests" / "data" / "servers", dest / "servers")
    for folder in ("llmem", "debrief_calc"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _stored(ws: Path) -> dict[str, tuple[str, Any, Any]]:
    """Each outline as stored: its content's JSON text, its source fingerprint, its provenance."""
    store = ArtifactStore(ws / ".llmem", ws)
    out = {}
    for key, _kinds in store.iter_keys("llmem"):
        doc = store.get("llmem", key, "outline").doc
        out[key] = (json.dumps(doc["content"]), doc["source"], doc["provenance"])
    return out


def _index(ws: Path) -> tuple[list[tuple[Any, ...]], bool]:
    """The search index's entries, and whether it is true to the whole journal (nothing to catch up)."""
    cache = ws / ".llmem" / "cache"
    with sqlite3.connect(cache / "search.sqlite3") as conn:
        rows = conn.execute(
            "SELECT path, artifact, symbol, name, kind, start, end_, signature, text FROM entries "
            "ORDER BY path, artifact, start, symbol"
        ).fetchall()
        meta = dict(conn.execute("SELECT k, v FROM meta").fetchall())
    journal = (cache / JOURNAL).stat()
    return rows, (meta["journal_ino"], meta["journal_offset"]) == (journal.st_ino, journal.st_size)


def test_a_parse_in_workers_stores_and_indexes_what_a_parse_here_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, pooled = _workspace(tmp_path / "here"), _workspace(tmp_path / "pooled")
    monkeypatch.setattr(parse_pool, "POOL_MIN_FILES", 10**9)
    a = Llmem(ArtifactStore(here / ".llmem", here), Limits()).parse(".")
    monkeypatch.setattr(parse_pool, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(parse_pool, "usable_cores", lambda: 2)
    b = Llmem(ArtifactStore(pooled / ".llmem", pooled), Limits()).parse(".")
    assert a["parsed"] == b["parsed"] > 150 and a["failed"] == b["failed"] == 0
    assert a["fallback_outlines"] == b["fallback_outlines"]
    stored_here, stored_pooled = _stored(here), _stored(pooled)
    assert stored_here.keys() == stored_pooled.keys() and len(stored_here) == a["parsed"]
    for key, (content, source, provenance) in stored_here.items():
        assert stored_pooled[key][0] == content, key
        assert stored_pooled[key][1]["sha256"] == source["sha256"] and stored_pooled[key][2] == provenance
    rows_here, current_here = _index(here)
    rows_pooled, current_pooled = _index(pooled)
    assert current_here and current_pooled  # the parsing process brought the index up to date
    assert rows_pooled == rows_here and len(rows_here) > 3000


def _block_until(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.01)


def test_this_process_takes_the_batches_no_worker_has_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path / "ws")
    monkeypatch.setattr(parse_pool, "usable_cores", lambda: 2)
    pool = parse_pool._WORKERS.get()
    release = tmp_path / "release"
    # Every worker busy, and every place in the queue feeding them taken: no batch can reach a worker.
    busy = 2 * pool._max_workers + EXTRA_QUEUED_CALLS
    blockers = [pool.submit(_block_until, str(release)) for _ in range(busy)]
    try:
        result = Llmem(ArtifactStore(ws / ".llmem", ws), Limits()).parse(".")
        # Every worker was busy all along: this process outlined every batch itself.
        assert not any(b.done() for b in blockers)
        assert result["parsed"] > 150 and result["failed"] == 0
        assert len(_stored(ws)) == result["parsed"]
    finally:
        release.touch()
        for blocker in blockers:
            blocker.result(timeout=60)


def test_workers_print_to_stderr_and_read_nothing() -> None:
    parse_pool._WORKERS.drop()
    pool = parse_pool._WORKERS.get()
    out, err = pool.submit(os.fstat, 1).result(timeout=60), pool.submit(os.fstat, 2).result(timeout=60)
    assert (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)  # fd 1 is fd 2: stdout never reaches the client
    assert pool.submit(os.read, 0, 10).result(timeout=60) == b""  # stdin is empty, never the client's
    pool.submit(print, "a stray print in a worker").result(timeout=60)


def test_one_file_and_a_small_folder_are_outlined_here(workspace: Path) -> None:
    parse_pool._WORKERS.drop()
    for n in range(parse_pool.POOL_MIN_FILES - 1):
        (workspace / f"m{n}.py").write_text(f"def f{n}() -> int:\n    return {n}\n", encoding="utf-8")
    svc = Llmem(ArtifactStore(workspace / ".llmem", workspace), Limits())
    assert svc.parse("m0.py")["parsed"] == 1
    assert svc.parse(".")["parsed"] == parse_pool.POOL_MIN_FILES - 2
    assert parse_pool._WORKERS._pool is None  # no worker started for a re-parse of a few files


def test_the_garbage_collector_is_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path / "ws")
    monkeypatch.setattr(parse_pool, "usable_cores", lambda: 2)
    assert gc.isenabled()
    Llmem(ArtifactStore(ws / ".llmem", ws), Limits()).parse("llmem")
    assert gc.isenabled()
    gc.disable()
    try:
        Llmem(ArtifactStore(ws / ".llmem", ws), Limits()).parse("debrief_calc")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_file_that_cannot_be_read_fails_alone(workspace: Path) -> None:
    store = ArtifactStore(workspace / ".llmem", workspace)
    (workspace / "ok.py").write_text("def ok() -> None: ...\n", encoding="utf-8")
    outcomes = parse_pool.outline_batch(
        store, [("gone.py", str(workspace / "gone.py"), None), ("ok.py", str(workspace / "ok.py"), None)]
    )
    assert outcomes[0][:2] == ("gone.py", "failed") and "FileNotFoundError" in str(outcomes[0][3])
    assert outcomes[1] == ("ok.py", "parsed", False, None, None)


def _gone_symbols(ws: Path) -> dict[str, dict[str, Any]]:
    """The store's memory of symbols gone (symbol_history), without the time each was written."""
    doc = ArtifactStore(ws / ".llmem", ws).read_doc("llmem", "gone-symbols", {})
    return {k: {f: v for f, v in entry.items() if f != "gone_at"} for k, entry in doc.items()}


def test_what_a_parse_in_workers_replaced_is_remembered_as_a_parse_here_remembers_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers store outlines themselves: what each replaced outline no longer lists comes back
    with its outcome, so renames and removals are remembered as when this process stores them."""
    count = 60
    memories = {}
    for how in ("here", "pooled"):
        ws = tmp_path / how
        ws.mkdir()
        for n in range(count):
            (ws / f"m{n}.py").write_text(
                f"def f{n}(x: int) -> int:\n    return x * {n} + 1\n\n\ndef keep{n}() -> None:\n    pass\n",
                encoding="utf-8",
            )
        monkeypatch.setattr(parse_pool, "POOL_MIN_FILES", 10**9)
        svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
        assert svc.parse(".")["parsed"] == count
        assert _gone_symbols(ws) == {}
        for n in range(count):  # a rename in every file but the last, a removal there
            source = (ws / f"m{n}.py").read_text(encoding="utf-8")
            edited = source.replace(f"def f{n}(", f"def renamed_f{n}(") if n < count - 1 else source.split("\n\n\n")[1]
            (ws / f"m{n}.py").write_text(edited, encoding="utf-8")
        if how == "pooled":
            monkeypatch.setattr(parse_pool, "POOL_MIN_FILES", 1)
            monkeypatch.setattr(parse_pool, "usable_cores", lambda: 2)
            # Workers forked now, from a process that has written to this store (its locks made).
            parse_pool._WORKERS.drop()
        assert svc.parse(".")["parsed"] == count
        if how == "pooled":
            assert parse_pool._WORKERS._pool is not None  # no worker failed (a failure drops them all)
        memories[how] = _gone_symbols(ws)
    assert memories["pooled"] == memories["here"]
    expected = {
        f"m{n}.py#f{n}": {"path": f"m{n}.py", "symbol": f"f{n}", "line": 1, "kind": "function"} for n in range(count)
    }
    for n in range(count - 1):
        expected[f"m{n}.py#f{n}"]["renamed_to"] = f"renamed_f{n}"
    assert memories["here"] == expected
    # And from a worker itself: what its stored outline replaced comes back with the outcome.
    ws = tmp_path / "pooled"
    (ws / "m0.py").write_text("def again_f0(x: int) -> int:\n    return x * 0 + 1\n", encoding="utf-8")
    stored = ArtifactStore(ws / ".llmem", ws).get("llmem", "m0.py", "outline").doc["source"]
    item = ("m0.py", str(ws / "m0.py"), Fingerprint.from_dict(stored))
    try:
        outcome = parse_pool._WORKERS.get().submit(parse_pool._worker_batch, str(ws / ".llmem"), str(ws), [item])
        [(key, state, _fallback, _reason, replaced)] = outcome.result(timeout=120)
    finally:
        parse_pool._WORKERS.drop()
    assert (key, state) == ("m0.py", "parsed") and replaced is not None
    assert {s["qualified_name"] for s in replaced[1]["symbols"]} == {"renamed_f0", "keep0"}
    assert [s["qualified_name"] for s in replaced[2]["symbols"]] == ["again_f0"]
    assert replaced[2]["language"] == "python" and all(s["hash"] for s in replaced[1]["symbols"])


def _many_files(ws: Path) -> int:
    shutil.copytree(ROOT / "llmem", ws / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    return len(walk_workspace(ws, ws).files)


def test_a_large_parse_over_raw_stdio_keeps_stdout_to_json_rpc(workspace: Path) -> None:
    files = _many_files(workspace)
    assert files >= parse_pool.POOL_MIN_FILES
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "generate_artifact", "arguments": {"path": "."}},
            }
        ),
    ]
    by_id, _stderr = exchange("llmem-mcp", workspace, lines, {1, 2}, timeout=240)
    assert by_id[2]["result"]["structuredContent"]["data"]["parsed"] == files


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_large_parse_over_stdio_reports_progress_and_is_searchable(workspace: Path, mode: str) -> None:
    files = _many_files(workspace)
    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    with anyio.fail_after(240):
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            result = await client.call_tool("generate_artifact", {"path": "."}, progress_callback=progress)
            assert result.structured_content and result.structured_content["data"]["parsed"] == files
            found = await client.call_tool("search_artifacts", {"query": "outline_many"})
            assert found.structured_content
            hits = found.structured_content["data"]["results"]
            assert any(h["path"] == "llmem/code/parse_pool.py" and h["match"] == "exact-name" for h in hits)
    assert seen and seen[-1] == files and seen == sorted(seen)


def test_spawned_workers_as_on_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where neither fork nor a fork server exists, workers start as fresh interpreters (spawn)."""
    import multiprocessing

    ws = _workspace(tmp_path / "ws")
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(parse_pool, "usable_cores", lambda: 2)
    parse_pool._WORKERS.drop()
    try:
        result = Llmem(ArtifactStore(ws / ".llmem", ws), Limits()).parse("llmem")
        pool = parse_pool._WORKERS._pool
        assert pool is not None and pool._mp_context.get_start_method() == "spawn"
        assert result["parsed"] >= parse_pool.POOL_MIN_FILES and result["failed"] == 0
        assert len(_stored(ws)) == result["parsed"]
        # A spawned worker outlines and stores a batch itself (whatever this process took above).
        new = ws / "servers" / "spawned.py"
        new.write_text("def spawned() -> int:\n    return 1\n", encoding="utf-8")
        item = ("servers/spawned.py", str(new), None)
        outcome = pool.submit(parse_pool._worker_batch, str(ws / ".llmem"), str(ws), [item]).result(timeout=120)
        assert outcome == [("servers/spawned.py", "parsed", False, None, None)]
        assert "spawned" in _stored(ws)["servers/spawned.py"][0]
    finally:
        parse_pool._WORKERS.drop()


def test_fork_server_workers_import_this_llmem_not_the_working_folders(tmp_path: Path) -> None:
    """An IDE starts the server in the user's project: its ``llmem/`` or ``json.py`` must not be
    what the parse workers import (Python 3.11's fork server would put the working folder first)."""
    import subprocess
    import sys

    import llmem

    (tmp_path / "llmem").mkdir()
    (tmp_path / "llmem" / "__init__.py").write_text("raise SystemExit('the project llmem was imported')\n")
    (tmp_path / "json.py").write_text("raise SystemExit('the project json was imported')\n")
    code = (
        "import os, sys, threading\n"
        "sys.path = [p for p in sys.path if p not in ('', os.getcwd())]\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()  # two threads: fork server\n"
        "from llmem.code import parse_pool\n"
        "pool = parse_pool._WORKERS.get()\n"
        "print(pool.submit(parse_pool._imported_from).result(timeout=120))\n"
        "parse_pool._WORKERS.drop()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    worker_llmem, worker_json = out.stdout.split()
    assert worker_llmem == str(Path(llmem.__file__).resolve())
    assert worker_json == str(Path(json.__file__).resolve())
