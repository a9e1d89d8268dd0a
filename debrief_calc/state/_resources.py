"""The ``plots://list`` and ``plot://{filename}/{aspect}`` resources, and the handshake-era
connections subscribed to them."""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate

from llmem.core.errors import SuiteError
from llmem.core.serve import SuiteServer

__all__ = ["ASPECTS", "LegacySubscribers", "add_resources", "plot_uri"]

ASPECTS = ("features", "selection", "time", "viewport")


def plot_uri(filename: str, aspect: str) -> str:
    return f"plot://{quote(filename, safe='/')}/{aspect}"


_PLOT_URI = UriTemplate.parse("plot://{+filename}/{aspect}")


class LegacySubscribers:
    """Connections that sent ``resources/subscribe`` (handshake era), by canonical URI.

    The SDK hands each request a fresh ``ServerSession`` around the long-lived connection; the
    connection is what is kept (weakly: a closed connection drops out by itself).
    """

    def __init__(self) -> None:
        self._by_uri: dict[str, weakref.WeakSet[Any]] = {}

    @staticmethod
    def canonical(uri: str) -> str:
        if uri == "plots://list":
            return uri
        found = _PLOT_URI.match(uri)
        if found is None or found.get("aspect") not in ASPECTS:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri!r}", data={"uri": uri})
        return plot_uri(str(found["filename"]), str(found["aspect"]))

    @staticmethod
    def _peer(ctx: Any) -> Any:
        return getattr(ctx.session, "_connection", None) or ctx.session

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self._by_uri.setdefault(self.canonical(str(params.uri)), weakref.WeakSet()).add(self._peer(ctx))
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self._by_uri.get(self.canonical(str(params.uri)), weakref.WeakSet()).discard(self._peer(ctx))
        return types.EmptyResult()

    async def send(self, uri: str) -> None:
        peers = self._by_uri.get(uri)
        for peer in list(peers or ()):
            try:
                await peer.send_resource_updated(uri)
            except Exception:  # the client went away: forget it
                peers.discard(peer)  # type: ignore[union-attr]


def add_resources(server: SuiteServer, svc: Callable[[], Any]) -> None:
    def text(data: Any) -> str:
        return json.dumps(data, ensure_ascii=False)

    async def read(fn: Callable[..., Any], *args: Any) -> str:
        try:
            return text(await anyio.to_thread.run_sync(functools.partial(fn, *args)))
        except SuiteError as err:
            details = dict(err.details)
            raise MCPError(int(details.get("rpc_code", -32602)), err.message, data=err.to_dict()) from None

    @server.resource(
        "plots://list",
        name="plots",
        description="The open plots and the other plot files",
        mime_type="application/json",
    )
    async def plots_list() -> str:
        return await read(lambda: svc().list_plots())

    readers: dict[str, Callable[[str], Any]] = {
        "features": lambda f: svc().get_features(f, None, None, "summary", None, None),
        "selection": lambda f: svc().get_selection(f),
        "time": lambda f: svc().get_time(f),
        "viewport": lambda f: svc().get_viewport(f),
    }
    for aspect, reader in readers.items():

        async def resource(filename: str, reader: Callable[[str], Any] = reader) -> str:
            return await read(reader, filename)

        server.resource(
            f"plot://{{+filename}}/{aspect}",
            name=f"plot-{aspect}",
            description=f"The {aspect} of a plot (as debrief_get_{aspect} answers)",
            mime_type="application/json",
        )(_bind(resource))


def _bind(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The template function with only ``filename`` in its signature (the SDK matches names)."""

    async def resource(filename: str) -> str:
        result: str = await fn(filename)
        return result

    return resource
