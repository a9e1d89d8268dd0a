"""MCP Apps (SEP-1865, ``io.modelcontextprotocol/ui``) as the chat host sees them: which tools
a model may call and which only a view may, which tool results come with a view, and the
Content-Security-Policy a view runs under.

A view runs in the page's sandbox proxy, served from a second loopback port (another origin
than the page, as the specification asks of web hosts); this module knows nothing of the web,
only the rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_types import CallToolResult, Tool

__all__ = [
    "APP_MIME",
    "DEFAULT_VISIBILITY",
    "ViewRefused",
    "app_callable",
    "model_visible",
    "resource_uri",
    "view_csp",
    "view_of",
    "visibility",
]

APP_MIME: Final = "text/html;profile=mcp-app"
DEFAULT_VISIBILITY: Final = ("model", "app")
#: an origin a resource may declare: scheme, host (``*.`` allowed first), optional port; no path
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")


class ViewRefused(Exception):
    """A view asked for something it may not have: a JSON-RPC error code and the reason."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _ui(tool: Tool) -> Mapping[str, Any]:
    ui = (tool.meta or {}).get("ui")
    return ui if isinstance(ui, Mapping) else {}


def visibility(tool: Tool) -> tuple[str, ...]:
    """``_meta.ui.visibility``; ``["model", "app"]`` when absent or unreadable."""
    seen = _ui(tool).get("visibility")
    if not isinstance(seen, list) or not all(isinstance(v, str) for v in seen):
        return DEFAULT_VISIBILITY
    return tuple(seen)


def model_visible(tool: Tool) -> bool:
    """The specification: a host MUST NOT give the model a tool whose visibility lacks "model"."""
    return "model" in visibility(tool)


def app_callable(tool: Tool) -> bool:
    return "app" in visibility(tool)


def resource_uri(tool: Tool) -> str | None:
    """The ``ui://`` view a tool's results are shown in (``_meta.ui.resourceUri``, or the
    deprecated flat ``_meta["ui/resourceUri"]``)."""
    uri = _ui(tool).get("resourceUri", (tool.meta or {}).get("ui/resourceUri"))
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def view_of(
    server: str, tool: Tool, arguments: Mapping[str, Any] | None, result: CallToolResult
) -> dict[str, Any] | None:
    """What the page needs to show (and, after a reload, show again) a tool result's view: the
    server that owns it, its ``ui://`` address, the tool's input and its whole result. None
    when the tool links no view or its call failed (the text says what went wrong)."""
    uri = resource_uri(tool)
    if uri is None or result.is_error:
        return None
    return {
        "server": server,
        "uri": uri,
        "tool": tool.name,
        "toolInput": dict(arguments or {}),
        "toolResult": result.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def _origins(csp: Mapping[str, Any], key: str) -> list[str]:
    given = csp.get(key)
    if not isinstance(given, list):
        return []
    return [o for o in given if isinstance(o, str) and _ORIGIN.match(o)]


def refused_origins(csp: Mapping[str, Any]) -> list[str]:
    """Declared origins that are not plain origins (a path, a quote, a ``;``…): left out of the policy."""
    out: list[str] = []
    for key in ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"):
        given = csp.get(key)
        if isinstance(given, list):
            out += [str(o) for o in given if not (isinstance(o, str) and _ORIGIN.match(o))]
    return out


def view_csp(csp: Mapping[str, Any] | None) -> str:
    """The policy a view runs under, built as the specification's sandbox proxy builds it from
    ``_meta.ui.csp``: nothing outside unless declared, no nested frames unless declared, no
    plugins; declared origins that are not plain origins are left out."""
    c: Mapping[str, Any] = csp if isinstance(csp, Mapping) else {}

    def plus(key: str) -> str:
        found = _origins(c, key)
        return " " + " ".join(found) if found else ""

    resources = plus("resourceDomains")
    connect = plus("connectDomains")
    frames = _origins(c, "frameDomains")
    bases = _origins(c, "baseUriDomains")
    parts: Sequence[str] = (
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline'{resources}",
        f"style-src 'self' 'unsafe-inline'{resources}",
        f"img-src 'self' data:{resources}",
        f"font-src 'self'{resources}",
        f"media-src 'self' data:{resources}",
        f"connect-src{connect}" if connect else "connect-src 'none'",
        "frame-src " + (" ".join(frames) if frames else "'none'"),
        "object-src 'none'",
        "base-uri " + (" ".join(bases) if bases else "'self'"),
    )
    return "; ".join(parts)
