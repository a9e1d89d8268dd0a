"""Plot files: filename rules, lossless load and save, the parse cache, locked read-modify-write."""

from __future__ import annotations

import builtins
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debrief_calc.errors import Conflict, InvalidFilename, PlotNotFound, PlotUnreadable
from debrief_calc.formats.jsonfmt import JsonFormat
from debrief_calc.formats.plotfile import (
    PlotCache,
    PlotDoc,
    create_plot_file,
    list_plot_files,
    load_plot,
    modify_plot,
    plot_title,
    save_plot,
    validate_plot_filename,
)

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "plots"
REAL_PLOTS = ["large-sample.plot.json", "sample.plot.json", "featurecollection-sample.json"]


def copy_plot(tmp_path: Path, name: str = "large-sample.plot.json", as_name: str | None = None) -> Path:
    target = tmp_path / (as_name or (name if name.endswith(".plot.json") else "fc.plot.json"))
    shutil.copyfile(DATA / name, target)
    return target


def scratch_of(plot: Path) -> Path:
    """The scratch folder of a store in the plot's folder (``.llmem/scratch/plots``)."""
    return plot.parent / ".llmem" / "scratch" / "plots"


def key_orders(value: Any) -> Any:
    """The value with every object replaced by its (keys, children) so key order is compared."""
    if isinstance(value, dict):
        return [[k, key_orders(v)] for k, v in value.items()]
    if isinstance(value, list):
        return [key_orders(v) for v in value]
    return [type(value).__name__, value]


# ---------------------------------------------------------------- lossless


@pytest.mark.parametrize("name", REAL_PLOTS)
def test_load_and_save_of_a_real_plot_keeps_value_key_order_and_odd_geometry(tmp_path: Path, name: str) -> None:
    path = copy_plot(tmp_path, name)
    original = path.read_bytes()
    doc = load_plot(path)
    cache = PlotCache()
    new = save_plot(path, doc.data, fmt=doc.fmt, scratch_dir=scratch_of(path), cache=cache)
    doc.data["features"].clear()  # the caller's value, not the cached one
    assert cache.get(path) is new and new.features
    written = path.read_bytes()
    assert json.loads(written) == json.loads(original)
    assert key_orders(json.loads(written)) == key_orders(json.loads(original))
    assert new.revision == load_plot(path).revision
    if name != "featurecollection-sample.json":  # Debrief's own layout: the very same bytes
        assert written == original


