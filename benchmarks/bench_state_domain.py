"""Plot-state domain costs on ``large-sample.plot.json`` beside a bare baseline, in one run.

    python benchmarks/bench_state_domain.py [--plot FILE] [--runs N]

On a temporary copy of the plot: ``apply_to_plot`` (``modify_plot`` with a shallow draft)
applying ``setSelection`` (validated, nothing to write: the selection lives in the store),
``setViewport`` and ``updateFeatures`` of one track (each a real change: lock, re-check, copy,
apply, encode, atomic write with fsync), the last two also through a deep-copy draft, next
to a baseline of a bare ``json.loads`` + ``json.dumps(indent=2)`` + atomic write of the same
file. Also the warm cache read and the 1024×768 render. Targets: p50 under 20 ms for the
changes, under 300 ms for the render.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from debrief_calc.formats.plotfile import PlotCache, PlotDoc, modify_plot
from debrief_calc.plots.commands import apply_command, apply_to_plot
from debrief_calc.plots.render import render_plot_png
from debrief_calc.tracks.features import parse_iso
from llmem.core.fsutil import atomic_write_bytes

DEFAULT_PLOT = Path(__file__).resolve().parents[1] / "tests" / "data" / "plots" / "large-sample.plot.json"


def measure(fn: Callable[[int], Any], runs: int) -> list[float]:
    fn(0)  # warm
    out = []
    for i in range(1, runs + 1):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


def line(name: str, ms: list[float], baseline: float | None = None, target: float | None = None) -> str:
    p50 = statistics.median(ms)
    p95 = sorted(ms)[max(int(len(ms) * 0.95) - 1, 0)]
    text = f"{name:<44} p50 {p50:8.3f} ms   p95 {p95:8.3f} ms"
    if baseline:
        text += f"   {p50 / baseline:5.2f}x baseline"
    if target is not None:
        text += f"   target < {target:g} ms: {'ok' if p50 < target else 'MISSED'}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT)
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.plot.json"
        base_path = Path(tmp) / "baseline.plot.json"
        scratch = Path(tmp) / ".llmem" / "scratch" / "plots"
        shutil.copyfile(args.plot, path)
        shutil.copyfile(args.plot, base_path)
        cache = PlotCache()
        track = next(f for f in cache.get(path).features if (f.get("properties") or {}).get("dataType") == "track")
        print(f"plot: {args.plot.name}, {path.stat().st_size / 1024:.0f} KB, runs: {args.runs}")

        def baseline(_: int) -> None:
            data = json.loads(base_path.read_bytes())
            atomic_write_bytes(base_path, json.dumps(data, indent=2, ensure_ascii=False).encode())

        def shallow(command: Callable[[int], dict[str, Any]]) -> Callable[[int], Any]:
            def run(i: int) -> None:
                apply_to_plot(path, command(i), scratch_dir=scratch, cache=cache)

            return run

        def deep(command: Callable[[int], dict[str, Any]]) -> Callable[[int], Any]:
            def run(i: int) -> None:
                cmd = command(i)

                def fn(doc: PlotDoc) -> Any:
                    return apply_command(doc.data, cmd)

                modify_plot(path, fn, scratch_dir=scratch, cache=cache)

            return run

        def select(i: int) -> dict[str, Any]:
            return {"command": "setSelection", "payload": {"selectedIds": [str(track["id"])]}}

        def viewport(i: int) -> dict[str, Any]:
            return {"command": "setViewport", "payload": {"bounds": [-6.0 - (i % 2), 35.0, -2.0, 37.0]}}

        updates = []
        for i in range(args.runs + 1):
            new = copy.deepcopy(track)
            new["properties"]["name"] = f"{track['properties'].get('name')} #{i}"
            updates.append({"command": "updateFeatures", "payload": [new]})

        base_ms = measure(baseline, args.runs)
        base = statistics.median(base_ms)
        print(line("baseline: json.loads + dumps + atomic write", base_ms))
        print(line("cache.get (warm, stat only)", measure(lambda _: cache.get(path), args.runs)))
        update = updates.__getitem__
        rows = [
            ("apply_to_plot setSelection (no write)", shallow(select)),
            ("apply_to_plot setViewport (write)", shallow(viewport)),
            ("  same through a deep-copy draft", deep(viewport)),
            ("apply_to_plot updateFeatures 1 track (write)", shallow(update)),
            ("  same through a deep-copy draft", deep(update)),
        ]
        for label, fn in rows:
            print(line(label, measure(fn, args.runs), base, 20))

        data = cache.get(path).data
        t = parse_iso(track["properties"]["timestamps"][len(track["properties"]["timestamps"]) // 2])
        renders = measure(lambda _: render_plot_png(data, selection=[str(track["id"])], current_time=t), 20)
        print(line("render_plot_png 1024x768 (selection + time)", renders, None, 300))


if __name__ == "__main__":
    main()
