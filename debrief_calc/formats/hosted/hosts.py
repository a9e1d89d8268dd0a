"""The tracks that sensor, solution and arc lines hang off, found by the name in the line.

Candidates are the tracks of the files read in the same import and the tracks given beside them
(features, references or a plot). A line's host name matches a track's name exactly, else without
regard to case when that names one track only. The analyst may say which track hosts the lines
(``host``): ``"SENSOR"`` hosts every such line on the track named (or with the id) ``SENSOR``;
``"OWNSHIP=SENSOR, BUOY1=rep-buoy"`` maps the names the lines give to tracks. A name that finds no
track is a :class:`~debrief_calc.errors.ValidationFailed` naming the tracks there are and the fix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.geodesy import interpolate_track, leg_azimuths
from debrief_calc.tracks._feature_parts import feature_name, raw_id
from debrief_calc.tracks._track_data import TrackData, read_track
from debrief_calc.tracks.times import parse_times

__all__ = ["Host", "HostTracks", "parse_host_mapping"]

_SHOWN = 20


@dataclass(frozen=True)
class Host:
    """A candidate host: its feature id, name and fixes (None when its times cannot be read)."""

    id: str
    name: str
    track: TrackData | None

    def positions(self, times: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(lat, lon) at ``times`` (epoch s) along the geodesic between fixes; NaN outside the
        track's span (the suite's one interpolation, :func:`~debrief_calc.geo.geodesy.interpolate_track`)."""
        track = self.track
        if track is None or len(track) == 0:
            return np.full(times.shape, np.nan), np.full(times.shape, np.nan)
        return interpolate_track(track.t, track.lat, track.lon, times)

    def headings(self, times: FloatArray) -> FloatArray:
        """The host's course over ground at ``times``: the azimuth of the leg each time falls in
        (at a fix, the leg after it; at the last fix, the leg before), from positions, never from
        a course column; NaN outside the span or on a track of one point."""
        track = self.track
        out = np.full(times.shape, np.nan)
        if track is None or len(track) < 2:
            return out
        azimuths = leg_azimuths(track.lat, track.lon)
        # a stationary leg has no direction: carry the last known one forward, then back
        known = np.flatnonzero(np.isfinite(azimuths))
        if known.size == 0:
            return out
        fill = np.maximum.accumulate(np.where(np.isfinite(azimuths), np.arange(azimuths.size), -1))
        fill[fill < 0] = known[0]
        azimuths = azimuths[fill]
        inside = (times >= track.t[0]) & (times <= track.t[-1])
        leg = np.clip(np.searchsorted(track.t, times[inside], side="right") - 1, 0, azimuths.size - 1)
        out[inside] = azimuths[leg]
        return out

    def describe(self) -> str:
        return f"{self.name} ({self.id})" if self.name != self.id else self.id


def parse_host_mapping(value: str | None) -> tuple[str | None, dict[str, str]]:
    """``host`` as (a track for every line, {name in the lines: track}); ``None`` gives neither."""
    if value is None:
        return None, {}
    text = value.strip()
    if not text:
        raise ValidationFailed(
            "host is empty: name the track that hosts the sensor lines, e.g. 'SENSOR', or map names, e.g. "
            "'OWNSHIP=SENSOR'",
            details={"field": "host", "rule": "non-empty"},
        )
    if "=" not in text:
        return text, {}
    pairs: dict[str, str] = {}
    for part in text.split(","):
        name, sep, track = part.partition("=")
        if not sep or not name.strip() or not track.strip():
            raise ValidationFailed(
                f"host {value[:120]!r}: {part.strip()[:60]!r} is not NAME=TRACK; give one track ('SENSOR') or "
                "pairs of the name in the lines and the track ('OWNSHIP=SENSOR, BUOY=rep-buoy')",
                details={"field": "host", "rule": "NAME=TRACK pairs", "value": value[:200]},
            )
        pairs[name.strip()] = track.strip()
    return None, pairs


