"""The analyst's files stay theirs: every kind of write keeps a plot's permission bits (and, as
root, its owner and group) and leaves nothing beside it, even when the writer is killed; lock
and temporary files live in the store's scratch folder, and orphaned temporary files are swept.

Real files and real processes. Two file-system conditions no test machine offers on demand (no
hard links, one file system mounted twice) are made by making ``os.link``/``os.replace`` fail
the way such file systems fail them.
"""

from __future__ import annotations

import errno
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from debrief_calc.errors import PlotExists
from debrief_calc.formats.plotfile import PlotCache, PlotDoc, create_plot_file, load_plot, modify_plot, save_plot
from debrief_calc.plots.commands import apply_command, apply_to_plot
from debrief_calc.state.service import StateService
from llmem.core.config import Limits
from llmem.core.fsutil import ORPHAN_AGE_S, atomic_create_user_file, new_file_mode
from llmem.core.store import ArtifactStore

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "plots"
LARGE = "large-sample.plot.json"
NAME = f"plots/{LARGE}"
MODES = [0o644, 0o640]
TIME = {"current": "2024-11-14T20:00:00Z", "start": "2024-11-14T16:16:53.661Z", "end": "2024-11-15T10:17:00.000Z"}
VIEW = {"bounds": [-6.0, 35.0, -2.0, 37.0]}
EMPTY: dict[str, Any] = {"type": "FeatureCollection", "features": []}


@pytest.fixture
def store(workspace: Path) -> ArtifactStore:
    """A workspace with the large sample in ``plots/`` and its store in ``.llmem/``."""
    (workspace / "plots").mkdir()
    shutil.copyfile(DATA / LARGE, workspace / NAME)
    return ArtifactStore(workspace / ".llmem", workspace)


def plot_with_mode(store: ArtifactStore, mode: int) -> Path:
    path = store.workspace / NAME
    os.chmod(path, mode)  # as the analyst set it
    return path


def assert_kept(path: Path, mode: int, before: bytes, what: str = "") -> None:
    """The plot was rewritten, keeps its mode, and its folder holds it alone."""
    assert path.read_bytes() != before, f"{what} wrote nothing"
    assert oct(stat.S_IMODE(path.stat().st_mode)) == oct(mode), what
    assert os.listdir(path.parent) == [path.name], what
    assert json.loads(path.read_bytes())["type"] == "FeatureCollection", what


def scratch_temps(store: ArtifactStore) -> list[str]:
    folder = store.scratch_dir("plots") / "tmp"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def point(fid: str) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "Point", "coordinates": [-4.0, 36.0]},
        "properties": {"dataType": "reference-point", "name": fid},
    }


def command(name: str, data: dict[str, Any]) -> dict[str, Any]:
    p3 = next(f for f in data["features"] if f.get("id") == "p-3")
    payloads = {
        "addFeatures": [point("new-1")],
        "updateFeatures": [{**p3, "properties": {**p3["properties"], "name": "renamed"}}],
        "deleteFeatures": ["p-3"],
        "setFeatureCollection": {"type": "FeatureCollection", "features": [p3]},
        "setViewport": VIEW,
        "setTimeState": TIME,
    }
    return {"command": name, "payload": payloads[name]}


def rename_p3(doc: PlotDoc) -> None:
    doc.features[doc.index_by_id()["p-3"]]["properties"]["name"] = "LEOPOLD II"


def replace_z2(doc: PlotDoc) -> None:
    i = doc.index_by_id()["z-2"]
    doc.features[i] = {**doc.features[i], "properties": {"name": "renamed"}}


def applying(name: str) -> Callable[[Path, Path], object]:
    def write(path: Path, scratch: Path) -> object:
        return apply_to_plot(path, command(name, load_plot(path).data), scratch_dir=scratch, cache=PlotCache())

    return write


WRITES: dict[str, Callable[[Path, Path], object]] = {
    "modify_plot deep": lambda p, s: modify_plot(p, rename_p3, scratch_dir=s, cache=PlotCache()),
    "modify_plot shallow": lambda p, s: modify_plot(p, replace_z2, scratch_dir=s, cache=PlotCache(), shallow=True),
    "modify_plot apply_command": lambda p, s: modify_plot(
        p, lambda d: apply_command(d.data, command("setViewport", d.data)), scratch_dir=s, cache=PlotCache()
    ),
    "save_plot": lambda p, s: save_plot(p, {**load_plot(p).data, "title": "saved"}, scratch_dir=s, cache=PlotCache()),
    **{
        f"apply_to_plot {name}": applying(name)
        for name in (
            "addFeatures",
            "updateFeatures",
            "deleteFeatures",
            "setFeatureCollection",
            "setViewport",
            "setTimeState",
        )
    },
}


