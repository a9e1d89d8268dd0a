"""The clock's text, written and read. Private to :mod:`debrief_calc.tracks.times`, which re-exports it: import from
there.

Two precisions, one rule each:

* an **answer** (JSON a model reads and may pass back) prints an instant to the millisecond,
  rounded (:func:`iso`): ``2024-11-14T16:16:53.662Z`` for a fix stored at ``…53.661999``, and
  ``…T10:00:00Z`` for a whole second. Read back as a window's bound it means that instant: the
  window's comparisons allow half a millisecond (:data:`TOLERANCE`), so no fix is lost to the
  rounding;
* a **display** (a picture's header, its captions and labels, the live view's clock and notes)
  shows the nearest second (:func:`second`, halves up): ``10:45:08.902`` is ``10:45:09`` in
  every picture, label and view, and a DTG (``DDHHMMZ``) is that second's minute. The live view's
  JavaScript does the same sum (``Math.floor(t + 0.5)``), tested against this module in chromium.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final

from debrief_calc.errors import ValidationFailed

if TYPE_CHECKING:  # numpy comes with the first array of times, not with the server's start
    from debrief_calc.geo._arrays import FloatArray

__all__ = ["TOLERANCE", "clock", "dtg", "iso", "iso_many", "iso_second", "parse_iso", "second", "stamp"]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: How far a fix may lie outside a window's bound and still be in it: half a millisecond (what an
#: answer's rounding to the millisecond can move an instant), and a microsecond for the float.
TOLERANCE: Final = 0.0005 + 1e-6


# ISO-8601 extended format: date, optionally a time (to the hour, minute, second or a
# fraction) and a zone. datetime.fromisoformat alone would also take any separator character.
_ISO_EXTENDED: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[Tt ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
    r"(?:[Zz]|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d+)?)?)?)?)?",
    re.ASCII,
)


def parse_iso(s: str) -> float:
    """An ISO-8601 date-time as epoch seconds; ``Z``, offsets, any fraction, naive = UTC."""
    if not isinstance(s, str):
        raise ValidationFailed(f"time {s!r} is not an ISO-8601 string", details={"field": "time", "rule": "iso-8601"})
    text = s.strip()
    try:
        if not _ISO_EXTENDED.fullmatch(text):
            raise ValueError(text)
        if text[-1:] in ("z", "Z"):
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(
            f"time {s!r} is not ISO-8601 (like 2024-11-14T21:16:53.661Z)",
            details={"field": "time", "rule": "iso-8601", "value": s},
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH).total_seconds()


def _finite(t: float) -> float:
    if not math.isfinite(t):
        raise ValidationFailed(f"time {t!r} is not finite", details={"field": "time", "rule": "finite"})
    return float(t)


def iso(t: float) -> str:
    """Epoch seconds as an answer prints them, ISO-8601 UTC: ``2024-11-14T21:16:53Z``, or
    ``…53.662Z`` when the time is not a whole second (rounded to the millisecond)."""
    ms = round(_finite(t) * 1000)
    dt = (_EPOCH + timedelta(milliseconds=ms)).replace(tzinfo=None)
    if ms % 1000 == 0:
        return dt.isoformat(timespec="seconds") + "Z"
    return dt.isoformat(timespec="milliseconds") + "Z"


def iso_many(t: FloatArray) -> list[str]:
    """:func:`iso` for a whole array at once (NaN gives an empty string)."""
    import numpy as np

    values = np.asarray(t, dtype=np.float64)
    finite = np.isfinite(values)
    ms = np.zeros(values.shape, dtype=np.int64)
    ms[finite] = np.round(values[finite] * 1000).astype(np.int64)
    text = np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms")
    whole = np.strings.endswith(text, ".000")
    text = np.where(whole, np.strings.slice(text, 0, -4), text)
    out: list[str] = np.strings.add(text, "Z").tolist()
    for i in np.flatnonzero(~finite):
        out[i] = ""
    return out


def second(t: float) -> int:
    """The whole second an instant is displayed as: the nearest, halves up (``10:45:08.5`` is
    ``10:45:09``), as the live view's ``Math.floor(t + 0.5)``."""
    return math.floor(_finite(t) + 0.5)


def iso_second(t: float) -> str:
    """The instant as displayed, ISO-8601 to the nearest second: ``2024-11-14T10:45:09Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second(t)))


def stamp(t: float) -> str:
    """``YYYY-MM-DD HH:MM:SS`` of the nearest second (a picture's caption)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(second(t)))


def dtg(t: float) -> str:
    """Debrief's date-time group ``DDHHMMZ`` (day of the month, hours, minutes, Z) of the nearest
    second: a fix at ``10:44:59.6`` is ``…1045Z``, as its clock reads ``10:45:00``."""
    tm = time.gmtime(second(t))
    return f"{tm.tm_mday:02d}{tm.tm_hour:02d}{tm.tm_min:02d}Z"


def clock(t: float, step: float = 1.0) -> str:
    """``HH:MM:SS`` of the nearest second (``HH:MM`` for a ``step`` of a minute or more; the day
    first, ``DD/HH:MM``, at midnight of an hourly step or for a daily one)."""
    tm = time.gmtime(second(t))
    text = f"{tm.tm_hour:02d}:{tm.tm_min:02d}"
    if step < 60:
        text += f":{tm.tm_sec:02d}"
    if step >= 86400 or (tm.tm_hour == 0 and tm.tm_min == 0 and step >= 3600):
        text = f"{tm.tm_mday:02d}/{text}"
    return text
