"""A Markdown file read as GitHub, VS Code and other CommonMark readers read it: rendered by
markdown-it-py (a CommonMark renderer, HTML blocks kept), then each code block and picture found
with the elements it sits inside. An export is checked by what a reader would see, not by its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from markdown_it import MarkdownIt

__all__ = ["Rendered", "render"]

_VOID = {"img", "br", "hr", "input", "meta", "link"}


@dataclass(frozen=True)
class Rendered:
    """A code block (``tag`` "code", its text) or a picture ("img", its src), with the tags it is in."""

    tag: str
    inside: tuple[str, ...]
    text: str
    language: str = ""


class _Walk(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.found: list[Rendered] = []
        self._code: list[str] | None = None
        self._language = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if tag == "img":
            self.found.append(Rendered("img", tuple(self.open), given.get("src") or ""))
        elif tag == "code" and self.open and self.open[-1] == "pre":
            self._code, self._language = [], (given.get("class") or "").removeprefix("language-")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code is not None:
            self.found.append(Rendered("code", tuple(self.open[:-1]), "".join(self._code), self._language))
            self._code = None
        if tag in self.open:
            while self.open.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._code is not None:
            self._code.append(data)


def render(markdown: str) -> tuple[str, list[Rendered]]:
    """The HTML a CommonMark reader makes of ``markdown``, and its code blocks and pictures in order."""
    html = MarkdownIt("commonmark", {"html": True}).render(markdown)
    walk = _Walk()
    walk.feed(html)
    return html, walk.found
