"""The artifact store: files one per artifact, atomic, locked, listed from the files themselves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmem.core.errors import ArtifactNotFound, InvalidArgument
from llmem.core.store import ArtifactStore, fingerprint_file, source_status


@pytest.fixture
def store(workspace: Path) -> ArtifactStore:
    return ArtifactStore(workspace / ".llmem", workspace)


def _put(store: ArtifactStore, key: str, kind: str = "outline", content: object = "x") -> None:
    store.put("llmem", key, kind, content=content, fmt="text", provenance={"tool": "test"})


def test_artifact_is_a_readable_json_file(store: ArtifactStore, workspace: Path) -> None:
    src = workspace / "a b.py"
    src.write_text("x = 1\n")
    rec = store.put(
        "llmem",
        "a b.py",
        "outline",
        content={"k": 1},
        fmt="json",
        provenance={"tool": "t"},
        source=fingerprint_file(src),
    )
    on_disk = json.loads((workspace / ".llmem" / "artifacts" / "llmem" / "a b.py" / "outline.json").read_text())
    assert on_disk["content"] == {"k": 1}
    assert on_disk["source"]["sha256"] == rec.doc["source"]["sha256"]
    assert store.get("llmem", "a b.py", "outline").doc["content"] == {"k": 1}
    assert store.status_of(store.get("llmem", "a b.py", "outline")) == "fresh"


def test_status_fresh_stale_orphaned(store: ArtifactStore, workspace: Path) -> None:
    src = workspace / "m.py"
    src.write_text("x = 1\n")
    fp = fingerprint_file(src)
    assert source_status(src, fp) == "fresh"
    os.utime(src, ns=(fp.mtime_ns + 5_000_000_000, fp.mtime_ns + 5_000_000_000))
    assert source_status(src, fp) == "fresh"  # touched, same bytes: sha256 confirms
    src.write_text("x = 2\n")
    assert source_status(src, fp) == "stale"
    src.unlink()
    assert source_status(src, fp) == "orphaned"


def test_listing_is_sorted_and_resumes_after_a_cursor(store: ArtifactStore) -> None:
    keys = ["a.py", "b/c.py", "b/d/e.py", "b/d/f.py", "b/z.py", "c.py", "ca/x.py"]
    for k in reversed(keys):
        _put(store, k)
    _put(store, "b", "summarize")
    listed = [k for k, _ in store.iter_keys("llmem")]
    assert listed == ["a.py", "b", "b/c.py", "b/d/e.py", "b/d/f.py", "b/z.py", "c.py", "ca/x.py"]
    for i, key in enumerate(listed):
        assert [k for k, _ in store.iter_keys("llmem", after=key)] == listed[i + 1 :]
    assert [k for k, _ in store.iter_keys("llmem", "b/d")] == ["b/d/e.py", "b/d/f.py"]


def test_delete_one_kind_all_kinds_and_recursive(store: ArtifactStore) -> None:
    _put(store, "p/a.py")
    _put(store, "p/a.py", "summarize")
    _put(store, "p/q/b.py")
    assert store.delete("llmem", "p/a.py", "summarize") == 1
    assert store.kinds("llmem", "p/a.py") == ["outline"]
    assert store.delete("llmem", "p", None, recursive=True) == 2
    assert list(store.iter_keys("llmem")) == []
    assert not (store.root / "artifacts" / "llmem" / "p").exists()  # empty folders pruned
    with pytest.raises(ArtifactNotFound):
        store.get("llmem", "p/a.py", "outline")


def test_corrupt_artifact_is_reported_not_crashed(store: ArtifactStore) -> None:
    _put(store, "x.py")
    store.artifact_file("llmem", "x.py", "outline").write_text("{not json")
    with pytest.raises(ArtifactNotFound) as info:
        store.get("llmem", "x.py", "outline")
    assert info.value.details["reason"] == "unreadable"


def test_reads_whatever_json_accepts(store: ArtifactStore) -> None:
    # The fast parser refuses some documents Python's json reads (a lone surrogate escape, as
    # a file name that is not valid UTF-8 leaves behind): those are read all the same.
    _put(store, "x.py")
    file = store.artifact_file("llmem", "x.py", "outline")
    doc = json.loads(file.read_text())
    doc["content"] = {"name": "bad\udcff.py", "big": 10**30, "ratio": 0.1}
    file.write_text(json.dumps(doc))  # ensure_ascii: the surrogate is written as an escape
    assert store.get("llmem", "x.py", "outline").doc["content"] == doc["content"]


@pytest.mark.parametrize("key", ["../x", "/abs", "a/../b", "a\\b", "a\x00b"])
def test_bad_keys_are_refused(store: ArtifactStore, key: str) -> None:
    with pytest.raises(InvalidArgument):
        _put(store, key)


def test_expired_tickets_are_swept(store: ArtifactStore) -> None:
    store.write_ticket(
        "t1",
        {
            "ticket": "t1",
            "namespace": "llmem",
            "path": "a.py",
            "state": "open",
            "expires_at_ts": time.time() - 1,
        },
    )
    store.write_ticket(
        "t2",
        {
            "ticket": "t2",
            "namespace": "llmem",
            "path": "a.py",
            "state": "open",
            "expires_at_ts": time.time() + 100,
        },
    )
    assert [t["ticket"] for t in store.pending("llmem")] == ["t2"]
    assert not store.ticket_file("t1").exists()


def test_update_doc_is_read_modify_write(store: ArtifactStore) -> None:
    def add(value: list[int]) -> tuple[list[int], int]:
        value.append(len(value))
        return value, len(value)

    assert store.update_doc("debrief-state", "sel", [], add) == 1
    assert store.update_doc("debrief-state", "sel", [], add) == 2
    assert store.read_doc("debrief-state", "sel", []) == [0, 1]


WRITER = """
import sys
from pathlib import Path
from llmem.core.store import ArtifactStore
ws = Path(sys.argv[1]); proc = sys.argv[2]; n = int(sys.argv[3])
store = ArtifactStore(ws / ".llmem", ws)
def add(v, name):
    v.append(name)
    return v, None
