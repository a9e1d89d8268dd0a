"""The command line every server of the suite shares (click): options, env vars, start-up.

Only ``--help`` and ``--version`` write to stdout; they exit at once. Everything heavier than
option parsing is imported after the options are read, so start-up stays close to the SDK's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from llmem import __version__
from llmem.core.config import DEFAULT_PORTS, ServerConfig

if TYPE_CHECKING:
    from llmem.core.serve import SuiteServer

__all__ = ["ServerFactory", "server_command"]

ServerFactory = Callable[[ServerConfig], "SuiteServer"]


def server_command(server_name: str, load_factory: Callable[[], ServerFactory], help_text: str) -> click.Command:
    @click.command(name=server_name, help=help_text, context_settings={"help_option_names": ["-h", "--help"]})
    @click.option(
        "--workspace",
        envvar="LLMEM_WORKSPACE",
        type=click.Path(file_okay=False, path_type=Path),
        help="The project folder (llmem) or the folder of .plot.json files (debrief). "
        "Default: the client's roots, else the current directory.",
    )
    @click.option(
        "--store",
        envvar="LLMEM_STORE",
        default="workspace",
        show_default=True,
        help="Where the artifact store lives: 'workspace' (<workspace>/.llmem), 'user' (the user data folder) or a path.",
    )
    @click.option(
        "--transport",
        envvar="LLMEM_TRANSPORT",
        type=click.Choice(["stdio", "streamable-http"]),
        default="stdio",
        show_default=True,
    )
    @click.option("--host", default="127.0.0.1", show_default=True, help="HTTP only.")
    @click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=DEFAULT_PORTS[server_name],
        show_default=True,
        help="HTTP only.",
    )
    @click.option("--allow-host", multiple=True, help="HTTP only: an extra Host header value to admit.")
    @click.option("--allow-origin", multiple=True, help="HTTP only: an extra Origin to admit.")
    @click.option(
        "--auth-token",
        envvar="LLMEM_AUTH_TOKEN",
        default=None,
        help="HTTP only: every request must carry 'Authorization: Bearer <token>'. Required beyond loopback; "
        "better set as LLMEM_AUTH_TOKEN than on the command line.",
    )
    @click.option(
        "--log-level",
        envvar="LLMEM_LOG_LEVEL",
        type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
        default="info",
        show_default=True,
    )
    @click.version_option(__version__, prog_name=server_name)
    def command(
        workspace: Path | None,
        store: str,
        transport: str,
        host: str,
        port: int,
        allow_host: tuple[str, ...],
        allow_origin: tuple[str, ...],
        auth_token: str | None,
        log_level: str,
    ) -> None:
        from llmem.core.logsetup import setup_logging

        if workspace is not None:
            workspace = workspace.expanduser()
            if not workspace.is_absolute():
                workspace = workspace.resolve()
            if not workspace.is_dir():
                raise click.BadParameter(f"{workspace} is not an existing folder", param_hint="--workspace")
        if transport == "streamable-http" and not auth_token:
            from llmem.core.http import is_loopback

            if not is_loopback(host):
                raise click.UsageError(
                    f"--host {host} is beyond loopback: anyone who can reach it could call the tools. "
                    "Set a token with LLMEM_AUTH_TOKEN (or --auth-token), or serve on 127.0.0.1."
                )
        setup_logging(server_name, log_level)
        try:
            from llmem.core.config import Limits

            limits = Limits.from_env()
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        config = ServerConfig(
            server_name=server_name,
            workspace=workspace,
            store=store,
            transport="stdio" if transport == "stdio" else "streamable-http",
            host=host,
            port=port,
            log_level=log_level.lower(),
            allowed_hosts=allow_host,
            allowed_origins=allow_origin,
            limits=limits,
            auth_token=auth_token or None,
        )
        server = load_factory()(config)
        try:
            server.serve()
        except KeyboardInterrupt:  # pragma: no cover - interactive stop
            pass

    return command
