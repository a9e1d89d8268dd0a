"""Reading a 100,000-point track whole, in pages, beside the cost of encoding it once.

    python benchmarks/bench_paging.py [--points N] [--budget CHARS]

Three figures on one synthetic track (ISO timestamps and speeds per point, as REP imports
carry): the pure pager (``debrief_calc.tracks.paging.page_features`` from the first page to the last,
sizes measured as compact JSON); the same through ``get_result`` over the in-memory MCP client
(the run stored as the calc server stores an answer over the cap, read a few seconds later as
a model would, so the store's parse cache holds it); and, as the baseline, one
compact ``json.dumps`` of the whole track (what any reader pays at least once). Each with its
pages, ms per page and total; the pages are checked to join back into the track exactly.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from mcp import Client

from debrief_calc.calc.server import build_server
from debrief_calc.plots import plotstate
from debrief_calc.tracks.features import iso
from debrief_calc.tracks.paging import join_parts, page_features
from llmem.core.config import ServerConfig
from llmem.core.store import ArtifactStore


def synthetic_track(n: int) -> dict[str, Any]:
    t0 = 1_700_000_000
    return {
        "type": "Feature",
        "id": "big",
        "geometry": {"type": "LineString", "coordinates": [[-21.5 + i * 1e-5, 22.1 + i * 1.3e-5] for i in range(n)]},
        "properties": {
            "kind": "track",
            "name": "BIG",
            "timestamps": [iso(t0 + i) for i in range(n)],
            "speeds": [10.0 + i % 7 for i in range(n)],
        },
    }


def pure(track: dict[str, Any], budget: int) -> tuple[int, float]:
    parts: list[dict[str, Any]] = []
    position: tuple[int, int] | None = (0, 0)
    started = time.perf_counter()
    pages = 0
    while position is not None:
        items, position = page_features([track], position, budget=budget, limit=500)
        parts += items
        pages += 1
    elapsed = (time.perf_counter() - started) * 1000
    assert join_parts(parts) == track
    return pages, elapsed


async def through_mcp(track: dict[str, Any]) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp).resolve()
        store = ArtifactStore(ws / ".llmem", ws)
        ref = plotstate.stash_features(store, "bench", [track])["ref"]
        # the store trusts its parse cache only for files older than three seconds (racily clean
        # files are re-read); a model reads a run back seconds after it was made
        await anyio.sleep(3.5)
        async with Client(build_server(ServerConfig("debrief-calc-mcp", ws))) as client:
            await client.call_tool("get_result", {"ref": ref})  # warm: imports, the first read of the file
            parts: list[dict[str, Any]] = []
            cursor: str | None = None
            pages = 0
            started = time.perf_counter()
            while True:
                args = {"ref": ref} | ({"cursor": cursor} if cursor else {})
                result = await client.call_tool("get_result", args)
                page = result.structured_content or {}
                parts += page["features"]
                pages += 1
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            elapsed = (time.perf_counter() - started) * 1000
    assert join_parts(parts) == track
    return pages, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--budget", type=int, default=18_500, help="characters a page may take (get_result's)")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # no line per tool call on stderr
    track = synthetic_track(args.points)
    started = time.perf_counter()
    size = len(json.dumps(track, separators=(",", ":"), ensure_ascii=False))
    once = (time.perf_counter() - started) * 1000
    print(f"track of {args.points} points: {size} characters of compact JSON")
    print(f"{'baseline: json.dumps of the whole track once':<48} {once:9.1f} ms")
    pages, ms = pure(track, args.budget)
    print(
        f"{'pager (page_features), budget ' + str(args.budget):<48} {ms:9.1f} ms  {pages} pages  {ms / pages:6.2f} ms/page"
    )
    pages, ms = anyio.run(through_mcp, track)
    print(f"{'get_result over the in-memory MCP client':<48} {ms:9.1f} ms  {pages} pages  {ms / pages:6.2f} ms/page")


if __name__ == "__main__":
    main()
