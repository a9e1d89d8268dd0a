"""Smoke run of ``benchmarks/run_all.py --quick``: it runs and prints every figure and every target.

Timings are not checked (the figures of a ``--quick`` run mean nothing): only that each figure
row of each server and each target line is there, and the report's frame around them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests._browser import CHROMIUM

ROOT = Path(__file__).resolve().parents[1]
LLMEM, CALC, STATE = "llmem-mcp", "debrief-calc-mcp", "debrief-state-mcp"

# (server, how the figure starts, how many rows start so)
FIGURE_ROWS = [
    *((server, "cold start, median of", 1) for server in (LLMEM, CALC, STATE)),
    *((server, "cold start p95 / median of per-run ratios", 1) for server in (LLMEM, CALC, STATE)),
    (LLMEM, "warm get_artifact p50,", 4),  # the standard one, two beside the same answer, the stateless era
    (LLMEM, "warm get_artifact p95,", 2),
    (LLMEM, "same, vs echo of", 2),
    (LLMEM, "same, vs 'ping' echo", 2),
    (LLMEM, "parse outline, files/s", 1),
    (LLMEM, "parse end-to-end parse+store, files/s", 1),
    (LLMEM, "re-run unchanged", 1),
    (LLMEM, "re-run counts parsed/unchanged/skipped/failed", 1),
    (LLMEM, "list folder page", 2),
    (LLMEM, "list root first page (50) p50", 1),
    (LLMEM, "list root first page (50) p95", 1),
    (LLMEM, "list root page deep via cursor", 2),
    (LLMEM, "typescript outline lines/s", 1),
    (LLMEM, "same in CPU time", 1),
    (LLMEM, "first search, no cache", 1),
    (LLMEM, "first search of a new process (cache)", 1),
    (LLMEM, "same, a query of", 1),
    (LLMEM, "search p50:", 7),
    (LLMEM, "search p95:", 7),
    (LLMEM, "search after another process's change", 1),
    (LLMEM, "4 writing processes, this one searching after each write", 1),
    (LLMEM, "stdlib: ", 7),  # the line index built, the first search of a new server, four warm line searches,
    # an auto search of a name no symbol is named exactly
    (CALC, "warm list_tools p50,", 1),
    (CALC, "warm list_tools p95,", 1),
    (CALC, "same, vs echo of", 2),
    (CALC, "track-stats 20,000 fixes", 2),  # the first call and the warm p50
    (CALC, "closest-approach 2 x 5,000 fixes", 2),
    (CALC, "same warm p50, vs GeographicLib leg loop *1", 1),
    (CALC, "same warm p50, vs GeographicLib CPA scan *2", 1),
    (CALC, "same warm p50, vs CalcService.run in process", 2),
    (CALC, "tote 2 x 24,000 fixes at one time", 2),  # the first call and the warm p50
    (CALC, "same warm p50, vs one GeographicLib Inverse *1", 1),
    (CALC, "tote in process (CalcService.run), vs one Inverse", 1),
    (CALC, "the tote's own work (executor.run: no store, no MCP), vs one Inverse", 1),
    (CALC, "the tote's own work, vs reading both whole tracks (the tote before)", 1),
    (CALC, "track-legs 24,000 fixes", 2),
    (CALC, "same warm p50, vs numpy diff/arctan2 pass *2", 1),
    (CALC, "range-bearing on refs, windowed to 3,600 samples", 2),
    (CALC, "same warm p50, vs GeographicLib loop *3", 1),
    (CALC, "render_series 10,000 samples", 2),
    (CALC, "same warm p50, vs bare Pillow lines *4", 1),
    (CALC, "render_series relative-motion, 10,000 fixes by ref", 2),
    (CALC, "same warm p50, vs bare Pillow lines *6", 1),
    (CALC, "same in process (no MCP), vs bare Pillow lines *6", 1),
    (CALC, "closest-approach 2 x 24,000 fixes, every pass", 2),
    (CALC, "close-quarters 2 x 24,000 fixes within 2 nm", 2),
    (CALC, "same warm p50, vs one GeographicLib Inverse per fix", 2),
    (CALC, "the passes' and close quarters' own work (tracks read), vs one Inverse per fix *5", 1),
    (CALC, "accuracy: worst distance error,", 1),
    (CALC, "accuracy: p99 distance error,", 1),
    (CALC, "inverse of the", 1),
    (CALC, "pairs ours handed to GeographicLib", 1),
    (STATE, "warm get_selection (", 4),  # p50 and p95, on large-sample and on the big plot
    (STATE, "apply_command setSelection p50,", 1),
    (STATE, "apply_command updateFeatures (plot write) p50,", 1),
    (STATE, "proof-of-concept workflow warm p50,", 1),
    (STATE, "render_plot 1024x768 p50,", 1),
    (STATE, "create_plot, 2 imported tracks (", 1),
    (STATE, "import-rep x2 + create_plot p50,", 1),
    (STATE, "get_features full read,", 1),
    (STATE, "same, ms per page,", 1),
    (STATE, "same total, vs one json.dumps of the track", 1),
    (STATE, "windowed copy by ref, 2 x 24,000 fixes to 1 h", 1),  # bench_windows.py: the first call
    (STATE, "same: warm p50 (the plot read before), vs json load of the file", 1),
    (STATE, "same warm p50, vs echo", 1),
    (STATE, "in process (StateService.create_plot) warm p50, vs json load", 1),
]
# The live plot view's figures (bench_view.py), where chromium is installed; else a note says why not.
VIEW_ROWS = [
    (STATE, "view first draw,", 1),
    (STATE, "same, its debrief_view_data call, vs render_plot PNG", 1),
    (STATE, "same, its debrief_view_data call, vs echo", 1),
    (STATE, "same, its canvas draw, vs the frame budget", 1),
    (STATE, "first of the run (the server's first view_data and render)", 1),
    (STATE, "view slider move redraw p50,", 1),
    (STATE, "same p95", 1),
    (STATE, "slider move to the next frame painted p50", 1),
    (STATE, "view with a sensor of", 3),  # first draw, view_data, canvas: beside the plot without it
    (STATE, "slider move redraw p50,", 1),
    (STATE, "with the cuts: slider p95", 1),
]
VIEW_TARGETS = [
    (STATE, "view slider redraw within a frame:", 1),
    (STATE, "view slider redraw with ", 1),
    (STATE, "the view data with ", 1),
]

# (server, how the target's name starts, how many)
TARGETS = [
    *((server, "cold start:", 1) for server in (LLMEM, CALC, STATE)),
    (LLMEM, "warm get_artifact round trip:", 1),
    (LLMEM, "warm get_artifact round trip, stateless era:", 1),
    (LLMEM, "parse throughput (outline):", 1),
    (LLMEM, "parse throughput (end-to-end, parse+store):", 1),
    (LLMEM, "incremental re-run:", 1),
    (LLMEM, "list_artifacts over", 1),
    (LLMEM, "typescript outline throughput:", 1),
    (LLMEM, "search_artifacts warm p50 on", 1),
    (LLMEM, "search_artifacts first search of a new process on", 1),
    (LLMEM, "search_artifacts while 4 processes write", 1),
    (LLMEM, "search_artifacts first search on the stdlib within 100 ms", 1),
    (CALC, "warm list_tools round trip:", 1),
    (CALC, "track-stats 20,000 fixes warm, through run_tool over stdio:", 1),
    (CALC, "closest-approach 2 x 5,000 fixes warm, through run_tool over stdio:", 1),
    (CALC, "geodesic accuracy:", 1),
    (STATE, "warm get_selection (", 2),
    (STATE, "apply_command setSelection p50 < 20 ms:", 1),
    (STATE, "apply_command updateFeatures (plot write) p50 < 20 ms:", 1),
    (STATE, "proof-of-concept workflow warm p50 < 50 ms:", 1),
    (STATE, "render 1024x768 p50 < 300 ms:", 1),
]

TARGET_LINE = re.compile(r"^- \[(?:met |MISS)\] (?P<server>[\w-]+): (?P<rest>.+)$")


def _table_rows(out: str) -> list[list[str]]:
    cells = [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in out.splitlines() if line.startswith("|")
    ]
    assert cells, out
    assert cells[0] == ["server", "figure", "ours", "baseline", "ratio"], cells[0]
    return [row for row in cells[2:] if len(row) == 5]  # past the header and its rule


def _count(rows: list[tuple[str, str]], server: str, prefix: str) -> int:
    return sum(1 for s, text in rows if s == server and text.startswith(prefix))


@pytest.mark.slow
def test_run_all_quick_prints_every_figure_and_target(tmp_path: Path) -> None:
    markdown = tmp_path / "report.md"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run_all.py"),
            "--quick",
            "--tmp",
            str(tmp_path),
            "--markdown",
            str(markdown),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = proc.stdout
    lines = out.splitlines()
    assert lines[0].startswith("machine: ") and "cpus" in lines[0] and "Python" in lines[0], lines[0]
    assert "load average" in lines[0] and "load average at end" in lines[1], lines[:2]

    rows = _table_rows(out)
    figures = [(server, figure) for server, figure, *_ in rows]
    view_rows, view_targets = (VIEW_ROWS, VIEW_TARGETS) if CHROMIUM else ([], [])
    if not CHROMIUM:
        assert "view figures skipped: no chromium" in out, out
    for server, prefix, count in FIGURE_ROWS + view_rows:
        assert _count(figures, server, prefix) == count, f"{count} row(s) of {server} {prefix!r} expected in:\n{out}"
    assert Counter(server for server, _ in figures).keys() == {LLMEM, CALC, STATE}

    targets = [(m["server"], m["rest"]) for m in map(TARGET_LINE.match, lines) if m]
    for server, prefix, count in TARGETS + view_targets:
        assert _count(targets, server, prefix) == count, f"{count} target(s) of {server} {prefix!r} expected in:\n{out}"
    assert len(targets) == sum(count for *_, count in TARGETS + view_targets), targets
    counted = re.search(r"^targets: (\d+) met, (\d+) missed$", out, re.MULTILINE)
    assert counted and int(counted[1]) + int(counted[2]) == len(targets), out
    assert "FAILED" not in out
    assert "EXTRAPOLATED" in out  # the GeographicLib baselines say they are extrapolated

    report = markdown.read_text(encoding="utf-8")
    assert report.startswith("- machine: ")
    assert [line for line in report.splitlines() if line.startswith("|")] == [
        line for line in lines if line.startswith("|")
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bench_first_parse.py", "first parse at least as fast as a bare single-threaded ast walk"),
        ("bench_recall.py", "outline recall vs declaration patterns, python"),
        ("bench_references.py", "recall vs grep -w, this repository: all names"),
        ("bench_note_deps.py", "this repository: get_artifact of it, p50, vs the summary naming none"),
        ("bench_freshness.py", "search_artifacts warm p50 with the freshness check (0, 10 and 300 changed files)"),
    ],
)
def test_standalone_llmem_benchmarks_run_quick(tmp_path: Path, script: str, expected: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--quick", "--tmp", str(tmp_path)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert expected in proc.stdout, proc.stdout
