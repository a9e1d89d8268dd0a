"""Dates, times and numbers of REP tokens, read strictly and cached per file."""

from __future__ import annotations

import math
import re

from debrief_calc.formats.rep._results import LineError

__all__ = ["DATE_TOKEN_RE", "TIME_TOKEN_RE", "DateTimeReader", "finite_number", "to_float"]

_US_PER_DAY = 86_400_000_000
DATE_TOKEN_RE = re.compile(r"\d{6}(?:\d{2})?\Z")
TIME_TOKEN_RE = re.compile(r"\d{6}(?:\.\d*)?\Z")
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_in_month(year: int, month: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _MONTH_DAYS[month - 1]


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 (proleptic Gregorian); cheap and allocation free."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _read_date(token: str) -> tuple[int, str]:
    """``YYMMDD`` or ``YYYYMMDD`` -> (days since epoch, ``YYYY-MM-DD``)."""
    if DATE_TOKEN_RE.match(token) is None:
        raise LineError(f"bad date '{token}': expected YYMMDD or YYYYMMDD")
    if len(token) == 6:
        year = int(token[0:2])
        year += 1900 if year >= 50 else 2000
        month, day = int(token[2:4]), int(token[4:6])
    else:
        year, month, day = int(token[0:4]), int(token[4:6]), int(token[6:8])
    if not 1 <= month <= 12:
        raise LineError(f"bad date '{token}': month {month} out of range 1–12")
    last = _days_in_month(year, month)
    if not 1 <= day <= last:
        raise LineError(f"bad date '{token}': day {day} out of range 1–{last} for {year}-{month:02d}")
    return _days_from_civil(year, month, day), f"{year:04d}-{month:02d}-{day:02d}"


def _read_time(token: str) -> tuple[int, str]:
    """``HHMMSS[.SSS]`` -> (microseconds into the day, ``HH:MM:SS[.fff]``)."""
    if TIME_TOKEN_RE.match(token) is None:
        raise LineError(f"bad time '{token}': expected HHMMSS or HHMMSS.SSS")
    hour, minute, second = int(token[0:2]), int(token[2:4]), int(token[4:6])
    if hour > 23:
        raise LineError(f"bad time '{token}': hour {hour} out of range 0–23")
    if minute > 59:
        raise LineError(f"bad time '{token}': minutes {minute} out of range 0–59")
    if second > 59:
        raise LineError(f"bad time '{token}': seconds {second} out of range 0–59")
    frac = token[7:13]
    micros = int(frac.ljust(6, "0")) if frac else 0
    text = f"{token[0:2]}:{token[2:4]}:{token[4:6]}"
    if micros:
        text += f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    return ((hour * 60 + minute) * 60 + second) * 1_000_000 + micros, text


class _Floats(dict[str, float]):
    """``float`` of a token, cached: in a REP file the same few thousand number tokens recur."""

    def __missing__(self, token: str) -> float:
        value = to_float(token)
        self[token] = value
        return value


class DateTimeReader:
    """Dates repeat on almost every line of a file, so they are parsed once and cached."""

    __slots__ = ("_dates", "numbers")

    def __init__(self) -> None:
        self.numbers = _Floats()
        # date token -> (microseconds from the epoch to its midnight, "YYYY-MM-DD") or the reason
        self._dates: dict[str, tuple[int, str] | str] = {}

    def _lookup(self, date_token: str) -> tuple[int, str] | str:
        cached = self._dates.get(date_token)
        if cached is None:
            try:
                days, text = _read_date(date_token)
                cached = (days * _US_PER_DAY, text)
            except LineError as exc:
                cached = str(exc)
            self._dates[date_token] = cached
        return cached

    def day(self, date_token: str) -> tuple[int, str] | None:
        cached = self._lookup(date_token)
        return None if isinstance(cached, str) else cached

    def read(self, date_token: str, time_token: str, problems: list[str]) -> tuple[int, str] | None:
        """(sort key in microseconds since the epoch, ISO-8601 UTC) or None with problems noted."""
        cached = self._lookup(date_token)
        if isinstance(cached, str):
            problems.append(cached)
        try:
            micros, time_text = _read_time(time_token)
        except LineError as exc:
            problems.append(str(exc))
            return None
        if isinstance(cached, str):
            return None
        return cached[0] + micros, f"{cached[1]}T{time_text}Z"


def to_float(token: str) -> float:
    """``float`` without its Python-literal extras (``1_000``); ValueError when not a number."""
    if "_" in token:
        raise ValueError(token)
    return float(token)


def finite_number(token: str) -> float | None:
    """A finite float, or None (``float`` alone would accept ``nan`` and ``inf``)."""
    try:
        value = to_float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