# ---------------------------------------------------------------- every kind of write


@pytest.mark.parametrize("mode", MODES, ids=oct)
@pytest.mark.parametrize("write", WRITES.values(), ids=list(WRITES))
def test_every_domain_write_keeps_the_mode_and_leaves_nothing_beside(
    store: ArtifactStore, write: Callable[[Path, Path], object], mode: int
) -> None:
    path = plot_with_mode(store, mode)
    before = path.read_bytes()
    write(path, store.scratch_dir("plots"))
    assert_kept(path, mode, before)
    assert scratch_temps(store) == []


@pytest.mark.parametrize("mode", MODES, ids=oct)
def test_every_write_of_the_state_service_keeps_the_mode_and_leaves_nothing_beside(
    store: ArtifactStore, mode: int
) -> None:
    path = plot_with_mode(store, mode)
    svc = StateService(store, Limits())
    svc.open_plot(NAME)
    svc.set_selection(["p-3"], NAME)  # the selection lives in the store
    steps: list[tuple[str, Callable[[], object]]] = [
        ("set_time", lambda: svc.set_time(TIME, NAME, None)),
        ("set_viewport", lambda: svc.set_viewport(VIEW, NAME, None)),
        ("zoom_to_selection", lambda: svc.zoom_to_selection(NAME, 0.5, None)),
        ("apply", lambda: svc.apply({"command": "addFeatures", "payload": [point("new-1")]}, NAME, None)),
        ("undo", lambda: svc.undo(NAME)),
    ]
    for what, step in steps:
        before = path.read_bytes()
        step()
        assert_kept(path, mode, before, what)
    assert sorted(os.listdir(store.workspace)) == [".llmem", "plots"]
    locks = list((store.scratch_dir("plots") / "locks").iterdir())
    assert len(locks) == 1 and locks[0].suffix == ".lock", "the plot's one lock lives in the store"
    assert scratch_temps(store) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root may give files away")
def test_a_rewrite_keeps_owner_and_group(store: ArtifactStore) -> None:
    path = store.workspace / NAME
    os.chown(path, 4321, 8765)
    os.chmod(path, 0o2640)  # a set-gid bit too, which a chown may clear
    modify_plot(path, rename_p3, scratch_dir=store.scratch_dir("plots"), cache=PlotCache())
    st = path.stat()
    assert (st.st_uid, st.st_gid, oct(stat.S_IMODE(st.st_mode))) == (4321, 8765, oct(0o2640))


# ---------------------------------------------------------------- creating a plot

CREATE = """
import sys
from pathlib import Path
from debrief_calc.formats.plotfile import create_plot_file
path, scratch = Path(sys.argv[1]), Path(sys.argv[2])
create_plot_file(path, {"type": "FeatureCollection", "features": []}, scratch_dir=scratch)
"""


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)], ids=oct)
def test_a_new_plot_gets_the_mode_any_new_file_gets(store: ArtifactStore, umask: int, mode: int) -> None:
    path = store.workspace / "new" / "day 2" / "fresh.plot.json"  # its folders are made
    subprocess.run(
        [sys.executable, "-c", CREATE, str(path), str(store.scratch_dir("plots"))],
        cwd=REPO,
        umask=umask,
        check=True,
        timeout=60,
    )
    assert oct(stat.S_IMODE(path.stat().st_mode)) == oct(mode)
    assert os.listdir(path.parent) == [path.name]
    assert json.loads(path.read_bytes()) == EMPTY
    assert scratch_temps(store) == []


def test_create_plot_file_writes_the_plot_and_caches_it(store: ArtifactStore) -> None:
    path = store.workspace / "plots" / "fresh.plot.json"
    cache = PlotCache()
    data = {"type": "FeatureCollection", "properties": {"name": "Fresh"}, "features": [point("a")]}
    doc = create_plot_file(path, data, scratch_dir=store.scratch_dir("plots"), cache=cache)
    data["features"].clear()  # the caller's value, not the cached one
    assert cache.get(path) is doc and doc.get_feature("a") == point("a")
    assert doc.revision == load_plot(path).revision
    assert stat.S_IMODE(path.stat().st_mode) == new_file_mode()
    assert sorted(os.listdir(path.parent)) == ["fresh.plot.json", LARGE]


