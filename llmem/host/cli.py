"""``llmem-host``: a local chat page where a person talks to a model that uses the MCP servers of
a client configuration. Every option can come from a ``LLMEM_HOST_*`` variable (or a ``.env``
file); API keys come only from there, never from the command line. In a terminal it prints the
page's address first, then what it runs, then its log (:mod:`llmem.host.terminal`)."""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from llmem.host.terminal import StartupHold

from llmem import __version__

__all__ = ["main"]

log = logging.getLogger("llmem.host")


class _CorrelationFilter(logging.Filter):
    """Every log line carries the id of the turn it belongs to (``-`` outside a turn)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from llmem.host.orchestrator import correlation_id

        record.cid = correlation_id.get()
        return True


def _setup_logging(level: str, log_format: str) -> tuple[Path | None, StartupHold, bool]:
    """JSON lines in the log file; on stderr JSON lines too, or human lines (``text``: the default
    on a terminal); stderr's held back until the address is printed. Uvicorn's own start and stop
    lines (the address it binds, twice: the page and the views' proxy) only at debug level."""
    from llmem.core.logsetup import setup_logging
    from llmem.host.terminal import StartupHold

    fmt = log_format if log_format != "auto" else ("text" if sys.stderr.isatty() else "json")
    path = setup_logging("llmem-host", level, stderr_format=fmt)
    root = logging.getLogger()
    for handler in root.handlers:
        handler.addFilter(_CorrelationFilter())
    if level != "debug":
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    stderr = next(h for h in root.handlers if type(h) is logging.StreamHandler)
    return path, StartupHold(stderr), fmt == "text"


def _bound(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: no wait after a restart
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _free_port_near(host: str, port: int) -> int | None:
    """The first port after ``port`` (of the next 20) that is free on ``host`` now, or None."""
    for candidate in range(port + 1, min(port + 21, 65536)):
        try:
            _bound(host, candidate).close()
        except OSError:
            continue
        return candidate
    return None


def _listen(host: str, port: int) -> socket.socket:
    """The page's socket, bound before any server starts, or a clear error: a port in use is the
    usual case (another llmem-host, or the page of an earlier run still open); the error names a
    port free now and ``--port 0`` (any free one)."""
    import errno

    try:
        sock = _bound(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            free = _free_port_near(host, port) if port else None
            offer = f"--port {free} (free now), or " if free else ""
            raise click.ClickException(
                f"port {port} on {host} is in use (another llmem-host, or another program): stop it, or "
                f"choose another port: {offer}--port 0 for any free one (the address is printed first)"
            ) from None
        raise click.ClickException(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _uvicorn_servers() -> tuple[type[Any], type[Any]]:
    """The page's server and the views' proxy's. The page's takes Ctrl+C (and SIGTERM) and stops
    both, gracefully, without raising the signal again once stopped (uvicorn would: a
    KeyboardInterrupt with a traceback on the terminal); the proxy leaves the signals to it."""
    import contextlib
    import signal
    import threading

    import uvicorn

    class PageServer(uvicorn.Server):
        partner: uvicorn.Server | None = None
        on_exit: Callable[[], None] | None = None  # told first: the servers' ends that follow are expected

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.on_exit is not None:
                self.on_exit()
            super().handle_exit(sig, frame)
            if self.partner is not None:
                self.partner.should_exit = True

    class SignalsToMain(uvicorn.Server):
        """A second server that leaves the signals to the main one, which stops it."""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    return PageServer, SignalsToMain


async def _run(options: dict[str, Any]) -> None:
    import anyio
    import uvicorn

    from llmem.host.config import load_config
    from llmem.host.coordinator import Coordinator
    from llmem.host.orchestrator import Orchestrator, OrchestratorSettings
    from llmem.host.sessions import SessionManager
    from llmem.host.terminal import banner
    from llmem.host.web import WebSettings, build_app, build_apps_app

    PageServer, SignalsToMain = _uvicorn_servers()
    models = options["models"]
    hold = options["hold"]
    specs = load_config(options["config"], options["substitutions"])
    settings = OrchestratorSettings(max_steps=options["max_steps"], history_tokens=options["history_tokens"])
    async with Coordinator(specs, strict=False, timeout_s=options["tool_timeout"]) as coordinator:
        if not coordinator.servers:
            raise click.ClickException(
                f"no server of the config could start ({', '.join(coordinator.failed)}): why, above"
            )
        orchestrator = Orchestrator(models, coordinator, settings)
        sessions = SessionManager(rate=options["rate"], burst=options["burst"])
        try:
            async with anyio.create_task_group() as turns:
                web = WebSettings(
                    host=options["host"],
                    port=options["port"],
                    auth_token=options["auth_token"],
                    allowed_origins=options["allow_origin"],
                    secrets=tuple(p.settings.api_key for p in models if p.settings.api_key),
                    workspace=options["workspace"],
                    upload_limit=int(options["max_upload_mb"] * 1024 * 1024),
                )
                app = build_app(orchestrator, sessions, web, turns)
                config = uvicorn.Config(
                    app,
                    host=options["host"],
                    port=options["port"],
                    log_config=None,
                    access_log=False,  # an access line would show ?token=… and session ids
                    ws_ping_interval=20.0,  # the seed's heartbeat: dead sockets are found and closed
                    ws_ping_timeout=20.0,
                    ws_max_size=1 << 20,
                )
                server = PageServer(config)
                # MCP Apps views run in a sandbox proxy served on a second port: another origin
                apps = SignalsToMain(
                    uvicorn.Config(
                        build_apps_app(web),
                        host=options["host"],
                        port=options["apps_port"],
                        log_config=None,
                        access_log=False,
                    )
                )

                def bound(s: uvicorn.Server) -> tuple[str, int] | None:
                    for sock in s.servers[0].sockets if s.servers else ():
                        host, port = sock.getsockname()[:2]
                        return host, port
                    return None

                async def announce() -> None:
                    while not (server.started and apps.started):
                        await anyio.sleep(0.02)
                    where, proxy = bound(server), bound(apps)
                    if where is None:
                        return
                    host, web.port = where
                    web.apps_port = proxy[1] if proxy else 0
                    shown = f"[{host}]" if ":" in host else host
                    url = f"http://{shown}:{web.port}/"
                    labels = [p.label for p in models]
                    stand_in = models.describe()["standIn"]
                    lines = banner(
                        url,
                        labels,
                        stand_in,
                        coordinator.states(),
                        orchestrator.fixed_tokens,
                        options["workspace"],
                        options["log_file"],
                    )
                    click.echo(lines[0], err=True)  # the address: first, plainly, whatever the log's format
                    if options["text_log"]:
                        click.echo("\n".join(lines[1:]), err=True)
                    else:
                        hold.release()  # in JSON, the line after the address says what it runs
                    log.info(
                        "serving",
                        extra={
                            "url": url,
                            "views": f"http://{shown}:{web.apps_port}/",
                            "models": labels,
                            "servers": coordinator.servers,
                            "tools": len(orchestrator.tools),
                            "promptTokens": orchestrator.fixed_tokens,
                            "workspace": str(options["workspace"]),
                        },
                    )
                    hold.release()

                async def serve_apps() -> None:
                    await apps.serve()

                async def sweep() -> None:
                    while True:
                        await anyio.sleep(60)
                        sessions.sweep()

                server.partner, server.on_exit = apps, coordinator.stopping
                turns.start_soon(serve_apps)
                turns.start_soon(announce)
                turns.start_soon(sweep)
                await server.serve(sockets=[options["socket"]])
                apps.should_exit = True
                turns.cancel_scope.cancel()
            if options["text_log"]:
                click.echo("llmem-host: stopped.", err=True)
            else:
                log.info("stopped")
        finally:
            await models.aclose()


@click.command(
    name="llmem-host", context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "LLMEM_HOST"}
)
@click.option(
    "--config",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="An MCP client configuration: 'mcpServers' (Claude Desktop, Cursor) or VS Code's 'servers'.",
)
@click.option(
    "--provider",
    type=click.Choice(["openai", "gemini", "anthropic", "stand-in"]),
    default=None,
    help="The model provider. Default: openai when --base-url is given, else the deterministic stand-in.",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    envvar="LLMEM_HOST_MODEL",
    help="The model's name (for a local server: the name it serves). Repeat it to offer several on the page, "
    "each NAME (of --provider) or PROVIDER:NAME (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5) or stand-in; "
    "the first is the default.",
)
@click.option("--base-url", default=None, help="The provider's API address, e.g. http://127.0.0.1:11434/v1 for Ollama.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to serve the page on.")
@click.option("--port", type=click.IntRange(0, 65535), default=60120, show_default=True)
@click.option(
    "--apps-port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="The port of the MCP Apps sandbox proxy (live views of tool results run there, on another origin "
    "than the page); 0: any free port.",
)
@click.option(
    "--auth-token",
    default=None,
    help="A token every request must carry; required beyond loopback. Better set as LLMEM_HOST_AUTH_TOKEN.",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Replaces ${workspaceFolder} in the config. Default: the current folder.",
)
@click.option(
    "--set",
    "replacements",
    multiple=True,
    metavar="PLACEHOLDER=VALUE",
    help="Replace PLACEHOLDER by VALUE in the config (repeatable), for a configuration with placeholders "
    "of its own, e.g. --set '${plotsFolder}'=$PWD/demo; ${workspaceFolder} (all mcp_config.example.json has) "
    "is filled by --workspace.",
)
@click.option(
    "--tool-calls",
    type=click.Choice(["native", "text"]),
    default="native",
    show_default=True,
    help="'native': the provider's tool-call API; 'text': ```tool blocks described in the system prompt "
    "(for local models without tool support). Blocks are recognised either way.",
)
@click.option("--max-steps", type=click.IntRange(1, 100), default=10, show_default=True, help="Tool steps per turn.")
@click.option("--history-tokens", type=click.IntRange(500), default=16000, show_default=True, help="History budget.")
@click.option(
    "--tool-timeout", type=click.FloatRange(0.1), default=120.0, show_default=True, help="Seconds per tool call."
)
@click.option(
    "--rate", type=click.FloatRange(0.01), default=1.0, show_default=True, help="Frames a second per session."
)
@click.option("--burst", type=click.IntRange(1), default=10, show_default=True, help="Frames at once per session.")
@click.option("--allow-origin", multiple=True, help="Another page origin that may open the WebSocket.")
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path(".env"),
    show_default=True,
    help="Read variables (API keys, LLMEM_HOST_*) from this file when it exists; the environment wins.",
)
@click.option(
    "--max-upload-mb",
    type=click.FloatRange(0.001, 1024),
    default=25.0,
    show_default=True,
    help="The largest file a person may attach on the page (saved into the workspace).",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "text", "json"], case_sensitive=False),
    default="auto",
    show_default=True,
    help="stderr's log lines: 'text' for a person, 'json' as in the log file; 'auto': text on a terminal, else json.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="info",
    show_default=True,
)
@click.version_option(__version__, prog_name="llmem-host")
def command(**options: Any) -> None:
    """Chat with a model that uses your MCP servers, in a local web page."""
    import anyio

    from llmem.host.errors import HostError
    from llmem.host.models import Models
    from llmem.host.web import is_loopback

    log_file, hold, text_log = _setup_logging(options["log_level"].lower(), options["log_format"].lower())
    try:
        environ = dict(os.environ)  # with the .env file's variables: main() read them before the options
        token = options["auth_token"] or None
        if not is_loopback(options["host"]) and not token:
            raise click.UsageError(
                f"--host {options['host']} is beyond loopback: anyone who can reach it could use your tools and "
                "model. Set a token with LLMEM_HOST_AUTH_TOKEN (or --auth-token), or serve on 127.0.0.1."
            )
        name = (
            options["provider"]
            or environ.get("LLMEM_HOST_PROVIDER")
            or ("openai" if options["base_url"] else "stand-in")
        )
        workspace = (options["workspace"] or Path.cwd()).expanduser().resolve()
        try:
            models = Models.from_options(
                options["models"],
                name,
                base_url=options["base_url"],
                environ=environ,
                native_tools=options["tool_calls"] == "native",
            )
        except HostError as exc:
            raise click.UsageError(str(exc)) from None
        substitutions = {"${workspaceFolder}": str(workspace), "${userHome}": str(Path.home())}
        for given in options["replacements"]:
            placeholder, sep, value = given.partition("=")
            if not sep or not placeholder:
                raise click.BadParameter(f"{given!r} is not PLACEHOLDER=VALUE", param_hint="--set")
            substitutions[placeholder] = value
        options.update(
            socket=_listen(options["host"], options["port"]),
            models=models,
            auth_token=token,
            substitutions=substitutions,
            workspace=workspace,
            hold=hold,
            log_file=log_file,
            text_log=text_log,
        )
        try:
            anyio.run(_run, options)
        except HostError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:  # pragma: no cover - interactive stop
            pass
    finally:
        hold.release()  # what went wrong before the address, said after all


def _env_file(args: list[str]) -> Path:
    """``--env-file`` as given on the command line or in the environment, before click reads it."""
    given = os.environ.get("LLMEM_HOST_ENV_FILE") or ".env"
    for i, arg in enumerate(args):  # the last one counts, as for click
        if arg == "--env-file" and i + 1 < len(args):
            given = args[i + 1]
        elif arg.startswith("--env-file="):
            given = arg.split("=", 1)[1]
    return Path(given)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``llmem-host``."""
    args = argv if argv is not None else sys.argv[1:]
    env_file = _env_file(args)
    if env_file.is_file():
        # Read first, so LLMEM_HOST_* settings in the file count like the environment's (which
        # wins). Only this process sees them: the servers start with the MCP SDK's short default
        # environment plus their config's "env", so no key reaches them.
        from dotenv import load_dotenv

        load_dotenv(env_file, override=False)
    command.main(args=args, prog_name="llmem-host")