def test_large_sample_keeps_empty_polygon_and_unknown_members(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    modify_plot(
        path, lambda d: d.set_viewport([-6.0, 35.0, -1.0, 37.0]), scratch_dir=scratch_of(path), cache=PlotCache()
    )
    data = json.loads(path.read_bytes())
    time_meta = next(f for f in data["features"] if f["id"] == "debrief-time-metadata")
    assert time_meta["geometry"] == {"type": "Polygon", "coordinates": [[]]}
    zone = next(f for f in data["features"] if f["id"] == "z-1")
    assert zone["properties"]["specifics"] == {
        "shapeType": "circle",
        "origin": [-3.5822505234375, 36],
        "radiusM": 21000,
    }
    assert data["bbox"] == [-6.831053175368908, 35.25091466932183, -0.5010858706181125, 36.58891965401024]


def test_no_op_modify_does_not_write(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    before = path.stat()
    doc, result = modify_plot(path, lambda d: "nothing", scratch_dir=scratch_of(path), cache=PlotCache())
    after = path.stat()
    assert result == "nothing"
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    assert doc.revision == load_plot(path).revision


LAYOUTS: list[dict[str, Any]] = [
    {"indent": 2},
    {"indent": 4},
    {"indent": "\t"},
    {"indent": 0},
    {},
    {"separators": (",", ":")},
    {"indent": 2, "ensure_ascii": True},
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=[repr(x) for x in LAYOUTS])
@pytest.mark.parametrize("newline", ["", "\n"])
def test_detected_layout_is_kept_through_a_change(tmp_path: Path, layout: dict[str, Any], newline: str) -> None:
    data = json.loads((DATA / "sample.plot.json").read_bytes())
    data["features"][0]["properties"]["name"] = "Lóndon"
    data["properties"] = {"name": "Café plot", "n": 1, "x": 1.0, "tiny": 1e-7, "big": 12345678901234567890}
    kwargs = {"ensure_ascii": False} | layout
    path = tmp_path / "layout.plot.json"
    path.write_bytes((json.dumps(data, **kwargs) + newline).encode())

    def rename(doc: PlotDoc) -> None:
        doc.features[1]["properties"]["name"] = "Paris, France"

    modify_plot(path, rename, scratch_dir=scratch_of(path), cache=PlotCache())
    data["features"][1]["properties"]["name"] = "Paris, France"
    assert path.read_bytes() == (json.dumps(data, **kwargs) + newline).encode()


def test_numbers_keep_their_json_type(tmp_path: Path) -> None:
    path = tmp_path / "n.plot.json"
    path.write_text('{"type": "FeatureCollection", "features": [], "a": [1, 1.0, -0.0, 0.1, 1e-07, 1e+300, 3]}')
    modify_plot(path, lambda d: d.data.__setitem__("b", True), scratch_dir=scratch_of(path), cache=PlotCache())
    assert path.read_text() == (
        '{"type": "FeatureCollection", "features": [], "a": [1, 1.0, -0.0, 0.1, 1e-07, 1e+300, 3], "b": true}'
    )


def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "win.plot.json"
    text = json.dumps({"type": "FeatureCollection", "features": [{"type": "Feature", "id": 1}]}, indent=2)
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode() + b"\r\n")
    modify_plot(path, lambda d: d.features[0].__setitem__("id", 2), scratch_dir=scratch_of(path), cache=PlotCache())
    assert (
        path.read_bytes()
        == b"\xef\xbb\xbf" + text.replace('"id": 1', '"id": 2').replace("\n", "\r\n").encode() + b"\r\n"
    )


# ---------------------------------------------------------------- filenames


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "sub" / "deeper").mkdir(parents=True)
    (ws / "a.plot.json").write_text('{"type": "FeatureCollection", "features": []}')
    (ws / "sub" / "deeper" / "b c é.plot.json").write_text('{"type": "FeatureCollection", "features": []}')
    secret = tmp_path / "ws_secret"
    secret.mkdir()
    (secret / "x.plot.json").write_text('{"type": "FeatureCollection", "features": []}')
    (ws / "out.plot.json").symlink_to(secret / "x.plot.json")
    (ws / "outdir").symlink_to(secret)
    (ws / "notes.txt").write_text("secret")
    (ws / "notes.plot.json").symlink_to(ws / "notes.txt")
    (ws / "alias.plot.json").symlink_to(ws / "a.plot.json")
    return ws


