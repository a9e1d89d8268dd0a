"""The benchmarks' baseline: a bare ``MCPServer`` with one ``echo`` tool, served over stdio.

python benchmarks/baseline_server.py
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("baseline-echo")


@mcp.tool()
def echo(text: str) -> str:
    """Return ``text`` unchanged."""
    return text


if __name__ == "__main__":
    mcp.run()