for i in range(n):
    store.put("llmem", f"proc{proc}/f{i}.py", "outline", content={"i": i}, fmt="json", provenance={})
    store.update_doc("llmem", "shared-list", [], lambda v: add(v, f"{proc}-{i}"))
"""


def test_concurrent_processes_lose_nothing(workspace: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), str(p), "40"]) for p in range(6)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    store = ArtifactStore(workspace / ".llmem", workspace)
    assert len(list(store.iter_keys("llmem"))) == 240
    shared = store.read_doc("llmem", "shared-list", [])
    assert sorted(shared) == sorted(f"{p}-{i}" for p in range(6) for i in range(40))


KILLED_WRITER = """
import sys
from pathlib import Path
from llmem.core.store import ArtifactStore
ws = Path(sys.argv[1])
store = ArtifactStore(ws / ".llmem", ws)
big = "x" * 200_000
print("ready", flush=True)
i = 0
while True:
    store.put("llmem", "hot.py", "outline", content={"i": i, "pad": big}, fmt="json", provenance={})
    store.update_doc("llmem", "counter", {"n": 0}, lambda v: ({"n": v["n"] + 1}, None))
    i += 1
"""


def test_sigkill_mid_write_leaves_a_readable_store(workspace: Path) -> None:
    store = ArtifactStore(workspace / ".llmem", workspace)
    for round_ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED_WRITER, str(workspace)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        # Kill at a different moment each round: after the counter has moved a varying amount.
        target = round_ % 4 + 1
        start = store.read_doc("llmem", "counter", {"n": 0})["n"]
        while store.read_doc("llmem", "counter", {"n": 0})["n"] < start + target and time.monotonic() < deadline:
            pass
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        rec = store.get("llmem", "hot.py", "outline")  # parses: never half a file
        assert isinstance(rec.doc["content"]["i"], int)
        assert isinstance(store.read_doc("llmem", "counter", None)["n"], int)
    leftovers = list((workspace / ".llmem").rglob("*.tmp"))
    # A killed writer may leave its temporary file behind, but never in place of the artifact.
    assert all(p.name.startswith(".") for p in leftovers)


def test_writes_and_deletes_racing_in_one_folder_never_fail(store: ArtifactStore) -> None:
    """A delete prunes an emptied folder while another thread is about to write into it (the fuzz
    caught delete_artifact answering INTERNAL): the write makes it again, the delete counts 0."""
    import threading

    errors: list[BaseException] = []

    def put() -> None:
        for i in range(600):
            try:
                store.put("llmem", "a/b/c.py", "outline", content={"i": i}, fmt="json", provenance={})
            except BaseException as exc:
                errors.append(exc)

    def delete() -> None:
        for _ in range(600):
            try:
                store.delete("llmem", "a", None, recursive=True)
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=fn) for fn in (put, delete, put, delete, put, delete)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
