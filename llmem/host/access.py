"""Who may use the host's page, its HTTP API and its WebSocket, checked in one place.

In order: on loopback the Host header must name this host (no DNS rebinding); with a token
(required beyond loopback) every request carries it (``Authorization: Bearer``, the ``token``
query parameter, or the cookie the page gets when opened with ``?token=``), compared in constant
time; a request that changes something (the WebSocket, a file saved, a chat renamed or deleted)
from a browser must come from this host's own page: its Origin, when there is one, is this
host's (or one given with ``--allow-origin``), so no other site's page can drive it.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse

from llmem.core.http import LOOPBACK, is_loopback

__all__ = ["COOKIE", "Access", "host_name"]

COOKIE = "llmem_host_token"


def host_name(header: str) -> str:
    """The host of a Host header, lower case, without its port or IPv6 brackets."""
    host = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    return host.strip("[]").lower()


class Access:
    def __init__(self, host: str, token: str | None, allowed_origins: tuple[str, ...] = ()) -> None:
        self.token = token
        self.local = is_loopback(host)
        self.names = {host.lower(), *(LOOPBACK if self.local else ())}
        self.extra_origins = {o.rstrip("/").lower() for o in allowed_origins}

    def token_of(self, conn: HTTPConnection) -> str | None:
        auth = conn.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            return auth[7:].strip()
        return conn.query_params.get("token") or conn.cookies.get(COOKIE)

    def refused(self, conn: HTTPConnection) -> str | None:
        """Why this request may not come in, or None."""
        if self.local and host_name(conn.headers.get("host", "")) not in self.names:
            return "this host answers only to its own name (Host header refused)"
        given = self.token_of(conn)
        if self.token is not None and not (
            given is not None and hmac.compare_digest(given.encode(), self.token.encode())
        ):
            return "a valid token is required (Authorization: Bearer <token>, or open the page with ?token=<token>)"
        return None

    def status_of(self, why: str) -> int:
        return 401 if self.token and "token" in why else 403

    def origin_ok(self, conn: HTTPConnection) -> bool:
        """A browser's request comes from this host's page (or an origin allowed); a request with
        no Origin is no browser's, which no foreign page could use."""
        origin = conn.headers.get("origin")
        if origin is None:
            return True
        if origin.rstrip("/").lower() in self.extra_origins:
            return True
        parts = urlsplit(origin.lower())
        return parts.scheme in ("http", "https") and parts.netloc == conn.headers.get("host", "").lower()

    def refusal(self, conn: HTTPConnection, *, change: bool = False) -> JSONResponse | None:
        """The JSON answer refusing ``conn`` (``change``: it would change something, so its Origin
        counts too), or None when it may come in."""
        why = self.refused(conn)
        if why:
            return JSONResponse({"error": why}, status_code=self.status_of(why))
        if change and not self.origin_ok(conn):
            return JSONResponse(
                {"error": f"a request from another site's page ({conn.headers.get('origin')}) is refused"},
                status_code=403,
            )
        return None
