"""Outline throughput beside its baselines, measured in the same run.

    python benchmarks/bench_parse.py [--root DIR] [--runs N] [--ts-lines N]

Python: ``build_outline`` over every ``.py`` file under the roots (default: the installed
``mcp`` package and the standard library's ``json``, ``email``, ``asyncio`` and ``logging``) against a bare
``ast.parse`` + ``ast.walk`` of the same bytes. TypeScript: a synthetic corpus of realistic
modules (services, components, interfaces, enums, arrow functions, JSDoc) written to a temporary
folder, ``build_outline`` against a bare tree-sitter ``parser.parse``. Files are read into
memory first, so only parsing is timed; each figure is the median of several runs, in wall-clock
and in CPU time (``time.process_time``, which other work on a shared machine does not inflate).

``bench_llmem.py`` times the Python figure (and the end-to-end parse) with these functions;
``run_all.py`` takes the TypeScript figure from :func:`typescript_section`.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import Section

from llmem.code.outline import build_outline
from llmem.code.outline.treesitter import parser_for

TS_MODULE = """\
import {{ Injectable, Inject }} from "@angular/core";
import type {{ HttpClient, HttpParams }} from "@angular/common/http";
import {{ Observable, of, throwError }} from "rxjs";
import {{ catchError, map, retry }} from "rxjs/operators";
import * as log from "../util/log";

/** How often a request is retried before giving up. */
export const MAX_RETRIES_{i} = 3;
const CACHE_TTL_MS = 60_000;

/** An item as the API returns it. */
export interface Item{i} {{
  id: string;
  name: string;
  price: number;
  tags?: string[];
  updatedAt: Date;
}}

export type ItemId{i} = Item{i}["id"];
export type Sorter{i} = (a: Item{i}, b: Item{i}) => number;

export enum Status{i} {{
  Active = "active",
  Archived = "archived",
  Deleted = "deleted",
}}

interface CacheEntry {{
  value: Item{i}[];
  expires: number;
}}

/**
 * Loads items, caches them for a minute and retries transient failures.
 */
@Injectable({{ providedIn: "root" }})
export class ItemService{i} {{
  private readonly cache = new Map<string, CacheEntry>();
  private pending = 0;

  constructor(
    private readonly http: HttpClient,
    @Inject("API_URL") private readonly baseUrl: string,
  ) {{}}

  /** All items matching the query, newest first. */
  list(query: string, status: Status{i} = Status{i}.Active): Observable<Item{i}[]> {{
    const key = `${{query}}|${{status}}`;
    const hit = this.cache.get(key);
    if (hit && hit.expires > Date.now()) {{
      return of(hit.value);
    }}
    this.pending += 1;
    const params = {{ q: query, status }} as unknown as HttpParams;
    return this.http.get<Item{i}[]>(`${{this.baseUrl}}/items`, {{ params }}).pipe(
      retry(MAX_RETRIES_{i}),
      map((items) => items.sort(byUpdated{i})),
      map((items) => {{
        this.cache.set(key, {{ value: items, expires: Date.now() + CACHE_TTL_MS }});
        this.pending -= 1;
        return items;
      }}),
      catchError((err: unknown) => {{
        this.pending -= 1;
        log.error("list failed", err);
        return throwError(() => err);
      }}),
    );
  }}

  async get(id: ItemId{i}): Promise<Item{i} | undefined> {{
    for (const entry of this.cache.values()) {{
      const found = entry.value.find((item) => item.id === id);
      if (found) {{
        return found;
      }}
    }}
    const response = await fetch(`${{this.baseUrl}}/items/${{encodeURIComponent(id)}}`);
    if (!response.ok) {{
      return undefined;
    }}
    return (await response.json()) as Item{i};
  }}

  get busy(): boolean {{
    return this.pending > 0;
  }}

  clear(): void {{
    this.cache.clear();
  }}
}}

/** Newest first. */
export function byUpdated{i}(a: Item{i}, b: Item{i}): number {{
  return b.updatedAt.getTime() - a.updatedAt.getTime();
}}

export const totalPrice{i} = (items: readonly Item{i}[]): number =>
  items.reduce((sum, item) => sum + item.price, 0);

export function groupByTag{i}(items: Item{i}[]): Record<string, Item{i}[]> {{
  const groups: Record<string, Item{i}[]> = {{}};
  for (const item of items) {{
    for (const tag of item.tags ?? []) {{
      (groups[tag] ??= []).push(item);
    }}
  }}
  return groups;
}}

