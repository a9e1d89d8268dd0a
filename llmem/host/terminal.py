"""``llmem-host`` in a terminal: the page's address first, then what it runs, then the log.

While the host starts (servers launched, ports bound) its stderr log lines are held back
(:class:`StartupHold`); once it serves, the first line on stderr is the address, plainly, then a
few lines saying which model answers, which servers run, where attached files go and where the
log is (:func:`banner`); then the held warnings and errors (a server that could not start, with
its last stderr lines), and from there on the log as it comes. The held info lines are in the
log file, as every line is.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llmem.host.coordinator import ServerState

__all__ = ["StartupHold", "banner"]


class StartupHold(logging.Filter):
    """A filter on the stderr handler that keeps records back until :meth:`release`; then the
    warnings and errors among them are written (in order), the rest dropped: the file has them."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler
        self.held: list[logging.LogRecord] | None = []
        handler.addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        if self.held is None:
            return True
        self.held.append(record)
        return False

    def release(self) -> None:
        held, self.held = self.held, None
        self.handler.removeFilter(self)
        for record in held or ():
            if record.levelno >= logging.WARNING:
                self.handler.handle(record)


def _servers_line(states: Sequence[ServerState]) -> str:
    running = [s for s in states if s.state == "running"]
    shown = [f"{s.name} ({s.tools} tool{'s' if s.tools != 1 else ''})" for s in running]
    return ", ".join(shown) or "none"


def banner(
    url: str,
    models: Sequence[str],
    stand_in: bool,
    states: Sequence[ServerState],
    prompt_tokens: int,
    workspace: Path,
    log_file: Path | None,
) -> list[str]:
    """The lines ``llmem-host`` prints when it serves: the address first, then what it runs.
    ``models``: the labels of the models the page offers, the default first."""
    lines = [f"llmem-host: chat at {url}"]
    if stand_in and len(models) == 1:
        lines.append(
            "  model    the deterministic stand-in: a script that plays a few requests through with the tools "
            "(--provider or --base-url for a model)"
        )
    elif len(models) == 1:
        lines.append(f"  model    {models[0]}")
    else:
        lines.append(f"  models   {models[0]} (default), {', '.join(models[1:])}: chosen per chat on the page")
    lines.append(f"  servers  {_servers_line(states)}")
    failed = [s for s in states if s.state != "running"]
    if failed:
        lines.append(f"  not running: {', '.join(f'{s.name} ({s.state})' for s in failed)}: why, below")
    lines.append(f"  files    attached on the page are saved in {workspace}")
    lines.append(f"  prompt   about {prompt_tokens:,} tokens before each conversation")
    if log_file is not None:
        lines.append(f"  log      {log_file}")
    lines.append("  Ctrl+C stops it.")
    return lines
