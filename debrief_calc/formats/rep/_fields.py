"""The fields of one ``;TYPE:`` line, read left to right as legacy Debrief's importers read them.

Fields are separated by any whitespace (tabs occur); a name may be double-quoted to hold spaces
(``"NON SUCH"``); a NULL field is any token whose first character is ``N``; a position is
``DD MM SS.SS H DDD MM SS.SS H`` (or decimal minutes or degrees), the latitude hemisphere perhaps
glued to the longitude degrees (``N021``). The label is the rest of the line, its whitespace
runs made single spaces."""

from __future__ import annotations

import re

from debrief_calc.formats.rep._positions import read_position, read_symbol
from debrief_calc.formats.rep._results import LineError
from debrief_calc.formats.rep._tokens import DateTimeReader, finite_number

__all__ = ["Fields", "label_and_comment"]

_TOKEN_RE = re.compile(r'"([^"]*)"|(\S+)')


def label_and_comment(text: str) -> tuple[str | None, str | None]:
    """A label that may end in ``// comment`` (legacy ``ImportReplay.getLabel``/``getComment``)."""
    if "//" not in text:
        return (text.strip() or None), None
    label, _, comment = text.partition("//")
    comment = comment.split("//", 1)[0]
    return (label.strip() or None), (comment.strip() or None)


class Fields:
    """A cursor over the tokens of one line (after its tag)."""

    def __init__(self, rest: str, kind: str) -> None:
        self.kind = kind
        self.text = rest
        self.tokens: list[str] = []
        self.quoted: list[bool] = []
        self.ends: list[int] = []
        for found in _TOKEN_RE.finditer(rest):
            quoted = found.group(1) is not None
            self.tokens.append(found.group(1) if quoted else found.group(2))
            self.quoted.append(quoted)
            self.ends.append(found.end())
        self.i = 0

    def error(self, message: str) -> LineError:
        return LineError(f"{self.kind}: {message}")

    def more(self) -> bool:
        return self.i < len(self.tokens)

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.more() else None

    def take(self, what: str) -> str:
        if not self.more():
            raise self.error(f"{what} missing")
        token = self.tokens[self.i]
        self.i += 1
        return token

    def name(self, what: str) -> str:
        token = self.take(what).strip()
        if not token:
            raise self.error(f"{what} is empty")
        return token

    def is_null(self) -> bool:
        """Whether the next field is NULL (a token starting with ``N``)."""
        token = self.peek()
        return token is not None and not self.quoted[self.i] and token[:1] == "N"

    def number(self, what: str) -> float:
        token = self.take(what)
        value = finite_number(token)
        if value is None:
            raise self.error(f"bad {what} {token[:40]!r} (expected a number)")
        return value

    def number_or_null(self, what: str) -> float | None:
        if self.is_null():
            self.i += 1
            return None
        return self.number(what)

    def date_time(self, clock: DateTimeReader, what: str = "date and time") -> tuple[int, str]:
        date = self.take(what)
        time = self.take(what)
        problems: list[str] = []
        when = clock.read(date, time, problems)
        if when is None:
            raise self.error("; ".join(problems))
        return when

    def symbol(self) -> tuple[str, str | None]:
        if not self.more():
            raise self.error("symbol missing")
        try:
            symbol, layer, index = read_symbol(self.tokens, self.i)
        except LineError as exc:
            raise self.error(str(exc)) from None
        self.i = index
        return symbol, layer

    def position(self, what: str = "position") -> tuple[float, float]:
        """(lon, lat); a glued hemisphere (``N021``) is split as legacy Debrief splits it."""
        tail = self.tokens[self.i :]
        before = len(tail)
        problems: list[str] = []
        try:
            found, index = read_position(tail, 0, problems)
        except LineError as exc:
            raise self.error(f"{what}: {exc}") from None
        if found is None:
            raise self.error(f"{what}: " + "; ".join(problems))
        self.i += index - (len(tail) - before)  # a split token counts once
        return found

    def rest(self) -> str:
        """The rest of the line, whitespace runs made single spaces (quotes kept)."""
        start = self.ends[self.i - 1] if self.i > 0 else 0
        self.i = len(self.tokens)
        return " ".join(self.text[start:].split())
