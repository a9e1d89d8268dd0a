"""Which track a parameter names: its id, or its name (case-insensitive) when no other track
shares it. One resolver for every analysis and picture that takes a track by name."""

from __future__ import annotations

from collections.abc import Sequence

from debrief_calc.errors import ValidationFailed


def resolve_track(value: str, tracks: Sequence[tuple[str, str | None]], field: str) -> int:
    """The index in ``tracks`` ((id, name) pairs) of the track ``value`` names: an exact id first,
    else the one track whose name matches ignoring case. Unknown or ambiguous: refused, listing
    every track's name and id."""
    ids = [track_id for track_id, _ in tracks]
    if value in ids:
        return ids.index(value)
    wanted = value.casefold()
    named = [i for i, (_, name) in enumerate(tracks) if name and name.casefold() == wanted]
    if len(named) == 1:
        return named[0]
    listing = ", ".join(f"{name} (id {track_id})" if name else track_id for track_id, name in tracks)
    problem = f"names {len(named)} tracks" if named else "is neither the id nor the name of a given track"
    raise ValidationFailed(
        f"{field} {value!r} {problem}: give one of {listing} (an id, or a name no other track shares)",
        details={
            "field": field,
            "rule": "ambiguous" if named else "exists",
            "value": value,
            "ids": ids,
            "names": [name for _, name in tracks],
        },
    )
