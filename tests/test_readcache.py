"""The read cache under the store: a warm read of an unchanged file is one stat, a replaced file is read again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmem.core import _readcache
from llmem.core._readcache import ReadCache
from llmem.core.fsutil import atomic_write_json, loads_json
from llmem.core.store import ArtifactStore


def _trust_every_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if every file had been unchanged for long: signatures are trusted at once."""
    monkeypatch.setattr(_readcache, "RACY_NS", -(10**12))


def test_an_unchanged_old_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.json"
    atomic_write_json(path, {"v": 1})
    _trust_every_signature(monkeypatch)
    cache = ReadCache()
    parsed: list[bytes] = []

    def parse(raw: bytes) -> object:
        parsed.append(raw)
        return loads_json(raw)

    first, size, version = cache.read(str(path), parse)
    second, _, again = cache.read(str(path), parse)
    assert first == {"v": 1} and size == path.stat().st_size
    assert second is first and len(parsed) == 1
    assert version is not None and again == version


def test_an_atomic_replace_is_seen_at_once_even_at_the_same_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.json"
    atomic_write_json(path, {"v": 1})
    _trust_every_signature(monkeypatch)
    cache = ReadCache()
    assert cache.read(str(path), loads_json)[0] == {"v": 1}
    for v in range(2, 10):  # same size each time, within the same clock tick
        atomic_write_json(path, {"v": v})
        assert cache.read(str(path), loads_json)[0] == {"v": v}


def test_a_file_changed_just_before_the_read_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    atomic_write_json(path, {"v": 1})
    cache = ReadCache()
    calls: list[int] = []

    def parse(raw: bytes) -> object:
        calls.append(1)
        return loads_json(raw)

    assert cache.read(str(path), parse)[2] is None  # no version: its signature proves nothing yet
    cache.read(str(path), parse)
    assert len(calls) == 2  # racily clean: read again until the file has aged


def test_entries_and_bytes_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _trust_every_signature(monkeypatch)
    cache = ReadCache(max_entries=3, max_bytes=10_000)
    for i in range(10):
        path = tmp_path / f"{i}.json"
        atomic_write_json(path, {"i": i, "pad": "x" * 500})
        cache.read(str(path), loads_json)
    assert len(cache._entries) == 3
    assert [Path(p).name for p in cache._entries] == ["7.json", "8.json", "9.json"]
    big = tmp_path / "big.json"
    atomic_write_json(big, {"pad": "x" * 5_000})  # over a quarter of the budget: never kept
    cache.read(str(big), loads_json)
    assert str(big) not in cache._entries
    assert cache._bytes == sum(size for _sig, size, _v in cache._entries.values())


def test_a_missing_file_raises_as_open_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ReadCache().read(str(tmp_path / "nope.json"), loads_json)


WRITER = """
import sys
from pathlib import Path
from llmem.core.fsutil import atomic_write_json
path, n = Path(sys.argv[1]), int(sys.argv[2])
for v in range(n):
    atomic_write_json(path, {"v": v, "pad": "x" * 200})
"""


def test_reads_while_another_process_replaces_the_file(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "store", tmp_path)
    store.put("llmem", "a.py", "outline", content={"v": -1}, fmt="json", provenance={})
    file = store.artifact_file("llmem", "a.py", "outline")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(file), "300"], env=dict(os.environ))
    seen = []
    while writer.poll() is None:
        doc = store.get("llmem", "a.py", "outline", shared=True).doc
        seen.append(doc.get("v", doc.get("content")))  # always one whole version
    assert writer.wait(timeout=60) == 0
    assert store.get("llmem", "a.py", "outline", shared=True).doc["v"] == 299
    assert json.loads(file.read_bytes())["v"] == 299
    assert seen
