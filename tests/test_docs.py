"""Documentation that must not drift from the code: every tool in its docs page and in the README's
table, every option and variable in the configuration page, honest ``__all__``."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import tomllib
from typing import Any

import pytest

import debrief_calc
import llmem
from llmem.core.config import ServerConfig
from tests.conftest import ROOT

pytestmark = pytest.mark.anyio


def _servers() -> list[str]:
    """The MCP servers' console scripts (``llmem-host`` is their client, not a server)."""
    return [s for s in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"] if s.endswith("-mcp")]


#: The docs page of each server's tools.
PAGES = {
    "llmem-mcp": "docs/llmem.md",
    "debrief-calc-mcp": "docs/debrief-calc.md",
    "debrief-state-mcp": "docs/debrief-state.md",
}


async def _tools(script: str) -> list[Any]:
    module, func = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"][script].split(":")
    factory = getattr(
        importlib.import_module(module),
        "_" + {"main": "llmem", "main_calc": "calc", "main_state": "state"}[func] + "_factory",
    )()
    return list(await factory(ServerConfig(script, ROOT)).list_tools())


@pytest.mark.parametrize("script", _servers())
async def test_every_tool_is_documented_in_its_docs_page(script: str) -> None:
    assert script in PAGES, f"{script} has no docs page in tests/test_docs.py's PAGES"
    page = (ROOT / PAGES[script]).read_text(encoding="utf-8")
    for tool in await _tools(script):
        assert re.search(rf"`{tool.name}\(", page), f"{script}: {tool.name} is not documented in {PAGES[script]}"
        assert tool.description, f"{tool.name} has no description"


@pytest.mark.parametrize("script", _servers())
async def test_every_tool_has_its_line_in_the_readme(script: str) -> None:
    """The README's table of each server: one line per tool, and no line for a tool it lacks."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"**`{script}`**", 1)
    assert len(section) == 2, f"README.md has no table of {script}'s tools"
    table = section[1].split("\n\n**", 1)[0].split("\n\nScripts", 1)[0]
    rows = re.findall(r"^\| `([\w-]+)` \|", table, re.M)
    assert sorted(rows) == sorted(t.name for t in await _tools(script))


def test_the_readme_stays_a_front_door() -> None:
    """About 200 lines: the reference lives in docs/, and every page it links to exists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 230
    for link in re.findall(r"\]\(((?:docs/|LICENSE|CHANGELOG)[^)#]*)", readme):
        assert (ROOT / link).exists(), link


def test_every_console_script_is_in_the_readme_and_config() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    config = json.loads((ROOT / "mcp_config.example.json").read_text())
    launched = {server["command"] for server in config["mcpServers"].values()}
    for script in scripts:
        assert f"`{script}`" in readme
        assert script in launched or not script.endswith("-mcp")


def test_every_option_of_the_chat_host_is_in_the_configuration_page() -> None:
    from llmem.host.cli import command

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("## llmem-host", 1)[1].split("\n## ", 1)[0]
    for param in command.params:
        flags = [f for f in getattr(param, "opts", []) if f.startswith("--") and f not in ("--help", "--version")]
        for flag in flags:
            assert f"`{flag}" in section, f"llmem-host {flag} is not in docs/configuration.md's 'llmem-host'"
            if flag != "--set":  # the only option without a variable (repeatable replacements)
                assert (
                    f"`LLMEM_HOST_{param.name.upper()}`" in section
                    or f"`LLMEM_HOST_{flag[2:].upper().replace('-', '_')}`" in section
                ), flag


def test_every_llmem_variable_is_in_the_configuration_page() -> None:
    """Each ``LLMEM_*`` name the code reads (a string literal of its own) is on the page."""
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    names = set()
    for package in ("llmem", "debrief_calc"):
        for path in (ROOT / package).rglob("*.py"):
            names |= set(re.findall(r"[\"'](LLMEM_[A-Z][A-Z_]*[A-Z])[\"']", path.read_text(encoding="utf-8")))
    names = {n for n in names if not any(m.startswith(n + "_") for m in names)}  # LLMEM_HOST: a prefix
    assert len(names) >= 15, names
    missing = sorted(n for n in names if f"`{n}`" not in page)
    assert not missing, f"not in docs/configuration.md: {missing}"


def _modules() -> list[str]:
    names = ["llmem", "debrief_calc"]
    for package in (llmem, debrief_calc):
        prefix = package.__name__ + "."
        names += [m.name for m in pkgutil.walk_packages(package.__path__, prefix) if not m.name.endswith("__main__")]
    return names


@pytest.mark.parametrize("name", _modules())
def test_all_is_honest(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        return
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"
    assert len(set(exported)) == len(exported)


def test_changelog_exists() -> None:
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("script", _servers())
async def test_tools_list_stays_lean(script: str) -> None:
    """Tool schemas cost the host's context on every turn: at most 700 characters a tool on average
    (suite.md §9), counted as the wire carries them (json.dumps of the tools/list result)."""
    module, func = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"][script].split(":")
    factory = getattr(
        importlib.import_module(module),
        "_" + {"main": "llmem", "main_calc": "calc", "main_state": "state"}[func] + "_factory",
    )()
    tools = await factory(ServerConfig(script, ROOT)).list_tools()
    listed = {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]}
    assert len(json.dumps(listed)) <= 700 * len(tools), len(json.dumps(listed)) / len(tools)