def _one_fix(feature: Mapping[str, Any], fid: str) -> TrackData | None:
    """A track of one fix (a Point and one time, as a REP file of one fix gives), else None."""
    geometry = feature.get("geometry")
    times = (feature.get("properties") or {}).get("timestamps")
    if not (
        isinstance(geometry, Mapping)
        and geometry.get("type") == "Point"
        and isinstance(times, list)
        and len(times) == 1
    ):
        return None
    try:
        lon, lat = (float(v) for v in geometry["coordinates"][:2])
        t = parse_times(times)
    except (ValidationFailed, TypeError, ValueError, KeyError):
        return None
    return TrackData(fid, feature_name(feature), np.array([lon]), np.array([lat]), t, None, "properties.timestamps")


class HostTracks:
    """The candidate tracks of one import and the analyst's mapping; :meth:`resolve` finds the
    host of every name the lines give, or raises once for all the names it cannot find."""

    def __init__(self, hosts: Sequence[Host], host: str | None = None) -> None:
        self.hosts = list(hosts)
        self._by_id = {h.id: h for h in self.hosts}
        self._by_name: dict[str, list[Host]] = {}
        for h in self.hosts:
            self._by_name.setdefault(h.name, []).append(h)
        self.default, self.mapping = parse_host_mapping(host)
        self.host_text = host

    @staticmethod
    def from_features(features: Iterable[Mapping[str, Any]]) -> list[Host]:
        """Hosts from track features (their times read where they can be)."""
        out: list[Host] = []
        for index, feature in enumerate(features):
            fid = raw_id(feature) or f"#{index}"
            try:
                track: TrackData | None = read_track(feature, index, fid)
            except ValidationFailed:
                track = _one_fix(feature, fid)
            out.append(Host(fid, feature_name(feature) or fid, track))
        return out

    def _find(self, wanted: str) -> Host | None:
        if wanted in self._by_id:
            return self._by_id[wanted]
        exact = self._by_name.get(wanted)
        if exact:
            return exact[0]
        folded = [h for h in self.hosts if h.name.casefold() == wanted.casefold()]
        return folded[0] if len(folded) == 1 else None

    def _track_list(self) -> str:
        if not self.hosts:
            return "no tracks are given"
        shown = ", ".join(h.describe() for h in self.hosts[:_SHOWN])
        more = f" and {len(self.hosts) - _SHOWN} more" if len(self.hosts) > _SHOWN else ""
        return f"the tracks there are: {shown}{more}"

    def _check_mapping(self) -> None:
        targets = ([self.default] if self.default is not None else []) + list(self.mapping.values())
        unknown = [t for t in targets if self._find(t) is None]
        if unknown:
            raise ValidationFailed(
                f"host names {', '.join(repr(t) for t in unknown)}, which is no track here; {self._track_list()}. "
                "Name one of them (by name or id), or give the host's track too: its file in paths, or the "
                "track in features or plot",
                details={"field": "host", "rule": "a track", "unknown": unknown, "tracks": self._listing()},
            )

    def _listing(self) -> list[dict[str, str]]:
        return [{"id": h.id, "name": h.name} for h in self.hosts[:100]]

    def resolve(self, names: Mapping[str, int], what: str) -> dict[str, Host]:
        """The host of every name the lines give (``names``: name -> how many lines), or a
        ValidationFailed for all the names that find none (``what``: the lines, for the message)."""
        self._check_mapping()
        found: dict[str, Host] = {}
        missing: dict[str, int] = {}
        for name, count in names.items():
            target = self.mapping.get(name) or self.default or name
            host = self._find(target)
            if host is None:
                missing[name] = count
            else:
                found[name] = host
        if missing:
            listed = ", ".join(f"{n!r} ({c} line{'s' if c != 1 else ''})" for n, c in missing.items())
            example = next(iter(missing))
            first = self.hosts[0].name if self.hosts else "TRACK"
            raise ValidationFailed(
                f"{what} name host {listed}, which is no track here; {self._track_list()}. Say which track hosts "
                f"them with parameters.host, e.g. host: {first!r} (every such line) or {example + '=' + first!r}; "
                "and give the host's track if it is not here: its REP file in paths (both files in one call), or "
                "the track in features (a ref) or plot (the plot holding it)",
                details={"field": "host", "rule": "host track", "missing": list(missing), "tracks": self._listing()},
            )
        return found