export default ItemService{i};
"""


Files = list[tuple[str, bytes]]
TS_TARGET = 100_000  # TypeScript outline lines/s (llmem.md)
PY_TARGET = 1.5  # Python outlines within 1.5x of a bare ast walk (llmem.md)


class Timing:
    """Median wall-clock and CPU seconds of several runs (CPU time shrugs off a busy machine)."""

    def __init__(self) -> None:
        self.walls: list[float] = []
        self.cpus: list[float] = []

    def measure(self, fn: Callable[[], object]) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        self.cpus.append(time.process_time() - cpu)
        self.walls.append(time.perf_counter() - wall)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


def compare(*fns: Callable[[], object], runs: int) -> list[Timing]:
    """Alternate the functions run by run, so that a burst of load elsewhere hits all alike."""
    timings = [Timing() for _ in fns]
    for _ in range(runs):
        for timing, fn in zip(timings, fns, strict=True):
            timing.measure(fn)
    return timings


def load(roots: list[Path], suffix: str) -> Files:
    """``(path relative to the root's parent, bytes)`` of every ``suffix`` file under ``roots``."""
    files: Files = []
    for root in roots:
        for path in sorted(root.rglob(f"*{suffix}")):
            if path.is_file() and "__pycache__" not in path.parts:
                files.append((path.relative_to(root.parent).as_posix(), path.read_bytes()))
    return files


def lines_of(files: Files) -> int:
    return sum(data.count(b"\n") for _, data in files)


def bare_ast(files: Files) -> None:
    for _, data in files:
        for _node in ast.walk(ast.parse(data)):
            pass


def outlines(files: Files) -> None:
    for rel, data in files:
        build_outline(rel, data)


def python_roots() -> list[Path]:
    """A real Python tree: the installed ``mcp`` package and four packages of the stdlib."""
    import asyncio
    import email
    import logging

    import mcp

    return [Path(m.__file__).parent for m in (mcp, json, email, asyncio, logging) if m.__file__]


def typescript_files(lines: int) -> Files:
    """A synthetic corpus of realistic TypeScript modules, about ``lines`` lines."""
    one_module = TS_MODULE.format(i=0).count("\n")
    return [(f"ts/item_service_{i}.ts", TS_MODULE.format(i=i).encode()) for i in range(max(1, lines // one_module))]


def compare_typescript(files: Files, runs: int) -> tuple[Timing, Timing]:
    """(bare tree-sitter ``parser.parse``, ``build_outline``) over ``files``, alternated."""
    ts_parser = parser_for("typescript")
    outlines(files[:1])  # warm up imports and the grammar
    bare, ours = compare(lambda: [ts_parser.parse(data) for _, data in files], lambda: outlines(files), runs=runs)
    return bare, ours


def typescript_section(quick: bool) -> Section:
    """llmem.md's TypeScript figure: outline lines/s beside a bare tree-sitter parse."""
    section = Section("llmem-mcp")
    files = typescript_files(5_000 if quick else 150_000)
    runs = 1 if quick else 5
    bare, ours = section.stage("typescript", lambda: compare_typescript(files, runs))
    lines = lines_of(files)
    section.add(
        f"typescript outline lines/s, {len(files)} files, {lines:,} lines (>= {TS_TARGET:,}/s)",
        f"{lines / ours.wall:,.0f}/s",
        f"{lines / bare.wall:,.0f}/s",
        f"{ours.wall / bare.wall:.2f}x",
    )
    section.add(
        "  same in CPU time (process_time)",
        f"{lines / ours.cpu:,.0f}/s",
        f"{lines / bare.cpu:,.0f}/s",
        f"{ours.cpu / bare.cpu:.2f}x",
    )
    section.target(
        "typescript outline throughput",
        lines / ours.wall >= TS_TARGET,
        f"{lines / ours.wall:,.0f} lines/s wall, {lines / ours.cpu:,.0f} cpu "
        f"(bare tree-sitter parse {lines / bare.wall:,.0f} lines/s; median of {runs})",
    )
    return section


def _row(name: str, files: int, lines: int, t: Timing) -> str:
    return (
        f"| {name:<28} | {files:>6} | {lines:>8} | {files / t.wall:>10,.0f} | {lines / t.wall:>11,.0f} "
        f"| {lines / t.cpu:>11,.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, action="append", help="a folder of Python files (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ts-lines", type=int, default=150_000, help="size of the synthetic TS corpus")
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root] if args.root else python_roots()

    py_files = load(roots, ".py")
    py_lines = lines_of(py_files)
    outlines(py_files)  # warm up imports and caches
    bare_py, ours_py = compare(lambda: bare_ast(py_files), lambda: outlines(py_files), runs=args.runs)

    ts_files = typescript_files(args.ts_lines)
    ts_lines = lines_of(ts_files)
    bare_ts, ours_ts = compare_typescript(ts_files, args.runs)

    print(f"Python roots: {', '.join(str(r) for r in roots)}")
    print(f"TypeScript: {len(ts_files)} generated modules; median of {args.runs} runs\n")
    header = f"| {'what':<28} | {'files':>6} | {'lines':>8} | {'files/s':>10} | {'lines/s':>11} | {'lines/s cpu':>11} |"
    print(header)
    print("|" + "|".join("-" * (len(cell) + 2) for cell in header.strip("| ").split(" | ")) + "|")
    print(_row("python: ast.parse + ast.walk", len(py_files), py_lines, bare_py))
    print(_row("python: build_outline", len(py_files), py_lines, ours_py))
    print(_row("typescript: parser.parse", len(ts_files), ts_lines, bare_ts))
    print(_row("typescript: build_outline", len(ts_files), ts_lines, ours_ts))
    print()
    print("ratio = our time / bare time   wall    cpu")
    print(
        f"python (target <= {PY_TARGET})          {ours_py.wall / bare_py.wall:4.2f}   {ours_py.cpu / bare_py.cpu:4.2f}"
    )
    print(f"typescript                      {ours_ts.wall / bare_ts.wall:4.2f}   {ours_ts.cpu / bare_ts.cpu:4.2f}")
    print(
        f"typescript outline lines/s (target >= {TS_TARGET:,}): "
        f"{ts_lines / ours_ts.wall:,.0f} wall, {ts_lines / ours_ts.cpu:,.0f} cpu"
    )


if __name__ == "__main__":
    main()
