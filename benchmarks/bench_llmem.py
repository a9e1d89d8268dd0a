"""llmem-mcp's figures (llmem.md "Figures to reach"), each beside its baseline in the same run.

    python benchmarks/bench_llmem.py [--quick] [--tmp DIR]

1. cold start: ``llmem-mcp --workspace <tmp>`` vs ``benchmarks/baseline_server.py`` (spawn →
   ``initialize`` answer), interleaved run by run, medians.
2. warm round trip over stdio (real MCP client): ``get_artifact`` of a stored outline vs the
   baseline's ``echo``, the servers alive side by side and called alternately; p50 and p95. Then
   the same beside ``baseline_answer_server.py`` returning the very same answer (what the answer's
   size costs the SDK and the client), for that outline and one near the answer cap, and the
   standard outline again in the stateless era (the Python client's default mode).
3. parse throughput over a real Python tree (``bench_parse.python_roots``: the installed ``mcp``
   package plus the stdlib's ``json``, ``email``, ``asyncio`` and ``logging``): ``build_outline``
   of the files' bytes, and the end-to-end ``Llmem.parse`` (walk + read + outline + store) of a
   workspace holding a copy of them, vs a bare ``ast.parse`` + ``ast.walk`` of the same bytes;
   interleaved run by run (``bench_parse.compare``).
4. incremental re-run of ``Llmem.parse('.')`` over an unchanged tree of 10,000 files vs a bare
   ``os.walk`` + ``stat`` of the same tree.
5. ``Llmem.list`` over a store of 50,000 outline artifacts (500 folders × 100 real source
   files): a folder page, the root's first page and a page deep via a cursor, vs reading the
   page's 50 artifact files and stat-ing their sources.

Results are ratios (ours / baseline time): these machines are shared and noisy. ``--quick``
shrinks every size for a smoke run; its figures mean nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as harness
from _harness import Section, ms, percentiles, ratio, s
from bench_parse import PY_TARGET, bare_ast, compare, lines_of, load, outlines, python_roots

from llmem.code.artifacts import Llmem
from llmem.code.outline import build_outline
from llmem.code.parsing import NAMESPACE, OUTLINE, PRODUCER
from llmem.core.config import Limits
from llmem.core.envelope import Envelope
from llmem.core.store import SCHEMA_VERSION, ArtifactStore, Fingerprint, now_iso

TARGETS = {"rerun_s": 1.0, "list_ms": 50.0}


@dataclass(frozen=True)
class Sizes:
    """A full run's sizes, the specs' (``QUICK`` shrinks them for a smoke run)."""

    quick: bool = False
    parse_runs: int = 5
    inc_shape: tuple[int, int, int] = (10, 10, 100)  # top folders × sub folders × files: 10,000
    inc_reruns: int = 3
    list_folders: int = 500  # × list_files: 50,000 artifacts
    list_files: int = 100
    list_calls: int = 100


FULL = Sizes()
QUICK = Sizes(True, parse_runs=1, inc_shape=(3, 4, 25), inc_reruns=1, list_folders=20, list_files=60, list_calls=5)

SMALL_MODULE = '''\
"""Module {n}: a small piece of a larger package."""

from __future__ import annotations

import os
from dataclasses import dataclass

LIMIT_{n} = {n}


@dataclass
class Record{n}:
    """One record."""

    name: str
    size: int = 0

    def describe(self) -> str:
        return f"{{self.name}} ({{self.size}})"


def load_{n}(path: str) -> list[Record{n}]:
    """Records of the files under ``path``."""
    return [Record{n}(e.name, e.stat().st_size) for e in os.scandir(path) if e.is_file()]
'''


def _service(workspace: Path, store_root: Path | None = None) -> Llmem:
    ws = workspace.resolve()
    return Llmem(ArtifactStore(store_root or ws / ".llmem", ws), Limits())


# -- 1 and 2: the server over stdio -----------------------------------------------------


#: A real module whose outline answer is near the 20,000-character cap (about 17,000).
LARGE_SOURCE = Path(asyncio.__file__).with_name("streams.py")
LARGE_TARGET = "pkg/streams.py"


#: The answer baseline: a bare ``MCPServer`` returning a fixed answer (its JSON file comes last).
ANSWER_CMD = [sys.executable, str(Path(__file__).resolve().parent / "baseline_answer_server.py")]


def bench_server(tmp: Path, sizes: Sizes, section: Section) -> None:
    ws = tmp / "ws_server"
    ws.mkdir()
    target = "pkg/decoder.py"
    (ws / "pkg").mkdir()
    shutil.copyfile(Path(json.__file__).with_name("decoder.py"), ws / target)
    shutil.copyfile(LARGE_SOURCE, ws / LARGE_TARGET)
    svc = _service(ws)
    # Parsed before the cold starts, so that by the warm calls the artifacts are as old as a
    # user's usually are (a file changed in the last seconds is re-read on every call).
    assert svc.parse("pkg")["parsed"] == 2
    answer_chars = len(json.dumps(svc.get(target, OUTLINE, 0, None), ensure_ascii=False))

    # The server's own log file (written on every call, a real cost) goes to the temp folder.
    harness.add_server_figures(
        section,
        harness.server_cmd("llmem-mcp", ws),
        warm=[("get_artifact", "get_artifact", {"path": target})],
        quick=sizes.quick,
        echo_chars=answer_chars,
    )
    bench_answer_sizes(tmp, ws, svc, section, sizes)


def bench_answer_sizes(tmp: Path, ws: Path, svc: Llmem, section: Section, sizes: Sizes) -> None:
    """Warm ``get_artifact`` beside a bare ``MCPServer`` returning the very same answer.

    What the SDK and the client pay grows with the answer (the structured content is validated
    and serialised on both sides); the answer server pays just that, so the ratio to it is the
    server's own work. Done for the standard outline and for one near the answer cap, then the
    standard one again in the stateless era (the Python client's default mode).
    """
    targets = {"json/decoder.py": "pkg/decoder.py", "asyncio/streams.py": LARGE_TARGET}
    ours = harness.server_cmd("llmem-mcp", ws)
    specs: list[harness.RoundTripSpec] = []
    answer_chars = {}
    for name, target in targets.items():
        answer = Envelope(status="success", data=svc.get(target, OUTLINE, 0, None), nextAction="Done.")
        file = tmp / f"answer-{Path(target).stem}.json"
        file.write_text(answer.model_dump_json(exclude_none=True), encoding="utf-8")
        answer_chars[name] = len(file.read_text(encoding="utf-8"))
        specs += [(ours, "get_artifact", {"path": target}), ([*ANSWER_CMD, str(file)], "answer", {"text": target})]
    specs.append((harness.BASELINE_CMD, "echo", {"text": "ping"}))
    n = harness.WARM_CALLS[sizes.quick]
    times = harness.warm_roundtrips(specs, n)
    echo50 = percentiles(times[-1])[0]
    for i, name in enumerate(targets):
        o50, a50 = percentiles(times[2 * i])[0], percentiles(times[2 * i + 1])[0]
        label = f"warm get_artifact p50, {answer_chars[name]:,}-char answer ({name})"
        section.add(f"{label}, vs bare MCPServer with the same answer", ms(o50), ms(a50), ratio(o50, a50))
        section.add("  same, vs 'ping' echo", ms(o50), ms(echo50), ratio(o50, echo50))

    era = harness.warm_roundtrips(
        [
            (ours, "get_artifact", {"path": targets["json/decoder.py"]}),
            (harness.BASELINE_CMD, "echo", {"text": "ping"}),
        ],
        n,
        mode="auto",
    )
    (o50, o95), (b50, b95) = percentiles(era[0]), percentiles(era[1])
    target_x = harness.WARM_TARGET
    section.add(
        f"warm get_artifact p50, stateless era (mode='auto') (<= {target_x}x)", ms(o50), ms(b50), ratio(o50, b50)
    )
    section.add(
        f"warm get_artifact p95, stateless era (mode='auto') (<= {target_x}x)", ms(o95), ms(b95), ratio(o95, b95)
    )
    section.target(
        "warm get_artifact round trip, stateless era", o50 / b50 <= target_x, f"p50 {o50 / b50:.2f}x vs 'ping' echo"
    )


# -- 3: parse throughput ----------------------------------------------------------------


def bench_parse(tmp: Path, sizes: Sizes, section: Section) -> None:
    ws = tmp / "ws_parse"
    files = load(python_roots(), ".py")
    for rel, data in files:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(data)
    nfiles, nlines = len(files), lines_of(files)
    outlines(files)  # warm imports and caches
    bare_ast(files)
    result: dict[str, Any] = {}

    def end_to_end() -> None:
        nonlocal result
        shutil.rmtree(ws / ".llmem", ignore_errors=True)
        result = _service(ws).parse(".")  # a fresh store every run

    # Interleaved run by run: baseline, outline, end-to-end (walk + read + outline + store).
    bare, outl, e2e = compare(lambda: bare_ast(files), lambda: outlines(files), end_to_end, runs=sizes.parse_runs)
    if result.get("parsed") != nfiles:
        raise RuntimeError(f"Llmem.parse outlined {result.get('parsed')} of the {nfiles} files: {result}")
    b, o, e = bare.wall, outl.wall, e2e.wall
    label = f"{nfiles} files, {nlines:,} lines"
    section.add(
        f"parse outline, files/s ({label}) (<= {PY_TARGET}x)",
        f"{nfiles / o:,.0f}/s",
        f"{nfiles / b:,.0f}/s",
        ratio(o, b),
    )
    section.add(
        f"parse end-to-end parse+store, files/s ({label})", f"{nfiles / e:,.0f}/s", f"{nfiles / b:,.0f}/s", ratio(e, b)
    )
    section.target(
        "parse throughput (outline)", o / b <= PY_TARGET, f"{o / b:.2f}x wall, {outl.cpu / bare.cpu:.2f}x cpu"
    )
    section.target(
        "parse throughput (end-to-end, parse+store)",
        e / b <= PY_TARGET,
        f"{e / b:.2f}x wall, {e2e.cpu / bare.cpu:.2f}x cpu (informative)",
    )


# -- 4: incremental re-run ------------------------------------------------------------------


def _generate_tree(ws: Path, shape: tuple[int, int, int]) -> int:
    top, sub, files = shape
    n = 0
    for a in range(top):
        for b in range(sub):
            folder = ws / f"area{a:02d}" / f"part{b:02d}"
            folder.mkdir(parents=True)
            for c in range(files):
                (folder / f"mod_{c:03d}.py").write_text(SMALL_MODULE.format(n=n), encoding="utf-8")
                n += 1
    return n


def _walk_stat(folder: str) -> int:
    """The floor of an unchanged re-run: visit every folder and stat every file (dot-folders skipped)."""
    count = 0
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                count += _walk_stat(entry.path)
            else:
                entry.stat()
                count += 1
    return count


def bench_incremental(tmp: Path, sizes: Sizes, section: Section) -> None:
    ws = tmp / "ws_inc"
    ws.mkdir()
    total = _generate_tree(ws, sizes.inc_shape)
    svc = _service(ws)
    start = time.perf_counter()
    first = svc.parse(".")
    first_s = time.perf_counter() - start
    if first["parsed"] != total:
        raise RuntimeError(f"first parse outlined {first['parsed']} of {total} files: {first}")
    ours: list[float] = []
    base: list[float] = []
    second: dict[str, Any] = {}
    for _ in range(sizes.inc_reruns):
        start = time.perf_counter()
        second = _service(ws).parse(".")
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        _walk_stat(str(ws))
        base.append(time.perf_counter() - start)
    o, b = statistics.median(ours), statistics.median(base)
    section.add(f"re-run unchanged {total:,} files, median of {len(ours)} (< 1 s)", s(o), s(b), ratio(o, b))
    section.add(
        "  re-run counts parsed/unchanged/skipped/failed",
        f"{second['parsed']}/{second['unchanged']}/{second['skipped']}/{second['failed']}",
        f"first run {first_s:.1f} s",
        "",
    )
    nothing_redone = second["parsed"] == 0 and second["unchanged"] == total
    section.target(
        "incremental re-run",
        o < TARGETS["rerun_s"] and nothing_redone,
        f"{o:.3f} s, parsed {second['parsed']}, unchanged {second['unchanged']} of {total}",
    )


# -- 5: list_artifacts over a large store ------------------------------------------------


def _populate_store(ws: Path, folders: int, files: int) -> tuple[ArtifactStore, int]:
    """Real source files plus one outline artifact each, written in the exact format of ``put``.

    ``ArtifactStore.put`` would fsync and lock every one of them; the documents are identical.
    """
    store = ArtifactStore(ws / ".llmem", ws.resolve())
    template_data = SMALL_MODULE.format(n=0).encode()
    template = build_outline("template.py", template_data).model_dump(mode="json", exclude_defaults=False)
    provenance = {"producer": PRODUCER, "tool": "generate_artifact", "task": "parse", "parser": "ast"}
    stamp = now_iso()
    count = 0
    for f in range(folders):
        src_dir = ws / f"pkg{f:03d}"
        src_dir.mkdir()
        for m in range(files):
            key = f"pkg{f:03d}/mod_{m:03d}.py"
            src = ws / key
            data = SMALL_MODULE.format(n=count).encode()
            src.write_bytes(data)
            st = src.stat()
            fp = Fingerprint(len(data), st.st_mtime_ns, hashlib.sha256(data).hexdigest())
            content = dict(template, path=key, size=fp.size, sha256=fp.sha256)
            doc = {
                "schema": SCHEMA_VERSION,
                "namespace": NAMESPACE,
                "path": key,
                "kind": OUTLINE,
                "format": "json",
                "created_at": stamp,
                "updated_at": stamp,
                "provenance": provenance,
                "source": fp.to_dict(),
                "content": content,
            }
            file = store.artifact_file(NAMESPACE, key, OUTLINE)
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8"))
            count += 1
    return store, count


def _page_floor(store: ArtifactStore, page: dict[str, Any]) -> None:
    """The least a page costs: read every listed artifact file and stat its source."""
    for folder in page["folders"]:
        for entry in folder["entries"]:
            json.loads(store.artifact_file(NAMESPACE, entry["path"], OUTLINE).read_bytes())
            (store.workspace / entry["path"]).stat()


def bench_list(tmp: Path, sizes: Sizes, section: Section) -> None:
    ws = tmp / "ws_list"
    ws.mkdir()
    store, total = _populate_store(ws, sizes.list_folders, sizes.list_files)
    svc = Llmem(store, Limits())
    folder = "pkg123" if sizes.list_folders > 123 else f"pkg{sizes.list_folders // 2:03d}"
    deep_folder = f"pkg{int(sizes.list_folders * 0.8):03d}"
    # A cursor the server itself issued, deep in path order: resume the root listing after it.
    deep_cursor = svc.list(deep_folder, None, None, 50, None)["next_cursor"]
    assert deep_cursor, "the deep folder needs more than one page"
    queries = {
        f"list folder page ({folder}, 50 of {sizes.list_files})": (folder, None),
        "list root first page (50)": (".", None),
        f"list root page deep via cursor ({deep_folder}/…)": (".", deep_cursor),
    }
    pages = {name: svc.list(d, None, None, 50, c) for name, (d, c) in queries.items()}
    for name, page in pages.items():
        statuses = {k["status"] for f in page["folders"] for e in f["entries"] for k in e["kinds"]}
        # A page ends early rather than cut a folder that fits whole on the next one.
        if not 0 < page["count"] <= 50 or statuses != {"fresh"}:
            raise RuntimeError(f"{name}: expected up to 50 fresh entries, got {page['count']} with statuses {statuses}")
    times: dict[str, list[float]] = {name: [] for name in queries}
    floors: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(sizes.list_calls):  # interleaved: every query and its floor, call by call
        for name, (d, c) in queries.items():
            start = time.perf_counter()
            svc.list(d, None, None, 50, c)
            times[name].append(time.perf_counter() - start)
            start = time.perf_counter()
            _page_floor(store, pages[name])
            floors[name].append(time.perf_counter() - start)
    worst = 0.0
    for name in queries:
        (o50, o95), (b50, b95) = percentiles(times[name]), percentiles(floors[name])
        worst = max(worst, o50)
        section.add(f"{name} p50 (< 50 ms)", ms(o50), ms(b50), ratio(o50, b50))
        section.add(f"{name} p95", ms(o95), ms(b95), ratio(o95, b95))
    folder_p50 = percentiles(times[next(iter(queries))])[0]
    section.target(
        f"list_artifacts over {total:,} artifacts",
        folder_p50 * 1000 < TARGETS["list_ms"],
        f"folder page p50 {folder_p50 * 1000:.1f} ms; worst p50 of the three {worst * 1000:.1f} ms",
    )


def collect(tmp: Path, quick: bool) -> Section:
    """llmem-mcp's figures, each beside its baseline; workspaces under ``tmp``."""
    sizes = QUICK if quick else FULL
    section = Section("llmem-mcp")
    for name, stage in (
        ("server", bench_server),
        ("parse", bench_parse),
        ("incremental", bench_incremental),
        ("list", bench_list),
    ):
        section.stage(name, lambda stage=stage: stage(tmp, sizes, section))
    import bench_search  # search_artifacts on 50,000 artifacts (its own script too)

    section.stage("search", lambda: section.extend(bench_search.collect(tmp / "search", quick)))
    return section


def main() -> None:
    harness.script_main("llmem-mcp", __doc__, collect)


if __name__ == "__main__":
    main()
