"""Write a plot back in the layout it was read in, one feature at a time.

A plot written by Debrief is ``JSON.stringify(fc, null, 2)``, which is byte for byte what
``json.dumps(fc, indent=2, ensure_ascii=False)`` gives. :func:`detect_format` reads the layout of
a file (indent of spaces or tabs or none, separators, escaping, trailing newline, CRLF, BOM) and
:func:`dump_document` writes a value in it. The features list is assembled from one text per
feature, so a change to one feature re-encodes only that feature: CPython's fast C encoder is
not used when ``indent`` is set, and re-encoding a 577 KB plot costs ~17 ms, more than the whole
budget of a small change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

__all__ = ["JsonFormat", "detect_format", "dump_document", "dump_feature"]

_BOM = b"\xef\xbb\xbf"
_compact = json.JSONEncoder(separators=(",", ":")).encode
_KEY_SEP = re.compile(rb'"\s*:( ?)')
_ITEM_SEP = re.compile(rb'["\]}0-9el],( ?)')


@dataclass(frozen=True)
class JsonFormat:
    indent: int | str | None = 2
    item_sep: str = ","
    key_sep: str = ": "
    ensure_ascii: bool = False
    trailing_newline: bool = False
    crlf: bool = False
    bom: bool = False

    @property
    def unit(self) -> str:
        """One level of indentation."""
        if self.indent is None:
            return ""
        return self.indent if isinstance(self.indent, str) else " " * self.indent

    def dumps(self, value: Any, level: int = 0) -> str:
        """``value`` as it sits ``level`` levels deep in this layout (continuation lines indented)."""
        if self.indent is None:
            return json.dumps(value, separators=(self.item_sep, self.key_sep), ensure_ascii=self.ensure_ascii)
        strings = encode_basestring_ascii if self.ensure_ascii else encode_basestring
        return _indented(value, self, strings, level)


def _is_number(x: Any) -> bool:
    return type(x) is float or type(x) is int


def _indented(value: Any, fmt: JsonFormat, strings: Callable[[str], str], level: int) -> str:
    """What ``json.dumps(value, indent=...)`` writes, at C speed for the arrays of numbers and of
    strings that make up most of a plot (stdlib's indenting encoder is pure Python)."""
    kind = type(value)
    if kind is str:
        return strings(value)
    if kind is float or kind is int or kind is bool or value is None:
        return _compact(value)
    unit = fmt.unit
    inner, close = "\n" + unit * (level + 1), "\n" + unit * level
    if kind is list:
        if not value:
            return "[]"
        head = value[0]
        if _is_number(head) and all(_is_number(x) for x in value):
            return "[" + inner + _compact(value)[1:-1].replace(",", "," + inner) + close + "]"
        if type(head) is str and all(type(x) is str for x in value):
            return "[" + inner + ("," + inner).join(map(strings, value)) + close + "]"
        if type(head) is list and all(type(p) is list and p and all(_is_number(x) for x in p) for p in value):
            inner2 = inner + unit  # rows of numbers (coordinates): only brackets and commas to place
            body = _compact(value)[2:-2].replace("],[", "\x00").replace(",", "," + inner2)
            body = body.replace("\x00", inner + "]," + inner + "[" + inner2)
            return "[" + inner + "[" + inner2 + body + inner + "]" + close + "]"
        parts = [_indented(x, fmt, strings, level + 1) for x in value]
        return "[" + inner + ("," + inner).join(parts) + close + "]"
    if kind is dict and all(type(k) is str for k in value):
        if not value:
            return "{}"
        sep = fmt.key_sep
        items = [strings(k) + sep + _indented(x, fmt, strings, level + 1) for k, x in value.items()]
        return "{" + inner + ("," + inner).join(items) + close + "}"
    # anything unusual (tuples, non-string keys, ...): the stdlib's rules
    text = json.dumps(value, indent=fmt.indent, separators=(",", fmt.key_sep), ensure_ascii=fmt.ensure_ascii)
    return text.replace("\n", close)


#: What a new plot gets: Debrief's own layout.
DEFAULT_FORMAT = JsonFormat()


def detect_format(raw: bytes) -> JsonFormat:
    """The layout of a JSON document; falls back to Debrief's for anything it cannot tell."""
    bom = raw.startswith(_BOM)
    body = raw[len(_BOM) :] if bom else raw
    head = body[:4096]
    start = head.find(b"{")
    if start < 0:
        return DEFAULT_FORMAT
    after = head[start + 1 :]
    indent: int | str | None
    item_sep = ","
    if after.startswith((b"\n", b"\r\n")):
        line = after.lstrip(b"\r\n")
        ws = line[: len(line) - len(line.lstrip(b" \t"))]
        if ws and set(ws) == {ord("\t")}:
            indent = ws.decode()
        elif b"\t" in ws:
            indent = 2
        else:
            indent = len(ws)
    else:
        indent = None
        m = _ITEM_SEP.search(head)
        item_sep = ", " if m is None or m.group(1) else ","
    key = _KEY_SEP.search(head)
    key_sep = ": " if key is None or key.group(1) else ":"
    non_ascii = not body.isascii()
    return JsonFormat(
        indent=indent,
        item_sep=item_sep,
        key_sep=key_sep,
        ensure_ascii=(not non_ascii) and b"\\u" in body,
        trailing_newline=body.endswith(b"\n"),
        crlf=b"\r\n" in head,
        bom=bom,
    )


def dump_feature(feature: Any, fmt: JsonFormat) -> str:
    """A feature's text as it sits inside the ``features`` list (continuation lines indented)."""
    return fmt.dumps(feature, level=2)


def dump_document(data: dict[str, Any], feature_texts: Sequence[str], fmt: JsonFormat) -> bytes:
    """``data`` in ``fmt``, with ``data["features"]`` written as the given per-feature texts."""
    # One join of all pieces: every extra concatenation would copy the whole document again.
    pieces: list[str] = []
    if fmt.indent is None:
        sep, indent, open_, close = fmt.item_sep, "", "{", "}"
        feat_open, feat_sep, feat_close = "[", fmt.item_sep, "]"
    else:
        unit = fmt.unit
        sep, indent, open_, close = ",\n", unit, "{\n", "\n}"
        feat_open, feat_sep, feat_close = "[\n" + unit * 2, ",\n" + unit * 2, "\n" + unit + "]"
    if not data:
        pieces.append("{}")
    else:
        pieces.append(open_)
        for n, (key, value) in enumerate(data.items()):
            if n:
                pieces.append(sep)
            pieces += (indent, fmt.dumps(key), fmt.key_sep)
            if key == "features" and feature_texts:
                pieces.append(feat_open)
                for i, text in enumerate(feature_texts):
                    if i:
                        pieces.append(feat_sep)
                    pieces.append(text)
                pieces.append(feat_close)
            elif key == "features":
                pieces.append("[]")
            else:
                pieces.append(fmt.dumps(value, level=1))
        pieces.append(close)
    if fmt.trailing_newline:
        pieces.append("\n")
    text = "".join(pieces)
    if fmt.crlf:
        text = text.replace("\n", "\r\n")
    out = text.encode("utf-8", "surrogatepass")
    return _BOM + out if fmt.bom else out
