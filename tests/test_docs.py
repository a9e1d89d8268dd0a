"""Documentation that must not drift from the code: tools in the README, honest ``__all__``."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import tomllib

import pytest

import debrief_calc
import llmem
from llmem.core.config import ServerConfig
from tests.conftest import ROOT

pytestmark = pytest.mark.anyio


def _servers() -> list[str]:
    """The MCP servers' console scripts (``llmem-host`` is their client, not a server)."""
    return [s for s in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"] if s.endswith("-mcp")]


@pytest.mark.parametrize("script", _servers())
async def test_every_tool_is_documented_in_the_readme(script: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    module, func = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"][script].split(":")
    factory = getattr(
        importlib.import_module(module),
        "_" + {"main": "llmem", "main_calc": "calc", "main_state": "state"}[func] + "_factory",
    )()
    server = factory(ServerConfig(script, ROOT))
    section = readme.split(f"## {script}: the tools", 1)
    assert len(section) == 2, f"README.md has no '## {script}: the tools' section"
    body = section[1].split("\n## ", 1)[0]
    for tool in await server.list_tools():
        assert re.search(rf"`{tool.name}\(", body), f"{script}: {tool.name} is not documented in README.md"
        assert tool.description, f"{tool.name} has no description"


def test_every_console_script_is_in_the_readme_and_config() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    config = json.loads((ROOT / "mcp_config.example.json").read_text())
    launched = {arg for server in config["mcpServers"].values() for arg in server["args"]}
    for script in scripts:
        assert f"`{script}`" in readme
        assert script in launched or not script.endswith("-mcp")


def test_every_option_of_the_chat_host_is_in_the_readme() -> None:
    from llmem.host.cli import command

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Chat with your plots", 1)[1].split("\n## ", 1)[0]
    for param in command.params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("--") and flag not in ("--help", "--version"):
                assert f"`{flag}" in section, f"llmem-host {flag} is not in the README's 'Chat with your plots'"


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
