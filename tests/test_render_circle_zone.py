"""A zone stored as a circle is drawn as the geodesic circle its ``specifics`` give, not as its
stored polygon (in the large sample, SAP 1-1's polygon is an oval)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic
from PIL import Image

from debrief_calc.plots.render import render_plot_png
from debrief_calc.plots.render._items import read_items
from debrief_calc.plots.render._shapes import zone_outlines

DATA = Path(__file__).resolve().parent / "data"


def sap_1_1() -> dict[str, Any]:
    doc = json.loads((DATA / "plots" / "large-sample.plot.json").read_text(encoding="utf-8"))
    z: dict[str, Any] = next(f for f in doc["features"] if f["id"] == "z-1")
    return z


def test_a_circle_zone_is_outlined_on_its_circle() -> None:
    zone = sap_1_1()
    (item,) = read_items([zone], set())
    (ring,) = zone_outlines(item)
    (lon0, lat0), radius = zone["properties"]["specifics"]["origin"], zone["properties"]["specifics"]["radiusM"]
    distances = [Geodesic.WGS84.Inverse(lat0, lon0, lat, lon)["s12"] for lon, lat in ring]
    assert len(ring) > 100 and max(abs(d - radius) for d in distances) < 0.01
    stored = [Geodesic.WGS84.Inverse(lat0, lon0, lat, lon)["s12"] for lon, lat in zone["geometry"]["coordinates"][0]]
    assert max(abs(d - radius) for d in stored) > 1000  # the stored oval, which is not drawn

    # a zone without circle specifics (or with unreadable ones) keeps its stored ring
    plain = copy.deepcopy(zone)
    plain["properties"]["specifics"] = {"shapeType": "circle", "origin": "here"}
    (plain_item,) = read_items([plain], set())
    assert zone_outlines(plain_item) == [r for r in plain_item.rings if len(r) >= 3]


def test_the_circle_is_what_the_picture_shows() -> None:
    zone = sap_1_1()
    zone["properties"].pop("time")
    zone["properties"].pop("timeEnd")
    # the stored polygon replaced by a small square in the circle's middle: the picture still
    # shows the whole circle, with several times the outline
    (lon0, lat0) = zone["properties"]["specifics"]["origin"]
    tiny = [
        [lon0 - 0.01, lat0 - 0.01],
        [lon0 + 0.01, lat0 - 0.01],
        [lon0 + 0.01, lat0 + 0.01],
        [lon0 - 0.01, lat0 + 0.01],
    ]
    zone["geometry"]["coordinates"] = [[*tiny, tiny[0]]]
    corners = [  # reference points that keep the whole circle in view either way
        {
            "type": "Feature",
            "id": f"p{k}",
            "geometry": {"type": "Point", "coordinates": [lon0 + dx, lat0 + dy]},
            "properties": {"dataType": "reference-point", "name": f"P{k}", "marker_color": "#00F"},
        }
        for k, (dx, dy) in enumerate(((-0.4, -0.3), (0.4, 0.3)))
    ]
    plot = {"type": "FeatureCollection", "features": [zone, *corners]}
    as_circle = np.asarray(Image.open(io.BytesIO(render_plot_png(plot))).convert("RGB"))
    zone["properties"].pop("specifics")
    as_square = np.asarray(Image.open(io.BytesIO(render_plot_png(plot))).convert("RGB"))
    red = (255, 0, 0)  # the zone's stroke
    assert np.all(as_circle == red, axis=-1).sum() > 5 * np.all(as_square == red, axis=-1).sum() > 0
