"""The first parse of a large tree: worker processes, a background job past the budget, and
what other processes see of it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmem.code import parse_pool
from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "llmem", ws / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "debrief_calc", ws / "debrief_calc", ignore=shutil.ignore_patterns("__pycache__"))
    return ws


def _outlines(ws: Path) -> dict[str, object]:
    store = ArtifactStore(ws / ".llmem", ws)
    return {key: store.get("llmem", key, "outline").doc["content"] for key, _ in store.iter_keys("llmem")}


@pytest.mark.skipif(os.name != "posix", reason="kills worker processes with POSIX signals")
def test_killed_workers_cost_time_not_files(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_pool, "POOL_MIN_FILES", 1)
    pool = parse_pool._WORKERS.get()
    pool.submit(os.getpid).result(timeout=60)  # the workers are up
    for process in list(pool._processes.values()):
        os.kill(process.pid, signal.SIGKILL)
    files = len([p for p in tree.rglob("*.py") if p.is_file()])
    result = Llmem(ArtifactStore(tree / ".llmem", tree), Limits()).parse(".")
    assert result["failed"] == 0 and result["parsed"] >= files
    assert len(_outlines(tree)) == result["parsed"]


def _wait_for(predicate: object, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("the condition did not come true in time")


def test_a_parse_past_its_budget_goes_on_in_the_background(tree: Path) -> None:
    svc = Llmem(ArtifactStore(tree / ".llmem", tree), Limits())
    first = svc.parse(".", None, budget_s=0.0)
    assert first["complete"] is False and first["state"] == "running" and first["job"]
    second = svc.parse(".", None, budget_s=0.0)  # attaches to the running job, starts no other
    assert second["job"] == first["job"]
    assert second["attached"] or second["state"] == "done"
    # Another process sees its progress through the store.
    other = Llmem(ArtifactStore(tree / ".llmem", tree), Limits())
    _wait_for(lambda: any(j["job"] == first["job"] for j in other.store_status(".")["parse_jobs"]))
    _wait_for(lambda: other.parser.jobs()[0]["state"] == "done")
    job = next(j for j in other.parser.jobs() if j["job"] == first["job"])
    assert job["parsed"] > 100 and job["failed"] == 0 and job["finished_at"]
    done = svc.parse(".", None, budget_s=60.0)
    assert done["complete"] is True and done["parsed"] == 0 and done["unchanged"] == job["parsed"]


def test_a_job_whose_process_is_gone_is_interrupted(tree: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(proc.stdout)
    store = ArtifactStore(tree / ".llmem", tree)
    entry = {"path": ".", "state": "running", "done": 3, "total": 10, "started_at": "x", "pid": dead}
    store.update_doc("llmem", "parse-jobs", {}, lambda jobs: ({**jobs, "abc": entry}, None))
    jobs = Llmem(store, Limits()).parser.jobs()
    assert [j["state"] for j in jobs if j["job"] == "abc"] == ["interrupted"]


def test_outlines_are_written_without_fsync_and_notes_with_it(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    svc = Llmem(ArtifactStore(tree / ".llmem", tree), Limits())
    svc.parse("llmem/code/walk.py")
    assert synced == []  # a derived outline: atomic, not durable
    out = svc.prompt("llmem/code/walk.py", "summarize")
    assert out.callbackArgs is not None
    svc.store_result(**out.callbackArgs, result="The walk.", model="t")
    assert synced  # a note the host's model wrote: durable
    assert json.loads(
        (tree / ".llmem" / "artifacts" / "llmem" / "llmem" / "code" / "walk.py" / "summarize.json").read_text()
    )


def test_paths_ignored_after_their_parse_are_named_with_their_artifacts(tree: Path) -> None:
    svc = Llmem(ArtifactStore(tree / ".llmem", tree), Limits())
    svc.parse(".")
    (tree / ".llmemignore").write_text("debrief_calc/\nllmem/code/walk.py\n", encoding="utf-8")
    again = svc.parse(".")
    assert again["ignored_with_artifacts"] == ["debrief_calc/", "llmem/code/walk.py"]
    svc.delete("debrief_calc", None)
    svc.delete("llmem/code/walk.py", None)
    assert "ignored_with_artifacts" not in svc.parse(".")
