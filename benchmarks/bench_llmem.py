"""llmem-mcp's figures (llmem.md "Figures to reach"), each beside its baseline in the same run.

    python benchmarks/bench_llmem.py [--quick]

1. cold start: ``llmem-mcp --workspace <tmp>`` vs ``benchmarks/baseline_server.py`` (spawn →
   ``initialize`` answer), interleaved run by run, medians.
2. warm round trip over stdio (real MCP client): ``get_artifact`` of a stored outline vs the
   baseline's ``echo``, the servers alive side by side and called alternately; p50 and p95.
3. parse throughput over a real Python tree (the installed ``mcp`` package plus the stdlib's
   ``json``, ``email``, ``asyncio`` and ``logging``, copied into a temporary workspace):
   ``build_outline`` and the end-to-end ``Llmem.parse`` (walk + outline + store) vs a bare
   ``ast.parse`` + ``ast.walk`` of the same files.
4. incremental re-run of ``Llmem.parse('.')`` over an unchanged tree of 10,000 files vs a bare
   ``os.walk`` + ``stat`` of the same tree.
5. ``Llmem.list`` over a store of 50,000 outline artifacts (500 folders × 100 real source
   files): a folder page, the root's first page and a page deep via a cursor, vs reading the
   page's 50 artifact files and stat-ing their sources.

Results are ratios (ours / baseline time): these machines are shared and noisy. ``--quick``
shrinks every size for a smoke run; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    CLIENT_MODE,
    Row,
    cold_start_interleaved,
    machine_line,
    percentiles,
    print_table,
    warm_roundtrips,
)

from llmem.artifacts import NAMESPACE, OUTLINE, PRODUCER, Llmem
from llmem.config import Limits
from llmem.outline import build_outline
from llmem.store import SCHEMA_VERSION, ArtifactStore, Fingerprint, now_iso

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline_server.py"

TARGETS = {
    "cold": 1.10,
    "warm": 1.5,
    "outline": 1.5,
    "rerun_s": 1.0,
    "list_ms": 50.0,
}


@dataclass(frozen=True)
class Sizes:
    cold_runs: int
    warm_calls: int
    parse_runs: int
    inc_shape: tuple[int, int, int]  # top folders × sub folders × files
    inc_reruns: int
    list_folders: int
    list_files: int
    list_calls: int


FULL = Sizes(
    cold_runs=20,
    warm_calls=500,
    parse_runs=5,
    inc_shape=(10, 10, 100),
    inc_reruns=3,
    list_folders=500,
    list_files=100,
    list_calls=100,
)
QUICK = Sizes(
    cold_runs=2,
    warm_calls=30,
    parse_runs=1,
    inc_shape=(3, 4, 25),
    inc_reruns=1,
    list_folders=20,
    list_files=60,
    list_calls=5,
)

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


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _s(seconds: float) -> str:
    return f"{seconds:.3f} s"


def _ratio(ours: float, base: float) -> str:
    return f"{ours / base:.2f}x" if base > 0 else "n/a"


def _verdict(name: str, ok: bool, detail: str) -> str:
    return f"  [{'met ' if ok else 'MISS'}] {name}: {detail}"


def _llmem_cmd(workspace: Path) -> list[str]:
    script = Path(sys.executable).with_name("llmem-mcp")
    if script.exists():
        return [str(script), "--workspace", str(workspace)]
    return [sys.executable, "-m", "llmem", "--workspace", str(workspace)]


def _service(workspace: Path, store_root: Path | None = None) -> Llmem:
    ws = workspace.resolve()
    return Llmem(ArtifactStore(store_root or ws / ".llmem", ws), Limits())


# -- 1 and 2: the server over stdio -----------------------------------------------------


def bench_server(tmp: Path, sizes: Sizes, rows: list[Row], verdicts: list[str]) -> None:
    ws = tmp / "ws_server"
    ws.mkdir()
    target = "pkg/decoder.py"
    (ws / "pkg").mkdir()
    shutil.copyfile(Path(json.__file__).with_name("decoder.py"), ws / target)
    svc = _service(ws)
    parsed = svc.parse(target)
    assert parsed["parsed"] == 1, parsed
    answer_chars = len(json.dumps(svc.get(target, OUTLINE, 0, None), ensure_ascii=False))

    ours = _llmem_cmd(ws)
    base = [sys.executable, str(BASELINE)]
    # The server's own log file (written on every call, a real cost) goes to the temp folder.
    env = {"LLMEM_LOG_DIR": str(tmp / "logs")}

    cold_ours, cold_base = cold_start_interleaved([ours, base], sizes.cold_runs, env=env)
    m_ours, m_base = statistics.median(cold_ours), statistics.median(cold_base)
    rows.append(
        (
            f"cold start, median of {sizes.cold_runs} interleaved (<= 1.10x)",
            _ms(m_ours),
            _ms(m_base),
            _ratio(m_ours, m_base),
        )
    )
    # Each run's pair was spawned back to back: the median of their ratios cancels slow drifts.
    paired = statistics.median(o / b for o, b in zip(cold_ours, cold_base, strict=True))
    p95_ours, p95_base = percentiles(cold_ours)[1], percentiles(cold_base)[1]
    rows.append(("  cold start p95 / median of per-run ratios", _ms(p95_ours), _ms(p95_base), f"{paired:.2f}x"))
    verdicts.append(
        _verdict(
            "cold start",
            m_ours / m_base <= TARGETS["cold"],
            f"{m_ours / m_base:.2f}x (median of per-run ratios {paired:.2f}x)",
        )
    )

    get_ours, echo_base, echo_same = warm_roundtrips(
        [
            (ours, "get_artifact", {"path": target}),
            (base, "echo", {"text": "ping"}),
            (base, "echo", {"text": "x" * answer_chars}),
        ],
        sizes.warm_calls,
        env=env,
    )
    (o50, o95), (b50, b95), (s50, s95) = percentiles(get_ours), percentiles(echo_base), percentiles(echo_same)
    n = sizes.warm_calls
    rows.append((f"warm get_artifact p50, {n} calls (<= 1.5x)", _ms(o50), _ms(b50), _ratio(o50, b50)))
    rows.append((f"warm get_artifact p95, {n} calls (<= 1.5x)", _ms(o95), _ms(b95), _ratio(o95, b95)))
    rows.append((f"  same, vs echo of {answer_chars:,} chars: p50", _ms(o50), _ms(s50), _ratio(o50, s50)))
    rows.append((f"  same, vs echo of {answer_chars:,} chars: p95", _ms(o95), _ms(s95), _ratio(o95, s95)))
    verdicts.append(
        _verdict(
            "warm round trip",
            o50 / b50 <= TARGETS["warm"],
            f"p50 {o50 / b50:.2f}x, p95 {o95 / b95:.2f}x vs 'ping' echo",
        )
    )


# -- 3: parse throughput ----------------------------------------------------------------


def _python_roots() -> list[Path]:
    import asyncio
    import email
    import logging

    import mcp

    return [Path(m.__file__).parent for m in (mcp, json, email, asyncio, logging) if m.__file__]


def _copy_python_tree(dest: Path) -> list[str]:
    rels: list[str] = []
    for root in _python_roots():
        for src in sorted(root.rglob("*.py")):
            if "__pycache__" in src.parts or not src.is_file():
                continue
            rel = Path(root.name, src.relative_to(root))
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / rel)
            rels.append(rel.as_posix())
    return sorted(rels)


def _bare_ast(ws: Path, rels: list[str]) -> None:
    for rel in rels:
        for _node in ast.walk(ast.parse((ws / rel).read_bytes())):
            pass


def _outlines(ws: Path, rels: list[str]) -> None:
    for rel in rels:
        build_outline(rel, (ws / rel).read_bytes())


def bench_parse(tmp: Path, sizes: Sizes, rows: list[Row], verdicts: list[str]) -> None:
    ws = tmp / "ws_parse"
    ws.mkdir()
    rels = _copy_python_tree(ws)
    nfiles = len(rels)
    nlines = sum((ws / r).read_bytes().count(b"\n") for r in rels)
    _outlines(ws, rels)  # warm imports and the page cache
    _bare_ast(ws, rels)
    bare: list[float] = []
    outl: list[float] = []
    e2e: list[float] = []
    result: dict[str, Any] = {}
    for _ in range(sizes.parse_runs):  # interleaved: baseline, outline, end-to-end, run by run
        start = time.perf_counter()
        _bare_ast(ws, rels)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        _outlines(ws, rels)
        outl.append(time.perf_counter() - start)
        shutil.rmtree(ws / ".llmem", ignore_errors=True)
        svc = _service(ws)  # a fresh store every run
        start = time.perf_counter()
        result = svc.parse(".")
        e2e.append(time.perf_counter() - start)
    if result.get("parsed") != nfiles:
        raise RuntimeError(f"Llmem.parse outlined {result.get('parsed')} of the {nfiles} files: {result}")
    b, o, e = statistics.median(bare), statistics.median(outl), statistics.median(e2e)
    label = f"{nfiles} files, {nlines:,} lines"
    rows.append(
        (
            f"parse outline, files/s ({label}) (<= 1.5x)",
            f"{nfiles / o:,.0f}/s",
            f"{nfiles / b:,.0f}/s",
            _ratio(o, b),
        )
    )
    rows.append(
        (
            f"parse end-to-end parse+store, files/s ({label})",
            f"{nfiles / e:,.0f}/s",
            f"{nfiles / b:,.0f}/s",
            _ratio(e, b),
        )
    )
    verdicts.append(_verdict("parse throughput (outline)", o / b <= TARGETS["outline"], f"{o / b:.2f}x"))
    verdicts.append(
        _verdict(
            "parse throughput (end-to-end, parse+store)",
            e / b <= TARGETS["outline"],
            f"{e / b:.2f}x (informative)",
        )
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


def bench_incremental(tmp: Path, sizes: Sizes, rows: list[Row], verdicts: list[str]) -> None:
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
    rows.append((f"re-run unchanged {total:,} files, median of {len(ours)} (< 1 s)", _s(o), _s(b), _ratio(o, b)))
    rows.append(
        (
            "  re-run counts parsed/unchanged/skipped/failed",
            f"{second['parsed']}/{second['unchanged']}/{second['skipped']}/{second['failed']}",
            f"first run {first_s:.1f} s",
            "",
        )
    )
    nothing_redone = second["parsed"] == 0 and second["unchanged"] == total
    verdicts.append(
        _verdict(
            "incremental re-run",
            o < TARGETS["rerun_s"] and nothing_redone,
            f"{o:.3f} s, parsed {second['parsed']}, unchanged {second['unchanged']} of {total}",
        )
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


def bench_list(tmp: Path, sizes: Sizes, rows: list[Row], verdicts: list[str]) -> None:
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
        if page["count"] != 50 or statuses != {"fresh"}:
            raise RuntimeError(f"{name}: expected 50 fresh entries, got {page['count']} with statuses {statuses}")
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
        rows.append((f"{name} p50 (< 50 ms)", _ms(o50), _ms(b50), _ratio(o50, b50)))
        rows.append((f"{name} p95", _ms(o95), _ms(b95), _ratio(o95, b95)))
    folder_p50 = percentiles(times[next(iter(queries))])[0]
    verdicts.append(
        _verdict(
            f"list_artifacts over {total:,} artifacts",
            folder_p50 * 1000 < TARGETS["list_ms"],
            f"folder page p50 {folder_p50 * 1000:.1f} ms; worst p50 of the three {worst * 1000:.1f} ms",
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a smoke run (figures mean nothing)")
    parser.add_argument("--tmp", type=Path, default=None, help="where the temporary workspaces go")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL

    print("llmem-mcp benchmarks" + (" (--quick: smoke sizes, figures mean nothing)" if args.quick else ""))
    print(machine_line())
    print(
        f"client: mcp Client over stdio, mode={CLIENT_MODE!r} (initialize handshake); "
        "ratio = ours / baseline time (lower is better)"
    )
    print(flush=True)
    rows: list[Row] = []
    verdicts: list[str] = []
    took: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="llmem-bench-", dir=args.tmp)).resolve()
    try:
        for stage in (bench_server, bench_parse, bench_incremental, bench_list):
            start = time.perf_counter()
            stage(tmp, sizes, rows, verdicts)
            took.append(f"{stage.__name__} {time.perf_counter() - start:.1f} s")
            print(f"  ({took[-1]})", file=sys.stderr, flush=True)
    finally:
        start = time.perf_counter()
        shutil.rmtree(tmp, ignore_errors=True)
        took.append(f"cleanup {time.perf_counter() - start:.1f} s")
    print_table(rows)
    print()
    print("targets:")
    for line in verdicts:
        print(line)
    print(f"stages: {', '.join(took)}")


if __name__ == "__main__":
    main()
