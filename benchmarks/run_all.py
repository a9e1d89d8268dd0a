"""Every figure of the suite's three servers beside its baseline, from one run, in one table.

    python benchmarks/run_all.py [--quick] [--markdown FILE] [--tmp DIR]

Runs, one after another in this process, ``bench_llmem.collect``, the TypeScript outline figure
of ``bench_parse`` (the one spec figure no server script covers), ``bench_calc.collect`` (its
geodesic accuracy comes from ``bench_geodesy``), ``bench_instruments.collect`` (the analyst's
instruments of debrief-calc-mcp: tote, track-legs, windowed range-bearing, render_series),
``bench_state.collect``, ``bench_view.collect`` (the live plot view in chromium; skipped with the
reason where chromium is missing) and ``bench_windows.collect`` (a windowed copy of two
1,000,000-fix tracks by reference, beside reading the file): each measures its
figures and, in the same moments, its baselines. Then it prints one report: the machine line
(with the load average at start and at end: these machines are shared), one table with a
``server`` column and every figure as a ratio to its baseline, the notes, and the list of
targets met or missed. ``--markdown FILE`` also writes the report as Markdown (what
``benchmarks/README.md`` quotes). ``--quick`` shrinks every size for a smoke run; its figures
mean nothing.

The exit status is 0 when every part ran, whatever the figures (a benchmark measures, it does
not assert); 1 when a part failed (its traceback is on stderr, and it is listed as a miss).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_calc
import bench_instruments
import bench_llmem
import bench_parse
import bench_state
import bench_view
import bench_windows
from _harness import (
    CLIENT_LINE,
    Section,
    bench_env,
    compile_bytecode,
    format_table,
    load_average,
    machine_line,
    patched_environ,
)

PARTS: list[tuple[str, str, Callable[[Path, bool], Section]]] = [
    ("llmem", "llmem-mcp", bench_llmem.collect),
    ("typescript", "llmem-mcp", lambda _tmp, quick: bench_parse.typescript_section(quick)),
    ("calc", "debrief-calc-mcp", bench_calc.collect),
    ("instruments", "debrief-calc-mcp", bench_instruments.collect),
    ("state", "debrief-state-mcp", bench_state.collect),
    ("view", "debrief-state-mcp", bench_view.collect),
    ("windows", "debrief-state-mcp", bench_windows.collect),
]
HEADER = ("server", "figure", "ours", "baseline", "ratio")


def run_parts(root: Path, quick: bool) -> tuple[list[Section], bool]:
    """Every part's section (a failed part: a section holding the failure); and whether all ran."""
    sections, all_ran = [], True
    for key, server, collect in PARTS:
        tmp = root / key
        tmp.mkdir()
        print(f"[{key}] ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            with patched_environ(bench_env(tmp)):
                section = collect(tmp, quick)
        except Exception as exc:
            traceback.print_exc()
            all_ran = False
            section = Section(server)
            section.target(f"{key} benchmarks", False, f"FAILED: {type(exc).__name__}: {exc}")
        section.stages = [f"{key} {time.perf_counter() - start:.0f} s ({', '.join(section.stages)})"]
        sections.append(section)
    return sections, all_ran


def report(sections: list[Section], head: list[str], *, markdown: bool) -> str:
    """The report: ``head`` (the machine line first), the table, notes, targets, stages."""
    lines = [f"- {line}" for line in head] if markdown else list(head)
    lines.append("")
    rows = [(sec.server, *row) for sec in sections for row in sec.rows]
    lines += format_table(rows, HEADER, left=2)
    notes = [f"- {sec.server}: {note}" for sec in sections for note in sec.notes]
    if notes:
        lines += ["", "notes:", "", *notes]
    targets = [t.line(prefix=f"{sec.server}: ", bullet="-") for sec in sections for t in sec.targets]
    missed = sum(1 for sec in sections for t in sec.targets if not t.ok)
    lines += ["", f"targets: {len(targets) - missed} met, {missed} missed", "", *targets]
    lines += ["", "stages: " + "; ".join(stage for sec in sections for stage in sec.stages)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a smoke run (figures mean nothing)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the report to FILE as Markdown")
    parser.add_argument("--tmp", type=Path, default=None, help="where the temporary workspaces go")
    args = parser.parse_args()

    machine, started = machine_line() + "; " + compile_bytecode(), time.strftime("%Y-%m-%d %H:%M %Z")
    start = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="suite-bench-all-", dir=args.tmp)).resolve()
    try:
        sections, all_ran = run_parts(root, args.quick)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    head = [
        machine,
        f"date: {started}; took {(time.perf_counter() - start) / 60:.1f} min; load average at end "
        f"{load_average()} (1/5/15 min)" + ("; --quick: smoke sizes, figures mean nothing" if args.quick else ""),
        CLIENT_LINE,
    ]
    print(report(sections, head, markdown=False), end="", flush=True)
    if args.markdown:
        args.markdown.write_text(report(sections, head, markdown=True), encoding="utf-8")
    if not all_ran:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
