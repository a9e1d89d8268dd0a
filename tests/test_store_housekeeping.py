"""The store inside a repository: artifacts reviewable, housekeeping out of ``git status``,
a bounded number of lock files, and locks that neither deadlock nor lose writes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.fsutil import hold_lock_file, stripe_lock_file
from llmem.core.paths import resolve_in_workspace
from llmem.core.store import LOCK_STRIPES, ArtifactStore

REPO_ROOT = Path(__file__).resolve().parents[1]

WRITER = r"""
import sys
from pathlib import Path
from llmem.core.store import ArtifactStore
ws, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
store = ArtifactStore(ws / ".llmem", ws)
for i in range(n):
    # Overlapping keys: every writer writes the same 20 paths, each with its own kind.
    store.put("llmem", f"src/mod{i % 20}.py", f"note-{who}", content=i, fmt="json", provenance={"who": who})
    def add(value, who=who, i=i):
        return [*value, f"{who}:{i}"], None
    store.update_doc("llmem", "tally", [], add)
"""


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_status_shows_nothing_of_the_store(workspace: Path) -> None:
    _git(workspace, "init", "-q")
    src = workspace / "src"
    src.mkdir()
    for n in range(5):
        (src / f"mod{n}.py").write_text(f'def f{n}(x):\n    """Doubles."""\n    return 2 * x\n', encoding="utf-8")
    llmem = Llmem(ArtifactStore(workspace / ".llmem", workspace), Limits())
    llmem.parse(".")
    prompt = llmem.prompt("src/mod0.py", "summarize")
    assert prompt.callbackArgs is not None
    llmem.store_result(**prompt.callbackArgs, result="Doubles numbers.", model="test")
    llmem.prompt("src/mod1.py", "summarize")  # left pending: its ticket is housekeeping too
    llmem.delete("src/mod4.py", None)
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), str(p), "10"], cwd=REPO_ROOT) for p in range(3)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)

    listed = _git(workspace, "status", "--porcelain", "--untracked-files=all").splitlines()
    paths = sorted(line[3:] for line in listed)
    assert paths and all(p.startswith("src/") for p in paths), paths  # .llmem/ is not seen at all
    assert _git(workspace, "check-ignore", ".llmem/artifacts/llmem/src/mod0.py/summarize.json").strip()
    assert (workspace / ".llmem/artifacts/llmem/src/mod0.py/summarize.json").is_file()
    # What is hidden is really there: tickets, locks, shared documents.
    root = workspace / ".llmem"
    assert list((root / "pending").iterdir())
    assert list((root / "locks").iterdir())


def test_a_user_edited_gitignore_is_left_alone(workspace: Path) -> None:
    root = workspace / ".llmem"
    root.mkdir()
    (root / ".gitignore").write_text("# mine\n*\n", encoding="utf-8")
    ArtifactStore(root, workspace).put("llmem", "a.py", "outline", content=1, fmt="json", provenance={})
    assert (root / ".gitignore").read_text(encoding="utf-8") == "# mine\n*\n"


def test_lock_files_are_a_bounded_set_not_one_per_artifact(workspace: Path) -> None:
    store = ArtifactStore(workspace / ".llmem", workspace)
    for n in range(500):
        store.put("llmem", f"pkg/m{n}.py", "outline", content=n, fmt="json", provenance={})
    for n in range(0, 500, 2):
        store.delete("llmem", f"pkg/m{n}.py", "outline")
    files = [p for p in (workspace / ".llmem").rglob("*") if p.is_file()]
    locks = [p for p in files if p.name.endswith(".lock")]
    assert len(locks) <= LOCK_STRIPES
    assert all(p.parent.name == "locks" for p in locks)
    artifacts = [p for p in files if "artifacts" in p.parts]
    assert len(artifacts) == 250
    assert not [p for p in artifacts if p.name.endswith(".tmp")]


def test_concurrent_processes_on_overlapping_keys_lose_nothing(workspace: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), str(p), "60"], cwd=REPO_ROOT) for p in range(6)
    ]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    store = ArtifactStore(workspace / ".llmem", workspace)
    tally = store.read_doc("llmem", "tally", [])
    assert sorted(tally) == sorted(f"{p}:{i}" for p in range(6) for i in range(60))
    for p in range(6):
        for m in range(20):
            last = max(i for i in range(60) if i % 20 == m)
            assert store.get("llmem", f"src/mod{m}.py", f"note-{p}").doc["content"] == last
    assert len(list((workspace / ".llmem" / "locks").iterdir())) <= 2 * LOCK_STRIPES


def test_nested_locks_on_a_shared_stripe_do_not_deadlock(tmp_path: Path) -> None:
    """Two different keys on one stripe, nested by one thread, while another thread waits."""
    keys = [f"k{n}" for n in range(10_000)]
    first = stripe_lock_file(tmp_path, "artifact", keys[0], LOCK_STRIPES)
    twin = next(k for k in keys[1:] if stripe_lock_file(tmp_path, "artifact", k, LOCK_STRIPES) == first)
    order: list[str] = []
    inside = threading.Event()

    def other() -> None:
        inside.wait(timeout=10)
        with hold_lock_file(stripe_lock_file(tmp_path, "artifact", twin, LOCK_STRIPES), timeout=10):
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with hold_lock_file(first, timeout=5):
        with hold_lock_file(stripe_lock_file(tmp_path, "artifact", twin, LOCK_STRIPES), timeout=5):
            inside.set()
            order.append("nested")
        order.append("outer")
    thread.join(timeout=10)
    assert order == ["nested", "outer", "other"]


def test_a_killed_writer_leaves_no_temporary_file_among_the_artifacts_listing(workspace: Path) -> None:
    store = ArtifactStore(workspace / ".llmem", workspace)
    store.put("llmem", "a.py", "outline", content=1, fmt="json", provenance={})
    folder = store.artifact_file("llmem", "a.py", "outline").parent
    (folder / ".outline.json.abc123.tmp").write_text("{half", encoding="utf-8")  # what a SIGKILL leaves
    assert list(store.iter_keys("llmem")) == [("a.py", ["outline"])]
    rp = resolve_in_workspace(workspace, "a.py")
    assert rp.key == "a.py"
    assert "*" in (workspace / ".llmem" / ".gitignore").read_text(encoding="utf-8").splitlines()
