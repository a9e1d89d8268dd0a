"""A whole list of times read at once: ISO-8601 strings and epoch numbers as float seconds since the
Unix epoch (UTC), vectorised. Private to :mod:`debrief_calc.tracks.times`, which re-exports it:
import from there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks._feature_parts import field_failure, float_or_nan
from debrief_calc.tracks._time_text import parse_iso

__all__ = ["parse_times"]

# A bare number in a times list at or above this is read as epoch milliseconds (1973 onwards);
# below it, as epoch seconds (up to the year 5138).
_EPOCH_MS_THRESHOLD: Final = 1e11

_DAYS_IN_MONTH: Final = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
# The byte columns of "YYYY-MM-DDTHH:MM:SS" that hold digits, in pairs.
_DIGITS: Final = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_SEPARATORS: Final = ((4, b"-"), (7, b"-"), (13, b":"), (16, b":"))
_ROWS_PER_BLOCK: Final = 1 << 16


def _parse_fixed(block: NDArray[np.uint8], zulu: bool) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Parse rows of ASCII bytes ``YYYY-MM-DDTHH:MM:SS[.f…][Z]``, all of one width; the mask
    says which rows are well formed (the others are left to :func:`parse_iso`)."""
    m, w = block.shape
    body = w - 1 if zulu else w
    frac_digits = body - 20
    out = np.full(m, np.nan)
    ok = np.zeros(m, dtype=bool)
    if body < 19 or frac_digits == 0:
        return out, ok
    for lo in range(0, m, _ROWS_PER_BLOCK):
        rows = block[lo : lo + _ROWS_PER_BLOCK]
        # uint8 arithmetic wraps, so one comparison checks '0' <= byte <= '9'
        digits = rows[:, :body] - np.uint8(48)
        date_digits = digits[:, _DIGITS]
        good = np.all(date_digits < 10, axis=1)
        for col, char in _SEPARATORS:
            good &= rows[:, col] == char[0]
        good &= (rows[:, 10] == ord("T")) | (rows[:, 10] == ord(" "))
        pairs = date_digits[:, 0::2].astype(np.int64) * 10 + date_digits[:, 1::2]
        century, year, month, day, hour, minute, second = pairs.T
        year = century * 100 + year
        micros = np.zeros(len(rows), dtype=np.int64)
        if frac_digits > 0:
            good &= (rows[:, 19] == ord(".")) & np.all(digits[:, 20:body] < 10, axis=1)
            for j in range(min(frac_digits, 6)):  # beyond microseconds: truncated, as datetime does
                micros += digits[:, 20 + j].astype(np.int64) * 10 ** (5 - j)
        good &= (month >= 1) & (month <= 12) & (hour < 24) & (minute < 60) & (second < 60) & (year >= 1)
        month = np.clip(month, 1, 12)
        leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
        good &= (day >= 1) & (day <= _DAYS_IN_MONTH[month - 1] + ((month == 2) & leap))
        # days from the civil date (H. Hinnant's algorithm), proleptic Gregorian like datetime
        y = year - (month <= 2)
        era = y // 400
        yoe = y - era * 400
        doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
        days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
        seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
        out[lo : lo + len(rows)] = seconds + micros / 1e6
        ok[lo : lo + len(rows)] = good
    return out, ok


def _parse_iso_strings(values: Sequence[str]) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Vectorised parse of the common forms; the strings it cannot read are marked not ok."""
    n = len(values)
    out = np.full(n, np.nan)
    ok = np.zeros(n, dtype=bool)
    try:
        data = np.frombuffer("".join(values).encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        return out, ok
    lens = np.fromiter(map(len, values), dtype=np.int64, count=n)
    ends = np.cumsum(lens)
    if not data.size:  # empty strings only: none is a time (the one-by-one reader says why)
        return out, ok
    zulu = (data[ends - 1] == ord("Z")) & (lens > 0)
    for w in np.unique(lens).tolist():
        if w < 19:
            continue
        for flag in (True, False):
            sel = (lens == w) & (zulu if flag else ~zulu)
            m = int(np.count_nonzero(sel))
            if m == n:
                return _parse_fixed(data.reshape(n, w), flag)
            if m == 0:
                continue
            rows = np.flatnonzero(sel)
            block = np.empty((m, w), dtype=np.uint8)
            for j, start in enumerate(range(-w, 0)):
                block[:, j] = data[ends[rows] + start]
            out[rows], ok[rows] = _parse_fixed(block, flag)
    return out, ok


def parse_times(values: object, *, field: str = "times", label: str = "track", fid: str | None = None) -> FloatArray:
    """A list of times (ISO-8601 strings, or epoch numbers: milliseconds from 1e11 up, seconds
    below) as epoch seconds. ValidationFailed names the first bad index and its value."""
    if not isinstance(values, list | tuple):
        raise field_failure(label, fid, field, "type", f"{field} must be a list of times, got {type(values).__name__}")
    n = len(values)
    if n and all(isinstance(v, str) for v in values):
        out, ok = _parse_iso_strings(values)
    else:
        out, ok = np.full(n, np.nan), np.zeros(n, dtype=bool)
        numbers = [i for i, v in enumerate(values) if isinstance(v, int | float) and not isinstance(v, bool)]
        if numbers:
            try:
                num = np.array([values[i] for i in numbers], dtype=np.float64)
            except OverflowError:  # an integer beyond any float: reported below
                num = np.array([float_or_nan(values[i]) for i in numbers])
            finite = np.isfinite(num)
            if finite.any() and float(np.max(np.abs(num[finite]))) >= _EPOCH_MS_THRESHOLD:
                num = num / 1000.0
            out[numbers] = num
            ok[numbers] = finite
    for i in np.flatnonzero(~ok).tolist():
        value = values[i]
        if isinstance(value, str):
            try:
                out[i] = parse_iso(value)
                continue
            except ValidationFailed:
                pass
        raise field_failure(
            label,
            fid,
            field,
            "time-format",
            f"{field}[{i}] = {value!r} is not a time: use ISO-8601 like 2024-11-14T21:16:53.661Z",
            index=i,
            value=repr(value)[:100],
        )
    return out
