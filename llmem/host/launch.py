"""Starting a configured stdio server: the environment it gets, its stderr kept, and why it died.

The MCP SDK starts a server with a short "safe" environment (``HOME``, ``PATH``, ``SHELL``,
``TERM``, ``USER``, ``LOGNAME``; on Windows its own list): no API key of the host reaches a
server. That is too short for a server to start on many machines: ``uvx`` behind a proxy or a
company's certificate authority needs ``HTTPS_PROXY`` and ``SSL_CERT_FILE``, uv its ``UV_*``
settings, Python its locale. :func:`server_environment` adds those, by name (never a key: no
``*_API_KEY``, nothing of ``LLMEM_HOST_*``), and the config's own ``env`` goes on top.

A server's stderr is read by :class:`StderrTail` (a pipe and a reader thread): its lines go to
the host's log at debug level, the last ones are kept, and when the server dies (at start, or
later: its stderr closes) :func:`failure_report` says what happened with those lines and a hint.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shlex
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

__all__ = ["PASSED_PREFIXES", "PASSED_VARIABLES", "StderrTail", "failure_report", "server_environment"]

log = logging.getLogger("llmem.host.servers")

#: variables a server may need to start, passed on when the host has them
PASSED_VARIABLES = (
    # certificates (Python's ssl, requests, curl, Node, pip, git)
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_CAINFO",
    # proxies, in both spellings tools read
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    # text, time and temporary files
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    # where user programs keep their caches and settings (uv's cache, platformdirs)
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
)
#: families passed on whole: uv's and pip's settings (index, cache, offline, their credentials), npm's, and
#: the suite's own limits and folders (``LLMEM_*``, but for what belongs to the host or to another transport)
PASSED_PREFIXES = ("UV_", "PIP_", "NPM_CONFIG_", "npm_config_", "LLMEM_")
_NOT_PASSED = re.compile(r"^LLMEM_(HOST|AUTH_TOKEN$|TRANSPORT$)")

TAIL_LINES = 12  # of a dead server's stderr, in its report
_LINE_CHARS = 400


def server_environment(extra: Mapping[str, str] | None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a configured server starts with: the SDK's safe default names, the
    variables a server needs to reach its packages (:data:`PASSED_VARIABLES`,
    :data:`PASSED_PREFIXES`; never a provider's key nor the host's token), then the config's
    ``env``, which wins. ``environ``: the host's environment (default ``os.environ``)."""
    source = os.environ if environ is None else environ
    env: dict[str, str] = {}
    for name, value in source.items():
        if value.startswith("()"):  # a shell function, as the SDK refuses
            continue
        family = name.startswith(PASSED_PREFIXES) and not _NOT_PASSED.match(name)
        if family or name in DEFAULT_INHERITED_ENV_VARS or name in PASSED_VARIABLES:
            env[name] = value
    env.update(extra or {})
    return env


class StderrTail:
    """A server's stderr: a pipe whose write end the server gets (``writer``), read line by line
    in a thread; each line goes to the log at debug level, the last ``keep`` are kept.
    ``on_end`` is called (in the reader thread) when the stream ends: the server is gone."""

    def __init__(self, server: str, keep: int = 40, on_end: Callable[[], None] | None = None) -> None:
        self.server = server
        self._lines: deque[str] = deque(maxlen=keep)
        self._on_end = on_end
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._read, name=f"stderr of {server}", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with self._reader:
            for line in self._reader:
                text = line.rstrip("\n")
                if not text.strip():
                    continue
                self._lines.append(text if len(text) <= _LINE_CHARS else text[: _LINE_CHARS - 1] + "…")
                log.debug("%s", text, extra={"mcp_server": self.server})
        if self._on_end is not None:
            self._on_end()

    def lines(self, wait_s: float = 0.0) -> list[str]:
        """The last lines; ``wait_s``: first wait that long for the stream to end (a dead server's
        last words may still be in the pipe)."""
        if wait_s > 0:
            self._thread.join(wait_s)
        return list(self._lines)

    def close(self) -> None:
        """Close the host's copy of the write end: the stream ends once the server's copy is closed."""
        if not self.writer.closed:
            self.writer.close()


_SUITE_SCRIPTS = ("llmem-mcp", "debrief-calc-mcp", "debrief-state-mcp")
_CERTIFICATE = re.compile(r"certificate|CERTIFICATE_VERIFY_FAILED|SSL|tls|invalid peer", re.IGNORECASE)
_NETWORK = re.compile(
    r"failed to fetch|could not connect|connection (refused|reset)|timed? ?out|dns|resolve host|network|proxy",
    re.IGNORECASE,
)
_MISSING_MODULE = re.compile(r"ModuleNotFoundError|No module named", re.IGNORECASE)


def _missing_command(command: str, exc: BaseException) -> bool:
    return isinstance(exc, FileNotFoundError) or (
        isinstance(exc, OSError) and exc.errno == errno.ENOENT and Path(command).name in str(exc)
    )


def failure_report(
    server: str,
    command: str,
    args: Sequence[str],
    exc: BaseException | None,
    what: str,
    tail: Sequence[str],
    *,
    stage: str = "could not start",
) -> str:
    """Why a server is not running, in words a person can act on: it ``stage`` (could not start,
    stopped), ``what`` happened, its last stderr lines, and a hint (``spawn uvx ENOENT`` → is it
    installed in this venv?)."""
    name = Path(command).name
    uv = name in ("uvx", "uv", "uvx.exe", "uv.exe")
    shown = " ".join(shlex.quote(a) for a in (command, *args))
    if exc is not None and _missing_command(command, exc):
        what = f"spawn {command} ENOENT: there is no command {command!r} on PATH"
        if uv:
            hint = (
                "uv is not installed here: install it (python -m pip install uv), or launch the installed console "
                f"scripts ({', '.join(_SUITE_SCRIPTS)}) instead of uvx, as mcp_config.example.json does"
            )
        elif name in _SUITE_SCRIPTS:
            hint = (
                f"is it installed in this venv? python -m pip install llmem-debrief-mcp, then start llmem-host from "
                f"the same venv (or give {name}'s absolute path in the config)"
            )
        else:
            hint = f"is it installed in this venv, or on PATH? Give {name}'s absolute path in the config otherwise"
    elif isinstance(exc, PermissionError):
        hint = f"{command} is not executable by this user: chmod +x it, or give the interpreter as the command"
    else:
        text = "\n".join(tail)
        if _CERTIFICATE.search(text):
            hint = (
                "it could not verify a certificate: set SSL_CERT_FILE (or SSL_CERT_DIR) to your certificate "
                "bundle; llmem-host passes both on to the servers"
            )
        elif _NETWORK.search(text):
            hint = "it could not reach the network: set HTTPS_PROXY (and NO_PROXY) if your network needs a proxy"
        elif _MISSING_MODULE.search(text):
            hint = "a Python module is missing: is the server installed with its extras, in the venv it runs from?"
        else:
            hint = f"run it by hand to see it start: {shown}"
        if uv:
            hint += "; or try `uvx --offline` (uv's cache only, no network) in the config's args"
    lines = [f"server {server!r} {stage}: {what}"]
    if tail:
        lines.append("  its last lines on stderr:")
        lines += [f"    | {line}" for line in tail[-TAIL_LINES:]]
    elif not isinstance(exc, OSError):  # it ran (a command that could not be launched wrote nothing)
        lines.append("  (it wrote nothing on stderr)")
    lines.append(f"  hint: {hint}")
    return "\n".join(lines)
