"""Smoke run of ``benchmarks/bench_llmem.py --quick``: it runs and prints every figure (timings unchecked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FIGURE_ROWS = [
    "| cold start, median of",
    "|   cold start p95 / median of per-run ratios",
    "| warm get_artifact p50,",
    "| warm get_artifact p95,",
    "|   same, vs echo of",
    "| parse outline, files/s",
    "| parse end-to-end parse+store, files/s",
    "| re-run unchanged",
    "|   re-run counts parsed/unchanged/skipped/failed",
    "| list folder page",
    "| list root first page (50) p50",
    "| list root first page (50) p95",
    "| list root page deep via cursor",
]


@pytest.mark.slow
def test_bench_llmem_quick_prints_every_figure(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_llmem.py"), "--quick", "--tmp", str(tmp_path)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = proc.stdout
    assert "machine:" in out
    for row in FIGURE_ROWS:
        assert row in out, f"missing figure row {row!r} in:\n{out}"
    assert out.count("| list folder page") == 2  # p50 and p95
    assert out.count("| list root page deep via cursor") == 2
    assert "targets:" in out


CALC_FIGURE_ROWS = [
    "| cold start, median of",
    "|   cold start p95 / median of per-run ratios",
    "| warm list_tools p50,",
    "| warm list_tools p95,",
    "|   same, vs echo of",
    "| track-stats 20,000 fixes",
    "| closest-approach 2 x 5,000 fixes",
    "|   same warm p50, vs GeographicLib leg loop *1",
    "|   same warm p50, vs GeographicLib CPA scan *2",
    "|   same warm p50, vs CalcService.run in process",
    "| accuracy: worst distance error,",
    "| accuracy: p99 distance error,",
    "|   inverse of the",
    "|   pairs ours handed to GeographicLib",
]


@pytest.mark.slow
def test_bench_calc_quick_prints_every_figure(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_calc.py"), "--quick", "--tmp", str(tmp_path)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = proc.stdout
    assert "machine:" in out
    for row in CALC_FIGURE_ROWS:
        assert row in out, f"missing figure row {row!r} in:\n{out}"
    for tool in ("| track-stats 20,000 fixes", "| closest-approach 2 x 5,000 fixes"):
        assert out.count(tool) == 2  # the first call and the warm p50
    assert out.count("|   same warm p50, vs CalcService.run in process") == 2
    assert "EXTRAPOLATED" in out  # the GeographicLib baselines say they are extrapolated
    assert "targets:" in out
