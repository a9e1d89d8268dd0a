"""A second baseline: a bare ``MCPServer`` whose one tool returns a fixed answer, served over stdio.

    python benchmarks/baseline_answer_server.py ANSWER.json

The answer (a JSON object) goes out as the suite's tools send theirs: as ``structuredContent``
and as the same JSON in a text block. Beside a suite server returning that very answer, it shows
what the SDK and the client pay for the answer's size alone, so that what is left is the server's
own work.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

TEXT = Path(sys.argv[1]).read_text(encoding="utf-8")
ANSWER = json.loads(TEXT)

mcp = MCPServer("baseline-answer")


@mcp.tool()
def answer(text: str) -> dict[str, Any]:
    """Return the fixed answer (``text`` is ignored, like a path to read)."""
    return CallToolResult(content=[TextContent(type="text", text=TEXT)], structured_content=ANSWER)  # type: ignore[return-value]


if __name__ == "__main__":
    mcp.run()