HOSTILE = [
    "../ws_secret/x.plot.json",
    "sub/../../ws_secret/x.plot.json",
    "/etc/passwd.plot.json",
    "out.plot.json",
    "outdir/x.plot.json",
    "a.plot.json\x00.txt",
    "C:\\x.plot.json",
    "C:/x.plot.json",
    "\\\\server\\share\\x.plot.json",
    "//server/share/x.plot.json",
    "sub\\a.plot.json",
    "a.json",
    "a.plot.json.bak",
    "notes.txt",
    "notes.plot.json",
    ".plot.json",
    ".hidden/a.plot.json",
    "sub//a.plot.json",
    "./a.plot.json",
    "",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_filenames_are_refused_without_reading(
    workspace: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_reading(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a file was opened while validating a filename")

    monkeypatch.setattr(builtins, "open", no_reading)
    monkeypatch.setattr(Path, "open", no_reading)
    with pytest.raises(InvalidFilename) as info:
        validate_plot_filename(workspace, name)
    assert info.value.code == "INVALID_FILENAME"
    assert info.value.details["rpc_code"] == -32602
    assert info.value.details["rule"]
    assert ".plot.json" in info.value.message  # says what to give instead


def test_absolute_workspace_path_given_as_absolute_is_refused(workspace: Path) -> None:
    with pytest.raises(InvalidFilename, match="absolute"):
        validate_plot_filename(workspace, str(workspace / "a.plot.json"))


def test_good_filenames_resolve_inside(workspace: Path) -> None:
    root = workspace.resolve()
    assert validate_plot_filename(workspace, "a.plot.json") == root / "a.plot.json"
    assert validate_plot_filename(workspace, "sub/deeper/b c é.plot.json") == root / "sub/deeper/b c é.plot.json"
    assert validate_plot_filename(workspace, "alias.plot.json") == root / "a.plot.json"
    assert validate_plot_filename(workspace, "new.plot.json") == root / "new.plot.json"  # may not exist yet


def test_listing_finds_plots_in_subfolders_only_inside(workspace: Path) -> None:
    (workspace / ".llmem").mkdir()
    (workspace / ".llmem" / "h.plot.json").write_text("{}")
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "n.plot.json").write_text("{}")
    assert list_plot_files(workspace) == ["a.plot.json", "alias.plot.json", "sub/deeper/b c é.plot.json"]


def test_plot_title(tmp_path: Path) -> None:
    assert plot_title(copy_plot(tmp_path, "featurecollection-sample.json"), cache=PlotCache()) == "Sample Collection"
    assert plot_title(copy_plot(tmp_path, "sample.plot.json"), cache=PlotCache()) == "sample"
    bad = tmp_path / "broken.plot.json"
    bad.write_text("{")
    assert plot_title(bad, cache=PlotCache()) == "broken"


# ---------------------------------------------------------------- errors


def test_missing_plot_is_plot_not_found(tmp_path: Path) -> None:
    with pytest.raises(PlotNotFound) as info:
        PlotCache().get(tmp_path / "gone.plot.json", name="gone.plot.json")
    assert "gone.plot.json" in info.value.message
    assert info.value.details["rpc_code"] == -32002


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"type": "FeatureCollection",\n "features": [}', "not valid JSON"),
        (b"", "not valid JSON"),
        (b'{"type": "\x80"}', "not UTF-8"),
        (b"[]", "not a FeatureCollection"),
        (b'{"type": "Feature", "geometry": null, "properties": {}}', "not a FeatureCollection"),
        (b'{"type": "FeatureCollection", "features": {}}', 'no \\"features\\" list'),
        (b'{"type": "FeatureCollection", "features": [1]}', "features\\[0\\]"),
    ],
)
def test_unreadable_plots_say_why(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.plot.json"
    path.write_bytes(content)
    with pytest.raises(PlotUnreadable, match=problem) as info:
        load_plot(path)
    assert info.value.details["filename"] == "bad.plot.json"
    assert info.value.details["rpc_code"] == -32010


def test_json_error_gives_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.plot.json"
    path.write_bytes(b'{"type": "FeatureCollection",\n "features": [}')
    with pytest.raises(PlotUnreadable) as info:
        load_plot(path)
    assert (info.value.details["line"], info.value.details["column"]) == (2, 15)


def test_folder_named_like_a_plot_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "dir.plot.json").mkdir()
    with pytest.raises(PlotUnreadable, match=r"folder|not a regular file"):
        load_plot(tmp_path / "dir.plot.json")


# ---------------------------------------------------------------- cache


def test_cache_parses_once_and_sees_external_edits(tmp_path: Path) -> None:
    path = copy_plot(tmp_path, "sample.plot.json")
    cache = PlotCache()
    first = cache.get(path)
    assert cache.get(path) is first
    assert cache.parse_count == 1

    data = json.loads(path.read_bytes())
    data["features"][0]["properties"]["name"] = "Londres"
    path.write_text(json.dumps(data, indent=2))
    assert cache.get(path).features[0]["properties"]["name"] == "Londres"
    assert cache.parse_count == 2

    # same size, only the mtime moves
    raw = path.read_bytes().replace(b"Londres", b"Lundres")
    st = path.stat()
    path.write_bytes(raw)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert cache.get(path).features[0]["properties"]["name"] == "Lundres"
    assert cache.parse_count == 3


def test_cached_doc_is_frozen(tmp_path: Path) -> None:
    doc = PlotCache().get(copy_plot(tmp_path))
    with pytest.raises(RuntimeError, match="modify_plot"):
        doc.set_time_state(
            {"current": "2024-01-01T00:00:00Z", "start": "2024-01-01T00:00:00Z", "end": "2024-01-02T00:00:00Z"}
        )


