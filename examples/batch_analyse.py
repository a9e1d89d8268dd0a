"""Batch-analyse every REP file in a folder through the Python API, ``debrief_calc.Workspace``.

    python examples/batch_analyse.py FOLDER [--json SUMMARY.json]

For each REP file in FOLDER: import its tracks, make a plot of them (``<name>.plot.json``) and
draw it (``<name>.png``); then, for every track, its statistics and its legs, and for every pair
of tracks (from any of the files) their closest approach. A file with nothing to import is
reported and left out. The calls are the tools a model makes through debrief-calc-mcp and
debrief-state-mcp, with the same arguments and answers, and the results are kept in the same
store: a server started on FOLDER (``--workspace FOLDER``) sees the plots and the results.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import debrief_calc as dc


def analyse(folder: Path) -> dict[str, Any]:
    ws = dc.Workspace(folder)
    summary: dict[str, Any] = {"skipped": {}, "plots": {}, "tracks": {}, "cpa": []}
    tracks: dict[str, str] = {}  # track name -> its reference in its plot

    for rep in ws.list_plots().rep_files:  # the REP files of the workspace, as the tools list them
        run = ws.run_tool("import-rep", parameters={"path": rep})
        read = run.report or {}
        if not read.get("track_count"):
            summary["skipped"][rep] = [
                *(run.warnings or []),
                f"{read.get('narrative_count', 0)} narrative entries, no tracks",
            ]
            continue
        plot = Path(rep).stem + ".plot.json"
        try:  # the import's reference stands for all it read: the tracks and the narrative entries
            ws.create_plot(plot, features=[{"ref": run.stored["ref"]}] if run.stored else run.features)
        except dc.PlotExists:
            pass  # made by an earlier run: analysed as it is
        ws.render_plot(filename=plot, fit="all").save_image(folder / (Path(rep).stem + ".png"))
        summary["plots"][plot] = Path(rep).stem + ".png"
        for track in ws.get_features(filename=plot, kinds=["track"]).features:
            tracks[track["name"]] = track["ref"]

    for name, ref in tracks.items():
        stats = ws.run_tool("track-stats", features=[{"ref": ref}]).features[0]["properties"]["statistics"]
        legs = ws.run_tool("track-legs", features=[{"ref": ref}]).features[0]["properties"]["legs"]
        summary["tracks"][name] = {
            "start": stats["start"],
            "end": stats["end"],
            "distance_nm": round(stats["distance_nm"], 2),
            "mean_speed_kn": round(stats["mean_speed_kn"], 2),
            "legs": [{k: leg[k] for k in ("start", "end", "course", "speed_kn")} for leg in legs],
        }

    for (a, ref_a), (b, ref_b) in itertools.combinations(tracks.items(), 2):
        try:
            cpa = ws.run_tool(
                "closest-approach", features=[{"ref": ref_a}, {"ref": ref_b}], parameters={"distance_unit": "yd"}
            )
        except dc.InvalidContext as err:  # e.g. two tracks that never overlap in time
            summary["cpa"].append({"between": [a, b], "error": err.code, "message": err.message})
            continue
        found = cpa.features[0]["properties"]
        summary["cpa"].append({"between": [a, b], "range_yd": round(found["range"], 1), "time": found["time"]})
    return summary


def report(summary: dict[str, Any]) -> None:
    for rep, why in summary["skipped"].items():
        print(f"{rep}: nothing to analyse ({'; '.join(why)})")
    for plot, png in summary["plots"].items():
        print(f"plot {plot}, drawn in {png}")
    for name, t in summary["tracks"].items():
        print(
            f"{name}: {t['start']} to {t['end']}, {t['distance_nm']} nm at {t['mean_speed_kn']} kn, {len(t['legs'])} legs"
        )
    for c in summary["cpa"]:
        pair = " / ".join(c["between"])
        print(f"CPA {pair}: " + (f"{c['range_yd']} yd at {c['time']}" if "range_yd" in c else c["message"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the folder of REP files (the workspace)")
    parser.add_argument("--json", type=Path, help="also write the summary to this JSON file")
    args = parser.parse_args()
    summary = analyse(args.folder)
    report(summary)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
