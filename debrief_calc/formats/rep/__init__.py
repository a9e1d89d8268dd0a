"""Parser for legacy Debrief REP ("replay") files.

Pure domain code: text in, GeoJSON Feature dicts and per-line issues out. Nothing here knows
about MCP, files or the plot store.

A REP file is line based:

* a *fix*, one position of one platform::

      YYMMDD HHMMSS.SSS NAME SYMBOL  DD MM SS.SS H  DDD MM SS.SS H  COURSE SPEED DEPTH [label]
      951212 050000.000 NELSON   @C   22 11 10.63 N 21 41 52.37 W 269.7   2.0      0

  Dates are ``YYMMDD`` (two-digit years >= 50 are 19xx, else 20xx) or ``YYYYMMDD``; times
  ``HHMMSS`` with optional decimal seconds; the name may be double-quoted to hold spaces; the
  symbol (``@C``, ``@A@00``, ``aA`` ...) may carry a ``[LAYER=...]`` block, attached or
  separated by whitespace. A position is degrees, minutes, seconds and hemisphere, or degrees,
  decimal minutes and hemisphere (``DD MM.MMM H``), or decimal degrees and hemisphere; the
  latitude hemisphere may be glued to the longitude degrees (``N021``), as legacy Debrief
  allows. Course in degrees, speed in knots, depth in metres (``NaN`` or missing -> ``None``).
  The symbol's colour letter gives the track its ``stroke`` as legacy Debrief's colour table does
  (``_colours``); labels and shapes take theirs alike.
* an annotation, a line starting with ``;TYPE:``. ``;NARRATIVE:``/``;NARRATIVE2:`` become
  comment annotations, ``;TEXT:`` a label at a point, ``;CIRCLE:``/``;RECT:``/``;POLY:`` zone
  annotations with a Polygon; every other type is reported in :attr:`RepResult.skipped`.
* a comment: ``;;`` anything, or ``;`` followed by free text (``; Invalid coordinate values``).

Every line that cannot be read is reported in :attr:`RepResult.errors` with its 1-based line
number and a reason naming what was wrong; the other lines are still imported.
"""

from __future__ import annotations

from debrief_calc.formats.rep._parser import parse_rep
from debrief_calc.formats.rep._results import MAX_ISSUE_TEXT, LineIssue, RepResult

__all__ = ["MAX_ISSUE_TEXT", "LineIssue", "RepResult", "parse_rep"]