def test_failed_change_touches_neither_file_nor_cache(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    cache = PlotCache()
    before_doc = cache.get(path)
    before_bytes = path.read_bytes()
    snapshot = json.loads(before_bytes)

    def break_then_fail(doc: PlotDoc) -> None:
        doc.features[0]["properties"]["name"] = "CHANGED"
        doc.features.pop()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        modify_plot(path, break_then_fail, scratch_dir=scratch_of(path), cache=cache)
    assert path.read_bytes() == before_bytes
    assert cache.get(path) is before_doc
    assert before_doc.data == snapshot


def test_in_place_change_of_a_feature_is_written_and_cached(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    cache = PlotCache()

    def rename(doc: PlotDoc) -> None:
        doc.features[2]["properties"]["name"] = "LEOPOLD II"

    new, _ = modify_plot(path, rename, scratch_dir=scratch_of(path), cache=cache)
    assert json.loads(path.read_bytes())["features"][2]["properties"]["name"] == "LEOPOLD II"
    assert cache.get(path) is new
    assert cache.parse_count == 1
    assert new.revision != load_plot(DATA / "large-sample.plot.json").revision


def test_shallow_draft_replaces_features_and_reuses_the_rest(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    cache = PlotCache()
    base = cache.get(path)
    snapshot = json.loads(path.read_bytes())

    def replace_zone(doc: PlotDoc) -> None:
        i = doc.index_by_id()["z-2"]
        doc.features[i] = {**doc.features[i], "properties": {"name": "renamed"}}

    new, _ = modify_plot(path, replace_zone, scratch_dir=scratch_of(path), cache=cache, shallow=True)
    assert base.data == snapshot  # the shared doc was not touched
    assert new.features[0] is base.features[0]
    snapshot["features"][5]["properties"] = {"name": "renamed"}
    assert json.loads(path.read_bytes()) == snapshot
    again, _ = modify_plot(path, lambda d: None, scratch_dir=scratch_of(path), cache=cache, shallow=True)
    assert again is new


def test_expected_revision_conflict(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    cache = PlotCache()
    rev = cache.get(path).revision
    new, _ = modify_plot(
        path,
        lambda d: d.set_viewport([-6, 35, -2, 37]),
        expected_revision=rev,
        scratch_dir=scratch_of(path),
        cache=cache,
    )
    before = path.read_bytes()
    with pytest.raises(Conflict) as info:
        modify_plot(
            path,
            lambda d: d.set_viewport([-7, 35, -2, 37]),
            expected_revision=rev,
            scratch_dir=scratch_of(path),
            cache=cache,
        )
    assert info.value.details["revision"] == new.revision
    assert info.value.details["rpc_code"] == -32009
    assert path.read_bytes() == before


# ---------------------------------------------------------------- time and viewport state


def test_time_and_viewport_state_round_trip(tmp_path: Path) -> None:
    large = PlotCache().get(copy_plot(tmp_path))
    assert large.get_time_state() == {
        "current": "2024-11-14T16:16:53.661Z",
        "start": "2024-11-14T16:16:53.661Z",
        "end": "2024-11-15T10:17:00.000Z",
    }
    vp = large.get_viewport()
    assert vp is not None
    assert vp["bounds"] == pytest.approx([-5.072319522993518, 35.22274764030855, -2.259819522993518, 36.62899764030855])

    path = copy_plot(tmp_path, "sample.plot.json")
    state = {"current": "2024-01-01T12:00:00Z", "start": "2024-01-01T00:00:00Z", "end": "2024-01-02T00:00:00Z"}
    doc, _ = modify_plot(path, lambda d: d.set_time_state(state), scratch_dir=scratch_of(path), cache=PlotCache())
    assert doc.get_time_state() == state
    written = json.loads(path.read_bytes())["features"][-1]
    assert written == {
        "type": "Feature",
        "id": "debrief-time-metadata",
        "geometry": {"type": "Polygon", "coordinates": [[]]},
        "properties": {"dataType": "metadata", "metadataType": "time", **state},
    }
    doc, _ = modify_plot(
        path, lambda d: d.set_time_state(**{**state, "current": "2024-01-01T13:00:00Z"}), scratch_dir=scratch_of(path)
    )
    assert doc.get_time_state() == {**state, "current": "2024-01-01T13:00:00Z"}
    doc, _ = modify_plot(
        path, lambda d: d.set_viewport({"bounds": [1, 2, 3, 4]}), scratch_dir=scratch_of(path), cache=PlotCache()
    )
    vp_feature = doc.get_feature("debrief-viewport-metadata")
    assert vp_feature is not None
    assert vp_feature["geometry"]["coordinates"] == [[[1, 2], [3, 2], [3, 4], [1, 4], [1, 2]]]
    assert doc.get_viewport() == {"bounds": [1, 2, 3, 4]}
    assert doc.index_by_id()["debrief-viewport-metadata"] == 6  # updated where it was


# ---------------------------------------------------------------- processes

WORKER = """
import sys
from pathlib import Path
from debrief_calc.formats.plotfile import modify_plot
from debrief_calc.plots.commands import apply_command, apply_to_plot
path, tag, n, scratch = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
for i in range(n):
    feature = {"type": "Feature", "id": f"{tag}-{i}", "geometry": {"type": "Point", "coordinates": [i, 1]},
               "properties": {"dataType": "reference-point", "name": f"{tag} {i}"}}
    command = {"command": "addFeatures", "payload": [feature]}
    if i % 2:  # both the deep-copy and the shallow draft
        modify_plot(path, lambda d: apply_command(d.data, command), scratch_dir=scratch)
    else:
        apply_to_plot(path, command, scratch_dir=scratch)
"""


@pytest.mark.slow
def test_eight_processes_lose_no_write(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), f"w{k}", "25", str(scratch_of(path))],
            cwd=REPO,
            stderr=subprocess.PIPE,
        )
        for k in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    data = json.loads(path.read_bytes())
    ids = [str(f["id"]) for f in data["features"]]
    added = [i for i in ids if i.startswith("w")]
    assert len(data["features"]) == 17 + 200
    assert sorted(added) == sorted(f"w{k}-{i}" for k in range(8) for i in range(25))


KILLABLE = """
import sys
from pathlib import Path
from debrief_calc.plots.commands import apply_to_plot
path, scratch = Path(sys.argv[1]), Path(sys.argv[2])
i = 0
while True:
    i += 1
    name = "x" * (i % 7000)  # the file changes size too
    cmd = {"command": "updateFeatures", "payload": [{"type": "Feature", "id": "p-3",
           "geometry": {"type": "Point", "coordinates": [i % 180, 1]}, "properties": {"name": name}}]}
    apply_to_plot(path, cmd, scratch_dir=scratch)
    print(i, flush=True)
"""


def _read_lines(proc: subprocess.Popen[bytes], count: int, timeout: float) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    for _ in range(count):
        ready, _, _ = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
        assert ready, "the writer made no progress"
        assert proc.stdout.readline(), "the writer died"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX only")
def test_writer_killed_mid_write_leaves_a_valid_file(tmp_path: Path) -> None:
    path = copy_plot(tmp_path)
    for round_ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLABLE, str(path), str(scratch_of(path))], cwd=REPO, stdout=subprocess.PIPE
        )
        try:
            _read_lines(proc, 3 + round_ * 4, timeout=60)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()
        doc = load_plot(path)  # raises if the file were half written
        assert len(doc.features) == 17
    # the dead writer's lock is gone with it
    modify_plot(path, lambda d: d.set_viewport([-6, 35, -2, 37]), scratch_dir=scratch_of(path), cache=PlotCache())


