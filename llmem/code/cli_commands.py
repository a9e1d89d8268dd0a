"""Functions a command-line framework runs: a function decorated ``@cli.command()``,
``@click.command(name="reset-counts")``, ``@app.command()`` (Typer) or ``@….group()`` is called by
the framework when the command line names it, not by name in the code. ``find_references`` says
so instead of "no callers". Nothing here knows about MCP or the store."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

__all__ = ["cli_command"]

_CLI = re.compile(r"^@?(?:[\w.]+\.)?(?:command|group)\s*(?:\(|$)")


def cli_command(decorators: Iterable[str], function: str) -> str | None:
    """Why a function is run from the command line (``decorators`` as the outline lists them), or
    None: ``a CLI command (cli.command): the command line runs it as `reset-counts` ``. The
    command's name is the decorator's ``name=`` or first argument, else the function's name with
    ``_`` made ``-`` (as Click 7+ and Typer name it)."""
    decorator = next((d.strip() for d in decorators if _CLI.search(d.strip())), None)
    if decorator is None:
        return None
    name = function.rsplit(".", 1)[-1].replace("_", "-")
    try:
        call = ast.parse(decorator.lstrip("@"), mode="eval").body
    except SyntaxError:
        call = None
    if isinstance(call, ast.Call):
        given = [k.value for k in call.keywords if k.arg == "name"] + call.args[:1]
        if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
            name = given[0].value
    return f"a CLI command ({decorator.split('(')[0].lstrip('@')}): the command line runs it as `{name}`"
