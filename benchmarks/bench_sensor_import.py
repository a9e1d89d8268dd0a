"""Importing 100,000 sensor cuts beside reading the file, measured in the same run.

    python benchmarks/bench_sensor_import.py [--cuts N] [--runs N]

A generated ``.dsf`` of ``;SENSOR2:`` lines (one sensor on one host; bearing, ambiguous bearing,
frequency, a range on every other cut) is written to a temporary folder, once with an origin on
every line and once with NULL origins (placed on the host by interpolation along the geodesic).
Figures, each the median of ``--runs`` runs, wall-clock:

- baseline: ``Path.read_text().splitlines()`` and ``str.split()`` of every line;
- ``parse_rep``: the lines read into cut records (no host needed yet);
- ``import-rep`` (``executor.run``, the host track given as a feature): records, host found,
  one sensor feature built and checked (provenance, plain JSON), with given origins and with NULL
  origins.

Each is printed beside the baseline as a ratio, since the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.executor import run
from debrief_calc.formats.rep import parse_rep


def _dms(value: float, hemispheres: str) -> str:
    hem = hemispheres[0] if value >= 0 else hemispheres[1]
    value = abs(value)
    deg = int(value)
    minutes = int((value - deg) * 60)
    seconds = ((value - deg) * 60 - minutes) * 60
    return f"{deg:02d} {minutes:02d} {seconds:05.2f} {hem}"


def write_files(folder: Path, cuts: int) -> tuple[Path, Path, Path]:
    """The host's REP track (a fix a minute) and the two .dsf files of ``cuts`` cuts, 5 s apart."""
    minutes = cuts * 5 // 60 + 2
    track = folder / "host.rep"
    with track.open("w", encoding="utf-8") as out:
        for m in range(minutes):
            day, rest = divmod(m, 24 * 60)
            lat, lon = 50.0 + m * 0.002, -1.0 + (m % 600) * 0.001
            out.write(
                f"1001{12 + day:02d} {rest // 60:02d}{rest % 60:02d}00 HOST @A {_dms(lat, 'NS')} {_dms(lon, 'EW')} 45.0 12.0 0\n"
            )
    given, null = folder / "given.dsf", folder / "null.dsf"
    with given.open("w", encoding="utf-8") as g, null.open("w", encoding="utf-8") as n:
        for i in range(cuts):
            s = i * 5
            day, s = divmod(s, 86400)
            when = f"1001{12 + day:02d} {s // 3600:02d}{s // 60 % 60:02d}{s % 60:02d}"
            bearing = (i * 0.37) % 360 - 180
            rng = f"{5000 + i % 7000}" if i % 2 else "NULL"
            tail = f"{bearing:.1f} {(-bearing) % 360:.1f} {150 + (i % 50) / 10:.1f} {rng} towed cut {i}"
            m = i * 5 // 60
            origin = f"{_dms(50.0 + m * 0.002, 'NS')} {_dms(-1.0 + (m % 600) * 0.001, 'EW')}"
            g.write(f";SENSOR2: {when} HOST @A {origin} {tail}\n")
            n.write(f";SENSOR2: {when} HOST @A NULL {tail}\n")
    return track, given, null


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        track_path, given, null = write_files(Path(tmp), args.cuts)
        host = parse_rep(track_path.read_text(encoding="utf-8"), source_name="host.rep").features[0]
        registry = default_registry()

        def baseline() -> None:
            for line in given.read_text(encoding="utf-8").splitlines():
                line.split()

        def parse_only() -> None:
            parse_rep(given.read_text(encoding="utf-8"), source_name="given.dsf")

        def importing(path: Path) -> Callable[[], None]:
            def go() -> None:
                result = run(
                    registry, "import-rep", [host], {"path": path.name}, read_text=lambda p: (Path(tmp) / p).read_text()
                )
                assert result.success, result.error
                assert len(result.features[0]["properties"]["timestamps"]) == args.cuts

            return go

        base = median_time(baseline, args.runs)
        rows = [
            ("read + str.split per line (baseline)", base),
            ("parse_rep: lines to cut records", median_time(parse_only, args.runs)),
            ("import-rep, origins given", median_time(importing(given), args.runs)),
            ("import-rep, NULL origins (interpolated on the host)", median_time(importing(null), args.runs)),
        ]
    print(f"{args.cuts:,} sensor cuts, median of {args.runs} runs")
    print(f"{'figure':<55} {'seconds':>9} {'x baseline':>11}")
    for label, seconds in rows:
        print(f"{label:<55} {seconds:>9.3f} {seconds / base:>10.1f}x")


if __name__ == "__main__":
    main()
