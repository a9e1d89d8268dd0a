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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonFormat", "detect_format", "dump_document", "dump_feature"]

_BOM = b"\xef\xbb\xbf"
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

    def dumps(self, value: Any) -> str:
        """``value`` at depth 0 in this layout."""
        return json.dumps(
            value,
            indent=self.indent,
            separators=(self.item_sep, self.key_sep),
            ensure_ascii=self.ensure_ascii,
        )


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
    text = fmt.dumps(feature)
    if fmt.indent is None:
        return text
    return text.replace("\n", "\n" + fmt.unit * 2)


def dump_document(data: dict[str, Any], feature_texts: Sequence[str], fmt: JsonFormat) -> bytes:
    """``data`` in ``fmt``, with ``data["features"]`` written as the given per-feature texts."""
    if fmt.indent is None:
        feats = "[" + fmt.item_sep.join(feature_texts) + "]"
        parts = [
            fmt.dumps(k) + fmt.key_sep + (feats if k == "features" else fmt.dumps(v)) for k, v in data.items()
        ]
        text = "{" + fmt.item_sep.join(parts) + "}"
    elif not data:
        text = "{}"
    else:
        unit = fmt.unit
        if feature_texts:
            sep = ",\n" + unit * 2
            feats = "[\n" + unit * 2 + sep.join(feature_texts) + "\n" + unit + "]"
        else:
            feats = "[]"
        parts = []
        for k, v in data.items():
            value = feats if k == "features" else fmt.dumps(v).replace("\n", "\n" + unit)
            parts.append(unit + fmt.dumps(k) + fmt.key_sep + value)
        text = "{\n" + ",\n".join(parts) + "\n}"
    if fmt.trailing_newline:
        text += "\n"
    if fmt.crlf:
        text = text.replace("\n", "\r\n")
    out = text.encode("utf-8", "surrogatepass")
    return _BOM + out if fmt.bom else out