@pytest.mark.parametrize("mode", MODES, ids=oct)
def test_creating_an_existing_plot_is_refused_and_changes_nothing(store: ArtifactStore, mode: int) -> None:
    path = plot_with_mode(store, mode)
    before, st = path.read_bytes(), path.stat()
    with pytest.raises(PlotExists) as refused:
        create_plot_file(path, EMPTY, scratch_dir=store.scratch_dir("plots"), name=NAME)
    assert refused.value.code == "PLOT_EXISTS" and refused.value.rpc_code == -32011
    assert refused.value.details["filename"] == NAME and NAME in str(refused.value)
    after = path.stat()
    assert path.read_bytes() == before
    assert (after.st_ino, after.st_mtime_ns, after.st_mode) == (st.st_ino, st.st_mtime_ns, st.st_mode)
    assert os.listdir(path.parent) == [LARGE]
    assert scratch_temps(store) == []


def test_exclusive_creation_holds_without_the_lock(tmp_path: Path) -> None:
    """Eight writers that take no lock create one name at once: exactly one wins, whole."""
    target = tmp_path / "plots" / "race.plot.json"
    start = threading.Barrier(8)

    def create(k: int) -> bool:
        start.wait(timeout=30)
        try:
            atomic_create_user_file(target, f"writer {k}".encode() * 1000, temp_dir=tmp_path / "scratch")
        except FileExistsError:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        won = [k for k, ok in enumerate(pool.map(create, range(8))) if ok]
    assert len(won) == 1
    assert target.read_bytes() == f"writer {won[0]}".encode() * 1000
    assert os.listdir(target.parent) == [target.name]
    assert os.listdir(tmp_path / "scratch") == []