# ---------------------------------------------------------------- the encoder against the stdlib's

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=4), children, max_size=4)
        | st.lists(st.lists(st.floats(allow_nan=False) | st.integers(), min_size=1, max_size=3), max_size=4)
    ),
    max_leaves=30,
)


@given(value=json_values, indent=st.sampled_from([0, 1, 2, 4, "\t"]), ascii_only=st.booleans())
@settings(max_examples=300, deadline=None)
def test_layout_encoder_writes_what_json_dumps_writes(value: Any, indent: int | str, ascii_only: bool) -> None:
    fmt = JsonFormat(indent=indent, ensure_ascii=ascii_only)
    assert fmt.dumps(value) == json.dumps(value, indent=indent, ensure_ascii=ascii_only)


def test_a_plot_just_created_does_not_push_the_plot_being_read_out_of_the_cache(tmp_path: Path) -> None:
    """A windowed copy of a big plot writes a small new one: the big one (over the byte budget on its
    own, so cached alone) stays parsed for the next copy; the new one waits for its first read."""
    big = copy_plot(tmp_path)
    small = tmp_path / "small.plot.json"
    cache = PlotCache(max_bytes=big.stat().st_size // 2)
    read = cache.get(big)
    made = create_plot_file(
        small, {"type": "FeatureCollection", "features": []}, scratch_dir=scratch_of(small), cache=cache
    )
    assert cache.peek(big) is read and cache.peek(small) is None
    assert cache.get(small).revision == made.revision  # read: now the most recent, the big one goes
    assert cache.peek(big) is None
    again = PlotCache()  # within the budget both stay, the new one as the least recently used
    first = again.get(big)
    again.put(small, made)
    assert again.peek(big) is first and again.peek(small) is made
