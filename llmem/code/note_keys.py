"""Which keys of an annotate answer are stored, and why the others are refused.

An answer may describe any symbol the file's current outline lists — of any part of the file,
data members too — whatever its prompt asked: the outline is the one the ticket was made from
(a file changed since makes the whole answer ``SOURCE_CHANGED``). A key that names one symbol by
its own name (``method`` for ``Class.method``) is stored under the qualified name, and
the answer says so. Any other key is refused with the exact reason — several symbols of that
name, renamed, gone, a symbol of another file, no such symbol — and the call that gets a ticket
for what it meant; the keys that were valid are stored all the same.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SortedKeys", "sort_keys"]


@dataclass
class SortedKeys:
    #: each accepted key as written → the qualified name it is stored under
    accepted: dict[str, str] = field(default_factory=dict)
    #: ``{key, reason, call}`` of each key refused
    refused: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mapped(self) -> dict[str, str]:
        return {k: qn for k, qn in self.accepted.items() if k != qn}


def sort_keys(
    keys: list[str],
    path: str,
    symbols: Collection[str],
    part_of: Callable[[str], int | None],
    *,
    renamed: Mapping[str, str],
    gone: Collection[str],
    elsewhere: Callable[[list[str]], dict[str, list[str]]],
) -> SortedKeys:
    """Sort an answer's keys for the file ``path`` whose outline lists ``symbols`` (qualified
    names); ``part_of`` gives the annotate part that shows a symbol, ``renamed`` the notes carried
    to a new name, ``gone`` the described symbols no longer in the file, and ``elsewhere`` the
    other files that define each of some names."""
    out = SortedKeys()
    known = set(symbols)

    def prompt_for(name: str) -> str:
        part = part_of(name)
        return f"generate_prompt({path!r}, 'annotate'" + (f", part={part})" if part else ")")

    unknown: list[str] = []
    for key in keys:
        if key in known:
            out.accepted[key] = key
    for key in keys:
        if key in known:
            continue
        by_leaf = sorted(n for n in known if n.endswith("." + key))
        if len(by_leaf) == 1 and by_leaf[0] not in out.accepted.values():
            out.accepted[key] = by_leaf[0]
        elif len(by_leaf) == 1:
            out.refused.append(
                {
                    "key": key,
                    "reason": f"{key!r} is {by_leaf[0]!r}, which this answer describes under its qualified name too",
                    "call": None,
                }
            )
        elif by_leaf:
            shown = ", ".join(repr(n) for n in by_leaf[:5])
            out.refused.append(
                {
                    "key": key,
                    "reason": f"{key!r} names {len(by_leaf)} symbols of {path} ({shown}): use the qualified name",
                    "call": prompt_for(by_leaf[0]),
                }
            )
        elif key in renamed and renamed[key] in known:
            new = renamed[key]
            out.refused.append(
                {
                    "key": key,
                    "reason": f"{key!r} was renamed to {new!r} (its note moved with it): describe it as {new!r}",
                    "call": prompt_for(new),
                }
            )
        elif key in gone:
            out.refused.append(
                {
                    "key": key,
                    "reason": f"{key!r} is no longer in {path}: its code is gone (its old note is dropped)",
                    "call": f"find_references({key.rsplit('.', 1)[-1]!r})",
                }
            )
        else:
            unknown.append(key)
    if not unknown:
        return out
    other = elsewhere(unknown)
    for key in unknown:
        files = other.get(key) or []
        if files:
            out.refused.append(
                {
                    "key": key,
                    "reason": f"{key!r} is a symbol of {', '.join(files[:3])}, not of {path}",
                    "call": f"generate_prompt({files[0]!r}, 'annotate')",
                }
            )
            continue
        close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.6)
        out.refused.append(
            {
                "key": key,
                "reason": f"{key!r} is not a symbol of {path}'s current outline ({len(known)} symbols)"
                + (f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""),
                "call": prompt_for(close[0]) if close else f"get_artifact({path!r}) lists its symbols",
            }
        )
    return out