def test_without_hard_links_creation_checks_under_the_lock_and_renames(
    store: ArtifactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")  # what FAT and some shares answer

    monkeypatch.setattr(os, "link", no_links)
    scratch = store.scratch_dir("plots")
    path = store.workspace / "plots" / "fresh.plot.json"
    create_plot_file(path, EMPTY, scratch_dir=scratch, cache=PlotCache())
    assert json.loads(path.read_bytes()) == EMPTY
    assert stat.S_IMODE(path.stat().st_mode) == new_file_mode()
    with pytest.raises(PlotExists):
        create_plot_file(path, {**EMPTY, "title": "another"}, scratch_dir=scratch, cache=PlotCache())
    assert json.loads(path.read_bytes()) == EMPTY
    assert sorted(os.listdir(path.parent)) == ["fresh.plot.json", LARGE]
    assert scratch_temps(store) == []


# ---------------------------------------------------------------- where the temporary file goes


@pytest.fixture
def other_device(tmp_path: Path) -> Iterator[Path]:
    """A scratch folder on another file system than ``tmp_path`` (``/dev/shm``), if there is one."""
    shm = Path("/dev/shm")  # a tmpfs, on another device
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system to put the scratch folder on")
    folder = shm / f"plot-scratch-{os.getpid()}-{time.monotonic_ns()}"
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_scratch_folder_on_another_device_still_leaves_nothing_behind(
    store: ArtifactStore, other_device: Path
) -> None:
    path = plot_with_mode(store, 0o640)
    before = path.read_bytes()
    modify_plot(path, rename_p3, scratch_dir=other_device, cache=PlotCache())
    assert_kept(path, 0o640, before)
    fresh = path.with_name("fresh.plot.json")
    create_plot_file(fresh, EMPTY, scratch_dir=other_device, cache=PlotCache())
    with pytest.raises(PlotExists):
        create_plot_file(fresh, EMPTY, scratch_dir=other_device, cache=PlotCache())
    assert sorted(os.listdir(path.parent)) == ["fresh.plot.json", LARGE]
    assert os.listdir(other_device / "tmp") == []
    assert len(os.listdir(other_device / "locks")) == 2


def test_a_rename_refused_across_mount_points_is_made_beside_the_plot(
    store: ArtifactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file system mounted twice has one device number, yet rename(2) will not cross."""
    scratch = store.scratch_dir("plots")
    real_replace = os.replace

    def replace(src: str, dst: Path) -> None:
        if Path(src).parent == scratch / "tmp":
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    path = plot_with_mode(store, 0o640)
    before = path.read_bytes()
    modify_plot(path, rename_p3, scratch_dir=scratch, cache=PlotCache())
    assert_kept(path, 0o640, before)
    assert scratch_temps(store) == []


def test_orphaned_temporary_files_are_swept_by_the_next_write(store: ArtifactStore) -> None:
    tmp = store.scratch_dir("plots") / "tmp"
    tmp.mkdir(parents=True)
    orphan, in_flight = tmp / f".{LARGE}.orphan01.tmp", tmp / f".{LARGE}.inflight.tmp"
    orphan.write_bytes(b"{half a plot")
    in_flight.write_bytes(b"{another writer's")
    old = time.time() - ORPHAN_AGE_S - 60
    os.utime(orphan, (old, old))
    path = store.workspace / NAME
    modify_plot(path, rename_p3, scratch_dir=store.scratch_dir("plots"), cache=PlotCache())
    assert scratch_temps(store) == [in_flight.name]


# ---------------------------------------------------------------- SIGKILL mid-write


def bump(doc: PlotDoc) -> int:
    """The killable writer's change: count, and change the file's size too."""
    props = doc.features[doc.index_by_id()["p-3"]]["properties"]
    n: int = props.get("kill_counter", 0) + 1
    props["kill_counter"] = n
    props["padding"] = "x" * (n * 7919 % 20000)
    return n


KILLABLE = """
import sys
from pathlib import Path
from debrief_calc.formats.plotfile import modify_plot
from tests.test_plot_files_stay_theirs import bump
path, scratch = Path(sys.argv[1]), Path(sys.argv[2])
while True:
    _, n = modify_plot(path, bump, scratch_dir=scratch)
    print(n, flush=True)
"""


def version(n: int) -> dict[str, Any]:
    """What the plot holds after the killable writer's ``n``-th write (0: as copied)."""
    data: dict[str, Any] = json.loads((DATA / LARGE).read_bytes())
    if n:
        props = next(f for f in data["features"] if f.get("id") == "p-3")["properties"]
        props.update(kill_counter=n, padding="x" * (n * 7919 % 20000))
    return data


def read_counts(proc: subprocess.Popen[bytes], count: int, timeout: float) -> int:
    """The last write number the writer reported after ``count`` reports."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    last = 0
    for _ in range(count):
        ready, _, _ = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
        assert ready, "the writer made no progress"
        line = proc.stdout.readline()
        assert line, "the writer died"
        last = int(line)
    return last


def wait_for_a_new_temp(folder: Path, known: list[str], timeout: float) -> None:
    """Spin (bounded) until a write is in flight: a temporary file not in ``known`` exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if folder.is_dir() and set(os.listdir(folder)) - set(known):
            return
    raise AssertionError("the writer made no temporary file")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
def test_a_writer_killed_mid_write_leaves_the_plot_alone_in_its_folder(store: ArtifactStore) -> None:
    path = plot_with_mode(store, 0o640)
    scratch = store.scratch_dir("plots")
    # killed after some reported writes, or once a write's temporary file exists (mid-write)
    for reports, mid_write in ((1, False), (2, True), (4, False), (7, True), (11, True)):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLABLE, str(path), str(scratch)], cwd=REPO, stdout=subprocess.PIPE
        )
        try:
            reported = read_counts(proc, reports, timeout=60)
            if mid_write:
                wait_for_a_new_temp(scratch / "tmp", scratch_temps(store), timeout=60)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()
        assert os.listdir(path.parent) == [LARGE], "a lock or temporary file beside the plot"
        assert oct(stat.S_IMODE(path.stat().st_mode)) == oct(0o640)
        data = json.loads(path.read_bytes())
        n = next(f for f in data["features"] if f.get("id") == "p-3")["properties"]["kill_counter"]
        assert n >= reported and data == version(n), "neither the old plot nor a new one"
        (lock,) = (scratch / "locks").iterdir()
        with FileLock(str(lock), timeout=0):  # the dead writer's OS lock died with it
            pass
        _, next_n = modify_plot(path, bump, scratch_dir=scratch, cache=PlotCache())  # the next write works
        assert next_n == n + 1 and json.loads(path.read_bytes()) == version(n + 1)
    # what the kills left in the scratch folder, once old enough, goes with the next write
    left = scratch_temps(store)
    old = time.time() - ORPHAN_AGE_S - 60
    for name in left:
        os.utime(scratch / "tmp" / name, (old, old))
    modify_plot(path, rename_p3, scratch_dir=scratch, cache=PlotCache())
    assert scratch_temps(store) == []
    assert os.listdir(path.parent) == [LARGE]
