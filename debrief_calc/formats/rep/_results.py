"""What :func:`~debrief_calc.formats.rep.parse_rep` returns, and the exceptions that reject one line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from debrief_calc.formats.hosted.records import ArcLine, Cut, SolutionFix

__all__ = ["MAX_ISSUE_TEXT", "LineError", "LineIssue", "NotImported", "RepResult", "Truncated", "line_issue"]

#: Longest raw line text kept in a :class:`LineIssue`.
MAX_ISSUE_TEXT = 200


@dataclass(frozen=True)
class LineIssue:
    """A line that was not imported: where it is, what it says and why."""

    line: int  # 1-based line number
    text: str  # the raw line, capped at MAX_ISSUE_TEXT characters
    reason: str


@dataclass
class RepResult:
    """What :func:`parse_rep` found."""

    features: list[dict[str, Any]] = field(default_factory=list)
    errors: list[LineIssue] = field(default_factory=list)
    skipped: list[LineIssue] = field(default_factory=list)
    line_count: int = 0
    fix_count: int = 0
    narrative_count: int = 0
    #: sensor cuts, solution points and coverage arcs read, waiting for their host tracks
    cuts: list[Cut] = field(default_factory=list)
    solutions: list[SolutionFix] = field(default_factory=list)
    arcs: list[ArcLine] = field(default_factory=list)
    #: display settings for legacy Debrief's views (``;FORMAT_…:`` lines), as read
    directives: list[dict[str, Any]] = field(default_factory=list)
    #: annotation lines read (everything but fixes, comments, blanks, errors and skips)
    annotation_lines: int = 0
    #: the slug that makes this file's non-track ids its own
    scope: str = ""


class LineError(Exception):
    """A line that cannot be read; the message is the reason."""


class Truncated(LineError):
    """A fix line ran out of fields; the message says what was missing."""


class NotImported(Exception):
    """A well-formed annotation this importer does not turn into a feature; the message says what."""


def line_issue(number: int, raw: str, reason: str) -> LineIssue:
    return LineIssue(number, raw[:MAX_ISSUE_TEXT], reason)
